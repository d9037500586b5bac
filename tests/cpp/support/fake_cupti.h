// FakeCupti: a scriptable stand-in for libcupti (and the CUDA driver's
// version query) behind the collector's CuptiApi table, for the behaviour
// that needs a GPU to happen for real: a driver or not, subscriber conflicts,
// privilege errors, buffers CUPTI requests, fills and completes.
//
// Process-wide like CUPTI itself (its callbacks carry no user data). Buffers
// are filled with the CUDA 13.0 headers' record structs and walked with
// HeaderNextRecord, the decoder's header-based iterator.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "collectors/cuda/cupti_library.h"

namespace smprof::testing {

struct FakeCuptiScript {
  std::uint32_t version = 130001;
  bool driver_installed = true;
  int driver_version = 13000;
  CUptiResult subscribe = CUPTI_SUCCESS;  // e.g. 999 without a GPU, 39 with another profiler
  CUptiResult register_timestamp = CUPTI_SUCCESS;
  std::map<CUpti_ActivityKind, CUptiResult> enable;  // kinds not listed enable fine
  std::size_t dropped_per_query = 0;                 // what cuptiActivityGetNumDroppedRecords reports each time
  bool newer_cupti = true;  // has cuptiActivityEnableAndDump, FlushPeriod, Enable{Runtime,Driver}Api (12.6+)
  // The driver's devices: whether each one's primary context is active.
  std::vector<bool> primary_contexts_active = {true};
  // cuCtxSynchronize blocks until ReleaseSynchronize (a kernel that never ends).
  bool synchronize_blocks = false;
  // false: the application has not initialised CUDA yet, so cuDeviceGetCount
  // says CUDA_ERROR_NOT_INITIALIZED until CreateContext.
  bool driver_initialised = true;
};

class FakeCupti {
 public:
  static FakeCupti& Get();

  // Forgets everything except what CUPTI keeps for the process's lifetime
  // (the timestamp callback), and runs `script` from now on.
  void Reset(const FakeCuptiScript& script);
  const internal::CuptiApi* api() const { return &api_; }

  // CUPTI's side of the buffer protocol: asks the registered callback for a
  // buffer (nullptr when refused), and hands a filled one back on the calling
  // thread. FlushAll(FORCED) completes every buffer still held, FlushAll(0)
  // those whose records are all finished.
  std::uint8_t* RequestBuffer(std::size_t* size);
  void CompleteBuffer(std::uint8_t* buffer, std::size_t valid_size);
  void HoldUntilFlush(std::uint8_t* buffer, std::size_t valid_size);

  // Now on the clock CUPTI stamps records with: smprof's timestamp callback
  // once registered, else CUPTI's default, CLOCK_REALTIME (which
  // StepDefaultClock steps, as an operator or NTP would).
  static std::uint64_t CuptiNow();
  static void StepDefaultClock(std::int64_t ns);

  // Writes `count` concurrent-kernel records named `name` into `buffer`,
  // stamped now on CUPTI's clock (CuptiNow); `finished` false leaves their end 0
  // (still running) until a context synchronize finishes them. Returns the
  // bytes written.
  static std::size_t WriteKernels(std::uint8_t* buffer, std::size_t size, int count, const char* name,
                                  bool finished = true);
  // Another CUPTI client (Kineto) registering its own buffer callbacks, as
  // it does at each torch.profiler start.
  void RegisterForeignCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                CUpti_BuffersCallbackCompleteFunc completed);

  // An application thread's API call as CUPTI's callback API reports it to
  // the subscriber, when the subscriber enabled that callback: its exit,
  // with `stream` as the first parameter and `result` returned.
  void CallApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUstream stream, int result = 0);
  // The application creates its first CUDA context (initialising the
  // driver): CUPTI's resource callback CONTEXT_CREATED reaches the
  // subscriber, on the calling thread, when the subscriber enabled it.
  void CreateContext();
  // Activity kinds enabled while the driver was not initialised yet (each
  // would initialise CUDA for real).
  int enables_before_driver_init() const;
  std::size_t enabled_callbacks() const;
  // Lets every blocked cuCtxSynchronize return; WaitUntilSynchronizeBlocked
  // returns once one is blocked.
  void ReleaseSynchronize();
  void WaitUntilSynchronizeBlocked();
  bool synchronize_blocked() const;

  // While blocked, cuptiGetCallbackName (which the decoder calls for an API
  // record it has not named yet) waits; WaitUntilNameBlocked returns once a
  // thread waits there.
  void BlockCallbackNames(bool block);
  void WaitUntilNameBlocked();

  // What the collector did.
  int subscribed() const;  // subscribers now
  int subscribe_calls() const;
  int forced_flushes() const;
  int unforced_flushes() const;  // cuptiActivityFlushAll(0): hands back buffers whose records are all finished
  int timestamp_registrations() const;
  CUpti_TimestampCallbackFunc timestamp_callback() const;
  CUpti_ActivityThreadIdType thread_id_type() const;
  std::vector<CUpti_ActivityKind> enabled() const;
  std::vector<CUpti_ActivityKind> dumped() const;  // enabled with cuptiActivityEnableAndDump
  std::uint32_t flush_period_ms() const;
  bool zeroed_buffers_announced() const;
  bool all_sync_records() const;  // cuptiActivityEnableAllSyncRecords's last setting (CUPTI's default: true)
  std::vector<CUpti_CallbackId> quiet_runtime_calls() const;
  std::vector<CUpti_CallbackId> quiet_driver_calls() const;
  bool subscribed_before_timestamp_callback() const;
  int context_synchronizations() const;
  bool kinds_enabled_at_synchronize() const;
  std::vector<CUpti_ActivityKind> kinds_at_synchronize() const;
  // The calling thread's external correlation stack (kind, id), bottom first.
  static std::vector<std::pair<int, std::uint64_t>> CorrelationStack();

 private:
  FakeCupti();
  static CUptiResult Subscribe(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  static CUptiResult Unsubscribe(CUpti_SubscriberHandle);
  static CUptiResult EnableCallback(std::uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
  static CUptiResult RegisterCallbacks(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  static CUptiResult RegisterTimestamp(CUpti_TimestampCallbackFunc);
  static CUptiResult SetThreadIdType(CUpti_ActivityThreadIdType);
  static CUptiResult Enable(CUpti_ActivityKind);
  static CUptiResult Disable(CUpti_ActivityKind);
  static CUptiResult FlushAll(std::uint32_t flag);
  static CUptiResult Dropped(CUcontext, std::uint32_t, std::size_t*);
  static CUptiResult EnableAndDump(CUpti_ActivityKind);
  static CUptiResult FlushPeriod(std::uint32_t);
  static CUptiResult SetAttribute(CUpti_ActivityAttribute, std::size_t*, void*);
  static CUptiResult EnableRuntimeApi(CUpti_CallbackId, std::uint8_t);
  static CUptiResult EnableDriverApi(CUpti_CallbackId, std::uint8_t);
  static CUptiResult EnableAllSyncRecords(std::uint8_t);
  static CUresult DeviceGetCount(int*);
  static CUresult PrimaryCtxGetState(CUdevice, unsigned int*, int*);
  static CUresult CtxSynchronize();

  internal::CuptiApi api_;
  mutable std::mutex mutex_;
  FakeCuptiScript script_;
  int subscribed_ = 0;
  int subscribe_calls_ = 0;
  int forced_flushes_ = 0;
  int unforced_flushes_ = 0;
  int timestamp_registrations_ = 0;  // never reset: once per process
  CUpti_ActivityThreadIdType thread_id_type_ = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  CUpti_TimestampCallbackFunc timestamp_ = nullptr;
  CUpti_BuffersCallbackRequestFunc requested_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_;
  std::vector<CUpti_ActivityKind> dumped_;
  std::vector<std::pair<std::uint8_t*, std::size_t>> held_;
  std::uint32_t flush_period_ms_ = 0;
  bool zeroed_ = false;
  bool all_sync_records_ = true;
  std::vector<CUpti_CallbackId> quiet_runtime_;
  std::vector<CUpti_CallbackId> quiet_driver_;
  bool subscribed_before_timestamp_ = false;
  int context_synchronizations_ = 0;
  bool kinds_enabled_at_synchronize_ = false;
  std::vector<CUpti_ActivityKind> kinds_at_synchronize_;
  CUpti_CallbackFunc subscriber_callback_ = nullptr;
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> enabled_callbacks_;
  std::condition_variable synchronize_changed_;
  bool synchronize_released_ = false;
  int synchronize_blocked_ = 0;
  CUdevice current_device_ = -1;  // whose primary context is pushed
  int enables_before_driver_init_ = 0;
};

}  // namespace smprof::testing

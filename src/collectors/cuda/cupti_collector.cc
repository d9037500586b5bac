#include "collectors/cuda/cupti_collector.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "collectors/cuda/activity_buffer_pool.h"
#include "collectors/cuda/activity_decoder.h"
#include "collectors/cuda/context_sync.h"
#include "collectors/cuda/cupti_clock.h"
#include "collectors/cuda/graph_capture_tracker.h"
#include "collectors/cuda/nvtx_injection.h"
#include "runtime/annotation_correlation.h"
#include "runtime/warnings.h"
#include "smprof/annotate.h"

namespace smprof::internal {

namespace {

struct ActivityKindName {
  CUpti_ActivityKind kind;
  const char* name;
};

// Without these there is nothing worth collecting: a failure to enable one
// turns the collector off.
constexpr ActivityKindName kRequiredKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"},
};

// Collected where CUPTI allows; a refusal is reported, collection goes on.
constexpr ActivityKindName kOptionalKinds[] = {
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},  // peer-to-peer copies
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
    {CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},  // NVTX
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"},
    {CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT"},
};

// Emitted when a device or context is created: a session started after
// model.cuda() gets them only with cuptiActivityEnableAndDump.
bool DumpsExisting(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_DEVICE || kind == CUPTI_ACTIVITY_KIND_CONTEXT;
}

// Calls PyTorch makes around every launch that say nothing about the GPU's
// work; not recorded where CUPTI allows per-call control (12.6+).
constexpr CUpti_CallbackId kQuietRuntimeCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,          CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,       CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
};
constexpr CUpti_CallbackId kQuietDriverCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,      CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,       CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
};

using PushFn = CUptiResult (*)(CUpti_ExternalCorrelationKind, std::uint64_t);
using PopFn = CUptiResult (*)(CUpti_ExternalCorrelationKind, std::uint64_t*);

struct Collector {
  // Start/Stop only (serialized by the session).
  const CuptiApi* api = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled;
  bool active = false;     // subscribed, from a successful Start to its Stop
  bool activated = false;  // the kinds are enabled; under `tick` while active
  // Started before the application initialised CUDA: the kinds wait for its
  // first context (ActivateAtFirstContext), then go to this sink (nullptr
  // once that failed: not tried again).
  GpuRecordBuffer* waiting_sink = nullptr;
  std::uint32_t cupti_version = 0;
  std::atomic<bool> context_seen{false};  // the application created a context since Start
  std::atomic<bool> stopping{false};      // a Stop waits for `tick`: the first context no longer activates
  bool abandoned = false;                 // this is a forked child of a process that used CUPTI
  pid_t initialised_pid = 0;              // the process that first subscribed
  bool timestamp_callback_tried = false;
  bool monotonic_timestamps = false;  // the callback was accepted
  std::string clock_note;             // why not, when not
  std::string timebase;               // CuptiStartResult::timebase
  CuptiCollectorOptions options;
  std::uint64_t refused_at_start = 0;
  std::uint64_t foreign_at_start = 0;

  // Buffer requests: the pool, under `deliver`. A pool is never deleted
  // (a late or foreign buffer may still come back to it); a resized one is
  // emptied of idle buffers and left.
  std::mutex deliver;
  ActivityBufferPool* pool = nullptr;
  bool may_exceed_cap = false;
  // Buffer completions decode under a shared lock of `connection`, so they
  // run concurrently and never hold up a request; Connect/Disconnect take it
  // exclusively (the sink dies after the stop).
  std::shared_mutex connection;
  GpuRecordBuffer* sink = nullptr;
  std::unique_ptr<ActivityDecoder> decoder;
  std::unique_ptr<CuptiClock> clock;  // the decoder's
  // Outlives sessions: a capture begun in one may end in the next.
  GraphCaptureTracker captures;

  // The drain loop's tick and the stop's teardown never overlap.
  std::mutex tick;

  std::atomic<const CuptiApi*> callback_api{nullptr};
  std::atomic<std::uint64_t> cupti_dropped{0};
  std::atomic<std::uint64_t> completed{0};
};

// Created by the first Start (serialized by the session) and leaked: CUPTI
// may call back at exit. A plain atomic rather than a function-local static,
// so the fork child handler never waits on a static's initialisation guard.
std::atomic<Collector*> g_collector{nullptr};

Collector& State() {
  Collector* collector = g_collector.load(std::memory_order_acquire);
  if (collector == nullptr) {
    collector = new Collector();
    g_collector.store(collector, std::memory_order_release);
  }
  return *collector;
}

std::atomic<PushFn> g_push{nullptr};
std::atomic<PopFn> g_pop{nullptr};

void PushAnnotation(NameId name) {
  if (const PushFn push = g_push.load(std::memory_order_relaxed)) push(kSmprofExternalCorrelationKind, name);
}

bool PopAnnotation() {
  const PopFn pop = g_pop.load(std::memory_order_relaxed);
  return pop != nullptr && pop(kSmprofExternalCorrelationKind, nullptr) == CUPTI_SUCCESS;
}

// The session's timebase, for CUPTI's CPU-side timestamps and its GPU clock
// conversion alike.
std::uint64_t CUPTIAPI MonotonicTimestamp() { return static_cast<std::uint64_t>(NowNs()); }

void ActivateAtFirstContext(Collector& c);

// The application's first CUDA context since Start: the kinds are enabled
// on a thread of their own, not inside the driver's context creation (no
// CUPTI call from within that callback), or else at the drain's next tick.
void OnContextCreated(Collector& c) {
  if (c.context_seen.exchange(true, std::memory_order_acq_rel)) return;
  try {
    std::thread([&c] { ActivateAtFirstContext(c); }).detach();
  } catch (const std::system_error&) {  // no thread to be had: TickCuptiCollection does it
  }
}

// The subscriber's callback: stream capture begin and end, and, while the
// kinds wait for the application's first CUDA context, its creation.
void CUPTIAPI ApiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Collector* c = g_collector.load(std::memory_order_acquire);
  if (c == nullptr) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) OnContextCreated(*c);
    return;
  }
  c->captures.OnApiCallback(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
}

// Kinds whose records the stop's own wait would add (cuCtxSynchronize and
// the calls around it): disabled before it.
bool RecordsTheWait(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER ||
         kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
}

// Records stamped this long before the session started are on another
// clock (kinds are enabled at start; GPU work queued before runs after).
constexpr std::int64_t kEarliestRecordBeforeStartNs = std::int64_t{10'000'000'000};

std::string Explain(const CuptiApi& api, const std::string& call, CUptiResult result) {
  const std::string error = CuptiErrorText(api, result);
  switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "another profiler holds CUPTI's only subscriber slot (Nsight Systems, torch.profiler, "
             "compute-sanitizer, ...): " +
             error + " from " + call + "; stop that profiler for this run, or set EnableCuda=0";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "not allowed to profile the GPU: " + error + " from " + call +
             "; load the driver with NVreg_RestrictProfilingToAdminUsers=0, or run the container with "
             "--cap-add=SYS_ADMIN";
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_INVALID_DEVICE:
      return "CUDA could not be initialised (no GPU visible, or a driver that does not match): " + error + " from " +
             call + "; check nvidia-smi and CUDA_VISIBLE_DEVICES";
    default:
      return call + " failed: " + error;
  }
}

void DisableEnabled(Collector& c) {
  for (auto it = c.enabled.rbegin(); it != c.enabled.rend(); ++it) c.api->ActivityDisable(*it);
  c.enabled.clear();
}

void DisableKindsRecordingTheWait(Collector& c) {
  for (CUpti_ActivityKind kind : c.enabled) {
    if (RecordsTheWait(kind)) c.api->ActivityDisable(kind);
  }
  c.enabled.erase(std::remove_if(c.enabled.begin(), c.enabled.end(), RecordsTheWait), c.enabled.end());
}

// Capture begin and end reach ApiCallback; where CUPTI refuses, the
// tracker sees nothing and only smppy's own check is left.
void TrackGraphCaptures(Collector& c) {
  if (c.api->EnableCallback == nullptr) return;
  for (const GraphCaptureTracker::Callback& cb : GraphCaptureTracker::Callbacks()) {
    c.api->EnableCallback(1, c.subscriber, cb.domain, cb.cbid);
  }
}

// Why stop must not wait, "" when it may.
std::string ReasonNotToWait(Collector& c, const std::string& no_wait_reason) {
  if (!c.options.synchronize_at_stop) return "CudaSyncAtStop=0";
  if (!no_wait_reason.empty()) return no_wait_reason;
  if (const std::size_t capturing = c.captures.capturing(); capturing > 0) {
    return std::to_string(capturing) +
           " stream(s) capturing a CUDA graph: a device-wide wait would invalidate the capture";
  }
  return "";
}

// Gives the callbacks their pool, decoder and sink for this session.
void Connect(Collector& c, const CuptiCollectorOptions& options, GpuRecordBuffer* sink, std::uint32_t version,
             std::int64_t session_start_ns) {
  const CuptiApi* api = c.api;
  auto clock =
      c.monotonic_timestamps ? std::make_unique<CuptiClock>() : std::make_unique<CuptiClock>(api->GetTimestamp);
  ActivityDecoder::Options decoder_options;
  decoder_options.next_record = api->ActivityGetNextRecord;
  decoder_options.cupti_version = version;
  decoder_options.api_names = [api](CUpti_CallbackDomain domain, std::uint32_t cbid) -> const char* {
    const char* name = nullptr;
    return api->GetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS ? name : nullptr;
  };
  decoder_options.clock = clock.get();
  decoder_options.earliest_ns = session_start_ns - kEarliestRecordBeforeStartNs;
  auto decoder = std::make_unique<ActivityDecoder>(std::move(decoder_options));

  {
    std::lock_guard<std::mutex> lock(c.deliver);
    const bool resize = c.pool == nullptr || c.pool->buffer_bytes() < options.buffer_bytes ||
                        c.pool->max_buffers() != options.max_buffers;
    if (resize && (c.pool == nullptr || c.pool->in_use() == 0)) {  // else late buffers still belong to it
      if (c.pool != nullptr) c.pool->FreeIdle();
      c.pool = new ActivityBufferPool(options.buffer_bytes, options.max_buffers);
    }
    c.may_exceed_cap = version < kFirstCuptiAcceptingNullBuffers;
    c.refused_at_start = c.pool->refused();
    c.foreign_at_start = c.pool->foreign();
  }
  std::unique_lock<std::shared_mutex> lock(c.connection);
  c.sink = sink;
  c.decoder = std::move(decoder);
  c.clock = std::move(clock);
  c.callback_api.store(api, std::memory_order_release);
}

void Disconnect(Collector& c) {
  std::unique_lock<std::shared_mutex> lock(c.connection);
  c.sink = nullptr;
  c.decoder.reset();
  c.clock.reset();
}

void SampleClock(Collector& c) {
  std::shared_lock<std::shared_mutex> lock(c.connection);
  if (c.clock) c.clock->Sample();
}

void ExpectUnfinishedWork(Collector& c) {
  std::shared_lock<std::shared_mutex> lock(c.connection);
  if (c.decoder) c.decoder->ExpectUnfinishedWork();
}

ActivityBufferPool* CurrentPool(Collector& c) {
  std::lock_guard<std::mutex> lock(c.deliver);
  return c.pool;
}

std::uint64_t ReadCuptiDropped(const CuptiApi& api) {
  std::size_t dropped = 0;
  if (api.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) return 0;
  return dropped;
}

// Where CUPTI allows it (12.6+), the calls in kQuiet*Calls are not recorded,
// nor event and stream queries whose work is not done yet (NCCL's watchdog
// and the caching allocator poll all the time).
void QuietNoisyCalls(const CuptiApi& api) {
  if (api.ActivityEnableAllSyncRecords != nullptr) api.ActivityEnableAllSyncRecords(0);
  if (api.ActivityEnableRuntimeApi != nullptr) {
    for (CUpti_CallbackId cbid : kQuietRuntimeCalls) api.ActivityEnableRuntimeApi(cbid, 0);
  }
  if (api.ActivityEnableDriverApi != nullptr) {
    for (CUpti_CallbackId cbid : kQuietDriverCalls) api.ActivityEnableDriverApi(cbid, 0);
  }
}

// Our buffers come zeroed (ActivityBufferPool), so CUPTI need not zero them
// on the application's thread.
void AnnounceZeroedBuffers(const CuptiApi& api) {
  if (api.ActivitySetAttribute == nullptr) return;
  std::uint8_t zeroed = 1;
  std::size_t size = sizeof(zeroed);
  api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed);
}

CUptiResult EnableKind(const CuptiApi& api, CUpti_ActivityKind kind) {
  if (DumpsExisting(kind) && api.ActivityEnableAndDump != nullptr) return api.ActivityEnableAndDump(kind);
  return api.ActivityEnable(kind);
}

// What suggests another CUPTI client, from what the session saw.
std::string ForeignClientEvidence(const CuptiStopResult& r) {
  std::string evidence;
  auto add = [&evidence](const std::string& text) { evidence += (evidence.empty() ? "" : "; ") + text; };
  if (r.buffers_not_returned > 0) {
    add(std::to_string(r.buffers_not_returned) +
        " CUPTI buffers never came back: another client registered its own buffer callbacks");
  }
  if (r.foreign_buffers > 0) add(std::to_string(r.foreign_buffers) + " buffers of another client came back to smprof");
  if (r.decoder.foreign_timebase > 0) {
    add(std::to_string(r.decoder.foreign_timebase) +
        " records were stamped on another clock: another client registered its own timestamp callback");
  }
  return evidence;
}

}  // namespace

bool CuptiTimestampCallbackIsSafe(std::uint32_t version) {
  return version < kFirstCuptiWithTimestampCallbackBug || version >= kFirstCuptiWithTimestampCallbackFix;
}

namespace {

// Connects the sink and enables the activity kinds: at Start, or at the
// application's first CUDA context. False (r->reason) when CUPTI refuses a
// required step; the subscription stays to the caller.
bool Activate(Collector& c, GpuRecordBuffer* sink, CuptiStartResult* r) {
  const CuptiApi* api = c.api;
  auto fail = [&](const std::string& call, CUptiResult res) {
    r->reason = Explain(*api, call, res);
    DisableEnabled(c);
    Disconnect(c);
    return false;
  };
  Connect(c, c.options, sink, c.cupti_version, NowNs());
  // CUPTI's default thread id is pthread_self(); the kernel's thread id is
  // what annotations, perf and /proc use, so API and marker rows join them.
  if (CUptiResult res = api->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); res != CUPTI_SUCCESS) {
    return fail("cuptiSetThreadIdType(SYSTEM)", res);
  }
  AnnounceZeroedBuffers(*api);
  if (CUptiResult res = api->ActivityRegisterCallbacks(CuptiBufferRequested, CuptiBufferCompleted);
      res != CUPTI_SUCCESS) {
    return fail("cuptiActivityRegisterCallbacks", res);
  }
  for (const ActivityKindName& k : kRequiredKinds) {
    if (CUptiResult res = api->ActivityEnable(k.kind); res != CUPTI_SUCCESS) {
      return fail("cuptiActivityEnable(" + std::string(k.name) + ")", res);
    }
    c.enabled.push_back(k.kind);
  }
  QuietNoisyCalls(*api);
  for (const ActivityKindName& k : kOptionalKinds) {
    if (CUptiResult res = EnableKind(*api, k.kind); res != CUPTI_SUCCESS) {
      r->missing_kinds +=
          (r->missing_kinds.empty() ? "" : ", ") + std::string(k.name) + ": " + CuptiErrorText(*api, res);
      continue;
    }
    c.enabled.push_back(k.kind);
  }
  if (c.options.flush_period_ms > 0 && api->ActivityFlushPeriod != nullptr) {
    api->ActivityFlushPeriod(c.options.flush_period_ms);
  }
  if (c.options.inject_nvtx) InjectNvtxOncePerProcess(api->cupti_path);
  ReadCuptiDropped(*api);  // reading resets CUPTI's count: earlier losses are not this session's
  c.cupti_dropped.store(0, std::memory_order_relaxed);
  c.completed.store(0, std::memory_order_relaxed);

  g_push.store(api->ActivityPushExternalCorrelationId, std::memory_order_relaxed);
  g_pop.store(api->ActivityPopExternalCorrelationId, std::memory_order_relaxed);
  g_correlation_pop.store(PopAnnotation, std::memory_order_release);  // before push: what is pushed can pop
  g_correlation_push.store(PushAnnotation, std::memory_order_release);
  c.activated = true;
  return true;
}

bool DriverNotInitialised(const CuptiApi& api) {
  int devices = 0;
  return api.DeviceGetCount != nullptr && api.DeviceGetCount(&devices) == CUDA_ERROR_NOT_INITIALIZED;
}

// The resource callback for the application's first context; false where
// CUPTI refuses it (then the kinds are enabled at once).
bool WaitForFirstContext(Collector& c) {
  return c.api->EnableCallback != nullptr &&
         c.api->EnableCallback(1, c.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED) ==
             CUPTI_SUCCESS;
}

// With `tick` held: enables the kinds for the waiting session, once.
void ActivateWaiting(Collector& c) {
  if (!c.active || c.activated || c.waiting_sink == nullptr) return;
  CuptiStartResult r;
  if (!Activate(c, c.waiting_sink, &r)) {
    c.waiting_sink = nullptr;
    Warn("GPU activity is not collected: at the application's first CUDA context, " + r.reason);
  } else if (!r.missing_kinds.empty()) {
    WarnOnce("cuda-kinds", "CUPTI refused some activity kinds; they are not recorded: " + r.missing_kinds);
  }
}

// After the application's first context (OnContextCreated's thread), or at
// Start when a context appeared meanwhile. A stop under way wins: it holds
// `tick` while it unsubscribes, and this gives up instead of waiting.
void ActivateAtFirstContext(Collector& c) {
  while (!c.stopping.load(std::memory_order_acquire)) {
    std::unique_lock<std::mutex> tick(c.tick, std::try_to_lock);
    if (tick.owns_lock()) {
      ActivateWaiting(c);
      return;
    }
    std::this_thread::yield();  // the drain's tick, for a moment
  }
}

}  // namespace

CuptiStartResult StartCuptiCollection(const CuptiApi* api, const CuptiCollectorOptions& options,
                                      GpuRecordBuffer* sink) {
  Collector& c = State();
  CuptiStartResult r;
  if (c.abandoned || (c.initialised_pid != 0 && c.initialised_pid != getpid())) {
    r.reason =
        "this process was forked from one that had initialised CUPTI; GPU activity is not collected in "
        "forked children";
    return r;
  }
  if (c.active) {
    r.reason = "GPU collection is already active in this process";
    return r;
  }
  c.stopping.store(false, std::memory_order_release);
  c.context_seen.store(false, std::memory_order_release);
  if (CUptiResult res = api->GetVersion(&r.cupti_version); res != CUPTI_SUCCESS) {
    r.reason = Explain(*api, "cuptiGetVersion", res);
    return r;
  }
  if (api->DriverGetVersion == nullptr) {
    r.reason = "no CUDA driver: libcuda.so.1 is not installed";
    return r;
  }
  int driver_version = 0;
  if (api->DriverGetVersion(&driver_version) == CUDA_SUCCESS) {
    r.driver_version = static_cast<std::uint32_t>(driver_version);
  }

  // Subscribing first: while another profiler holds CUPTI's only slot,
  // nothing process-wide of its CUPTI (its clock) is touched.
  CUpti_SubscriberHandle subscriber = nullptr;
  if (CUptiResult res = api->Subscribe(&subscriber, ApiCallback, nullptr); res != CUPTI_SUCCESS) {
    r.reason = Explain(*api, "cuptiSubscribe", res);
    return r;
  }
  // Once per process (registering twice corrupts timestamps), before the
  // first kind is enabled, and never on a CUPTI whose callback zeroes or
  // shifts kernel stamps.
  if (!c.timestamp_callback_tried) {
    c.timestamp_callback_tried = true;
    if (CuptiTimestampCallbackIsSafe(r.cupti_version)) {
      const CUptiResult registered = api->ActivityRegisterTimestampCallback(MonotonicTimestamp);
      c.monotonic_timestamps = registered == CUPTI_SUCCESS;
      if (!c.monotonic_timestamps)
        c.clock_note = "the timestamp callback was refused: " + CuptiErrorText(*api, registered);
    } else {
      c.clock_note = "no timestamp callback on CUPTI " + std::to_string(r.cupti_version) +
                     ": its callback zeroes or shifts kernel timestamps (fixed in CUDA 13.1)";
    }
  }
  c.api = api;
  c.subscriber = subscriber;
  c.initialised_pid = getpid();
  c.options = options;
  r.cupti_library = api->cupti_path;
  if (r.cupti_version == kCuptiWithStopDefects) {
    r.warning = "CUPTI " + std::to_string(r.cupti_version) + " (CUDA 13.0 GA, " + api->cupti_path +
                ") can deadlock or crash when collection stops (fixed in CUDA 13.0 Update 1): upgrade the "
                "nvidia-cuda-cupti wheel or the toolkit, or set EnableCuda=0";
  }
  TrackGraphCaptures(c);
  c.timebase = c.monotonic_timestamps ? "cupti timestamp callback: CLOCK_MONOTONIC"
                                      : "cupti default clock (CLOCK_REALTIME), converted to CLOCK_MONOTONIC by the "
                                        "nearest of pairs read every drain frame; " +
                                            c.clock_note;
  r.timebase = c.timebase;

  c.cupti_version = r.cupti_version;
  // smprof must not be the one to initialise CUDA (a CUDA_VISIBLE_DEVICES the
  // script sets afterwards, fork-based workers): before the application's
  // first context nothing is enabled (enabling kinds may initialise the
  // driver) and nothing pushed.
  if (DriverNotInitialised(*api) && WaitForFirstContext(c)) {
    c.waiting_sink = sink;
    {
      std::lock_guard<std::mutex> lock(c.tick);
      c.active = true;
    }
    // A context created between the check and the callback's enabling was not seen.
    if (!DriverNotInitialised(*api)) ActivateAtFirstContext(c);
    r.active = true;
    return r;
  }
  if (!Activate(c, sink, &r)) {
    api->Unsubscribe(c.subscriber);
    c.subscriber = nullptr;
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(c.tick);
    c.active = true;
  }
  r.active = true;
  return r;
}

CuptiStopResult StopCuptiCollection(const std::string& no_wait_reason) {
  CuptiStopResult result;
  Collector* collector = g_collector.load(std::memory_order_acquire);
  if (collector == nullptr || !collector->active) return result;
  Collector& c = *collector;
  c.stopping.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> tick(c.tick);
  result.timebase = c.timebase;
  if (!c.activated) {  // the application created no CUDA context: nothing was enabled
    result.synchronize_skipped = c.context_seen.load(std::memory_order_acquire)
                                     ? "GPU collection never began after the application's first CUDA context"
                                     : kNoContextYet;
    c.api->Unsubscribe(c.subscriber);
    c.subscriber = nullptr;
    c.active = false;
    return result;
  }
  g_correlation_push.store(nullptr, std::memory_order_relaxed);  // open scopes still pop
  result.synchronize_skipped = ReasonNotToWait(c, no_wait_reason);
  if (result.synchronize_skipped.empty()) {
    // While the activity kinds are enabled: the queued work's records must complete.
    DisableKindsRecordingTheWait(c);
    const ContextSyncResult synced = WaitForQueuedWork(*c.api, c.options.sync_timeout_ms);
    result.contexts_synchronized = synced.synchronized;
    result.synchronize_failure = synced.failure;
    result.synchronize_timed_out = synced.timed_out;
  }
  DisableEnabled(c);
  SampleClock(c);
  if (!result.synchronize_skipped.empty() || result.synchronize_timed_out || !result.synchronize_failure.empty()) {
    ExpectUnfinishedWork(c);  // only this flush can hand back work still running
  }
  c.api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // completes every buffer, partial ones too
  c.cupti_dropped.fetch_add(ReadCuptiDropped(*c.api), std::memory_order_relaxed);
  if (c.options.flush_period_ms > 0 && c.api->ActivityFlushPeriod != nullptr) c.api->ActivityFlushPeriod(0);
  c.api->Unsubscribe(c.subscriber);
  c.subscriber = nullptr;
  ActivityBufferPool* pool = CurrentPool(c);
  result.buffers_refused = pool->refused() - c.refused_at_start;
  result.foreign_buffers = pool->foreign() - c.foreign_at_start;
  result.buffers_not_returned = pool->in_use();
  {
    std::shared_lock<std::shared_mutex> lock(c.connection);
    if (c.decoder) result.decoder = c.decoder->stats();
  }
  Disconnect(c);
  result.cupti_dropped = c.cupti_dropped.load(std::memory_order_relaxed);
  result.buffers_completed = c.completed.load(std::memory_order_relaxed);
  result.foreign_client = ForeignClientEvidence(result);
  c.activated = false;
  c.active = false;
  return result;
}

void TickCuptiCollection() {
  Collector* collector = g_collector.load(std::memory_order_acquire);
  if (collector == nullptr) return;
  Collector& c = *collector;
  std::unique_lock<std::mutex> tick(c.tick, std::try_to_lock);  // a stop in progress flushes by itself
  if (!tick.owns_lock() || !c.active) return;
  if (!c.activated) {
    if (c.context_seen.load(std::memory_order_acquire)) ActivateWaiting(c);
    return;
  }
  SampleClock(c);
  c.api->ActivityFlushAll(0);
}

bool CuptiCollectionActive() {
  const Collector* c = g_collector.load(std::memory_order_acquire);
  return c != nullptr && c->active;
}

void AbandonCuptiCollectionInChild() {
  g_correlation_push.store(nullptr, std::memory_order_relaxed);
  g_correlation_pop.store(nullptr, std::memory_order_relaxed);
  g_push.store(nullptr, std::memory_order_relaxed);
  g_pop.store(nullptr, std::memory_order_relaxed);
  WithdrawNvtxInForkedChild();
  Collector* c = g_collector.load(std::memory_order_acquire);
  if (c == nullptr) return;  // CUPTI was never started: nothing to forget
  // Its locks may have been held by threads that do not exist here: only
  // plain fields are touched.
  if (c->initialised_pid != 0) c->abandoned = true;
  c->active = false;
  c->activated = false;
  c->subscriber = nullptr;
  c->enabled.clear();
}

void CUPTIAPI CuptiBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  Collector& c = State();
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // as many as fit
  std::lock_guard<std::mutex> lock(c.deliver);
  if (c.pool == nullptr) return;
  if (std::uint8_t* b = c.pool->Acquire(c.may_exceed_cap)) {
    *buffer = b;
    *size = c.pool->buffer_bytes();
  }
}

void CUPTIAPI CuptiBufferCompleted(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                   std::size_t valid_size) {
  Collector& c = State();
  // Outside our locks: CUPTI may take its own locks in here.
  if (const CuptiApi* api = c.callback_api.load(std::memory_order_acquire)) {
    c.cupti_dropped.fetch_add(ReadCuptiDropped(*api), std::memory_order_relaxed);
  }
  {
    std::shared_lock<std::shared_mutex> lock(c.connection);
    if (c.sink != nullptr && c.decoder != nullptr && buffer != nullptr && valid_size > 0) {
      c.clock->Sample();  // a pair after every record of this buffer
      GpuBatch batch;
      c.decoder->Decode(buffer, valid_size, &batch);
      c.sink->Add(std::move(batch));
    }
  }
  c.completed.fetch_add(1, std::memory_order_relaxed);
  // A buffer the pool did not lend (another client's) is counted there and
  // left to its owner.
  if (ActivityBufferPool* pool = CurrentPool(c)) pool->Release(buffer);
}

}  // namespace smprof::internal

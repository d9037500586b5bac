#include "support/fake_cupti.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <iterator>
#include <string>

#include "collectors/cuda/activity_decoder.h"
#include "smprof/annotate.h"

namespace smprof::testing {

namespace {

thread_local std::vector<std::pair<int, std::uint64_t>> t_correlation_stack;

std::uint32_t g_version = 130001;
int g_driver_version = 13000;

CUptiResult GetVersion(std::uint32_t* version) {
  *version = g_version;
  return CUPTI_SUCCESS;
}

CUresult DriverVersion(int* version) {
  *version = g_driver_version;
  return CUDA_SUCCESS;
}

CUptiResult ResultString(CUptiResult result, const char** text) {
  static const std::map<int, std::string> names = {
      {CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN"},
      {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"},
      {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
      {CUPTI_ERROR_NOT_COMPATIBLE, "CUPTI_ERROR_NOT_COMPATIBLE"}};
  auto it = names.find(result);
  *text = it == names.end() ? "CUPTI_ERROR_OTHER" : it->second.c_str();
  return CUPTI_SUCCESS;
}

// CUPTI's default clock: CLOCK_REALTIME, stepped by StepDefaultClock.
std::atomic<std::int64_t> g_default_clock_step_ns{0};
std::atomic<CUpti_TimestampCallbackFunc> g_timestamp_callback{nullptr};

CUptiResult Timestamp(std::uint64_t* ns) {
  *ns = FakeCupti::CuptiNow();
  return CUPTI_SUCCESS;
}

struct NameGate {
  std::mutex mutex;
  std::condition_variable changed;
  bool blocked = false;
  int waiting = 0;
};

NameGate& Gate() {
  static auto* gate = new NameGate();
  return *gate;
}

CUptiResult CallbackName(CUpti_CallbackDomain, std::uint32_t, const char** name) {
  NameGate& gate = Gate();
  std::unique_lock<std::mutex> lock(gate.mutex);
  ++gate.waiting;
  gate.changed.notify_all();
  gate.changed.wait(lock, [&gate] { return !gate.blocked; });
  --gate.waiting;
  *name = "cudaLaunchKernel";
  return CUPTI_SUCCESS;
}

CUptiResult Push(CUpti_ExternalCorrelationKind kind, std::uint64_t id) {
  t_correlation_stack.emplace_back(kind, id);
  return CUPTI_SUCCESS;
}

CUptiResult Pop(CUpti_ExternalCorrelationKind kind, std::uint64_t* last) {
  auto& stack = t_correlation_stack;
  auto it = std::find_if(stack.rbegin(), stack.rend(), [kind](const auto& e) { return e.first == kind; });
  if (it == stack.rend()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (last != nullptr) *last = it->second;
  stack.erase(std::next(it).base());
  return CUPTI_SUCCESS;
}

}  // namespace

FakeCupti& FakeCupti::Get() {
  static auto* fake = new FakeCupti();
  return *fake;
}

FakeCupti::FakeCupti() {
  api_.GetVersion = GetVersion;
  api_.GetResultString = ResultString;
  api_.GetTimestamp = Timestamp;
  api_.GetCallbackName = CallbackName;
  api_.Subscribe = Subscribe;
  api_.Unsubscribe = Unsubscribe;
  api_.EnableCallback = EnableCallback;
  api_.ActivityRegisterCallbacks = RegisterCallbacks;
  api_.ActivityRegisterTimestampCallback = RegisterTimestamp;
  api_.SetThreadIdType = SetThreadIdType;
  api_.ActivityEnable = Enable;
  api_.ActivityDisable = Disable;
  api_.ActivityFlushAll = FlushAll;
  api_.ActivityGetNumDroppedRecords = Dropped;
  api_.ActivityGetNextRecord = internal::HeaderNextRecord;
  api_.ActivityPushExternalCorrelationId = Push;
  api_.ActivityPopExternalCorrelationId = Pop;
  api_.cupti_path = "/opt/fake/libcupti.so.13";
}

namespace {

CUresult DeviceGet(CUdevice* device, int ordinal) {
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult PrimaryCtxRetain(CUcontext* context, CUdevice device) {
  *context = reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(device) + 1);
  return CUDA_SUCCESS;
}

CUresult PrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }

bool AllKernelsFinished(const std::uint8_t* buffer, std::size_t valid) {
  for (std::size_t offset = 0; offset + sizeof(CUpti_ActivityKernel10) <= valid;
       offset += sizeof(CUpti_ActivityKernel10)) {
    CUpti_ActivityKernel10 kernel;
    std::memcpy(&kernel, buffer + offset, sizeof(kernel));
    if (kernel.end == 0) return false;
  }
  return true;
}

// No thread has a current context of its own here; pushed primaries only.
thread_local CUcontext t_current = nullptr;

CUresult CtxGetCurrent(CUcontext* context) {
  *context = t_current;
  return CUDA_SUCCESS;
}

CUresult CtxPush(CUcontext context) {
  t_current = context;
  return CUDA_SUCCESS;
}

CUresult CtxPop(CUcontext* context) {
  *context = t_current;
  t_current = nullptr;
  return CUDA_SUCCESS;
}

}  // namespace

void FakeCupti::Reset(const FakeCuptiScript& script) {
  std::lock_guard<std::mutex> lock(mutex_);
  script_ = script;
  g_version = script.version;
  g_driver_version = script.driver_version;
  api_.DriverGetVersion = script.driver_installed ? DriverVersion : nullptr;
  api_.DeviceGetCount = script.driver_installed ? DeviceGetCount : nullptr;
  api_.DeviceGet = DeviceGet;
  api_.DevicePrimaryCtxGetState = PrimaryCtxGetState;
  api_.DevicePrimaryCtxRetain = PrimaryCtxRetain;
  api_.DevicePrimaryCtxRelease = PrimaryCtxRelease;
  api_.CtxGetCurrent = CtxGetCurrent;
  api_.CtxPushCurrent = CtxPush;
  api_.CtxPopCurrent = CtxPop;
  api_.CtxSynchronize = CtxSynchronize;
  api_.ActivityEnableAndDump = script.newer_cupti ? EnableAndDump : nullptr;
  api_.ActivityFlushPeriod = script.newer_cupti ? FlushPeriod : nullptr;
  api_.ActivitySetAttribute = SetAttribute;
  api_.ActivityEnableRuntimeApi = script.newer_cupti ? EnableRuntimeApi : nullptr;
  api_.ActivityEnableDriverApi = script.newer_cupti ? EnableDriverApi : nullptr;
  api_.ActivityEnableAllSyncRecords = script.newer_cupti ? EnableAllSyncRecords : nullptr;
  all_sync_records_ = true;
  dumped_.clear();
  flush_period_ms_ = 0;
  zeroed_ = false;
  quiet_runtime_.clear();
  quiet_driver_.clear();
  context_synchronizations_ = 0;
  enables_before_driver_init_ = 0;
  kinds_enabled_at_synchronize_ = false;
  kinds_at_synchronize_.clear();
  subscriber_callback_ = nullptr;
  enabled_callbacks_.clear();
  synchronize_released_ = false;
  subscribed_ = 0;
  subscribe_calls_ = 0;
  forced_flushes_ = 0;
  unforced_flushes_ = 0;
  thread_id_type_ = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  enabled_.clear();
  held_.clear();
  t_correlation_stack.clear();
}

CUptiResult FakeCupti::Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void*) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  ++f.subscribe_calls_;
  if (f.script_.subscribe != CUPTI_SUCCESS) return f.script_.subscribe;
  if (f.subscribed_ > 0) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  ++f.subscribed_;
  f.subscriber_callback_ = callback;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&f);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableCallback(std::uint32_t enable, CUpti_SubscriberHandle subscriber,
                                      CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&f) || f.subscribed_ == 0) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const std::pair<CUpti_CallbackDomain, CUpti_CallbackId> id{domain, cbid};
  auto it = std::find(f.enabled_callbacks_.begin(), f.enabled_callbacks_.end(), id);
  if (enable != 0 && it == f.enabled_callbacks_.end()) f.enabled_callbacks_.push_back(id);
  if (enable == 0 && it != f.enabled_callbacks_.end()) f.enabled_callbacks_.erase(it);
  return CUPTI_SUCCESS;
}

void FakeCupti::CallApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUstream stream, int result) {
  CUpti_CallbackFunc callback = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::pair<CUpti_CallbackDomain, CUpti_CallbackId> id{domain, cbid};
    if (subscribed_ == 0 ||
        std::find(enabled_callbacks_.begin(), enabled_callbacks_.end(), id) == enabled_callbacks_.end()) {
      return;
    }
    callback = subscriber_callback_;
  }
  struct {
    CUstream stream;
    void* second;
  } params{stream, nullptr};
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_EXIT;
  data.functionParams = &params;
  data.functionReturnValue = &result;
  callback(nullptr, domain, cbid, &data);
}

void FakeCupti::CreateContext() {
  CUpti_CallbackFunc callback = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    script_.driver_initialised = true;
    const std::pair<CUpti_CallbackDomain, CUpti_CallbackId> id{CUPTI_CB_DOMAIN_RESOURCE,
                                                               CUPTI_CBID_RESOURCE_CONTEXT_CREATED};
    if (subscribed_ == 0 ||
        std::find(enabled_callbacks_.begin(), enabled_callbacks_.end(), id) == enabled_callbacks_.end()) {
      return;
    }
    callback = subscriber_callback_;
  }
  CUpti_ResourceData data{};
  callback(nullptr, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &data);
}

int FakeCupti::enables_before_driver_init() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enables_before_driver_init_;
}

std::size_t FakeCupti::enabled_callbacks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enabled_callbacks_.size();
}

void FakeCupti::ReleaseSynchronize() {
  std::lock_guard<std::mutex> lock(mutex_);
  synchronize_released_ = true;
  synchronize_changed_.notify_all();
}

void FakeCupti::WaitUntilSynchronizeBlocked() {
  std::unique_lock<std::mutex> lock(mutex_);
  synchronize_changed_.wait(lock, [this] { return synchronize_blocked_ > 0; });
}

bool FakeCupti::synchronize_blocked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return synchronize_blocked_ > 0;
}

CUptiResult FakeCupti::Unsubscribe(CUpti_SubscriberHandle subscriber) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&f) || f.subscribed_ == 0) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  --f.subscribed_;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                         CUpti_BuffersCallbackCompleteFunc completed) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  f.requested_ = requested;
  f.completed_ = completed;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RegisterTimestamp(CUpti_TimestampCallbackFunc callback) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  ++f.timestamp_registrations_;
  f.subscribed_before_timestamp_ = f.subscribed_ > 0;
  if (f.script_.register_timestamp != CUPTI_SUCCESS) return f.script_.register_timestamp;
  f.timestamp_ = callback;
  g_timestamp_callback.store(callback);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::SetThreadIdType(CUpti_ActivityThreadIdType type) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  f.thread_id_type_ = type;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::Enable(CUpti_ActivityKind kind) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (auto it = f.script_.enable.find(kind); it != f.script_.enable.end() && it->second != CUPTI_SUCCESS) {
    return it->second;
  }
  if (!f.script_.driver_initialised) ++f.enables_before_driver_init_;
  f.enabled_.push_back(kind);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::Disable(CUpti_ActivityKind kind) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  auto it = std::find(f.enabled_.begin(), f.enabled_.end(), kind);
  if (it == f.enabled_.end()) return CUPTI_ERROR_INVALID_KIND;
  f.enabled_.erase(it);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::FlushAll(std::uint32_t flag) {
  FakeCupti& f = Get();
  std::vector<std::pair<std::uint8_t*, std::size_t>> held;
  CUpti_BuffersCallbackCompleteFunc completed;
  {
    std::lock_guard<std::mutex> lock(f.mutex_);
    completed = f.completed_;
    if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0) {
      ++f.forced_flushes_;
      held.swap(f.held_);
    } else {  // only buffers whose records are all finished
      ++f.unforced_flushes_;
      auto finished = [](const std::pair<std::uint8_t*, std::size_t>& b) {
        return AllKernelsFinished(b.first, b.second);
      };
      std::copy_if(f.held_.begin(), f.held_.end(), std::back_inserter(held), finished);
      f.held_.erase(std::remove_if(f.held_.begin(), f.held_.end(), finished), f.held_.end());
    }
  }
  for (const auto& [buffer, valid] : held) completed(nullptr, 0, buffer, 0, valid);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::Dropped(CUcontext, std::uint32_t, std::size_t* dropped) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  *dropped = f.script_.dropped_per_query;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableAndDump(CUpti_ActivityKind kind) {
  const CUptiResult result = Enable(kind);
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (result == CUPTI_SUCCESS) f.dumped_.push_back(kind);
  return result;
}

CUptiResult FakeCupti::FlushPeriod(std::uint32_t period_ms) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  f.flush_period_ms_ = period_ms;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::SetAttribute(CUpti_ActivityAttribute attr, std::size_t* size, void* value) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER && *size == sizeof(std::uint8_t)) {
    f.zeroed_ = *static_cast<std::uint8_t*>(value) != 0;
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableRuntimeApi(CUpti_CallbackId cbid, std::uint8_t enable) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (enable == 0) f.quiet_runtime_.push_back(cbid);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableDriverApi(CUpti_CallbackId cbid, std::uint8_t enable) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (enable == 0) f.quiet_driver_.push_back(cbid);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableAllSyncRecords(std::uint8_t enable) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  f.all_sync_records_ = enable != 0;
  return CUPTI_SUCCESS;
}

bool FakeCupti::all_sync_records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return all_sync_records_;
}

CUresult FakeCupti::DeviceGetCount(int* count) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  if (!f.script_.driver_initialised) return CUDA_ERROR_NOT_INITIALIZED;
  *count = static_cast<int>(f.script_.primary_contexts_active.size());
  return CUDA_SUCCESS;
}

CUresult FakeCupti::PrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  FakeCupti& f = Get();
  std::lock_guard<std::mutex> lock(f.mutex_);
  *flags = 0;
  *active = f.script_.primary_contexts_active.at(static_cast<std::size_t>(device)) ? 1 : 0;
  return CUDA_SUCCESS;
}

// The GPU finishes the work queued on the current context: the kernels held
// for the flush get their end.
CUresult FakeCupti::CtxSynchronize() {
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  FakeCupti& f = Get();
  std::unique_lock<std::mutex> lock(f.mutex_);
  if (f.script_.synchronize_blocks) {
    ++f.synchronize_blocked_;
    f.synchronize_changed_.notify_all();
    f.synchronize_changed_.wait(lock, [&f] { return f.synchronize_released_; });
    --f.synchronize_blocked_;
    f.synchronize_changed_.notify_all();
  }
  ++f.context_synchronizations_;
  f.kinds_enabled_at_synchronize_ = !f.enabled_.empty();
  f.kinds_at_synchronize_ = f.enabled_;
  for (const auto& [buffer, valid] : f.held_) {
    for (std::size_t offset = 0; offset + sizeof(CUpti_ActivityKernel10) <= valid;
         offset += sizeof(CUpti_ActivityKernel10)) {
      CUpti_ActivityKernel10 kernel;
      std::memcpy(&kernel, buffer + offset, sizeof(kernel));
      if (kernel.end == 0) kernel.end = kernel.start + 5;
      std::memcpy(buffer + offset, &kernel, sizeof(kernel));
    }
  }
  return CUDA_SUCCESS;
}

void FakeCupti::BlockCallbackNames(bool block) {
  NameGate& gate = Gate();
  std::lock_guard<std::mutex> lock(gate.mutex);
  gate.blocked = block;
  gate.changed.notify_all();
}

void FakeCupti::WaitUntilNameBlocked() {
  NameGate& gate = Gate();
  std::unique_lock<std::mutex> lock(gate.mutex);
  gate.changed.wait(lock, [&gate] { return gate.waiting > 0; });
}

void FakeCupti::RegisterForeignCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                         CUpti_BuffersCallbackCompleteFunc completed) {
  RegisterCallbacks(requested, completed);
}

std::uint8_t* FakeCupti::RequestBuffer(std::size_t* size) {
  CUpti_BuffersCallbackRequestFunc requested;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requested = requested_;
  }
  std::uint8_t* buffer = nullptr;
  std::size_t max_records = 0;
  *size = 0;
  requested(&buffer, size, &max_records);
  return buffer;
}

void FakeCupti::CompleteBuffer(std::uint8_t* buffer, std::size_t valid_size) {
  CUpti_BuffersCallbackCompleteFunc completed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed = completed_;
  }
  completed(nullptr, 0, buffer, 0, valid_size);
}

void FakeCupti::HoldUntilFlush(std::uint8_t* buffer, std::size_t valid_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  held_.emplace_back(buffer, valid_size);
}

std::uint64_t FakeCupti::CuptiNow() {
  if (const CUpti_TimestampCallbackFunc callback = g_timestamp_callback.load()) return callback();
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec +
                                    g_default_clock_step_ns.load());
}

void FakeCupti::StepDefaultClock(std::int64_t ns) { g_default_clock_step_ns += ns; }

std::size_t FakeCupti::WriteKernels(std::uint8_t* buffer, std::size_t size, int count, const char* name,
                                    bool finished) {
  const std::uint64_t now = CuptiNow();
  std::size_t offset = 0;
  for (int i = 0; i < count && offset + sizeof(CUpti_ActivityKernel10) <= size; ++i) {
    CUpti_ActivityKernel10 kernel;
    std::memset(&kernel, 0, sizeof(kernel));
    kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    kernel.start = now + 10 * static_cast<std::uint64_t>(i);
    kernel.end = finished ? kernel.start + 5 : 0;
    kernel.correlationId = static_cast<std::uint32_t>(i + 1);
    kernel.streamId = 7;
    kernel.name = name;
    std::memcpy(buffer + offset, &kernel, sizeof(kernel));
    offset += sizeof(kernel);
  }
  return offset;
}

int FakeCupti::subscribed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return subscribed_;
}

int FakeCupti::subscribe_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return subscribe_calls_;
}

int FakeCupti::unforced_flushes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return unforced_flushes_;
}

int FakeCupti::forced_flushes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return forced_flushes_;
}

CUpti_ActivityThreadIdType FakeCupti::thread_id_type() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return thread_id_type_;
}

int FakeCupti::timestamp_registrations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return timestamp_registrations_;
}

CUpti_TimestampCallbackFunc FakeCupti::timestamp_callback() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return timestamp_;
}

std::vector<CUpti_ActivityKind> FakeCupti::enabled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enabled_;
}

std::vector<CUpti_ActivityKind> FakeCupti::dumped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dumped_;
}

std::uint32_t FakeCupti::flush_period_ms() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return flush_period_ms_;
}

bool FakeCupti::zeroed_buffers_announced() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return zeroed_;
}

std::vector<CUpti_CallbackId> FakeCupti::quiet_runtime_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return quiet_runtime_;
}

std::vector<CUpti_CallbackId> FakeCupti::quiet_driver_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return quiet_driver_;
}

bool FakeCupti::subscribed_before_timestamp_callback() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return subscribed_before_timestamp_;
}

int FakeCupti::context_synchronizations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return context_synchronizations_;
}

std::vector<CUpti_ActivityKind> FakeCupti::kinds_at_synchronize() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kinds_at_synchronize_;
}

bool FakeCupti::kinds_enabled_at_synchronize() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kinds_enabled_at_synchronize_;
}

std::vector<std::pair<int, std::uint64_t>> FakeCupti::CorrelationStack() { return t_correlation_stack; }

}  // namespace smprof::testing

#include "collectors/cuda/activity_decoder.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "collectors/cuda/cupti_record_types.h"
#include "runtime/name_table.h"
#include "smprof/annotate.h"

namespace smprof::internal {

namespace {

constexpr std::size_t kMaxCachedKernels = 1 << 16;

// trace::GpuKind and trace::CopyKind values (proto/smprof/trace.proto).
constexpr std::uint32_t kGpuKernel = 1;
constexpr std::uint32_t kGpuMemcpy = 2;
constexpr std::uint32_t kGpuMemset = 3;
constexpr std::uint32_t kGpuSync = 4;
constexpr std::uint32_t kCopyPtoP = 10;
// trace ApiCalls.domain
constexpr std::uint32_t kRuntimeDomain = 1;
constexpr std::uint32_t kDriverDomain = 2;

// Indexed by trace::CopyKind, which follows CUpti_ActivityMemcpyKind.
constexpr const char* kMemcpyNames[] = {"Memcpy",      "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
                                        "Memcpy AtoH", "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA",
                                        "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
static_assert(sizeof(kMemcpyNames) / sizeof(kMemcpyNames[0]) == 11);

// Indexed by CUpti_ActivitySynchronizationType.
constexpr const char* kSyncNames[] = {"Synchronize",        "Event synchronize",   "Stream wait event",
                                      "Stream synchronize", "Context synchronize", "Synchronize"};

// The size of each record kind in the headers built against (what libcupti of
// the same CUDA version steps by); 0 for kinds HeaderNextRecord does not know.
std::size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(KernelRecord);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      return sizeof(MarkerDataRecord);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_STREAM:
      return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_NAME:
      return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
      return sizeof(MemoryPoolRecord);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      return sizeof(CUpti_ActivityGraphTrace2);
    default:
      return 0;
  }
}

const char* OverheadName(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
      return "uvm activity init";
    default:
      return "unknown";
  }
}

std::string FormatUuid(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof(text), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

std::uint32_t NonNegative(std::int32_t v) { return v > 0 ? static_cast<std::uint32_t>(v) : 0; }

}  // namespace

CUptiResult HeaderNextRecord(std::uint8_t* buffer, std::size_t valid_size, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t offset = 0;
  if (*record != nullptr) {
    const auto* current = reinterpret_cast<std::uint8_t*>(*record);
    offset = static_cast<std::size_t>(current - buffer) + RecordSize((*record)->kind);
  }
  if (offset + sizeof(CUpti_Activity) > valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  const std::size_t size = RecordSize(next->kind);
  if (size == 0) return CUPTI_ERROR_INVALID_KIND;
  if (offset + size > valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = next;
  return CUPTI_SUCCESS;
}

ActivityDecoder::ActivityDecoder(Options options) : options_(std::move(options)) {
  NameTable& names = NameTable::Get();
  for (std::size_t i = 0; i < memcpy_names_.size(); ++i) memcpy_names_[i] = names.Intern(kMemcpyNames[i]);
  memset_name_ = names.Intern("Memset");
  for (std::size_t i = 0; i < sync_names_.size(); ++i) sync_names_[i] = names.Intern(kSyncNames[i]);
}

ActivityDecoderStats ActivityDecoder::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void ActivityDecoder::ExpectUnfinishedWork() {
  std::lock_guard<std::mutex> lock(mutex_);
  unfinished_work_expected_ = true;
}

void ActivityDecoder::Decode(std::uint8_t* buffer, std::size_t valid_size, GpuBatch* batch) {
  if (buffer == nullptr || valid_size == 0 || options_.next_record == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  CUpti_Activity* record = nullptr;
  CUptiResult result = CUPTI_SUCCESS;
  while ((result = options_.next_record(buffer, valid_size, &record)) == CUPTI_SUCCESS) DecodeRecord(record, batch);
  if (result != CUPTI_ERROR_MAX_LIMIT_REACHED) {
    ++stats_.unreadable_buffers;
    return;
  }
  // libcupti ends a buffer whose last record is cut short as if it ended
  // cleanly; bytes after the last whole record mean it was truncated (when
  // the headers know that record's size: Options::cupti_version).
  if (options_.cupti_version > CUPTI_API_VERSION) return;
  std::size_t end = 0;
  if (record != nullptr) {
    const std::size_t size = RecordSize(record->kind);
    if (size == 0) return;  // a kind newer than our headers: its size is unknown
    end = static_cast<std::size_t>(reinterpret_cast<std::uint8_t*>(record) - buffer) + size;
  }
  if (end < valid_size) ++stats_.truncated_buffers;
}

bool ActivityDecoder::ValidSpan(std::uint64_t start, std::uint64_t end) {
  if (start == 0 || end == 0) {
    CountZeroStamp();
    return false;
  }
  if (end < start) {
    ++stats_.invalid_timestamps;
    return false;
  }
  return OnSessionClock(Time(start), EndTime(start, end));
}

void ActivityDecoder::CountZeroStamp() { ++(unfinished_work_expected_ ? stats_.incomplete : stats_.zero_timestamps); }

bool ActivityDecoder::OnSessionClock(std::int64_t start_ns, std::int64_t end_ns) {
  if (options_.earliest_ns == 0) return true;
  if (start_ns >= options_.earliest_ns && end_ns <= NowNs() + options_.future_slack_ns) return true;
  ++stats_.foreign_timebase;
  return false;
}

void ActivityDecoder::LearnContext(std::uint32_t context, std::uint32_t device) {
  if (context_devices_.size() < options_.max_contexts || context_devices_.count(context) != 0) {
    context_devices_[context] = device;
  }
}

NameId ActivityDecoder::Intern(const char* text) { return NameTable::Get().Intern(text != nullptr ? text : ""); }

const KernelInfo& ActivityDecoder::Kernel(const char* name) {
  // CUPTI keeps a kernel's name at one address for the life of its module, so
  // the pointer is the key; the stored copy catches an address reused by a
  // later module for another name.
  const char* key = name != nullptr ? name : "";
  // Bounded even if name addresses were not stable: then the cache restarts.
  if (kernels_.size() >= kMaxCachedKernels && kernels_.count(key) == 0) kernels_.clear();
  auto [it, added] = kernels_.try_emplace(key);
  if (added || it->second.mangled != key) {
    it->second.mangled = key;
    it->second.info = DescribeKernel(key);
  }
  return it->second.info;
}

NameId ActivityDecoder::ApiName(CUpti_CallbackDomain domain, std::uint32_t cbid) {
  const std::uint64_t key = (static_cast<std::uint64_t>(domain) << 32) | cbid;
  auto [it, added] = api_names_.try_emplace(key);
  if (added) {
    const char* name = options_.api_names ? options_.api_names(domain, cbid) : nullptr;
    it->second = name != nullptr ? Intern(name)
                                 : Intern((std::string(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver") +
                                           " api " + std::to_string(cbid))
                                              .c_str());
  }
  return it->second;
}

namespace {

// A kernel, copy or set: the fields their CUPTI records share by name.
template <typename Record>
GpuActivityRecord& AddOnStream(const Record& record, std::int64_t start_ns, std::int64_t end_ns, std::uint32_t kind,
                               NameId name, GpuBatch* batch) {
  GpuActivityRecord& r = batch->activities.emplace_back();
  r.start_ns = start_ns;
  r.end_ns = end_ns;
  r.graph_node_id = record.graphNodeId;
  r.name = name;
  r.kind = kind;
  r.device = record.deviceId;
  r.context = record.contextId;
  r.stream = record.streamId;
  r.correlation_id = record.correlationId;
  r.graph_id = record.graphId;
  return r;
}

}  // namespace

void ActivityDecoder::DecodeRecord(const CUpti_Activity* record, GpuBatch* batch) {
  const auto kind = static_cast<std::uint32_t>(record->kind);
  ++stats_.records_by_kind[kind < stats_.records_by_kind.size() ? kind : stats_.records_by_kind.size() - 1];
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const KernelRecord*>(record);
      if (!ValidSpan(k->start, k->end)) return;
      LearnContext(k->contextId, k->deviceId);
      const KernelInfo& info = Kernel(k->name);
      GpuActivityRecord& r = AddOnStream(*k, Time(k->start), EndTime(k->start, k->end), kGpuKernel, info.name, batch);
      r.kernel_class = static_cast<std::uint32_t>(info.kernel_class);
      r.precision = static_cast<std::uint32_t>(info.precision);
      r.grid[0] = NonNegative(k->gridX);
      r.grid[1] = NonNegative(k->gridY);
      r.grid[2] = NonNegative(k->gridZ);
      r.block[0] = NonNegative(k->blockX);
      r.block[1] = NonNegative(k->blockY);
      r.block[2] = NonNegative(k->blockZ);
      r.shared_memory_bytes = NonNegative(k->staticSharedMemory) + NonNegative(k->dynamicSharedMemory);
      r.registers_per_thread = k->registersPerThread;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      if (!ValidSpan(m->start, m->end)) return;
      LearnContext(m->contextId, m->deviceId);
      const std::uint32_t copy_kind = m->copyKind < memcpy_names_.size() ? m->copyKind : 0;
      GpuActivityRecord& r =
          AddOnStream(*m, Time(m->start), EndTime(m->start, m->end), kGpuMemcpy, memcpy_names_[copy_kind], batch);
      r.bytes = m->bytes;
      r.copy_kind = copy_kind;
      r.src_memory_kind = m->srcKind;
      r.dst_memory_kind = m->dstKind;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      if (!ValidSpan(m->start, m->end)) return;
      LearnContext(m->contextId, m->deviceId);
      GpuActivityRecord& r =
          AddOnStream(*m, Time(m->start), EndTime(m->start, m->end), kGpuMemcpy, memcpy_names_[kCopyPtoP], batch);
      r.bytes = m->bytes;
      r.copy_kind = kCopyPtoP;
      // The record sits on one of the two devices; the peer is the other.
      r.peer_device = m->srcDeviceId == m->deviceId ? m->dstDeviceId : m->srcDeviceId;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      if (!ValidSpan(m->start, m->end)) return;
      LearnContext(m->contextId, m->deviceId);
      GpuActivityRecord& r =
          AddOnStream(*m, Time(m->start), EndTime(m->start, m->end), kGpuMemset, memset_name_, batch);
      r.bytes = m->bytes;
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      if (!ValidSpan(s->start, s->end)) return;
      const auto type = static_cast<std::size_t>(s->type);
      GpuActivityRecord& r = batch->activities.emplace_back();
      r.start_ns = Time(s->start);
      r.end_ns = EndTime(s->start, s->end);
      r.name = sync_names_[type < sync_names_.size() ? type : 0];
      r.kind = kGpuSync;
      // The record names no device; its context does (from context records).
      const auto device = context_devices_.find(s->contextId);
      r.device = device != context_devices_.end() ? device->second : 0;
      r.context = s->contextId;
      // CUPTI_SYNCHRONIZATION_INVALID_VALUE (all ones) for context syncs.
      r.stream = s->streamId == 0xffffffffu ? 0 : s->streamId;
      r.correlation_id = s->correlationId;
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      if (!ValidSpan(a->start, a->end)) return;
      const bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      ApiCallRecord& r = batch->api_calls.emplace_back();
      r.start_ns = Time(a->start);
      r.end_ns = EndTime(a->start, a->end);
      r.name = ApiName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
      r.tid = a->threadId;
      r.correlation_id = a->correlationId;
      r.domain = runtime ? kRuntimeDomain : kDriverDomain;
      return;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      ExternalCorrelationRecord& r = batch->external_correlations.emplace_back();
      r.correlation_id = e->correlationId;
      r.external_kind = static_cast<std::uint32_t>(e->externalKind);
      r.external_id = e->externalId;
      const bool ours = e->externalKind == kSmprofExternalCorrelationKind && e->externalId <= UINT32_MAX;
      r.name = ours ? static_cast<NameId>(e->externalId) : 0;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      DecodeMarker(reinterpret_cast<const CUpti_ActivityMarker2*>(record), batch);
      return;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      if (!ValidSpan(o->start, o->end)) return;
      OverheadRecord& r = batch->overheads.emplace_back();
      r.start_ns = Time(o->start);
      r.end_ns = EndTime(o->start, o->end);
      auto [it, added] = overhead_names_.try_emplace(static_cast<std::uint32_t>(o->overheadKind));
      if (added) it->second = Intern(OverheadName(o->overheadKind));
      r.name = it->second;
      r.tid = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : 0;
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      GpuDeviceInfo& r = batch->devices.emplace_back();
      r.id = d->id;
      r.name = d->name != nullptr ? d->name : "";
      r.uuid = FormatUuid(d->uuid);
      r.sm_count = d->numMultiprocessors;
      r.global_memory_bytes = d->globalMemorySize;
      r.compute_capability_major = d->computeCapabilityMajor;
      r.compute_capability_minor = d->computeCapabilityMinor;
      r.global_memory_bandwidth_kbps = d->globalMemoryBandwidth;
      r.max_threads_per_block = d->maxThreadsPerBlock;
      return;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto* c = reinterpret_cast<const CUpti_ActivityContext3*>(record);
      LearnContext(c->contextId, c->deviceId);
      GpuContextInfo& r = batch->contexts.emplace_back();
      r.id = c->contextId;
      r.device = c->deviceId;
      return;
    }
    default:
      ++stats_.unknown_kind;
      return;
  }
}

void ActivityDecoder::DecodeMarker(const CUpti_ActivityMarker2* m, GpuBatch* batch) {
  const std::uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
  if (m->timestamp == 0 || !OnSessionClock(Time(m->timestamp), Time(m->timestamp))) {
    if (m->timestamp == 0) CountZeroStamp();
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) open_markers_.erase(m->id);
    return;
  }
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    MarkerRecord& r = batch->markers.emplace_back();
    r.start_ns = r.end_ns = Time(m->timestamp);
    r.name = Intern(m->name);
    r.domain = Intern(m->domain);
    r.tid = tid;
    return;
  }
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    if (open_markers_.size() >= options_.max_open_markers && open_markers_.count(m->id) == 0) {
      ++stats_.marker_overflow;
      return;
    }
    open_markers_[m->id] = OpenMarker{Time(m->timestamp), Intern(m->name), Intern(m->domain), tid};
    return;
  }
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    const auto open = open_markers_.find(m->id);
    if (open == open_markers_.end()) {
      ++stats_.marker_unmatched_end;
      return;
    }
    const OpenMarker start = open->second;
    open_markers_.erase(open);
    const std::int64_t end_ns = Time(m->timestamp);
    if (end_ns < start.start_ns) {
      ++stats_.invalid_timestamps;
      return;
    }
    batch->markers.push_back(MarkerRecord{start.start_ns, end_ns, start.name, start.domain, start.tid});
    return;
  }
  ++stats_.unknown_kind;  // a marker that is neither a range end nor a mark
}

}  // namespace smprof::internal

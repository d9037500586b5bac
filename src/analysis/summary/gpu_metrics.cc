#include "analysis/summary/gpu_metrics.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "analysis/job/stream_order.h"

namespace smprof::analysis {

namespace {

constexpr std::array<const char*, 5> kActivityNames = {"", "kernel", "memcpy", "memset", "sync"};
constexpr std::array<const char*, 6> kMemoryOpNames = {"HtoD", "DtoH", "DtoD", "PtoP", "memset", "other"};
constexpr std::array<const char*, 10> kPrecisionNames = {"unknown", "FP64", "FP32", "TF32", "FP16",
                                                         "BF16",    "FP8",  "INT8", "FP4",  "INT4"};

std::size_t MemoryOpIndex(const internal::GpuActivityRow& row) {
  if (row.kind == trace::GPU_KIND_MEMSET) return 4;
  switch (row.copy_kind) {
    case trace::COPY_KIND_HTOD:
      return 0;
    case trace::COPY_KIND_DTOH:
      return 1;
    case trace::COPY_KIND_DTOD:
      return 2;
    case trace::COPY_KIND_PTOP:
      return 3;
    default:
      return 5;
  }
}

template <typename Totals>
void SaveTotals(const Totals& t, PartialEncoder& out) {
  out.Uint(t.count);
  out.Int(t.time_ns);
  out.Uint(t.bytes);
}

template <typename Totals>
void MergeTotals(PartialDecoder& in, Totals* t) {
  t->count += in.Uint();
  t->time_ns += in.Int();
  t->bytes += in.Uint();
}

template <typename Totals, std::size_t N>
void SaveTotalsArray(const std::array<Totals, N>& all, PartialEncoder& out) {
  out.Uint(N);
  for (const Totals& t : all) SaveTotals(t, out);
}

template <typename Totals, std::size_t N>
void MergeTotalsArray(PartialDecoder& in, std::array<Totals, N>* all) {
  if (in.Uint() != N) throw std::invalid_argument("partial summary damaged: a GPU totals table of another length");
  for (Totals& t : *all) MergeTotals(in, &t);
}

// A map's entries sorted by key: the same state saves as the same bytes.
template <typename Map>
std::vector<const typename Map::value_type*> ByKey(const Map& map) {
  std::vector<const typename Map::value_type*> out;
  for (const auto& entry : map) out.push_back(&entry);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  return out;
}

double Share(std::int64_t part, std::int64_t total) {
  return total > 0 ? static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

// The runtime and driver calls that launch a CUDA graph (CUPTI's callback
// names: cudaGraphLaunch_v10000, cudaGraphLaunch_ptsz_v10000, cuGraphLaunch,
// cuGraphLaunch_ptsz).
// A range named for a backward pass: smppy's `Backward` (TorchAutoSteps), or
// the user's own (`Backward`, `backward_pass`, ...): launch_owner.h.
bool IsBackwardName(std::string_view name) {
  constexpr std::string_view kBackward = "backward";
  return std::search(name.begin(), name.end(), kBackward.begin(), kBackward.end(),
                     [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }) != name.end();
}

bool IsGraphLaunch(std::string_view call) {
  return call.rfind("cudaGraphLaunch", 0) == 0 || call.rfind("cuGraphLaunch", 0) == 0;
}

}  // namespace

GpuMetrics::GpuMetrics(const SummaryOptions& options, std::int64_t origin_ns)
    : options_(options),
      origin_ns_(origin_ns),
      api_calls_(options.max_pending, options.reorder_window_ns),
      kernels_waiting_for_api_(options.max_pending, options.reorder_window_ns),
      annotation_of_(options.max_pending, options.reorder_window_ns),
      unattributed_(options.max_pending, options.reorder_window_ns),
      launch_of_(options.max_pending, options.reorder_window_ns),
      graph_launches_(options.max_pending, options.reorder_window_ns),
      graph_work_waiting_(options.max_pending, options.reorder_window_ns) {}

void GpuMetrics::BeginStream(const ProcessStream& stream) {
  streams_.push_back(std::make_unique<Stream>());
  stream_ = streams_.back().get();
  stream_->host = stream.host;
  stream_->rank = stream.rank;
  stream_->pid = stream.pid;
  api_calls_.Clear();
  kernels_waiting_for_api_.Clear();
  annotation_of_.Clear();
  unattributed_.Clear();
  launch_of_.Clear();
  graph_launches_.Clear();
  graph_work_waiting_.Clear();
  ranges_.Clear();
  newest_ns_ = 0;
}

void GpuMetrics::AddHostCopy(const internal::GpuActivityRow& row) {
  std::uint32_t host_memory = 0;
  if (row.copy_kind == trace::COPY_KIND_HTOD) {
    host_memory = row.src_memory_kind;
  } else if (row.copy_kind == trace::COPY_KIND_DTOH) {
    host_memory = row.dst_memory_kind;
  } else {
    return;
  }
  const auto add = [&row](Totals& totals) {
    totals.count += 1;
    totals.time_ns += row.dur_ns;
    totals.bytes += row.bytes;
  };
  add(host_copies_.all);
  if (host_memory != trace::MEMORY_KIND_UNKNOWN) host_copies_.memory_kind_known += 1;
  if (host_memory == trace::MEMORY_KIND_PAGEABLE) add(host_copies_.pageable);
}

void GpuMetrics::AddLaunch(const TimeSpan& api_call, std::uint32_t tid, const KernelRun& run) {
  const TimeSpan& kernel = run.span;
  if (run.communication) {
    communication_launches_.push_back(
        {tid, api_call.start_ns, run.device, kernel.start_ns + run.wall_offset_ns, kernel.dur_ns});
  }
  if (kernel.start_ns < api_call.start_ns) {
    launches_.before_launch += 1;
  } else {
    launch_latency_.Add(kernel.start_ns - api_call.start_ns);
  }
  launches_.kernels += 1;
  launches_.kernel_time_ns += kernel.dur_ns;
  if (kernel.dur_ns < api_call.dur_ns) {
    launches_.tiny_kernels += 1;
    launches_.tiny_kernel_time_ns += kernel.dur_ns;
    launches_.tiny_launch_time_ns += api_call.dur_ns;
  }
}

void GpuMetrics::AddAnnotationTime(AnnotationGpu* annotation, std::int64_t time_ns, std::uint64_t activities) {
  annotation->gpu_time_ns += time_ns;
  annotation->activities += activities;
}

bool GpuMetrics::AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span,
                          std::string* error) {
  for (const auto& device : frame.tables().devices()) stream_->device_info[device.id()] = device;
  for (const auto& thread : frame.threads) stream_->thread_names[thread.tid] = std::string(thread.name);
  // Partners first: the API calls and annotation names this frame's GPU rows may join.
  if (!AddApiCalls(file, frame, span, error)) return false;
  const bool ok = AddFrameWork(file, frame, span, error);
  EndFrameCalls();
  return ok;
}

bool GpuMetrics::AddApiCalls(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span,
                             std::string* error) {
  frame_calls_.clear();
  if (frame.has_api_calls && !frame.api_calls_status.ok()) {
    *error = frame.api_calls_status.message();
    return false;
  }
  std::int64_t newest_call_ns = 0;
  for (const auto& call : frame.api_calls) {
    span->Extend(call.start_ns + file.wall_offset_ns, call.start_ns + call.dur_ns + file.wall_offset_ns);
    newest_ns_ = std::max(newest_ns_, call.start_ns);
    newest_call_ns = std::max(newest_call_ns, call.start_ns);
    if (call.correlation_id == 0) continue;
    unattributed_.SetLaunch(call.correlation_id, {call.start_ns, call.tid});
    FrameCall& added = frame_calls_.emplace_back();
    added.correlation_id = call.correlation_id;
    added.tid = call.tid;
    added.call = TimeSpan{call.start_ns, call.dur_ns};
    added.graph_launch = IsGraphLaunch(call.name);
    KernelRun kernel;
    if (kernels_waiting_for_api_.Take(call.correlation_id, &kernel)) {
      AddLaunch(added.call, call.tid, kernel);
      added.kernel_joined = true;
    }
  }
  frame_call_index_.Build(frame_calls_.size(), [this](std::size_t i) { return frame_calls_[i].correlation_id; });
  ReleaseGraphWork();
  // The joins' clock moves with the frame's calls before its GPU rows look for older calls.
  api_calls_.AdvanceTo(newest_call_ns);
  launch_of_.AdvanceTo(newest_call_ns);
  return true;
}

GpuMetrics::FrameCall* GpuMetrics::FrameCallOf(std::uint32_t id) {
  const std::int32_t position = frame_call_index_.Find(id);
  return position == FrameIdIndex::kAbsent ? nullptr : &frame_calls_[static_cast<std::size_t>(position)];
}

void GpuMetrics::ReleaseGraphWork() {
  if (graph_work_waiting_.size() == 0) return;
  for (const FrameCall& call : frame_calls_) {
    GraphWork waiting;
    if (!graph_work_waiting_.Take(call.correlation_id, &waiting) || !call.graph_launch) continue;
    graph_.linked += waiting.work.activities;
    graph_.linked_time_ns += waiting.work.time_ns;
    Attribute(call.correlation_id, waiting.start_ns, waiting.work);
  }
}

void GpuMetrics::EndFrameCalls() {
  for (const FrameCall& call : frame_calls_) {
    if (call.graph_launch) graph_launches_.Put(call.correlation_id, call.call.start_ns, true);
    if (!call.launch_taken) launch_of_.Put(call.correlation_id, call.call.start_ns, {call.call.start_ns, call.tid});
    if (!call.kernel_joined) api_calls_.Put(call.correlation_id, call.call.start_ns, {call.call, call.tid});
  }
  frame_calls_.clear();
  frame_call_index_.Clear();
}

bool GpuMetrics::AddFrameWork(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span,
                              std::string* error) {
  if (!frame.external_correlations_status.ok()) {
    *error = frame.external_correlations_status.message();
    return false;
  }
  for (const auto& external : frame.external_correlations) {
    if (external.name.empty()) continue;  // not smprof's kind
    AnnotationGpu* annotation = &annotations_[std::string(external.name)];
    UnattributedWork::Work waiting;
    if (unattributed_.Claim(external.correlation_id, &waiting)) {
      AddAnnotationTime(annotation, waiting.time_ns, waiting.activities);
    } else {
      annotation_of_.Put(external.correlation_id, newest_ns_, annotation);
    }
  }
  AddRanges(frame);
  if (!frame.has_gpu) return true;
  if (!frame.gpu_status.ok()) {
    *error = frame.gpu_status.message();
    return false;
  }
  // One kernel-name lookup per name and frame, not per row.
  frame_kernels_.assign(frame.strings.size(), nullptr);
  for (const auto& row : frame.gpu) {
    span->Extend(row.start_ns + file.wall_offset_ns, row.start_ns + row.dur_ns + file.wall_offset_ns);
    AddActivity(row, file.wall_offset_ns);
  }
  InferAttribution(options_.max_pending);
  return true;
}

void GpuMetrics::AddRanges(const internal::FrameRows& frame) {
  if (!frame.annotations_status.ok()) return;  // AnnotationMetrics reports it
  frame_range_names_.assign(frame.strings.size(), nullptr);
  for (const auto& row : frame.annotations) {
    RangeName*& name = frame_range_names_[row.name_index];
    if (name == nullptr) {
      name = &*range_names_.try_emplace(std::string(row.name), RangeInfo{nullptr, IsBackwardName(row.name)}).first;
    }
    ranges_.Add(row.start_ns, row.start_ns + row.dur_ns, row.depth, row.tid, name->second.backward, name);
  }
  if (ranges_.size() <= options_.max_pending) return;
  // Bounded: the work waiting for inference is resolved with the ranges
  // known now before the oldest ranges are forgotten.
  InferAttribution(0);
  while (ranges_.size() > options_.max_pending) ranges_.PopFront();
}

UnattributedWork::Launch GpuMetrics::LaunchOf(std::uint32_t id) {
  if (FrameCall* call = FrameCallOf(id)) {
    if (call->launch_taken) return {};
    call->launch_taken = true;
    return {call->call.start_ns, call->tid};
  }
  UnattributedWork::Launch launch;
  launch_of_.Take(id, &launch);
  return launch;
}

void GpuMetrics::InferAttribution(std::size_t keep) {
  if (unattributed_.unclaimed_records() <= keep) return;
  ranges_.Prepare();
  while (unattributed_.unclaimed_records() > keep) {
    std::uint32_t id = 0;
    UnattributedWork::Unclaimed unclaimed;
    if (!unattributed_.TakeOldestUnclaimed(&id, &unclaimed)) continue;  // claimed through its external correlation
    if (unclaimed.launch.start_ns < 0) continue;
    const UnattributedWork::Work& work = unclaimed.work;
    const auto owner = ranges_.At(unclaimed.launch.start_ns);
    if (owner.range == nullptr) continue;
    auto& [name, info] = **owner.range;
    if (info.annotation == nullptr) info.annotation = &annotations_[name];
    AnnotationGpu* annotation = info.annotation;
    AddAnnotationTime(annotation, work.time_ns, work.activities);
    annotation->inferred_time_ns += work.time_ns;
    annotation->inferred_activities += work.activities;
    InferredByThread& by_thread = stream_->inferred_by_thread[unclaimed.launch.tid];
    by_thread.inferred.count += work.activities;
    by_thread.inferred.time_ns += work.time_ns;
    if (owner.ambiguous) {
      by_thread.ambiguous.count += work.activities;
      by_thread.ambiguous.time_ns += work.time_ns;
    }
    // The same work must not also join later through a late external correlation.
    unattributed_.EndWaiting(id);
  }
}

void GpuMetrics::AddActivity(const internal::GpuActivityRow& row, std::int64_t wall_offset_ns) {
  ++rows_seen_;
  newest_ns_ = std::max(newest_ns_, row.start_ns);
  const std::size_t kind = row.kind < activity_.size() ? row.kind : 0;
  activity_[kind].count += 1;
  activity_[kind].time_ns += row.dur_ns;
  if (kind == trace::GPU_KIND_SYNC || kind == 0) return;  // host waits: not GPU work

  Device& device = stream_->devices[row.device];
  if (!device.union_ns) {
    device.busy = std::make_unique<BucketSeries>(origin_ns_, options_.max_buckets);
    device.union_ns =
        std::make_unique<IntervalUnion>(options_.reorder_window_ns, options_.max_pending, device.busy.get());
  }
  device.union_ns->Add(row.start_ns + wall_offset_ns, row.start_ns + row.dur_ns + wall_offset_ns);

  const bool joins = row.graph_id != 0 ? GraphLinked(row) : row.correlation_id != 0;
  if (kind == trace::GPU_KIND_KERNEL) {
    Totals*& kernel = frame_kernels_[row.name_index];
    if (kernel == nullptr) kernel = &kernels_[std::string(row.name)];
    kernel->count += 1;
    kernel->time_ns += row.dur_ns;
    Totals& precision = precision_[row.precision < precision_.size() ? row.precision : 0];
    precision.count += 1;
    precision.time_ns += row.dur_ns;
    if (joins) JoinLaunch(row, wall_offset_ns);
  } else {
    Totals& op = memory_ops_[MemoryOpIndex(row)];
    op.count += 1;
    op.time_ns += row.dur_ns;
    op.bytes += row.bytes;
    if (kind == trace::GPU_KIND_MEMCPY) AddHostCopy(row);
  }
  if (joins) Attribute(row.correlation_id, row.start_ns, UnattributedWork::Work{row.dur_ns, 1});
}

void GpuMetrics::JoinLaunch(const internal::GpuActivityRow& row, std::int64_t wall_offset_ns) {
  const KernelRun kernel{{row.start_ns, row.dur_ns}, wall_offset_ns, row.device, IsCommunicationKernel(row)};
  FrameCall* call = FrameCallOf(row.correlation_id);
  CallSpan api_call;
  if (call != nullptr && !call->kernel_joined) {
    AddLaunch(call->call, call->tid, kernel);
    call->kernel_joined = true;
  } else if (call == nullptr && api_calls_.Take(row.correlation_id, &api_call)) {
    AddLaunch(api_call.span, api_call.tid, kernel);
  } else {
    kernels_waiting_for_api_.Put(row.correlation_id, row.start_ns, kernel);
  }
}

bool GpuMetrics::GraphLinked(const internal::GpuActivityRow& row) {
  graph_.activities += 1;
  graph_.time_ns += row.dur_ns;
  if (row.correlation_id == 0) return false;
  const FrameCall* call = FrameCallOf(row.correlation_id);
  if (call != nullptr ? call->graph_launch : graph_launches_.Contains(row.correlation_id)) {
    graph_.linked += 1;
    graph_.linked_time_ns += row.dur_ns;
    return true;
  }
  // Another call's id: never joined. An id not seen yet waits for its call
  // (the rows of one launch share it: one entry, the first row's start).
  if (call != nullptr) return false;
  GraphWork waiting{row.start_ns, {}};
  graph_work_waiting_.Take(row.correlation_id, &waiting);
  waiting.work.time_ns += row.dur_ns;
  waiting.work.activities += 1;
  graph_work_waiting_.Put(row.correlation_id, waiting.start_ns, waiting);
  return false;
}

void GpuMetrics::Attribute(std::uint32_t id, std::int64_t start_ns, const UnattributedWork::Work& work) {
  AnnotationGpu* annotation = nullptr;
  if (annotation_of_.Take(id, &annotation)) {
    AddAnnotationTime(annotation, work.time_ns, work.activities);
    // Several activities may share one launch's id (e.g. a copy split in parts, a graph's kernels).
    annotation_of_.Put(id, start_ns, annotation);
    return;
  }
  unattributed_.Add(id, start_ns, work, [this](std::uint32_t launch) { return LaunchOf(launch); });
}

void GpuMetrics::EndStream(const WallSpan& stream_span) {
  InferAttribution(0);
  for (auto& [tid, by_thread] : stream_->inferred_by_thread) {
    const auto name = stream_->thread_names.find(tid);
    if (name != stream_->thread_names.end()) by_thread.thread = name->second;
  }
  for (auto& [id, device] : stream_->devices) {
    device.union_ns->Flush();
    device.span_ns = stream_span.length();
  }
  evicted_correlations_ +=
      api_calls_.evicted() + kernels_waiting_for_api_.evicted() + annotation_of_.evicted() + unattributed_.evicted();
}

void GpuMetrics::Save(PartialEncoder& out) const {
  out.Uint(rows_seen_);
  out.Uint(evicted_correlations_);
  SaveTotalsArray(activity_, out);
  SaveTotalsArray(memory_ops_, out);
  SaveTotalsArray(precision_, out);
  out.Uint(kernels_.size());
  for (const auto* kernel : ByKey(kernels_)) {
    out.String(kernel->first);
    SaveTotals(kernel->second, out);
  }
  out.Uint(annotations_.size());
  for (const auto* annotation : ByKey(annotations_)) {
    const AnnotationGpu& a = annotation->second;
    out.String(annotation->first);
    out.Int(a.gpu_time_ns);
    out.Uint(a.activities);
    out.Int(a.inferred_time_ns);
    out.Uint(a.inferred_activities);
  }
  launch_latency_.Save(out);
  out.Uint(launches_.kernels);
  out.Int(launches_.kernel_time_ns);
  out.Uint(launches_.tiny_kernels);
  out.Int(launches_.tiny_kernel_time_ns);
  out.Int(launches_.tiny_launch_time_ns);
  out.Uint(launches_.before_launch);
  out.Uint(graph_.activities);
  out.Int(graph_.time_ns);
  out.Uint(graph_.linked);
  out.Int(graph_.linked_time_ns);
  SaveTotals(host_copies_.all, out);
  out.Uint(host_copies_.memory_kind_known);
  SaveTotals(host_copies_.pageable, out);
  out.Uint(streams_.size());
  for (const auto& s : streams_) {
    out.String(s->host);
    out.Int(s->rank);
    out.Int(s->pid);
    out.Uint(s->devices.size());
    for (const auto& [id, device] : s->devices) {
      out.Uint(id);
      out.Int(device.span_ns);
      device.union_ns->Save(out);
      device.busy->Save(out);
    }
    out.Uint(s->device_info.size());
    for (const auto& [id, info] : s->device_info) {
      out.Uint(id);
      out.Message(info);
    }
    out.Uint(s->inferred_by_thread.size());
    for (const auto& [tid, by_thread] : s->inferred_by_thread) {
      out.Uint(tid);
      out.String(by_thread.thread);
      SaveTotals(by_thread.inferred, out);
      SaveTotals(by_thread.ambiguous, out);
    }
  }
}

void GpuMetrics::MergeFrom(PartialDecoder& in) {
  rows_seen_ += in.Uint();
  evicted_correlations_ += in.Uint();
  MergeTotalsArray(in, &activity_);
  MergeTotalsArray(in, &memory_ops_);
  MergeTotalsArray(in, &precision_);
  for (std::size_t n = in.Count(); n > 0; --n) MergeTotals(in, &kernels_[in.String()]);
  for (std::size_t n = in.Count(); n > 0; --n) {
    AnnotationGpu& a = annotations_[in.String()];
    a.gpu_time_ns += in.Int();
    a.activities += in.Uint();
    a.inferred_time_ns += in.Int();
    a.inferred_activities += in.Uint();
  }
  launch_latency_.MergeFrom(in);
  launches_.kernels += in.Uint();
  launches_.kernel_time_ns += in.Int();
  launches_.tiny_kernels += in.Uint();
  launches_.tiny_kernel_time_ns += in.Int();
  launches_.tiny_launch_time_ns += in.Int();
  launches_.before_launch += in.Uint();
  graph_.activities += in.Uint();
  graph_.time_ns += in.Int();
  graph_.linked += in.Uint();
  graph_.linked_time_ns += in.Int();
  MergeTotals(in, &host_copies_.all);
  host_copies_.memory_kind_known += in.Uint();
  MergeTotals(in, &host_copies_.pageable);
  for (std::size_t n = in.Count(); n > 0; --n) {
    auto s = std::make_unique<Stream>();
    s->host = in.String();
    s->rank = static_cast<std::int32_t>(in.Int());
    s->pid = in.Int();
    for (std::size_t devices = in.Count(); devices > 0; --devices) {
      Device& device = s->devices[static_cast<std::uint32_t>(in.Uint())];
      device.span_ns = in.Int();
      device.busy = std::make_unique<BucketSeries>(origin_ns_, options_.max_buckets);
      device.union_ns =
          std::make_unique<IntervalUnion>(options_.reorder_window_ns, options_.max_pending, device.busy.get());
      device.union_ns->Restore(in);
      device.busy->Restore(in);
    }
    for (std::size_t infos = in.Count(); infos > 0; --infos) {
      const auto id = static_cast<std::uint32_t>(in.Uint());
      in.Message(&s->device_info[id]);
    }
    for (std::size_t threads = in.Count(); threads > 0; --threads) {
      InferredByThread& by_thread = s->inferred_by_thread[static_cast<std::uint32_t>(in.Uint())];
      by_thread.thread = in.String();
      MergeTotals(in, &by_thread.inferred);
      MergeTotals(in, &by_thread.ambiguous);
    }
    streams_.push_back(std::move(s));
  }
  stream_ = nullptr;
}

void GpuMetrics::ReorderStreams(const std::vector<std::size_t>& order) { Reorder(streams_, order); }

std::int64_t GpuMetrics::stream_active_ns() const {
  std::int64_t total = 0;
  for (const auto& [id, device] : stream_->devices) total += device.union_ns->union_ns();
  return total;
}

std::uint64_t GpuMetrics::late_records() const {
  std::uint64_t late = 0;
  for (const auto& s : streams_) {
    for (const auto& [id, device] : s->devices) late += device.union_ns->late_records();
  }
  return late;
}

std::int64_t GpuMetrics::min_bucket_width() const {
  std::int64_t width = kMinBucketNs;
  for (const auto& s : streams_) {
    for (const auto& [id, device] : s->devices) width = std::max(width, device.busy->width_ns());
  }
  return width;
}

void GpuMetrics::WriteGpuFields(const std::string& reason, JsonWriter& out) const {
  std::int64_t active = 0;
  std::int64_t capacity = 0;
  for (const auto& s : streams_) {
    for (const auto& [id, device] : s->devices) {
      active += device.union_ns->union_ns();
      capacity += device.span_ns;
    }
  }
  out.Field("reason", reason);
  out.Field("active_ns", active);
  out.Field("active_percent", 100.0 * Share(active, capacity));
  out.Key("devices").BeginArray();
  for (const auto& s : streams_) {
    for (const auto& [id, device] : s->devices) {
      out.BeginObject()
          .Field("host", s->host)
          .Field("rank", s->rank)
          .Field("pid", s->pid)
          .Field("device", id)
          .Field("active_ns", device.union_ns->union_ns())
          .Field("span_ns", device.span_ns)
          .Field("active_percent", 100.0 * Share(device.union_ns->union_ns(), device.span_ns))
          .EndObject();
    }
  }
  out.EndArray();

  std::int64_t activity_total = 0;
  for (const Totals& t : activity_) activity_total += t.time_ns;
  out.Key("activity").BeginArray();
  for (std::size_t kind = 1; kind < activity_.size(); ++kind) {
    out.BeginObject()
        .Field("kind", kActivityNames[kind])
        .Field("count", activity_[kind].count)
        .Field("time_ns", activity_[kind].time_ns)
        .Field("share", Share(activity_[kind].time_ns, activity_total))
        .EndObject();
  }
  out.EndArray();

  std::int64_t memory_total = 0;
  for (const Totals& t : memory_ops_) memory_total += t.time_ns;
  out.Key("memory_ops").BeginArray();
  for (std::size_t i = 0; i < memory_ops_.size(); ++i) {
    out.BeginObject()
        .Field("kind", kMemoryOpNames[i])
        .Field("count", memory_ops_[i].count)
        .Field("time_ns", memory_ops_[i].time_ns)
        .Field("bytes", memory_ops_[i].bytes)
        .Field("share", Share(memory_ops_[i].time_ns, memory_total))
        .EndObject();
  }
  out.EndArray();

  out.Key("pageable_copies")
      .BeginObject()
      .Field("count", host_copies_.pageable.count)
      .Field("time_ns", host_copies_.pageable.time_ns)
      .Field("bytes", host_copies_.pageable.bytes)
      .Field("host_copies", host_copies_.all.count)
      .Field("host_copy_time_ns", host_copies_.all.time_ns)
      .Field("memory_kind_known", host_copies_.memory_kind_known)
      .Field("time_share", Share(host_copies_.pageable.time_ns, host_copies_.all.time_ns))
      .EndObject();

  out.Key("precision").BeginArray();
  // Named precisions in the enum's order, unknown last.
  for (std::size_t n = 1; n <= precision_.size(); ++n) {
    const std::size_t i = n % precision_.size();
    out.BeginObject()
        .Field("precision", kPrecisionNames[i])
        .Field("count", precision_[i].count)
        .Field("time_ns", precision_[i].time_ns)
        .Field("share", Share(precision_[i].time_ns, activity_[trace::GPU_KIND_KERNEL].time_ns))
        .EndObject();
  }
  out.EndArray();

  out.Key("kernels").BeginObject();
  out.Field("count", activity_[trace::GPU_KIND_KERNEL].count);
  out.Field("time_ns", activity_[trace::GPU_KIND_KERNEL].time_ns);
  out.Field("distinct", static_cast<std::uint64_t>(kernels_.size()));
  std::vector<std::pair<const std::string*, const Totals*>> sorted;
  for (const auto& [name, totals] : kernels_) sorted.emplace_back(&name, &totals);
  const auto write_top = [&](const char* key, auto better) {
    std::sort(sorted.begin(), sorted.end(), better);
    out.Key(key).BeginArray();
    Totals other;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      const Totals& t = *sorted[i].second;
      if (i < static_cast<std::size_t>(options_.top_k)) {
        out.BeginObject()
            .Field("name", *sorted[i].first)
            .Field("time_ns", t.time_ns)
            .Field("launches", t.count)
            .Field("other", false)
            .EndObject();
      } else {
        other.time_ns += t.time_ns;
        other.count += t.count;
      }
    }
    if (sorted.size() > static_cast<std::size_t>(options_.top_k)) {
      out.BeginObject()
          .Field("name", "other")
          .Field("time_ns", other.time_ns)
          .Field("launches", other.count)
          .Field("other", true)
          .EndObject();
    }
    out.EndArray();
  };
  write_top("by_time", [](const auto& a, const auto& b) {
    if (a.second->time_ns != b.second->time_ns) return a.second->time_ns > b.second->time_ns;
    return *a.first < *b.first;
  });
  write_top("by_launches", [](const auto& a, const auto& b) {
    if (a.second->count != b.second->count) return a.second->count > b.second->count;
    return *a.first < *b.first;
  });
  out.EndObject();

  out.Key("launch_latency");
  WriteStats(launch_latency_, out);
  out.Key("kernel_launch")
      .BeginObject()
      .Field("kernels_joined", launches_.kernels)
      .Field("kernel_time_ns", launches_.kernel_time_ns)
      .Field("tiny_kernels", launches_.tiny_kernels)
      .Field("tiny_kernel_time_ns", launches_.tiny_kernel_time_ns)
      .Field("tiny_launch_time_ns", launches_.tiny_launch_time_ns)
      .Field("tiny_count_share",
             Share(static_cast<std::int64_t>(launches_.tiny_kernels), static_cast<std::int64_t>(launches_.kernels)))
      .Field("tiny_time_share", Share(launches_.tiny_kernel_time_ns, activity_[trace::GPU_KIND_KERNEL].time_ns))
      .Field("kernels_before_launch", launches_.before_launch)
      .EndObject();
  out.Key("graph")
      .BeginObject()
      .Field("activities", graph_.activities)
      .Field("time_ns", graph_.time_ns)
      .Field("linked", graph_.linked)
      .Field("linked_time_ns", graph_.linked_time_ns)
      .Field("unlinked", graph_.activities - graph_.linked)
      .Field("unlinked_time_ns", graph_.time_ns - graph_.linked_time_ns)
      .EndObject();

  std::vector<std::pair<const std::string*, const AnnotationGpu*>> per_annotation;
  for (const auto& [name, gpu] : annotations_) per_annotation.emplace_back(&name, &gpu);
  std::sort(per_annotation.begin(), per_annotation.end(), [](const auto& a, const auto& b) {
    if (a.second->gpu_time_ns != b.second->gpu_time_ns) return a.second->gpu_time_ns > b.second->gpu_time_ns;
    return *a.first < *b.first;
  });
  out.Key("per_annotation").BeginArray();
  std::int64_t attributed_ns = 0;
  std::int64_t inferred_ns = 0;
  for (const auto& [name, gpu] : per_annotation) {
    attributed_ns += gpu->gpu_time_ns;
    inferred_ns += gpu->inferred_time_ns;
    out.BeginObject()
        .Field("name", *name)
        .Field("gpu_time_ns", gpu->gpu_time_ns)
        .Field("activities", gpu->activities)
        .Field("inferred_gpu_time_ns", gpu->inferred_time_ns)
        .Field("inferred_activities", gpu->inferred_activities)
        .EndObject();
  }
  out.EndArray();
  // Each activity joins at most one (the innermost) annotation, so the sum
  // does not count any twice; the rest was launched while no annotation was
  // open anywhere in the process, or could not be joined.
  const std::int64_t work_ns = activity_[trace::GPU_KIND_KERNEL].time_ns + activity_[trace::GPU_KIND_MEMCPY].time_ns +
                               activity_[trace::GPU_KIND_MEMSET].time_ns;
  const std::int64_t unattributed_ns = std::max<std::int64_t>(0, work_ns - attributed_ns);
  out.Key("attribution")
      .BeginObject()
      .Field("attributed_time_ns", attributed_ns)
      .Field("inferred_time_ns", inferred_ns)
      .Field("unattributed_time_ns", unattributed_ns)
      .Field("unattributed_share", Share(unattributed_ns, work_ns))
      .Key("inferred_by_thread")
      .BeginArray();
  for (const auto& s : streams_) {
    for (const auto& [tid, by_thread] : s->inferred_by_thread) {
      out.BeginObject()
          .Field("host", s->host)
          .Field("rank", s->rank)
          .Field("pid", s->pid)
          .Field("tid", tid)
          .Field("thread", by_thread.thread)
          .Field("inferred_time_ns", by_thread.inferred.time_ns)
          .Field("inferred_activities", by_thread.inferred.count)
          .Field("ambiguous_time_ns", by_thread.ambiguous.time_ns)
          .Field("ambiguous_activities", by_thread.ambiguous.count)
          .EndObject();
    }
  }
  out.EndArray().EndObject();
}

std::vector<std::string> GpuMetrics::Warnings() const {
  std::vector<std::string> warnings;
  if (launches_.before_launch > 0) {
    warnings.push_back(std::to_string(launches_.before_launch) +
                       " kernels start before their launch call on the host: their GPU timestamps are off "
                       "(gpu_timebase in `smprof info` says how they were converted); left out of the launch latency");
  }
  const std::uint64_t unlinked = graph_.activities - graph_.linked;
  if (unlinked > 0) {
    warnings.push_back(std::to_string(unlinked) + " CUDA-graph activities (" +
                       std::to_string((graph_.time_ns - graph_.linked_time_ns) / 1'000'000) +
                       " ms) joined no graph launch (cudaGraphLaunch, cuGraphLaunch) by correlation id and are "
                       "attributed to no annotation; CUPTI before CUDA 13.1 Update 1 gives graph launches wrong ids in "
                       "every session of a process after the first (schedules with repeat)");
  }
  return warnings;
}

void GpuMetrics::WriteDevices(JsonWriter& out) const {
  out.BeginArray();
  for (const auto& s : streams_) {
    for (const auto& [id, d] : s->device_info) {
      out.BeginObject()
          .Field("host", s->host)
          .Field("rank", s->rank)
          .Field("id", id)
          .Field("name", d.name())
          .Field("uuid", d.uuid())
          .Field("sm_count", d.sm_count())
          .Field("global_memory_bytes", static_cast<std::uint64_t>(d.global_memory_bytes()))
          .Field("compute_capability",
                 std::to_string(d.compute_capability_major()) + "." + std::to_string(d.compute_capability_minor()))
          .EndObject();
    }
  }
  out.EndArray();
}

void GpuMetrics::WriteTimeline(std::int64_t width_ns, int buckets, JsonWriter& out) const {
  std::map<std::string, std::pair<int, std::vector<double>>> per_node;  // host -> (GPUs, busy ns)
  out.Key("gpu_per_device").BeginArray();
  for (const auto& s : streams_) {
    for (const auto& [id, device] : s->devices) {
      const auto busy = device.busy->Rebin(width_ns, buckets);
      auto& node = per_node[s->host];
      node.first += 1;
      node.second.resize(buckets, 0.0);
      out.BeginObject()
          .Field("host", s->host)
          .Field("rank", s->rank)
          .Field("pid", s->pid)
          .Field("device", id)
          .Key("busy_fraction")
          .BeginArray();
      for (int i = 0; i < buckets; ++i) {
        node.second[i] += busy[i];
        out.Double(busy[i] / static_cast<double>(width_ns));
      }
      out.EndArray().EndObject();
    }
  }
  out.EndArray();
  out.Key("gpu_per_node").BeginArray();
  for (const auto& [host, node] : per_node) {
    out.BeginObject().Field("host", host).Field("gpus", node.first).Key("busy_fraction").BeginArray();
    for (const double busy : node.second) out.Double(busy / (static_cast<double>(width_ns) * node.first));
    out.EndArray().EndObject();
  }
  out.EndArray();
}

}  // namespace smprof::analysis

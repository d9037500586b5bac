#include "analysis/timeline/timeline_walker.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/base/interval_union.h"
#include "analysis/base/time_buckets.h"
#include "analysis/job/job_reader.h"
#include "analysis/timeline/collective_chains.h"
#include "analysis/timeline/machine_counter_log.h"
#include "trace/frame_codec.h"
#include "trace/trace_reader.h"

namespace smprof::analysis {

namespace {

using internal::TraceReader;

// Synthetic track ids start above every Linux tid (pid_max is at most 2^22)
// and stay below 2^32: Perfetto's JSON importer reads tids as uint32.
constexpr std::uint64_t kSyntheticTidBase = std::uint64_t{1} << 30;

// Within a process: CPU threads, then their CUDA API and NVTX tracks, then
// the GPU streams by device.
constexpr std::int32_t kCudaApiSortBase = 10'000;
constexpr std::int32_t kNvtxSortBase = 20'000;
constexpr std::int32_t kOverheadSortBase = 30'000;
constexpr std::int32_t kGpuStreamSortBase = 100'000;
constexpr std::int32_t kProcessesPerHost = 100'000;

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool DigitAt(std::string_view s, std::size_t i) {
  return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
}

// Machine-wide counters (every rank of a host records the same ones): the
// CPU shares, machine memory and per-CPU perf counts.
bool IsMachineCounter(std::string_view name) {
  return (StartsWith(name, "cpu") && (DigitAt(name, 3) || StartsWith(name, "cpu."))) || StartsWith(name, "machine.") ||
         (StartsWith(name, "perf.cpu") && DigitAt(name, 8));
}

// Perf counts are cumulative since start (docs/TRACE_FORMAT.md); the
// timeline shows the count per sampling interval.
bool IsCumulative(std::string_view name) { return StartsWith(name, "perf."); }

bool IsBusyKind(std::uint32_t kind) {
  return kind == trace::GPU_KIND_KERNEL || kind == trace::GPU_KIND_MEMCPY || kind == trace::GPU_KIND_MEMSET;
}

// One rank process of the timeline, walked frame by frame.
class GroupWalker {
 public:
  GroupWalker(const TimelinePlan& plan, const TimelineGroup& group, const TimelineOptions& options, TimelineSink* sink,
              MachineCounterLog* machine, TimelineStats* stats)
      : plan_(plan), group_(group), options_(options), sink_(sink), machine_(machine), stats_(stats) {}

  void Run();

 private:
  struct FlowEnd {
    const TimelineTrack* track;
    std::int64_t wall_ns;
  };
  struct CounterState {
    const TimelineTrack* track = nullptr;  // nullptr: a machine counter, logged as `machine_series`
    std::uint32_t machine_series = 0;
    double last = 0;
    bool has_last = false;
  };
  // A GPU's busy time (kernels, copies, sets) per bucket: the union of its
  // intervals, as the summary computes it (analysis/interval_union.h).
  struct DeviceBusy {
    std::unique_ptr<BucketSeries> buckets;
    std::unique_ptr<IntervalUnion> merged;  // adds to `buckets`
    std::int64_t end_ns = 0;
  };

  bool InWindow(std::int64_t start, std::int64_t dur) const {
    return start <= options_.window_end_wall_ns && start + dur >= options_.window_start_wall_ns;
  }

  // Track uuids are unique in the export: the process id above, a count of its tracks below.
  const TimelineTrack* NewTrack(std::uint64_t tid, TrackKind kind, std::string name, std::int32_t sort_index,
                                std::string unit = {}) {
    TimelineTrack& t = tracks_.emplace_back();
    t.uuid = (std::uint64_t{process()} << 32) | tracks_.size();
    t.process = process();
    t.tid = tid;
    t.kind = kind;
    t.name = std::move(name);
    t.sort_index = sort_index;
    t.unit = std::move(unit);
    sink_->OnTrack(t);
    return &t;
  }

  std::uint32_t process() const { return group_.process.id; }
  void WalkFile(const TraceFileEntry& file);
  void WalkFrame(const trace::Frame& frame, std::int64_t offset, const std::string& path);
  const TimelineTrack* ThreadTrack(std::uint32_t tid);
  const TimelineTrack* PerThreadTrack(std::uint32_t tid, TrackKind kind);
  const TimelineTrack* StreamTrack(std::uint32_t device, std::uint32_t stream);
  void Counter(const internal::CounterRow& row, std::int64_t wall_ns);
  void FlowEndSeen(bool is_launch, std::uint32_t correlation_id, FlowEnd end);
  void AddBusy(std::uint32_t device, std::int64_t start, std::int64_t dur);
  void EmitUtilization();
  void Warn(const std::string& path, const Status& status) {
    stats_->warnings.push_back(path + ": " + status.message());
  }

  const TimelinePlan& plan_;
  const TimelineGroup& group_;
  const TimelineOptions& options_;
  TimelineSink* sink_;
  MachineCounterLog* machine_;
  TimelineStats* stats_;
  std::deque<TimelineTrack> tracks_;  // stable addresses; one entry per track of the process
  std::uint64_t next_synthetic_tid_ = kSyntheticTidBase;
  std::int32_t threads_seen_ = 0;
  std::unordered_map<std::uint64_t, const TimelineTrack*> threads_, api_tracks_, nvtx_tracks_, streams_;
  std::map<std::uint32_t, std::int32_t> streams_per_device_;
  const TimelineTrack* overhead_ = nullptr;
  std::unordered_map<std::string, CounterState> counters_by_name_;
  std::unordered_map<std::uint32_t, FlowEnd> pending_launches_, pending_work_;
  std::deque<std::pair<bool, std::uint32_t>> pending_order_;     // (is launch, correlation id)
  std::map<std::uint32_t, DeviceBusy> busy_;                     // by device
  std::unordered_map<std::uint32_t, std::string> thread_names_;  // of the frame being walked
  std::vector<internal::AnnotationRow> annotations_;
  std::vector<internal::CounterRow> counters_;
  std::vector<internal::GpuActivityRow> gpu_;
  std::vector<internal::ApiCallRow> api_;
  std::vector<internal::CollectiveRow> collectives_;
  std::string collective_name_;
  std::vector<internal::MarkerRow> markers_;
  std::vector<internal::OverheadRow> overheads_;
};

void GroupWalker::Run() {
  sink_->OnProcess(group_.process);
  for (const ProcessStream* stream : group_.streams) {
    for (const TraceFileEntry& file : stream->files) WalkFile(file);
  }
  EmitUtilization();
}

void GroupWalker::WalkFile(const TraceFileEntry& file) {
  std::unique_ptr<TraceReader> reader;
  Status status = TraceReader::Open(file.path, &reader);
  if (!status.ok()) return Warn(file.path, status);
  ++stats_->files;
  const std::int64_t offset = file.wall_offset_ns;
  trace::Frame frame;
  while (reader->NextFrame(&frame)) WalkFrame(frame, offset, file.path);
  if (!reader->problem().empty()) {
    stats_->warnings.push_back(file.path + ": " + reader->problem() + " (read up to there)");
  }
}

void GroupWalker::WalkFrame(const trace::Frame& frame, std::int64_t offset, const std::string& path) {
  thread_names_.clear();
  for (const trace::Thread& t : frame.threads()) thread_names_[t.tid()] = t.name();

  annotations_.clear();
  if (Status s = internal::DecodeAnnotations(frame, &annotations_); !s.ok()) Warn(path, s);
  for (const internal::AnnotationRow& row : annotations_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    TimelineSlice slice;
    slice.track = ThreadTrack(row.tid);
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  collectives_.clear();
  if (Status s = internal::DecodeCollectives(frame, &collectives_); !s.ok()) Warn(path, s);
  for (const internal::CollectiveRow& row : collectives_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.call_dur_ns)) continue;
    collective_name_ = "c10d::";
    collective_name_ += row.op;
    TimelineSlice slice;
    slice.track = ThreadTrack(row.tid);
    slice.name = collective_name_;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.call_dur_ns;
    slice.collective = &row;
    slice.flow_id = CollectiveFlowId(row.group, row.sequence);
    if (options_.collective_chains) slice.chain_role = options_.collective_chains->RoleOf(slice.flow_id, process());
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  api_.clear();
  if (Status s = internal::DecodeApiCalls(frame, &api_); !s.ok()) Warn(path, s);
  for (const internal::ApiCallRow& row : api_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    TimelineSlice slice;
    slice.track = PerThreadTrack(row.tid, TrackKind::kCudaApi);
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    slice.api = &row;
    if (row.correlation_id != 0) {
      slice.flow_id = FlowId(process(), row.correlation_id);
      FlowEndSeen(true, row.correlation_id, {slice.track, wall});
    }
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  gpu_.clear();
  if (Status s = internal::DecodeGpuActivities(frame, &gpu_); !s.ok()) Warn(path, s);
  for (const internal::GpuActivityRow& row : gpu_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    TimelineSlice slice;
    slice.track = StreamTrack(row.device, row.stream);
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    slice.gpu = &row;
    if (row.correlation_id != 0) {
      slice.flow_id = FlowId(process(), row.correlation_id);
      FlowEndSeen(false, row.correlation_id, {slice.track, wall});
    }
    if (IsBusyKind(row.kind)) AddBusy(row.device, wall, row.dur_ns);
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  markers_.clear();
  if (Status s = internal::DecodeMarkers(frame, &markers_); !s.ok()) Warn(path, s);
  for (const internal::MarkerRow& row : markers_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    TimelineSlice slice;
    slice.track = PerThreadTrack(row.tid, TrackKind::kNvtx);
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  overheads_.clear();
  if (Status s = internal::DecodeOverheads(frame, &overheads_); !s.ok()) Warn(path, s);
  for (const internal::OverheadRow& row : overheads_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    if (overhead_ == nullptr) {
      overhead_ = NewTrack(next_synthetic_tid_++, TrackKind::kCuptiOverhead, "CUPTI overhead", kOverheadSortBase);
    }
    TimelineSlice slice;
    slice.track = overhead_;
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  counters_.clear();
  if (Status s = internal::DecodeCounters(frame, &counters_); !s.ok()) Warn(path, s);
  for (const internal::CounterRow& row : counters_) Counter(row, row.ts_ns + offset);
}

const TimelineTrack* GroupWalker::ThreadTrack(std::uint32_t tid) {
  auto [it, inserted] = threads_.emplace(tid, nullptr);
  if (inserted) {
    auto name = thread_names_.find(tid);
    std::string label = name != thread_names_.end() && !name->second.empty() ? name->second : "thread";
    it->second = NewTrack(tid, TrackKind::kThread, std::move(label), threads_seen_++);
  }
  return it->second;
}

const TimelineTrack* GroupWalker::PerThreadTrack(std::uint32_t tid, TrackKind kind) {
  auto& tracks = kind == TrackKind::kCudaApi ? api_tracks_ : nvtx_tracks_;
  auto [it, inserted] = tracks.emplace(tid, nullptr);
  if (inserted) {
    const TimelineTrack* thread = ThreadTrack(tid);
    const bool api = kind == TrackKind::kCudaApi;
    std::string name = std::string(api ? "CUDA API " : "NVTX ") + thread->name + " (" + std::to_string(tid) + ")";
    it->second = NewTrack(next_synthetic_tid_++, kind, std::move(name),
                          (api ? kCudaApiSortBase : kNvtxSortBase) + thread->sort_index);
  }
  return it->second;
}

const TimelineTrack* GroupWalker::StreamTrack(std::uint32_t device, std::uint32_t stream) {
  auto [it, inserted] = streams_.emplace((std::uint64_t{device} << 32) | stream, nullptr);
  if (inserted) {
    const std::int32_t order = streams_per_device_[device]++;
    const std::int32_t sort = kGpuStreamSortBase + static_cast<std::int32_t>(std::min(device, 999u)) * 1000 + order;
    it->second = NewTrack(next_synthetic_tid_++, TrackKind::kGpuStream,
                          "GPU " + std::to_string(device) + " stream " + std::to_string(stream), sort);
  }
  return it->second;
}

void GroupWalker::Counter(const internal::CounterRow& row, std::int64_t wall_ns) {
  auto [it, inserted] = counters_by_name_.try_emplace(std::string(row.name));
  CounterState& state = it->second;
  if (inserted) {
    std::string unit(row.unit);
    if (IsCumulative(row.name)) unit += " per sample";
    if (IsMachineCounter(row.name)) {
      state.machine_series = machine_->Series(process(), group_.host_process, it->first, unit);
    } else {
      state.track = NewTrack(0, TrackKind::kCounter, it->first, 0, std::move(unit));
    }
  }
  double value = row.value;
  if (IsCumulative(row.name)) {
    const bool first = !state.has_last;
    value = row.value - state.last;
    state.last = row.value;
    state.has_last = true;
    if (first) return;
  }
  if (!InWindow(wall_ns, 0)) return;
  if (state.track == nullptr) return machine_->Add(state.machine_series, wall_ns, value);
  sink_->OnCounter(*state.track, wall_ns, value);
  ++stats_->counter_samples;
}

void GroupWalker::FlowEndSeen(bool is_launch, std::uint32_t correlation_id, FlowEnd end) {
  auto& partners = is_launch ? pending_work_ : pending_launches_;
  auto partner = partners.find(correlation_id);
  if (partner != partners.end()) {
    const FlowEnd& launch = is_launch ? end : partner->second;
    const FlowEnd& work = is_launch ? partner->second : end;
    sink_->OnFlow(FlowId(process(), correlation_id), *launch.track, launch.wall_ns, *work.track, work.wall_ns);
    ++stats_->flows;
    partners.erase(partner);
    return;
  }
  (is_launch ? pending_launches_ : pending_work_).insert_or_assign(correlation_id, end);
  pending_order_.emplace_back(is_launch, correlation_id);
  while (pending_order_.size() > options_.max_pending) {
    const auto [launch, id] = pending_order_.front();
    pending_order_.pop_front();
    (launch ? pending_launches_ : pending_work_).erase(id);
  }
}

void GroupWalker::AddBusy(std::uint32_t device, std::int64_t start, std::int64_t dur) {
  DeviceBusy& busy = busy_[device];
  if (busy.buckets == nullptr) {
    busy.buckets = std::make_unique<BucketSeries>(plan_.job.start_wall_ns, options_.gpu_utilization_max_buckets);
    busy.merged =
        std::make_unique<IntervalUnion>(options_.gpu_reorder_window_ns, options_.max_pending, busy.buckets.get());
  }
  busy.merged->Add(start, start + std::max<std::int64_t>(dur, 0));
  busy.end_ns = std::max(busy.end_ns, start + dur);
}

void GroupWalker::EmitUtilization() {
  const std::int64_t origin = plan_.job.start_wall_ns;
  for (auto& [device, busy] : busy_) {
    busy.merged->Flush();
    const std::int64_t width = busy.buckets->width_ns();
    const auto count = static_cast<int>((busy.end_ns - origin + width - 1) / width);
    const std::vector<double> sums = busy.buckets->Rebin(width, count);
    const TimelineTrack* track = nullptr;
    double previous = -1;
    for (int i = 0; i <= count; ++i) {
      const std::int64_t at = origin + i * width;
      // A step function: a sample where the share changes, and 0 after the last bucket.
      const double share = i < count ? 100.0 * sums[i] / static_cast<double>(width) : 0.0;
      if (share == previous || !InWindow(at, width)) continue;
      if (track == nullptr) {
        track = NewTrack(0, TrackKind::kCounter, "gpu" + std::to_string(device) + ".utilization", 0, "percent");
      }
      sink_->OnCounter(*track, at, share);
      ++stats_->counter_samples;
      previous = share;
    }
  }
}

}  // namespace

TimelinePlan PlanTimeline(const std::vector<ProcessStream>& streams, const std::vector<int>& ranks) {
  TimelinePlan plan;
  std::map<std::tuple<std::string, std::int32_t, std::int64_t>, TimelineGroup> groups;  // (host, rank, pid)
  std::map<std::string, std::uint32_t> hosts;                                           // name -> process id
  plan.job.start_wall_ns = streams.empty() ? 0 : std::numeric_limits<std::int64_t>::max();
  for (const ProcessStream& stream : streams) {
    TimelineGroup& g = groups[{stream.host, stream.rank, stream.pid}];
    g.streams.push_back(&stream);
    for (const TraceFileEntry& f : stream.files) {
      plan.job.start_wall_ns = std::min(plan.job.start_wall_ns, f.start_wall_ns());
      plan.job.world_size = std::max(plan.job.world_size, f.header.world_size());
      g.bytes += f.bytes;
    }
    hosts[stream.host];
  }
  std::uint32_t next_id = 1;
  for (auto& [name, id] : hosts) id = next_id++;
  const std::set<int> selected(ranks.begin(), ranks.end());
  std::set<std::int32_t> job_ranks, exported;
  for (auto& [key, group] : groups) {
    const auto& [host, rank, pid] = key;
    const std::uint32_t process = next_id++;  // stable whether or not the rank is selected
    job_ranks.insert(rank);
    if (!selected.empty() && !selected.count(rank)) continue;
    exported.insert(rank);
    const std::uint32_t host_process = hosts[host];
    const std::int32_t host_sort = static_cast<std::int32_t>(host_process - 1);
    if (plan.hosts.empty() || plan.hosts.back().id != host_process) {
      plan.hosts.push_back({host_process, host, host_sort * kProcessesPerHost});
    }
    const std::int64_t worker_of_pid = group.streams.back()->worker_of_pid;
    group.process.id = process;
    group.process.name = host + " / rank " + std::to_string(rank) +
                         (worker_of_pid ? " worker of pid " + std::to_string(worker_of_pid) : "") + " (pid " +
                         std::to_string(pid) + ")";
    group.process.sort_index = host_sort * kProcessesPerHost + 1 + std::clamp(rank, 0, kProcessesPerHost - 2);
    group.host_process = host_process;
    plan.groups.push_back(std::move(group));
  }
  plan.job.ranks.assign(exported.begin(), exported.end());
  plan.job.world_size = std::max(plan.job.world_size, static_cast<std::int32_t>(job_ranks.size()));
  return plan;
}

void WalkTimelineGroup(const TimelinePlan& plan, std::size_t group, const TimelineOptions& options, TimelineSink* sink,
                       MachineCounterLog* machine, TimelineStats* stats) {
  GroupWalker(plan, plan.groups[group], options, sink, machine, stats).Run();
}

std::uint64_t CollectiveFlowId(std::string_view group, std::uint64_t sequence) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (const char c : group) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return (std::uint64_t{1} << 63) | ((hash & 0x7fffffff) << 32) | (sequence & 0xffffffff);
}

}  // namespace smprof::analysis

#include "analysis/timeline_walker.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/interval_union.h"
#include "analysis/job_reader.h"
#include "analysis/time_buckets.h"
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

// The streams of one process (its sessions, each maybe rotated into several
// files), shown as one timeline process.
struct RankGroup {
  std::string host;
  std::int64_t pid = 0;
  std::int32_t rank = 0;
  std::int64_t worker_of_pid = 0;
  std::vector<const ProcessStream*> streams;  // in session order
};

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

class Walker {
 public:
  Walker(const TimelineOptions& options, TimelineSink* sink, TimelineStats* stats)
      : options_(options), sink_(sink), stats_(stats) {}

  Status Run();

 private:
  using Groups = std::map<std::tuple<std::string, std::int32_t, std::int64_t>, RankGroup>;  // (host, rank, pid)
  TimelineJob DescribeJob(const Groups& groups) const;
  struct FlowEnd {
    const TimelineTrack* track;
    std::int64_t wall_ns;
  };
  struct CounterState {
    const TimelineTrack* track = nullptr;  // nullptr: another rank of the host shows it
    double last = 0;
    bool has_last = false;
  };
  struct HostState {
    std::uint32_t process = 0;
    bool announced = false;
    std::map<std::string, const TimelineTrack*, std::less<>> tracks;  // counter name -> track
    std::map<std::string, std::uint32_t, std::less<>> owner;          // counter name -> process
  };
  // A GPU's busy time (kernels, copies, sets) per bucket: the union of its
  // intervals, as the summary computes it (analysis/interval_union.h).
  struct DeviceBusy {
    std::unique_ptr<BucketSeries> buckets;
    std::unique_ptr<IntervalUnion> merged;  // adds to `buckets`
    std::int64_t end_ns = 0;
  };
  // Per process; dropped when its files are done.
  struct GroupState {
    std::uint32_t process = 0;
    HostState* host = nullptr;
    std::uint64_t next_synthetic_tid = kSyntheticTidBase;
    std::int32_t threads_seen = 0;
    std::unordered_map<std::uint64_t, const TimelineTrack*> threads, api, nvtx, streams;
    std::map<std::uint32_t, std::int32_t> streams_per_device;
    const TimelineTrack* overhead = nullptr;
    std::unordered_map<std::string, CounterState> counters;
    std::unordered_map<std::uint32_t, FlowEnd> pending_launches, pending_work;
    std::deque<std::pair<bool, std::uint32_t>> pending_order;  // (is launch, correlation id)
    std::map<std::uint32_t, DeviceBusy> busy;                  // by device
  };

  bool InWindow(std::int64_t start, std::int64_t dur) const {
    return start <= options_.window_end_wall_ns && start + dur >= options_.window_start_wall_ns;
  }

  const TimelineTrack* NewTrack(std::uint32_t process, std::uint64_t tid, TrackKind kind, std::string name,
                                std::int32_t sort_index, std::string unit = {}) {
    TimelineTrack& t = tracks_.emplace_back();
    t.uuid = tracks_.size();
    t.process = process;
    t.tid = tid;
    t.kind = kind;
    t.name = std::move(name);
    t.sort_index = sort_index;
    t.unit = std::move(unit);
    sink_->OnTrack(t);
    return &t;
  }

  void WalkGroup(const RankGroup& group, std::uint32_t process, HostState* host);
  void WalkFile(const TraceFileEntry& file, GroupState* g);
  void WalkFrame(const trace::Frame& frame, std::int64_t offset, GroupState* g, const std::string& path);
  const TimelineTrack* ThreadTrack(GroupState* g, std::uint32_t tid);
  const TimelineTrack* PerThreadTrack(GroupState* g, std::uint32_t tid, TrackKind kind);
  const TimelineTrack* StreamTrack(GroupState* g, std::uint32_t device, std::uint32_t stream);
  void Counter(GroupState* g, const internal::CounterRow& row, std::int64_t wall_ns);
  void FlowEndSeen(GroupState* g, bool is_launch, std::uint32_t correlation_id, FlowEnd end);
  void AddBusy(GroupState* g, std::uint32_t device, std::int64_t start, std::int64_t dur);
  void EmitUtilization(GroupState* g);
  void Warn(const std::string& path, const Status& status) {
    stats_->warnings.push_back(path + ": " + status.message());
  }

  const TimelineOptions& options_;
  TimelineSink* sink_;
  TimelineStats* stats_;
  std::deque<TimelineTrack> tracks_;                             // stable addresses; one entry per track of the export
  std::unordered_map<std::uint32_t, std::string> thread_names_;  // of the frame being walked
  std::vector<internal::AnnotationRow> annotations_;
  std::vector<internal::CounterRow> counters_;
  std::vector<internal::GpuActivityRow> gpu_;
  std::vector<internal::ApiCallRow> api_;
  std::vector<internal::MarkerRow> markers_;
  std::vector<internal::OverheadRow> overheads_;
};

TimelineJob Walker::DescribeJob(const Groups& groups) const {
  TimelineJob job;
  job.start_wall_ns = stats_->job_start_wall_ns;
  const std::set<int> selected(options_.ranks.begin(), options_.ranks.end());
  std::set<std::int32_t> job_ranks, exported;
  for (const auto& [key, group] : groups) {
    job_ranks.insert(group.rank);
    if (selected.empty() || selected.count(group.rank)) exported.insert(group.rank);
    for (const ProcessStream* stream : group.streams) {
      for (const TraceFileEntry& f : stream->files) job.world_size = std::max(job.world_size, f.header.world_size());
    }
  }
  job.ranks.assign(exported.begin(), exported.end());
  job.world_size = std::max(job.world_size, static_cast<std::int32_t>(job_ranks.size()));
  return job;
}

Status Walker::Run() {
  const JobReader job(options_.files);
  stats_->warnings.insert(stats_->warnings.end(), job.warnings().begin(), job.warnings().end());
  if (job.streams().empty()) return Status(StatusCode::kInvalidArgument, "no readable trace files to export");
  stats_->job_start_wall_ns = std::numeric_limits<std::int64_t>::max();
  std::map<std::tuple<std::string, std::int32_t, std::int64_t>, RankGroup> groups;  // (host, rank, pid)
  for (const ProcessStream& stream : job.streams()) {
    for (const TraceFileEntry& f : stream.files) {
      stats_->job_start_wall_ns = std::min(stats_->job_start_wall_ns, f.start_wall_ns());
    }
    RankGroup& g = groups[{stream.host, stream.rank, stream.pid}];
    g.host = stream.host;
    g.rank = stream.rank;
    g.pid = stream.pid;
    g.worker_of_pid = stream.worker_of_pid;
    g.streams.push_back(&stream);
  }
  sink_->OnStart(DescribeJob(groups));

  std::map<std::string, HostState> hosts;
  for (const auto& [key, g] : groups) hosts[g.host];
  std::uint32_t next_id = 1;
  for (auto& [name, host] : hosts) host.process = next_id++;
  const std::set<int> ranks(options_.ranks.begin(), options_.ranks.end());
  for (auto& [key, group] : groups) {
    const std::uint32_t process = next_id++;  // stable whether or not the rank is selected
    if (!ranks.empty() && !ranks.count(group.rank)) continue;
    HostState& host = hosts[group.host];
    const std::int32_t host_sort = static_cast<std::int32_t>(std::distance(hosts.begin(), hosts.find(group.host)));
    if (!host.announced) {
      host.announced = true;
      sink_->OnProcess({host.process, group.host, host_sort * kProcessesPerHost});
      ++stats_->processes;
    }
    TimelineProcess p;
    p.id = process;
    p.name = group.host + " / rank " + std::to_string(group.rank) +
             (group.worker_of_pid ? " worker of pid " + std::to_string(group.worker_of_pid) : "") + " (pid " +
             std::to_string(group.pid) + ")";
    p.sort_index = host_sort * kProcessesPerHost + 1 + std::clamp(group.rank, 0, kProcessesPerHost - 2);
    sink_->OnProcess(p);
    ++stats_->processes;
    WalkGroup(group, process, &host);
  }
  return Status::Ok();
}

void Walker::WalkGroup(const RankGroup& group, std::uint32_t process, HostState* host) {
  GroupState g;
  g.process = process;
  g.host = host;
  for (const ProcessStream* stream : group.streams) {
    for (const TraceFileEntry& file : stream->files) WalkFile(file, &g);
  }
  EmitUtilization(&g);
}

void Walker::WalkFile(const TraceFileEntry& file, GroupState* g) {
  std::unique_ptr<TraceReader> reader;
  Status status = TraceReader::Open(file.path, &reader);
  if (!status.ok()) return Warn(file.path, status);
  ++stats_->files;
  const std::int64_t offset = file.wall_offset_ns;
  trace::Frame frame;
  while (reader->NextFrame(&frame)) WalkFrame(frame, offset, g, file.path);
  if (!reader->problem().empty()) {
    stats_->warnings.push_back(file.path + ": " + reader->problem() + " (read up to there)");
  }
}

void Walker::WalkFrame(const trace::Frame& frame, std::int64_t offset, GroupState* g, const std::string& path) {
  thread_names_.clear();
  for (const trace::Thread& t : frame.threads()) thread_names_[t.tid()] = t.name();

  annotations_.clear();
  if (Status s = internal::DecodeAnnotations(frame, &annotations_); !s.ok()) Warn(path, s);
  for (const internal::AnnotationRow& row : annotations_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    TimelineSlice slice;
    slice.track = ThreadTrack(g, row.tid);
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  api_.clear();
  if (Status s = internal::DecodeApiCalls(frame, &api_); !s.ok()) Warn(path, s);
  for (const internal::ApiCallRow& row : api_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    TimelineSlice slice;
    slice.track = PerThreadTrack(g, row.tid, TrackKind::kCudaApi);
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    slice.api = &row;
    if (row.correlation_id != 0) {
      slice.flow_id = FlowId(g->process, row.correlation_id);
      FlowEndSeen(g, true, row.correlation_id, {slice.track, wall});
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
    slice.track = StreamTrack(g, row.device, row.stream);
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    slice.gpu = &row;
    if (row.correlation_id != 0) {
      slice.flow_id = FlowId(g->process, row.correlation_id);
      FlowEndSeen(g, false, row.correlation_id, {slice.track, wall});
    }
    if (IsBusyKind(row.kind)) AddBusy(g, row.device, wall, row.dur_ns);
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  markers_.clear();
  if (Status s = internal::DecodeMarkers(frame, &markers_); !s.ok()) Warn(path, s);
  for (const internal::MarkerRow& row : markers_) {
    const std::int64_t wall = row.start_ns + offset;
    if (!InWindow(wall, row.dur_ns)) continue;
    TimelineSlice slice;
    slice.track = PerThreadTrack(g, row.tid, TrackKind::kNvtx);
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
    if (g->overhead == nullptr) {
      g->overhead =
          NewTrack(g->process, g->next_synthetic_tid++, TrackKind::kCuptiOverhead, "CUPTI overhead", kOverheadSortBase);
    }
    TimelineSlice slice;
    slice.track = g->overhead;
    slice.name = row.name;
    slice.start_wall_ns = wall;
    slice.dur_ns = row.dur_ns;
    sink_->OnSlice(slice);
    ++stats_->slices;
  }

  counters_.clear();
  if (Status s = internal::DecodeCounters(frame, &counters_); !s.ok()) Warn(path, s);
  for (const internal::CounterRow& row : counters_) Counter(g, row, row.ts_ns + offset);
}

const TimelineTrack* Walker::ThreadTrack(GroupState* g, std::uint32_t tid) {
  auto [it, inserted] = g->threads.emplace(tid, nullptr);
  if (inserted) {
    auto name = thread_names_.find(tid);
    std::string label = name != thread_names_.end() && !name->second.empty() ? name->second : "thread";
    it->second = NewTrack(g->process, tid, TrackKind::kThread, std::move(label), g->threads_seen++);
  }
  return it->second;
}

const TimelineTrack* Walker::PerThreadTrack(GroupState* g, std::uint32_t tid, TrackKind kind) {
  auto& tracks = kind == TrackKind::kCudaApi ? g->api : g->nvtx;
  auto [it, inserted] = tracks.emplace(tid, nullptr);
  if (inserted) {
    const TimelineTrack* thread = ThreadTrack(g, tid);
    const bool api = kind == TrackKind::kCudaApi;
    std::string name = std::string(api ? "CUDA API " : "NVTX ") + thread->name + " (" + std::to_string(tid) + ")";
    it->second = NewTrack(g->process, g->next_synthetic_tid++, kind, std::move(name),
                          (api ? kCudaApiSortBase : kNvtxSortBase) + thread->sort_index);
  }
  return it->second;
}

const TimelineTrack* Walker::StreamTrack(GroupState* g, std::uint32_t device, std::uint32_t stream) {
  auto [it, inserted] = g->streams.emplace((std::uint64_t{device} << 32) | stream, nullptr);
  if (inserted) {
    const std::int32_t order = g->streams_per_device[device]++;
    const std::int32_t sort = kGpuStreamSortBase + static_cast<std::int32_t>(std::min(device, 999u)) * 1000 + order;
    it->second = NewTrack(g->process, g->next_synthetic_tid++, TrackKind::kGpuStream,
                          "GPU " + std::to_string(device) + " stream " + std::to_string(stream), sort);
  }
  return it->second;
}

void Walker::Counter(GroupState* g, const internal::CounterRow& row, std::int64_t wall_ns) {
  auto [it, inserted] = g->counters.try_emplace(std::string(row.name));
  CounterState& state = it->second;
  if (inserted) {
    const bool cumulative = IsCumulative(row.name);
    std::string unit(row.unit);
    if (cumulative) unit += " per sample";
    if (IsMachineCounter(row.name)) {
      HostState& host = *g->host;
      auto owner = host.owner.try_emplace(it->first, g->process).first;
      if (owner->second == g->process) {
        state.track = NewTrack(host.process, 0, TrackKind::kCounter, it->first, 0, std::move(unit));
      }
    } else {
      state.track = NewTrack(g->process, 0, TrackKind::kCounter, it->first, 0, std::move(unit));
    }
  }
  if (state.track == nullptr) return;
  double value = row.value;
  if (IsCumulative(row.name)) {
    const bool first = !state.has_last;
    value = row.value - state.last;
    state.last = row.value;
    state.has_last = true;
    if (first) return;
  }
  if (!InWindow(wall_ns, 0)) return;
  sink_->OnCounter(*state.track, wall_ns, value);
  ++stats_->counter_samples;
}

void Walker::FlowEndSeen(GroupState* g, bool is_launch, std::uint32_t correlation_id, FlowEnd end) {
  auto& partners = is_launch ? g->pending_work : g->pending_launches;
  auto partner = partners.find(correlation_id);
  if (partner != partners.end()) {
    const FlowEnd& launch = is_launch ? end : partner->second;
    const FlowEnd& work = is_launch ? partner->second : end;
    sink_->OnFlow(FlowId(g->process, correlation_id), *launch.track, launch.wall_ns, *work.track, work.wall_ns);
    ++stats_->flows;
    partners.erase(partner);
    return;
  }
  (is_launch ? g->pending_launches : g->pending_work).insert_or_assign(correlation_id, end);
  g->pending_order.emplace_back(is_launch, correlation_id);
  while (g->pending_order.size() > options_.max_pending) {
    const auto [launch, id] = g->pending_order.front();
    g->pending_order.pop_front();
    (launch ? g->pending_launches : g->pending_work).erase(id);
  }
}

void Walker::AddBusy(GroupState* g, std::uint32_t device, std::int64_t start, std::int64_t dur) {
  DeviceBusy& busy = g->busy[device];
  if (busy.buckets == nullptr) {
    busy.buckets = std::make_unique<BucketSeries>(stats_->job_start_wall_ns, options_.gpu_utilization_max_buckets);
    busy.merged =
        std::make_unique<IntervalUnion>(options_.gpu_reorder_window_ns, options_.max_pending, busy.buckets.get());
  }
  busy.merged->Add(start, start + std::max<std::int64_t>(dur, 0));
  busy.end_ns = std::max(busy.end_ns, start + dur);
}

void Walker::EmitUtilization(GroupState* g) {
  const std::int64_t origin = stats_->job_start_wall_ns;
  for (auto& [device, busy] : g->busy) {
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
        track =
            NewTrack(g->process, 0, TrackKind::kCounter, "gpu" + std::to_string(device) + ".utilization", 0, "percent");
      }
      sink_->OnCounter(*track, at, share);
      ++stats_->counter_samples;
      previous = share;
    }
  }
}

}  // namespace

Status WalkTimeline(const TimelineOptions& options, TimelineSink* sink, TimelineStats* stats) {
  if (options.gpu_utilization_max_buckets <= 0) {
    return Status(StatusCode::kInvalidArgument, "gpu_utilization_max_buckets must be positive");
  }
  return Walker(options, sink, stats).Run();
}

}  // namespace smprof::analysis

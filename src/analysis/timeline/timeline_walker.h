// The timeline of a job's rank files: processes, tracks, slices, counters
// and flows, streamed to a TimelineSink frame by frame. The timeline
// exporters (chrome_export, perfetto_export) are sinks; timeline_export.h
// drives them.
//
// PlanTimeline groups the job's process streams into timeline processes (one
// per host, one per rank process) with ids stable whatever is selected;
// WalkTimelineGroup walks one rank process, independently of the others, so
// that workers can walk them in parallel. Memory stays bounded for traces of
// any length: one frame is decoded at a time; what is kept across frames is
// per track (names, last counter value), per GPU utilization bucket (a
// bounded number), and the launches/GPU work still waiting for their partner
// (capped, oldest forgotten first). docs/EXPORT.md describes the processes,
// tracks and ids a sink receives.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/job/job_reader.h"
#include "analysis/job/summary_options.h"
#include "smprof/status.h"
#include "trace/collective_codec.h"
#include "trace/gpu_codec.h"

namespace smprof::analysis {

class CollectiveChains;

// Steps `first` to `last` (inclusive), numbered as the summary numbers them.
struct StepRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
};

struct TimelineOptions {
  // Every rank file of the job (sorted); the job's start, which timestamps
  // are relative to in some formats, is the earliest start among them.
  std::vector<std::string> files;
  std::vector<int> ranks;  // only these ranks; empty: all (PlanTimeline's)
  // Only events overlapping [window_start_wall_ns, window_end_wall_ns]
  // (wall clock, ns since the Unix epoch).
  std::int64_t window_start_wall_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t window_end_wall_ns = std::numeric_limits<std::int64_t>::max();
  // Narrows the window to the start of step `steps->first` to the end of
  // step `steps->last` among the selected ranks (ApplyStepWindow,
  // step_window.h; ExportTimeline applies it): steps are the annotations
  // `step_pattern` matches, as in the summary.
  std::optional<StepRange> steps;
  std::string step_pattern = kDefaultStepPattern;
  // GPU utilization counters: busy share per bucket of a grid from the job's
  // start, 1 ms wide, doubling until the job fits in this many buckets.
  int gpu_utilization_max_buckets = 10'000;
  // How far out of start order GPU rows may arrive and still merge exactly.
  std::int64_t gpu_reorder_window_ns = 5'000'000'000;
  // Per process: launches (and GPU work) waiting for their partner to draw a
  // flow arrow, and GPU rows waiting to be merged into the utilization. What
  // arrives further out of order loses its arrow / counts only in part.
  std::size_t max_pending = 1u << 16;
  // Each collective instance's first and last arriving rank process
  // (collective_chains.h), for the Chrome export's flows; none: no chains.
  std::shared_ptr<const CollectiveChains> collective_chains;
};

// The job as exported, announced before anything else.
struct TimelineJob {
  std::int64_t start_wall_ns = 0;   // the earliest header start among the files
  std::vector<std::int32_t> ranks;  // the ranks in the export, sorted, each once
  std::int32_t world_size = 0;      // the headers' largest world size, at least the job's number of ranks
};

// A process of the timeline: a host (its machine-wide counters) or one rank
// file group (the files of one process: sessions and rotated files).
struct TimelineProcess {
  std::uint32_t id = 0;  // stable: from the sorted file list; the "pid" of the export
  std::string name;      // "host-a" or "host-a / rank 3 (pid 4711)"
  std::int32_t sort_index = 0;
};

enum class TrackKind { kThread, kCudaApi, kNvtx, kGpuStream, kCuptiOverhead, kCounter };

struct TimelineTrack {
  std::uint64_t uuid = 0;     // unique in the export
  std::uint32_t process = 0;  // TimelineProcess::id
  std::uint64_t tid = 0;      // the kernel tid of kThread tracks, a synthetic id otherwise
  TrackKind kind = TrackKind::kThread;
  std::string name;
  std::int32_t sort_index = 0;  // among the process's tracks: CPU threads first, GPU streams last
  std::string unit;             // kCounter: "percent", "bytes", "count", "ns"
};

// A collective slice's part in the chain of its instance across rank
// processes: none (no chains, or one process only), begin (the first to
// arrive), a step, end (the last).
enum class ChainRole { kNone, kBegin, kStep, kEnd };

struct TimelineSlice {
  const TimelineTrack* track = nullptr;
  std::string_view name;
  std::int64_t start_wall_ns = 0;
  std::int64_t dur_ns = 0;
  const internal::GpuActivityRow* gpu = nullptr;  // GPU-side slices: the row, for its arguments
  const internal::ApiCallRow* api = nullptr;      // CUDA API slices
  // Launch -> GPU work (FlowId), or one collective instance on every rank
  // (CollectiveFlowId, which Perfetto chains in time order: first arriver to
  // last); 0 if none.
  std::uint64_t flow_id = 0;
  const internal::CollectiveRow* collective = nullptr;  // a collective call, on its thread's track
  ChainRole chain_role = ChainRole::kNone;              // with TimelineOptions::collective_chains
};

// The id of the arrow from a launch to its GPU work: the correlation id made
// unique across the processes of the export.
inline std::uint64_t FlowId(std::uint32_t process, std::uint32_t correlation_id) {
  return (std::uint64_t{process} << 32) | correlation_id;
}

// The id every rank gives the same collective instance (group, sequence):
// the top bit set, so that it never equals a FlowId (process ids are small).
std::uint64_t CollectiveFlowId(std::string_view group, std::uint64_t sequence);

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  // First.
  virtual void OnStart(const TimelineJob& job) = 0;
  // Each process and track is announced once, before its first event.
  virtual void OnProcess(const TimelineProcess& process) = 0;
  virtual void OnTrack(const TimelineTrack& track) = 0;
  virtual void OnSlice(const TimelineSlice& slice) = 0;
  virtual void OnCounter(const TimelineTrack& track, std::int64_t wall_ns, double value) = 0;
  // A launch and the GPU work it started, both in the export.
  virtual void OnFlow(std::uint64_t id, const TimelineTrack& launch, std::int64_t launch_wall_ns,
                      const TimelineTrack& work, std::int64_t work_wall_ns) = 0;
};

struct TimelineStats {
  std::int64_t job_start_wall_ns = 0;
  std::uint32_t files = 0;
  std::uint32_t processes = 0;
  std::uint64_t slices = 0;
  std::uint64_t counter_samples = 0;
  std::uint64_t flows = 0;
  std::vector<std::string> warnings;  // files read only in part, tables that did not decode
  bool no_step = false;               // failed: TimelineOptions::steps named no step of the selected ranks
};

// A rank process of the timeline: the streams of one (host, rank, pid), its
// sessions each maybe rotated into several files.
struct TimelineGroup {
  TimelineProcess process;
  std::uint32_t host_process = 0;             // its host's TimelineProcess::id
  std::vector<const ProcessStream*> streams;  // in session order
  std::uint64_t bytes = 0;                    // of its files
};

// The timeline of a job: its hosts and rank processes in export order (the
// selected ranks' only), pointing into the streams it was planned from.
struct TimelinePlan {
  TimelineJob job;
  std::vector<TimelineProcess> hosts;  // those with a rank process in the export
  std::vector<TimelineGroup> groups;
};

// `streams` as JobReader orders them; `ranks`: only these (empty: all).
TimelinePlan PlanTimeline(const std::vector<ProcessStream>& streams, const std::vector<int>& ranks);

class MachineCounterLog;

// Walks `plan.groups[group]`: announces its process, then its tracks,
// slices, counters and flows to `sink`; its machine-wide counters (CPU
// shares, machine memory, per-CPU perf counts, which every rank of a host
// records) go to `machine` instead, for the assembly to show once per host.
void WalkTimelineGroup(const TimelinePlan& plan, std::size_t group, const TimelineOptions& options, TimelineSink* sink,
                       MachineCounterLog* machine, TimelineStats* stats);

}  // namespace smprof::analysis

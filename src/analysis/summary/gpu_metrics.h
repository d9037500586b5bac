// GpuMetrics: everything computed from a frame's GPU tables (decoded by
// trace/gpu_codec.h): per-GPU active time and busy time per bucket (the union
// of kernel, memcpy and memset intervals), activity / memory-operation /
// precision shares, kernel time and launches, launch-to-start latency, and
// GPU time per annotation, joined through external correlation ids or, for
// work launched outside every annotation of its thread, inferred from the
// annotation open at the launch on the thread that owns the work
// (launch_owner.h; docs/ANALYSIS.md has the definitions).
//
// A correlation id is trusted only where it can be: a kernel that starts
// before its launch call is counted (its clock is off) and left out of the
// latency; a CUDA-graph activity joins through its id only once that id is
// seen to be a graph launch's (cudaGraphLaunch, cuGraphLaunch), since CUPTI
// before 13.1 Update 1 gives graph launches wrong ids in sessions after the
// first. Graph work whose launch call comes in a later frame waits for it;
// work whose id is another call's, or whose call never comes, is counted
// and attributed to no annotation.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/base/correlation_join.h"
#include "analysis/base/fifo.h"
#include "analysis/base/interval_union.h"
#include "analysis/base/json_writer.h"
#include "analysis/base/log_histogram.h"
#include "analysis/base/partial_codec.h"
#include "analysis/base/time_buckets.h"
#include "analysis/job/job_reader.h"
#include "analysis/job/summary_options.h"
#include "analysis/summary/communication_launch.h"
#include "analysis/summary/frame_id_index.h"
#include "analysis/summary/launch_owner.h"
#include "analysis/summary/stats_json.h"
#include "analysis/summary/unattributed_work.h"
#include "trace/frame_rows.h"

namespace smprof::analysis {

class GpuMetrics {
 public:
  GpuMetrics(const SummaryOptions& options, std::int64_t origin_ns);

  void BeginStream(const ProcessStream& stream);
  // Returns false if a GPU table of the frame is inconsistent (`error` says why).
  bool AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span, std::string* error);
  // Flushes the stream's reorder windows; `stream_span` is its span, for active %.
  void EndStream(const WallSpan& stream_span);

  std::uint64_t rows() const { return rows_seen_; }
  // The NCCL kernels joined to their launch calls since the last call (CollectiveMetrics links them).
  std::vector<CommunicationLaunch> TakeCommunicationLaunches() { return std::exchange(communication_launches_, {}); }
  std::int64_t stream_active_ns() const;  // Σ over the current stream's GPUs
  std::size_t stream_devices() const { return stream_->devices.size(); }
  std::uint64_t late_records() const;
  std::uint64_t evicted_correlations() const { return evicted_correlations_; }
  std::uint64_t kernels_before_launch() const { return launches_.before_launch; }
  std::uint64_t graph_activities_unlinked() const { return graph_.activities - graph_.linked; }
  // What the summary's warnings say of the GPU tables' joins ("" none).
  std::vector<std::string> Warnings() const;
  std::int64_t min_bucket_width() const;

  // The "gpu" object's fields (`reason` when no activity was recorded), the
  // devices of the job (job.devices), and the timeline's per-device and per-node lists.
  void WriteGpuFields(const std::string& reason, JsonWriter& out) const;
  void WriteDevices(JsonWriter& out) const;
  void WriteTimeline(std::int64_t width_ns, int buckets, JsonWriter& out) const;

  // Partial summaries (docs/ANALYSIS.md): Save writes the state after
  // EndStream (the joins are per stream and empty then); MergeFrom adds a
  // saved state's totals and appends its streams; ReorderStreams puts the
  // streams in `order`.
  void Save(PartialEncoder& out) const;
  void MergeFrom(PartialDecoder& in);
  void ReorderStreams(const std::vector<std::size_t>& order);

 private:
  struct Totals {
    std::uint64_t count = 0;
    std::int64_t time_ns = 0;
    std::uint64_t bytes = 0;
  };
  struct Device {
    std::unique_ptr<BucketSeries> busy;
    std::unique_ptr<IntervalUnion> union_ns;
    std::int64_t span_ns = 0;
  };
  struct AnnotationGpu {
    std::int64_t gpu_time_ns = 0;
    std::uint64_t activities = 0;
    // Of which inferred: launched by a thread with no open annotation while
    // this one owned the launch (launch_owner.h).
    std::int64_t inferred_time_ns = 0;
    std::uint64_t inferred_activities = 0;
  };
  // An annotation name: its entry in annotations_ once work is attributed
  // to it, and whether it names a backward pass (launch_owner.h).
  struct RangeInfo {
    AnnotationGpu* annotation = nullptr;
    bool backward = false;
  };
  using RangeName = std::pair<const std::string, RangeInfo>;
  // Inferred work by the thread that launched it; ambiguous: several threads
  // had ranges open and none alone was inside a backward range.
  struct InferredByThread {
    std::string thread;  // its name, "" if the trace has none
    Totals inferred;
    Totals ambiguous;
  };
  struct Stream {
    std::string host;
    std::int32_t rank = 0;
    std::int64_t pid = 0;
    std::map<std::uint32_t, Device> devices;
    std::map<std::uint32_t, trace::GpuDevice> device_info;
    std::map<std::uint32_t, InferredByThread> inferred_by_thread;
    std::unordered_map<std::uint32_t, std::string> thread_names;  // from the frames' thread tables
  };
  struct TimeSpan {
    std::int64_t start_ns = 0;
    std::int64_t dur_ns = 0;
  };
  // A launch call waiting for its kernel, and a kernel waiting for its launch call.
  struct CallSpan {
    TimeSpan span;
    std::uint32_t tid = 0;
  };
  struct KernelRun {
    TimeSpan span;
    std::int64_t wall_offset_ns = 0;  // its file's
    std::uint32_t device = 0;
    bool communication = false;  // IsCommunicationKernel
  };
  // Kernels joined to their launch call, and those that ran shorter than it.
  struct LaunchTotals {
    std::uint64_t kernels = 0;
    std::int64_t kernel_time_ns = 0;
    std::uint64_t tiny_kernels = 0;
    std::int64_t tiny_kernel_time_ns = 0;
    std::int64_t tiny_launch_time_ns = 0;  // the launch calls' time
    std::uint64_t before_launch = 0;       // kernels starting before their call: not in the latency
  };
  // CUDA-graph activities (kernels, copies, sets with a graph id), and those
  // whose correlation id joined a graph launch.
  struct GraphTotals {
    std::uint64_t activities = 0;
    std::int64_t time_ns = 0;
    std::uint64_t linked = 0;
    std::int64_t linked_time_ns = 0;
  };
  // Graph work waiting for its launch call, from its first row's start.
  struct GraphWork {
    std::int64_t start_ns = 0;
    UnattributedWork::Work work;
  };
  // Copies between host and device, and those whose host side is pageable memory.
  struct HostCopyTotals {
    Totals all;
    std::uint64_t memory_kind_known = 0;
    Totals pageable;
  };
  // A launch call of the frame being read: its kernel and its unclaimed work
  // look for it here first; what they leave enters the joins after the frame.
  struct FrameCall {
    std::uint32_t correlation_id = 0;
    std::uint32_t tid = 0;
    TimeSpan call;
    bool kernel_joined = false;
    bool launch_taken = false;  // by LaunchOf
    bool graph_launch = false;  // cudaGraphLaunch or cuGraphLaunch
  };

  // The frame's API calls: joined to kernels that waited for them, and kept in frame_calls_.
  bool AddApiCalls(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span, std::string* error);
  // External correlations, annotation ranges and GPU rows.
  bool AddFrameWork(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span, std::string* error);
  // The frame's call with `id`, or nullptr.
  FrameCall* FrameCallOf(std::uint32_t id);
  // Puts the frame's calls no kernel or unclaimed work of the frame took into the joins.
  void EndFrameCalls();
  void AddActivity(const internal::GpuActivityRow& row, std::int64_t wall_offset_ns);
  // A kernel's join with its launch call (the latency).
  void JoinLaunch(const internal::GpuActivityRow& row, std::int64_t wall_offset_ns);
  // Whether graph work may join through its correlation id now: counted, and
  // held back (false) until its launch call is seen when not yet.
  bool GraphLinked(const internal::GpuActivityRow& row);
  // Graph work held back for calls of the frame: attributed when the call is a graph launch.
  void ReleaseGraphWork();
  // Work joined through correlation id `id`: to its annotation, or waiting for one.
  void Attribute(std::uint32_t id, std::int64_t start_ns, const UnattributedWork::Work& work);
  // A kernel joined to its launch call on thread `tid`: the latency, whether
  // it ran shorter than its launch, and an NCCL kernel's launch for the collectives.
  void AddLaunch(const TimeSpan& api_call, std::uint32_t tid, const KernelRun& kernel);
  void AddHostCopy(const internal::GpuActivityRow& row);
  void AddAnnotationTime(AnnotationGpu* annotation, std::int64_t time_ns, std::uint64_t activities);
  // The frame's annotations join ranges_; beyond max_pending the oldest are forgotten.
  void AddRanges(const internal::FrameRows& frame);
  // The launch of GPU work that becomes unclaimed: its frame's call, or one
  // of an earlier frame; start -1 if unknown.
  UnattributedWork::Launch LaunchOf(std::uint32_t id);
  // Gives unclaimed work to the range that owned its launch (launch_owner.h),
  // oldest first, until at most `keep` remain.
  void InferAttribution(std::size_t keep);

  const SummaryOptions options_;
  const std::int64_t origin_ns_;
  std::vector<std::unique_ptr<Stream>> streams_;
  Stream* stream_ = nullptr;
  // Per stream (correlation ids are per process); cleared at BeginStream.
  PendingById<CallSpan> api_calls_;
  PendingById<KernelRun> kernels_waiting_for_api_;
  PendingById<AnnotationGpu*> annotation_of_;
  UnattributedWork unattributed_;                           // GPU work no annotation claimed yet
  PendingById<UnattributedWork::Launch> launch_of_;         // API calls by correlation id, for LaunchOf
  PendingById<bool> graph_launches_;                        // earlier frames' graph-launch calls, by correlation id
  PendingById<GraphWork> graph_work_waiting_;               // graph work whose launch call is not seen yet
  std::vector<FrameCall> frame_calls_;                      // the frame's API calls with a correlation id
  FrameIdIndex frame_call_index_;                           // frame_calls_ by correlation id
  LaunchOwner<RangeName*> ranges_;                          // the stream's annotations (names in range_names_), bounded
  std::unordered_map<std::string, RangeInfo> range_names_;  // the names ranges_ point to
  std::vector<RangeName*> frame_range_names_;               // by index in the frame's strings, for one frame
  std::uint64_t evicted_correlations_ = 0;
  std::int64_t newest_ns_ = 0;  // the stream's latest start so far: the joins' clock

  std::uint64_t rows_seen_ = 0;
  std::array<Totals, 5> activity_{};    // by trace::GpuKind
  std::array<Totals, 6> memory_ops_{};  // HtoD, DtoH, DtoD, PtoP, memset, other
  std::array<Totals, 10> precision_{};  // by trace::Precision
  std::unordered_map<std::string, Totals> kernels_;
  std::vector<Totals*> frame_kernels_;  // by index in the frame's strings, valid for one frame
  std::unordered_map<std::string, AnnotationGpu> annotations_;
  LogHistogram launch_latency_;
  LaunchTotals launches_;
  GraphTotals graph_;
  HostCopyTotals host_copies_;
  std::vector<CommunicationLaunch> communication_launches_;  // until TakeCommunicationLaunches
};

}  // namespace smprof::analysis

// GpuIdleBreakdown: per GPU, why it sat idle inside steps and how much of its
// copy and communication time no compute kernel overlapped (docs/ANALYSIS.md,
// "GPU idle and overlap"). A sweep over the process's intervals: steps, data
// waits (annotations), launch and synchronizing API calls, and per device the
// compute, copy and NCCL work. Intervals wait, united per track as they
// come, until the newest start is past them by the reorder window plus the
// longest step seen (a step is written when it ends, after its GPU work), or
// until more than max_pending wait (then the half that ends first goes), and
// are swept in time order; an interval arriving before the swept frontier is
// late and only its part after the frontier counts.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/base/fifo.h"
#include "analysis/base/json_writer.h"
#include "analysis/base/partial_codec.h"
#include "analysis/job/job_reader.h"
#include "analysis/job/step_matcher.h"
#include "analysis/job/summary_options.h"
#include "trace/frame_rows.h"

namespace smprof::analysis {

// What a host API call is to the idle breakdown, from its name.
enum class ApiCallRole { kOther, kLaunch, kSync };
ApiCallRole ApiCallRoleOf(std::string_view name);

// One GPU's step time, its idle time by cause, and its copy and NCCL time, exposed or not.
struct GpuIdleTotals {
  std::uint32_t id = 0;
  std::int64_t step_ns = 0;
  std::int64_t launch_bound_ns = 0;
  std::int64_t data_wait_ns = 0;
  std::int64_t sync_ns = 0;
  std::int64_t communication_ns = 0;
  std::int64_t unexplained_ns = 0;
  std::int64_t copy_ns = 0;
  std::int64_t copy_exposed_ns = 0;
  std::int64_t communication_total_ns = 0;
  std::int64_t communication_exposed_ns = 0;
  std::int64_t idle_ns() const { return launch_bound_ns + data_wait_ns + sync_ns + communication_ns + unexplained_ns; }
};

class GpuIdleBreakdown {
 public:
  // Throws std::regex_error on a bad step or data-wait pattern.
  explicit GpuIdleBreakdown(const SummaryOptions& options);

  void BeginStream(const ProcessStream& stream);
  // Tables with a failed status are skipped (the other metrics report them).
  void AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame);
  void EndStream();

  std::uint64_t late_intervals() const { return late_intervals_; }
  // Summed over every GPU of every stream (device id 0).
  GpuIdleTotals total() const;
  // The summary's "gpu" keys "idle" and "overlap".
  void WriteIdle(JsonWriter& out) const;
  void WriteOverlap(JsonWriter& out) const;

  // Partial summaries (docs/ANALYSIS.md): Save writes the state after
  // EndStream (the sweep is flushed then); MergeFrom adds a saved state's late
  // intervals and appends its streams; ReorderStreams puts the streams in
  // JobReader's order.
  void Save(PartialEncoder& out) const;
  void MergeFrom(PartialDecoder& in);
  void ReorderStreams(const std::vector<std::size_t>& order);

 private:
  // Host tracks first, then the per-device ones.
  enum Track : std::uint8_t { kStep, kDataWait, kSync, kLaunch, kCompute, kCopy, kCommunication };
  struct Stream {
    std::string host;
    std::int32_t rank = 0;
    std::int64_t pid = 0;
    std::uint64_t steps = 0;
    std::vector<GpuIdleTotals> devices;
    std::map<std::uint32_t, std::uint32_t> device_index;  // device id -> index in devices
  };
  // One track's pending time: the union of its intervals not swept yet, as
  // disjoint segments in time order (once Finish ran). Intervals added in
  // start order join the last segment or follow it; others make Finish sort
  // and unite.
  struct TrackTime {
    struct Segment {
      std::int64_t start_ns;
      std::int64_t end_ns;
    };
    Fifo<Segment> segments;
    bool sorted = true;
    // Joins the last segment or follows it (out of start order: unsorted).
    void Add(std::int64_t start_ns, std::int64_t end_ns) {
      if (!segments.empty()) {
        Segment& last = segments.back();
        if (start_ns >= last.start_ns && start_ns <= last.end_ns) {
          last.end_ns = std::max(last.end_ns, end_ns);
          return;
        }
        if (start_ns < last.start_ns) sorted = false;
      }
      Segment& added = segments.emplace_back();  // field by field: a braced Segment went through the stack
      added.start_ns = start_ns;
      added.end_ns = end_ns;
    }
    // Sorts and unites the segments if they are out of order.
    void Finish();
    // Copies the segments before the frontier to `walk` (`swept` of them,
    // maybe 0), the one across it ended there, then two end marks. EndSweep
    // drops what was swept but for the part of the one across the frontier
    // after it.
    void BeginSweep(std::int64_t frontier_ns, std::vector<Segment>* walk);
    void EndSweep(std::int64_t frontier_ns);
    std::size_t swept = 0;
  };
  // A track in a device's sweep: its segment in the walk and that segment's
  // and the next one's times, the time it next opens or closes, its bit in
  // the state (AddStateTime) and whether it is open (0/1).
  struct TrackCursor {
    const TrackTime::Segment* at;
    TrackTime::Segment segment;
    TrackTime::Segment next;
    std::int64_t next_ns;
    unsigned bit;
    unsigned open;
  };

  void Add(std::int64_t start_ns, std::int64_t end_ns, Track track, std::uint32_t device = 0);
  enum class AnnotationRole : std::uint8_t { kUnknown, kStep, kDataWait, kOther };
  std::uint32_t DeviceIndex(std::uint32_t id);
  AnnotationRole RoleOf(std::string_view name);
  // Sweeps the tracks' time up to `frontier_ns`, keeping what reaches past it.
  void SweepTo(std::int64_t frontier_ns);
  void SweepIfDue();
  // Adds `length` ns spent in `state` to `totals`, by cause. A state's bits are
  // the open tracks: 0-2 the device's compute, copy, communication; 3-6 the
  // host's step, data wait, sync, launch.
  static void AddStateTime(unsigned state, std::int64_t length, GpuIdleTotals* totals);
  // The "devices" list: each GPU's host, rank, pid and device, then `fields`.
  void WriteDevices(JsonWriter& out, const std::function<void(const Stream&, const GpuIdleTotals&)>& fields) const;

  const SummaryOptions options_;
  StepMatcher steps_;
  std::regex data_wait_;
  std::unordered_map<std::string, bool> data_wait_names_;
  std::vector<AnnotationRole> frame_roles_;  // by index in the frame's strings, for one frame
  std::vector<std::unique_ptr<Stream>> streams_;
  Stream* stream_ = nullptr;
  std::uint32_t last_device_ = 0;  // DeviceIndex's previous answer
  // Each track's pending time: host tracks, then each device's compute, copy
  // and communication.
  static constexpr unsigned kDeviceTracks = 3;
  std::vector<TrackTime> open_;
  // The end of every pending interval (in no order): how many are pending
  // and, for the bound, which half ends first.
  std::vector<std::int64_t> pending_ends_;
  // SweepTo's, reused: each track's segments to sweep and a device's time in
  // each state (AddStateTime).
  std::vector<std::vector<TrackTime::Segment>> walks_;
  static constexpr unsigned kStates = 1u << (kCompute + kDeviceTracks);
  std::array<std::int64_t, kStates> state_ns_{};
  std::int64_t swept_ns_ = INT64_MIN;
  std::int64_t newest_ns_ = INT64_MIN;
  std::int64_t longest_step_ns_ = 0;
  std::uint64_t late_intervals_ = 0;
};

}  // namespace smprof::analysis

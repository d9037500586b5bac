// CollectiveMetrics: the job's collective calls (trace.proto Collectives),
// matched across ranks by (process group, sequence number): per instance
// each rank's arrival on the job's aligned clock, the last arriver, and each
// rank's wait from its arrival to the last arrival. On GPUs each call is
// linked to the NCCL kernels it launched (a CommunicationLaunch on the same
// thread inside the call), and instances whose every rank has one are
// matched again on the kernels' starts: the device-side arrivals. Written as
// the summary's "collectives" section (docs/ANALYSIS.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/base/json_writer.h"
#include "analysis/base/log_histogram.h"
#include "analysis/base/partial_codec.h"
#include "analysis/job/job_reader.h"
#include "analysis/summary/communication_launch.h"
#include "trace/collective_codec.h"
#include "trace/frame_rows.h"

namespace smprof::analysis {

class CollectiveMetrics {
 public:
  // Arrivals kept for matching, at most (about 40 bytes each, plus a map
  // node per instance); calls past it are counted but not matched. As many
  // NCCL launches per stream wait for the stream's end to be linked.
  static constexpr std::size_t kMaxArrivals = std::size_t{1} << 21;

  void BeginStream(const ProcessStream& stream);
  // Adds a frame's collectives; returns false (adding nothing) if the table
  // is inconsistent; `error` says why.
  bool AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, std::string* error);
  // NCCL kernels of the current stream joined to their launch calls (GpuMetrics).
  void AddCommunicationLaunches(const std::vector<CommunicationLaunch>& launches);
  // The footer's counts of a file of the current stream.
  void AddFooter(const trace::Footer& footer) { stream_->footer_dropped += footer.collectives_dropped(); }
  // Links the stream's NCCL launches to its calls; counts its drops.
  void EndStream();

  void Write(JsonWriter& out) const;  // the "collectives" object

  // Partial summaries (docs/ANALYSIS.md), as the other aggregators.
  void Save(PartialEncoder& out) const;
  void MergeFrom(PartialDecoder& in);
  void ReorderStreams(const std::vector<std::size_t>& order);

 private:
  using OpKey = std::pair<std::string, std::string>;  // (op, group)
  struct Stream {
    std::string host;
    std::int32_t rank = 0;
    std::int64_t pid = 0;
    std::map<OpKey, std::uint64_t> calls;  // per op and group
    std::uint64_t kernels = 0;             // NCCL kernels linked to its calls
    std::int64_t device_ns = 0;            // their time
    std::int64_t work_wait_ns = 0;         // in its calls' Work.wait()
    std::uint64_t frame_dropped = 0;       // the frames' running total (the newest)
    std::uint64_t footer_dropped = 0;      // the footers' sum
  };
  struct Arrival {
    std::uint32_t stream = 0;  // index into streams_
    std::uint32_t group_rank = 0;
    std::int64_t wall_ns = 0;
    std::uint64_t bytes = 0;
    std::int64_t device_wall_ns = 0;  // its first NCCL kernel's start, 0 if none is linked
    std::int64_t device_ns = 0;       // its NCCL kernels' time
  };
  struct Instance {
    std::string op;  // arrivals[0]'s
    std::uint32_t group_size = 0;
    std::vector<Arrival> arrivals;
    // Another op at the same sequence number (a desynchronised job), and the stream that called it.
    std::string other_op;
    std::uint32_t other_stream = 0;
  };
  struct OpTotals {
    std::uint32_t group_size = 0;
    std::string dtype;  // the first call's
    std::uint64_t calls = 0;
    std::uint64_t bytes = 0;
    std::int64_t call_ns = 0;
    std::uint64_t kernels = 0;
    std::int64_t device_ns = 0;
    std::uint64_t waits = 0;  // calls whose Work.wait() was recorded
    std::int64_t work_wait_ns = 0;
  };
  // A call of the current stream, until its NCCL launches are linked at EndStream.
  struct Call {
    std::uint32_t tid = 0;
    std::int64_t start_ns = 0;  // on the process's clock, as the launches'
    std::int64_t end_ns = 0;
    OpTotals* op = nullptr;
    Instance* instance = nullptr;  // nullptr: not matched (point-to-point, past kMaxArrivals)
    std::uint32_t arrival = 0;     // its index in instance->arrivals
  };
  // Per instance matched on one clock (the host's arrivals or the kernels' starts).
  struct StreamWaits {
    std::uint64_t matched = 0;
    std::int64_t wait_ns = 0;
    std::uint64_t last_arrivals = 0;
    std::int64_t late_by_ns = 0;  // as the last arriver: after the one before it
  };
  struct OpWaits {
    std::uint64_t matched = 0;
    std::int64_t wait_ns = 0;
    LogHistogram skew;  // last arrival - first arrival, per instance
  };
  struct ClockWaits {
    std::uint64_t matched = 0;
    std::vector<StreamWaits> streams;
    std::map<OpKey, OpWaits> ops;
  };
  // Adds an instance whose arrivals `by_time` are sorted on `clock`.
  static void AddMatched(const std::vector<const Arrival*>& by_time, std::int64_t Arrival::*clock, const OpKey& key,
                         ClockWaits* waits);

  std::vector<std::unique_ptr<Stream>> streams_;
  Stream* stream_ = nullptr;
  std::map<std::pair<std::string, std::uint64_t>, Instance> instances_;  // (group, sequence)
  std::map<OpKey, OpTotals> ops_;
  std::size_t arrivals_ = 0;
  std::uint64_t calls_ = 0;
  std::uint64_t point_to_point_calls_ = 0;
  std::uint64_t calls_not_matched_ = 0;  // past kMaxArrivals
  std::uint64_t dropped_ = 0;            // refused by the profiled process's buffer
  std::uint64_t kernels_linked_ = 0;
  std::uint64_t kernels_not_linked_ = 0;  // no call of their thread contains their launch
  std::vector<Call> stream_calls_;        // the current stream's, until EndStream
  std::vector<CommunicationLaunch> stream_launches_;
  std::vector<internal::CollectiveRow> rows_;  // one frame's, reused
};

}  // namespace smprof::analysis

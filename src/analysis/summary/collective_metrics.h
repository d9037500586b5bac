// CollectiveMetrics: the job's collective calls (trace.proto Collectives),
// matched across ranks by (process group, sequence number): per instance
// each rank's arrival on the job's aligned clock, the last arriver, and each
// rank's wait from its arrival to the last arrival. Written as the summary's
// "collectives" section (docs/ANALYSIS.md).
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
#include "trace/collective_codec.h"
#include "trace/frame_rows.h"

namespace smprof::analysis {

class CollectiveMetrics {
 public:
  // Arrivals kept for matching, at most (about 24 bytes each, plus a map
  // node per instance); calls past it are counted but not matched.
  static constexpr std::size_t kMaxArrivals = std::size_t{1} << 21;

  void BeginStream(const ProcessStream& stream);
  // Adds a frame's collectives; returns false (adding nothing) if the table
  // is inconsistent; `error` says why.
  bool AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, std::string* error);
  // The footer's counts of a file of the current stream.
  void AddFooter(const trace::Footer& footer) { dropped_ += footer.collectives_dropped(); }

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
  };
  struct Arrival {
    std::uint32_t stream = 0;  // index into streams_
    std::uint32_t group_rank = 0;
    std::int64_t wall_ns = 0;
    std::uint64_t bytes = 0;
  };
  struct Instance {
    std::string op;
    std::uint32_t group_size = 0;
    std::vector<Arrival> arrivals;
  };
  struct OpTotals {
    std::uint32_t group_size = 0;
    std::string dtype;  // the first call's
    std::uint64_t calls = 0;
    std::uint64_t bytes = 0;
    std::int64_t call_ns = 0;
  };

  std::vector<std::unique_ptr<Stream>> streams_;
  Stream* stream_ = nullptr;
  std::map<std::pair<std::string, std::uint64_t>, Instance> instances_;  // (group, sequence)
  std::map<OpKey, OpTotals> ops_;
  std::size_t arrivals_ = 0;
  std::uint64_t calls_ = 0;
  std::uint64_t point_to_point_calls_ = 0;
  std::uint64_t calls_not_matched_ = 0;        // past kMaxArrivals
  std::uint64_t dropped_ = 0;                  // refused by the profiled process's buffer (footers)
  std::vector<internal::CollectiveRow> rows_;  // one frame's, reused
};

}  // namespace smprof::analysis

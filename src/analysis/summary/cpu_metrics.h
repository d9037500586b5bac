// CpuMetrics: CPU utilization and active time from the CPU sampler's
// counters (cpu.utilization, cpuN.utilization; docs/TRACE_FORMAT.md).
// Each sample covers the interval since the previous sample of its counter
// (the first: since the file's start anchor). Every process on a host samples
// the same machine, so per host the stream with the most samples is used.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/base/json_writer.h"
#include "analysis/base/partial_codec.h"
#include "analysis/base/time_buckets.h"
#include "analysis/job/job_reader.h"
#include "analysis/job/summary_options.h"
#include "trace/frame_rows.h"

namespace smprof::analysis {

class CpuMetrics {
 public:
  CpuMetrics(std::int64_t origin_ns, int max_buckets) : origin_ns_(origin_ns), max_buckets_(max_buckets) {}

  void BeginStream(const ProcessStream& stream);
  void BeginFile(const TraceFileEntry& file);
  // Returns false if the frame's counters are inconsistent (`error` says why).
  bool AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span, std::string* error);

  // Mean cpu.utilization of the current stream, or negative without samples.
  double stream_utilization_percent() const;
  std::int64_t min_bucket_width() const;

  // The "cpu" object, and the timeline's "cpu_per_node" list.
  void WriteCpu(JsonWriter& out) const;
  void WriteTimeline(std::int64_t width_ns, int buckets, JsonWriter& out) const;

  // Partial summaries (docs/ANALYSIS.md): Save writes the state after a
  // stream; MergeFrom appends a saved state's streams (CPU metrics are all
  // per stream); ReorderStreams puts the streams in `order`.
  void Save(PartialEncoder& out) const;
  void MergeFrom(PartialDecoder& in);
  void ReorderStreams(const std::vector<std::size_t>& order);

 private:
  struct Weighted {
    double value_x_ns = 0;  // Σ value x interval
    std::int64_t ns = 0;    // Σ interval
  };
  struct StreamCpu {
    std::string host;
    std::int32_t rank = 0;
    std::int64_t pid = 0;
    std::uint64_t samples = 0;  // of cpu.utilization
    Weighted machine;
    std::map<int, Weighted> cores;
    std::unique_ptr<BucketSeries> weighted_percent;  // Σ value x interval per bucket
    std::unique_ptr<BucketSeries> weight_ns;         // Σ interval per bucket
  };
  // The stream chosen for each host: the one with the most samples.
  std::vector<const StreamCpu*> HostSources() const;

  std::int64_t origin_ns_;
  int max_buckets_;
  std::vector<std::unique_ptr<StreamCpu>> streams_;
  StreamCpu* stream_ = nullptr;
  std::int64_t file_start_ns_ = 0;
  std::unordered_map<std::string, std::int64_t> last_ts_;  // per counter, this file
};

}  // namespace smprof::analysis

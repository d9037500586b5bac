// StepProfile: what each step of each process stream is made of, for
// `smprof diagnose` (docs/ANALYSIS.md "step_profile", docs/DIAGNOSE.md).
//
// Per stream it keeps the first `max_profiled_steps` steps, each with its
// duration, the gap since the previous step ended, its phases (the
// annotations one level under the step on the step's thread, and those at
// the step's own level between the previous step and this one), its
// input-pipeline wait (annotations matching the data pattern) and the
// counters sampled during it (machine CPU utilization, the process's CPU,
// page faults and context switches when perf counted them). Totals cover
// every step. Memory is bounded: the kept steps, the distinct names, and
// the annotations and samples waiting for the step that closes over them
// (a frame's annotations are sorted by start and a step closes as soon as
// the frame's next row starts after it ends, so only those of the steps
// still open wait; capped at kMaxPending, oldest dropped first and counted).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/base/fifo.h"
#include "analysis/base/json_writer.h"
#include "analysis/base/partial_codec.h"
#include "analysis/job/job_reader.h"
#include "analysis/job/step_matcher.h"
#include "analysis/job/summary_options.h"
#include "trace/frame_codec.h"

namespace smprof::analysis {

class StepProfile {
 public:
  static constexpr std::size_t kMaxPending = std::size_t{1} << 16;
  // Phases written per stream: the longest by total time, and every data
  // wait; the others are one "(other phases)" entry, in each step too, so
  // that a job of 200,000 distinct names writes a summary of bounded size.
  static constexpr std::size_t kMaxPhasesWritten = 64;
  static constexpr std::string_view kOtherPhases = "(other phases)";

  explicit StepProfile(const SummaryOptions& options);

  void BeginStream(const ProcessStream& stream);
  // One frame's rows, on the stream's monotonic clock; `wall_offset_ns` maps them to the wall clock.
  void AddFrame(const std::vector<internal::AnnotationRow>& annotations,
                const std::vector<internal::CounterRow>& counters, std::int64_t wall_offset_ns);

  void Write(JsonWriter& out) const;  // the "step_profile" object

  // Partial summaries (docs/ANALYSIS.md): Save writes the state after a
  // stream (its kept steps and totals; nothing waits once it ended);
  // MergeFrom appends a saved state's streams; ReorderStreams puts the
  // streams in `order`.
  void Save(PartialEncoder& out) const;
  void MergeFrom(PartialDecoder& in);
  void ReorderStreams(const std::vector<std::size_t>& order);

 private:
  enum class Kind { kStep, kData, kOther };
  struct Name {
    std::string text;
    Kind kind = Kind::kOther;
    std::int64_t step_number = -1;
  };
  struct PendingAnnotation {
    const Name* name;
    std::int64_t start_ns;  // wall
    std::int64_t end_ns;
    std::uint32_t tid;
    std::uint32_t depth;
  };
  // A counter sample reduced to what a step sums: value x interval for the
  // utilization shares, the increase since the previous sample for perf counts.
  enum Counter { kMachineCpu, kProcessCpu, kPageFaults, kContextSwitches, kCounters };
  struct Sample {
    std::int64_t ts_ns;  // wall
    Counter counter;
    double amount;        // Σ value x interval, or the count's increase
    std::int64_t weight;  // the interval (utilization), 0 for counts
  };
  struct CounterSum {
    double amount = 0;
    std::int64_t weight = 0;
    bool seen = false;
  };
  struct Step {
    std::int64_t number = 0;
    std::int64_t start_ns = 0;  // wall
    std::int64_t dur_ns = 0;
    std::int64_t gap_before_ns = 0;
    std::int64_t data_wait_ns = 0;
    std::vector<std::pair<const Name*, std::int64_t>> phases;
    CounterSum counters[kCounters];
  };
  struct Stream {
    std::string host;
    std::int32_t rank = 0;
    std::int64_t pid = 0;
    std::int64_t worker_of_pid = 0;
    std::uint64_t steps_seen = 0;
    std::int64_t step_time_ns = 0;                 // Σ over every step seen
    std::int64_t data_wait_ns = 0;                 // Σ over every step seen
    std::map<const Name*, std::int64_t> phase_ns;  // Σ over every step seen
    std::vector<Step> steps;                       // the first max_profiled_steps
    std::int64_t last_step_end_ns = INT64_MIN;
    Fifo<PendingAnnotation> pending;
    Fifo<Sample> pending_samples;
    std::uint64_t pending_dropped = 0;
    CounterSum totals[kCounters];  // over the whole stream
    double max_threads = 0;
    std::int64_t last_ts_ns[kCounters] = {};  // 0: no sample yet
    double last_value[kCounters] = {};
  };

  const Name* NameOf(std::string_view name);
  void CloseStep(const internal::AnnotationRow& row, const Name* name, std::int64_t wall_offset_ns);
  void AddSample(const internal::CounterRow& row, std::int64_t wall_offset_ns);
  static void AddTo(CounterSum* sums, const Sample& sample);
  static void WriteCounters(const CounterSum* sums, JsonWriter& out);
  static void SaveCounters(const CounterSum* sums, PartialEncoder& out);
  static void RestoreCounters(PartialDecoder& in, CounterSum* sums);  // kCounterKeys: mean share or count

  std::int64_t max_steps_;
  StepMatcher steps_matcher_;
  std::regex data_wait_pattern_;
  std::string data_wait_pattern_text_;
  std::unordered_map<std::string, std::unique_ptr<Name>> names_;
  std::vector<const Name*> frame_names_;
  std::vector<const internal::AnnotationRow*> frame_steps_;        // AddFrame's: the frame's steps, in row order
  std::vector<std::pair<const Name*, std::int64_t>> phases_;       // CloseStep's, reused
  std::unordered_map<const Name*, std::size_t> phase_index_;       // into phases_, reused
  std::vector<std::pair<std::int64_t, std::int64_t>> data_waits_;  // CloseStep's [start, end), reused
  std::vector<std::unique_ptr<Stream>> streams_;
  Stream* stream_ = nullptr;
};

}  // namespace smprof::analysis

#include "session/clock_alignment_log.h"

#include <mutex>
#include <vector>

#include "runtime/clock_anchor.h"
#include "smprof/clock_alignment.h"
#include "smprof/smprof.h"

namespace smprof {

namespace internal {

namespace {

// A bound on a session's rounds: a schedule alone records two per cycle.
constexpr std::size_t kMaxRounds = 4096;
// A bound on one round's samples.
constexpr std::size_t kMaxSamples = 1024;

struct AlignmentLog {
  std::mutex mutex;
  std::vector<trace::ClockAlignment> rounds;
};

AlignmentLog& Log() {
  static auto* log = new AlignmentLog();  // leaked: usable from exit handlers
  return *log;
}

}  // namespace

void ClearClockAlignments() {
  AlignmentLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.rounds.clear();
}

void AddClockAlignmentsTo(trace::Footer* footer) {
  AlignmentLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mutex);
  for (const trace::ClockAlignment& round : log.rounds) *footer->add_clock_alignments() = round;
}

}  // namespace internal

Status RecordClockAlignment(const ClockAlignment& alignment) {
  if (!IsProfiling()) return Status(StatusCode::kFailedPrecondition, "profiling is not running");
  if (alignment.samples.size() > internal::kMaxSamples) {
    return Status(StatusCode::kInvalidArgument,
                  "a clock alignment holds at most " + std::to_string(internal::kMaxSamples) + " samples");
  }
  trace::ClockAlignment round;
  round.set_phase(alignment.phase);
  round.set_reference_rank(alignment.reference_rank);
  round.set_reference_host(alignment.reference_host);
  round.set_reference_clock_offset_ns(alignment.reference_clock_offset_ns);
  round.set_problem(alignment.problem);
  for (const ClockSample& s : alignment.samples) {
    trace::ClockSample* out = round.add_samples();
    out->set_local_send_ns(s.local_send_ns);
    out->set_reference_receive_ns(s.reference_receive_ns);
    out->set_reference_send_ns(s.reference_send_ns);
    out->set_local_receive_ns(s.local_receive_ns);
  }
  internal::AlignmentLog& log = internal::Log();
  std::lock_guard<std::mutex> lock(log.mutex);
  if (log.rounds.size() >= internal::kMaxRounds) {
    return Status(StatusCode::kFailedPrecondition,
                  "the session already holds " + std::to_string(internal::kMaxRounds) + " clock alignments");
  }
  log.rounds.push_back(std::move(round));
  return Status::Ok();
}

std::int64_t ClockOffsetNs() {
  const internal::ClockPair pair = internal::ReadClockPair();
  return pair.realtime_ns - pair.monotonic_ns;
}

}  // namespace smprof

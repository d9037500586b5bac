// One clock across hosts: each process stream's correction onto the
// reference process's wall clock (rank 0), from the clock-alignment rounds in
// its footer (proto ClockAlignment; docs/ANALYSIS.md, "One clock across
// hosts").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smprof/trace.pb.h"

namespace smprof::analysis {

struct ClockCorrection {
  // Added to the stream's own wall times (its files' anchors).
  std::int64_t correction_ns = 0;
  // The true offset lies within correction_ns +- uncertainty_ns.
  std::int64_t uncertainty_ns = 0;
  // True when measured (or the stream is the reference itself).
  bool aligned = false;
  // What went wrong in a round, or why the stream is not aligned; "" when
  // aligned without trouble, or (CorrectionFromRounds) when no round was
  // recorded.
  std::string problem;
};

// The best sample of each round (the smallest round trip) gives the round's
// correction: offset + reference_clock_offset_ns - own_wall_offset_ns, within
// half the round trip. Several rounds (start, stop) are averaged; their
// spread (clock drift) widens the uncertainty. A round without samples whose
// reference is `own_rank` is the reference's own: correction 0.
ClockCorrection CorrectionFromRounds(const std::vector<trace::ClockAlignment>& rounds, std::int32_t own_rank,
                                     std::int64_t own_wall_offset_ns);

}  // namespace smprof::analysis

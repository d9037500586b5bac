#include "analysis/job/clock_correction.h"

#include <algorithm>
#include <limits>

namespace smprof::analysis {

namespace {

struct RoundResult {
  std::int64_t correction_ns;
  std::int64_t uncertainty_ns;
};

// The round's best sample; false when none is usable (a negative round trip).
bool BestSample(const trace::ClockAlignment& round, std::int64_t own_wall_offset_ns, RoundResult* out) {
  std::int64_t best_uncertainty = std::numeric_limits<std::int64_t>::max();
  for (const trace::ClockSample& s : round.samples()) {
    const std::int64_t round_trip =
        (s.local_receive_ns() - s.local_send_ns()) - (s.reference_send_ns() - s.reference_receive_ns());
    if (round_trip < 0 || s.local_receive_ns() < s.local_send_ns()) continue;
    const std::int64_t uncertainty = (round_trip + 1) / 2;
    if (uncertainty >= best_uncertainty) continue;
    best_uncertainty = uncertainty;
    const std::int64_t offset =
        ((s.reference_receive_ns() - s.local_send_ns()) + (s.reference_send_ns() - s.local_receive_ns())) / 2;
    *out = RoundResult{offset + round.reference_clock_offset_ns() - own_wall_offset_ns, uncertainty};
  }
  return best_uncertainty != std::numeric_limits<std::int64_t>::max();
}

}  // namespace

ClockCorrection CorrectionFromRounds(const std::vector<trace::ClockAlignment>& rounds, std::int32_t own_rank,
                                     std::int64_t own_wall_offset_ns) {
  ClockCorrection out;
  std::vector<RoundResult> measured;
  bool reference = false;
  for (const trace::ClockAlignment& round : rounds) {
    if (!round.problem().empty() && out.problem.empty()) out.problem = round.phase() + ": " + round.problem();
    if (round.samples_size() == 0) {
      reference = reference || round.reference_rank() == own_rank;
      continue;
    }
    RoundResult result{};
    if (BestSample(round, own_wall_offset_ns, &result)) {
      measured.push_back(result);
    } else if (out.problem.empty()) {
      out.problem = round.phase() + ": no usable sample (every round trip is negative)";
    }
  }
  if (!measured.empty()) {
    std::int64_t low = measured.front().correction_ns;
    std::int64_t high = low;
    std::int64_t worst = 0;
    // Summed as differences from the first, so that large offsets cannot overflow.
    std::int64_t sum_from_low = 0;
    for (const RoundResult& r : measured) {
      low = std::min(low, r.correction_ns);
      high = std::max(high, r.correction_ns);
      worst = std::max(worst, r.uncertainty_ns);
      sum_from_low += r.correction_ns - measured.front().correction_ns;
    }
    out.correction_ns = measured.front().correction_ns + sum_from_low / static_cast<std::int64_t>(measured.size());
    out.uncertainty_ns = worst + (high - low + 1) / 2;
    out.aligned = true;
  } else if (reference) {
    out.aligned = true;
  }
  return out;
}

}  // namespace smprof::analysis

#include "collectors/cuda/cupti_clock.h"

#include <algorithm>

#include "smprof/annotate.h"

namespace smprof::internal {

CuptiClock::CuptiClock(ReadFn read, std::size_t max_pairs)
    : read_(read), max_pairs_(std::max<std::size_t>(1, max_pairs)) {
  Sample();
}

void CuptiClock::Sample() {
  if (read_ == nullptr) return;
  // The CUPTI read between two monotonic reads: its pair is their midpoint.
  const std::int64_t before = NowNs();
  std::uint64_t cupti_ns = 0;
  if (read_(&cupti_ns) != CUPTI_SUCCESS || cupti_ns == 0) return;
  const std::int64_t after = NowNs();
  const std::int64_t monotonic_ns = before + (after - before) / 2;
  const Pair pair{cupti_ns, monotonic_ns - static_cast<std::int64_t>(cupti_ns)};
  std::lock_guard<std::mutex> lock(mutex_);
  // CUPTI's clock stepped back (CLOCK_REALTIME set): the earlier pairs'
  // stamps are ambiguous with the new ones; the new offset holds from now.
  if (!pairs_.empty() && pair.cupti_ns <= pairs_.back().cupti_ns) pairs_.clear();
  pairs_.push_back(pair);
  if (pairs_.size() > max_pairs_) pairs_.pop_front();
}

std::int64_t CuptiClock::ToSession(std::uint64_t cupti_ns) const {
  const auto ns = static_cast<std::int64_t>(cupti_ns);
  if (read_ == nullptr) return ns;
  std::lock_guard<std::mutex> lock(mutex_);
  if (pairs_.empty()) return ns;
  auto after = std::lower_bound(pairs_.begin(), pairs_.end(), cupti_ns,
                                [](const Pair& p, std::uint64_t t) { return p.cupti_ns < t; });
  if (after == pairs_.end()) return ns + pairs_.back().offset_ns;
  if (after == pairs_.begin()) return ns + after->offset_ns;
  const auto before = std::prev(after);
  const bool nearer_before = cupti_ns - before->cupti_ns <= after->cupti_ns - cupti_ns;
  return ns + (nearer_before ? before : after)->offset_ns;
}

std::size_t CuptiClock::pairs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pairs_.size();
}

}  // namespace smprof::internal

#include "runtime/clock_anchor.h"

#include <cstdlib>
#include <ctime>
#include <limits>

namespace smprof::internal {

namespace {

std::int64_t Read(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// SMPROF_TEST_REALTIME_SHIFT_NS (tests only): nanoseconds added to every
// CLOCK_REALTIME reading, to give a process a clock offset on purpose.
std::int64_t RealtimeShiftNs() {
  static const std::int64_t shift = [] {
    const char* value = std::getenv("SMPROF_TEST_REALTIME_SHIFT_NS");
    return value != nullptr ? std::strtoll(value, nullptr, 10) : 0;
  }();
  return shift;
}

}  // namespace

ClockPair ReadClockPair() {
  ClockPair best{};
  std::int64_t best_gap = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 5; ++i) {
    const std::int64_t before = Read(CLOCK_MONOTONIC);
    const std::int64_t real = Read(CLOCK_REALTIME);
    const std::int64_t after = Read(CLOCK_MONOTONIC);
    if (after - before < best_gap) {
      best_gap = after - before;
      best = ClockPair{before + (after - before) / 2, real + RealtimeShiftNs()};
    }
  }
  return best;
}

}  // namespace smprof::internal

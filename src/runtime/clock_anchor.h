// Reads CLOCK_MONOTONIC (the trace timebase) and CLOCK_REALTIME back to back,
// keeping the pair read with the smallest gap, so tools can map trace times
// onto wall-clock time and put ranks and hosts on one clock.
#pragma once

#include <cstdint>

namespace smprof::internal {

struct ClockPair {
  std::int64_t monotonic_ns;
  std::int64_t realtime_ns;
};

ClockPair ReadClockPair();

}  // namespace smprof::internal

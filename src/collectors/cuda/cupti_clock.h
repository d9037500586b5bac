// CuptiClock: CUPTI's timestamps on the session's timebase (CLOCK_MONOTONIC).
//
// Where smprof's timestamp callback is registered, CUPTI already stamps
// records with CLOCK_MONOTONIC and the clock is the identity. Where it is
// not (another client's CUPTI, or a CUPTI with the zero-timestamp bug of
// cuptiActivityRegisterTimestampCallback, docs/GPU.md "Timebase"), CUPTI
// stamps with its default clock (CLOCK_REALTIME on Linux), which NTP slews
// and steps. The clock keeps pairs (cuptiGetTimestamp, CLOCK_MONOTONIC) read
// back to back: at start, every drain frame, before each buffer is decoded
// and at stop. A record is converted with the offset of the pair nearest to
// its own CUPTI timestamp, so a slew or a step moves only the records around
// it.
//
// Thread safety: Sample and ToSession may be called from any thread.
#pragma once

#include <cupti_result.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

namespace smprof::internal {

class CuptiClock {
 public:
  using ReadFn = CUptiResult (*)(std::uint64_t* ns);  // cuptiGetTimestamp

  // The identity: CUPTI stamps with smprof's own timestamp callback.
  CuptiClock() = default;
  // Converts the clock `read` returns; samples its first pair now.
  explicit CuptiClock(ReadFn read, std::size_t max_pairs = 4096);

  // Reads one more pair (nothing for the identity or when `read` fails).
  void Sample();
  std::int64_t ToSession(std::uint64_t cupti_ns) const;
  bool identity() const { return read_ == nullptr; }
  std::size_t pairs() const;

 private:
  struct Pair {
    std::uint64_t cupti_ns;
    std::int64_t offset_ns;  // session ns - CUPTI ns
  };

  const ReadFn read_ = nullptr;
  const std::size_t max_pairs_ = 0;
  mutable std::mutex mutex_;
  std::deque<Pair> pairs_;  // ascending cupti_ns
};

}  // namespace smprof::internal

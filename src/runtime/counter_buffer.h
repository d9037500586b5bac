// CounterBuffer: counter samples on their way from the samplers to the drain.
//
// Samplers add a few hundred samples a second at most, so a mutex is fine
// here; the buffer is bounded, and samples past the bound are dropped and
// counted like annotations.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "trace/records.h"

namespace smprof::internal {

class CounterBuffer {
 public:
  explicit CounterBuffer(std::size_t max_samples) : max_samples_(max_samples) {}

  // The id of the track `name`, registering it on first use.
  std::uint32_t Track(const std::string& name, const std::string& unit, double resolution);
  CounterTrackInfo TrackInfo(std::uint32_t track) const;

  void Add(std::uint32_t track, std::int64_t ts_ns, double value);

  // Moves every buffered sample into `out` (appending) and returns how many
  // were dropped since the last call.
  std::uint64_t Take(std::vector<CounterSample>* out);

 private:
  const std::size_t max_samples_;
  mutable std::mutex mutex_;
  std::vector<CounterTrackInfo> tracks_;
  std::vector<CounterSample> samples_;
  std::uint64_t dropped_ = 0;
};

}  // namespace smprof::internal

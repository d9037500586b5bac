// CounterBuffer: counter samples on their way from the samplers to the drain.
//
// The samples go through a BoundedBuffer; the tracks are registered here.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/bounded_buffer.h"
#include "trace/records.h"

namespace smprof::internal {

class CounterBuffer {
 public:
  explicit CounterBuffer(std::size_t max_samples) : samples_(max_samples) {}

  // The id of the track `name`, registering it on first use.
  std::uint32_t Track(const std::string& name, const std::string& unit, double resolution);
  CounterTrackInfo TrackInfo(std::uint32_t track) const;

  void Add(std::uint32_t track, std::int64_t ts_ns, double value) { samples_.Add(CounterSample{track, ts_ns, value}); }

  // Moves every buffered sample into `out` (appending) and returns how many
  // were dropped since the last call.
  std::uint64_t Take(std::vector<CounterSample>* out) { return samples_.Take(out); }

 private:
  mutable std::mutex mutex_;  // guards tracks_
  std::vector<CounterTrackInfo> tracks_;
  BoundedBuffer<CounterSample> samples_;
};

}  // namespace smprof::internal

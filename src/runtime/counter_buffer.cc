#include "runtime/counter_buffer.h"

namespace smprof::internal {

std::uint32_t CounterBuffer::Track(const std::string& name, const std::string& unit, double resolution) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    if (tracks_[i].name == name) return static_cast<std::uint32_t>(i);
  }
  tracks_.push_back(CounterTrackInfo{name, unit, resolution});
  return static_cast<std::uint32_t>(tracks_.size() - 1);
}

CounterTrackInfo CounterBuffer::TrackInfo(std::uint32_t track) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return track < tracks_.size() ? tracks_[track] : CounterTrackInfo{};
}

}  // namespace smprof::internal

// BoundedBuffer: records on their way from a producer that adds a few
// hundred a second at most (the samplers, the collective hooks) to the drain.
// A mutex is fine at that rate; the buffer is bounded, and records past the
// bound are dropped and counted like annotations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace smprof::internal {

template <typename Record>
class BoundedBuffer {
 public:
  explicit BoundedBuffer(std::size_t max_records) : max_records_(max_records) {}

  void Add(Record record) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (records_.size() >= max_records_) {
      ++dropped_;
      return;
    }
    records_.push_back(std::move(record));
  }

  // Moves every buffered record into `out` (appending) and returns how many
  // were dropped since the last call.
  std::uint64_t Take(std::vector<Record>* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    out->insert(out->end(), std::make_move_iterator(records_.begin()), std::make_move_iterator(records_.end()));
    records_.clear();
    const std::uint64_t dropped = dropped_;
    dropped_ = 0;
    return dropped;
  }

  // Held across fork() (pthread_atfork), so the child's copy is unlocked.
  void LockForFork() { mutex_.lock(); }
  void UnlockAfterFork() { mutex_.unlock(); }

 private:
  const std::size_t max_records_;
  std::mutex mutex_;
  std::vector<Record> records_;
  std::uint64_t dropped_ = 0;
};

}  // namespace smprof::internal

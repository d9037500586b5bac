#include "collectors/cuda/activity_buffer_pool.h"

#include <cstdlib>

namespace smprof::internal {

namespace {

std::uint8_t* Allocate(std::size_t bytes) {
  return static_cast<std::uint8_t*>(std::aligned_alloc(ActivityBufferPool::kAlignment, bytes));
}

std::size_t RoundUpToAlignment(std::size_t bytes) {
  const std::size_t a = ActivityBufferPool::kAlignment;
  return (bytes + a - 1) / a * a;  // aligned_alloc needs a multiple of the alignment
}

}  // namespace

ActivityBufferPool::ActivityBufferPool(std::size_t buffer_bytes, std::size_t max_buffers)
    : buffer_bytes_(RoundUpToAlignment(buffer_bytes)), max_buffers_(max_buffers) {}

ActivityBufferPool::~ActivityBufferPool() {
  for (std::uint8_t* buffer : free_) std::free(buffer);
}

std::uint8_t* ActivityBufferPool::Acquire(bool may_exceed_cap) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!free_.empty()) {
    std::uint8_t* buffer = free_.back();
    free_.pop_back();
    ++in_use_;
    return buffer;
  }
  const bool beyond_cap = allocated_ >= max_buffers_;
  if (beyond_cap && !may_exceed_cap) {
    ++refused_;
    return nullptr;
  }
  std::uint8_t* buffer = Allocate(buffer_bytes_);
  if (buffer == nullptr) {
    ++refused_;
    return nullptr;
  }
  ++allocated_;
  ++in_use_;
  if (beyond_cap) ++over_cap_;
  return buffer;
}

void ActivityBufferPool::Release(std::uint8_t* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  --in_use_;
  if (allocated_ > max_buffers_) {  // a buffer lent beyond the cap: the pool shrinks back
    --allocated_;
    std::free(buffer);
    return;
  }
  free_.push_back(buffer);
}

std::size_t ActivityBufferPool::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

std::uint64_t ActivityBufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

std::uint64_t ActivityBufferPool::over_cap() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return over_cap_;
}

std::size_t ActivityBufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_;
}

}  // namespace smprof::internal

#include "collectors/cuda/activity_buffer_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace smprof::internal {

namespace {

std::uint8_t* AllocateZeroed(std::size_t bytes) {
  auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(ActivityBufferPool::kAlignment, bytes));
  if (buffer != nullptr) std::memset(buffer, 0, bytes);
  return buffer;
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
    lent_.insert(buffer);
    return buffer;
  }
  const bool beyond_cap = allocated_ >= max_buffers_;
  if (beyond_cap && !may_exceed_cap) {
    ++refused_;
    return nullptr;
  }
  std::uint8_t* buffer = AllocateZeroed(buffer_bytes_);
  if (buffer == nullptr) {
    ++refused_;
    return nullptr;
  }
  ++allocated_;
  lent_.insert(buffer);
  if (beyond_cap) ++over_cap_;
  return buffer;
}

bool ActivityBufferPool::Release(std::uint8_t* buffer) {
  if (buffer == nullptr) return true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (lent_.erase(buffer) == 0) {
      ++foreign_;
      return false;
    }
    if (allocated_ > max_buffers_) {  // a buffer lent beyond the cap: the pool shrinks back
      --allocated_;
      std::free(buffer);
      return true;
    }
  }
  // The whole buffer: CUPTI is told buffers come zeroed, and it may have
  // written past the valid size it reported. Outside the lock: no one else has it.
  std::memset(buffer, 0, buffer_bytes_);
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);
  return true;
}

void ActivityBufferPool::FreeIdle() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::uint8_t* buffer : free_) std::free(buffer);
  allocated_ -= free_.size();
  free_.clear();
}

std::size_t ActivityBufferPool::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lent_.size();
}

std::uint64_t ActivityBufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

std::uint64_t ActivityBufferPool::over_cap() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return over_cap_;
}

std::uint64_t ActivityBufferPool::foreign() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return foreign_;
}

std::size_t ActivityBufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_;
}

}  // namespace smprof::internal

#include "runtime/chunk_pool.h"

#include <new>

namespace smprof::internal {

ChunkPool::~ChunkPool() {
  while (free_ != nullptr) {
    Chunk* next = free_->next_free;
    delete free_;
    free_ = next;
  }
}

void ChunkPool::SetCapacity(std::size_t chunks) {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = chunks;
  while (free_ != nullptr && allocated_ > capacity_) {
    Chunk* next = free_->next_free;
    delete free_;
    free_ = next;
    --allocated_;
  }
  exhausted_.store(in_use_ >= capacity_, std::memory_order_relaxed);
}

Chunk* ChunkPool::Acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  Chunk* chunk = nullptr;
  if (free_ != nullptr) {
    chunk = free_;
    free_ = chunk->next_free;
  } else if (allocated_ < capacity_) {
    chunk = new (std::nothrow) Chunk();
    if (chunk != nullptr) ++allocated_;
  }
  if (chunk == nullptr) {
    exhausted_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  chunk->next_free = nullptr;
  ++in_use_;
  return chunk;
}

void ChunkPool::Release(Chunk* chunk) {
  chunk->committed.store(0, std::memory_order_relaxed);
  chunk->consumed = 0;
  chunk->sealed.store(false, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  --in_use_;
  if (allocated_ > capacity_) {
    delete chunk;
    --allocated_;
  } else {
    chunk->next_free = free_;
    free_ = chunk;
  }
  exhausted_.store(false, std::memory_order_relaxed);
}

void ChunkPool::ForgetInUse() {
  std::lock_guard<std::mutex> lock(mutex_);
  allocated_ -= in_use_;
  in_use_ = 0;
  exhausted_.store(false, std::memory_order_relaxed);
}

std::size_t ChunkPool::capacity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_;
}

std::size_t ChunkPool::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

std::size_t ChunkPool::allocated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_;
}

}  // namespace smprof::internal

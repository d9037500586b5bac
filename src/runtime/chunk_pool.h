// ChunkPool: the bounded memory behind every thread buffer.
//
// Capacity is BucketCount x BucketSizeMB, counted in 64 KiB chunks. Chunks are
// allocated on first use and recycled; when all are in use Acquire() returns
// nullptr and the caller drops its event. Memory never grows past capacity.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>

#include "runtime/chunk.h"

namespace smprof::internal {

class ChunkPool {
 public:
  ChunkPool() = default;
  ~ChunkPool();
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  // Takes effect for later Acquire/Release calls; chunks over a lowered
  // capacity are freed as they come back.
  void SetCapacity(std::size_t chunks);

  // A cleared chunk, or nullptr when the pool is exhausted.
  Chunk* Acquire();
  void Release(Chunk* chunk);
  // Forgets the chunks in use without freeing them (a forked child's copies).
  void ForgetInUse();

  // Cheap hint for producers that have been refused: false while exhausted.
  bool MaybeAvailable() const { return !exhausted_.load(std::memory_order_relaxed); }

  std::size_t capacity() const;
  std::size_t in_use() const;
  std::size_t allocated() const;

  // For fork safety: held across fork() by the session's atfork handlers.
  std::mutex& mutex() { return mutex_; }

 private:
  mutable std::mutex mutex_;
  Chunk* free_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t allocated_ = 0;
  std::size_t in_use_ = 0;
  std::atomic<bool> exhausted_{false};
};

}  // namespace smprof::internal

// The unit of per-thread event storage: a 64 KiB chunk of fixed-size records.
//
// One producer (the owning thread) appends records and publishes them with a
// release store of `committed`; one consumer (the drain thread) reads the
// records in [consumed, committed). Only the drain thread ever releases a
// chunk back to the pool, so a chunk it can see stays valid while it reads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "trace/records.h"

namespace smprof::internal {

inline constexpr std::size_t kChunkBytes = 64 * 1024;

struct alignas(64) Chunk {
  static constexpr std::uint32_t kCapacity = (kChunkBytes - 64) / sizeof(AnnotationRecord);

  std::atomic<std::uint32_t> committed{0};  // written by the producer
  std::uint32_t consumed = 0;               // drain thread only
  std::atomic<bool> sealed{false};          // producer is done with it
  Chunk* next_free = nullptr;               // pool free list only
  alignas(64) AnnotationRecord records[kCapacity];
};
static_assert(sizeof(Chunk) == kChunkBytes, "a chunk is exactly kChunkBytes");

}  // namespace smprof::internal

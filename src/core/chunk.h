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

namespace smprof::internal {

// A closed annotation range as the hot path writes it.
struct AnnotationRecord {
  std::int64_t start_ns;
  std::int64_t dur_ns;
  std::uint32_t name;
  std::uint32_t tid;  // the thread that opened the range
  std::uint16_t depth;
  std::uint16_t flags;
  std::uint32_t reserved;
};
static_assert(sizeof(AnnotationRecord) == 32, "two records per cache line");

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

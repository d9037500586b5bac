// ActivityBufferPool: the buffers CUPTI fills with activity records.
//
// CUPTI asks for an empty buffer from its buffer-requested callback and hands
// it back, full, to the buffer-completed callback, possibly on several threads
// at once. The pool bounds how much memory that takes: at most `max_buffers`
// buffers of `buffer_bytes` each, allocated on first use and reused. When all
// are out, Acquire refuses (CUPTI then drops records and counts them in
// cuptiActivityGetNumDroppedRecords) and the refusal is counted here.
//
// Buffers are handed out zeroed (CUPTI is told so, and skips zeroing them on
// the application's thread): new ones are allocated zeroed, and a returned
// one is cleared over the bytes CUPTI wrote before it is lent again.
//
// Only buffers this pool lent are taken back: another CUPTI client's buffer
// (Kineto's, delivered to our callback after it re-registered its own) is
// refused and counted, never freed or reused.
//
// Refusing is only safe on CUPTI from CUDA 12.9 on; for older CUPTI the
// collector calls Acquire with `may_exceed_cap`, which allocates a buffer
// beyond the cap instead and frees it when it comes back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace smprof::internal {

class ActivityBufferPool {
 public:
  // CUPTI needs 8-byte aligned buffers; these are aligned to this.
  static constexpr std::size_t kAlignment = 64;

  ActivityBufferPool(std::size_t buffer_bytes, std::size_t max_buffers);
  ~ActivityBufferPool();
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  // An empty buffer of buffer_bytes(), or nullptr when the pool is exhausted
  // (and `may_exceed_cap` is false).
  std::uint8_t* Acquire(bool may_exceed_cap);
  // Takes back a buffer from Acquire, zeroed whole for its next loan; false
  // (and counted) for a buffer this pool did not lend.
  bool Release(std::uint8_t* buffer);

  // Frees the buffers not lent now; the pool stays usable (for a pool a
  // resized successor replaces, while a late buffer may still come back).
  void FreeIdle();

  std::size_t buffer_bytes() const { return buffer_bytes_; }
  std::size_t max_buffers() const { return max_buffers_; }
  std::size_t in_use() const;
  std::uint64_t refused() const;   // Acquire calls that returned nullptr
  std::uint64_t over_cap() const;  // buffers allocated beyond the cap
  std::size_t allocated() const;   // buffers that exist now (in use or free)
  std::uint64_t foreign() const;   // Release calls with a buffer not lent

 private:
  const std::size_t buffer_bytes_;
  const std::size_t max_buffers_;
  mutable std::mutex mutex_;
  std::vector<std::uint8_t*> free_;
  std::unordered_set<std::uint8_t*> lent_;
  std::size_t allocated_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t over_cap_ = 0;
  std::uint64_t foreign_ = 0;
};

}  // namespace smprof::internal

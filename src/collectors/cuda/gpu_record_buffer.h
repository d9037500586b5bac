// GpuRecordBuffer: decoded GPU records on their way from CUPTI's
// buffer-completed callbacks to the drain thread.
//
// Bounded by a record count (the session sizes it from the config). Buffers
// complete concurrently on several CUPTI threads, so Add takes a lock; it
// only moves vectors, never copies rows. A batch that does not fit is
// dropped whole and its records counted; device and context records are
// always kept (a handful per process, and every row refers to them). The
// drain takes everything at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "trace/records.h"

namespace smprof::internal {

class GpuRecordBuffer {
 public:
  explicit GpuRecordBuffer(std::size_t max_records) : max_records_(max_records) {}

  // Takes the batch's records if they fit; returns false (and counts them
  // as dropped) if they did not.
  bool Add(GpuBatch&& batch);

  // Counts records lost before they reached the buffer (a buffer request
  // smprof refused), so every smprof-side loss lands in one total.
  void CountDropped(std::uint64_t records);

  // Moves every buffered batch into `out` (appending) and returns how many
  // records were dropped since the last call.
  std::uint64_t Take(std::vector<GpuBatch>* out);

  std::size_t size() const;  // records buffered now

 private:
  const std::size_t max_records_;
  mutable std::mutex mutex_;
  std::vector<GpuBatch> batches_;
  std::size_t records_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace smprof::internal

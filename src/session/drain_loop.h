// The drain thread's work: empty the thread buffers, the counter buffer and
// the collective calls (CollectiveRecords) into frames, every flush interval or when the pool fills, until stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "runtime/counter_buffer.h"

namespace smprof::internal {

struct DrainResult {
  std::uint64_t written = 0;              // annotations
  std::uint64_t dropped = 0;              // annotations refused by the full buffer pool
  std::uint64_t refused_open_ranges = 0;  // annotation_begin past the per-thread open-range limit
  std::uint64_t names_cut = 0;            // names cut at NameTable::kMaxNameBytes
  std::uint64_t names_refused = 0;        // names given NameTable::kOverflowName
  std::uint64_t frames = 0;
  std::uint64_t counter_samples = 0;
  std::uint64_t counter_samples_dropped = 0;
  std::uint64_t gpu_records = 0;          // rows of the GPU tables written
  std::uint64_t gpu_records_dropped = 0;  // refused by the GpuRecordBuffer or unwritable
  std::uint64_t collectives = 0;
  std::uint64_t collectives_dropped = 0;  // refused by CollectiveRecords() or unwritable
  // Frames that could not be written (disk full, ...) and their annotations.
  std::uint64_t frames_lost_to_write_errors = 0;
  std::uint64_t annotations_lost_to_write_errors = 0;
  std::string last_write_error;  // the last failed write's message
};

// The counts accumulated since `then` (a rotated file's share of a session),
// and the last write error if any write failed since. Covers every field of
// DrainResult.
DrainResult CountsSince(const DrainResult& now, const DrainResult& then);

class RankFileSequence;
class GpuRecordBuffer;

struct DrainJob {
  RankFileSequence* files;  // the session's current file, rotated on this thread
  CounterBuffer* counters;
  std::int64_t start_ns;  // ranges that start earlier belong to an earlier session
  std::uint32_t flush_interval_ms;
  const std::atomic<bool>* stop_requested;
  DrainResult* result;  // read by the caller after the thread ends
  // Decoded CUPTI records; null when GPU collection is off.
  GpuRecordBuffer* gpu = nullptr;
};

// Runs until *stop_requested, then drains everything and returns.
void RunDrain(const DrainJob& job);

}  // namespace smprof::internal

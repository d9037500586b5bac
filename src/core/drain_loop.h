// The drain thread's work: empty the thread buffers and the counter buffer
// into frames, every flush interval or when the pool fills, until stopped.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/counter_buffer.h"
#include "trace/trace_writer.h"

namespace smprof::internal {

struct DrainResult {
  std::uint64_t written = 0;  // annotations
  std::uint64_t dropped = 0;  // annotations
  std::uint64_t frames = 0;
  std::uint64_t counter_samples = 0;
  std::uint64_t counter_samples_dropped = 0;
};

struct DrainJob {
  TraceWriter* writer;
  CounterBuffer* counters;
  std::int64_t start_ns;  // ranges that start earlier belong to an earlier session
  std::uint32_t flush_interval_ms;
  const std::atomic<bool>* stop_requested;
  DrainResult* result;  // read by the caller after the thread ends
};

// Runs until *stop_requested, then drains everything and returns.
void RunDrain(const DrainJob& job);

}  // namespace smprof::internal

// CpuSampler: a thread that samples, every CpuSampleIntervalMs, each core's
// and the machine's CPU time shares (/proc/stat), the process's CPU use,
// memory and threads, the machine's memory (those two machine-wide ones only
// with machine_wide), and perf counters, as counter
// samples. It stops after CpuProfilingDurationS while the rest of the
// session goes on. docs/TRACE_FORMAT.md lists the counters and their units.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectors/cpu/perf_counters.h"
#include "collectors/cpu/proc_stat.h"
#include "runtime/counter_buffer.h"

namespace smprof::internal {

struct CpuSamplerOptions {
  std::uint32_t interval_ms = 100;
  std::uint32_t duration_s = 3600;  // counted from start_ns
  std::int64_t start_ns = 0;        // the session's start (CLOCK_MONOTONIC); 0: when Start() runs
  bool perf = true;
  std::vector<std::string> perf_events;
  // The machine's counters (cpu*, machine.*, perf per CPU): sampled by a
  // rank's main process, not by its workers, which share its host.
  bool machine_wide = true;
};

class CpuSampler {
 public:
  // Opens the perf counters at once, so perf_statuses() can go into the
  // trace header before sampling starts.
  CpuSampler(const CpuSamplerOptions& options, CounterBuffer* sink);
  ~CpuSampler();
  CpuSampler(const CpuSampler&) = delete;
  CpuSampler& operator=(const CpuSampler&) = delete;

  const std::vector<PerfEventStatus>& perf_statuses() const;
  // Why perf events are not counted per CPU too ("" when they are, or without perf).
  std::string perf_per_cpu_reason() const;
  // PerfCounters::permissions(), or "" without perf.
  std::string perf_permissions() const;

  void Start();
  // Takes a last sample and joins the thread.
  void Stop();
  // For a forked child: the thread does not exist there; never join it.
  void Abandon();

  // True once the thread has ended on its own (CpuProfilingDurationS is over).
  bool finished() const { return finished_.load(std::memory_order_acquire); }

  // One sampling pass at `now_ns` (what the thread does each interval).
  void SampleOnce(std::int64_t now_ns);
  void SampleMachine(std::int64_t now_ns);  // /proc/stat and /proc/meminfo
  void SampleProcess(std::int64_t now_ns);  // /proc/self/stat

 private:
  void Run();
  std::uint32_t TrackFor(const std::string& name, const char* unit, double resolution);

  CpuSamplerOptions options_;
  CounterBuffer* sink_;
  std::unique_ptr<PerfCounters> perf_;
  std::vector<PerfEventStatus> no_perf_;

  std::vector<CpuTimes> previous_cpu_;
  ProcessStat previous_process_{};
  std::int64_t previous_ns_ = 0;
  std::vector<std::pair<std::string, std::uint32_t>> tracks_;
  std::vector<std::pair<std::string, double>> perf_values_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<bool> finished_{false};
  std::thread* thread_ = nullptr;  // a pointer: a forked child must never destroy it
};

}  // namespace smprof::internal

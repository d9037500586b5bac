// Parsers for the /proc files the CPU sampler reads. Pure functions over the
// files' text, so they are tested on captured contents as well as live ones.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace smprof::internal {

// One "cpu" or "cpuN" line of /proc/stat, in clock ticks.
struct CpuTimes {
  int cpu = -1;  // -1 for the machine-wide "cpu" line
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  std::uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

// Every cpu line of /proc/stat: the machine-wide one first, if present.
std::vector<CpuTimes> ParseProcStat(std::string_view text);

// Shares of the time between two readings, in percent (0-100):
//   user = user + nice, system = system + irq + softirq, iowait, idle,
//   utilization = everything but idle and iowait (steal counts as busy).
struct CpuShares {
  double utilization = 0, user = 0, system = 0, iowait = 0, idle = 0;
};
// False if no time passed between the readings (nothing to report).
bool ComputeShares(const CpuTimes& before, const CpuTimes& after, CpuShares* shares);

// The fields of /proc/self/stat the sampler uses.
struct ProcessStat {
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::int64_t threads = 0;
  std::int64_t rss_pages = 0;
};
bool ParseProcessStat(std::string_view text, ProcessStat* stat);

// MemTotal and MemAvailable of /proc/meminfo, in bytes.
bool ParseMeminfo(std::string_view text, std::uint64_t* total_bytes, std::uint64_t* available_bytes);

// The whole of a /proc file ("" if it cannot be read).
std::string ReadProcFile(const char* path);

}  // namespace smprof::internal

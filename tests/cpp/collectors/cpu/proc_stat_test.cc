// The /proc parsers of the CPU sampler, on captured file contents and live.
#include "collectors/cpu/proc_stat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "collectors/cpu/perf_counters.h"

namespace smprof::internal {
namespace {

constexpr const char* kProcStat =
    "cpu  1000 10 500 8000 100 5 15 20 0 0\n"
    "cpu0 600 10 300 3000 50 5 10 20 0 0\n"
    "cpu1 400 0 200 5000 50 0 5 0 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n"
    "cpufreq 1\n";

TEST(ProcStat, ParsesTheMachineLineThenEachCore) {
  const std::vector<CpuTimes> cpus = ParseProcStat(kProcStat);
  ASSERT_EQ(cpus.size(), 3u);
  EXPECT_EQ(cpus[0].cpu, -1);
  EXPECT_EQ(cpus[1].cpu, 0);
  EXPECT_EQ(cpus[2].cpu, 1);
  EXPECT_EQ(cpus[1].user, 600u);
  EXPECT_EQ(cpus[1].nice, 10u);
  EXPECT_EQ(cpus[1].system, 300u);
  EXPECT_EQ(cpus[1].idle, 3000u);
  EXPECT_EQ(cpus[1].iowait, 50u);
  EXPECT_EQ(cpus[1].irq, 5u);
  EXPECT_EQ(cpus[1].softirq, 10u);
  EXPECT_EQ(cpus[1].steal, 20u);
  EXPECT_EQ(cpus[0].total(), 1000u + 10 + 500 + 8000 + 100 + 5 + 15 + 20);
}

TEST(ProcStat, OldKernelLinesWithFourFieldsAreAccepted) {
  const std::vector<CpuTimes> cpus = ParseProcStat("cpu 1 2 3 4\ncpu0 1 2 3\n");
  ASSERT_EQ(cpus.size(), 1u) << "a line with fewer than 4 fields is skipped";
  EXPECT_EQ(cpus[0].idle, 4u);
  EXPECT_EQ(cpus[0].iowait, 0u);
}

TEST(ProcStat, SharesOfAnIntervalAddUpTo100) {
  CpuTimes before;
  before.user = 100, before.nice = 0, before.system = 50, before.idle = 800, before.iowait = 50;
  CpuTimes after = before;
  after.user += 30, after.nice += 10, after.system += 15, after.irq += 3, after.softirq += 2;
  after.idle += 30, after.iowait += 5, after.steal += 5;  // 100 ticks in all
  CpuShares shares;
  ASSERT_TRUE(ComputeShares(before, after, &shares));
  EXPECT_DOUBLE_EQ(shares.user, 40.0);
  EXPECT_DOUBLE_EQ(shares.system, 20.0);
  EXPECT_DOUBLE_EQ(shares.iowait, 5.0);
  EXPECT_DOUBLE_EQ(shares.idle, 30.0);
  EXPECT_DOUBLE_EQ(shares.utilization, 65.0) << "user + system + steal";
}

TEST(ProcStat, NoTimeBetweenReadingsGivesNoShares) {
  CpuTimes t;
  t.user = 5;
  CpuShares shares;
  EXPECT_FALSE(ComputeShares(t, t, &shares));
  CpuTimes earlier = t;
  earlier.user = 9;  // counters went backwards (CPU hot-unplugged)
  EXPECT_FALSE(ComputeShares(earlier, t, &shares));
}

TEST(ProcStat, ProcessStatCountsFieldsAfterTheCommandName) {
  // A command name with spaces and a ')' inside, as a thread can set it.
  const char* text =
      "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 5000 0 0 0 "
      "150 70 0 0 20 0 7 0 123456 987654321 2500 18446744073709551615 0\n";
  ProcessStat stat;
  ASSERT_TRUE(ParseProcessStat(text, &stat));
  EXPECT_EQ(stat.utime_ticks, 150u);
  EXPECT_EQ(stat.stime_ticks, 70u);
  EXPECT_EQ(stat.threads, 7);
  EXPECT_EQ(stat.rss_pages, 2500);
  EXPECT_FALSE(ParseProcessStat("garbage", &stat));
  EXPECT_FALSE(ParseProcessStat("1 (x) S 1 2", &stat)) << "too few fields";
}

TEST(ProcStat, MeminfoGivesTotalAndAvailableInBytes) {
  std::uint64_t total = 0, available = 0;
  ASSERT_TRUE(
      ParseMeminfo("MemTotal:       2048 kB\nMemFree:  100 kB\nMemAvailable:    1024 kB\n", &total, &available));
  EXPECT_EQ(total, 2048u * 1024);
  EXPECT_EQ(available, 1024u * 1024);
  EXPECT_FALSE(ParseMeminfo("MemTotal: 1 kB\n", &total, &available));
}

TEST(ProcStat, LiveFilesOfThisMachineParse) {
  const std::vector<CpuTimes> cpus = ParseProcStat(ReadProcFile("/proc/stat"));
  ASSERT_GE(cpus.size(), 2u);
  EXPECT_EQ(cpus[0].cpu, -1);
  // One line per online CPU: fewer than the configured ones when some are offline.
  std::vector<int> ids;
  for (std::size_t i = 1; i < cpus.size(); ++i) ids.push_back(cpus[i].cpu);
  EXPECT_LE(static_cast<long>(ids.size()), sysconf(_SC_NPROCESSORS_CONF));
  std::string online_text;
  std::getline(std::ifstream("/sys/devices/system/cpu/online"), online_text);
  std::vector<int> online;
  if (ParseCpuList(online_text, &online)) EXPECT_EQ(ids, online) << online_text;
  ProcessStat stat;
  ASSERT_TRUE(ParseProcessStat(ReadProcFile("/proc/self/stat"), &stat));
  EXPECT_GE(stat.threads, 1);
  EXPECT_GT(stat.rss_pages, 0);
  std::uint64_t total = 0, available = 0;
  ASSERT_TRUE(ParseMeminfo(ReadProcFile("/proc/meminfo"), &total, &available));
  EXPECT_GT(total, available);
  EXPECT_EQ(ReadProcFile("/proc/does-not-exist"), "");
}

}  // namespace
}  // namespace smprof::internal

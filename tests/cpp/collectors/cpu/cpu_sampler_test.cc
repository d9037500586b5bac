// CpuSampler against this machine's real /proc and perf: the counters it
// produces, their units and ranges.
#include "collectors/cpu/cpu_sampler.h"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <vector>

#include "collectors/cpu/proc_stat.h"
#include "smprof/annotate.h"

namespace smprof::internal {
namespace {

std::map<std::string, std::vector<double>> ByName(CounterBuffer& buffer) {
  std::vector<CounterSample> samples;
  buffer.Take(&samples);
  std::map<std::string, std::vector<double>> out;
  for (const CounterSample& s : samples) out[buffer.TrackInfo(s.track).name].push_back(s.value);
  return out;
}

// Keeps this thread busy for `cpu_ms` of its own CPU time. A fixed number of
// iterations may pass within one of /proc's 10 ms ticks on a fast CPU.
void BusyFor(int cpu_ms) {
  auto thread_cpu_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  const std::int64_t end = thread_cpu_ns() + std::int64_t{cpu_ms} * 1'000'000;
  volatile double sink = 0;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 10000; ++i) sink = sink + i;
  }
}

TEST(CpuSampler, TwoPassesGiveEveryCoreAndProcessCounter) {
  CounterBuffer buffer(1 << 16);
  CpuSampler sampler(CpuSamplerOptions{100, 3600, 0, false, {}}, &buffer);
  // The CPUs /proc/stat lists (the online ones: not every configured CPU is).
  std::vector<int> cpus = {-1};
  for (const CpuTimes& times : ParseProcStat(ReadProcFile("/proc/stat"))) {
    if (times.cpu >= 0) cpus.push_back(times.cpu);
  }
  sampler.SampleOnce(NowNs());
  BusyFor(100);  // let CPU time pass
  sampler.SampleOnce(NowNs());
  const auto counters = ByName(buffer);

  for (int cpu : cpus) {
    const std::string prefix = cpu < 0 ? "cpu." : "cpu" + std::to_string(cpu) + ".";
    for (const char* share : {"utilization", "user", "system", "iowait", "idle"}) {
      const std::string name = prefix + share;
      ASSERT_EQ(counters.count(name), 1u) << name;
      ASSERT_EQ(counters.at(name).size(), 1u) << name << ": shares need two readings";
      EXPECT_GE(counters.at(name)[0], 0.0) << name;
      EXPECT_LE(counters.at(name)[0], 100.0) << name;
    }
  }
  EXPECT_GT(counters.at("cpu.utilization")[0], 0.0) << "this test kept a core busy";
  ASSERT_EQ(counters.at("process.cpu_percent").size(), 1u);
  EXPECT_GT(counters.at("process.cpu_percent")[0], 0.0);
  EXPECT_EQ(counters.at("process.rss_bytes").size(), 2u);
  EXPECT_GT(counters.at("process.rss_bytes")[0], 1e5);
  EXPECT_GE(counters.at("process.threads")[0], 1.0);
  EXPECT_GT(counters.at("machine.memory_used_bytes")[0], 0.0);
  EXPECT_EQ(counters.count("perf.task-clock"), 0u) << "EnablePerf=0 opens no perf counter";
}

TEST(CpuSampler, AWorkerSamplesOnlyItsOwnProcess) {
  CounterBuffer buffer(1 << 16);
  CpuSampler sampler(CpuSamplerOptions{100, 3600, 0, true, {"task-clock"}, /*machine_wide=*/false}, &buffer);
  sampler.SampleOnce(NowNs());
  sampler.SampleOnce(NowNs());
  const auto counters = ByName(buffer);
  EXPECT_EQ(counters.count("process.rss_bytes"), 1u);
  for (const auto& [name, values] : counters) {
    EXPECT_NE(name.rfind("cpu", 0), 0u) << name << ": the rank's main process samples the host";
    EXPECT_NE(name.rfind("machine.", 0), 0u) << name;
    EXPECT_NE(name.rfind("perf.cpu", 0), 0u) << name;
  }
}

TEST(CpuSampler, PerfCountersBecomeCounterTracks) {
  CounterBuffer buffer(1 << 16);
  CpuSampler sampler(CpuSamplerOptions{100, 3600, 0, true, {"task-clock", "context-switches"}}, &buffer);
  ASSERT_EQ(sampler.perf_statuses().size(), 2u);
  sampler.SampleOnce(NowNs());
  sampler.SampleOnce(NowNs());
  const auto counters = ByName(buffer);
  for (const PerfEventStatus& status : sampler.perf_statuses()) {
    if (!status.active) continue;
    ASSERT_EQ(counters.count(status.track), 1u) << status.track;
    const std::vector<double>& values = counters.at(status.track);
    ASSERT_EQ(values.size(), 2u);
    EXPECT_LE(values[0], values[1]) << "perf counters are cumulative";
  }
  EXPECT_EQ(buffer.TrackInfo(buffer.Track("perf.task-clock", "", 1)).unit, "ns");
}

TEST(CpuSampler, ThreadSamplesUntilStoppedAndTakesALastSample) {
  CounterBuffer buffer(1 << 16);
  CpuSampler sampler(CpuSamplerOptions{10, 3600, 0, false, {}}, &buffer);
  sampler.Start();
  usleep(100 * 1000);
  sampler.Stop();
  const auto counters = ByName(buffer);
  // 100 ms at 10 ms: about ten samples; a loaded machine gives fewer, never none.
  EXPECT_GE(counters.at("process.rss_bytes").size(), 3u);
  sampler.Stop();  // twice is harmless
}

TEST(CpuSampler, StopsOnItsOwnAfterTheDuration) {
  CounterBuffer buffer(1 << 16);
  const std::int64_t start = NowNs();
  CpuSampler sampler(CpuSamplerOptions{10, 1, start, false, {}}, &buffer);
  sampler.Start();
  for (int i = 0; i < 600 && !sampler.finished(); ++i) usleep(100 * 1000);
  ASSERT_TRUE(sampler.finished()) << "still sampling a minute after a 1 s duration";
  std::vector<CounterSample> samples;
  buffer.Take(&samples);
  std::map<std::uint32_t, int> late;  // samples per counter taken after the limit
  for (const CounterSample& s : samples) late[s.track] += s.ts_ns > start + 1'000'000'000 ? 1 : 0;
  ASSERT_FALSE(late.empty());
  for (const auto& [track, count] : late) {
    EXPECT_LE(count, 1) << buffer.TrackInfo(track).name << ": only the closing sample may fall after the limit";
  }
  sampler.Stop();
}

}  // namespace
}  // namespace smprof::internal

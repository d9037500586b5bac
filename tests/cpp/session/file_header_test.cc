// The header's collector statuses: the perf collector's reason is never empty.
// It names the key that turned perf off, or, when no event opened, what the
// kernel allows this process and each event's own reason.
#include "session/file_header.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smprof::internal {
namespace {

trace::CollectorStatus Collector(const trace::FileHeader& header, const std::string& name) {
  for (const trace::CollectorStatus& collector : header.collectors()) {
    if (collector.name() == name) return collector;
  }
  ADD_FAILURE() << "no collector " << name;
  return trace::CollectorStatus();
}

PerfEventStatus Event(const std::string& name, bool active, const std::string& reason) {
  PerfEventStatus status;
  status.name = name;
  status.track = "perf." + name;
  status.active = active;
  status.reason = reason;
  return status;
}

trace::FileHeader HeaderWith(const ResolvedConfig& config, const std::vector<PerfEventStatus>& events) {
  const RankInfo rank;
  HeaderInputs in{&config, &rank, ClockPair{1, 2}, 0, &events, "", "perf_event_paranoid=4, no CAP_PERFMON", ""};
  return MakeFileHeader(in);
}

TEST(FileHeader, NoEventOpenedNamesThePermissionsAndEachReason) {
  const ResolvedConfig config;
  const auto events = std::vector<PerfEventStatus>{
      Event("cycles", false, "hardware events are not supported here (no PMU: virtual machine?)"),
      Event("task-clock", false, "permission denied (perf_event_open: Operation not permitted)"),
      Event("context-switches", false, "permission denied (perf_event_open: Operation not permitted)")};
  const trace::CollectorStatus perf = Collector(HeaderWith(config, events), "perf");
  EXPECT_FALSE(perf.active());
  EXPECT_EQ(perf.reason(),
            "no perf event could be opened (perf_event_paranoid=4, no CAP_PERFMON): cycles: hardware events are not "
            "supported here (no PMU: virtual machine?); task-clock, context-switches: permission denied "
            "(perf_event_open: Operation not permitted)");
}

TEST(FileHeader, OneEventOpenedIsActiveWithoutReason) {
  const ResolvedConfig config;
  const auto events = std::vector<PerfEventStatus>{Event("cycles", false, "not supported by this CPU (x)"),
                                                   Event("task-clock", true, "")};
  const trace::CollectorStatus perf = Collector(HeaderWith(config, events), "perf");
  EXPECT_TRUE(perf.active());
  EXPECT_EQ(perf.reason(), "");
}

TEST(FileHeader, PerfOffByConfigurationNamesTheKey) {
  ResolvedConfig no_perf;
  no_perf.enable_perf = false;
  EXPECT_EQ(Collector(HeaderWith(no_perf, {}), "perf").reason(), "disabled by EnablePerf");
  ResolvedConfig unsampled;
  unsampled.cpu_duration_s = 0;
  EXPECT_EQ(Collector(HeaderWith(unsampled, {}), "perf").reason(),
            "disabled by CpuProfilingDurationS=0 (the CPU sampler reads the counters)");
  EXPECT_EQ(Collector(HeaderWith(unsampled, {}), "cpu").reason(), "disabled by CpuProfilingDurationS=0");
}

TEST(FileHeader, NoStatusesAtAllIsStillAReason) {
  const trace::CollectorStatus perf = Collector(HeaderWith(ResolvedConfig(), {}), "perf");
  EXPECT_FALSE(perf.active());
  EXPECT_FALSE(perf.reason().empty());
}

}  // namespace
}  // namespace smprof::internal

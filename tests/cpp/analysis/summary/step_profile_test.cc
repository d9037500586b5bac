// StepProfile on hand-made frames: each step's phases (children, and the
// annotations between steps), its input-pipeline wait, the counters sampled
// during it, children that arrive a frame before their step, the cap on
// the steps kept one by one, and the default data pattern's names (nested
// data waits counted once).
#include "analysis/summary/step_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace smprof::analysis {
namespace {

using internal::AnnotationRow;
using internal::CounterRow;

// Rows of one frame; name_index is the name's index in `names` (per frame, as in a trace).
struct FrameBuilder {
  std::vector<std::string> names;
  std::vector<AnnotationRow> annotations;
  std::vector<CounterRow> counters;

  FrameBuilder& Range(const std::string& name, std::int64_t start, std::int64_t end, std::uint32_t depth,
                      std::uint32_t tid = 1) {
    std::uint32_t index = 0;
    while (index < names.size() && names[index] != name) ++index;
    if (index == names.size()) names.push_back(name);
    annotations.push_back({start, end - start, {}, tid, depth, index});
    return *this;
  }
  FrameBuilder& Sample(const char* name, std::int64_t ts, double value) {
    counters.push_back({ts, value, name, "percent"});
    return *this;
  }
  void AddTo(StepProfile& profile) {
    for (auto& row : annotations) row.name = names[row.name_index];
    std::sort(annotations.begin(), annotations.end(),
              [](const AnnotationRow& a, const AnnotationRow& b) { return a.start_ns < b.start_ns; });
    profile.AddFrame(annotations, counters, 0);
  }
};

std::string Profile(const SummaryOptions& options, std::vector<FrameBuilder> frames) {
  StepProfile profile(options);
  ProcessStream stream;
  stream.host = "h";
  stream.pid = 7;
  profile.BeginStream(stream);
  for (auto& f : frames) f.AddTo(profile);
  JsonWriter out;
  profile.Write(out);
  return out.text();
}

std::vector<FrameBuilder> TwoSteps() {
  FrameBuilder first, second, third;
  first.Range("step", 0, 1000, 0)
      .Range("InputWait", 0, 100, 1)
      .Range("Forward", 100, 600, 1)
      .Range("Conv", 150, 200, 2)
      .Range("Backward", 600, 1000, 1)
      .Range("other thread", 0, 500, 0, 2)
      .Sample("cpu.utilization", 10, 0)
      .Sample("cpu.utilization", 510, 50)
      .Sample("perf.page-faults", 10, 100);
  // Step 1's children arrive a frame before it: it closes in the next frame.
  second.Range("checkpoint", 1000, 1500, 0)
      .Range("InputWait", 1500, 1600, 1)
      .Range("Forward", 1600, 1900, 1)
      .Sample("cpu.utilization", 1710, 90)
      .Sample("perf.page-faults", 1710, 160);
  third.Range("step", 1500, 2000, 0);
  return {first, second, third};
}

TEST(StepProfile, PhasesDataWaitAndCountersPerStep) {
  const std::string json = Profile(SummaryOptions(), TwoSteps());
  EXPECT_NE(json.find(R"("step":0,"start_wall_ns":0,"dur_ns":1000,"gap_before_ns":0,"data_wait_ns":100,)"
                      R"("phases":{"Backward":400,"Forward":500,"InputWait":100},"cpu_utilization_percent":50,)"
                      R"("process_cpu_percent":null,"page_faults":null)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("step":1,"start_wall_ns":1500,"dur_ns":500,"gap_before_ns":500,"data_wait_ns":100,)"
                      R"("phases":{"Forward":300,"InputWait":100,"checkpoint":500},"cpu_utilization_percent":90,)"
                      R"("process_cpu_percent":null,"page_faults":60)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("steps_seen":2,"cycle_time_ns":2000,"data_wait_ns":200,"annotations_not_profiled":0)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("phases":[{"name":"Forward","total_ns":800,"data":false},)"
                      R"({"name":"checkpoint","total_ns":500,"data":false},)"
                      R"({"name":"Backward","total_ns":400,"data":false},)"
                      R"({"name":"InputWait","total_ns":200,"data":true}])"),
            std::string::npos)
      << json;
}

TEST(StepProfile, SamplesOfSeveralCountersInOneFrameReachTheirSteps) {
  // A frame stores each counter's series in turn, not all samples in time order.
  FrameBuilder frame;
  frame.Range("step", 0, 1000, 0)
      .Range("step", 1500, 2000, 0)
      .Sample("cpu.utilization", 10, 0)
      .Sample("cpu.utilization", 510, 40)
      .Sample("cpu.utilization", 1710, 80)
      .Sample("perf.context-switches", 10, 5)
      .Sample("perf.context-switches", 510, 7)
      .Sample("perf.context-switches", 1710, 10);
  const std::string json = Profile(SummaryOptions(), {frame});
  EXPECT_NE(json.find(R"("cpu_utilization_percent":40,"process_cpu_percent":null,"page_faults":null,)"
                      R"("context_switches":2})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("cpu_utilization_percent":80,"process_cpu_percent":null,"page_faults":null,)"
                      R"("context_switches":3})"),
            std::string::npos)
      << json;
}

TEST(StepProfile, ManyStepsInOneFrameEachTakeTheirOwnChildren) {
  // One frame of 1,000 steps, each with two children, and one range of another thread that spans
  // them all (it waits, unclaimed, while every step closes).
  FrameBuilder frame;
  frame.Range("epoch", 0, 1'000'000, 0, 2);
  for (std::int64_t i = 0; i < 1000; ++i) {
    const std::int64_t start = i * 1000;
    frame.Range("step", start, start + 900, 0)
        .Range("load", start, start + 100, 1)
        .Range("Forward", start + 100, start + 800, 1);
  }
  SummaryOptions options;
  options.data_wait_pattern = "load";
  options.max_profiled_steps = 1000;
  const std::string json = Profile(options, {frame});
  EXPECT_NE(json.find(R"("steps_seen":1000,"cycle_time_ns":999900,"data_wait_ns":100000,)"), std::string::npos)
      << json.substr(0, 400);
  EXPECT_NE(json.find(R"("phases":[{"name":"Forward","total_ns":700000,"data":false},)"
                      R"({"name":"load","total_ns":100000,"data":true}])"),
            std::string::npos)
      << json.substr(0, 400);
  EXPECT_NE(json.find(R"("step":999,"start_wall_ns":999000,"dur_ns":900,"gap_before_ns":100,"data_wait_ns":100,)"
                      R"("phases":{"Forward":700,"load":100})"),
            std::string::npos);
}

TEST(StepProfile, AFrameOfMoreAnnotationsThanTheCapLosesNone) {
  // 40,000 steps with two children each: 80,000 annotations in one frame, more than
  // kMaxPending, but each step closes as the next one starts, so few wait at a time.
  FrameBuilder frame;
  for (std::int64_t i = 0; i < 40'000; ++i) {
    const std::int64_t start = i * 1000;
    frame.Range("step", start, start + 900, 0)
        .Range("load", start, start + 100, 1)
        .Range("Forward", start + 100, start + 800, 1);
  }
  static_assert(StepProfile::kMaxPending < 80'000);
  SummaryOptions options;
  options.data_wait_pattern = "load";
  const std::string json = Profile(options, {frame});
  EXPECT_NE(json.find(R"("steps_seen":40000,"cycle_time_ns":39999900,"data_wait_ns":4000000,)"
                      R"("annotations_not_profiled":0)"),
            std::string::npos)
      << json.substr(0, 400);
}

TEST(StepProfile, PhasesPastTheCapAreOneOtherEntryWhoseTimeIsKept) {
  // Two steps of 1,000 distinct phases each (phase i lasts i+1 ns), and one data wait of 10 ns,
  // shorter than all but a few: written are the 64 longest, the data wait, and "(other phases)".
  SummaryOptions options;
  options.data_wait_pattern = "load";
  FrameBuilder frame;
  for (std::int64_t step = 0; step < 2; ++step) {
    const std::int64_t start = step * 10'000'000;
    std::int64_t at = start + 10;
    frame.Range("step", start, start + 5'000'000, 0).Range("load", start, start + 10, 1);
    for (std::int64_t i = 0; i < 1000; ++i) {
      frame.Range("phase_" + std::to_string(i), at, at + i + 1, 1);
      at += i + 1;
    }
  }
  const std::string json = Profile(options, {frame});
  std::size_t named = 0;
  for (std::int64_t i = 0; i < 1000; ++i) {
    named += json.find("\"phase_" + std::to_string(i) + "\"") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(named, StepProfile::kMaxPhasesWritten) << "only the longest phases by name";
  EXPECT_NE(json.find(R"({"name":"phase_999","total_ns":2000,"data":false})"), std::string::npos);
  EXPECT_NE(json.find(R"({"name":"load","total_ns":20,"data":true})"), std::string::npos) << "data waits always";
  // 936 phases of 1..936 ns, twice.
  const std::int64_t other = 2 * (936 * 937 / 2);
  EXPECT_NE(
      json.find(R"x({"name":"(other phases)","total_ns":)x" + std::to_string(other) + R"(,"data":false,"names":936})"),
      std::string::npos)
      << json.substr(json.find("(other"), 200);
  EXPECT_NE(json.find(R"x("(other phases)":)x" + std::to_string(other / 2) + "}"), std::string::npos) << "per step too";
  EXPECT_LT(json.size(), 20'000u);
}

TEST(StepProfile, KeepsTheFirstStepsAndTotalsThemAll) {
  SummaryOptions options;
  options.max_profiled_steps = 1;
  const std::string json = Profile(options, TwoSteps());
  EXPECT_NE(json.find(R"("steps_seen":2,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("step":0,)"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"("step":1,)"), std::string::npos) << json;
}

TEST(StepProfile, TheDataPatternMarksUserAnnotations) {
  SummaryOptions options;
  options.data_wait_pattern = "load_batch|InputWait";
  FrameBuilder frame;
  frame.Range("step", 0, 1000, 0).Range("load_batch", 0, 300, 1).Range("read", 10, 200, 2);
  const std::string json = Profile(options, {frame});
  EXPECT_NE(json.find(R"("data_wait_ns":300,"phases":{"load_batch":300})"), std::string::npos) << json;
}

TEST(StepProfile, TheDefaultDataPatternKnowsTheNamesUsersGiveTheirDataPhases) {
  const std::regex data = DataWaitRegex(SummaryOptions().data_wait_pattern);
  for (const char* name :
       {"InputWait",       "DataLoad",        "data_loading", "DataLoader", "DATALOAD",       "Data Loading",
        "dataloader_next", "DataLoaderFetch", "data",         "Input",      "input_pipeline", "get_batch",
        "GetBatch",        "next_batch",      "fetch_batch",  "Fetch",      "load_data",      "LoadData",
        "read_batch",      "wait_for_data",   "batch_load",   "data_wait"}) {
    EXPECT_TRUE(std::regex_match(name, data)) << name;
  }
  for (const char* name : {"Forward", "Backward", "Optimizer", "step_3", "ProfilerStep#3", "loss", "metadata", "update",
                           "AllReduce", "checkpoint", "Save", "inputs_to_device", "prefetch_weights"}) {
    EXPECT_FALSE(std::regex_match(name, data)) << name;
  }
}

TEST(StepProfile, NestedDataWaitsCountOnce) {
  // A SageMaker-style script's DataLoad around smppy's InputWait (smprof run), and a second,
  // overlapping one on the same thread.
  FrameBuilder frame;
  frame.Range("step_0", 0, 1000, 0)
      .Range("DataLoad", 0, 300, 1)
      .Range("InputWait", 10, 290, 2)
      .Range("DataLoaderFetch", 20, 280, 3)
      .Range("get_batch", 250, 400, 1)
      .Range("Forward", 400, 1000, 1);
  const std::string json = Profile(SummaryOptions(), {frame});
  EXPECT_NE(json.find(R"("data_wait_ns":400,"phases":{"DataLoad":300,"Forward":600,"get_batch":150})"),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace smprof::analysis

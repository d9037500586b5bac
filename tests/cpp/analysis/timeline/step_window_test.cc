// The window of `smprof export --steps`: found from the timeline plan's rank
// processes (the selected ranks only), steps named and numbered as the
// summary does (the name's number, else the ordinal across a stream's
// files), from the first step's start to the last one's end; steps outside
// the range never widen it, a range no selected rank ran is an error.
#include "analysis/timeline/step_window.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/job/job_reader.h"
#include "support/temp_dir.h"
#include "trace/file_format.h"
#include "trace/frame_codec.h"
#include "trace/trace_writer.h"

namespace smprof::analysis {
namespace {

using internal::AnnotationRecord;
using internal::TraceWriter;
using testing::TempDir;

constexpr std::int64_t kWallBase = 1'700'000'000'000'000'000;  // the files' realtime at monotonic 0

struct Range {
  std::string name;
  std::int64_t start_ns;  // monotonic
  std::int64_t end_ns;
  std::uint16_t depth = 0;
};

// A rank file (session file `file_index` of process `pid`) with `ranges` in one frame.
void WriteRankFile(const std::string& path, int rank, int pid, int file_index, const std::vector<Range>& ranges) {
  std::unique_ptr<TraceWriter> writer;
  ASSERT_TRUE(TraceWriter::Create(path, 0, &writer).ok());
  trace::FileHeader header;
  header.set_format_version(1);
  header.set_host("host-a");
  header.set_rank(rank);
  header.set_world_size(3);
  header.set_pid(pid);
  header.set_file_index(static_cast<std::uint32_t>(file_index));
  header.mutable_start()->set_monotonic_ns(0);
  header.mutable_start()->set_realtime_ns(kWallBase);
  ASSERT_TRUE(writer->Append(trace_format::kHeaderTag, header).ok());
  std::vector<AnnotationRecord> records;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const Range& r = ranges[i];
    records.push_back({r.start_ns, r.end_ns - r.start_ns, static_cast<NameId>(i + 1), 7, r.depth, 0, 0});
  }
  internal::FrameBuilder builder([&](NameId id) { return ranges.at(id - 1).name; },
                                 [](std::uint32_t) { return std::string("main"); });
  builder.Add(records.data(), records.size());
  trace::Frame frame;
  builder.Build(0, &frame);
  ASSERT_TRUE(writer->Append(trace_format::kFrameTag, frame).ok());
  ASSERT_TRUE(writer->Close().ok());
}

// Steps 0-4 of 100 ns each (with a child), rank `rank`'s starting `lag` ns later.
std::vector<Range> FiveSteps(std::int64_t lag) {
  std::vector<Range> ranges;
  for (int step = 0; step < 5; ++step) {
    const std::int64_t start = 1000 + step * 100 + lag;
    ranges.push_back({"ProfilerStep#" + std::to_string(step), start, start + 90});
    ranges.push_back({"Forward", start + 10, start + 80, 1});
  }
  return ranges;
}

class StepWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteRankFile(dir_.path() + "/rank0.smprof", 0, 100, 0, FiveSteps(0));
    WriteRankFile(dir_.path() + "/rank1.smprof", 1, 101, 0, FiveSteps(30));
    // Rank 2 runs 55 ns behind rank 0: its steps start last and end last.
    WriteRankFile(dir_.path() + "/rank2.smprof", 2, 102, 0, FiveSteps(55));
    job_ = std::make_unique<JobReader>(std::vector<std::string>{dir_.path()});
    ASSERT_EQ(job_->streams().size(), 3u);
  }

  // The window of `steps` over `ranks` (empty: all), or {0, 0} when none is found.
  std::pair<std::int64_t, std::int64_t> Window(StepRange steps, const std::vector<int>& ranks,
                                               const std::string& pattern = kDefaultStepPattern) {
    const TimelinePlan plan = PlanTimeline(job_->streams(), ranks);
    std::int64_t start = 0;
    std::int64_t end = 0;
    if (!FindStepWindow(plan, steps, pattern, &start, &end)) return {0, 0};
    return {start - kWallBase, end - kWallBase};
  }

  TempDir dir_;
  std::unique_ptr<JobReader> job_;
};

TEST_F(StepWindowTest, FromTheFirstStepsEarliestStartToTheLastStepsLatestEndAcrossRanks) {
  // Step 1 starts at 1100 on rank 0; step 2 ends at 1200 + 55 + 90 on rank 2.
  EXPECT_EQ(Window({1, 2}, {}), std::make_pair(std::int64_t{1100}, std::int64_t{1345}));
  EXPECT_EQ(Window({3, 3}, {}), std::make_pair(std::int64_t{1300}, std::int64_t{1445}));
}

TEST_F(StepWindowTest, OnlyTheSelectedRanksStepsCount) {
  EXPECT_EQ(Window({1, 2}, {1}), std::make_pair(std::int64_t{1130}, std::int64_t{1320}));
  EXPECT_EQ(Window({1, 2}, {0, 1}), std::make_pair(std::int64_t{1100}, std::int64_t{1320}));
}

TEST_F(StepWindowTest, StepsOutsideTheRangeNeverWidenIt) {
  // Rank 2's step 0 (1055-1145) overlaps the start of 1-3 (rank 0's step 1 at 1100), rank 0's
  // step 4 (1400-1490) its end (rank 2's step 3 ends at 1445): neither moves an edge.
  EXPECT_EQ(Window({1, 3}, {}), std::make_pair(std::int64_t{1100}, std::int64_t{1445}));
  EXPECT_EQ(Window({1, 3}, {0}), std::make_pair(std::int64_t{1100}, std::int64_t{1390}));
  // A range reaching past the last step ends with the last step there is.
  EXPECT_EQ(Window({4, 99}, {}), std::make_pair(std::int64_t{1400}, std::int64_t{1545}));
}

TEST_F(StepWindowTest, AMissingStepOrRankIsNotFoundAndApplyNamesIt) {
  EXPECT_EQ(Window({7, 9}, {}), std::make_pair(std::int64_t{0}, std::int64_t{0}));
  EXPECT_EQ(Window({1, 2}, {5}), std::make_pair(std::int64_t{0}, std::int64_t{0}));
  TimelineOptions options;
  options.ranks = {1, 2};
  options.steps = StepRange{7, 9};
  bool no_step = false;
  const Status status = ApplyStepWindow(PlanTimeline(job_->streams(), options.ranks), &options, &no_step);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "no step 7-9 for ranks [1, 2]");
  EXPECT_TRUE(no_step);
}

TEST_F(StepWindowTest, ApplyNarrowsTheGivenWindowAndRefusesAnEmptyOne) {
  const TimelinePlan plan = PlanTimeline(job_->streams(), {});
  TimelineOptions options;
  options.steps = StepRange{1, 2};
  options.window_start_wall_ns = kWallBase + 1150;
  bool no_step = true;
  ASSERT_TRUE(ApplyStepWindow(plan, &options, &no_step).ok());
  EXPECT_FALSE(no_step);
  EXPECT_EQ(options.window_start_wall_ns, kWallBase + 1150);
  EXPECT_EQ(options.window_end_wall_ns, kWallBase + 1345);

  TimelineOptions late;
  late.steps = StepRange{1, 2};
  late.window_start_wall_ns = kWallBase + 5000;
  const Status status = ApplyStepWindow(plan, &late, &no_step);
  EXPECT_EQ(status.message(), "the window is empty: --end is before --start");
  EXPECT_FALSE(no_step);

  TimelineOptions bad;
  bad.steps = StepRange{1, 2};
  bad.step_pattern = "step(";
  EXPECT_EQ(ApplyStepWindow(plan, &bad).code(), StatusCode::kInvalidArgument);

  TimelineOptions none;  // no steps: the window stays as given
  ASSERT_TRUE(ApplyStepWindow(plan, &none).ok());
  EXPECT_EQ(none.window_start_wall_ns, TimelineOptions().window_start_wall_ns);
}

TEST(StepWindow, UnnumberedStepsCountAcrossAStreamsRotatedFiles) {
  TempDir dir;
  WriteRankFile(dir.path() + "/a.smprof", 0, 100, 0, {{"step", 100, 200}, {"step", 200, 300}});
  WriteRankFile(dir.path() + "/b.smprof", 0, 100, 1, {{"step", 300, 400}, {"step", 400, 500}});
  const JobReader job({dir.path()});
  ASSERT_EQ(job.streams().size(), 1u);
  std::int64_t start = 0;
  std::int64_t end = 0;
  ASSERT_TRUE(FindStepWindow(PlanTimeline(job.streams(), {}), {2, 3}, kDefaultStepPattern, &start, &end));
  EXPECT_EQ(start - kWallBase, 300);  // the rotated file's first step is the stream's third (step 2)
  EXPECT_EQ(end - kWallBase, 500);
}

}  // namespace
}  // namespace smprof::analysis

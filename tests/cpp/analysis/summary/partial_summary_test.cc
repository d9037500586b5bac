// Partial summaries of a recorded job (three sessions of this process: three
// process streams with steps, annotations and CPU samples): one partial per
// stream, merged in every order and grouping, gives SummarizeJob's JSON byte
// for byte, so each aggregator's Save / MergeFrom / ReorderStreams keeps its
// whole state; merging is associative to the byte; partials that cannot merge
// and damaged bytes are std::invalid_argument.
#include "analysis/summary/partial_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analysis/job/job_reader.h"
#include "analysis/summary/summary_builder.h"
#include "smprof/annotate.h"
#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace smprof::analysis {
namespace {

using smprof::testing::ConfigWritingTo;
using smprof::testing::TempDir;

// Records `sessions` sessions, each a few steps of nested annotations.
void RecordJob(const std::string& dir, int sessions) {
  for (int session = 0; session < sessions; ++session) {
    Config config = ConfigWritingTo(dir, "rank%r_s%s.smprof");
    config.Set("CpuSampleIntervalMs", "10").Set("FlushIntervalMs", "20");
    ASSERT_TRUE(Start(config).ok());
    for (int step = 0; step < 6 + session; ++step) {
      const AnnotationHandle handle = AnnotationBegin("ProfilerStep#" + std::to_string(step));
      for (int i = 0; i < 20; ++i) {
        SMPROF_ANNOTATE(i % 3 == 0 ? "forward" : "backward");
        std::this_thread::sleep_for(std::chrono::microseconds(300 * (session + 1)));
      }
      AnnotationEnd(handle);
    }
    ASSERT_TRUE(Stop().ok());
  }
}

std::vector<std::string_view> Views(const std::vector<std::string>& partials) {
  return {partials.begin(), partials.end()};
}

class PartialSummary : public ::testing::Test {
 protected:
  void SetUp() override {
    RecordJob(dir_.path(), 3);
    reader_ = std::make_unique<JobReader>(std::vector<std::string>{dir_.path()});
    ASSERT_EQ(reader_->streams().size(), 3u);
    options_.top_k = 1;  // the annotation and kernel lists are cut: the rest is merged as well
    direct_ = SummarizeJob({dir_.path()}, options_);
    for (const ProcessStream& stream : reader_->streams()) {
      per_stream_.push_back(SummarizeStreams({stream}, reader_->origin_ns(), options_));
    }
  }

  std::string Summary(const std::string& partial) const { return SummaryFromPartial(partial, reader_->warnings()); }

  TempDir dir_;
  std::unique_ptr<JobReader> reader_;
  SummaryOptions options_;
  std::string direct_;
  std::vector<std::string> per_stream_;
};

TEST_F(PartialSummary, EveryOrderOfMergingGivesTheDirectSummary) {
  std::vector<std::size_t> order = {0, 1, 2};
  do {
    std::vector<std::string> partials;
    for (const std::size_t i : order) partials.push_back(per_stream_[i]);
    EXPECT_EQ(Summary(MergePartials(Views(partials))), direct_) << order[0] << order[1] << order[2];
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(Summary(SummarizeStreams(reader_->streams(), reader_->origin_ns(), options_)), direct_);
}

TEST_F(PartialSummary, MergingIsAssociativeToTheByte) {
  const auto& p = per_stream_;
  const std::string left = MergePartials({MergePartials({p[0], p[1]}), p[2]});
  EXPECT_EQ(MergePartials({p[0], MergePartials({p[1], p[2]})}), left);
  EXPECT_EQ(MergePartials({p[2], p[0], p[1]}), left);
  EXPECT_EQ(MergePartials({left}), left);
}

TEST_F(PartialSummary, AStreamSentAsBytesSummarizesTheSame) {
  const ProcessStream& stream = reader_->streams()[1];
  std::int64_t origin = 0;
  const ProcessStream back = DecodeStream(EncodeStream(stream, reader_->origin_ns()), &origin);
  EXPECT_EQ(origin, reader_->origin_ns());
  EXPECT_EQ(SummarizeStreams({back}, origin, options_), per_stream_[1]);
}

TEST_F(PartialSummary, PartialsThatCannotMergeAreInvalidArguments) {
  const auto& p = per_stream_;
  EXPECT_THROW(MergePartials({p[0], MergePartials({p[0], p[1]})}), std::invalid_argument);  // overlap
  SummaryOptions other = options_;
  other.max_buckets = 7;
  const std::string other_options = SummarizeStreams({reader_->streams()[1]}, reader_->origin_ns(), other);
  EXPECT_THROW(MergePartials({p[0], other_options}), std::invalid_argument);
  SummaryOptions other_wait = options_;
  other_wait.data_wait_pattern = "DataLoaderNext";
  const std::string other_wait_options = SummarizeStreams({reader_->streams()[1]}, reader_->origin_ns(), other_wait);
  EXPECT_THROW(MergePartials({p[0], other_wait_options}), std::invalid_argument);
  const std::string other_origin = SummarizeStreams({reader_->streams()[1]}, reader_->origin_ns() + 1, options_);
  EXPECT_THROW(MergePartials({p[0], other_origin}), std::invalid_argument);
  EXPECT_THROW(MergePartials({}), std::invalid_argument);
}

TEST_F(PartialSummary, DamagedBytesAreInvalidArguments) {
  const std::string& partial = per_stream_[0];
  for (std::size_t size = 0; size < partial.size(); size += std::max<std::size_t>(1, partial.size() / 97)) {
    EXPECT_THROW(Summary(partial.substr(0, size)), std::invalid_argument) << size;
  }
  EXPECT_THROW(Summary(partial + '\0'), std::invalid_argument);
  std::string version = partial;
  version[1 + version[0]] = 9;  // the version, after the magic string
  EXPECT_THROW(Summary(version), std::invalid_argument);
}

}  // namespace
}  // namespace smprof::analysis

// SummaryOptions::Validate: the checks every caller of the summary makes (the
// Python binding raises its message as ValueError), one bad option at a time.
#include "analysis/job/summary_options.h"

#include <gtest/gtest.h>

#include <string>

namespace smprof::analysis {
namespace {

TEST(SummaryOptionsValidate, TheDefaultsAreValid) {
  const Status status = SummaryOptions().Validate();
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(SummaryOptionsValidate, TheSmallestValidValuesAreValid) {
  SummaryOptions options;
  options.top_k = 0;
  options.max_buckets = 1;
  options.reorder_window_ns = 0;
  options.max_profiled_steps = 0;
  options.step_pattern = "step(\\d+)";
  options.data_wait_pattern = "";
  const Status status = options.Validate();
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(SummaryOptionsValidate, EachBadOptionIsNamedWithItsValidValues) {
  struct Case {
    void (*spoil)(SummaryOptions&);
    std::string message;
  };
  const Case cases[] = {
      {[](SummaryOptions& o) { o.top_k = -1; }, "top_k: must be >= 0, got -1"},
      {[](SummaryOptions& o) { o.max_buckets = 0; }, "max_buckets: must be >= 1, got 0"},
      {[](SummaryOptions& o) { o.reorder_window_ns = -5; }, "reorder_window_ns: must be >= 0"},
      {[](SummaryOptions& o) { o.max_profiled_steps = -2; }, "max_profiled_steps: must be >= 0, got -2"},
  };
  for (const Case& c : cases) {
    SummaryOptions options;
    c.spoil(options);
    const Status status = options.Validate();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(status.message(), c.message);
  }
}

TEST(SummaryOptionsValidate, PatternsMustBeRegularExpressions) {
  SummaryOptions step;
  step.step_pattern = "step(";
  const Status bad_step = step.Validate();
  EXPECT_EQ(bad_step.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_step.message().rfind("step_pattern: not a valid regular expression (", 0), 0u) << bad_step.message();
  EXPECT_NE(bad_step.message().find("): step("), std::string::npos) << bad_step.message();

  SummaryOptions wait;
  wait.data_wait_pattern = "[InputWait";
  const Status bad_wait = wait.Validate();
  EXPECT_EQ(bad_wait.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_wait.message().rfind("data_wait_pattern: not a valid regular expression (", 0), 0u)
      << bad_wait.message();
  EXPECT_NE(bad_wait.message().find("): [InputWait"), std::string::npos) << bad_wait.message();
}

TEST(SummaryOptionsValidate, TheFirstBadOptionIsReportedInTheBindingsOrder) {
  // The order the Python binding checked them in before: the data-wait pattern first, the
  // step pattern (checked when the summary ran) last.
  SummaryOptions options;
  options.step_pattern = "(";
  options.max_buckets = 0;
  EXPECT_EQ(options.Validate().message(), "max_buckets: must be >= 1, got 0");
  options.data_wait_pattern = "(";
  EXPECT_EQ(options.Validate().message().rfind("data_wait_pattern:", 0), 0u);
}

}  // namespace
}  // namespace smprof::analysis

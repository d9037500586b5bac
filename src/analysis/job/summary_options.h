// Options of the summary (docs/ANALYSIS.md): the step and data-wait patterns, top-k, the
// timeline's bucket budget and the GPU reorder window.
#pragma once

#include <cstdint>
#include <regex>
#include <string>

#include "smprof/status.h"

namespace smprof::analysis {

inline constexpr const char* kDefaultStepPattern = R"((?:ProfilerStep#|[Ss]tep[_# ]?|iteration[_ ]?)(\d*))";
// Annotations (whole name, ECMAScript, any case: DataWaitRegex) during which the host waits
// for input data: smppy's DataLoader wait (InputWait) and the names users give their own data
// phases (DataLoad, data_loading, get_batch, next_batch, Fetch, load_data, wait_for_data, ...).
// The GPU idle breakdown and step_profile (docs/ANALYSIS.md) use it.
inline constexpr const char* kDefaultDataWaitPattern =
    R"(input(?:[ _.-]?(?:wait|pipeline|load(?:ing)?|fetch))?)"
    R"(|data(?:[ _.-]?(?:load(?:ing|er)?(?:[ _.-]?(?:next|fetch|iter))?|wait|fetch|input))?)"
    R"(|(?:load|fetch|get|next|read|wait[ _.-]?for)[ _.-]?(?:data|batch(?:es)?|input))"
    R"(|fetch|batch[ _.-]?(?:load(?:ing)?|fetch))";

struct SummaryOptions {
  std::string step_pattern = kDefaultStepPattern;
  std::string data_wait_pattern = kDefaultDataWaitPattern;
  int top_k = 15;
  int max_buckets = 200;
  std::int64_t reorder_window_ns = 5'000'000'000;
  std::size_t max_pending = std::size_t{1} << 16;  // GPU rows per GPU / ids per join and process
  // step_profile (docs/ANALYSIS.md): how many steps per process are kept one by one.
  std::int64_t max_profiled_steps = 200;  // ~60 KB of summary JSON per process (docs/ANALYSIS.md)

  // Ok, or kInvalidArgument naming the first bad option and its valid values:
  // the patterns must be ECMAScript regular expressions, top_k >= 0,
  // max_buckets >= 1, reorder_window_ns >= 0, max_profiled_steps >= 0. What
  // every caller checks before a summary (the Python binding raises
  // ValueError with the message); the summary itself throws std::regex_error
  // on a bad pattern.
  Status Validate() const;
};

// The data-wait pattern as the summary matches it: whole names, case ignored.
std::regex DataWaitRegex(const std::string& pattern);

// A stream's wall-clock span so far; each metric extends it with the events it sees.
struct WallSpan {
  std::int64_t start_ns = INT64_MAX;
  std::int64_t end_ns = INT64_MIN;
  void Extend(std::int64_t start, std::int64_t end) {
    if (start < start_ns) start_ns = start;
    if (end > end_ns) end_ns = end;
  }
  bool empty() const { return start_ns > end_ns; }
  std::int64_t length() const { return empty() ? 0 : end_ns - start_ns; }
};

}  // namespace smprof::analysis

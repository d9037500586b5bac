#include "analysis/job/summary_options.h"

#include <regex>

namespace smprof::analysis {

namespace {

// The error of a pattern that is not an ECMAScript regular expression; empty when it is one.
std::string PatternError(const char* option, const std::string& pattern) {
  try {
    std::regex check(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return std::string(option) + ": not a valid regular expression (" + e.what() + "): " + pattern;
  }
  return "";
}

Status Invalid(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

}  // namespace

std::regex DataWaitRegex(const std::string& pattern) {
  return std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
}

Status SummaryOptions::Validate() const {
  if (std::string error = PatternError("data_wait_pattern", data_wait_pattern); !error.empty()) {
    return Invalid(std::move(error));
  }
  if (top_k < 0) return Invalid("top_k: must be >= 0, got " + std::to_string(top_k));
  if (max_buckets < 1) return Invalid("max_buckets: must be >= 1, got " + std::to_string(max_buckets));
  if (reorder_window_ns < 0) return Invalid("reorder_window_ns: must be >= 0");
  if (max_profiled_steps < 0) {
    return Invalid("max_profiled_steps: must be >= 0, got " + std::to_string(max_profiled_steps));
  }
  if (std::string error = PatternError("step_pattern", step_pattern); !error.empty()) return Invalid(std::move(error));
  return Status::Ok();
}

}  // namespace smprof::analysis

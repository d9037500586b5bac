// StepMatcher: which annotation names are training steps, and their number
// (docs/ANALYSIS.md, "Steps"). Results are cached per distinct name, so the
// regex runs once per name, not once per event.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace smprof::analysis {

class StepMatcher {
 public:
  // Throws std::regex_error on a bad pattern (the Python layer turns it into ValueError).
  explicit StepMatcher(const std::string& pattern) : pattern_(pattern, std::regex::ECMAScript) {}

  // Whether `name` is a step; `number` is its parsed number, or -1 when the
  // pattern's first group is absent or empty (numbered by ordinal instead).
  bool Match(std::string_view name, std::int64_t* number);

 private:
  struct Result {
    bool is_step;
    std::int64_t number;
  };
  std::regex pattern_;
  std::unordered_map<std::string, Result> cache_;
};

}  // namespace smprof::analysis

#include "analysis/job/step_matcher.h"

#include <cstdlib>

namespace smprof::analysis {

bool StepMatcher::Match(std::string_view name, std::int64_t* number) {
  auto it = cache_.find(std::string(name));
  if (it == cache_.end()) {
    std::match_results<std::string_view::const_iterator> match;
    Result result{std::regex_match(name.begin(), name.end(), match, pattern_), -1};
    if (result.is_step && match.size() > 1 && match[1].matched && match[1].length() > 0) {
      result.number = std::strtoll(match[1].str().c_str(), nullptr, 10);
    }
    it = cache_.emplace(std::string(name), result).first;
  }
  *number = it->second.number;
  return it->second.is_step;
}

}  // namespace smprof::analysis

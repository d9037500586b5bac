// OpenRangeSearch: among ranges listed in start order, the last one still
// open at a time t (inferred attribution's "innermost range open at the
// launch", docs/ANALYSIS.md). Each range links to the nearest earlier one
// that ends later: every range in between ends no later than it, so once it
// has ended by t they have too, and the search jumps over them (a time
// outside every range costs a few jumps, not a walk back over every range).
// Times are found by galloping from the previous query's answer: launches
// come about in time order. The buffers are kept from one use to the next.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace smprof::analysis {

class OpenRangeSearch {
 public:
  void Clear() {
    starts_.clear();
    ends_.clear();
    links_.clear();
    later_ends_.clear();
    after_ = 0;
  }

  // Appends a range; ranges come in start order.
  void Add(std::int64_t start_ns, std::int64_t end_ns) {
    while (!later_ends_.empty() && ends_[static_cast<std::size_t>(later_ends_.back())] <= end_ns)
      later_ends_.pop_back();
    links_.push_back(later_ends_.empty() ? -1 : later_ends_.back());
    later_ends_.push_back(static_cast<std::ptrdiff_t>(ends_.size()));
    starts_.push_back(start_ns);
    ends_.push_back(end_ns);
  }

  // The index of the last range starting at or before t that ends after t; -1 if none.
  std::ptrdiff_t LastOpenAt(std::int64_t t) {
    after_ = FirstStartAfter(t);
    auto i = static_cast<std::ptrdiff_t>(after_) - 1;
    while (i >= 0 && ends_[static_cast<std::size_t>(i)] <= t) i = links_[static_cast<std::size_t>(i)];
    return i;
  }

 private:
  // The first index whose start is after t (std::upper_bound), galloping from after_.
  std::size_t FirstStartAfter(std::int64_t t) const {
    const auto at = [this](std::size_t i) { return starts_.begin() + static_cast<std::ptrdiff_t>(i); };
    const std::size_t hint = std::min(after_, starts_.size());
    if (hint > 0 && starts_[hint - 1] > t)
      return static_cast<std::size_t>(std::upper_bound(at(0), at(hint), t) - at(0));
    std::size_t step = 1;
    while (hint + step <= starts_.size() && starts_[hint + step - 1] <= t) step *= 2;
    return static_cast<std::size_t>(std::upper_bound(at(hint), at(std::min(hint + step, starts_.size())), t) - at(0));
  }

  std::vector<std::int64_t> starts_;
  std::vector<std::int64_t> ends_;
  std::vector<std::ptrdiff_t> links_;       // the nearest earlier range that ends later, or -1
  std::vector<std::ptrdiff_t> later_ends_;  // ranges whose ends decrease: the next range's link candidates
  std::size_t after_ = 0;                   // the last query's first start after it
};

}  // namespace smprof::analysis

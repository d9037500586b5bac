// OpenRangeSearch: among ranges listed in start order, the last one still
// open at a time t (inferred attribution's "innermost range open at the
// launch", docs/ANALYSIS.md). Each range links to the nearest earlier one
// that ends later: every range in between ends no later than it, so once it
// has ended by t they have too, and the search jumps over them (a time
// outside every range costs a few jumps, not a walk back over every range).
// Times are found by galloping from the previous query's answer: launches
// come about in time order. Ranges are appended at the back and forgotten at
// the front (a sliding window: the answers are those of a search built from
// the ranges kept), so a window kept in step with its ranges costs O(1) per
// range instead of a rebuild per query. The buffers are kept from one use to
// the next.
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
    first_ = 0;
    after_ = 0;
  }

  // The ranges kept.
  std::size_t size() const { return starts_.size() - first_; }

  // Appends a range; ranges come in start order.
  void Add(std::int64_t start_ns, std::int64_t end_ns) {
    while (!later_ends_.empty() && ends_[later_ends_.back()] <= end_ns) later_ends_.pop_back();
    // A link to a forgotten range is no link: every kept range before this one ends no later.
    links_.push_back(
        later_ends_.empty() || later_ends_.back() < first_ ? kNone : static_cast<std::ptrdiff_t>(later_ends_.back()));
    later_ends_.push_back(ends_.size());
    starts_.push_back(start_ns);
    ends_.push_back(end_ns);
  }

  // Forgets the earliest range kept (size() > 0).
  void PopFront() {
    ++first_;
    if (first_ >= kCompactAfter && 2 * first_ >= starts_.size()) Compact();
  }

  // The index among the kept ranges of the last one starting at or before t
  // that ends after t; -1 if none.
  std::ptrdiff_t LastOpenAt(std::int64_t t) {
    after_ = FirstStartAfter(t);
    auto i = static_cast<std::ptrdiff_t>(after_) - 1;
    const auto first = static_cast<std::ptrdiff_t>(first_);
    while (i >= first && ends_[static_cast<std::size_t>(i)] <= t) i = links_[static_cast<std::size_t>(i)];
    return i >= first ? i - first : kNone;
  }

 private:
  static constexpr std::ptrdiff_t kNone = -1;
  static constexpr std::size_t kCompactAfter = 4096;  // forgotten ranges whose memory is reused at once

  // The first index whose start is after t (std::upper_bound over the kept
  // ranges), galloping from after_.
  std::size_t FirstStartAfter(std::int64_t t) const {
    const auto at = [this](std::size_t i) { return starts_.begin() + static_cast<std::ptrdiff_t>(i); };
    const std::size_t hint = std::clamp(after_, first_, starts_.size());
    if (hint > first_ && starts_[hint - 1] > t)
      return static_cast<std::size_t>(std::upper_bound(at(first_), at(hint), t) - at(0));
    std::size_t step = 1;
    while (hint + step <= starts_.size() && starts_[hint + step - 1] <= t) step *= 2;
    return static_cast<std::size_t>(std::upper_bound(at(hint), at(std::min(hint + step, starts_.size())), t) - at(0));
  }

  // Drops the forgotten ranges' entries, renumbering the kept ones from 0.
  void Compact() {
    const auto first = static_cast<std::ptrdiff_t>(first_);
    starts_.erase(starts_.begin(), starts_.begin() + first);
    ends_.erase(ends_.begin(), ends_.begin() + first);
    links_.erase(links_.begin(), links_.begin() + first);
    for (std::ptrdiff_t& link : links_) link = link >= first ? link - first : kNone;
    const auto kept =
        std::find_if(later_ends_.begin(), later_ends_.end(), [this](std::size_t i) { return i >= first_; });
    later_ends_.erase(later_ends_.begin(), kept);
    for (std::size_t& i : later_ends_) i -= first_;
    after_ = after_ > first_ ? after_ - first_ : 0;
    first_ = 0;
  }

  std::vector<std::int64_t> starts_;
  std::vector<std::int64_t> ends_;
  std::vector<std::ptrdiff_t> links_;    // the nearest earlier range that ends later, or kNone
  std::vector<std::size_t> later_ends_;  // ranges whose ends decrease: the next range's link candidates
  std::size_t first_ = 0;                // the first range kept; those before it are forgotten
  std::size_t after_ = 0;                // the last query's first start after it
};

}  // namespace smprof::analysis

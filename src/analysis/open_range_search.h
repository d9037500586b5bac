// OpenRanges: a bounded window of ranges in arrival order (appended at the
// back, forgotten at the front), and among them the innermost one open at a
// time t (inferred attribution's "innermost range open at the launch",
// docs/ANALYSIS.md): in start order (then depth), the last range starting at
// or before t that has not ended by t.
//
// Ranges arrive about in start order (each frame's table is sorted), so the
// window is usually sorted as it stands and the search runs on it directly:
// each range links to the nearest earlier one that ends later (every range
// in between ends no later than it, so once it has ended by t they have too,
// and the search jumps over them), the links kept in step with appends and
// removals at O(1) per range. Times are found by galloping from the previous
// query's answer: launches come about in time order. While some neighbours
// are out of order, Prepare sorts a copy of the window to search instead.
// One array of ranges, reused from one use to the next.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace smprof::analysis {

template <typename Payload>
class OpenRanges {
 public:
  void Clear() {
    ranges_.clear();
    later_ends_.clear();
    first_ = 0;
    after_ = 0;
    out_of_order_ = 0;
    linked_ = true;
    sorted_.reset();
  }

  // The ranges kept.
  std::size_t size() const { return ranges_.size() - first_; }

  // Appends a range (the newest arrival).
  void Add(std::int64_t start_ns, std::int64_t end_ns, std::uint32_t depth, Payload payload) {
    Range& range = ranges_.emplace_back(Range{start_ns, end_ns, kNone, depth, payload});
    if (size() > 1 && Earlier(range, ranges_[ranges_.size() - 2])) ++out_of_order_;
    if (out_of_order_ > 0) {
      linked_ = false;
    } else if (linked_) {
      Link(ranges_.size() - 1);
    }
  }

  // Forgets the earliest arrival kept (size() > 0).
  void PopFront() {
    if (size() > 1 && Earlier(ranges_[first_ + 1], ranges_[first_])) --out_of_order_;
    ++first_;
    if (first_ == ranges_.size()) {
      ranges_.clear();
      later_ends_.clear();
      first_ = 0;
      after_ = 0;
    } else if (first_ >= kCompactAfter && 2 * first_ >= ranges_.size()) {
      Compact();
    }
  }

  // Readies the search after Adds and PopFronts: links the window if it is
  // sorted again, or sorts a copy of it if it is not.
  void Prepare() {
    if (out_of_order_ > 0) {
      std::vector<std::size_t> order;
      for (std::size_t i = first_; i < ranges_.size(); ++i) order.push_back(i);
      std::sort(order.begin(), order.end(),
                [this](std::size_t a, std::size_t b) { return Earlier(ranges_[a], ranges_[b]); });
      if (!sorted_) sorted_ = std::make_unique<OpenRanges>();
      sorted_->Clear();
      for (const std::size_t i : order) {
        const Range& r = ranges_[i];
        sorted_->Add(r.start_ns, r.end_ns, r.depth, r.payload);
      }
      return;
    }
    if (linked_) return;
    later_ends_.clear();
    for (std::size_t i = first_; i < ranges_.size(); ++i) Link(i);
    linked_ = true;
  }

  // The payload of the innermost range open at t, or nullptr (after Prepare).
  const Payload* InnermostOpenAt(std::int64_t t) {
    if (out_of_order_ > 0) return sorted_->InnermostOpenAt(t);
    after_ = FirstStartAfter(t);
    auto i = static_cast<std::ptrdiff_t>(after_) - 1;
    const auto first = static_cast<std::ptrdiff_t>(first_);
    while (i >= first && ranges_[static_cast<std::size_t>(i)].end_ns <= t)
      i = ranges_[static_cast<std::size_t>(i)].link;
    return i >= first ? &ranges_[static_cast<std::size_t>(i)].payload : nullptr;
  }

 private:
  static constexpr std::ptrdiff_t kNone = -1;
  static constexpr std::size_t kCompactAfter = 4096;  // forgotten ranges whose memory is reused at once

  struct Range {
    std::int64_t start_ns;
    std::int64_t end_ns;
    std::ptrdiff_t link;  // the nearest earlier range that ends later, or kNone
    std::uint32_t depth;
    Payload payload;
  };

  // By start, then depth: ranges starting together nest deeper later.
  static bool Earlier(const Range& a, const Range& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
  }

  // Links ranges_[i], the next range in start order after those linked.
  void Link(std::size_t i) {
    Range& range = ranges_[i];
    while (!later_ends_.empty() && ranges_[later_ends_.back()].end_ns <= range.end_ns) later_ends_.pop_back();
    // A link to a forgotten range is no link: every kept range before this one ends no later.
    range.link =
        later_ends_.empty() || later_ends_.back() < first_ ? kNone : static_cast<std::ptrdiff_t>(later_ends_.back());
    later_ends_.push_back(i);
  }

  // The first index whose start is after t (std::upper_bound over the kept
  // ranges), galloping from after_.
  std::size_t FirstStartAfter(std::int64_t t) const {
    const auto at = [this](std::size_t i) { return ranges_.begin() + static_cast<std::ptrdiff_t>(i); };
    const auto before = [](std::int64_t time, const Range& r) { return time < r.start_ns; };
    const std::size_t hint = std::clamp(after_, first_, ranges_.size());
    if (hint > first_ && ranges_[hint - 1].start_ns > t)
      return static_cast<std::size_t>(std::upper_bound(at(first_), at(hint), t, before) - at(0));
    std::size_t step = 1;
    while (hint + step <= ranges_.size() && ranges_[hint + step - 1].start_ns <= t) step *= 2;
    return static_cast<std::size_t>(std::upper_bound(at(hint), at(std::min(hint + step, ranges_.size())), t, before) -
                                    at(0));
  }

  // Drops the forgotten ranges, renumbering the kept ones from 0.
  void Compact() {
    const auto first = static_cast<std::ptrdiff_t>(first_);
    ranges_.erase(ranges_.begin(), ranges_.begin() + first);
    for (Range& range : ranges_) range.link = range.link >= first ? range.link - first : kNone;
    const auto kept =
        std::find_if(later_ends_.begin(), later_ends_.end(), [this](std::size_t i) { return i >= first_; });
    later_ends_.erase(later_ends_.begin(), kept);
    for (std::size_t& i : later_ends_) i -= first_;
    after_ = after_ > first_ ? after_ - first_ : 0;
    first_ = 0;
  }

  std::vector<Range> ranges_;            // in arrival order; ranges_[0, first_) are forgotten
  std::vector<std::size_t> later_ends_;  // linked ranges whose ends decrease: the next range's link candidates
  std::size_t first_ = 0;
  std::size_t after_ = 0;               // the last query's first start after it
  std::size_t out_of_order_ = 0;        // adjacent kept pairs out of start order: sorted when 0
  bool linked_ = true;                  // every kept range is linked (sorted since the last Prepare)
  std::unique_ptr<OpenRanges> sorted_;  // Prepare's sorted copy of the window while out_of_order_ > 0
};

}  // namespace smprof::analysis

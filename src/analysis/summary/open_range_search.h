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
// One ring of ranges, reused from one use to the next.
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
    later_ends_.clear();
    first_ = 0;
    end_ = 0;
    after_ = 0;
    out_of_order_ = 0;
    linked_ = true;
    sorted_.reset();
  }

  // The ranges kept.
  std::size_t size() const { return end_ - first_; }

  // Appends a range (the newest arrival).
  void Add(std::int64_t start_ns, std::int64_t end_ns, std::uint32_t depth, Payload payload) {
    if (size() == ring_.size()) Grow();
    Range& range = at(end_++);
    range = Range{start_ns, end_ns, kNone, depth, payload};
    if (size() > 1 && Earlier(range, at(end_ - 2))) ++out_of_order_;
    if (out_of_order_ > 0) {
      linked_ = false;
    } else if (linked_) {
      Link(end_ - 1);
    }
  }

  // The earliest arrival kept (size() > 0).
  const Payload& front() const { return at(first_).payload; }

  // Forgets the earliest arrival kept (size() > 0).
  void PopFront() {
    if (size() > 1 && Earlier(at(first_ + 1), at(first_))) --out_of_order_;
    ++first_;
    if (first_ == end_) {  // numbered from 0 again
      later_ends_.clear();
      first_ = end_ = after_ = 0;
    }
  }

  // Readies the search after Adds and PopFronts: links the window if it is
  // sorted again, or sorts a copy of it if it is not.
  void Prepare() {
    if (out_of_order_ > 0) {
      std::vector<std::size_t> order;
      for (std::size_t i = first_; i < end_; ++i) order.push_back(i);
      std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) { return Earlier(at(a), at(b)); });
      if (!sorted_) sorted_ = std::make_unique<OpenRanges>();
      sorted_->Clear();
      for (const std::size_t i : order) {
        const Range& r = at(i);
        sorted_->Add(r.start_ns, r.end_ns, r.depth, r.payload);
      }
      return;
    }
    if (linked_) return;
    later_ends_.clear();
    for (std::size_t i = first_; i < end_; ++i) Link(i);
    linked_ = true;
  }

  // The payload of the innermost range open at t, or nullptr (after Prepare).
  const Payload* InnermostOpenAt(std::int64_t t) {
    if (out_of_order_ > 0) return sorted_->InnermostOpenAt(t);
    after_ = FirstStartAfter(t);
    std::size_t i = after_;  // one past the range looked at
    while (i > first_ && at(i - 1).end_ns <= t) {
      const std::size_t link = at(i - 1).link;
      i = link == kNone ? 0 : link + 1;
    }
    return i > first_ ? &at(i - 1).payload : nullptr;
  }

 private:
  static constexpr std::size_t kNone = SIZE_MAX;
  static constexpr std::size_t kInitialSlots = 64;  // one window per annotating thread (launch_owner.h)

  struct Range {
    std::int64_t start_ns;
    std::int64_t end_ns;
    std::size_t link;  // the nearest earlier range that ends later, or kNone
    std::uint32_t depth;
    Payload payload;
  };

  // Ranges are numbered in arrival order from the last Clear; number i lives
  // in slot i mod the ring's size (a power of two), so forgetting the oldest
  // moves nothing and the links stay as they are.
  Range& at(std::size_t i) { return ring_[i & mask_]; }
  const Range& at(std::size_t i) const { return ring_[i & mask_]; }

  // Doubles the ring, each kept range to its slot in the new one.
  void Grow() {
    std::vector<Range> old = std::move(ring_);
    const std::size_t old_mask = mask_;
    ring_.assign(std::max(kInitialSlots, 2 * old.size()), Range{});
    mask_ = ring_.size() - 1;
    for (std::size_t i = first_; i < end_; ++i) at(i) = old[i & old_mask];
  }

  // By start, then depth: ranges starting together nest deeper later.
  static bool Earlier(const Range& a, const Range& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
  }

  // Links range i, the next range in start order after those linked.
  void Link(std::size_t i) {
    Range& range = at(i);
    while (!later_ends_.empty() && at(later_ends_.back()).end_ns <= range.end_ns) later_ends_.pop_back();
    // A link to a forgotten range is no link: every kept range before this one ends no later.
    range.link = later_ends_.empty() || later_ends_.back() < first_ ? kNone : later_ends_.back();
    if (later_ends_.size() >= ring_.size()) {
      // More candidates than ranges kept: drop the forgotten ones (the oldest, at the bottom).
      later_ends_.erase(later_ends_.begin(), std::lower_bound(later_ends_.begin(), later_ends_.end(), first_));
    }
    later_ends_.push_back(i);
  }

  // The first number whose start is after t (std::upper_bound over the kept
  // ranges), galloping from after_.
  std::size_t FirstStartAfter(std::int64_t t) const {
    const auto upper_bound = [this, t](std::size_t low, std::size_t high) {
      while (low < high) {
        const std::size_t middle = low + (high - low) / 2;
        if (t < at(middle).start_ns) {
          high = middle;
        } else {
          low = middle + 1;
        }
      }
      return low;
    };
    const std::size_t hint = std::clamp(after_, first_, end_);
    if (hint > first_ && at(hint - 1).start_ns > t) return upper_bound(first_, hint);
    std::size_t step = 1;
    while (hint + step <= end_ && at(hint + step - 1).start_ns <= t) step *= 2;
    return upper_bound(hint, std::min(hint + step, end_));
  }

  std::vector<Range> ring_;  // the kept ranges, numbers first_ to end_
  std::size_t mask_ = 0;
  std::vector<std::size_t> later_ends_;  // linked ranges whose ends decrease: the next range's link candidates
  std::size_t first_ = 0;
  std::size_t end_ = 0;
  std::size_t after_ = 0;               // the last query's first start after it
  std::size_t out_of_order_ = 0;        // adjacent kept pairs out of start order: sorted when 0
  bool linked_ = true;                  // every kept range is linked (sorted since the last Prepare)
  std::unique_ptr<OpenRanges> sorted_;  // Prepare's sorted copy of the window while out_of_order_ > 0
};

}  // namespace smprof::analysis

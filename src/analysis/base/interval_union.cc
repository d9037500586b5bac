#include "analysis/base/interval_union.h"

#include <algorithm>
#include <stdexcept>

namespace smprof::analysis {

void IntervalUnion::Add(std::int64_t start_ns, std::int64_t end_ns) {
  if (end_ns <= start_ns) return;
  const Interval interval{start_ns, end_ns};
  if (in_order_.empty() || !(interval < in_order_.back())) {
    in_order_.push_back(interval);
  } else {
    pending_.push(interval);
  }
  newest_start_ = std::max(newest_start_, start_ns);
  while (pending() > 0 && (Earliest().first < newest_start_ - window_ns_ || pending() > max_pending_)) MergeEarliest();
}

const IntervalUnion::Interval& IntervalUnion::Earliest() const {
  if (pending_.empty()) return in_order_.front();
  if (in_order_.empty()) return pending_.top();
  return pending_.top() < in_order_.front() ? pending_.top() : in_order_.front();
}

void IntervalUnion::MergeEarliest() {
  Interval next;
  if (!pending_.empty() && (in_order_.empty() || pending_.top() < in_order_.front())) {
    next = pending_.top();
    pending_.pop();
  } else {
    next = in_order_.front();
    in_order_.pop_front();
  }
  Merge(next.first, next.second);
}

void IntervalUnion::Flush() {
  while (pending() > 0) MergeEarliest();
  if (open_) Emit(open_start_, open_end_);
  open_ = false;
}

void IntervalUnion::Save(PartialEncoder& out) const {
  if (pending() > 0 || open_) throw std::logic_error("IntervalUnion::Save: not flushed");
  out.Int(union_ns_);
  out.Uint(late_records_);
}

void IntervalUnion::Restore(PartialDecoder& in) {
  if (union_ns_ != 0 || late_records_ != 0 || pending() > 0 || open_) {
    throw std::logic_error("IntervalUnion::Restore: the union holds data already");
  }
  union_ns_ = in.Int();
  late_records_ = in.Uint();
}

void IntervalUnion::Merge(std::int64_t start_ns, std::int64_t end_ns) {
  if (!open_) {
    open_ = true;
    open_start_ = start_ns;
    open_end_ = end_ns;
    return;
  }
  if (start_ns < open_start_) {
    // Late: rows after it were merged and emitted already.
    ++late_records_;
    start_ns = open_start_;
    if (end_ns <= start_ns) return;
  }
  if (start_ns <= open_end_) {
    open_end_ = std::max(open_end_, end_ns);
    return;
  }
  Emit(open_start_, open_end_);
  open_start_ = start_ns;
  open_end_ = end_ns;
}

void IntervalUnion::Emit(std::int64_t start_ns, std::int64_t end_ns) {
  union_ns_ += end_ns - start_ns;
  if (buckets_ != nullptr) buckets_->AddInterval(start_ns, end_ns);
}

}  // namespace smprof::analysis

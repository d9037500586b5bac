#include "analysis/interval_union.h"

#include <algorithm>

namespace smprof::analysis {

void IntervalUnion::Add(std::int64_t start_ns, std::int64_t end_ns) {
  if (end_ns <= start_ns) return;
  pending_.emplace(start_ns, end_ns);
  newest_start_ = std::max(newest_start_, start_ns);
  while (!pending_.empty() && (pending_.top().first < newest_start_ - window_ns_ || pending_.size() > max_pending_)) {
    const Interval next = pending_.top();
    pending_.pop();
    Merge(next.first, next.second);
  }
}

void IntervalUnion::Flush() {
  while (!pending_.empty()) {
    const Interval next = pending_.top();
    pending_.pop();
    Merge(next.first, next.second);
  }
  if (open_) Emit(open_start_, open_end_);
  open_ = false;
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

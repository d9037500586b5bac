// IntervalUnion: the length of the union of a GPU's busy intervals, with
// rows arriving only roughly in start order (CUPTI hands buffers over out of
// order). Rows wait until the newest start is more than `window_ns` past
// them (or `max_pending` rows wait), then merge in start order: rows that
// arrive in order wait in a FIFO, the others in a min-heap, and the earlier
// of the two fronts merges next (a heap alone costs a log-time push and pop
// per row). A row starting before the merged frontier is late: only its
// part after the frontier counts (docs/ANALYSIS.md).
#pragma once

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "analysis/base/fifo.h"
#include "analysis/base/partial_codec.h"
#include "analysis/base/time_buckets.h"

namespace smprof::analysis {

class IntervalUnion {
 public:
  // Merged intervals are also spread over `buckets` (may be null).
  IntervalUnion(std::int64_t window_ns, std::size_t max_pending, BucketSeries* buckets)
      : window_ns_(window_ns), max_pending_(max_pending), buckets_(buckets) {}

  void Add(std::int64_t start_ns, std::int64_t end_ns);
  // Merges everything pending; call once at the end.
  void Flush();

  std::int64_t union_ns() const { return union_ns_; }
  std::uint64_t late_records() const { return late_records_; }

  // The partial-summary codec, once flushed (its buckets are saved with
  // their owner). A union belongs to one process stream, which one partial
  // holds whole: Restore refills a new union, it does not merge.
  void Save(PartialEncoder& out) const;
  void Restore(PartialDecoder& in);

 private:
  using Interval = std::pair<std::int64_t, std::int64_t>;
  std::size_t pending() const { return in_order_.size() + pending_.size(); }
  // The earliest waiting interval (pending() > 0).
  const Interval& Earliest() const;
  void MergeEarliest();
  void Merge(std::int64_t start_ns, std::int64_t end_ns);
  void Emit(std::int64_t start_ns, std::int64_t end_ns);

  Fifo<Interval> in_order_;  // sorted: each row at or after the one before
  std::priority_queue<Interval, std::vector<Interval>, std::greater<Interval>> pending_;  // the others
  std::int64_t window_ns_;
  std::size_t max_pending_;
  BucketSeries* buckets_;
  std::int64_t newest_start_ = INT64_MIN;
  bool open_ = false;  // [open_start_, open_end_) is merged but not yet emitted
  std::int64_t open_start_ = 0;
  std::int64_t open_end_ = 0;
  std::int64_t union_ns_ = 0;
  std::uint64_t late_records_ = 0;
};

}  // namespace smprof::analysis

// BucketSeries: a quantity summed into time buckets of a grid shared by the
// whole job (origin = the job's start on the wall clock, width = 1 ms x 2^k).
// A series starts at 1 ms and doubles its width (summing neighbours) when a
// time past `max_buckets` arrives, so its memory is bounded; at the end every
// series is brought to the job's common width with Rebin.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/base/partial_codec.h"

namespace smprof::analysis {

inline constexpr std::int64_t kMinBucketNs = 1'000'000;

// The smallest 1 ms x 2^k width that fits `span_ns` in `max_buckets`.
std::int64_t BucketWidthFor(std::int64_t span_ns, int max_buckets);

class BucketSeries {
 public:
  BucketSeries(std::int64_t origin_ns, int max_buckets) : origin_ns_(origin_ns), max_buckets_(max_buckets) {}

  // Adds `amount` to the bucket holding wall time `t_ns` (clamped to origin).
  void Add(std::int64_t t_ns, double amount);
  // Spreads a busy interval [start, end) over the buckets it covers, adding
  // the overlapped nanoseconds to each.
  void AddInterval(std::int64_t start_ns, std::int64_t end_ns);

  std::int64_t width_ns() const { return width_ns_; }
  // The sums at `width_ns` (a multiple of this series' width), `buckets` long.
  std::vector<double> Rebin(std::int64_t width_ns, int buckets) const;

  // The partial-summary codec. A series belongs to one process stream, which
  // one partial holds whole: Restore refills a new series, it does not merge.
  void Save(PartialEncoder& out) const;
  void Restore(PartialDecoder& in);

 private:
  std::size_t IndexFor(std::int64_t t_ns);  // widens as needed
  std::int64_t origin_ns_;
  int max_buckets_;
  std::int64_t width_ns_ = kMinBucketNs;
  std::vector<double> sums_;
  // The bucket AddInterval ended in last, [start, end): most intervals (GPU
  // work, micro- to milliseconds) lie in the bucket of the one before, and
  // find it without IndexFor's divisions. Emptied when the width doubles.
  std::size_t last_index_ = 0;
  std::int64_t last_start_ns_ = 0;
  std::int64_t last_end_ns_ = INT64_MIN;
};

}  // namespace smprof::analysis

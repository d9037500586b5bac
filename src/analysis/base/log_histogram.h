// LogHistogram: durations in fixed logarithmic buckets, for percentiles in
// bounded memory (docs/ANALYSIS.md states the error bound).
//
// Values below 32 have a bucket each; above, a bucket is a power of two and
// the 4 bits after the leading one (16 buckets per octave). A quantile is the
// middle of the nearest-rank value's bucket, clamped to [min, max]: at most
// 1/32 relative error. count, total, min and max are exact.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/base/partial_codec.h"

namespace smprof::analysis {

class LogHistogram {
 public:
  static constexpr int kSubBits = 4;
  static constexpr std::int64_t kExactBelow = std::int64_t{2} << kSubBits;  // 32

  // (Inline: one per kernel in the summary.)
  void Add(std::int64_t value) {
    value = std::max<std::int64_t>(value, 0);
    const auto index = static_cast<std::size_t>(BucketIndex(value));
    if (index >= counts_.size()) counts_.resize(index + 1, 0);
    ++counts_[index];
    min_ = count_ ? std::min(min_, value) : value;
    max_ = count_ ? std::max(max_, value) : value;
    ++count_;
    total_ += value;
  }
  void Merge(const LogHistogram& other);
  // The partial-summary codec: Save writes the state, MergeFrom merges a saved one in.
  void Save(PartialEncoder& out) const;
  void MergeFrom(PartialDecoder& in);

  std::uint64_t count() const { return count_; }
  std::int64_t total() const { return total_; }
  std::int64_t min() const { return count_ ? min_ : 0; }
  std::int64_t max() const { return count_ ? max_ : 0; }
  std::int64_t mean() const { return count_ ? total_ / static_cast<std::int64_t>(count_) : 0; }
  // Nearest-rank quantile, q in (0, 1]; 0 when empty.
  std::int64_t Quantile(double q) const;

  struct Bucket {
    std::int64_t lo;
    std::int64_t hi;  // exclusive
    std::uint64_t count;
  };
  std::vector<Bucket> NonEmptyBuckets() const;

  static int BucketIndex(std::int64_t value) {
    if (value < kExactBelow) return static_cast<int>(std::max<std::int64_t>(value, 0));
    const int exponent = 63 - __builtin_clzll(static_cast<std::uint64_t>(value));  // >= kSubBits + 1
    const int sub = static_cast<int>((value >> (exponent - kSubBits)) & ((1 << kSubBits) - 1));
    return static_cast<int>(kExactBelow) + (exponent - kSubBits - 1) * (1 << kSubBits) + sub;
  }
  static std::int64_t BucketLow(int index);
  static std::int64_t BucketWidth(int index);

 private:
  std::vector<std::uint64_t> counts_;  // grows to the largest bucket used
  std::uint64_t count_ = 0;
  std::int64_t total_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace smprof::analysis

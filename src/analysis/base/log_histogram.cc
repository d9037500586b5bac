#include "analysis/base/log_histogram.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace smprof::analysis {

std::int64_t LogHistogram::BucketLow(int index) {
  if (index < kExactBelow) return index;
  const int octave = (index - static_cast<int>(kExactBelow)) >> kSubBits;
  const int sub = (index - static_cast<int>(kExactBelow)) & ((1 << kSubBits) - 1);
  const int exponent = octave + kSubBits + 1;
  return (std::int64_t{(1 << kSubBits) + sub}) << (exponent - kSubBits);
}

std::int64_t LogHistogram::BucketWidth(int index) {
  if (index < kExactBelow) return 1;
  const int octave = (index - static_cast<int>(kExactBelow)) >> kSubBits;
  return std::int64_t{1} << (octave + 1);
}

void LogHistogram::Merge(const LogHistogram& other) {
  if (other.count_ == 0) return;
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (std::size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  min_ = count_ ? std::min(min_, other.min_) : other.min_;
  max_ = count_ ? std::max(max_, other.max_) : other.max_;
  count_ += other.count_;
  total_ += other.total_;
}

void LogHistogram::Save(PartialEncoder& out) const {
  out.Uint(count_);
  if (count_ == 0) return;
  out.Int(total_);
  out.Int(min_);
  out.Int(max_);
  std::size_t used = 0;
  for (const std::uint64_t c : counts_) used += c != 0;
  out.Uint(used);
  std::size_t previous = 0;  // indexes as gaps from the previous used one
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    out.Uint(i - previous);
    out.Uint(counts_[i]);
    previous = i;
  }
}

void LogHistogram::MergeFrom(PartialDecoder& in) {
  LogHistogram saved;
  saved.count_ = in.Uint();
  if (saved.count_ == 0) return;
  saved.total_ = in.Int();
  saved.min_ = in.Int();
  saved.max_ = in.Int();
  const std::size_t used = in.Count();
  std::size_t index = 0;
  for (std::size_t n = 0; n < used; ++n) {
    index += in.Uint();
    if (index > static_cast<std::size_t>(BucketIndex(INT64_MAX)))
      throw std::invalid_argument("partial summary damaged: histogram bucket out of range");
    if (index >= saved.counts_.size()) saved.counts_.resize(index + 1, 0);
    saved.counts_[index] += in.Uint();
  }
  Merge(saved);
}

std::int64_t LogHistogram::Quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * count_)));
  if (rank == 1) return min_;  // the extremes are known exactly
  if (rank >= count_) return max_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const int index = static_cast<int>(i);
      const std::int64_t middle = BucketLow(index) + BucketWidth(index) / 2;
      return std::clamp(middle, min_, max_);
    }
  }
  return max_;
}

std::vector<LogHistogram::Bucket> LogHistogram::NonEmptyBuckets() const {
  std::vector<Bucket> out;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    const int index = static_cast<int>(i);
    out.push_back({BucketLow(index), BucketLow(index) + BucketWidth(index), counts_[i]});
  }
  return out;
}

}  // namespace smprof::analysis

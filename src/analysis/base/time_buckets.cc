#include "analysis/base/time_buckets.h"

#include <algorithm>
#include <stdexcept>

namespace smprof::analysis {

std::int64_t BucketWidthFor(std::int64_t span_ns, int max_buckets) {
  std::int64_t width = kMinBucketNs;
  while (span_ns > width * max_buckets) width *= 2;
  return width;
}

std::size_t BucketSeries::IndexFor(std::int64_t t_ns) {
  const std::int64_t offset = std::max<std::int64_t>(t_ns - origin_ns_, 0);
  while (offset / width_ns_ >= max_buckets_) {
    std::vector<double> halved((sums_.size() + 1) / 2, 0.0);
    for (std::size_t i = 0; i < sums_.size(); ++i) halved[i / 2] += sums_[i];
    sums_ = std::move(halved);
    width_ns_ *= 2;
    last_end_ns_ = INT64_MIN;
  }
  const auto index = static_cast<std::size_t>(offset / width_ns_);
  if (index >= sums_.size()) sums_.resize(index + 1, 0.0);
  return index;
}

void BucketSeries::Add(std::int64_t t_ns, double amount) { sums_[IndexFor(t_ns)] += amount; }

void BucketSeries::AddInterval(std::int64_t start_ns, std::int64_t end_ns) {
  start_ns = std::max(start_ns, origin_ns_);
  if (end_ns <= start_ns) return;
  if (start_ns >= last_start_ns_ && end_ns <= last_end_ns_) {
    sums_[last_index_] += static_cast<double>(end_ns - start_ns);
    return;
  }
  const std::size_t last = IndexFor(end_ns - 1);  // widen first, so the loop below sees the final width
  for (std::int64_t t = start_ns; t < end_ns;) {
    const std::size_t index = IndexFor(t);
    const std::int64_t bucket_end = origin_ns_ + static_cast<std::int64_t>(index + 1) * width_ns_;
    const std::int64_t piece_end = std::min(bucket_end, end_ns);
    sums_[index] += static_cast<double>(piece_end - t);
    t = piece_end;
  }
  last_index_ = last;
  last_start_ns_ = origin_ns_ + static_cast<std::int64_t>(last) * width_ns_;
  last_end_ns_ = last_start_ns_ + width_ns_;
}

void BucketSeries::Save(PartialEncoder& out) const {
  out.Int(width_ns_);
  out.Uint(sums_.size());
  for (const double sum : sums_) out.Double(sum);
}

void BucketSeries::Restore(PartialDecoder& in) {
  if (!sums_.empty()) throw std::logic_error("BucketSeries::Restore: the series holds data already");
  width_ns_ = in.Int();
  if (width_ns_ < kMinBucketNs) throw std::invalid_argument("partial summary damaged: bucket width below 1 ms");
  sums_.resize(in.Count());
  for (double& sum : sums_) sum = in.Double();
}

std::vector<double> BucketSeries::Rebin(std::int64_t width_ns, int buckets) const {
  std::vector<double> out(buckets, 0.0);
  const std::int64_t factor = std::max<std::int64_t>(width_ns / width_ns_, 1);
  for (std::size_t i = 0; i < sums_.size(); ++i) {
    const auto index = static_cast<std::size_t>(i / factor);
    if (index < out.size()) out[index] += sums_[i];
  }
  return out;
}

}  // namespace smprof::analysis

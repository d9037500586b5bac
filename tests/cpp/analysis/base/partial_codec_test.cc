// The partial-summary codec and the Save / MergeFrom / Restore of the summary's
// building blocks: what is saved comes back exactly (doubles bit for bit),
// merging saved histograms equals merging the histograms, and damaged bytes
// are an error, never a crash or a wrong state.
#include "analysis/base/partial_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/base/interval_union.h"
#include "analysis/base/log_histogram.h"
#include "analysis/base/time_buckets.h"

namespace smprof::analysis {
namespace {

TEST(PartialCodec, NumbersStringsAndDoublesComeBackExactly) {
  const std::vector<std::int64_t> ints = {
      0, 1, -1, 63, -64, 64, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  const std::vector<double> doubles = {0.0, -0.0, 0.1, 1e300, -3.5, std::nextafter(1.0, 2.0)};
  PartialEncoder out;
  for (const std::int64_t v : ints) out.Int(v);
  out.Uint(std::numeric_limits<std::uint64_t>::max());
  for (const double v : doubles) out.Double(v);
  out.String(std::string("a\0b", 3));
  out.Bool(true);
  PartialDecoder in(out.bytes());
  for (const std::int64_t v : ints) EXPECT_EQ(in.Int(), v);
  EXPECT_EQ(in.Uint(), std::numeric_limits<std::uint64_t>::max());
  for (const double v : doubles) {
    const double back = in.Double();
    EXPECT_EQ(std::signbit(back), std::signbit(v));
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(in.String(), std::string("a\0b", 3));
  EXPECT_TRUE(in.Bool());
  EXPECT_TRUE(in.done());
}

TEST(PartialCodec, EveryTruncationIsAnError) {
  PartialEncoder out;
  out.Int(-123456789);
  out.String("some text");
  out.Double(2.5);
  for (std::size_t size = 0; size < out.bytes().size(); ++size) {
    PartialDecoder in(std::string_view(out.bytes()).substr(0, size));
    EXPECT_THROW(
        {
          in.Int();
          in.String();
          in.Double();
        },
        std::invalid_argument)
        << size;
  }
}

TEST(PartialCodec, ACountLargerThanTheBytesLeftIsAnError) {
  PartialEncoder out;
  out.Uint(1000);
  out.Uint(1);
  PartialDecoder in(out.bytes());
  EXPECT_THROW(in.Count(), std::invalid_argument);
}

LogHistogram Saved(const LogHistogram& h) {
  PartialEncoder out;
  h.Save(out);
  PartialDecoder in(out.bytes());
  LogHistogram back;
  back.MergeFrom(in);
  EXPECT_TRUE(in.done());
  return back;
}

void ExpectSameHistogram(const LogHistogram& a, const LogHistogram& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.total(), b.total());
  EXPECT_EQ(a.min(), b.min());
  EXPECT_EQ(a.max(), b.max());
  for (const double q : {0.1, 0.5, 0.9, 0.99}) EXPECT_EQ(a.Quantile(q), b.Quantile(q)) << q;
  const auto ab = a.NonEmptyBuckets(), bb = b.NonEmptyBuckets();
  ASSERT_EQ(ab.size(), bb.size());
  for (std::size_t i = 0; i < ab.size(); ++i) {
    EXPECT_EQ(ab[i].lo, bb[i].lo);
    EXPECT_EQ(ab[i].count, bb[i].count);
  }
}

TEST(LogHistogramPartial, SavedAndMergedEqualsMerged) {
  LogHistogram a, b, empty;
  for (std::int64_t v = 0; v < 100000; v += 37) a.Add(v * v);
  for (std::int64_t v : {5, 7, 1'000'000'007}) b.Add(v);
  ExpectSameHistogram(Saved(a), a);
  ExpectSameHistogram(Saved(empty), empty);
  LogHistogram merged = a;
  merged.Merge(b);
  LogHistogram via_partials = Saved(a);
  PartialEncoder out;
  b.Save(out);
  PartialDecoder in(out.bytes());
  via_partials.MergeFrom(in);
  ExpectSameHistogram(via_partials, merged);
}

TEST(LogHistogramPartial, ABucketPastTheLastIsAnError) {
  PartialEncoder out;
  out.Uint(1);         // count
  out.Int(1);          // total
  out.Int(1);          // min
  out.Int(1);          // max
  out.Uint(1);         // one bucket
  out.Uint(1u << 20);  // far past the last bucket
  out.Uint(1);
  PartialDecoder in(out.bytes());
  LogHistogram h;
  EXPECT_THROW(h.MergeFrom(in), std::invalid_argument);
}

TEST(BucketSeriesPartial, RestoredSeriesRebinsTheSame) {
  BucketSeries series(1'000'000'000, 50);
  for (std::int64_t t = 0; t < 400'000'000; t += 3'333'333) series.Add(1'000'000'000 + t, 0.1 * t);
  series.AddInterval(1'100'000'000, 1'250'000'000);
  PartialEncoder out;
  series.Save(out);
  PartialDecoder in(out.bytes());
  BucketSeries back(1'000'000'000, 50);
  back.Restore(in);
  EXPECT_TRUE(in.done());
  EXPECT_EQ(back.width_ns(), series.width_ns());
  EXPECT_EQ(back.Rebin(series.width_ns() * 2, 40), series.Rebin(series.width_ns() * 2, 40));
  PartialDecoder again(out.bytes());
  EXPECT_THROW(back.Restore(again), std::logic_error);  // a stream's series is never merged
}

TEST(IntervalUnionPartial, SavesOnlyOnceFlushedAndRestoresTheTotals) {
  IntervalUnion u(10, 16, nullptr);
  u.Add(100, 200);
  u.Add(150, 400);
  u.Add(900, 1000);
  u.Add(50, 300);  // late: [100, 400) merged already
  PartialEncoder early;
  EXPECT_THROW(u.Save(early), std::logic_error);  // [900, 1000) still waits in the reorder window
  u.Flush();
  EXPECT_EQ(u.late_records(), 1u);
  PartialEncoder out;
  u.Save(out);
  PartialDecoder in(out.bytes());
  IntervalUnion back(10, 16, nullptr);
  back.Restore(in);
  EXPECT_EQ(back.union_ns(), u.union_ns());
  EXPECT_EQ(back.late_records(), u.late_records());
  EXPECT_EQ(back.union_ns(), 400);
}

}  // namespace
}  // namespace smprof::analysis

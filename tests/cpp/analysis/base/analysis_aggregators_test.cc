// The analysis aggregators on their own: percentiles of the log histogram
// within their stated bound, the union of out-of-order GPU intervals, time
// buckets that widen to stay bounded, the bounded correlation join, the
// frame's index of correlation ids and the GPU work no annotation claimed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <numeric>
#include <queue>
#include <random>
#include <unordered_map>
#include <vector>

#include "analysis/base/correlation_join.h"
#include "analysis/base/fifo.h"
#include "analysis/base/flat_id_map.h"
#include "analysis/base/id_window_map.h"
#include "analysis/base/interval_union.h"
#include "analysis/base/log_histogram.h"
#include "analysis/base/time_buckets.h"
#include "analysis/summary/frame_id_index.h"
#include "analysis/summary/open_range_search.h"
#include "analysis/summary/unattributed_work.h"

namespace smprof::analysis {
namespace {

TEST(LogHistogram, SmallValuesAreExact) {
  LogHistogram h;
  for (std::int64_t v : {3, 1, 2, 31}) h.Add(v);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.total(), 37);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 31);
  EXPECT_EQ(h.Quantile(0.5), 2);
  EXPECT_EQ(h.Quantile(0.75), 3);
}

TEST(LogHistogram, QuantilesWithinOneThirtySecond) {
  LogHistogram h;
  std::vector<std::int64_t> values;
  for (std::int64_t i = 1; i <= 10000; ++i) values.push_back(i * i * 37 + 1000);
  for (auto v : values) h.Add(v);
  for (double q : {0.01, 0.5, 0.9, 0.99, 1.0}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * values.size()));
    const std::int64_t exact = values[rank - 1];
    EXPECT_LE(std::abs(h.Quantile(q) - exact), exact / 32) << q;
  }
  EXPECT_EQ(h.Quantile(1.0), values.back());
}

TEST(LogHistogram, BucketsTileTheLine) {
  for (int i = 0; i < 900; ++i) {
    EXPECT_EQ(LogHistogram::BucketLow(i) + LogHistogram::BucketWidth(i), LogHistogram::BucketLow(i + 1)) << i;
    EXPECT_EQ(LogHistogram::BucketIndex(LogHistogram::BucketLow(i)), i);
  }
}

TEST(LogHistogram, MergeEqualsAddingEverything) {
  LogHistogram a, b, all;
  for (std::int64_t v = 1; v < 5000; v += 7) (v % 2 ? a : b).Add(v), all.Add(v);
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.total(), all.total());
  EXPECT_EQ(a.Quantile(0.9), all.Quantile(0.9));
}

TEST(IntervalUnion, OverlapsCountOnce) {
  IntervalUnion u(1000, 1 << 20, nullptr);
  u.Add(0, 40);
  u.Add(20, 60);
  u.Add(100, 110);
  u.Add(105, 108);
  u.Flush();
  EXPECT_EQ(u.union_ns(), 70);
  EXPECT_EQ(u.late_records(), 0u);
}

TEST(IntervalUnion, OutOfOrderWithinWindowIsExact) {
  IntervalUnion u(100, 1 << 20, nullptr);
  u.Add(50, 60);
  u.Add(0, 10);  // earlier, but within the window
  u.Add(55, 70);
  u.Flush();
  EXPECT_EQ(u.union_ns(), 30);
  EXPECT_EQ(u.late_records(), 0u);
}

TEST(IntervalUnion, LateRecordsAreCountedAndClipped) {
  IntervalUnion u(10, 1 << 20, nullptr);
  u.Add(0, 10);
  u.Add(100, 110);
  u.Add(200, 210);  // merges [0,10) and [100,110): the frontier is at 100
  u.Add(5, 105);    // late: only [100, 105) could count, and it is covered already
  u.Flush();
  EXPECT_EQ(u.union_ns(), 30);
  EXPECT_EQ(u.late_records(), 1u);
}

TEST(IntervalUnion, PendingRowsAreBounded) {
  IntervalUnion u(INT64_MAX / 2, 4, nullptr);
  for (int i = 9; i >= 0; --i) u.Add(i * 10, i * 10 + 5);  // reverse order, window never passes
  u.Flush();
  EXPECT_GT(u.late_records(), 0u);  // the cap forced merges before the earlier rows came
}

// The union as one min-heap of pending rows computes it (the definition):
// rows merge in start order once the newest start is `window` past them or
// more than `cap` wait; a row starting before the merged frontier is late.
std::pair<std::int64_t, std::uint64_t> HeapUnion(const std::vector<std::pair<std::int64_t, std::int64_t>>& rows,
                                                 std::int64_t window, std::size_t cap) {
  std::priority_queue<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>,
                      std::greater<>>
      heap;
  std::int64_t newest = INT64_MIN, total = 0, open_start = 0, open_end = 0;
  std::uint64_t late = 0;
  bool open = false;
  const auto merge = [&](std::int64_t start, std::int64_t end) {
    if (open && start < open_start) {
      ++late;
      start = open_start;
      if (end <= start) return;
    }
    if (open && start <= open_end) {
      open_end = std::max(open_end, end);
      return;
    }
    if (open) total += open_end - open_start;
    open = true;
    open_start = start;
    open_end = end;
  };
  for (const auto& [start, end] : rows) {
    if (end <= start) continue;
    heap.emplace(start, end);
    newest = std::max(newest, start);
    while (!heap.empty() && (heap.top().first < newest - window || heap.size() > cap)) {
      merge(heap.top().first, heap.top().second);
      heap.pop();
    }
  }
  for (; !heap.empty(); heap.pop()) merge(heap.top().first, heap.top().second);
  if (open) total += open_end - open_start;
  return {total, late};
}

TEST(IntervalUnion, RowsInAndOutOfOrderMergeAsOneHeapWould) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t window = std::int64_t{1} << (trial % 12);
    const std::size_t cap = 1 + trial % 50;
    std::vector<std::pair<std::int64_t, std::int64_t>> rows;
    std::int64_t t = 0;
    for (int i = 0; i < 300; ++i) {
      t += static_cast<std::int64_t>(random() % 40);
      // Mostly in order, some rows early (CUPTI buffers out of order), some equal, some empty.
      const std::int64_t start = random() % 5 == 0 ? t - static_cast<std::int64_t>(random() % 500) : t;
      rows.emplace_back(start, start + static_cast<std::int64_t>(random() % 60));
    }
    IntervalUnion u(window, cap, nullptr);
    for (const auto& [start, end] : rows) u.Add(start, end);
    u.Flush();
    const auto [total, late] = HeapUnion(rows, window, cap);
    ASSERT_EQ(u.union_ns(), total) << "trial " << trial;
    ASSERT_EQ(u.late_records(), late) << "trial " << trial;
  }
}

TEST(Fifo, BehavesAsADequeThroughPopsAndCompactions) {
  // Long runs of pushes and pops, so the popped prefix passes the compaction
  // threshold many times with items left behind it, and empties now and then.
  std::mt19937_64 random(17);
  Fifo<std::int64_t> fifo;
  std::deque<std::int64_t> reference;
  for (int step = 0; step < 200000; ++step) {
    const auto action = random() % 8;
    if (action < 5) {
      fifo.push_back(step);
      reference.push_back(step);
    } else if (action < 7 && !reference.empty()) {
      const std::size_t n = 1 + random() % std::min<std::size_t>(reference.size(), 3);
      fifo.pop_front(n);
      reference.erase(reference.begin(), reference.begin() + static_cast<std::ptrdiff_t>(n));
    } else if (random() % 2 == 0 && !reference.empty()) {
      const std::size_t i = random() % reference.size();
      fifo[i] = -step;  // written in place, as StepProfile does
      reference[i] = -step;
    } else if (random() % 5000 == 0) {
      fifo.clear();
      reference.clear();
    }
    ASSERT_EQ(fifo.size(), reference.size()) << step;
    ASSERT_EQ(fifo.empty(), reference.empty()) << step;
    if (!reference.empty()) {
      ASSERT_EQ(fifo.front(), reference.front()) << step;
      ASSERT_EQ(fifo.back(), reference.back()) << step;
    }
  }
  ASSERT_TRUE(std::equal(fifo.begin(), fifo.end(), reference.begin(), reference.end()));
}

TEST(FlatIdMap, BehavesAsAnUnorderedMapThroughGrowthAndDeletions) {
  std::mt19937_64 random(11);
  FlatIdMap<std::int64_t> map;
  std::unordered_map<std::uint32_t, std::int64_t> reference;
  for (int step = 0; step < 200000; ++step) {
    // Ids from a small range (long probe runs, wrap-around) and consecutive ones.
    const auto id = static_cast<std::uint32_t>(step % 3 == 0 ? random() % 700 : step / 3);
    switch (random() % 4) {
      case 0:
      case 1: {
        bool added = false;
        map.FindOrAdd(id, &added) = step;
        ASSERT_EQ(added, reference.count(id) == 0) << step;
        reference[id] = step;
        break;
      }
      case 2: {
        const auto it = reference.find(id);
        std::int64_t taken = -1;
        ASSERT_EQ(step % 2 ? map.Erase(id) : map.Take(id, &taken), it != reference.end()) << step;
        if (step % 2 == 0 && it != reference.end()) {
          ASSERT_EQ(taken, it->second) << step;
        }
        if (it != reference.end()) reference.erase(it);
        break;
      }
      default: {
        const std::int64_t* found = map.Find(id);
        const auto it = reference.find(id);
        ASSERT_EQ(found != nullptr, it != reference.end()) << step;
        if (found != nullptr) {
          ASSERT_EQ(*found, it->second) << step;
        }
      }
    }
    ASSERT_EQ(map.size(), reference.size());
    if (step % 50000 == 49999) {
      for (const auto& [key, value] : reference) ASSERT_EQ(*map.Find(key), value);
      map.Clear();
      reference.clear();
      ASSERT_EQ(map.Find(id), nullptr);
    }
  }
}

TEST(IdWindowMap, BehavesAsAnUnorderedMapForWindowsDenseSparseAndStraggling) {
  // A window of ids counting up, removed about oldest first, in three
  // shapes: dense (the ring only), sparse (ids 1 in 7: slots collide once
  // the window is wider than the ring), and with stragglers (old ids that
  // stay: they collide with new ids one ring apart and wait beside it).
  std::mt19937_64 random(13);
  for (const std::uint32_t stride : {1u, 7u}) {
    IdWindowMap<std::int64_t> map;
    std::unordered_map<std::uint32_t, std::int64_t> reference;
    std::deque<std::uint32_t> window;
    std::uint32_t next = 1;
    for (int step = 0; step < 200000; ++step) {
      const int action = static_cast<int>(random() % 10);
      if (action < 4) {  // a new id, sometimes one again
        const std::uint32_t id = random() % 20 == 0 && !window.empty() ? window.back() : (next += stride);
        bool added = false;
        map.FindOrAdd(id, &added) = step;
        ASSERT_EQ(added, reference.count(id) == 0) << step;
        if (added) window.push_back(id);
        reference[id] = step;
      } else if (action < 7 && !window.empty()) {  // the oldest leaves, or one near it; stragglers stay
        const std::size_t at = random() % std::min<std::size_t>(window.size(), 4);
        const std::uint32_t id = window[at];
        window.erase(window.begin() + static_cast<std::ptrdiff_t>(at));
        if (random() % 100 == 0) continue;  // a straggler: in the map for good
        std::int64_t taken = -1;
        ASSERT_EQ(step % 2 ? map.Erase(id) : map.Take(id, &taken), reference.count(id) == 1) << step;
        if (step % 2 == 0) {
          ASSERT_EQ(taken, reference[id]) << step;
        }
        reference.erase(id);
      } else {  // a lookup: a live id, an id never added, or one removed
        const auto id = static_cast<std::uint32_t>(random() % 3 == 0 && !window.empty()
                                                       ? window[random() % window.size()]
                                                       : next - random() % (std::uint32_t{3000} * stride));
        const std::int64_t* found = map.Find(id);
        const auto it = reference.find(id);
        ASSERT_EQ(found != nullptr, it != reference.end()) << step << " id " << id;
        if (found != nullptr) {
          ASSERT_EQ(*found, it->second) << step;
        }
      }
      ASSERT_EQ(map.size(), reference.size()) << step;
    }
    for (const auto& [id, value] : reference) ASSERT_EQ(*map.Find(id), value);
    map.Clear();
    ASSERT_TRUE(map.empty());
    ASSERT_EQ(map.Find(next), nullptr);
  }
}

// A range of the OpenRanges tests: its payload is its id.
struct TestRange {
  std::int64_t start;
  std::int64_t end;
  std::uint32_t depth;
  int id;
};

// The id of the innermost range of `kept` open at t, by a scan over them in
// (start, depth) order, arrival order among equals; -1 if none.
int InnermostByScan(std::vector<TestRange> kept, std::int64_t t) {
  std::stable_sort(kept.begin(), kept.end(), [](const TestRange& a, const TestRange& b) {
    return a.start != b.start ? a.start < b.start : a.depth < b.depth;
  });
  int innermost = -1;
  for (std::size_t i = 0; i < kept.size() && kept[i].start <= t; ++i) {
    if (kept[i].end > t) innermost = kept[i].id;
  }
  return innermost;
}

int IdOrNone(const int* id) { return id == nullptr ? -1 : *id; }

TEST(OpenRanges, FindsTheInnermostRangeOpenAtEachTimeAsAScanWould) {
  std::mt19937_64 random(3);
  OpenRanges<int> search;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<TestRange> ranges;  // in start order
    std::int64_t start = 0;
    for (int i = 0; i < 2000; ++i) {
      start += static_cast<std::int64_t>(random() % 50);
      const std::int64_t lengths[] = {5, 60, 3000, 100000};
      ranges.push_back({start, start + static_cast<std::int64_t>(random() % lengths[random() % 4]), 0, i});
    }
    search.Clear();  // reused: nothing of the previous trial remains
    for (const TestRange& r : ranges) search.Add(r.start, r.end, r.depth, r.id);
    search.Prepare();
    for (int query = 0; query < 3000; ++query) {
      // Mostly increasing times (launches), some jumps back.
      const std::int64_t t =
          query % 7 == 0 ? static_cast<std::int64_t>(random() % (start + 200)) - 100 : query * start / 3000;
      ASSERT_EQ(IdOrNone(search.InnermostOpenAt(t)), InnermostByScan(ranges, t)) << "trial " << trial << " t " << t;
    }
  }
}

TEST(OpenRanges, ASlidingWindowAnswersAsASearchOfTheRangesKept) {
  std::mt19937_64 random(5);
  OpenRanges<int> search;
  std::deque<TestRange> kept;  // in arrival order
  std::int64_t start = 0;
  for (int step = 0; step < 30000; ++step) {
    // Appends and forgets in bursts, so the window grows, shrinks and is compacted.
    if (random() % 4 != 0 || kept.empty()) {
      start += static_cast<std::int64_t>(random() % 50);
      const std::int64_t lengths[] = {5, 60, 3000, 100000};
      kept.push_back({start, start + static_cast<std::int64_t>(random() % lengths[random() % 4]), 0, step});
      search.Add(kept.back().start, kept.back().end, 0, step);
    } else {
      for (auto n = random() % 5; n > 0 && !kept.empty(); --n) {
        kept.pop_front();
        search.PopFront();
      }
    }
    ASSERT_EQ(search.size(), kept.size());
    search.Prepare();
    const std::int64_t t = start - static_cast<std::int64_t>(random() % 5000);
    ASSERT_EQ(IdOrNone(search.InnermostOpenAt(t)), InnermostByScan({kept.begin(), kept.end()}, t))
        << "step " << step << " t " << t;
  }
}

TEST(OpenRanges, ASlidingWindowOfNestedRangesLongerThanTheRing) {
  // About each range inside the one before (ends decrease; every 7th ends
  // after the 5 before it, so its link is a candidate below the top), 100
  // kept: the link candidates pile up past the ring's size, the forgotten
  // ones are dropped from them and the kept ones must stay.
  OpenRanges<int> search;
  std::deque<TestRange> kept;
  std::mt19937_64 random(11);
  for (int step = 0; step < 30000; ++step) {
    const std::int64_t start = step;
    const std::int64_t end = 1'000'000'000 - std::int64_t{step} * 1000 + (step % 7 == 6 ? 5500 : 0);
    kept.push_back({start, end, 0, step});
    search.Add(start, end, 0, step);
    if (kept.size() > 100) {
      kept.pop_front();
      search.PopFront();
    }
    search.Prepare();
    const std::int64_t t = kept[random() % kept.size()].end - 1 - static_cast<std::int64_t>(random() % 2000);
    ASSERT_EQ(IdOrNone(search.InnermostOpenAt(t)), InnermostByScan({kept.begin(), kept.end()}, t))
        << "step " << step << " t " << t;
  }
}

TEST(OpenRanges, RangesArrivingOutOfOrderAreSearchedInStartOrder) {
  // Arrivals about in start order: neighbours swapped now and then, ranges
  // starting together at different depths, so the window goes from sorted to
  // unsorted and back as the swapped pairs are appended and forgotten.
  std::mt19937_64 random(7);
  OpenRanges<int> search;
  std::deque<TestRange> kept;  // in arrival order
  std::int64_t start = 0;
  int next_id = 0;
  bool was_unsorted = false;
  for (int step = 0; step < 20000; ++step) {
    std::vector<TestRange> burst;
    for (auto n = 1 + random() % 4; n > 0; --n) {
      // Within a burst, sometimes the same start one level deeper; never a tie in (start, depth).
      if (burst.empty() || random() % 3 != 0) start += 1 + static_cast<std::int64_t>(random() % 40);
      const std::int64_t lengths[] = {5, 60, 3000, 100000};
      burst.push_back({start, start + static_cast<std::int64_t>(random() % lengths[random() % 4]),
                       static_cast<std::uint32_t>(burst.empty() ? 0 : burst.back().depth + 1), next_id++});
    }
    if (burst.size() > 1 && random() % 40 == 0) std::swap(burst[0], burst[1]);
    for (const TestRange& r : burst) {
      kept.push_back(r);
      search.Add(r.start, r.end, r.depth, r.id);
    }
    while (kept.size() > 60 || (random() % 3 == 0 && !kept.empty())) {
      kept.pop_front();
      search.PopFront();
    }
    ASSERT_EQ(search.size(), kept.size());
    for (std::size_t i = 1; i < kept.size(); ++i) was_unsorted |= kept[i].start < kept[i - 1].start;
    search.Prepare();
    for (int query = 0; query < 3; ++query) {
      const std::int64_t t = start - static_cast<std::int64_t>(random() % 4000);
      ASSERT_EQ(IdOrNone(search.InnermostOpenAt(t)), InnermostByScan({kept.begin(), kept.end()}, t))
          << "step " << step << " t " << t;
    }
  }
  EXPECT_TRUE(was_unsorted);
}

TEST(BucketSeries, IntervalsSpreadOverBuckets) {
  BucketSeries s(0, 100);
  s.AddInterval(kMinBucketNs / 2, 2 * kMinBucketNs);
  const auto sums = s.Rebin(kMinBucketNs, 3);
  EXPECT_EQ(sums[0], kMinBucketNs / 2);
  EXPECT_EQ(sums[1], kMinBucketNs);
  EXPECT_EQ(sums[2], 0);
}

TEST(BucketSeries, IntervalsLandInTheBucketsTheyCoverWhateverTheOrderAndWidth) {
  // Mostly short intervals in the bucket of the one before (AddInterval's
  // shortcut), some across buckets, some back in time, and times that make
  // the series widen: every bucket must hold exactly the overlapped time.
  std::mt19937_64 random(11);
  const std::int64_t origin = 5 * kMinBucketNs;
  BucketSeries series(origin, 8);
  std::vector<std::pair<std::int64_t, std::int64_t>> added;
  std::int64_t t = origin;
  for (int i = 0; i < 5000; ++i) {
    t += static_cast<std::int64_t>(random() % 20000);
    std::int64_t start = t;
    if (random() % 50 == 0) start -= static_cast<std::int64_t>(random() % (3 * kMinBucketNs));
    const std::int64_t lengths[] = {3000, 3000, 3000, 2 * kMinBucketNs};
    const std::int64_t end = start + 1 + static_cast<std::int64_t>(random() % lengths[random() % 4]);
    series.AddInterval(start, end);
    added.emplace_back(std::max(start, origin), end);
    if (i % 1000 == 999) {
      // A sample far ahead widens the series; the next interval lies where the last one did.
      series.Add(t + 8 * series.width_ns(), 0.0);
      series.AddInterval(end - 1, end);
      added.emplace_back(end - 1, end);
    }
  }
  const std::int64_t width = series.width_ns();
  EXPECT_GT(width, kMinBucketNs);  // it widened
  const int buckets = static_cast<int>((t + 4 * kMinBucketNs - origin) / width) + 1;
  std::vector<double> expected(buckets, 0.0);
  for (const auto& [start, end] : added) {
    for (std::int64_t b = (start - origin) / width; origin + b * width < end; ++b) {
      const std::int64_t low = std::max(start, origin + b * width);
      const std::int64_t high = std::min(end, origin + (b + 1) * width);
      expected[static_cast<std::size_t>(b)] += static_cast<double>(high - low);
    }
  }
  EXPECT_EQ(series.Rebin(width, buckets), expected);
}

TEST(BucketSeries, WidensToStayWithinMaxBuckets) {
  BucketSeries s(0, 10);
  s.Add(0, 1.0);
  s.Add(25 * kMinBucketNs, 2.0);
  EXPECT_EQ(s.width_ns(), 4 * kMinBucketNs);
  const auto sums = s.Rebin(8 * kMinBucketNs, 4);
  EXPECT_EQ(sums[0], 1.0);
  EXPECT_EQ(sums[3], 2.0);
  EXPECT_EQ(BucketWidthFor(25 * kMinBucketNs, 10), 4 * kMinBucketNs);
}

TEST(PendingById, TakesOnceAndEvictsOverCapacity) {
  PendingById<int> p(2, 1000);
  p.Put(1, 0, 10);
  p.Put(2, 0, 20);
  int value = 0;
  EXPECT_TRUE(p.Take(1, &value));
  EXPECT_EQ(value, 10);
  EXPECT_FALSE(p.Take(1, &value));
  p.Put(3, 0, 30);
  p.Put(4, 0, 40);  // three waiting: the oldest (2) goes
  EXPECT_FALSE(p.Take(2, &value));
  EXPECT_EQ(p.evicted(), 1u);
  EXPECT_TRUE(p.Take(4, &value));
}

// The summary adds each stream's evictions at its end: a count that outlived
// Clear was added again at every later stream's end.
TEST(PendingById, ClearStartsTheEvictionCountAgain) {
  PendingById<int> p(1, 1000);
  p.Put(1, 0, 10);
  p.Put(2, 0, 20);
  EXPECT_EQ(p.evicted(), 1u);
  p.Clear();
  EXPECT_EQ(p.evicted(), 0u);
  int value = 0;
  EXPECT_FALSE(p.Take(2, &value));
}

TEST(PendingById, ForgetsEntriesOlderThanTheWindowUncounted) {
  PendingById<int> p(100, 10);
  p.Put(1, 0, 10);
  p.Put(2, 50, 20);
  int value = 0;
  EXPECT_FALSE(p.Take(1, &value));
  EXPECT_EQ(p.evicted(), 0u);
  EXPECT_TRUE(p.Take(2, &value));
}

TEST(PendingById, AdvancingTheClockForgetsWhatIsThenTooOld) {
  PendingById<int> p(100, 10);
  p.Put(1, 0, 10);
  p.Put(2, 5, 20);
  p.AdvanceTo(12);
  int value = 0;
  EXPECT_FALSE(p.Take(1, &value));
  EXPECT_TRUE(p.Take(2, &value));
  p.AdvanceTo(3);  // an earlier time does not move the clock back
  p.Put(3, 12, 30);
  EXPECT_TRUE(p.Take(3, &value));
  EXPECT_EQ(p.evicted(), 0u);
}

// Dense ids (a direct table), ids spread wide (the hash map), repeats and id 0:
// the index answers as a map from id to its last position would.
TEST(FrameIdIndex, FindsEachIdsLastPositionInBothLayouts) {
  std::mt19937 random(7);
  FrameIdIndex index;
  for (const std::uint32_t spread : {1u, 3u, 10u, 1000u, 4'000'000'000u}) {
    std::vector<std::uint32_t> ids;
    std::unordered_map<std::uint32_t, std::int32_t> expected;
    const std::uint32_t base = spread == 1 ? 4'294'000'000u : 50;  // near the top: no wrap
    const std::uint64_t range = std::min<std::uint64_t>(std::uint64_t{spread} * 3000, 4'000'000'000u);
    for (std::int32_t i = 0; i < 3000; ++i) {
      std::uint32_t id = i % 97 == 0 ? 0 : base + static_cast<std::uint32_t>(random() % range);
      if (i % 13 == 0 && !ids.empty()) id = ids[random() % ids.size()];  // a repeat
      ids.push_back(id);
      if (id != 0) expected[id] = i;
    }
    index.Build(ids.size(), [&](std::size_t i) { return ids[i]; });
    for (const auto& [id, position] : expected) EXPECT_EQ(index.Find(id), position) << id;
    for (const std::uint32_t absent : {0u, 1u, base - 1, 4'294'967'295u}) {
      if (expected.count(absent) == 0) {
        EXPECT_EQ(index.Find(absent), FrameIdIndex::kAbsent) << absent;
      }
    }
    for (int probe = 0; probe < 2000; ++probe) {
      const std::uint32_t id = random();
      const auto found = expected.find(id);
      EXPECT_EQ(index.Find(id), found == expected.end() ? FrameIdIndex::kAbsent : found->second);
    }
  }
  index.Clear();
  EXPECT_EQ(index.Find(50), FrameIdIndex::kAbsent);
}

// Each id's work waits for its external correlation (bounded like PendingById)
// and for inference at once: a claim ends both, inference its own role.
TEST(UnattributedWork, ClaimsInferenceAndEvictionEndTheRightRoles) {
  UnattributedWork work(2, 1000);
  int launch_lookups = 0;
  const auto launch_at = [&](std::int64_t launch_ns) {
    return [&launch_lookups, launch_ns](std::uint32_t) {
      ++launch_lookups;
      return UnattributedWork::Launch{launch_ns, 0};
    };
  };
  work.Add(1, 0, {10, 1}, launch_at(5));
  work.Add(1, 1, {20, 1}, launch_at(6));  // the same id again: one lookup of its launch
  EXPECT_EQ(launch_lookups, 1);
  UnattributedWork::Work claimed;
  ASSERT_TRUE(work.Claim(1, &claimed));
  EXPECT_EQ(claimed.time_ns, 30);
  EXPECT_EQ(claimed.activities, 2u);
  EXPECT_FALSE(work.Claim(1, &claimed));
  std::uint32_t id = 0;
  UnattributedWork::Unclaimed unclaimed;
  ASSERT_EQ(work.unclaimed_records(), 1u);
  EXPECT_FALSE(work.TakeOldestUnclaimed(&id, &unclaimed));  // claimed: gone for inference too

  work.Add(2, 10, {1, 1}, launch_at(-1));
  work.Add(3, 20, {1, 1}, launch_at(-1));
  work.Add(4, 30, {1, 1}, launch_at(-1));  // three wait for a claim: the oldest (2) is evicted
  EXPECT_EQ(work.evicted(), 1u);
  EXPECT_FALSE(work.Claim(2, &claimed));
  work.SetLaunch(2, {77, 0});
  ASSERT_TRUE(work.TakeOldestUnclaimed(&id, &unclaimed));  // but still there for inference
  EXPECT_EQ(id, 2u);
  EXPECT_EQ(unclaimed.launch.start_ns, 77);
  ASSERT_TRUE(work.TakeOldestUnclaimed(&id, &unclaimed));
  EXPECT_EQ(id, 3u);
  work.EndWaiting(3);  // inference attributed it
  EXPECT_FALSE(work.Claim(3, &claimed));
  ASSERT_TRUE(work.TakeOldestUnclaimed(&id, &unclaimed));
  EXPECT_EQ(id, 4u);
  EXPECT_EQ(work.unclaimed_records(), 0u);

  work.Add(5, 2000, {1, 1}, launch_at(-1));  // 4 waited since 30: older than the window, uncounted
  EXPECT_FALSE(work.Claim(4, &claimed));
  EXPECT_TRUE(work.Claim(5, &claimed));
  EXPECT_EQ(work.evicted(), 1u);
  work.Clear();
  EXPECT_EQ(work.evicted(), 0u);
  EXPECT_EQ(work.unclaimed_records(), 0u);
}

// Against the two joins it replaces: a PendingById of the waiting work and a
// map of the unclaimed work in arrival order, under random operations that
// evict by capacity and by window.
TEST(UnattributedWork, MatchesAPendingByIdAndAnUnclaimedMap) {
  using Work = UnattributedWork::Work;
  using Unclaimed = UnattributedWork::Unclaimed;
  struct Waiting {
    std::int64_t since_ns = 0;
    Work work;
  };
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 random(seed);
    UnattributedWork merged(4, 300);
    PendingById<Waiting> waiting(4, 300);
    FlatIdMap<Unclaimed> unclaimed;
    std::deque<std::uint32_t> unclaimed_order;
    std::int64_t t = 0;
    for (int op = 0; op < 2000; ++op) {
      const auto id = static_cast<std::uint32_t>(1 + random() % 12);
      const std::uint64_t kind = random() % 10;
      if (kind < 5) {  // a GPU row
        t += static_cast<std::int64_t>(random() % 50);
        const std::int64_t start = t - static_cast<std::int64_t>(random() % 100);
        const auto dur = static_cast<std::int64_t>(1 + random() % 9);
        const std::int64_t launch = random() % 3 == 0 ? -1 : start - 5;
        merged.Add(id, start, {dur, 1}, [launch](std::uint32_t) { return UnattributedWork::Launch{launch, 0}; });
        Waiting w{start, {}};
        waiting.Take(id, &w);
        w.work.time_ns += dur;
        w.work.activities += 1;
        waiting.Put(id, w.since_ns, w);
        bool added = false;
        Unclaimed& u = unclaimed.FindOrAdd(id, &added);
        if (added) {
          u = Unclaimed{{launch, 0}, {}};
          unclaimed_order.push_back(id);
        }
        u.work.time_ns += dur;
        u.work.activities += 1;
      } else if (kind < 6) {  // its launch call
        const std::int64_t launch = t - static_cast<std::int64_t>(random() % 100);
        merged.SetLaunch(id, {launch, 0});
        if (Unclaimed* u = unclaimed.Find(id)) u->launch.start_ns = launch;
      } else if (kind < 8) {  // its external correlation
        Work got;
        Waiting expected;
        const bool claimed = merged.Claim(id, &got);
        ASSERT_EQ(claimed, waiting.Take(id, &expected)) << "seed " << seed << " op " << op;
        if (claimed) {
          EXPECT_EQ(got.time_ns, expected.work.time_ns);
          EXPECT_EQ(got.activities, expected.work.activities);
          unclaimed.Erase(id);
        }
      } else if (!unclaimed_order.empty()) {  // inference of the oldest
        ASSERT_EQ(merged.unclaimed_records(), unclaimed_order.size());
        std::uint32_t got_id = 0;
        Unclaimed got;
        Unclaimed expected;
        const std::uint32_t oldest = unclaimed_order.front();
        unclaimed_order.pop_front();
        const bool taken = merged.TakeOldestUnclaimed(&got_id, &got);
        EXPECT_EQ(got_id, oldest);
        ASSERT_EQ(taken, unclaimed.Take(oldest, &expected)) << "seed " << seed << " op " << op;
        if (taken) {
          EXPECT_EQ(got.launch.start_ns, expected.launch.start_ns);
          EXPECT_EQ(got.work.time_ns, expected.work.time_ns);
          EXPECT_EQ(got.work.activities, expected.work.activities);
          if (kind == 9) {  // attributed
            merged.EndWaiting(oldest);
            Waiting ignored;
            waiting.Take(oldest, &ignored);
          }
        }
      }
      ASSERT_EQ(merged.evicted(), waiting.evicted()) << "seed " << seed << " op " << op;
    }
    EXPECT_GT(merged.evicted(), 0u);
  }
}

}  // namespace
}  // namespace smprof::analysis

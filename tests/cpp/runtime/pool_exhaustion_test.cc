// Bounded memory through the public API: with a tiny bucket pool
// (BucketCount=1 x BucketSizeMB=1 = 16 chunks of 64 KiB) and a slow flush,
// a thread that records far more ranges than fit loses the excess, every lost
// range is counted (written + dropped == recorded, in the stats and in the
// footer) and the pool never allocates past its capacity.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/recorder.h"
#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace smprof {
namespace {

using internal::Chunk;
using internal::ChunkPool;
using internal::Recorder;
using testing::ConfigWritingTo;
using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

constexpr std::size_t kTinyPoolChunks = 16;  // 1 MiB / 64 KiB

Config TinyPoolConfig(const TempDir& dir, const std::string& file) {
  Config config = ConfigWritingTo(dir.path(), file);
  config.Set("BucketCount", "1").Set("BucketSizeMB", "1").Set("FlushIntervalMs", "60000");
  return config;
}

// Checks the accounting of a stopped session against `recorded`.
void ExpectEveryRangeAccounted(std::uint64_t recorded) {
  const SessionStats stats = LastSessionStats();
  EXPECT_EQ(stats.annotations_written + stats.annotations_dropped, recorded);
  const TraceFileContents trace = ReadTraceFile(stats.path);
  ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
  EXPECT_TRUE(trace.problem.empty()) << trace.problem;
  EXPECT_TRUE(trace.decode_error.empty()) << trace.decode_error;
  ASSERT_TRUE(trace.has_footer);
  EXPECT_EQ(trace.ranges.size(), stats.annotations_written);
  EXPECT_EQ(trace.footer.annotations_written(), stats.annotations_written);
  EXPECT_EQ(trace.footer.annotations_dropped(), stats.annotations_dropped);
  EXPECT_EQ(trace.footer.frames_written(), trace.frames.size());
  std::uint64_t previous_dropped_total = 0;
  for (const trace::Frame& frame : trace.frames) {
    EXPECT_GE(frame.dropped_total(), previous_dropped_total) << "dropped_total is a running total";
    previous_dropped_total = frame.dropped_total();
  }
  EXPECT_LE(previous_dropped_total, stats.annotations_dropped);
}

TEST(PoolExhaustion, StalledDrainDropsExcessAndCountsEveryRange) {
  TempDir dir;
  ASSERT_TRUE(Start(TinyPoolConfig(dir, "stalled.smprof")).ok());
  ChunkPool& pool = Recorder::Get().pool();
  ASSERT_EQ(pool.capacity(), kTinyPoolChunks);

  std::uint64_t recorded = 0;
  { SMPROF_ANNOTATE("warm-up"); }  // registers this thread: Current() takes the registry lock
  ++recorded;
  std::size_t max_allocated = 0;
  {
    // The drain reads live chunks under the registry lock; holding it stalls
    // the drain after at most one pass, so a pool's worth of chunks can be
    // recycled at most once and the rest of these ranges cannot fit.
    std::lock_guard<std::mutex> stall(Recorder::Get().registry_mutex());
    const std::size_t n = 6 * kTinyPoolChunks * Chunk::kCapacity;
    for (std::size_t i = 0; i < n; ++i) {
      SMPROF_ANNOTATE("range");
      ++recorded;
      if (i % 512 == 0) max_allocated = std::max(max_allocated, pool.allocated());
    }
    max_allocated = std::max(max_allocated, pool.allocated());
  }
  for (int i = 0; i < 100; ++i) {
    SMPROF_ANNOTATE("after-stall");
    ++recorded;
  }
  EXPECT_LE(max_allocated, kTinyPoolChunks);
  ASSERT_TRUE(Stop().ok());
  EXPECT_LE(pool.allocated(), pool.capacity());

  const SessionStats stats = LastSessionStats();
  EXPECT_GT(stats.annotations_dropped, 0u);
  EXPECT_GT(stats.annotations_written, 0u);
  ExpectEveryRangeAccounted(recorded);
}

TEST(PoolExhaustion, FastProducerAgainstTinyPoolAccountsForEveryRange) {
  TempDir dir;
  ASSERT_TRUE(Start(TinyPoolConfig(dir, "fast.smprof")).ok());
  ChunkPool& pool = Recorder::Get().pool();
  std::uint64_t recorded = 0;
  std::size_t max_allocated = 0;
  const std::size_t n = 20 * kTinyPoolChunks * Chunk::kCapacity;
  for (std::size_t i = 0; i < n; ++i) {
    SMPROF_ANNOTATE("fast");
    ++recorded;
    if (i % 512 == 0) max_allocated = std::max(max_allocated, pool.allocated());
  }
  ASSERT_TRUE(Stop().ok());
  EXPECT_LE(max_allocated, kTinyPoolChunks);
  ExpectEveryRangeAccounted(recorded);
}

TEST(PoolExhaustion, ManyThreadsAgainstTinyPoolAccountForEveryRange) {
  TempDir dir;
  ASSERT_TRUE(Start(TinyPoolConfig(dir, "threads.smprof")).ok());
  ChunkPool& pool = Recorder::Get().pool();
  constexpr int kThreads = 4;
  const std::size_t per_thread = 4 * kTinyPoolChunks * Chunk::kCapacity;
  std::atomic<std::size_t> max_allocated{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (std::size_t i = 0; i < per_thread; ++i) {
        SMPROF_ANNOTATE("worker");
        if (i % 1024 == 0) {
          const std::size_t now = pool.allocated();
          std::size_t seen = max_allocated.load();
          while (now > seen && !max_allocated.compare_exchange_weak(seen, now)) {
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(Stop().ok());
  EXPECT_LE(max_allocated.load(), kTinyPoolChunks);
  ExpectEveryRangeAccounted(kThreads * per_thread);
}

TEST(PoolExhaustion, NextSessionStartsWithAFreshDropCount) {
  TempDir dir;
  ASSERT_TRUE(Start(TinyPoolConfig(dir, "first.smprof")).ok());
  { SMPROF_ANNOTATE("warm-up"); }
  {
    std::lock_guard<std::mutex> stall(Recorder::Get().registry_mutex());
    for (std::size_t i = 0; i < 4 * kTinyPoolChunks * Chunk::kCapacity; ++i) {
      SMPROF_ANNOTATE("overflow");
    }
  }
  ASSERT_TRUE(Stop().ok());
  ASSERT_GT(LastSessionStats().annotations_dropped, 0u);

  Config roomy = ConfigWritingTo(dir.path(), "second.smprof");
  roomy.Set("BucketCount", "4").Set("BucketSizeMB", "4");
  ASSERT_TRUE(Start(roomy).ok());
  for (int i = 0; i < 1000; ++i) {
    SMPROF_ANNOTATE("fits");
  }
  ASSERT_TRUE(Stop().ok());
  EXPECT_EQ(LastSessionStats().annotations_dropped, 0u);
  EXPECT_EQ(LastSessionStats().annotations_written, 1000u);
  ExpectEveryRangeAccounted(1000);
}

}  // namespace
}  // namespace smprof

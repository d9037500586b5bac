// Recorder: per-thread registration, appending into chunks, draining every
// published record exactly once, dropping (and counting) when the pool is
// exhausted, and collecting the last chunk of threads that have exited.
// Drives the Recorder directly, without a session.
#include "runtime/recorder.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace smprof::internal {
namespace {

std::vector<AnnotationRecord> DrainAll() {
  std::vector<AnnotationRecord> out;
  Recorder::Get().DrainOnce(
      [&out](const AnnotationRecord* records, std::size_t count) { out.insert(out.end(), records, records + count); });
  return out;
}

AnnotationRecord MakeRecord(std::int64_t i, std::uint32_t tid) {
  return AnnotationRecord{1000 + i, i % 7, static_cast<std::uint32_t>(i % 5), tid, static_cast<std::uint16_t>(i % 3),
                          0,        0};
}

// Appends `count` records numbered from `first` from the calling thread.
void AppendMany(std::int64_t first, std::int64_t count) {
  Recorder& recorder = Recorder::Get();
  ThreadState* self = recorder.Current();
  for (std::int64_t i = first; i < first + count; ++i) recorder.Append(self, MakeRecord(i, self->tid));
}

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DrainAll();  // whatever earlier tests of this process left behind
    Recorder::Get().TakeDropped();
  }
};

TEST_F(RecorderTest, CurrentIsStablePerThreadAndDistinctAcrossThreads) {
  ThreadState* main_state = Recorder::Current();
  ASSERT_NE(main_state, nullptr);
  EXPECT_EQ(Recorder::Current(), main_state);
  EXPECT_EQ(main_state->tid, static_cast<std::uint32_t>(syscall(SYS_gettid)));
  EXPECT_NE(main_state->index, 0u) << "index 0 would make handle 0 valid";

  ThreadState* other_state = nullptr;
  std::uint32_t other_tid = 0;
  std::thread([&] {
    other_state = Recorder::Current();
    other_tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  }).join();
  ASSERT_NE(other_state, nullptr);
  EXPECT_NE(other_state, main_state);
  EXPECT_EQ(other_state->tid, other_tid);
  EXPECT_NE(other_state->index, main_state->index);
}

TEST_F(RecorderTest, DrainReturnsEveryRecordOnceInAppendOrderAcrossChunks) {
  Recorder::Get().pool().SetCapacity(64);
  const std::int64_t n = 3 * Chunk::kCapacity + 123;  // spans four chunks
  ThreadState* self = Recorder::Current();
  AppendMany(0, n);

  std::vector<AnnotationRecord> drained = DrainAll();
  ASSERT_EQ(drained.size(), static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const AnnotationRecord expected = MakeRecord(i, self->tid);
    ASSERT_EQ(drained[i].start_ns, expected.start_ns) << "record " << i;
    EXPECT_EQ(drained[i].dur_ns, expected.dur_ns);
    EXPECT_EQ(drained[i].name, expected.name);
    EXPECT_EQ(drained[i].tid, self->tid);
    EXPECT_EQ(drained[i].depth, expected.depth);
  }
  EXPECT_TRUE(DrainAll().empty()) << "a second pass must not repeat records";
  EXPECT_EQ(Recorder::Get().TakeDropped(), 0u);

  AppendMany(n, 5);  // the live chunk keeps filling after a drain
  drained = DrainAll();
  ASSERT_EQ(drained.size(), 5u);
  EXPECT_EQ(drained.front().start_ns, MakeRecord(n, 0).start_ns);
  EXPECT_EQ(Recorder::Get().pool().in_use(), 1u) << "only the live chunk stays in use";
}

TEST_F(RecorderTest, ExhaustedPoolDropsAndCountsWithoutGrowing) {
  ChunkPool& pool = Recorder::Get().pool();
  pool.SetCapacity(1024);
  const std::size_t in_use_before = pool.in_use();  // e.g. this thread's live chunk
  pool.SetCapacity(in_use_before + 2);

  // A fresh thread starts without a chunk, so exactly two chunks fit.
  const std::int64_t n = 5 * Chunk::kCapacity;
  std::thread([&] {
    AppendMany(0, n);
    EXPECT_LE(pool.allocated(), pool.capacity());
    EXPECT_FALSE(pool.MaybeAvailable());
  }).join();
  EXPECT_EQ(Recorder::Get().TakeDropped(), static_cast<std::uint64_t>(n - 2 * Chunk::kCapacity));
  EXPECT_EQ(Recorder::Get().TakeDropped(), 0u) << "TakeDropped resets the count";

  std::vector<AnnotationRecord> drained = DrainAll();
  ASSERT_EQ(drained.size(), 2u * Chunk::kCapacity);
  for (std::size_t i = 0; i < drained.size(); ++i) {
    ASSERT_EQ(drained[i].start_ns, MakeRecord(static_cast<std::int64_t>(i), 0).start_ns) << "the first ones are kept";
  }
  EXPECT_EQ(pool.in_use(), in_use_before) << "the drain recycled both chunks";
  EXPECT_TRUE(pool.MaybeAvailable());

  // Recycled chunks take new records again.
  std::thread([] { AppendMany(0, 10); }).join();
  EXPECT_EQ(DrainAll().size(), 10u);
  EXPECT_EQ(Recorder::Get().TakeDropped(), 0u);
  EXPECT_LE(pool.allocated(), pool.capacity());
}

TEST_F(RecorderTest, ExitedThreadIsDrainedThenForgotten) {
  ChunkPool& pool = Recorder::Get().pool();
  pool.SetCapacity(64);
  const std::size_t in_use_before = pool.in_use();
  std::uint32_t index = 0;
  std::uint32_t tid = 0;
  std::thread([&] {
    ThreadState* self = Recorder::Current();
    index = self->index;
    tid = self->tid;
    AppendMany(0, 10);
  }).join();

  {
    std::lock_guard<std::mutex> lock(Recorder::Get().registry_mutex());
    EXPECT_NE(Recorder::Get().FindLocked(index), nullptr) << "kept until the drain has read it";
  }
  std::vector<AnnotationRecord> drained = DrainAll();
  ASSERT_EQ(drained.size(), 10u);
  for (const AnnotationRecord& r : drained) EXPECT_EQ(r.tid, tid);
  {
    std::lock_guard<std::mutex> lock(Recorder::Get().registry_mutex());
    EXPECT_EQ(Recorder::Get().FindLocked(index), nullptr);
  }
  EXPECT_EQ(pool.in_use(), in_use_before) << "the exited thread's chunk went back to the pool";
}

TEST_F(RecorderTest, ConcurrentProducersWhileDrainingLoseNothing) {
  Recorder::Get().pool().SetCapacity(256);
  constexpr int kThreads = 4;
  constexpr std::int64_t kPerThread = 3 * Chunk::kCapacity + 7;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      AppendMany(0, kPerThread);
      running.fetch_sub(1);
    });
  }
  std::size_t total = 0;
  while (running.load() > 0) total += DrainAll().size();
  for (std::thread& t : threads) t.join();
  total += DrainAll().size();
  EXPECT_EQ(total, static_cast<std::size_t>(kThreads * kPerThread));
  EXPECT_EQ(Recorder::Get().TakeDropped(), 0u);
}

}  // namespace
}  // namespace smprof::internal

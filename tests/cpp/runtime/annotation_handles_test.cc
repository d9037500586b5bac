// Handle ranges (AnnotationBegin/AnnotationEnd): in-order ends, double ends,
// out-of-order ends (recorded once), ends on another thread (recorded with
// the beginning thread's tid), handle 0, begin without a session, handles
// that outlive their session, the cap on open ranges per thread, races
// between the owner's lock-free innermost range and ends on other threads,
// ends under another name, and the count of ranges (handles and scopes) still open at stop.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace smprof {
namespace {

using testing::ConfigWritingTo;
using testing::DecodedRange;
using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

std::uint32_t Tid() { return static_cast<std::uint32_t>(syscall(SYS_gettid)); }

class AnnotationHandles : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Start(ConfigWritingTo(dir_.path(), "handles_%s.smprof")).ok()); }
  void TearDown() override {
    if (IsProfiling()) Stop();
  }
  // Stops the session and returns its ranges by name.
  std::map<std::string, std::vector<DecodedRange>> StopAndRead() {
    EXPECT_TRUE(Stop().ok());
    const TraceFileContents trace = ReadTraceFile(LastSessionStats().path);
    EXPECT_TRUE(trace.open_status.ok()) << trace.open_status.message();
    EXPECT_TRUE(trace.problem.empty()) << trace.problem;
    std::map<std::string, std::vector<DecodedRange>> by_name;
    for (const DecodedRange& r : trace.ranges) by_name[r.name].push_back(r);
    footer_ = trace.footer;
    return by_name;
  }

  TempDir dir_;
  trace::Footer footer_;
};

TEST_F(AnnotationHandles, InOrderEndsAreOkAndNest) {
  const AnnotationHandle outer = AnnotationBegin("outer");
  const AnnotationHandle inner = AnnotationBegin("inner");
  ASSERT_NE(outer, 0u);
  ASSERT_NE(inner, 0u);
  EXPECT_NE(outer, inner);
  EXPECT_EQ(AnnotationEnd(inner), EndResult::kOk);
  EXPECT_EQ(AnnotationEnd(outer), EndResult::kOk);

  auto ranges = StopAndRead();
  ASSERT_EQ(ranges["outer"].size(), 1u);
  ASSERT_EQ(ranges["inner"].size(), 1u);
  EXPECT_EQ(ranges["outer"][0].depth, 0u);
  EXPECT_EQ(ranges["inner"][0].depth, 1u);
  EXPECT_EQ(ranges["inner"][0].tid, Tid());
  EXPECT_GE(ranges["inner"][0].start_ns, ranges["outer"][0].start_ns);
  EXPECT_LE(ranges["inner"][0].end_ns(), ranges["outer"][0].end_ns());
}

TEST_F(AnnotationHandles, EndingUnderAnotherNameRecordsThatNameOnce) {
  const AnnotationHandle outer = AnnotationBegin("ProfilerStep#3");
  const AnnotationHandle inner = AnnotationBegin("inner");
  EXPECT_EQ(AnnotationEnd(inner), EndResult::kOk);
  EXPECT_EQ(AnnotationEnd(outer, InternName("AfterLastStep")), EndResult::kOk);
  EXPECT_EQ(AnnotationEnd(outer, InternName("AfterLastStep")), EndResult::kUnknownHandle);
  const AnnotationHandle other_thread = AnnotationBegin("begun here");
  std::thread([&] { EXPECT_EQ(AnnotationEnd(other_thread, InternName("ended there")), EndResult::kOk); }).join();

  auto ranges = StopAndRead();
  EXPECT_EQ(ranges.count("ProfilerStep#3"), 0u);
  EXPECT_EQ(ranges.count("begun here"), 0u);
  ASSERT_EQ(ranges["AfterLastStep"].size(), 1u);
  EXPECT_EQ(ranges["AfterLastStep"][0].depth, 0u);
  EXPECT_LE(ranges["AfterLastStep"][0].start_ns, ranges["inner"][0].start_ns);
  EXPECT_GE(ranges["AfterLastStep"][0].end_ns(), ranges["inner"][0].end_ns());
  ASSERT_EQ(ranges["ended there"].size(), 1u);
  EXPECT_EQ(ranges["ended there"][0].tid, Tid()) << "the beginning thread's tid";
}

TEST_F(AnnotationHandles, EndingTwiceIsUnknownAndRecordedOnce) {
  const AnnotationHandle h = AnnotationBegin("twice");
  EXPECT_EQ(AnnotationEnd(h), EndResult::kOk);
  EXPECT_EQ(AnnotationEnd(h), EndResult::kUnknownHandle);
  EXPECT_EQ(AnnotationEnd(h + 12345), EndResult::kUnknownHandle) << "never issued";
  auto ranges = StopAndRead();
  EXPECT_EQ(ranges["twice"].size(), 1u);
}

TEST_F(AnnotationHandles, OutOfOrderEndIsReportedAndRecordedOnce) {
  const AnnotationHandle a = AnnotationBegin("a");
  const AnnotationHandle b = AnnotationBegin("b");
  EXPECT_EQ(AnnotationEnd(a), EndResult::kOutOfOrder);
  EXPECT_EQ(AnnotationEnd(a), EndResult::kUnknownHandle);
  EXPECT_EQ(AnnotationEnd(b), EndResult::kOk) << "b is the innermost open range now";
  auto ranges = StopAndRead();
  ASSERT_EQ(ranges["a"].size(), 1u);
  ASSERT_EQ(ranges["b"].size(), 1u);
  EXPECT_EQ(ranges["a"][0].depth, 0u);
  EXPECT_EQ(ranges["b"][0].depth, 1u);
  EXPECT_EQ(footer_.open_ranges_at_stop(), 0u);
}

TEST_F(AnnotationHandles, EndOnAnotherThreadIsRecordedWithTheBeginningThread) {
  const AnnotationHandle h = AnnotationBegin("cross-thread");
  EndResult result = EndResult::kNotProfiling;
  std::uint32_t other_tid = 0;
  std::thread([&] {
    other_tid = Tid();
    result = AnnotationEnd(h);
  }).join();
  EXPECT_EQ(result, EndResult::kOk);
  EXPECT_EQ(AnnotationEnd(h), EndResult::kUnknownHandle) << "already ended on the other thread";

  // And the other way round: begun on a worker, ended here.
  AnnotationHandle from_worker = 0;
  std::uint32_t worker_tid = 0;
  std::thread worker;
  std::mutex mutex;
  std::condition_variable cv;
  bool ended = false;
  worker = std::thread([&] {
    worker_tid = Tid();
    std::unique_lock<std::mutex> lock(mutex);
    from_worker = AnnotationBegin("begun-on-worker");
    cv.notify_all();
    cv.wait(lock, [&] { return ended; });  // stays alive until ended
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return from_worker != 0; });
    EXPECT_EQ(AnnotationEnd(from_worker), EndResult::kOk);
    ended = true;
    cv.notify_all();
  }
  worker.join();

  auto ranges = StopAndRead();
  ASSERT_EQ(ranges["cross-thread"].size(), 1u);
  EXPECT_EQ(ranges["cross-thread"][0].tid, Tid());
  EXPECT_NE(ranges["cross-thread"][0].tid, other_tid);
  ASSERT_EQ(ranges["begun-on-worker"].size(), 1u);
  EXPECT_EQ(ranges["begun-on-worker"][0].tid, worker_tid);
}

// Ends a handle published by the test thread, one per round, while the test
// thread ends or opens ranges itself; counts what its ends returned.
class EndingThread {
 public:
  EndingThread()
      : thread_([this] {
          while (!done_.load()) {
            const AnnotationHandle h = mailbox_.exchange(0);
            if (h == 0) {
              std::this_thread::yield();
              continue;
            }
            results_[static_cast<int>(AnnotationEnd(h))]++;
            ended_.fetch_add(1);
          }
        }) {}
  ~EndingThread() {
    done_ = true;
    thread_.join();
  }
  void Publish(AnnotationHandle h) { mailbox_.store(h); }
  void AwaitEnded(int count) const {
    while (ended_.load() < count) std::this_thread::yield();
  }
  int count(EndResult r) const { return results_[static_cast<int>(r)]; }  // after the rounds

 private:
  std::atomic<AnnotationHandle> mailbox_{0};
  std::atomic<int> ended_{0};
  std::atomic<bool> done_{false};
  int results_[4] = {0, 0, 0, 0};
  std::thread thread_;
};

TEST_F(AnnotationHandles, HandleEndedByTwoThreadsAtOnceIsRecordedOnce) {
  constexpr int kRounds = 1000;
  const NameId name = InternName("raced");
  int own_ok = 0;
  {
    EndingThread other;
    for (int round = 1; round <= kRounds; ++round) {
      const AnnotationHandle h = AnnotationBegin(name);
      other.Publish(h);
      own_ok += AnnotationEnd(h) == EndResult::kOk;
      other.AwaitEnded(round);
    }
    EXPECT_EQ(own_ok + other.count(EndResult::kOk), kRounds);
    EXPECT_EQ(other.count(EndResult::kUnknownHandle), own_ok);
  }
  auto ranges = StopAndRead();
  EXPECT_EQ(ranges["raced"].size(), static_cast<std::size_t>(kRounds));
  EXPECT_EQ(footer_.open_ranges_at_stop(), 0u);
}

TEST_F(AnnotationHandles, RangeEndedElsewhereWhileItsThreadOpensTheNextIsRecordedOnce) {
  constexpr int kRounds = 1000;
  const NameId outer = InternName("outer-raced");
  const NameId inner = InternName("inner");
  {
    EndingThread other;
    for (int round = 1; round <= kRounds; ++round) {
      other.Publish(AnnotationBegin(outer));
      const AnnotationHandle h = AnnotationBegin(inner);  // moves the outer one aside, or finds it ended
      ASSERT_NE(h, 0u);
      ASSERT_EQ(AnnotationEnd(h), EndResult::kOk);
      other.AwaitEnded(round);
    }
    EXPECT_EQ(other.count(EndResult::kOk) + other.count(EndResult::kOutOfOrder), kRounds);
  }
  auto ranges = StopAndRead();
  EXPECT_EQ(ranges["outer-raced"].size(), static_cast<std::size_t>(kRounds));
  EXPECT_EQ(ranges["inner"].size(), static_cast<std::size_t>(kRounds));
  EXPECT_EQ(footer_.open_ranges_at_stop(), 0u);
}

TEST_F(AnnotationHandles, HandleZeroIsNotProfiling) {
  EXPECT_EQ(AnnotationEnd(0), EndResult::kNotProfiling);
  StopAndRead();
}

TEST_F(AnnotationHandles, HandlesAndScopesShareOneDepth) {
  const AnnotationHandle h = AnnotationBegin("handle");
  {
    SMPROF_ANNOTATE("scope-in-handle");
    const AnnotationHandle inner = AnnotationBegin("handle-in-scope");
    EXPECT_EQ(AnnotationEnd(inner), EndResult::kOk);
  }
  EXPECT_EQ(AnnotationEnd(h), EndResult::kOk);
  auto ranges = StopAndRead();
  ASSERT_EQ(ranges["scope-in-handle"].size(), 1u);
  ASSERT_EQ(ranges["handle-in-scope"].size(), 1u);
  EXPECT_EQ(ranges["handle"][0].depth, 0u);
  EXPECT_EQ(ranges["scope-in-handle"][0].depth, 1u);
  EXPECT_EQ(ranges["handle-in-scope"][0].depth, 2u);
}

TEST_F(AnnotationHandles, NameIdOverloadMatchesTheStringOverload) {
  const NameId id = InternName("by-id");
  EXPECT_EQ(InternName("by-id"), id);
  EXPECT_EQ(AnnotationEnd(AnnotationBegin(id)), EndResult::kOk);
  EXPECT_EQ(AnnotationEnd(AnnotationBegin("by-id")), EndResult::kOk);
  auto ranges = StopAndRead();
  EXPECT_EQ(ranges["by-id"].size(), 2u);
}

TEST_F(AnnotationHandles, OpenRangesPerThreadAreCapped) {
  std::vector<AnnotationHandle> handles;
  for (int i = 0; i < 4096; ++i) {
    handles.push_back(AnnotationBegin("deep"));
    ASSERT_NE(handles.back(), 0u) << i;
  }
  EXPECT_EQ(AnnotationBegin("one-too-many"), 0u);
  for (auto it = handles.rbegin(); it != handles.rend(); ++it) ASSERT_EQ(AnnotationEnd(*it), EndResult::kOk);
  EXPECT_NE(AnnotationBegin("room-again"), 0u);
  auto ranges = StopAndRead();
  EXPECT_EQ(ranges["deep"].size(), 4096u);
  std::uint32_t min_depth = ~0u;
  std::uint32_t max_depth = 0;
  for (const DecodedRange& r : ranges["deep"]) {
    min_depth = std::min(min_depth, r.depth);
    max_depth = std::max(max_depth, r.depth);
  }
  EXPECT_EQ(min_depth, 0u);
  EXPECT_EQ(max_depth, 4095u);
  EXPECT_EQ(footer_.open_ranges_at_stop(), 1u);
}

TEST_F(AnnotationHandles, RangesOpenAtStopAreCountedWhateverTheirKind) {
  const AnnotationHandle kept_open = AnnotationBegin("handle-open");
  ASSERT_NE(kept_open, 0u);
  std::thread([] { ASSERT_NE(AnnotationBegin("opened-by-an-exited-thread"), 0u); }).join();
  {
    Scope outer(InternName("scope-open"));
    Scope inner(InternName("nested-scope-open"));
    ASSERT_TRUE(Stop().ok());
  }
  const TraceFileContents trace = ReadTraceFile(LastSessionStats().path);
  EXPECT_EQ(trace.footer.open_ranges_at_stop(), 4u) << "one handle, one handle of an exited thread, two scopes";
  EXPECT_TRUE(trace.ranges.empty());
}

TEST_F(AnnotationHandles, HandleEndedAfterStopIsNotRecorded) {
  const AnnotationHandle h = AnnotationBegin("outlives-session");
  ASSERT_TRUE(Stop().ok());
  EXPECT_EQ(AnnotationEnd(h), EndResult::kNotProfiling);
  EXPECT_EQ(LastSessionStats().annotations_written, 0u);
}

TEST_F(AnnotationHandles, HandleFromAnEarlierSessionIsUnknownInTheNext) {
  const AnnotationHandle old = AnnotationBegin("earlier");
  ASSERT_TRUE(Stop().ok());
  ASSERT_TRUE(Start(ConfigWritingTo(dir_.path(), "handles_%s.smprof")).ok());
  EXPECT_EQ(AnnotationEnd(old), EndResult::kUnknownHandle);
  auto ranges = StopAndRead();
  EXPECT_EQ(ranges.count("earlier"), 0u);
}

TEST(AnnotationHandlesWithoutSession, BeginReturnsZeroAndEndIsNotProfiling) {
  ASSERT_FALSE(IsProfiling());
  const AnnotationHandle h = AnnotationBegin("nothing");
  EXPECT_EQ(h, 0u);
  EXPECT_EQ(AnnotationBegin(InternName("nothing")), 0u);
  EXPECT_EQ(AnnotationEnd(h), EndResult::kNotProfiling);
  {
    SMPROF_ANNOTATE("scope-without-session");  // must be a harmless no-op
  }
}

}  // namespace
}  // namespace smprof

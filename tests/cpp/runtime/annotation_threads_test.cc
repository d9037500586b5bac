// Many threads annotating at once: 8 threads x 20k nested ranges, half of the
// threads exiting before Stop and half still alive at Stop. Every range is
// accounted for, each thread's ranges carry its own tid and correct depths,
// thread ids are distinct, and live threads' names reach the trace.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
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

constexpr int kThreads = 8;
constexpr int kIterations = 5000;  // x 4 ranges = 20k ranges per thread
constexpr int kRangesPerIteration = 4;
const std::map<std::string, std::uint32_t> kDepthOf = {{"iteration", 0}, {"compute", 1}, {"kernel", 2}, {"io", 1}};

// A gate the main thread opens once; threads wait on it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

void Work() {
  for (int i = 0; i < kIterations; ++i) {
    SMPROF_ANNOTATE("iteration");
    {
      SMPROF_ANNOTATE("compute");
      SMPROF_ANNOTATE("kernel");
    }
    const AnnotationHandle io = AnnotationBegin("io");
    AnnotationEnd(io);
  }
}

TEST(AnnotationThreads, EveryRangeOfEveryThreadIsAccountedFor) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "threads.smprof");
  // 160k ranges need ~80 chunks; 1024 chunks can never run out.
  config.Set("BucketCount", "16").Set("BucketSizeMB", "4").Set("FlushIntervalMs", "50");
  ASSERT_TRUE(Start(config).ok());

  std::vector<std::uint32_t> tids(kThreads, 0);
  std::atomic<int> finished{0};
  Gate all_started;
  Gate release_survivors;
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string name = "worker-" + std::to_string(t);
      pthread_setname_np(pthread_self(), name.c_str());
      tids[t] = static_cast<std::uint32_t>(syscall(SYS_gettid));
      started.fetch_add(1);
      all_started.Wait();  // all alive at once: their tids are distinct
      Work();
      finished.fetch_add(1);
      if (t % 2 == 1) release_survivors.Wait();  // odd threads outlive Stop
    });
  }
  while (started.load() < kThreads) std::this_thread::yield();
  all_started.Open();
  for (int t = 0; t < kThreads; t += 2) threads[t].join();  // even threads exit before Stop
  while (finished.load() < kThreads) std::this_thread::yield();
  ASSERT_TRUE(Stop().ok());
  release_survivors.Open();
  for (int t = 1; t < kThreads; t += 2) threads[t].join();

  EXPECT_EQ(std::set<std::uint32_t>(tids.begin(), tids.end()).size(), static_cast<std::size_t>(kThreads));
  const std::uint64_t expected = std::uint64_t{kThreads} * kIterations * kRangesPerIteration;
  const SessionStats stats = LastSessionStats();
  EXPECT_EQ(stats.annotations_written + stats.annotations_dropped, expected);
  EXPECT_EQ(stats.annotations_dropped, 0u);

  const TraceFileContents trace = ReadTraceFile(stats.path);
  ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
  EXPECT_TRUE(trace.problem.empty()) << trace.problem;
  EXPECT_TRUE(trace.decode_error.empty()) << trace.decode_error;
  ASSERT_EQ(trace.ranges.size(), expected);
  EXPECT_EQ(trace.footer.annotations_written(), expected);

  std::map<std::uint32_t, std::map<std::string, int>> counts;  // tid -> name -> ranges
  for (const DecodedRange& r : trace.ranges) {
    ASSERT_EQ(kDepthOf.count(r.name), 1u) << r.name;
    ASSERT_EQ(r.depth, kDepthOf.at(r.name)) << r.name << " on tid " << r.tid;
    ++counts[r.tid][r.name];
  }
  ASSERT_EQ(counts.size(), static_cast<std::size_t>(kThreads));
  for (std::uint32_t tid : tids) {
    ASSERT_EQ(counts.count(tid), 1u) << "tid " << tid;
    for (const auto& [name, depth] : kDepthOf) EXPECT_EQ(counts[tid][name], kIterations) << name << " on " << tid;
  }

  // Names of threads still alive when their frames were written.
  std::map<std::uint32_t, std::set<std::string>> names;
  for (const trace::Frame& frame : trace.frames) {
    for (const trace::Thread& thread : frame.threads()) names[thread.tid()].insert(thread.name());
  }
  for (int t = 1; t < kThreads; t += 2) {
    EXPECT_EQ(names[tids[t]].count("worker-" + std::to_string(t)), 1u) << "thread " << t;
  }
}

TEST(AnnotationThreads, ShortLivedThreadsAcrossSessionsAreAllRecorded) {
  TempDir dir;
  for (int session = 0; session < 3; ++session) {
    ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "short_%s.smprof")).ok());
    constexpr int kShortThreads = 32;
    std::vector<std::thread> threads;
    for (int t = 0; t < kShortThreads; ++t) {
      threads.emplace_back([] {
        for (int i = 0; i < 100; ++i) {
          SMPROF_ANNOTATE("short");
        }
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_TRUE(Stop().ok());
    const TraceFileContents trace = ReadTraceFile(LastSessionStats().path);
    ASSERT_TRUE(trace.open_status.ok());
    EXPECT_EQ(trace.ranges.size(), kShortThreads * 100u) << "session " << session;
    EXPECT_EQ(trace.footer.annotations_dropped(), 0u);
  }
}

}  // namespace
}  // namespace smprof

// fork() while a session records: the child neither crashes nor hangs, its
// annotations and Stop are harmless no-ops that never touch the parent's
// file, it may profile itself into a file of its own, and the parent carries
// on with an intact file holding only its own events.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

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

// Child failures are reported through the exit code: one bit per check.
enum ChildCheck : int {
  kStillProfiling = 1 << 0,
  kHandleNotZero = 1 << 1,
  kEndNotNotProfiling = 1 << 2,
  kStopNotFailedPrecondition = 1 << 3,
  kOwnSessionFailed = 1 << 4,
  kOwnFileWrong = 1 << 5,
};

// Waits for `pid`; a child still running after a minute is a hang.
int WaitForChild(pid_t pid) {
  for (int i = 0; i < 6000; ++i) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      ADD_FAILURE() << "child died from signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : -1);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ADD_FAILURE() << "child hung after fork";
  return -1;
}

// The parent-side half: a session with a worker thread recording while the
// main thread forks, so the fork lands in the middle of real activity.
class ForkDuringSession : public ::testing::Test {
 protected:
  void SetUp() override {
    Config config = ConfigWritingTo(dir_.path(), "parent.smprof");
    config.Set("FlushIntervalMs", "10");
    ASSERT_TRUE(Start(config).ok());
    worker_ = std::thread([this] {
      while (!stop_worker_.load()) {
        SMPROF_ANNOTATE("parent-worker");
        ++worker_ranges_;
      }
    });
    for (int i = 0; i < 100; ++i) {
      SMPROF_ANNOTATE("parent-before");
    }
    std::fflush(nullptr);  // the child must not flush the parent's buffered output again
  }
  void TearDown() override {
    stop_worker_.store(true);
    if (worker_.joinable()) worker_.join();
    if (IsProfiling()) Stop();
  }

  // Finishes the parent's session and checks its file holds only its events.
  void FinishParentAndCheckFile() {
    for (int i = 0; i < 100; ++i) {
      SMPROF_ANNOTATE("parent-after");
    }
    stop_worker_.store(true);
    worker_.join();
    ASSERT_TRUE(Stop().ok());
    const SessionStats stats = LastSessionStats();
    ASSERT_EQ(stats.path, dir_.File("parent.smprof"));
    const TraceFileContents trace = ReadTraceFile(stats.path);
    ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
    EXPECT_TRUE(trace.problem.empty()) << trace.problem;
    EXPECT_TRUE(trace.decode_error.empty()) << trace.decode_error;
    EXPECT_TRUE(trace.has_footer);
    EXPECT_EQ(trace.header.pid(), getpid());
    std::map<std::string, std::uint64_t> counts;
    for (const DecodedRange& r : trace.ranges) ++counts[r.name];
    EXPECT_EQ(counts["parent-before"], 100u);
    EXPECT_EQ(counts["parent-after"], 100u);
    EXPECT_EQ(counts["parent-worker"] + trace.footer.annotations_dropped(), worker_ranges_.load());
    EXPECT_EQ(counts.size(), 3u) << "only the parent's names; first extra: "
                                 << (counts.size() > 3 ? counts.begin()->first : "");
    EXPECT_EQ(trace.footer.annotations_written(), trace.ranges.size());
  }

  TempDir dir_;
  std::thread worker_;
  std::atomic<bool> stop_worker_{false};
  std::atomic<std::uint64_t> worker_ranges_{0};
};

// What a forked child may try; returns the failed ChildCheck bits.
int ChildAnnotatesAndStops() {
  int failed = 0;
  if (IsProfiling()) failed |= kStillProfiling;
  for (int i = 0; i < 100; ++i) {
    SMPROF_ANNOTATE("child-scope");
  }
  const AnnotationHandle h = AnnotationBegin("child-handle");
  if (h != 0) failed |= kHandleNotZero;
  if (AnnotationEnd(h) != EndResult::kNotProfiling) failed |= kEndNotNotProfiling;
  if (Stop().code() != StatusCode::kFailedPrecondition) failed |= kStopNotFailedPrecondition;
  return failed;
}

TEST_F(ForkDuringSession, ChildStopIsANoOpAndParentFileIsIntact) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(ChildAnnotatesAndStops());
  EXPECT_EQ(WaitForChild(pid), 0) << "failed child checks (bits of ChildCheck)";
  FinishParentAndCheckFile();
}

TEST_F(ForkDuringSession, ChildExitingNormallyRunsExitHooksWithoutHarm) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) std::exit(ChildAnnotatesAndStops());  // atexit and static destructors run in the child
  EXPECT_EQ(WaitForChild(pid), 0);
  FinishParentAndCheckFile();
}

TEST_F(ForkDuringSession, ChildCanProfileIntoItsOwnFile) {
  const std::string child_file = dir_.File("child.smprof");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int failed = ChildAnnotatesAndStops();
    if (!Start(Config().Set("RecordFile", child_file)).ok()) _exit(failed | kOwnSessionFailed);
    for (int i = 0; i < 50; ++i) {
      SMPROF_ANNOTATE("child-own");
    }
    if (!Stop().ok()) failed |= kOwnSessionFailed;
    const TraceFileContents trace = ReadTraceFile(child_file);
    bool only_own =
        trace.open_status.ok() && trace.has_footer && trace.ranges.size() == 50 && trace.header.pid() == getpid();
    for (const DecodedRange& r : trace.ranges) only_own = only_own && r.name == "child-own";
    if (!only_own) failed |= kOwnFileWrong;
    _exit(failed);
  }
  EXPECT_EQ(WaitForChild(pid), 0) << "failed child checks (bits of ChildCheck)";
  EXPECT_TRUE(ReadTraceFile(child_file).has_footer);
  FinishParentAndCheckFile();
}

TEST(ForkWithoutSession, ChildAndParentEachStartTheirOwnSession) {
  TempDir dir;
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!Start(Config().Set("RecordFile", dir.File("child.smprof"))).ok()) _exit(1);
    { SMPROF_ANNOTATE("child"); }
    _exit(Stop().ok() ? 0 : 2);
  }
  ASSERT_TRUE(Start(Config().Set("RecordFile", dir.File("parent.smprof"))).ok());
  { SMPROF_ANNOTATE("parent"); }
  ASSERT_TRUE(Stop().ok());
  EXPECT_EQ(WaitForChild(pid), 0);
  for (const char* who : {"child", "parent"}) {
    const TraceFileContents trace = ReadTraceFile(dir.File(std::string(who) + ".smprof"));
    ASSERT_TRUE(trace.open_status.ok()) << who << ": " << trace.open_status.message();
    ASSERT_EQ(trace.ranges.size(), 1u) << who;
    EXPECT_EQ(trace.ranges[0].name, who);
  }
}

}  // namespace
}  // namespace smprof

// Sessions with GPU collection through a scriptable CUPTI (fake_cupti.h).
// The C++ exit path: a program that starts a session,
// initialises CUDA and launches work after the start, and returns from main
// without Stop. The atexit stop flushes CUPTI's last buffer into the trace,
// writes the footer with the collector's report, and never waits for the GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "collectors/cuda/cuda_collection.h"
#include "smprof/smprof.h"
#include "support/fake_cupti.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"
#include "trace/gpu_codec.h"

namespace smprof {
namespace {

using testing::FakeCupti;
using testing::FakeCuptiScript;

TEST(CuptiExitPath, AProgramThatNeverStopsKeepsTheGpuWorkOfItsLastBuffer) {
  testing::TempDir dir;
  const pid_t child = fork();
  if (child == 0) {
    FakeCuptiScript script;
    script.primary_contexts_active = {false};  // no CUDA yet at start
    FakeCupti::Get().Reset(script);
    internal::UseCuptiApiForTesting(FakeCupti::Get().api());
    Config config = testing::ConfigWritingTo(dir.path(), "exit.smprof");
    config.Set("EnableCuda", "1");
    config.Set("CpuProfilingDurationS", "0");
    if (!Start(config).ok()) _exit(3);
    // CUDA initialised after the start; its work sits in a buffer CUPTI holds.
    std::size_t size = 0;
    std::uint8_t* buffer = FakeCupti::Get().RequestBuffer(&size);
    if (buffer == nullptr) _exit(4);
    FakeCupti::Get().HoldUntilFlush(buffer, FakeCupti::WriteKernels(buffer, size, 4, "after_start"));
    std::exit(0);  // no Stop: the atexit handlers run
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  const testing::TraceFileContents trace = testing::ReadTraceFile(dir.path() + "/exit.smprof");
  ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
  ASSERT_TRUE(trace.has_footer) << "the atexit stop closed the file";
  std::vector<internal::GpuActivityRow> rows;
  for (const trace::Frame& frame : trace.frames) ASSERT_TRUE(internal::DecodeGpuActivities(frame, &rows).ok());
  EXPECT_EQ(rows.size(), 4u);
  EXPECT_EQ(trace.footer.gpu_records_written(), 4u);
  ASSERT_TRUE(trace.footer.has_gpu_collection());
  EXPECT_EQ(trace.footer.gpu_collection().contexts_synchronized(), 0u) << "the exit stop never waits";
  EXPECT_EQ(trace.footer.gpu_collection().incomplete_records(), 0u);
}

// SIGKILL (a scheduler's kill, an OOM) runs no stop: what reached the file
// is what the drain loop's ticks had CUPTI hand back, partly filled buffers
// included, frame by frame.
TEST(CuptiExitPath, AKilledJobKeepsTheGpuRowsOfBuffersCuptiStillHeld) {
  testing::TempDir dir;
  const pid_t child = fork();
  if (child == 0) {
    FakeCupti::Get().Reset(FakeCuptiScript{});
    internal::UseCuptiApiForTesting(FakeCupti::Get().api());
    Config config = testing::ConfigWritingTo(dir.path(), "killed.smprof");
    config.Set("EnableCuda", "1").Set("CpuProfilingDurationS", "0").Set("FlushIntervalMs", "20");
    if (!Start(config).ok()) _exit(3);
    std::size_t size = 0;
    std::uint8_t* buffer = FakeCupti::Get().RequestBuffer(&size);
    if (buffer == nullptr) _exit(4);
    FakeCupti::Get().HoldUntilFlush(buffer, FakeCupti::WriteKernels(buffer, size, 6, "before_the_kill"));
    // Two ticks later the frame with those rows is written (5 s at most).
    for (int ms = 0; ms < 5000 && FakeCupti::Get().unforced_flushes() < 3; ++ms) usleep(1000);
    kill(getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);

  const testing::TraceFileContents trace = testing::ReadTraceFile(dir.path() + "/killed.smprof");
  EXPECT_FALSE(trace.has_footer);
  std::vector<internal::GpuActivityRow> rows;
  for (const trace::Frame& frame : trace.frames) ASSERT_TRUE(internal::DecodeGpuActivities(frame, &rows).ok());
  EXPECT_EQ(rows.size(), 6u);
}

// The config keys reach the collector: CudaSyncAtStop, CudaFlushPeriodMs.
TEST(CuptiSessionStop, AnExplicitStopWaitsForTheGpuUnlessCudaSyncAtStopIs0) {
  testing::TempDir dir;
  FakeCupti::Get().Reset(FakeCuptiScript{});
  internal::UseCuptiApiForTesting(FakeCupti::Get().api());
  for (const char* sync : {"1", "0"}) {
    const std::string file = std::string("sync") + sync + ".smprof";
    Config config = testing::ConfigWritingTo(dir.path(), file);
    config.Set("EnableCuda", "1").Set("CpuProfilingDurationS", "0");
    config.Set("CudaSyncAtStop", sync).Set("CudaFlushPeriodMs", "250");
    ASSERT_TRUE(Start(config).ok());
    EXPECT_EQ(FakeCupti::Get().flush_period_ms(), 250u);
    ASSERT_TRUE(Stop().ok());
    const testing::TraceFileContents trace = testing::ReadTraceFile(dir.path() + "/" + file);
    ASSERT_TRUE(trace.has_footer) << file;
    EXPECT_EQ(trace.header.cupti_library(), "/opt/fake/libcupti.so.13");
    EXPECT_EQ(trace.footer.gpu_collection().contexts_synchronized(), sync[0] == '1' ? 1u : 0u) << file;
  }
  internal::UseCuptiApiForTesting(nullptr);
}

// A stop that must not wait (the SIGTERM and exit stops, a capture on the
// stopping thread) says why in the footer, and the next session's stop
// waits again: nothing of it outlives that stop.
TEST(CuptiSessionStop, AStopWithoutTheGpuWaitSaysWhyAndTheNextStopWaitsAgain) {
  testing::TempDir dir;
  FakeCupti::Get().Reset(FakeCuptiScript{});
  internal::UseCuptiApiForTesting(FakeCupti::Get().api());
  for (const char* file : {"first.smprof", "second.smprof"}) {
    Config config = testing::ConfigWritingTo(dir.path(), file);
    config.Set("EnableCuda", "1").Set("CpuProfilingDurationS", "0");
    ASSERT_TRUE(Start(config).ok());
    ASSERT_TRUE((std::string(file) == "first.smprof" ? StopWithoutGpuWait("a test's reason") : Stop()).ok());
  }
  const trace::GpuCollectionReport first = testing::ReadTraceFile(dir.path() + "/first.smprof").footer.gpu_collection();
  EXPECT_EQ(first.synchronize_skipped(), "a test's reason");
  EXPECT_EQ(first.contexts_synchronized(), 0u);
  const trace::GpuCollectionReport second =
      testing::ReadTraceFile(dir.path() + "/second.smprof").footer.gpu_collection();
  EXPECT_EQ(second.synchronize_skipped(), "");
  EXPECT_EQ(second.contexts_synchronized(), 1u);
  EXPECT_FALSE(second.synchronize_timed_out());
  internal::UseCuptiApiForTesting(nullptr);
}

}  // namespace
}  // namespace smprof

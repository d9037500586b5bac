// The CUPTI collector against a scriptable CUPTI (fake_cupti.h): soft
// failures with their reasons, the buffer protocol (pool cap, refusals, drop
// counts, concurrent completion), the flush at stop, several sessions in one
// process, annotations as external correlation ids, and fork.
#include "collectors/cuda/cupti_collector.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "collectors/cuda/activity_buffer_pool.h"
#include "collectors/cuda/activity_decoder.h"
#include "collectors/cuda/graph_capture_tracker.h"
#include "collectors/cuda/nvtx_injection.h"
#include "runtime/annotation_correlation.h"
#include "support/fake_cupti.h"

namespace smprof::internal {
namespace {

using testing::FakeCupti;
using testing::FakeCuptiScript;

constexpr std::size_t kBufferBytes = 64 << 10;

class CuptiCollectorTest : public ::testing::Test {
 protected:
  void Start(const FakeCuptiScript& script, std::size_t max_buffers = 4) {
    CuptiCollectorOptions options;
    options.max_buffers = max_buffers;
    Start(script, options);
  }
  void Start(const FakeCuptiScript& script, CuptiCollectorOptions options) {
    FakeCupti::Get().Reset(script);
    options.buffer_bytes = kBufferBytes;
    started_ = StartCuptiCollection(FakeCupti::Get().api(), options, &sink_);
  }
  void TearDown() override { StopCuptiCollection(); }

  // Records delivered to the sink so far, and the sink's drops.
  std::size_t Delivered() {
    std::vector<GpuBatch> batches;
    dropped_ += sink_.Take(&batches);
    std::size_t records = 0;
    for (const GpuBatch& batch : batches) records += batch.activities.size();
    return records;
  }

  FakeCupti& fake() { return FakeCupti::Get(); }

  GpuRecordBuffer sink_{1 << 20};
  CuptiStartResult started_;
  std::uint64_t dropped_ = 0;
};

// An API record: decoding it asks CUPTI for its name.
CUpti_ActivityAPI testing_api_record() {
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 1;
  a.start = FakeCupti::CuptiNow();
  a.end = a.start + 1;
  return a;
}

// Hands `buffer` to smprof's completion callback, as CUPTI would.
void CompleteBufferToUs(std::uint8_t* buffer) { CuptiBufferCompleted(nullptr, 0, buffer, 0, 0); }

// What CUPTI 12.6 Update 2 to 13.0 does with a timestamp callback: finished
// kernels whose start is 0 (the end stays, so the fake's flushes and waits
// treat them as finished).
void ZeroKernelStarts(std::uint8_t* buffer, std::size_t valid_size) {
  for (std::size_t offset = 0; offset + sizeof(CUpti_ActivityKernel10) <= valid_size;
       offset += sizeof(CUpti_ActivityKernel10)) {
    CUpti_ActivityKernel10 kernel;
    std::memcpy(&kernel, buffer + offset, sizeof(kernel));
    kernel.start = 0;
    std::memcpy(buffer + offset, &kernel, sizeof(kernel));
  }
}

bool Enabled(const std::vector<CUpti_ActivityKind>& kinds, CUpti_ActivityKind kind) {
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

TEST_F(CuptiCollectorTest, NoDriverIsSoftAndNeverTouchesCupti) {
  FakeCuptiScript script;
  script.driver_installed = false;
  Start(script);
  EXPECT_FALSE(started_.active);
  EXPECT_NE(started_.reason.find("no CUDA driver"), std::string::npos) << started_.reason;
  EXPECT_EQ(fake().subscribe_calls(), 0);
  EXPECT_EQ(g_correlation_push.load(), nullptr);
}

TEST_F(CuptiCollectorTest, NoDeviceNamesTheCauseAndWhatToCheck) {
  FakeCuptiScript script;
  script.subscribe = CUPTI_ERROR_UNKNOWN;  // what CUPTI says here without a GPU
  Start(script);
  EXPECT_FALSE(started_.active);
  EXPECT_NE(started_.reason.find("CUDA could not be initialised"), std::string::npos) << started_.reason;
  EXPECT_NE(started_.reason.find("(999)"), std::string::npos) << started_.reason;
  EXPECT_NE(started_.reason.find("nvidia-smi"), std::string::npos) << started_.reason;
  EXPECT_TRUE(fake().enabled().empty());
}

TEST_F(CuptiCollectorTest, AnotherSubscriberIsNamed) {
  FakeCuptiScript script;
  script.subscribe = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  Start(script);
  EXPECT_FALSE(started_.active);
  EXPECT_NE(started_.reason.find("another profiler"), std::string::npos) << started_.reason;
  EXPECT_NE(started_.reason.find("torch.profiler"), std::string::npos) << started_.reason;
  EXPECT_NE(started_.reason.find("(39)"), std::string::npos) << started_.reason;
}

TEST_F(CuptiCollectorTest, InsufficientPrivilegesUndoesEverythingItStarted) {
  FakeCuptiScript script;
  script.enable[CUPTI_ACTIVITY_KIND_RUNTIME] = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  Start(script);
  EXPECT_FALSE(started_.active);
  EXPECT_NE(started_.reason.find("not allowed to profile the GPU"), std::string::npos) << started_.reason;
  EXPECT_NE(started_.reason.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"), std::string::npos) << started_.reason;
  EXPECT_TRUE(fake().enabled().empty()) << "kinds enabled before the failure are disabled again";
  EXPECT_EQ(fake().subscribed(), 0) << "the subscriber slot is given back";
  EXPECT_EQ(g_correlation_push.load(), nullptr);
  EXPECT_FALSE(CuptiCollectionActive());
}

TEST_F(CuptiCollectorTest, EnablesEveryKindAndReportsOptionalOnesRefused) {
  FakeCuptiScript script;
  script.enable[CUPTI_ACTIVITY_KIND_MARKER] = CUPTI_ERROR_NOT_COMPATIBLE;
  Start(script);
  ASSERT_TRUE(started_.active) << started_.reason;
  const auto kinds = fake().enabled();
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
        CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT}) {
    EXPECT_TRUE(Enabled(kinds, kind)) << "kind " << kind;
  }
  EXPECT_FALSE(Enabled(kinds, CUPTI_ACTIVITY_KIND_MARKER));
  EXPECT_NE(started_.missing_kinds.find("MARKER: CUPTI_ERROR_NOT_COMPATIBLE"), std::string::npos)
      << started_.missing_kinds;
  EXPECT_EQ(started_.cupti_version, 130001u);
  EXPECT_EQ(started_.driver_version, 13000u);

  StopCuptiCollection();
  EXPECT_TRUE(fake().enabled().empty());
  EXPECT_EQ(fake().subscribed(), 0);
}

// A CUPTI whose timestamp callback works (13.1 and later).
FakeCuptiScript FixedCupti() {
  FakeCuptiScript script;
  script.version = kFirstCuptiWithTimestampCallbackFix;
  return script;
}

TEST_F(CuptiCollectorTest, OnAFixedCuptiTimestampsComeFromTheSessionClock) {
  Start(FixedCupti());
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(started_.timebase, "cupti timestamp callback: CLOCK_MONOTONIC");
  const CUpti_TimestampCallbackFunc timestamp = fake().timestamp_callback();
  ASSERT_NE(timestamp, nullptr);
  const std::int64_t before = NowNs();
  const auto cupti_ns = static_cast<std::int64_t>(timestamp());
  EXPECT_GE(cupti_ns, before);
  EXPECT_LE(cupti_ns, NowNs());
}

// API and marker rows must carry the kernel's thread ids (gettid), the ids
// annotations, perf and /proc use, not CUPTI's default pthread_self().
TEST_F(CuptiCollectorTest, ThreadIdsAreTheKernels) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(fake().thread_id_type(), CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
}

TEST_F(CuptiCollectorTest, SeveralSessionsInOneProcessRegisterTheTimestampCallbackOnce) {
  for (int session = 0; session < 3; ++session) {
    Start(FixedCupti());
    ASSERT_TRUE(started_.active) << "session " << session << ": " << started_.reason;
    std::size_t size = 0;
    std::uint8_t* buffer = fake().RequestBuffer(&size);
    ASSERT_NE(buffer, nullptr);
    fake().CompleteBuffer(buffer, FakeCupti::WriteKernels(buffer, size, 3, "kernel"));
    EXPECT_EQ(Delivered(), 3u) << "session " << session;
    StopCuptiCollection();
    EXPECT_EQ(fake().subscribed(), 0);
  }
  EXPECT_EQ(fake().timestamp_registrations(), 1);
}

TEST_F(CuptiCollectorTest, StopForcesAFlushOfBuffersCuptiStillHolds) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* buffer = fake().RequestBuffer(&size);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(size, kBufferBytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer) % 8, 0u) << "CUPTI needs 8-byte alignment";
  fake().HoldUntilFlush(buffer, FakeCupti::WriteKernels(buffer, size, 5, "partial"));
  EXPECT_EQ(Delivered(), 0u);
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(fake().forced_flushes(), 1);
  EXPECT_EQ(stopped.buffers_completed, 1u);
  EXPECT_EQ(Delivered(), 5u);
}

TEST_F(CuptiCollectorTest, AFullPoolRefusesAndCountsOnCuptiThatAcceptsNull) {
  Start(FakeCuptiScript{}, /*max_buffers=*/2);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* a = fake().RequestBuffer(&size);
  std::uint8_t* b = fake().RequestBuffer(&size);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(fake().RequestBuffer(&size), nullptr);
  EXPECT_EQ(size, 0u);
  fake().CompleteBuffer(a, 0);
  std::uint8_t* reused = fake().RequestBuffer(&size);
  EXPECT_EQ(reused, a) << "completed buffers are reused";
  fake().CompleteBuffer(b, 0);
  fake().CompleteBuffer(reused, 0);
  EXPECT_EQ(StopCuptiCollection().buffers_refused, 1u);
}

TEST_F(CuptiCollectorTest, CuptiBefore12_9IsNeverGivenNull) {
  FakeCuptiScript script;
  script.version = 26;  // CUDA 12.8
  Start(script, /*max_buffers=*/1);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* a = fake().RequestBuffer(&size);
  std::uint8_t* beyond = fake().RequestBuffer(&size);
  ASSERT_NE(a, nullptr);
  EXPECT_NE(beyond, nullptr) << "a NULL buffer may crash CUPTI before 12.9";
  fake().CompleteBuffer(beyond, FakeCupti::WriteKernels(beyond, size, 2, "k"));
  fake().CompleteBuffer(a, 0);
  EXPECT_EQ(Delivered(), 2u);
  EXPECT_EQ(StopCuptiCollection().buffers_refused, 0u);
}

TEST_F(CuptiCollectorTest, CuptiDropsAreSummedFromEveryCompletionAndTheStop) {
  FakeCuptiScript script;
  script.dropped_per_query = 7;
  Start(script);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  for (int i = 0; i < 3; ++i) fake().CompleteBuffer(fake().RequestBuffer(&size), 0);
  EXPECT_EQ(StopCuptiCollection().cupti_dropped, 7u * (3 + 1));
}

TEST_F(CuptiCollectorTest, BuffersCompleteConcurrentlyOnManyThreads) {
  constexpr int kThreads = 8;
  constexpr int kBuffersPerThread = 50;
  constexpr int kKernelsPerBuffer = 20;
  Start(FakeCuptiScript{}, /*max_buffers=*/kThreads);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::vector<std::thread> threads;
  std::atomic<int> refused{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, &refused] {
      for (int i = 0; i < kBuffersPerThread; ++i) {
        std::size_t size = 0;
        std::uint8_t* buffer = fake().RequestBuffer(&size);
        if (buffer == nullptr) {
          ++refused;
          continue;
        }
        fake().CompleteBuffer(buffer, FakeCupti::WriteKernels(buffer, size, kKernelsPerBuffer, "concurrent"));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(refused.load(), 0) << "each thread holds one buffer at a time";
  EXPECT_EQ(Delivered(), std::size_t{kThreads} * kBuffersPerThread * kKernelsPerBuffer);
  EXPECT_EQ(dropped_, 0u);
  EXPECT_EQ(StopCuptiCollection().buffers_completed, std::uint64_t{kThreads} * kBuffersPerThread);
}

TEST_F(CuptiCollectorTest, ABufferCompletedAfterStopIsReturnedNotDelivered) {
  Start(FakeCuptiScript{}, /*max_buffers=*/1);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* late = fake().RequestBuffer(&size);
  ASSERT_NE(late, nullptr);
  StopCuptiCollection();
  fake().CompleteBuffer(late, FakeCupti::WriteKernels(late, size, 4, "late"));
  EXPECT_EQ(Delivered(), 0u);
  Start(FakeCuptiScript{}, /*max_buffers=*/1);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::uint8_t* again = fake().RequestBuffer(&size);
  EXPECT_NE(again, nullptr) << "the late buffer went back to the pool";
  fake().CompleteBuffer(again, 0);
}

TEST_F(CuptiCollectorTest, ScopesPushTheirNameAndPopIt) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::uint16_t depth = 0;
  bool outer_pushed = false;
  bool inner_pushed = false;
  ThreadState* outer = EnterScope(11, &depth, &outer_pushed);
  ThreadState* inner = EnterScope(22, &depth, &inner_pushed);
  ASSERT_NE(outer, nullptr);
  EXPECT_TRUE(outer_pushed && inner_pushed);
  const std::vector<std::pair<int, std::uint64_t>> expected = {{kSmprofExternalCorrelationKind, 11},
                                                               {kSmprofExternalCorrelationKind, 22}};
  EXPECT_EQ(FakeCupti::CorrelationStack(), expected);
  ExitScope(inner, 22, NowNs(), NowNs(), 1, inner_pushed);
  StopCuptiCollection();
  bool pushed_after_stop = true;
  ThreadState* after = EnterScope(33, &depth, &pushed_after_stop);
  EXPECT_FALSE(pushed_after_stop) << "no push without an active collector";
  ExitScope(after, 33, NowNs(), NowNs(), 1, pushed_after_stop);
  ExitScope(outer, 11, NowNs(), NowNs(), 0, outer_pushed);
  EXPECT_TRUE(FakeCupti::CorrelationStack().empty()) << "a scope open across the stop still pops";
}

TEST_F(CuptiCollectorTest, AnAbandonedScopeIsClearedAtTheNextOutermostScope) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::vector<std::pair<int, std::uint64_t>> seen;
  std::thread([this, &seen] {
    // What a Python scope entered here and exited on another thread leaves.
    fake().api()->ActivityPushExternalCorrelationId(kSmprofExternalCorrelationKind, 44);
    AbandonCorrelatedScope();
    std::uint16_t depth = 0;
    bool pushed = false;
    ThreadState* thread = EnterScope(55, &depth, &pushed);
    seen = FakeCupti::CorrelationStack();
    ExitScope(thread, 55, NowNs(), NowNs(), depth, pushed);
  }).join();
  const std::vector<std::pair<int, std::uint64_t>> expected = {{kSmprofExternalCorrelationKind, 55}};
  EXPECT_EQ(seen, expected);
}

TEST_F(CuptiCollectorTest, AForkedChildNeverTouchesTheParentsCupti) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  const pid_t child = fork();
  if (child == 0) {
    // The session's pthread_atfork handler has run: no hook is left.
    int failures = 0;
    if (g_correlation_push.load() != nullptr || g_correlation_pop.load() != nullptr) failures |= 1;
    const int subscribes = FakeCupti::Get().subscribe_calls();
    GpuRecordBuffer sink(16);
    const CuptiStartResult again = StartCuptiCollection(FakeCupti::Get().api(), CuptiCollectorOptions{}, &sink);
    if (again.active || again.reason.find("forked") == std::string::npos) failures |= 2;
    if (FakeCupti::Get().subscribe_calls() != subscribes) failures |= 4;
    if (StopCuptiCollection().buffers_completed != 0) failures |= 8;
    _exit(failures);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bit 1: hooks left, 2: started, 4: subscribed, 8: flushed";
  EXPECT_TRUE(CuptiCollectionActive()) << "the parent is unaffected";
}

// PyTorch creates its context at model.cuda(), before start_profiling():
// device and context records exist only if CUPTI dumps them.
TEST_F(CuptiCollectorTest, ALateStartDumpsTheDevicesAndContextsThatExist) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  const std::vector<CUpti_ActivityKind> expected = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT};
  EXPECT_EQ(fake().dumped(), expected);
  StopCuptiCollection();

  FakeCuptiScript old;
  old.newer_cupti = false;  // no cuptiActivityEnableAndDump: enabled plainly
  Start(old);
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_TRUE(fake().dumped().empty());
  EXPECT_TRUE(Enabled(fake().enabled(), CUPTI_ACTIVITY_KIND_DEVICE));
  EXPECT_TRUE(Enabled(fake().enabled(), CUPTI_ACTIVITY_KIND_CONTEXT));
}

// The kinds are enabled on a thread of their own after the first context:
// true once they are (waiting at most 30 s, so a machine's load cannot fail it).
bool KindsEnabledSoon() {
  for (int i = 0; i < 30'000 && FakeCupti::Get().enabled().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return !FakeCupti::Get().enabled().empty();
}

// smprof run starts a session at interpreter start, before the script
// touches CUDA: nothing may initialise the driver then (CUDA_VISIBLE_DEVICES
// set later, fork-based workers). The kinds wait for the first context.
TEST_F(CuptiCollectorTest, StartedBeforeCudaItEnablesNothingUntilTheFirstContext) {
  FakeCuptiScript script;
  script.driver_initialised = false;
  Start(script);
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(fake().subscribed(), 1);
  EXPECT_TRUE(fake().enabled().empty());
  std::uint16_t depth = 0;
  bool pushed = true;
  ThreadState* scope = EnterScope(11, &depth, &pushed);
  EXPECT_FALSE(pushed) << "no external correlation before the first context";
  ExitScope(scope, 11, NowNs(), NowNs(), 0, pushed);
  TickCuptiCollection();
  EXPECT_EQ(fake().unforced_flushes(), 0);

  fake().CreateContext();  // the script's first CUDA call
  EXPECT_TRUE(KindsEnabledSoon());
  EXPECT_EQ(fake().enables_before_driver_init(), 0);
  scope = EnterScope(22, &depth, &pushed);
  EXPECT_TRUE(pushed);
  ExitScope(scope, 22, NowNs(), NowNs(), 0, pushed);
  std::size_t size = 0;
  std::uint8_t* buffer = fake().RequestBuffer(&size);
  ASSERT_NE(buffer, nullptr);
  fake().CompleteBuffer(buffer, FakeCupti::WriteKernels(buffer, size, 3, "after_init"));
  const std::size_t kinds = fake().enabled().size();
  fake().CreateContext();  // a second context: nothing enabled twice
  EXPECT_EQ(fake().enabled().size(), kinds);
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(Delivered(), 3u);
  EXPECT_TRUE(stopped.synchronize_skipped.empty()) << stopped.synchronize_skipped;
  EXPECT_EQ(fake().subscribed(), 0);
}

TEST_F(CuptiCollectorTest, AStopBeforeAnyContextSaysSoAndLeavesNothingBehind) {
  FakeCuptiScript script;
  script.driver_initialised = false;
  Start(script);
  ASSERT_TRUE(started_.active) << started_.reason;
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(stopped.synchronize_skipped, kNoContextYet);
  EXPECT_EQ(fake().forced_flushes(), 0);
  EXPECT_EQ(fake().context_synchronizations(), 0);
  EXPECT_EQ(fake().subscribed(), 0);
  fake().CreateContext();  // after the stop: no longer subscribed, nothing happens
  EXPECT_TRUE(fake().enabled().empty());
  Start(script);  // a later session in the same process starts as the first did
  ASSERT_TRUE(started_.active) << started_.reason;
  fake().CreateContext();
  EXPECT_TRUE(KindsEnabledSoon());
}

TEST_F(CuptiCollectorTest, StartedAfterCudaItEnablesAtOnce) {
  Start(FakeCuptiScript{});  // the driver is initialised already
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_FALSE(fake().enabled().empty());
}

TEST_F(CuptiCollectorTest, TheTimestampCallbackIsRegisteredOnlyAfterSubscribing) {
  Start(FixedCupti());
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(fake().timestamp_registrations(), 1);
  EXPECT_TRUE(fake().subscribed_before_timestamp_callback());
}

// Nsight Systems or Kineto holds the slot: its clock is left alone.
TEST_F(CuptiCollectorTest, WhileAnotherProfilerHoldsTheSlotItsClockIsNeverReplaced) {
  FakeCuptiScript script = FixedCupti();
  script.subscribe = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  Start(script);
  EXPECT_FALSE(started_.active);
  EXPECT_EQ(fake().timestamp_registrations(), 0);
  Start(FixedCupti());  // that profiler is gone: the next session registers it
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(fake().timestamp_registrations(), 1);
}

TEST(CuptiTimestampCallback, OnlyVersionsWithoutTheZeroTimestampBugGetIt) {
  for (std::uint32_t version : {18u, 23u, 130100u, 130200u, 140000u}) {
    EXPECT_TRUE(CuptiTimestampCallbackIsSafe(version)) << version;
  }
  for (std::uint32_t version : {24u, 26u, 27u, 28u, 130000u, 130001u, 130099u}) {
    EXPECT_FALSE(CuptiTimestampCallbackIsSafe(version)) << version;
  }
}

// The PyTorch wheels' CUPTI (12.6 to 13.0): no callback; CUPTI's
// CLOCK_REALTIME is converted by the nearest clock pair, so a clock step
// mid-session moves no record off the session's timebase.
TEST_F(CuptiCollectorTest, CuptiWithTheTimestampCallbackBugKeepsItsOwnClockConverted) {
  FakeCuptiScript script;
  script.version = 130001;
  Start(script);
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(fake().timestamp_registrations(), 0);
  EXPECT_NE(started_.timebase.find("CLOCK_REALTIME"), std::string::npos) << started_.timebase;
  EXPECT_NE(started_.timebase.find("CUPTI 130001"), std::string::npos) << started_.timebase;
  EXPECT_NE(started_.timebase.find("13.1"), std::string::npos) << started_.timebase;
  auto deliver_and_check = [&](const char* when) {
    std::size_t size = 0;
    std::uint8_t* buffer = fake().RequestBuffer(&size);
    ASSERT_NE(buffer, nullptr);
    const std::int64_t before = NowNs();
    fake().CompleteBuffer(buffer, FakeCupti::WriteKernels(buffer, size, 3, "k"));
    const std::int64_t after = NowNs();
    std::vector<GpuBatch> batches;
    sink_.Take(&batches);
    ASSERT_EQ(batches.size(), 1u) << when;
    ASSERT_EQ(batches[0].activities.size(), 3u) << when;
    for (const GpuActivityRecord& r : batches[0].activities) {
      EXPECT_GE(r.start_ns, before - 1'000'000) << when;
      EXPECT_LE(r.start_ns, after + 1'000'000) << when;
      EXPECT_EQ(r.end_ns - r.start_ns, 5) << when;
    }
  };
  deliver_and_check("before the step");
  FakeCupti::StepDefaultClock(std::int64_t{5'000'000'000});  // CLOCK_REALTIME set 5 s ahead
  TickCuptiCollection();
  deliver_and_check("after the step");
}

// The drain loop's tick: CUPTI hands back buffers of finished records, not
// the ones still running; nothing once stopped.
TEST_F(CuptiCollectorTest, TheDrainTickHandsBackFinishedBuffers) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* done = fake().RequestBuffer(&size);
  std::uint8_t* running = fake().RequestBuffer(&size);
  ASSERT_NE(done, nullptr);
  ASSERT_NE(running, nullptr);
  fake().HoldUntilFlush(done, FakeCupti::WriteKernels(done, size, 4, "done"));
  fake().HoldUntilFlush(running, FakeCupti::WriteKernels(running, size, 2, "running", /*finished=*/false));
  TickCuptiCollection();
  EXPECT_EQ(fake().unforced_flushes(), 1);
  EXPECT_EQ(Delivered(), 4u);
  StopCuptiCollection();
  EXPECT_EQ(Delivered(), 2u) << "the stop's wait finished them";
  TickCuptiCollection();
  EXPECT_EQ(fake().unforced_flushes(), 1);
}

// Kernels still running at stop have end 0 when CUPTI flushes: stop waits
// for the active contexts first, while the kinds are still enabled.
TEST_F(CuptiCollectorTest, StopWaitsForQueuedWorkSoItsRecordsAreComplete) {
  FakeCuptiScript script;
  script.primary_contexts_active = {true, false, true};  // device 1 never used: not created
  Start(script);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* buffer = fake().RequestBuffer(&size);
  ASSERT_NE(buffer, nullptr);
  fake().HoldUntilFlush(buffer, FakeCupti::WriteKernels(buffer, size, 5, "running", /*finished=*/false));
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(fake().context_synchronizations(), 2);
  EXPECT_TRUE(fake().kinds_enabled_at_synchronize());
  EXPECT_EQ(stopped.contexts_synchronized, 2u);
  EXPECT_EQ(stopped.synchronize_failure, "");
  EXPECT_EQ(Delivered(), 5u);
  EXPECT_EQ(stopped.decoder.incomplete, 0u);
}

TEST_F(CuptiCollectorTest, WithoutTheWaitUnfinishedRecordsAreCountedAtStop) {
  CuptiCollectorOptions options;
  options.synchronize_at_stop = false;
  Start(FakeCuptiScript{}, options);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* buffer = fake().RequestBuffer(&size);
  ASSERT_NE(buffer, nullptr);
  fake().HoldUntilFlush(buffer, FakeCupti::WriteKernels(buffer, size, 5, "running", /*finished=*/false));
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(fake().context_synchronizations(), 0);
  EXPECT_EQ(Delivered(), 0u);
  EXPECT_EQ(stopped.decoder.incomplete, 5u);
  EXPECT_EQ(stopped.decoder.zero_timestamps, 0u);
}

// CUPTI's completed buffers and the drain's unforced flush hold finished
// records only; so does the stop's flush once the wait completed: a zero
// stamp there is CUPTI's defect, not unfinished work.
TEST_F(CuptiCollectorTest, ZeroStampsOfFinishedDeliveriesAreCuptiDefects) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* completed = fake().RequestBuffer(&size);
  std::uint8_t* ticked = fake().RequestBuffer(&size);
  std::uint8_t* at_stop = fake().RequestBuffer(&size);
  ASSERT_NE(at_stop, nullptr);
  std::size_t bytes = FakeCupti::WriteKernels(completed, size, 2, "zeroed");
  ZeroKernelStarts(completed, bytes);
  fake().CompleteBuffer(completed, bytes);
  bytes = FakeCupti::WriteKernels(ticked, size, 3, "zeroed");
  ZeroKernelStarts(ticked, bytes);
  fake().HoldUntilFlush(ticked, bytes);
  TickCuptiCollection();
  bytes = FakeCupti::WriteKernels(at_stop, size, 4, "zeroed");
  ZeroKernelStarts(at_stop, bytes);
  fake().HoldUntilFlush(at_stop, bytes);
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(stopped.contexts_synchronized, 1u);
  EXPECT_EQ(stopped.decoder.zero_timestamps, 9u);
  EXPECT_EQ(stopped.decoder.incomplete, 0u);
  EXPECT_EQ(Delivered(), 0u);
}

TEST_F(CuptiCollectorTest, TheExitStopNeverWaitsForTheGpu) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  const CuptiStopResult stopped = StopCuptiCollection("the exit stop never waits for the GPU");
  EXPECT_EQ(fake().context_synchronizations(), 0);
  EXPECT_EQ(stopped.synchronize_skipped, "the exit stop never waits for the GPU");
}

// The stop's own cuCtxSynchronize and the calls around it are not the
// application's: the API and synchronization kinds are off while it waits.
TEST_F(CuptiCollectorTest, TheWaitRunsWithTheApiAndSynchronizationKindsOff) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(stopped.contexts_synchronized, 1u);
  EXPECT_EQ(stopped.synchronize_skipped, "");
  const auto kinds = fake().kinds_at_synchronize();
  EXPECT_TRUE(Enabled(kinds, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  EXPECT_TRUE(Enabled(kinds, CUPTI_ACTIVITY_KIND_MEMCPY));
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}) {
    EXPECT_FALSE(Enabled(kinds, kind)) << "kind " << kind;
  }
  EXPECT_TRUE(fake().enabled().empty()) << "every kind is off after the stop";
}

// A kernel that never ends (a collective whose peer died): stop goes on at
// the deadline and says so, the kernels still running counted as unfinished;
// while that wait is still blocked in the driver a later stop does not start
// another; once it returns, stops wait again.
TEST_F(CuptiCollectorTest, StopGivesUpOnAWaitThatNeverEnds) {
  FakeCuptiScript stuck;
  stuck.synchronize_blocks = true;
  CuptiCollectorOptions options;
  options.sync_timeout_ms = 50;
  Start(stuck, options);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* buffer = fake().RequestBuffer(&size);
  ASSERT_NE(buffer, nullptr);
  fake().HoldUntilFlush(buffer, FakeCupti::WriteKernels(buffer, size, 3, "running", /*finished=*/false));
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(stopped.decoder.incomplete, 3u) << "the wait timed out: the zero stamps are work still running";
  EXPECT_EQ(stopped.decoder.zero_timestamps, 0u);
  EXPECT_TRUE(fake().synchronize_blocked()) << "stop returned while the driver still waits";
  EXPECT_TRUE(stopped.synchronize_timed_out);
  EXPECT_NE(stopped.synchronize_failure.find("CudaSyncTimeoutMs"), std::string::npos) << stopped.synchronize_failure;
  EXPECT_EQ(stopped.contexts_synchronized, 0u);
  EXPECT_TRUE(fake().enabled().empty());
  EXPECT_EQ(fake().subscribed(), 0);

  Start(stuck, options);
  ASSERT_TRUE(started_.active) << started_.reason;
  const CuptiStopResult again = StopCuptiCollection();
  EXPECT_TRUE(again.synchronize_timed_out);
  EXPECT_NE(again.synchronize_failure.find("still blocked"), std::string::npos) << again.synchronize_failure;

  fake().ReleaseSynchronize();
  CuptiStopResult later;
  for (int attempt = 0; attempt < 500 && later.contexts_synchronized == 0; ++attempt) {
    usleep(10000);  // until the released helper has left the driver
    Start(FakeCuptiScript{}, options);
    ASSERT_TRUE(started_.active) << started_.reason;
    later = StopCuptiCollection();
  }
  EXPECT_EQ(later.contexts_synchronized, 1u);
  EXPECT_FALSE(later.synchronize_timed_out);
}

// torch.cuda.graph on another thread: a device-wide wait would invalidate
// the capture, so stop skips it while any stream captures (begun through the
// runtime or the driver, seen once), and waits again once it ended.
TEST_F(CuptiCollectorTest, StopSkipsTheWaitWhileAStreamCapturesAGraph) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(fake().enabled_callbacks(), GraphCaptureTracker::Callbacks().size());
  auto* stream = reinterpret_cast<CUstream>(0x5000);
  fake().CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, stream);
  fake().CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, stream);
  fake().CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                 reinterpret_cast<CUstream>(0x6000), /*result=*/900);  // refused: no capture
  const CuptiStopResult during = StopCuptiCollection();
  EXPECT_EQ(fake().context_synchronizations(), 0);
  EXPECT_NE(during.synchronize_skipped.find("1 stream(s) capturing a CUDA graph"), std::string::npos)
      << during.synchronize_skipped;

  Start(FakeCuptiScript{});  // the capture goes on into the next session
  ASSERT_TRUE(started_.active) << started_.reason;
  fake().CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, stream);
  const CuptiStopResult after = StopCuptiCollection();
  EXPECT_EQ(after.synchronize_skipped, "");
  EXPECT_EQ(after.contexts_synchronized, 1u);
}

// Kineto's timestamp callback, registered after ours, stamps records with
// TSC ticks: they are dropped, counted and reported, never written.
TEST_F(CuptiCollectorTest, RecordsOnAnotherClockAreDroppedAndReportedAtStop) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* buffer = fake().RequestBuffer(&size);
  ASSERT_NE(buffer, nullptr);
  const std::size_t used = FakeCupti::WriteKernels(buffer, size, 2, "k");
  CUpti_ActivityKernel10 tsc;
  std::memcpy(&tsc, buffer, sizeof(tsc));
  tsc.start *= 3;  // a 3 GHz counter since boot
  tsc.end = tsc.start + 15;
  std::memcpy(buffer, &tsc, sizeof(tsc));
  fake().CompleteBuffer(buffer, used);
  EXPECT_EQ(Delivered(), 1u);
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(stopped.decoder.foreign_timebase, 1u);
  EXPECT_NE(stopped.foreign_client.find("another clock"), std::string::npos) << stopped.foreign_client;
}

// torch.profiler (Kineto) registers its own buffer callbacks at each start:
// the buffers CUPTI holds then go to it and never come back.
TEST_F(CuptiCollectorTest, AnotherClientTakingTheBufferCallbacksIsReported) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* ours = fake().RequestBuffer(&size);
  ASSERT_NE(ours, nullptr);
  fake().HoldUntilFlush(ours, FakeCupti::WriteKernels(ours, size, 3, "k"));
  static std::vector<std::uint8_t*> kineto_got;
  kineto_got.clear();
  fake().RegisterForeignCallbacks(
      [](std::uint8_t** b, std::size_t* s, std::size_t* m) { *b = nullptr, *s = 0, *m = 0; },
      [](CUcontext, std::uint32_t, std::uint8_t* b, std::size_t, std::size_t) { kineto_got.push_back(b); });
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(kineto_got.size(), 1u);
  EXPECT_EQ(stopped.buffers_not_returned, 1u);
  EXPECT_NE(stopped.foreign_client.find("never came back"), std::string::npos) << stopped.foreign_client;
  CompleteBufferToUs(ours);  // what a later session's registration would bring back
}

// ... and after our callbacks are registered again, its buffers come to us.
TEST_F(CuptiCollectorTest, ABufferThePoolDidNotLendIsDecodedButNeverReused) {
  Start(FakeCuptiScript{}, /*max_buffers=*/1);
  ASSERT_TRUE(started_.active) << started_.reason;
  std::vector<std::uint64_t> kineto(kBufferBytes / 8);
  auto* foreign = reinterpret_cast<std::uint8_t*>(kineto.data());
  fake().CompleteBuffer(foreign, FakeCupti::WriteKernels(foreign, kBufferBytes, 2, "k"));
  EXPECT_EQ(Delivered(), 2u);
  std::size_t size = 0;
  std::uint8_t* lent = fake().RequestBuffer(&size);
  EXPECT_NE(lent, foreign);
  EXPECT_EQ(fake().RequestBuffer(&size), nullptr) << "the foreign buffer did not join the pool";
  fake().CompleteBuffer(lent, 0);
  const CuptiStopResult stopped = StopCuptiCollection();
  EXPECT_EQ(stopped.foreign_buffers, 1u);
  EXPECT_NE(stopped.foreign_client.find("another client"), std::string::npos) << stopped.foreign_client;
}

// CUPTI asks for buffers on the application's threads (a launch that fills
// one): a completion decoding on another thread must never hold that up.
TEST_F(CuptiCollectorTest, BufferRequestsDoNotWaitForADecodeInProgress) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  std::size_t size = 0;
  std::uint8_t* buffer = fake().RequestBuffer(&size);
  ASSERT_NE(buffer, nullptr);
  const auto api_record = testing_api_record();
  std::memcpy(buffer, &api_record, sizeof(api_record));
  fake().BlockCallbackNames(true);
  std::thread completing([&] { fake().CompleteBuffer(buffer, sizeof(api_record)); });
  fake().WaitUntilNameBlocked();  // the decode is in progress
  std::uint8_t* another = fake().RequestBuffer(&size);
  EXPECT_NE(another, nullptr);
  fake().BlockCallbackNames(false);
  completing.join();
  fake().CompleteBuffer(another, 0);
  EXPECT_EQ(StopCuptiCollection().buffers_completed, 2u);
}

TEST_F(CuptiCollectorTest, PeriodicFlushQuietCallsAndZeroedBuffers) {
  Start(FakeCuptiScript{});
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(fake().flush_period_ms(), 1000u);
  EXPECT_TRUE(fake().zeroed_buffers_announced());
  const auto runtime = fake().quiet_runtime_calls();
  const auto driver = fake().quiet_driver_calls();
  EXPECT_NE(std::find(runtime.begin(), runtime.end(), CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020), runtime.end());
  EXPECT_NE(std::find(driver.begin(), driver.end(), CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent), driver.end());
  EXPECT_NE(std::find(driver.begin(), driver.end(), CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute), driver.end());
  EXPECT_NE(std::find(driver.begin(), driver.end(), CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState), driver.end());
  EXPECT_FALSE(fake().all_sync_records()) << "queries of unfinished work (NCCL's watchdog polls) are not recorded";
  StopCuptiCollection();
  EXPECT_EQ(fake().flush_period_ms(), 0u) << "CUPTI's default is restored for whoever comes next";

  FakeCuptiScript old;
  old.newer_cupti = false;
  Start(old);
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_TRUE(fake().quiet_runtime_calls().empty());
}

// 13.0 GA's CUPTI can deadlock or crash in the two calls of every stop.
TEST_F(CuptiCollectorTest, CuptiOf13_0GaIsNamedInAWarningWithItsFile) {
  FakeCuptiScript ga;
  ga.version = kCuptiWithStopDefects;
  Start(ga);
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(started_.cupti_library, "/opt/fake/libcupti.so.13");
  EXPECT_NE(started_.warning.find("CUDA 13.0 GA"), std::string::npos) << started_.warning;
  EXPECT_NE(started_.warning.find("/opt/fake/libcupti.so.13"), std::string::npos) << started_.warning;
  StopCuptiCollection();
  Start(FakeCuptiScript{});  // 13.0 Update 1
  ASSERT_TRUE(started_.active) << started_.reason;
  EXPECT_EQ(started_.warning, "");
}

// NVTX_INJECTION64_PATH is written at most once per process (nvtx_injection.h):
// each test runs in a fresh process (a threadsafe death test re-executes
// the binary), so its first start is that process's first, and exits with
// what went wrong ("" when nothing did).
[[noreturn]] void ExitWith(const std::string& failure) {
  std::fputs(failure.c_str(), stderr);
  std::fflush(stderr);
  _exit(failure.empty() ? 0 : 1);
}

std::string NvtxValue() {
  const char* value = std::getenv("NVTX_INJECTION64_PATH");
  return value != nullptr ? value : "(unset)";
}

TEST_F(CuptiCollectorTest, NvtxInjectionIsWrittenOncePerProcessAndStaysAfterStop) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("NVTX_INJECTION64_PATH");
        for (int session = 0; session < 3; ++session) {
          Start(FakeCuptiScript{});
          if (!started_.active) ExitWith("not started: " + started_.reason);
          if (NvtxValue() != fake().api()->cupti_path) ExitWith("while collecting: " + NvtxValue());
          StopCuptiCollection();
          if (NvtxValue() != fake().api()->cupti_path) ExitWith("withdrawn at stop: " + NvtxValue());
        }
        ExitWith(NvtxEnvironmentWrites() == 1
                     ? ""
                     : "three sessions wrote the environment " + std::to_string(NvtxEnvironmentWrites()) + " times");
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(CuptiCollectorTest, NvtxInjectionNeverOverwritesAUsersValueNorDecidesTwice) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("NVTX_INJECTION64_PATH", "/users/own/injection.so", 1);
        for (int session = 0; session < 2; ++session) {
          Start(FakeCuptiScript{});
          if (!started_.active) ExitWith("not started: " + started_.reason);
          StopCuptiCollection();
          if (NvtxValue() != "/users/own/injection.so") ExitWith("the user's value became " + NvtxValue());
        }
        unsetenv("NVTX_INJECTION64_PATH");  // other threads may run now: the first start decided
        Start(FakeCuptiScript{});
        StopCuptiCollection();
        if (NvtxValue() != "(unset)") ExitWith("a later start set " + NvtxValue());
        ExitWith(NvtxEnvironmentWrites() == 0 ? "" : "the environment was written");
      },
      ::testing::ExitedWithCode(0), "");
}

// The child of a process that used CUPTI never collects: ours is taken out
// in the fork handler, where the child has one thread.
TEST_F(CuptiCollectorTest, AForkedChildDoesNotInheritOurNvtxInjection) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("NVTX_INJECTION64_PATH");
        Start(FakeCuptiScript{});
        if (!started_.active) ExitWith("not started: " + started_.reason);
        StopCuptiCollection();
        const pid_t child = fork();
        if (child == 0) _exit(NvtxValue() == "(unset)" ? 0 : 1);
        int status = 0;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) ExitWith("the child did not exit");
        if (WEXITSTATUS(status) != 0) ExitWith("a forked child inherited NVTX_INJECTION64_PATH");
        ExitWith(NvtxValue() == fake().api()->cupti_path ? "" : "the parent lost it: " + NvtxValue());
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ActivityBufferPool, RejectsBuffersItDidNotLendAndLendsZeroedOnes) {
  ActivityBufferPool pool(1024, 1);
  std::vector<std::uint8_t> other(1024);
  EXPECT_FALSE(pool.Release(other.data()));
  EXPECT_EQ(pool.foreign(), 1u);
  EXPECT_EQ(pool.allocated(), 0u);
  std::uint8_t* a = pool.Acquire(false);
  ASSERT_NE(a, nullptr);
  std::memset(a, 0xab, pool.buffer_bytes());  // CUPTI wrote past the 100 valid bytes it reported
  EXPECT_TRUE(pool.Release(a));
  EXPECT_FALSE(pool.Release(a)) << "a buffer returned twice";
  std::uint8_t* again = pool.Acquire(false);
  ASSERT_EQ(again, a);
  for (std::size_t i = 0; i < pool.buffer_bytes(); ++i) ASSERT_EQ(again[i], 0) << "byte " << i;
  pool.Release(again);
}

TEST(ActivityBufferPool, BuffersBeyondTheCapAreFreedWhenTheyComeBack) {
  ActivityBufferPool pool(1000, 1);
  EXPECT_EQ(pool.buffer_bytes() % ActivityBufferPool::kAlignment, 0u);
  std::uint8_t* a = pool.Acquire(false);
  std::uint8_t* b = pool.Acquire(true);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.over_cap(), 1u);
  pool.Release(b);
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_EQ(pool.Acquire(false), nullptr);
  EXPECT_EQ(pool.refused(), 1u);
  pool.Release(a);
  EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
}  // namespace smprof::internal

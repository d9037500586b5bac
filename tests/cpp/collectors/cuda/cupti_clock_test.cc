// CuptiClock against a scripted CUPTI clock: CLOCK_MONOTONIC plus an offset
// the test sets, as CLOCK_REALTIME is (NTP slews it, an operator steps it).
#include "collectors/cuda/cupti_clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>

#include "smprof/annotate.h"

namespace smprof::internal {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

std::atomic<std::int64_t> g_cupti_ahead_ns{0};  // CUPTI's clock minus CLOCK_MONOTONIC
std::atomic<bool> g_read_fails{false};

CUptiResult ReadScriptedClock(std::uint64_t* ns) {
  if (g_read_fails.load()) return CUPTI_ERROR_UNKNOWN;
  *ns = static_cast<std::uint64_t>(NowNs() + g_cupti_ahead_ns.load());
  return CUPTI_SUCCESS;
}

class CuptiClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_cupti_ahead_ns = 1000 * kSecond;
    g_read_fails = false;
  }
  // A CUPTI stamp taken now, and how far its conversion is from now.
  static std::uint64_t CuptiNow() { return static_cast<std::uint64_t>(NowNs() + g_cupti_ahead_ns.load()); }
};

TEST_F(CuptiClockTest, TheIdentityLeavesStampsAlone) {
  const CuptiClock clock;
  EXPECT_TRUE(clock.identity());
  EXPECT_EQ(clock.ToSession(12345), 12345);
}

TEST_F(CuptiClockTest, AStampTakenNowComesOutNow) {
  const CuptiClock clock(ReadScriptedClock);
  const std::int64_t before = NowNs();
  const std::int64_t session_ns = clock.ToSession(CuptiNow());
  EXPECT_GE(session_ns, before - 1'000'000);  // within a millisecond: the pair's read gap
  EXPECT_LE(session_ns, NowNs() + 1'000'000);
}

// CLOCK_REALTIME stepped forward by 5 s mid-session: records before the step
// keep the old offset, records after it take the new one.
TEST_F(CuptiClockTest, EachStampTakesTheOffsetOfItsNearestPair) {
  CuptiClock clock(ReadScriptedClock);
  const std::uint64_t before_step = CuptiNow();
  const std::int64_t session_before_step = NowNs();
  g_cupti_ahead_ns += 5 * kSecond;
  clock.Sample();
  const std::uint64_t after_step = CuptiNow();
  const std::int64_t session_after_step = NowNs();
  EXPECT_EQ(clock.pairs(), 2u);
  EXPECT_LT(std::llabs(clock.ToSession(before_step) - session_before_step), 1'000'000);
  EXPECT_LT(std::llabs(clock.ToSession(after_step) - session_after_step), 1'000'000);
}

// A step back makes earlier stamps ambiguous: the new offset holds from there.
TEST_F(CuptiClockTest, AStepBackStartsTheTableAgain) {
  CuptiClock clock(ReadScriptedClock);
  clock.Sample();
  g_cupti_ahead_ns -= 60 * kSecond;
  clock.Sample();
  EXPECT_EQ(clock.pairs(), 1u);
  EXPECT_LT(std::llabs(clock.ToSession(CuptiNow()) - NowNs()), 1'000'000);
}

TEST_F(CuptiClockTest, TheTableIsBoundedAndAFailedReadAddsNothing) {
  CuptiClock clock(ReadScriptedClock, /*max_pairs=*/3);
  for (int i = 0; i < 10; ++i) clock.Sample();
  EXPECT_EQ(clock.pairs(), 3u);
  g_read_fails = true;
  clock.Sample();
  EXPECT_EQ(clock.pairs(), 3u);
}

TEST_F(CuptiClockTest, WithoutAnyPairStampsAreLeftAlone) {
  g_read_fails = true;
  const CuptiClock clock(ReadScriptedClock);
  EXPECT_FALSE(clock.identity());
  EXPECT_EQ(clock.pairs(), 0u);
  EXPECT_EQ(clock.ToSession(777), 777);
}

}  // namespace
}  // namespace smprof::internal

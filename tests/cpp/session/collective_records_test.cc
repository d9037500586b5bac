// Collective calls through a session: nothing is kept while no session
// records, a call that began before the session is left out, the calls come
// back in the trace's Collectives table with the footer's count, and the
// buffer's bound drops and counts what a drain has not taken yet.
#include "runtime/collective_records.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "smprof/annotate.h"
#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"
#include "trace/collective_codec.h"

namespace smprof {
namespace {

using internal::CollectiveRecord;
using internal::RecordCollective;

CollectiveRecord Call(std::int64_t start_ns, std::uint64_t sequence) {
  CollectiveRecord r;
  r.start_ns = start_ns;
  r.call_dur_ns = 1000;
  r.tid = 42;
  r.op = "allreduce_";
  r.group = "0";
  r.group_size = 2;
  r.group_rank = 1;
  r.sequence = sequence;
  r.bytes = 4096;
  r.dtype = "float32";
  return r;
}

std::vector<internal::CollectiveRow> Rows(const testing::TraceFileContents& trace) {
  std::vector<internal::CollectiveRow> rows;
  for (const trace::Frame& frame : trace.frames) EXPECT_TRUE(internal::DecodeCollectives(frame, &rows).ok());
  return rows;
}

TEST(CollectiveRecords, ASessionWritesItsCallsAndCountsThemInTheFooter) {
  EXPECT_FALSE(RecordCollective(Call(internal::NowNs(), 1))) << "no session";
  testing::TempDir dir;
  const std::int64_t before = internal::NowNs();
  ASSERT_TRUE(Start(testing::ConfigWritingTo(dir.path(), "collectives_%p.smprof")).ok());
  EXPECT_TRUE(RecordCollective(Call(before - 1'000'000, 7)));  // began before the session
  EXPECT_TRUE(RecordCollective(Call(internal::NowNs(), 8)));
  EXPECT_TRUE(RecordCollective(Call(internal::NowNs(), 9)));
  ASSERT_TRUE(Stop().ok());
  EXPECT_FALSE(RecordCollective(Call(internal::NowNs(), 10)));

  const testing::TraceFileContents trace = testing::ReadTraceFile(LastSessionStats().path);
  ASSERT_TRUE(trace.has_footer && trace.problem.empty()) << trace.problem;
  const std::vector<internal::CollectiveRow> rows = Rows(trace);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].sequence, 8u);
  EXPECT_EQ(rows[1].sequence, 9u);
  EXPECT_EQ(rows[1].op, "allreduce_");
  EXPECT_EQ(rows[1].tid, 42u);
  EXPECT_EQ(trace.footer.collectives_written(), 2u);
  EXPECT_EQ(trace.footer.collectives_dropped(), 0u);
  EXPECT_TRUE(trace.rows_reader_difference.empty()) << trace.rows_reader_difference;
}

TEST(CollectiveRecords, CallsPastTheBoundBeforeADrainAreDroppedAndCounted) {
  testing::TempDir dir;
  Config config = testing::ConfigWritingTo(dir.path(), "bound_%p.smprof");
  config.Set("FlushIntervalMs", "60000");  // the drain takes nothing until the stop
  config.Set("CpuProfilingDurationS", "0");
  ASSERT_TRUE(Start(config).ok());
  constexpr std::size_t kExtra = 10;
  const std::int64_t start = internal::NowNs();
  for (std::size_t i = 0; i < internal::kMaxBufferedCollectives + kExtra; ++i) {
    RecordCollective(Call(start + static_cast<std::int64_t>(i), i + 1));
  }
  ASSERT_TRUE(Stop().ok());
  const testing::TraceFileContents trace = testing::ReadTraceFile(LastSessionStats().path);
  ASSERT_TRUE(trace.has_footer);
  EXPECT_EQ(trace.footer.collectives_written(), internal::kMaxBufferedCollectives);
  EXPECT_EQ(trace.footer.collectives_dropped(), kExtra);
  EXPECT_EQ(Rows(trace).size(), internal::kMaxBufferedCollectives);
  EXPECT_EQ(trace.frames.back().collectives_dropped_total(), kExtra);
}

}  // namespace
}  // namespace smprof

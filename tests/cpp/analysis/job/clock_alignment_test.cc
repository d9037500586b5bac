// One clock across hosts: the correction computed from alignment rounds, the
// rounds written in a session's footer, read back before the frames, and
// applied by the job reader to every file of a stream.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analysis/job/clock_correction.h"
#include "analysis/job/job_reader.h"
#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"
#include "trace/trace_reader.h"

namespace smprof {
namespace {

using analysis::ClockCorrection;
using analysis::CorrectionFromRounds;
using testing::ConfigWritingTo;
using testing::TempDir;

constexpr std::int64_t kSecond = 1000000000;

// A round trip with the reference, whose monotonic clock reads `offset` more
// than ours: `out` ns on the way there, `back` ns on the way back, the
// reference answering after `hold` ns.
trace::ClockSample Sample(std::int64_t t0, std::int64_t offset, std::int64_t out, std::int64_t hold,
                          std::int64_t back) {
  trace::ClockSample s;
  s.set_local_send_ns(t0);
  s.set_reference_receive_ns(t0 + out + offset);
  s.set_reference_send_ns(t0 + out + hold + offset);
  s.set_local_receive_ns(t0 + out + hold + back);
  return s;
}

trace::ClockAlignment Round(const std::string& phase, std::int64_t reference_clock_offset_ns,
                            const std::vector<trace::ClockSample>& samples, const std::string& problem = "") {
  trace::ClockAlignment round;
  round.set_phase(phase);
  round.set_reference_rank(0);
  round.set_reference_host("host-a");
  round.set_reference_clock_offset_ns(reference_clock_offset_ns);
  for (const auto& s : samples) *round.add_samples() = s;
  round.set_problem(problem);
  return round;
}

TEST(ClockCorrection, TheBestSampleGivesTheOffsetWithinHalfItsRoundTrip) {
  const std::int64_t mono_offset = 123456789;  // the reference's monotonic clock is ahead
  const std::int64_t own_wall_offset = 1700000000 * kSecond;
  const std::int64_t reference_wall_offset = own_wall_offset + 250000;  // its realtime clock is 250 us ahead
  // Asymmetric paths: only the 10 + 12 us sample bounds the error to 11 us.
  const auto round =
      Round("start", reference_wall_offset - mono_offset,
            {Sample(1000, mono_offset, 900000, 5000, 100000), Sample(2000000, mono_offset, 10000, 300, 12000),
             Sample(3000000, mono_offset, 40000, 100, 400000)});
  const ClockCorrection c = CorrectionFromRounds({round}, 1, own_wall_offset);
  ASSERT_TRUE(c.aligned);
  EXPECT_EQ(c.problem, "");
  EXPECT_EQ(c.uncertainty_ns, 11000);
  const std::int64_t truth = reference_wall_offset - own_wall_offset;
  EXPECT_LE(std::abs(c.correction_ns - truth), c.uncertainty_ns);
  EXPECT_NE(c.correction_ns, truth) << "the paths are asymmetric: the estimate is off, within its bound";
}

TEST(ClockCorrection, RoundsAreAveragedAndTheirSpreadWidensTheUncertainty) {
  const auto start = Round("start", 1000000, {Sample(0, 0, 500, 0, 500)});
  const auto stop = Round("stop", 1000000 + 40000, {Sample(0, 0, 500, 0, 500)});  // drifted 40 us
  const ClockCorrection c = CorrectionFromRounds({start, stop}, 1, 0);
  ASSERT_TRUE(c.aligned);
  EXPECT_EQ(c.correction_ns, 1020000);
  EXPECT_EQ(c.uncertainty_ns, 500 + 20000);
}

TEST(ClockCorrection, TheReferencesOwnRoundIsZeroEvenWithAProblem) {
  const ClockCorrection c =
      CorrectionFromRounds({Round("start", 5, {}, "no answer from ranks 3 within the timeout")}, 0, 0);
  EXPECT_TRUE(c.aligned);
  EXPECT_EQ(c.correction_ns, 0);
  EXPECT_EQ(c.problem, "start: no answer from ranks 3 within the timeout");
}

TEST(ClockCorrection, AFailedRoundLeavesTheStreamUnalignedWithItsProblem) {
  const ClockCorrection failed =
      CorrectionFromRounds({Round("start", 5, {}, "rank 0 did not answer within the timeout (TimeoutError)")}, 2, 0);
  EXPECT_FALSE(failed.aligned);
  EXPECT_EQ(failed.correction_ns, 0);
  EXPECT_EQ(failed.problem, "start: rank 0 did not answer within the timeout (TimeoutError)");

  trace::ClockSample backwards = Sample(100, 0, 10, 0, 10);
  backwards.set_local_receive_ns(50);
  const ClockCorrection unusable = CorrectionFromRounds({Round("stop", 5, {backwards})}, 2, 0);
  EXPECT_FALSE(unusable.aligned);
  EXPECT_EQ(unusable.problem, "stop: no usable sample (every round trip is negative)");

  const ClockCorrection none = CorrectionFromRounds({}, 2, 0);
  EXPECT_FALSE(none.aligned);
  EXPECT_EQ(none.problem, "") << "nothing recorded: the job reader decides what that means";
}

ClockAlignment PublicRound(const std::string& phase, std::int64_t reference_clock_offset_ns) {
  ClockAlignment round;
  round.phase = phase;
  round.reference_rank = 0;
  round.reference_host = "host-a";
  round.reference_clock_offset_ns = reference_clock_offset_ns;
  round.samples = {ClockSample{100, 110, 111, 121}, ClockSample{200, 215, 216, 231}};
  return round;
}

// A round measured against a reference whose wall clock reads `ahead_ns`
// more than this process's (monotonic clocks equal: one host). Its one
// sample gives an offset of -50 ns, within 450 ns.
ClockAlignment MeasuredRound(std::int64_t ahead_ns) {
  ClockAlignment round;
  round.phase = "start";
  round.reference_clock_offset_ns = ClockOffsetNs() + ahead_ns;
  round.samples = {ClockSample{1000, 1400, 1500, 2000}};
  return round;
}

TEST(ClockAlignmentRecording, RoundsGoInTheFooterAndAreReadBeforeTheFrames) {
  TempDir dir;
  EXPECT_EQ(RecordClockAlignment(PublicRound("early", 0)).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "aligned.smprof")).ok());
  ASSERT_TRUE(RecordClockAlignment(PublicRound("start", 42)).ok());
  { SMPROF_ANNOTATE("work"); }
  ASSERT_TRUE(RecordClockAlignment(PublicRound("stop", 43)).ok());
  ASSERT_TRUE(Stop().ok());
  EXPECT_EQ(RecordClockAlignment(PublicRound("late", 0)).code(), StatusCode::kFailedPrecondition);

  const auto file = testing::ReadTraceFile(dir.File("aligned.smprof"));
  ASSERT_TRUE(file.has_footer);
  ASSERT_EQ(file.footer.clock_alignments_size(), 2);
  const trace::ClockAlignment& start = file.footer.clock_alignments(0);
  EXPECT_EQ(start.phase(), "start");
  EXPECT_EQ(start.reference_host(), "host-a");
  EXPECT_EQ(start.reference_clock_offset_ns(), 42);
  ASSERT_EQ(start.samples_size(), 2);
  EXPECT_EQ(start.samples(1).reference_receive_ns(), 215);
  EXPECT_EQ(file.footer.clock_alignments(1).phase(), "stop");

  std::unique_ptr<internal::TraceReader> reader;
  ASSERT_TRUE(internal::TraceReader::Open(dir.File("aligned.smprof"), &reader).ok());
  ASSERT_TRUE(reader->ReadFooterOnly());
  EXPECT_EQ(reader->footer().SerializeAsString(), file.footer.SerializeAsString());

  // The next session starts without the previous session's rounds.
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "next.smprof")).ok());
  ASSERT_TRUE(Stop().ok());
  EXPECT_EQ(testing::ReadTraceFile(dir.File("next.smprof")).footer.clock_alignments_size(), 0);
}

TEST(ClockAlignmentRecording, TheJobReaderPlacesEachStreamByItsCorrection) {
  TempDir dir;
  // Session 0 is the reference; session 1 measured a reference whose wall
  // clock is 3 s ahead of this process's (monotonic clocks equal: one host).
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "s%s.smprof")).ok());
  ClockAlignment reference;
  reference.phase = "start";
  reference.reference_clock_offset_ns = ClockOffsetNs();
  ASSERT_TRUE(RecordClockAlignment(reference).ok());
  ASSERT_TRUE(Stop().ok());

  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "s%s.smprof")).ok());
  ASSERT_TRUE(RecordClockAlignment(MeasuredRound(3 * kSecond)).ok());
  ASSERT_TRUE(Stop().ok());

  const analysis::JobReader job({dir.path()});
  ASSERT_EQ(job.streams().size(), 2u);
  const analysis::ProcessStream& ref = job.streams()[0];
  const analysis::ProcessStream& other = job.streams()[1];
  ASSERT_EQ(other.session_index, ref.session_index + 1);
  EXPECT_TRUE(ref.clock.aligned);
  EXPECT_EQ(ref.clock.correction_ns, 0);
  ASSERT_TRUE(other.clock.aligned);
  EXPECT_EQ(other.clock.uncertainty_ns, 450);
  // The anchors of both sessions are read the same way: only the clock
  // pair's own reading gap (a few microseconds) separates them.
  EXPECT_NEAR(static_cast<double>(other.clock.correction_ns), 3.0 * kSecond, 1e5);
  const auto& f = other.files.front();
  EXPECT_EQ(f.wall_offset_ns,
            f.header.start().realtime_ns() - f.header.start().monotonic_ns() + other.clock.correction_ns);
  EXPECT_EQ(f.start_wall_ns(), f.header.start().realtime_ns() + other.clock.correction_ns);
}

TEST(ClockAlignmentRecording, EveryFooterOfARotatedSessionCarriesTheRoundsSoFar) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "rotated.smprof");
  config.Set("RotateIntervalS", "1").Set("FlushIntervalMs", "50");
  ASSERT_TRUE(Start(config).ok());
  ASSERT_TRUE(RecordClockAlignment(PublicRound("start", 42)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  { SMPROF_ANNOTATE("after the rotation"); }
  ASSERT_TRUE(RecordClockAlignment(PublicRound("stop", 43)).ok());
  ASSERT_TRUE(Stop().ok());

  const auto first = testing::ReadTraceFile(dir.File("rotated.smprof"));
  ASSERT_FALSE(first.footer.next_file().empty()) << "the session rotated";
  ASSERT_EQ(first.footer.clock_alignments_size(), 1);
  EXPECT_EQ(first.footer.clock_alignments(0).phase(), "start");
  std::string path = first.footer.next_file();
  testing::TraceFileContents last;
  while (!path.empty()) {
    last = testing::ReadTraceFile(path);
    path = last.footer.next_file();
  }
  ASSERT_EQ(last.footer.clock_alignments_size(), 2);
  EXPECT_EQ(last.footer.clock_alignments(1).phase(), "stop");
}

TEST(ClockAlignmentRecording, AFileWithoutFooterHasNoRoundsAndReadsAsBefore) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "cut.smprof")).ok());
  ASSERT_TRUE(RecordClockAlignment(MeasuredRound(kSecond)).ok());
  { SMPROF_ANNOTATE("work"); }
  ASSERT_TRUE(Stop().ok());
  const std::string path = dir.File("cut.smprof");
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);  // into the footer

  std::unique_ptr<internal::TraceReader> reader;
  ASSERT_TRUE(internal::TraceReader::Open(path, &reader).ok());
  EXPECT_FALSE(reader->ReadFooterOnly());
  const analysis::JobReader job({path});
  ASSERT_EQ(job.streams().size(), 1u);
  const analysis::ProcessStream& s = job.streams()[0];
  EXPECT_FALSE(s.clock.aligned);
  EXPECT_EQ(s.clock.correction_ns, 0);
  EXPECT_EQ(s.clock.problem, "") << "one host: nothing to correct";
  const auto& f = s.files.front();
  EXPECT_EQ(f.start_wall_ns(), f.header.start().realtime_ns());
}

TEST(ClockAlignmentRecording, StreamsWithoutRoundsTakeTheirRanksOrAreNamedOnAnotherHost) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "rank.smprof")).ok());
  ASSERT_TRUE(RecordClockAlignment(MeasuredRound(kSecond)).ok());
  ASSERT_TRUE(Stop().ok());
  for (const char* name : {"worker.smprof", "other_host.smprof"}) {
    ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), name)).ok());
    ASSERT_TRUE(Stop().ok());
  }
  // The job reader's streams, as if from three processes on two hosts.
  auto stream = [&](const std::string& name, const std::string& host, std::int64_t pid, std::int64_t worker_of) {
    analysis::ProcessStream s;
    s.host = host;
    s.rank = 1;
    s.pid = pid;
    s.worker_of_pid = worker_of;
    analysis::TraceFileEntry f;
    f.path = dir.File(name);
    f.header = testing::ReadTraceFile(f.path).header;
    f.wall_offset_ns = f.header.start().realtime_ns() - f.header.start().monotonic_ns();
    s.files.push_back(f);
    return s;
  };
  std::vector<analysis::ProcessStream> streams = {stream("rank.smprof", "host-a", 10, 0),
                                                  stream("worker.smprof", "host-a", 11, 10),
                                                  stream("other_host.smprof", "host-b", 12, 0)};
  const std::int64_t worker_own_offset = streams[1].files[0].wall_offset_ns;
  analysis::CorrectClocks(&streams);
  ASSERT_TRUE(streams[0].clock.aligned);
  EXPECT_NEAR(static_cast<double>(streams[0].clock.correction_ns), 1.0 * kSecond, 1e5);
  EXPECT_TRUE(streams[1].clock.aligned) << "a worker takes its rank's correction";
  EXPECT_EQ(streams[1].clock.correction_ns, streams[0].clock.correction_ns);
  EXPECT_EQ(streams[1].clock.problem, "");
  EXPECT_EQ(streams[1].files[0].wall_offset_ns, worker_own_offset + streams[0].clock.correction_ns);
  EXPECT_FALSE(streams[2].clock.aligned);
  EXPECT_EQ(streams[2].clock.correction_ns, 0);
  EXPECT_EQ(streams[2].clock.problem, "no clock alignment recorded: placed by its host's realtime clock");
}

}  // namespace
}  // namespace smprof

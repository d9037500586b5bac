// Grouping files known only by their ends (an S3 object's first and last
// bytes, read by ranged GETs): HeaderChunkEnd and OpenBytes give the header,
// FooterFromTail finds the footer in any tail that holds it and in none that
// does not, and JobReader built from the ends groups, orders and corrects the
// clocks of the streams exactly as JobReader built from the files.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "analysis/job/job_reader.h"
#include "analysis/summary/partial_summary.h"
#include "support/temp_dir.h"
#include "trace/file_format.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace smprof {
namespace {

using analysis::JobReader;
using analysis::TraceFileEnds;
using internal::TraceWriter;
using testing::TempDir;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A rank file of process `pid` (session file `file_index`) whose footer
// carries a clock-alignment round when `footer` is set; `padding` bytes of
// strings in its one frame.
std::string WriteRankFile(const std::string& path, int rank, int pid, int file_index, bool footer,
                          std::size_t padding = 0) {
  std::unique_ptr<TraceWriter> writer;
  EXPECT_TRUE(TraceWriter::Create(path, 0, &writer).ok());
  trace::FileHeader header;
  header.set_format_version(1);
  header.set_host("host-" + std::to_string(rank));
  header.set_rank(rank);
  header.set_pid(pid);
  header.set_file_index(static_cast<std::uint32_t>(file_index));
  header.mutable_start()->set_monotonic_ns(1000 + file_index);
  header.mutable_start()->set_realtime_ns(1'000'000'000 + 1000 * rank + file_index);
  EXPECT_TRUE(writer->Append(trace_format::kHeaderTag, header).ok());
  trace::Frame frame;
  frame.set_sequence(0);
  frame.add_strings(std::string(padding, 'p'));
  EXPECT_TRUE(writer->Append(trace_format::kFrameTag, frame).ok());
  if (footer) {
    trace::Footer f;
    f.set_frames_written(1);
    trace::ClockAlignment* round = f.add_clock_alignments();
    round->set_phase("start");
    round->set_reference_rank(0);
    round->set_reference_clock_offset_ns(1'000'000'000 + 7'000 * (rank + 1));
    trace::ClockSample* sample = round->add_samples();
    sample->set_local_send_ns(100);
    sample->set_reference_receive_ns(180);
    sample->set_reference_send_ns(190);
    sample->set_local_receive_ns(120);
    EXPECT_TRUE(writer->Append(trace_format::kFooterTag, f).ok());
  }
  EXPECT_TRUE(writer->Close().ok());
  return ReadBytes(path);
}

TEST(TraceFileEnds, TheHeaderReadsFromTheFirstBytesThroughItsChunk) {
  TempDir dir;
  const std::string path = dir.path() + "/rank.smprof";
  const std::string bytes = WriteRankFile(path, 3, 33, 0, true, 5000);
  const std::uint64_t header_end = internal::HeaderChunkEnd(bytes);
  ASSERT_GT(header_end, sizeof(trace_format::kMagic) + trace_format::kChunkHeaderBytes);
  ASSERT_LT(header_end, bytes.size());
  EXPECT_EQ(internal::HeaderChunkEnd(bytes.substr(0, 16)), header_end);
  EXPECT_EQ(internal::HeaderChunkEnd(bytes.substr(0, 15)), 0u);
  EXPECT_EQ(internal::HeaderChunkEnd("not a trace file at all"), 0u);

  std::unique_ptr<internal::TraceReader> from_bytes;
  ASSERT_TRUE(internal::TraceReader::OpenBytes("s3://b/rank", bytes.substr(0, header_end), &from_bytes).ok());
  std::unique_ptr<internal::TraceReader> from_file;
  ASSERT_TRUE(internal::TraceReader::Open(path, &from_file).ok());
  EXPECT_EQ(from_bytes->header().SerializeAsString(), from_file->header().SerializeAsString());

  const Status cut = internal::TraceReader::OpenBytes("s3://b/rank", bytes.substr(0, header_end - 1), &from_bytes);
  EXPECT_FALSE(cut.ok());
  EXPECT_NE(cut.message().find("'s3://b/rank': unreadable header: truncated"), std::string::npos) << cut.message();
}

TEST(TraceFileEnds, TheFooterIsFoundInEveryTailThatHoldsItAndNoOther) {
  TempDir dir;
  const std::string bytes = WriteRankFile(dir.path() + "/rank.smprof", 1, 11, 0, true, 3000);
  const std::string start = bytes.substr(0, internal::HeaderChunkEnd(bytes));
  std::unique_ptr<internal::TraceReader> reader;
  ASSERT_TRUE(internal::TraceReader::Open(dir.path() + "/rank.smprof", &reader).ok());
  ASSERT_TRUE(reader->ReadFooterOnly());
  const std::string expected = reader->footer().SerializeAsString();
  std::size_t shortest = 0;
  for (std::size_t length = 0; length <= bytes.size(); ++length) {
    trace::Footer footer;
    if (internal::FooterFromTail("rank", start, std::string_view(bytes).substr(bytes.size() - length), &footer)) {
      EXPECT_EQ(footer.SerializeAsString(), expected) << length;
      if (shortest == 0) shortest = length;
    } else {
      EXPECT_EQ(shortest, 0u) << "a longer tail lost the footer: " << length;
    }
  }
  EXPECT_GT(shortest, trace_format::kChunkHeaderBytes);
  EXPECT_LT(shortest, 200u);

  const std::string unfinished = WriteRankFile(dir.path() + "/killed.smprof", 1, 11, 0, false, 3000);
  const std::string unfinished_start = unfinished.substr(0, internal::HeaderChunkEnd(unfinished));
  for (std::size_t length = 0; length <= unfinished.size(); ++length) {
    trace::Footer footer;
    EXPECT_FALSE(internal::FooterFromTail("killed", unfinished_start,
                                          std::string_view(unfinished).substr(unfinished.size() - length), &footer))
        << length;
  }
}

TEST(TraceFileEnds, JobReaderGroupsTheEndsAsItGroupsTheFiles) {
  TempDir dir;
  WriteRankFile(dir.path() + "/rank0.smprof", 0, 100, 0, true);
  WriteRankFile(dir.path() + "/rank1.0001.smprof", 1, 101, 1, true, 2000);
  WriteRankFile(dir.path() + "/rank1.smprof", 1, 101, 0, true);
  WriteRankFile(dir.path() + "/rank2.smprof", 2, 102, 0, false, 2000);
  std::ofstream(dir.path() + "/broken.smprof", std::ios::binary) << std::string(trace_format::kMagic, 8) << "junk";

  const JobReader from_files({dir.path()});
  std::vector<TraceFileEnds> ends;
  for (const std::string& path : analysis::ListTraceFiles(dir.path())) {
    const std::string bytes = ReadBytes(path);
    const std::size_t tail = std::min<std::size_t>(bytes.size(), 300);
    ends.push_back({path, bytes.size(), bytes.substr(0, 200), bytes.substr(bytes.size() - tail)});
  }
  const JobReader from_ends(ends);

  ASSERT_EQ(from_files.streams().size(), 3u);
  ASSERT_EQ(from_ends.streams().size(), from_files.streams().size());
  for (std::size_t i = 0; i < from_files.streams().size(); ++i) {
    EXPECT_EQ(analysis::EncodeStream(from_ends.streams()[i], from_ends.origin_ns()),
              analysis::EncodeStream(from_files.streams()[i], from_files.origin_ns()))
        << i;
  }
  EXPECT_TRUE(from_files.streams()[1].clock.aligned);
  EXPECT_NE(from_files.streams()[1].clock.correction_ns, 0);
  EXPECT_EQ(from_ends.origin_ns(), from_files.origin_ns());
  EXPECT_EQ(from_ends.total_bytes(), from_files.total_bytes());
  EXPECT_EQ(from_ends.warnings(), from_files.warnings());
  ASSERT_EQ(from_ends.warnings().size(), 1u);
}

}  // namespace
}  // namespace smprof

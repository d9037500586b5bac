// Crash safety of the file format: every prefix of a real trace file (cut at
// every byte) either fails to open with a "truncated" message (header
// incomplete) or reads exactly the frames that are complete, reports
// "truncated" and the offset of the first missing chunk, and only the whole
// file has a footer and no problem. Damaged bytes give "corrupt", never a
// crash, and the frames before the damage still read. Reading with
// NextFrame(FrameRows*) (the wire walker) gives the same frames and problems.
// A reader following a file as it grows (set_follow) gives each frame once,
// as soon as its chunk is whole, and waits without a problem in between.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"
#include "trace/file_format.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace smprof {
namespace {

using internal::TraceWriter;
using testing::ConfigWritingTo;
using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::uint32_t GetU32(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// The chunks of a well-formed file, parsed independently of TraceReader.
struct ChunkSpan {
  std::string tag;
  std::size_t begin;  // offset of the chunk header
  std::size_t end;    // one past the payload
};

std::vector<ChunkSpan> ParseChunks(const std::string& bytes) {
  std::vector<ChunkSpan> chunks;
  std::size_t at = sizeof(trace_format::kMagic);
  while (at + trace_format::kChunkHeaderBytes <= bytes.size()) {
    const std::size_t end = at + trace_format::kChunkHeaderBytes + GetU32(bytes, at + 4);
    chunks.push_back(ChunkSpan{bytes.substr(at, 4), at, end});
    at = end;
  }
  EXPECT_EQ(at, bytes.size()) << "the test file itself must be well formed";
  return chunks;
}

// A file written directly: header, `frames` frames of a few dozen rows, footer.
std::string WriteDirectTrace(const std::string& path, int compression_level, int frames) {
  std::unique_ptr<TraceWriter> writer;
  EXPECT_TRUE(TraceWriter::Create(path, compression_level, &writer).ok());
  trace::FileHeader header;
  header.set_format_version(1);
  header.set_host("truncation-host");
  EXPECT_TRUE(writer->Append(trace_format::kHeaderTag, header).ok());
  for (int f = 0; f < frames; ++f) {
    trace::Frame frame;
    frame.set_sequence(static_cast<std::uint64_t>(f));
    frame.add_strings("range-" + std::to_string(f));
    frame.add_threads()->set_tid(100 + static_cast<std::uint32_t>(f));
    trace::Annotations* a = frame.mutable_annotations();
    a->set_base_ns(1000000 * f);
    for (int i = 0; i < 20 + f; ++i) {
      a->add_start_delta_ns(i * 3);
      a->add_dur_ns(static_cast<std::uint64_t>(i));
      a->add_name_index(0);
      a->add_thread_index(0);
      a->add_depth(static_cast<std::uint32_t>(i % 4));
    }
    EXPECT_TRUE(writer->Append(trace_format::kFrameTag, frame).ok());
  }
  trace::Footer footer;
  footer.set_frames_written(static_cast<std::uint64_t>(frames));
  EXPECT_TRUE(writer->Append(trace_format::kFooterTag, footer).ok());
  EXPECT_TRUE(writer->Close().ok());
  return ReadBytes(path);
}

// Cuts `full` at every length and checks what the reader makes of each prefix.
void CheckEveryPrefix(const std::string& full, const std::string& scratch) {
  const std::vector<ChunkSpan> chunks = ParseChunks(full);
  ASSERT_GE(chunks.size(), 3u);
  ASSERT_EQ(chunks.front().tag, "SMPH");
  ASSERT_EQ(chunks.back().tag, "SMPE");
  const TraceFileContents whole = ReadTraceFile([&] {
    WriteBytes(scratch, full);
    return scratch;
  }());
  ASSERT_TRUE(whole.open_status.ok());

  std::size_t previous_frames = 0;
  for (std::size_t length = 0; length <= full.size(); ++length) {
    SCOPED_TRACE("prefix of " + std::to_string(length) + " of " + std::to_string(full.size()) + " bytes");
    WriteBytes(scratch, full.substr(0, length));
    const TraceFileContents read = ReadTraceFile(scratch);
    if (length < chunks.front().end) {
      ASSERT_FALSE(read.open_status.ok());
      EXPECT_NE(read.open_status.message().find("truncated"), std::string::npos) << read.open_status.message();
      EXPECT_NE(read.open_status.message().find(scratch), std::string::npos) << read.open_status.message();
      continue;
    }
    ASSERT_TRUE(read.open_status.ok()) << read.open_status.message();
    EXPECT_EQ(read.header.host(), whole.header.host());
    EXPECT_EQ(read.rows_reader_difference, "");

    // Exactly the frames whose chunk is complete, and the offset where the
    // first incomplete chunk begins.
    std::size_t complete_frames = 0;
    std::size_t resume_at = 0;
    for (const ChunkSpan& chunk : chunks) {
      if (chunk.end > length) break;
      if (chunk.tag == "SMPF") ++complete_frames;
      resume_at = chunk.end;
    }
    ASSERT_EQ(read.frames.size(), complete_frames);
    EXPECT_GE(read.frames.size(), previous_frames) << "frames read never decrease as the file grows";
    previous_frames = read.frames.size();
    for (std::size_t i = 0; i < read.frames.size(); ++i) {
      ASSERT_EQ(read.frames[i].SerializeAsString(), whole.frames[i].SerializeAsString()) << "frame " << i;
    }
    if (length == full.size()) {
      EXPECT_TRUE(read.has_footer);
      EXPECT_TRUE(read.problem.empty()) << read.problem;
    } else {
      EXPECT_FALSE(read.has_footer);
      EXPECT_NE(read.problem.find("truncated"), std::string::npos) << read.problem;
      EXPECT_EQ(read.problem_offset, resume_at) << read.problem;
      EXPECT_NE(read.problem.find("at byte " + std::to_string(resume_at)), std::string::npos) << read.problem;
    }
  }
  EXPECT_EQ(previous_frames, whole.frames.size());
}

TEST(FollowedTrace, AFileGrowingByteByByteGivesEachFrameOnceAsItsChunkCompletes) {
  TempDir dir;
  const std::string full = WriteDirectTrace(dir.File("full.smprof"), 3, 6);
  const std::vector<ChunkSpan> chunks = ParseChunks(full);
  const TraceFileContents whole = ReadTraceFile(dir.File("full.smprof"));
  const std::string path = dir.File("growing.smprof");
  WriteBytes(path, full.substr(0, chunks.front().end));  // the header chunk, as the writer's first write
  std::unique_ptr<internal::TraceReader> reader;
  ASSERT_TRUE(internal::TraceReader::Open(path, &reader).ok());
  reader->set_follow(true);
  std::ofstream out(path, std::ios::binary | std::ios::app);
  std::vector<std::string> frames;
  for (std::size_t length = chunks.front().end; length <= full.size(); ++length) {
    SCOPED_TRACE("grown to " + std::to_string(length) + " of " + std::to_string(full.size()) + " bytes");
    if (length > chunks.front().end) {
      out.write(&full[length - 1], 1);
      out.flush();
    }
    trace::Frame frame;
    while (reader->NextFrame(&frame)) frames.push_back(frame.SerializeAsString());
    std::size_t complete = 0;
    for (const ChunkSpan& chunk : chunks) complete += chunk.tag == "SMPF" && chunk.end <= length;
    ASSERT_EQ(frames.size(), complete);
    ASSERT_TRUE(reader->problem().empty()) << reader->problem();
    if (length < full.size()) ASSERT_TRUE(reader->waiting());
  }
  EXPECT_FALSE(reader->waiting());
  EXPECT_TRUE(reader->has_footer());
  ASSERT_EQ(frames.size(), whole.frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frames[i], whole.frames[i].SerializeAsString());
}

class DirectTraceTruncation : public ::testing::TestWithParam<int> {};

TEST_P(DirectTraceTruncation, EveryPrefixReadsItsCompleteFrames) {
  TempDir dir;
  const std::string full = WriteDirectTrace(dir.File("full.smprof"), GetParam(), 6);
  CheckEveryPrefix(full, dir.File("prefix.smprof"));
}

INSTANTIATE_TEST_SUITE_P(RawAndZstd, DirectTraceTruncation, ::testing::Values(0, 3));

TEST(SessionTraceTruncation, EveryPrefixOfARealSessionFileReadsItsCompleteFrames) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "session.smprof");
  config.Set("FlushIntervalMs", "10");
  ASSERT_TRUE(Start(config).ok());
  for (int batch = 0; batch < 4; ++batch) {
    for (int i = 0; i < 80; ++i) {
      SMPROF_ANNOTATE("outer");
      SMPROF_ANNOTATE("inner");
    }
    // Lets the drain write a frame per batch; the test holds whatever count it gets.
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(Stop().ok());
  const SessionStats stats = LastSessionStats();
  ASSERT_EQ(stats.annotations_written, 640u);
  ASSERT_GE(stats.frames_written, 1u);
  CheckEveryPrefix(ReadBytes(stats.path), dir.File("prefix.smprof"));
}

TEST(TraceCorruption, FlippedPayloadByteIsAChecksumMismatchAfterTheGoodFrames) {
  TempDir dir;
  const std::string full = WriteDirectTrace(dir.File("full.smprof"), 3, 5);
  const std::vector<ChunkSpan> chunks = ParseChunks(full);
  for (std::size_t victim = 1; victim + 1 < chunks.size(); ++victim) {  // each frame chunk
    SCOPED_TRACE("damaged frame chunk " + std::to_string(victim));
    std::string damaged = full;
    const std::size_t payload = chunks[victim].begin + trace_format::kChunkHeaderBytes;
    damaged[payload + (chunks[victim].end - payload) / 2] ^= 0x5A;
    WriteBytes(dir.File("damaged.smprof"), damaged);
    const TraceFileContents read = ReadTraceFile(dir.File("damaged.smprof"));
    ASSERT_TRUE(read.open_status.ok());
    EXPECT_EQ(read.frames.size(), victim - 1) << "the frames before the damage still read";
    EXPECT_EQ(read.rows_reader_difference, "");
    EXPECT_NE(read.problem.find("corrupt"), std::string::npos) << read.problem;
    EXPECT_NE(read.problem.find("checksum mismatch"), std::string::npos) << read.problem;
    EXPECT_EQ(read.problem_offset, chunks[victim].begin);
    EXPECT_FALSE(read.has_footer);
  }
}

TEST(TraceCorruption, DamagedHeaderFailsToOpenWithAReason) {
  TempDir dir;
  const std::string full = WriteDirectTrace(dir.File("full.smprof"), 3, 2);
  const std::string path = dir.File("damaged.smprof");
  struct Case {
    std::size_t at;
    const char* expected;
  };
  const std::size_t header_payload = sizeof(trace_format::kMagic) + trace_format::kChunkHeaderBytes;
  for (const Case& c : {Case{0, "bad magic"}, Case{7, "format version"}, Case{8, "bad chunk header"},
                        Case{header_payload + 1, "checksum mismatch"}}) {
    std::string damaged = full;
    damaged[c.at] ^= 0x02;
    WriteBytes(path, damaged);
    const TraceFileContents read = ReadTraceFile(path);
    ASSERT_FALSE(read.open_status.ok()) << "byte " << c.at;
    EXPECT_NE(read.open_status.message().find(c.expected), std::string::npos) << read.open_status.message();
  }
  WriteBytes(path, "not a trace at all, just text");
  EXPECT_NE(ReadTraceFile(path).open_status.message().find("bad magic"), std::string::npos);
  EXPECT_EQ(ReadTraceFile(dir.File("missing.smprof")).open_status.code(), StatusCode::kIoError);
}

TEST(TraceCorruption, DataAfterTheFooterIsReported) {
  TempDir dir;
  const std::string full = WriteDirectTrace(dir.File("full.smprof"), 3, 2);
  const std::vector<ChunkSpan> chunks = ParseChunks(full);
  const std::string frame_chunk = full.substr(chunks[1].begin, chunks[1].end - chunks[1].begin);
  WriteBytes(dir.File("extra.smprof"), full + frame_chunk);
  const TraceFileContents read = ReadTraceFile(dir.File("extra.smprof"));
  EXPECT_EQ(read.frames.size(), 2u);
  EXPECT_NE(read.problem.find("data after the footer"), std::string::npos) << read.problem;
  EXPECT_EQ(read.problem_offset, full.size());
  EXPECT_EQ(read.rows_reader_difference, "");
}

TEST(TraceCorruption, EverySingleByteFlipIsSurvivedAndNeverInventsFrames) {
  TempDir dir;
  const std::string full = WriteDirectTrace(dir.File("full.smprof"), 3, 3);
  const std::string path = dir.File("flipped.smprof");
  for (std::size_t at = 0; at < full.size(); ++at) {
    std::string damaged = full;
    damaged[at] = static_cast<char>(~damaged[at]);
    WriteBytes(path, damaged);
    const TraceFileContents read = ReadTraceFile(path);
    if (!read.open_status.ok()) continue;
    ASSERT_LE(read.frames.size(), 3u) << "byte " << at;
    EXPECT_EQ(read.rows_reader_difference, "") << "byte " << at;
    // A flip either sits in an unchecked reserved byte, or stops reading with a reason.
    if (read.frames.size() < 3 || !read.has_footer) {
      EXPECT_FALSE(read.problem.empty()) << "byte " << at;
    }
  }
}

}  // namespace
}  // namespace smprof

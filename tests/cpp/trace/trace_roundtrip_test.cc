// Round trips through the trace file: TraceWriter -> TraceReader with and
// without compression, frames at the reader's size limit, and a whole session (Start, SMPROF_ANNOTATE nested 3
// deep, nested handles, Stop) read back with exact counts, names, depths,
// thread ids, header and footer, and times inside what the test measured.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <vector>

#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"
#include "trace/file_format.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace smprof {
namespace {

using internal::NowNs;
using internal::TraceReader;
using internal::TraceWriter;
using testing::ConfigWritingTo;
using testing::DecodedRange;
using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

trace::Frame MakeFrame(std::uint64_t sequence, int rows) {
  trace::Frame frame;
  frame.set_sequence(sequence);
  frame.add_strings("name-" + std::to_string(sequence));
  trace::Thread* thread = frame.add_threads();
  thread->set_tid(1000 + static_cast<std::uint32_t>(sequence));
  thread->set_name("worker");
  trace::Annotations* a = frame.mutable_annotations();
  a->set_base_ns(static_cast<std::int64_t>(sequence) * 1000000);
  for (int i = 0; i < rows; ++i) {
    a->add_start_delta_ns(i == 0 ? 0 : 10);
    a->add_dur_ns(5);
    a->add_name_index(0);
    a->add_thread_index(0);
    a->add_depth(static_cast<std::uint32_t>(i % 3));
  }
  return frame;
}

class WriterReaderRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(WriterReaderRoundTrip, EveryMessageComesBackIdentical) {
  TempDir dir;
  const std::string path = dir.File("direct.smprof");
  std::unique_ptr<TraceWriter> writer;
  ASSERT_TRUE(TraceWriter::Create(path, GetParam(), &writer).ok());
  trace::FileHeader header;
  header.set_format_version(1);
  header.set_host("host-a");
  header.set_rank(3);
  (*header.mutable_config())["BucketCount"] = "7";
  ASSERT_TRUE(writer->Append(trace_format::kHeaderTag, header).ok());
  std::vector<trace::Frame> frames;
  for (std::uint64_t i = 0; i < 4; ++i) {
    frames.push_back(MakeFrame(i, 50 + static_cast<int>(i)));
    ASSERT_TRUE(writer->Append(trace_format::kFrameTag, frames.back()).ok());
  }
  trace::Footer footer;
  footer.set_annotations_written(206);
  footer.set_frames_written(4);
  ASSERT_TRUE(writer->Append(trace_format::kFooterTag, footer).ok());
  const std::uint64_t bytes = writer->bytes_written();
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_EQ(std::filesystem::file_size(path), bytes);
  EXPECT_EQ(writer->Append(trace_format::kFrameTag, frames[0]).code(), StatusCode::kFailedPrecondition);

  // The first chunk's encoding byte: raw for level 0, zstd otherwise.
  std::ifstream in(path, std::ios::binary);
  char head[sizeof(trace_format::kMagic) + trace_format::kChunkHeaderBytes];
  ASSERT_TRUE(in.read(head, sizeof(head)));
  EXPECT_EQ(std::string(head, 6), "SMPROF");
  EXPECT_EQ(std::string(head + 8, 4), "SMPH");
  EXPECT_EQ(head[16], GetParam() == 0 ? 0 : 1);

  const TraceFileContents read = ReadTraceFile(path);
  ASSERT_TRUE(read.open_status.ok()) << read.open_status.message();
  EXPECT_EQ(read.header.SerializeAsString(), header.SerializeAsString());
  ASSERT_EQ(read.frames.size(), frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(read.frames[i].SerializeAsString(), frames[i].SerializeAsString()) << "frame " << i;
  }
  EXPECT_TRUE(read.has_footer);
  EXPECT_EQ(read.footer.SerializeAsString(), footer.SerializeAsString());
  EXPECT_TRUE(read.problem.empty()) << read.problem;
  EXPECT_EQ(read.ranges.size(), 50u + 51u + 52u + 53u);
}

INSTANTIATE_TEST_SUITE_P(CompressionLevels, WriterReaderRoundTrip, ::testing::Values(0, 1, 3, 19));

// A frame of one string, `bytes` long when serialized.
trace::Frame FrameOfSize(std::size_t bytes, bool random) {
  trace::Frame frame;
  std::string* text = frame.add_strings();
  std::size_t length = bytes;
  frame.mutable_strings(0)->assign(length, 'a');
  while (frame.ByteSizeLong() > bytes) frame.mutable_strings(0)->resize(--length);
  if (random) {
    std::uint64_t x = 88172645463325252ull;
    for (char& c : *text) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>('a' + x % 26);
    }
  }
  return frame;
}

// The encoding byte of the file's second chunk (the first is the header).
int SecondChunkEncoding(const std::string& path, std::uint32_t first_payload) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(
      static_cast<std::streamoff>(sizeof(trace_format::kMagic) + trace_format::kChunkHeaderBytes + first_payload + 8));
  return in.get();
}

// At the reader's ratio-free limit (16 MiB), one byte under and one over, compressible and random:
// the writer stores what the reader would refuse raw, and every frame reads back.
TEST(TraceWriter, NoFrameItWritesPassesTheReadersLimit) {
  constexpr std::size_t kLimit = trace_format::kSmallMessageBytes;
  for (const bool random : {false, true}) {
    for (const std::size_t size : {kLimit - 1, kLimit, kLimit + 1, 3 * kLimit}) {
      SCOPED_TRACE((random ? "random, " : "compressible, ") + std::to_string(size) + " bytes");
      TempDir dir;
      const std::string path = dir.File("big.smprof");
      std::unique_ptr<TraceWriter> writer;
      ASSERT_TRUE(TraceWriter::Create(path, 3, &writer).ok());
      trace::FileHeader header;
      header.set_format_version(1);
      ASSERT_TRUE(writer->Append(trace_format::kHeaderTag, header).ok());
      const std::uint64_t header_bytes = writer->bytes_written();
      const trace::Frame frame = FrameOfSize(size, random);
      ASSERT_EQ(frame.ByteSizeLong(), size);
      ASSERT_TRUE(writer->Append(trace_format::kFrameTag, frame).ok());
      trace::Footer footer;
      footer.set_frames_written(1);
      ASSERT_TRUE(writer->Append(trace_format::kFooterTag, footer).ok());
      ASSERT_TRUE(writer->Close().ok());
      std::uint32_t header_payload = 0;
      {
        std::ifstream in(path, std::ios::binary);
        in.seekg(static_cast<std::streamoff>(sizeof(trace_format::kMagic) + 4));
        unsigned char length[4];
        in.read(reinterpret_cast<char*>(length), 4);
        header_payload = length[0] | length[1] << 8 | length[2] << 16 | static_cast<std::uint32_t>(length[3]) << 24;
      }
      ASSERT_EQ(header_bytes, sizeof(trace_format::kMagic) + trace_format::kChunkHeaderBytes + header_payload);
      const bool raw = !random && size > kLimit;  // only repetitive content past 16 MiB passes 1024:1
      EXPECT_EQ(SecondChunkEncoding(path, header_payload), raw ? 0 : 1);
      const TraceFileContents read = ReadTraceFile(path);
      ASSERT_TRUE(read.open_status.ok()) << read.open_status.message();
      EXPECT_TRUE(read.problem.empty()) << read.problem;
      ASSERT_EQ(read.frames.size(), 1u);
      EXPECT_EQ(read.frames[0].strings(0), frame.strings(0));
    }
  }
}

TEST(Crc32, IsTheStandardCrc32AtEveryLengthAndAlignment) {
  EXPECT_EQ(trace_format::Crc32("123456789", 9), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(trace_format::Crc32("", 0), 0u);
  // Against the bitwise definition, for lengths around the 8-byte step at every start offset.
  const auto bitwise = [](const unsigned char* bytes, std::size_t size) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < size; ++i) {
      c ^= bytes[i];
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
  };
  std::vector<unsigned char> bytes(100);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t size = 0; size + offset <= bytes.size(); ++size) {
      ASSERT_EQ(trace_format::Crc32(bytes.data() + offset, size), bitwise(bytes.data() + offset, size))
          << "offset " << offset << " size " << size;
    }
  }
}

TEST(TraceWriter, NeverOverwritesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.File("taken.smprof");
  std::ofstream(path) << "precious";
  std::unique_ptr<TraceWriter> writer;
  const Status status = TraceWriter::Create(path, 3, &writer);
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

TEST(TraceWriter, MissingDirectoryIsAnIoErrorNamingThePath) {
  TempDir dir;
  std::unique_ptr<TraceWriter> writer;
  const std::string path = dir.File("no/such/dir/t.smprof");
  const Status status = TraceWriter::Create(path, 3, &writer);
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
}

// The session under test: each step is "step" > "forward" > "matmul" (RAII,
// depths 0-2) then handles "data" > "decode" > scope "inside-handles"
// (depths 1-3, nested under "step").
constexpr int kSteps = 25;
const std::map<std::string, std::uint32_t> kDepthOf = {{"step", 0}, {"forward", 1}, {"matmul", 2},
                                                       {"data", 1}, {"decode", 2},  {"inside-handles", 3}};

class SessionRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(SessionRoundTrip, RangesComeBackWithNamesDepthsAndMeasuredTimes) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "roundtrip_%s.smprof");
  config.Set("Compression", GetParam());
  const std::int64_t before_start = NowNs();
  ASSERT_TRUE(Start(config).ok());
  ASSERT_TRUE(IsProfiling());

  std::vector<std::pair<std::int64_t, std::int64_t>> step_windows;
  for (int step = 0; step < kSteps; ++step) {
    const std::int64_t t0 = NowNs();
    {
      SMPROF_ANNOTATE("step");
      {
        SMPROF_ANNOTATE("forward");
        { SMPROF_ANNOTATE("matmul"); }
      }
      const AnnotationHandle data = AnnotationBegin("data");
      const AnnotationHandle decode = AnnotationBegin("decode");
      { SMPROF_ANNOTATE("inside-handles"); }
      EXPECT_EQ(AnnotationEnd(decode), EndResult::kOk);
      EXPECT_EQ(AnnotationEnd(data), EndResult::kOk);
    }
    step_windows.emplace_back(t0, NowNs());
  }
  const AnnotationHandle left_open = AnnotationBegin("left-open");
  ASSERT_NE(left_open, 0u);
  const std::int64_t before_stop = NowNs();
  ASSERT_TRUE(Stop().ok());
  EXPECT_FALSE(IsProfiling());

  const SessionStats stats = LastSessionStats();
  const TraceFileContents trace = ReadTraceFile(stats.path);
  ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
  EXPECT_TRUE(trace.problem.empty()) << trace.problem;
  EXPECT_TRUE(trace.decode_error.empty()) << trace.decode_error;

  // Header.
  EXPECT_EQ(trace.header.format_version(), 1u);
  EXPECT_EQ(trace.header.library_version(), Version());
  EXPECT_EQ(trace.header.pid(), getpid());
  EXPECT_EQ(trace.header.config().at("RecordFile"), config.values.at("RecordFile"));
  EXPECT_EQ(trace.header.config().at("Compression"), GetParam());
  for (const std::string& key : ConfigKeys()) EXPECT_EQ(trace.header.config().count(key), 1u) << key;
  ASSERT_GE(trace.header.collectors_size(), 1);
  EXPECT_EQ(trace.header.collectors(0).name(), "annotations");
  EXPECT_TRUE(trace.header.collectors(0).active());
  EXPECT_GE(trace.header.start().monotonic_ns(), before_start);
  EXPECT_GT(trace.header.start().realtime_ns(), 0);

  // Ranges: exact counts, names, depths, thread, and times.
  const auto tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  std::map<std::string, std::vector<DecodedRange>> by_name;
  for (const DecodedRange& r : trace.ranges) by_name[r.name].push_back(r);
  ASSERT_EQ(trace.ranges.size(), kDepthOf.size() * kSteps);
  EXPECT_EQ(by_name.count("left-open"), 0u) << "a range still open at stop is not recorded";
  for (const auto& [name, depth] : kDepthOf) {
    ASSERT_EQ(by_name[name].size(), static_cast<std::size_t>(kSteps)) << name;
    for (const DecodedRange& r : by_name[name]) {
      EXPECT_EQ(r.depth, depth) << name;
      EXPECT_EQ(r.tid, tid) << name;
      EXPECT_GE(r.dur_ns, 0) << name;
      EXPECT_GE(r.start_ns, before_start) << name;
      EXPECT_LE(r.end_ns(), before_stop) << name;
    }
  }
  for (int step = 0; step < kSteps; ++step) {
    const auto [t0, t1] = step_windows[step];
    SCOPED_TRACE("step " + std::to_string(step));
    const DecodedRange& outer = by_name["step"][step];
    EXPECT_GE(outer.start_ns, t0);
    EXPECT_LE(outer.end_ns(), t1);
    EXPECT_LE(outer.dur_ns, t1 - t0);
    // Every inner range of this step lies inside it, and inside its parent.
    const DecodedRange* parent_of[] = {&outer, &by_name["forward"][step], &by_name["data"][step],
                                       &by_name["decode"][step]};
    const DecodedRange* child_of[] = {&by_name["forward"][step], &by_name["matmul"][step], &by_name["decode"][step],
                                      &by_name["inside-handles"][step]};
    for (int i = 0; i < 4; ++i) {
      EXPECT_GE(child_of[i]->start_ns, parent_of[i]->start_ns) << child_of[i]->name;
      EXPECT_LE(child_of[i]->end_ns(), parent_of[i]->end_ns()) << child_of[i]->name;
    }
    EXPECT_GE(by_name["data"][step].start_ns, by_name["forward"][step].end_ns());
  }

  // Footer and stats agree with what was read.
  ASSERT_TRUE(trace.has_footer);
  EXPECT_EQ(trace.footer.annotations_written(), trace.ranges.size());
  EXPECT_EQ(trace.footer.annotations_dropped(), 0u);
  EXPECT_EQ(trace.footer.frames_written(), trace.frames.size());
  EXPECT_EQ(trace.footer.open_ranges_at_stop(), 1u);
  EXPECT_GE(trace.footer.stop().monotonic_ns(), before_stop);
  for (std::size_t i = 0; i < trace.frames.size(); ++i) EXPECT_EQ(trace.frames[i].sequence(), i);
  EXPECT_EQ(stats.annotations_written, trace.ranges.size());
  EXPECT_EQ(stats.annotations_dropped, 0u);
  EXPECT_EQ(stats.frames_written, trace.frames.size());
  EXPECT_EQ(stats.bytes_written, std::filesystem::file_size(stats.path));
  EXPECT_EQ(stats.path.rfind(dir.path(), 0), 0u) << stats.path;
}

INSTANTIATE_TEST_SUITE_P(Compression, SessionRoundTrip, ::testing::Values("zstd", "none", "19"));

}  // namespace
}  // namespace smprof

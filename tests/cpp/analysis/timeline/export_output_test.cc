// ExportOutput's segments and parts: a file assembled from parts written
// elsewhere is the same bytes as the file written in one piece, across the
// 1 MiB flush inside a segment, and a gzip file is one gzip member that any
// reader inflates to what was written. MachineCounterLog round-trips its
// series and samples and refuses a file that is not one.
#include "analysis/timeline/export_output.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "analysis/timeline/machine_counter_log.h"
#include "support/temp_dir.h"

namespace smprof::analysis {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Segments of pseudo-random text: repetitive enough to compress, different
// from one another; the third crosses the 1 MiB flush twice.
std::vector<std::string> Segments() {
  std::mt19937 random(7);
  std::vector<std::string> segments;
  for (std::size_t size : {100u, 0u, 2'500'000u, 70'000u, 1u}) {
    std::string s;
    while (s.size() < size) s += "{\"name\":\"kernel_" + std::to_string(random() % 500) + "\"},\n";
    s.resize(size);
    segments.push_back(s);
  }
  return segments;
}

// Writes `segments` in pieces of at most 300 KB each, ending the segment after each.
void WriteSegments(ExportOutput* out, const std::vector<std::string>& segments) {
  for (const std::string& s : segments) {
    for (std::size_t at = 0; at < s.size(); at += 300'000) out->Write(std::string_view(s).substr(at, 300'000));
    out->EndSegment();
  }
}

// Inflates `data` as one gzip member; `rest` gets what follows it.
std::string Gunzip(const std::string& data, std::string* rest) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string text;
  std::vector<char> buffer(1 << 16);
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer.data());
    z.avail_out = static_cast<uInt>(buffer.size());
    status = inflate(&z, Z_NO_FLUSH);
    text.append(buffer.data(), buffer.size() - z.avail_out);
  }
  EXPECT_EQ(status, Z_STREAM_END);
  rest->assign(reinterpret_cast<const char*>(z.next_in), z.avail_in);
  inflateEnd(&z);
  return text;
}

class ExportOutputTest : public ::testing::TestWithParam<bool> {};

TEST_P(ExportOutputTest, PartsGiveTheBytesOfOneFile) {
  const bool gzip = GetParam();
  testing::TempDir dir;
  const std::vector<std::string> segments = Segments();
  std::string all;
  for (const std::string& s : segments) all += s;

  std::unique_ptr<ExportOutput> whole;
  ASSERT_TRUE(ExportOutput::Open(dir.File("whole"), gzip, &whole).ok());
  whole->Write("prologue");
  whole->EndSegment();  // what AppendPart does before the part
  WriteSegments(whole.get(), segments);
  whole->Write("epilogue");
  ASSERT_TRUE(whole->Close().ok());
  const std::string expected = ReadAll(dir.File("whole"));
  EXPECT_EQ(whole->file_bytes(), expected.size());

  // Parts of 2 and 3 segments, and an empty one.
  const std::vector<std::vector<std::string>> parts = {
      {segments[0], segments[1]}, {}, {segments[2], segments[3], segments[4]}};
  std::unique_ptr<ExportOutput> assembled;
  ASSERT_TRUE(ExportOutput::Open(dir.File("assembled"), gzip, &assembled).ok());
  assembled->Write("prologue");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::unique_ptr<ExportOutput> part;
    const std::string path = dir.File("part" + std::to_string(i));
    ASSERT_TRUE(ExportOutput::OpenPart(path, gzip, &part).ok());
    WriteSegments(part.get(), parts[i]);
    ASSERT_TRUE(part->Close().ok());
    assembled->AppendPart(path);
  }
  assembled->Write("epilogue");
  ASSERT_TRUE(assembled->Close().ok());
  EXPECT_TRUE(ReadAll(dir.File("assembled")) == expected) << "the assembled file differs";

  if (gzip) {
    std::string rest;
    EXPECT_EQ(Gunzip(expected, &rest), "prologue" + all + "epilogue");
    EXPECT_EQ(rest, "");  // one member: what Perfetto's reader reads to the end
    EXPECT_LT(expected.size(), all.size() / 3);
  } else {
    EXPECT_EQ(expected, "prologue" + all + "epilogue");
  }
}

TEST_P(ExportOutputTest, AMissingOrDamagedPartIsAnError) {
  testing::TempDir dir;
  std::unique_ptr<ExportOutput> out;
  ASSERT_TRUE(ExportOutput::Open(dir.File("out"), GetParam(), &out).ok());
  out->AppendPart(dir.File("missing"));
  const Status status = out->Close();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("missing"), std::string::npos) << status.message();

  std::ofstream(dir.File("short")) << "abc";
  ASSERT_TRUE(ExportOutput::Open(dir.File("out2"), GetParam(), &out).ok());
  out->AppendPart(dir.File("short"));
  EXPECT_NE(out->Close().message().find("not a part"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, ExportOutputTest, ::testing::Bool());

TEST(MachineCounterLogTest, RoundTripsSeriesAndSamplesInOrder) {
  testing::TempDir dir;
  std::unique_ptr<MachineCounterLog> log;
  ASSERT_TRUE(MachineCounterLog::Create(dir.File("log"), &log).ok());
  const std::uint32_t cpu0 = log->Series(3, 1, "cpu0.utilization", "percent");
  const std::uint32_t other_rank = log->Series(4, 1, "cpu0.utilization", "percent");
  EXPECT_EQ(log->Series(3, 1, "cpu0.utilization", "percent"), cpu0);
  EXPECT_NE(other_rank, cpu0);
  for (int i = 0; i < 20'000; ++i) log->Add(i % 3 ? cpu0 : other_rank, 1'000 + i, i * 0.5);
  ASSERT_TRUE(log->Close().ok());

  std::vector<MachineCounterSeries> series;
  std::vector<std::int64_t> times;
  ASSERT_TRUE(ReadMachineCounterLog(dir.File("log"), &series, [&](std::uint32_t s, std::int64_t t, double v) {
                EXPECT_EQ(s, (t - 1'000) % 3 ? cpu0 : other_rank);
                EXPECT_EQ(v, (t - 1'000) * 0.5);
                times.push_back(t);
              }).ok());
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[other_rank].process, 4u);
  EXPECT_EQ(series[cpu0].host_process, 1u);
  EXPECT_EQ(series[cpu0].name, "cpu0.utilization");
  EXPECT_EQ(series[cpu0].unit, "percent");
  ASSERT_EQ(times.size(), 20'000u);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));

  std::ofstream(dir.File("junk")) << std::string(40, 'x');
  EXPECT_FALSE(ReadMachineCounterLog(dir.File("junk"), &series, nullptr).ok());
  EXPECT_FALSE(ReadMachineCounterLog(dir.File("absent"), &series, nullptr).ok());
}

}  // namespace
}  // namespace smprof::analysis

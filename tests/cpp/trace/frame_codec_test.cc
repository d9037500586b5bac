// FrameBuilder -> Frame -> DecodeAnnotations: records come back exactly
// (sorted by start time, ties in insertion order) with their names, thread
// ids and depths; names and threads are interned once per frame; the frame
// survives protobuf serialization; a frame's strings stay within their
// budget; malformed frames are rejected by name.
#include "trace/frame_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/counter_buffer.h"

namespace smprof::internal {
namespace {

const std::map<NameId, std::string> kNames = {{1, "forward"}, {2, "backward"}, {3, "optimizer"}, {7, "data"}};

FrameBuilder MakeBuilder() {
  return FrameBuilder([](NameId id) { return kNames.at(id); },
                      [](std::uint32_t tid) { return "thread-" + std::to_string(tid); });
}

AnnotationRecord Rec(std::int64_t start, std::int64_t dur, NameId name, std::uint32_t tid, std::uint16_t depth) {
  return AnnotationRecord{start, dur, name, tid, depth, 0, 0};
}

std::vector<AnnotationRow> Decode(const trace::Frame& frame) {
  std::vector<AnnotationRow> rows;
  const Status status = DecodeAnnotations(frame, &rows);
  EXPECT_TRUE(status.ok()) << status.message();
  return rows;
}

TEST(FrameCodec, AFramesStringsStayWithinTheirBudgetTheRestWaits) {
  // 1,000 distinct names of 16 KiB (the name table's limit): 16 MB, four frames' worth.
  constexpr int kRecords = 1000;
  constexpr std::size_t kNameBytes = 16 << 10;
  FrameBuilder builder([](NameId id) { return std::to_string(id) + std::string(kNameBytes - 8, 'n'); },
                       [](std::uint32_t) { return std::string("t"); });
  std::vector<AnnotationRecord> records;
  for (int i = 0; i < kRecords; ++i) records.push_back(Rec(i * 10, 5, static_cast<NameId>(i + 1), 1, 0));
  builder.Add(records.data(), records.size());
  std::vector<std::int64_t> starts;
  int frames = 0;
  while (builder.size() > 0) {
    trace::Frame frame;
    builder.Build(frames++, &frame);
    std::size_t bytes = 0;
    for (const std::string& s : frame.strings()) bytes += s.size();
    EXPECT_LT(bytes, FrameTables::kStringBudgetBytes + kNameBytes);
    for (const AnnotationRow& row : Decode(frame)) starts.push_back(row.start_ns);
  }
  EXPECT_EQ(frames, static_cast<int>((kRecords * (kNameBytes - 8 + 3) + FrameTables::kStringBudgetBytes - 1) /
                                     FrameTables::kStringBudgetBytes));
  ASSERT_EQ(starts.size(), static_cast<std::size_t>(kRecords));
  for (int i = 0; i < kRecords; ++i) EXPECT_EQ(starts[i], i * 10) << "every record once, in order";
}

TEST(FrameCodec, RoundTripGivesBackEveryRecordSortedByStart) {
  const std::vector<AnnotationRecord> records = {
      Rec(5000, 100, 1, 11, 0), Rec(1000, 50, 2, 12, 1),  Rec(3000, 0, 3, 11, 2),
      Rec(1000, 10, 7, 13, 0),  Rec(9000, 999, 1, 12, 3), Rec(2000, 1, 2, 11, 65535),
  };
  FrameBuilder builder = MakeBuilder();
  builder.Add(records.data(), 2);
  builder.Add(records.data() + 2, records.size() - 2);
  EXPECT_EQ(builder.size(), records.size());

  trace::Frame frame;
  builder.Build(42, &frame);
  EXPECT_EQ(builder.size(), 0u) << "Build consumes the pending records";
  EXPECT_EQ(frame.sequence(), 42u);

  std::vector<AnnotationRecord> expected = records;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const AnnotationRecord& a, const AnnotationRecord& b) { return a.start_ns < b.start_ns; });
  const std::vector<AnnotationRow> rows = Decode(frame);
  ASSERT_EQ(rows.size(), expected.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_EQ(rows[i].start_ns, expected[i].start_ns);
    EXPECT_EQ(rows[i].dur_ns, expected[i].dur_ns);
    EXPECT_EQ(rows[i].name, kNames.at(expected[i].name));
    EXPECT_EQ(rows[i].tid, expected[i].tid);
    EXPECT_EQ(rows[i].depth, expected[i].depth);
  }
  // Ties keep insertion order: "backward" (tid 12) was added before "data".
  EXPECT_EQ(rows[0].name, "backward");
  EXPECT_EQ(rows[1].name, "data");
}

TEST(FrameCodec, LimitTakesTheOldestRecordsAndKeepsTheRest) {
  const std::vector<AnnotationRecord> records = {
      Rec(5000, 1, 1, 11, 0), Rec(1000, 1, 2, 11, 0), Rec(3000, 1, 3, 11, 0),
      Rec(2000, 1, 7, 11, 0), Rec(4000, 1, 1, 11, 0),
  };
  FrameBuilder builder = MakeBuilder();
  builder.Add(records.data(), records.size());

  trace::Frame first;
  builder.Build(0, &first, 3);
  EXPECT_EQ(builder.size(), 2u);
  std::vector<std::int64_t> starts;
  for (const AnnotationRow& row : Decode(first)) starts.push_back(row.start_ns);
  EXPECT_EQ(starts, (std::vector<std::int64_t>{1000, 3000, 5000})) << "the first three added, sorted";

  trace::Frame second;
  builder.Build(1, &second, 3);
  EXPECT_EQ(builder.size(), 0u);
  starts.clear();
  for (const AnnotationRow& row : Decode(second)) starts.push_back(row.start_ns);
  EXPECT_EQ(starts, (std::vector<std::int64_t>{2000, 4000}));
}

TEST(FrameCodec, NamesAndThreadsAreStoredOncePerFrame) {
  FrameBuilder builder = MakeBuilder();
  std::vector<AnnotationRecord> records;
  for (int i = 0; i < 300; ++i) records.push_back(Rec(i * 10, 5, (i % 2) ? 1 : 2, 100 + i % 3, 0));
  builder.Add(records.data(), records.size());
  trace::Frame frame;
  builder.Build(0, &frame);

  ASSERT_EQ(frame.strings_size(), 2);
  EXPECT_EQ(frame.strings(0), "backward") << "tables are in order of first use";
  EXPECT_EQ(frame.strings(1), "forward");
  ASSERT_EQ(frame.threads_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(frame.threads(i).tid(), 100u + i);
    EXPECT_EQ(frame.threads(i).name(), "thread-" + std::to_string(100 + i));
  }
  const trace::Annotations& columns = frame.annotations();
  EXPECT_EQ(columns.base_ns(), 0);
  ASSERT_EQ(columns.start_delta_ns_size(), 300);
  EXPECT_EQ(columns.start_delta_ns(0), 0);
  for (int i = 1; i < 300; ++i) ASSERT_EQ(columns.start_delta_ns(i), 10) << "start times are delta-encoded";
}

TEST(FrameCodec, SurvivesSerializationWithLargeAndNegativeTimes) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 4;
  const std::vector<AnnotationRecord> records = {Rec(-5000, 10, 1, 1, 0), Rec(big, 1, 2, 2, 1), Rec(0, big, 3, 3, 2)};
  FrameBuilder builder = MakeBuilder();
  builder.Add(records.data(), records.size());
  trace::Frame built;
  builder.Build(7, &built);

  std::string bytes;
  ASSERT_TRUE(built.SerializeToString(&bytes));
  trace::Frame parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  const std::vector<AnnotationRow> rows = Decode(parsed);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].start_ns, -5000);
  EXPECT_EQ(rows[1].start_ns, 0);
  EXPECT_EQ(rows[1].dur_ns, big);
  EXPECT_EQ(rows[2].start_ns, big);
  EXPECT_EQ(parsed.sequence(), 7u);
}

TEST(FrameCodec, NegativeDurationIsStoredAsZero) {
  const AnnotationRecord record = Rec(100, -40, 1, 1, 0);
  FrameBuilder builder = MakeBuilder();
  builder.Add(&record, 1);
  trace::Frame frame;
  builder.Build(0, &frame);
  const std::vector<AnnotationRow> rows = Decode(frame);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].dur_ns, 0);
}

TEST(FrameCodec, EmptyBuilderMakesAnEmptyFrameAndReusesCleanly) {
  FrameBuilder builder = MakeBuilder();
  trace::Frame frame;
  builder.Build(0, &frame);
  EXPECT_TRUE(Decode(frame).empty());

  const AnnotationRecord first = Rec(10, 1, 1, 1, 0);
  builder.Add(&first, 1);
  builder.Build(1, &frame);
  const AnnotationRecord second = Rec(20, 2, 2, 2, 1);
  builder.Add(&second, 1);
  builder.Build(2, &frame);  // Build clears the previous contents of `frame`
  const std::vector<AnnotationRow> rows = Decode(frame);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "backward");
  EXPECT_EQ(frame.strings_size(), 1);
  EXPECT_EQ(frame.threads_size(), 1);
}

TEST(FrameCodec, DecodeAppendsToExistingRows) {
  FrameBuilder builder = MakeBuilder();
  const AnnotationRecord record = Rec(10, 1, 1, 1, 0);
  builder.Add(&record, 1);
  trace::Frame frame;
  builder.Build(0, &frame);
  std::vector<AnnotationRow> rows;
  ASSERT_TRUE(DecodeAnnotations(frame, &rows).ok());
  ASSERT_TRUE(DecodeAnnotations(frame, &rows).ok());
  EXPECT_EQ(rows.size(), 2u);
}

class MalformedFrame : public ::testing::Test {
 protected:
  void SetUp() override {
    FrameBuilder builder = MakeBuilder();
    const std::vector<AnnotationRecord> records = {Rec(1, 1, 1, 1, 0), Rec(2, 1, 2, 2, 0)};
    builder.Add(records.data(), records.size());
    builder.Build(9, &frame_);
  }
  std::string DecodeError() {
    std::vector<AnnotationRow> rows;
    const Status status = DecodeAnnotations(frame_, &rows);
    EXPECT_FALSE(status.ok());
    return status.message();
  }
  trace::Frame frame_;
};

TEST_F(MalformedFrame, ColumnsOfDifferentLengthsAreRejected) {
  frame_.mutable_annotations()->add_depth(0);
  const std::string message = DecodeError();
  EXPECT_NE(message.find("columns of different lengths"), std::string::npos) << message;
  EXPECT_NE(message.find("frame 9"), std::string::npos) << message;
}

TEST_F(MalformedFrame, NameIndexOutOfRangeIsRejected) {
  frame_.mutable_annotations()->set_name_index(1, 2);
  EXPECT_NE(DecodeError().find("name_index out of range"), std::string::npos);
}

TEST_F(MalformedFrame, ThreadIndexOutOfRangeIsRejected) {
  frame_.mutable_annotations()->set_thread_index(0, 99);
  EXPECT_NE(DecodeError().find("thread_index out of range"), std::string::npos);
}

}  // namespace
}  // namespace smprof::internal

namespace smprof::internal {
namespace {

TEST(CounterCodec, SeriesRoundTripAtTheirResolution) {
  CounterBuffer buffer(100);
  const std::uint32_t util = buffer.Track("cpu0.utilization", "percent", 0.01);
  const std::uint32_t rss = buffer.Track("process.rss_bytes", "bytes", 1);
  EXPECT_EQ(buffer.Track("cpu0.utilization", "percent", 0.01), util) << "a name registers once";
  buffer.Add(util, 2000, 12.345);  // out of time order, interleaved tracks
  buffer.Add(rss, 1000, 4096.0);
  buffer.Add(util, 1000, 99.99);
  buffer.Add(rss, 2000, 1e12);
  buffer.Add(util, 3000, 0.0);
  std::vector<CounterSample> samples;
  EXPECT_EQ(buffer.Take(&samples), 0u);

  trace::Frame frame;
  EncodeCounters(
      samples, [&buffer](std::uint32_t t) { return buffer.TrackInfo(t); }, &frame);
  trace::Frame parsed;
  ASSERT_TRUE(parsed.ParseFromString(frame.SerializeAsString()));
  std::vector<CounterRow> rows;
  ASSERT_TRUE(DecodeCounters(parsed, &rows).ok());
  ASSERT_EQ(rows.size(), 5u);
  std::vector<std::tuple<std::string, std::int64_t, double>> got;
  for (const CounterRow& r : rows) got.emplace_back(std::string(r.name), r.ts_ns, r.value);
  const std::vector<std::tuple<std::string, std::int64_t, double>> want = {{"cpu0.utilization", 1000, 99.99},
                                                                           {"cpu0.utilization", 2000, 12.35},
                                                                           {"cpu0.utilization", 3000, 0.0},
                                                                           {"process.rss_bytes", 1000, 4096.0},
                                                                           {"process.rss_bytes", 2000, 1e12}};
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::get<0>(got[i]), std::get<0>(want[i]));
    EXPECT_EQ(std::get<1>(got[i]), std::get<1>(want[i]));
    EXPECT_NEAR(std::get<2>(got[i]), std::get<2>(want[i]), 1e-9) << "values keep their resolution";
  }
  EXPECT_EQ(rows[0].unit, "percent");
  EXPECT_EQ(rows[3].unit, "bytes");
}

TEST(CounterCodec, BufferDropsPastItsBoundAndCounts) {
  CounterBuffer buffer(2);
  const std::uint32_t t = buffer.Track("x", "count", 1);
  for (int i = 0; i < 5; ++i) buffer.Add(t, i, i);
  std::vector<CounterSample> samples;
  EXPECT_EQ(buffer.Take(&samples), 3u);
  EXPECT_EQ(samples.size(), 2u);
  EXPECT_EQ(buffer.Take(&samples), 0u) << "the drop count resets when taken";
}

TEST(CounterCodec, MalformedSeriesIsRejected) {
  trace::Frame frame;
  frame.add_counter_tracks()->set_name("x");
  trace::CounterSeries* series = frame.add_counters();
  series->set_track_index(3);
  std::vector<CounterRow> rows;
  EXPECT_FALSE(DecodeCounters(frame, &rows).ok());
  series->set_track_index(0);
  series->add_ts_delta_ns(1);
  EXPECT_FALSE(DecodeCounters(frame, &rows).ok()) << "columns of different lengths";
}

}  // namespace
}  // namespace smprof::internal

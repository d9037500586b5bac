// The collectives' codec and CollectiveMetrics on hand-made frames: rows come
// back from the frame exactly (through protobuf and through FrameRows), a
// malformed table is refused by name; instances are matched by (group,
// sequence) across ranks on each file's wall clock, each rank's wait and last
// arrivals follow, an instance a rank is missing from stays unmatched,
// point-to-point calls are counted but never matched, bytes that differ are
// listed; two partial states saved and merged write what one state of every
// stream writes, in either order of the streams.
#include "analysis/summary/collective_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/collective_codec.h"

namespace smprof::analysis {
namespace {

using internal::CollectiveRecord;
using internal::CollectiveRow;
using internal::FrameTables;

CollectiveRecord Call(std::int64_t start, const std::string& op, std::uint64_t sequence, std::uint32_t group_rank,
                      std::uint64_t bytes = 64) {
  CollectiveRecord r;
  r.start_ns = start;
  r.call_dur_ns = 50;
  r.tid = 7 + group_rank;
  r.op = op;
  r.group = "0";
  r.group_size = 2;
  r.group_rank = group_rank;
  r.sequence = sequence;
  r.bytes = bytes;
  r.dtype = "float32";
  r.async_op = true;
  return r;
}

trace::Frame Encode(std::vector<CollectiveRecord> records) {
  trace::Frame frame;
  FrameTables tables([](NameId) { return std::string(); }, [](std::uint32_t tid) { return "t" + std::to_string(tid); });
  tables.Reset(&frame);
  internal::EncodeCollectives(std::move(records), &tables, &frame);
  return frame;
}

TEST(CollectiveCodec, RowsComeBackInStartOrderThroughProtobufAndFrameRows) {
  trace::Frame frame = Encode({Call(300, "allreduce_", 2, 0, 8), Call(100, "broadcast_", 1, 0, 16)});
  trace::Frame parsed;
  ASSERT_TRUE(parsed.ParseFromString(frame.SerializeAsString()));
  std::vector<CollectiveRow> rows;
  ASSERT_TRUE(internal::DecodeCollectives(parsed, &rows).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].start_ns, 100);
  EXPECT_EQ(rows[0].op, "broadcast_");
  EXPECT_EQ(rows[0].bytes, 16u);
  EXPECT_EQ(rows[1].start_ns, 300);
  EXPECT_EQ(rows[1].op, "allreduce_");
  EXPECT_EQ(rows[1].group, "0");
  EXPECT_EQ(rows[1].group_size, 2u);
  EXPECT_EQ(rows[1].sequence, 2u);
  EXPECT_EQ(rows[1].dtype, "float32");
  EXPECT_TRUE(rows[1].async_op);
  EXPECT_EQ(rows[1].tid, 7u);
  EXPECT_EQ(rows[1].call_dur_ns, 50);

  const std::string bytes = frame.SerializeAsString();
  internal::FrameRows frame_rows;
  ASSERT_TRUE(frame_rows.Decode(bytes));
  std::vector<CollectiveRow> from_rows;
  ASSERT_TRUE(internal::DecodeCollectives(frame_rows, &from_rows).ok());
  ASSERT_EQ(from_rows.size(), 2u);
  EXPECT_EQ(from_rows[1].op, "allreduce_");
  EXPECT_EQ(from_rows[1].tid, 7u);
}

TEST(CollectiveCodec, AMalformedTableIsRefusedByName) {
  trace::Frame frame = Encode({Call(100, "allreduce_", 1, 0)});
  frame.mutable_collectives()->add_bytes(1);
  std::vector<CollectiveRow> rows;
  EXPECT_NE(internal::DecodeCollectives(frame, &rows).message().find("columns of different lengths"),
            std::string::npos);
  frame = Encode({Call(100, "allreduce_", 1, 0)});
  frame.mutable_collectives()->set_op_index(0, 99);
  EXPECT_NE(internal::DecodeCollectives(frame, &rows).message().find("string index out of range"), std::string::npos);
  frame = Encode({Call(100, "allreduce_", 1, 0)});
  frame.mutable_collectives()->set_thread_index(0, 5);
  EXPECT_NE(internal::DecodeCollectives(frame, &rows).message().find("thread_index out of range"), std::string::npos);
}

// One stream per rank, its calls in one frame; `offset` is its file's monotonic-to-wall offset.
struct RankCalls {
  std::int32_t rank;
  std::int64_t offset;
  std::vector<CollectiveRecord> calls;
};

void AddStream(CollectiveMetrics& metrics, const RankCalls& r) {
  ProcessStream stream;
  stream.host = "h";
  stream.rank = r.rank;
  stream.pid = 100 + r.rank;
  TraceFileEntry file;
  file.wall_offset_ns = r.offset;
  metrics.BeginStream(stream);
  const std::string bytes = Encode(r.calls).SerializeAsString();
  internal::FrameRows rows;
  ASSERT_TRUE(rows.Decode(bytes));
  std::string error;
  ASSERT_TRUE(metrics.AddFrame(file, rows, &error)) << error;
}

std::string Written(const CollectiveMetrics& metrics) {
  JsonWriter out;
  metrics.Write(out);
  return out.text();
}

// Rank 1 arrives 30 ns late at instances 1 and 2 (its clock is 1,000 ns behind: the offsets align
// them), rank 0 is missing from instance 3, rank 0's bytes differ at 2, and a send is never matched.
std::vector<RankCalls> Job() {
  return {{0, 0, {Call(100, "allreduce_", 1, 0), Call(200, "allreduce_", 2, 0, 32), Call(250, "send", 9, 0)}},
          {1, 1000, {Call(-870, "allreduce_", 1, 1), Call(-770, "allreduce_", 2, 1), Call(-700, "allreduce_", 3, 1)}}};
}

TEST(CollectiveMetrics, InstancesMatchAcrossRanksOnTheWallClock) {
  CollectiveMetrics metrics;
  for (const RankCalls& r : Job()) AddStream(metrics, r);
  const std::string json = Written(metrics);
  EXPECT_NE(json.find("\"calls\":6,\"point_to_point_calls\":1,\"dropped\":0,\"instances\":3,"
                      "\"instances_matched\":2,\"calls_not_matched\":0"),
            std::string::npos)
      << json;
  // Rank 0 waits 30 ns at each of the two matched instances; rank 1 arrives last at both.
  EXPECT_NE(json.find("\"rank\":0,\"pid\":100,\"calls\":3,\"instances_matched\":2,\"wait_ns\":60,"
                      "\"last_arrivals\":0,\"late_by_ns\":0"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"rank\":1,\"pid\":101,\"calls\":3,\"instances_matched\":2,\"wait_ns\":0,"
                      "\"last_arrivals\":2,\"late_by_ns\":60"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"op\":\"allreduce_\",\"group\":\"0\",\"group_size\":2,\"dtype\":\"float32\","
                      "\"point_to_point\":false,\"calls\":5,\"bytes\":288"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"instances_bytes_differ\":1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"sequence\":2,\"bytes_min\":32,\"rank_min\":0,\"bytes_max\":64,\"rank_max\":1"),
            std::string::npos)
      << json;
}

TEST(CollectiveMetrics, SavedAndMergedPartsWriteWhatOneStateWrites) {
  const std::vector<RankCalls> job = Job();
  CollectiveMetrics whole;
  for (const RankCalls& r : job) AddStream(whole, r);

  CollectiveMetrics first, second, merged;
  AddStream(first, job[1]);  // the second rank's part first: the streams are put back in order
  AddStream(second, job[0]);
  for (const CollectiveMetrics* part : {&first, &second}) {
    PartialEncoder out;
    part->Save(out);
    const std::string bytes = out.Take();
    PartialDecoder in(bytes);
    merged.MergeFrom(in);
  }
  merged.ReorderStreams({1, 0});
  EXPECT_EQ(Written(merged), Written(whole));
}

}  // namespace
}  // namespace smprof::analysis

// The collectives' codec and CollectiveMetrics on hand-made frames: rows come
// back from the frame exactly (through protobuf and through FrameRows), a
// malformed table is refused by name; instances are matched by (group,
// sequence) across ranks on each file's wall clock, each rank's wait and last
// arrivals follow, a call's Work.wait() is summed per op and rank, an
// instance a rank is missing from stays unmatched,
// point-to-point calls are counted but never matched, bytes that differ are
// listed; NCCL kernels link to the call of their launching thread that
// contains their launch, and instances whose every rank has one are matched
// again on the kernels' starts; two partial states saved and merged write
// what one state of every stream writes, in either order of the streams.
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

CollectiveRecord Waited(CollectiveRecord r, std::int64_t wait_start, std::int64_t wait_dur) {
  r.wait_start_ns = wait_start;
  r.wait_dur_ns = wait_dur;
  return r;
}

TEST(CollectiveCodec, RowsComeBackInStartOrderThroughProtobufAndFrameRows) {
  trace::Frame frame = Encode({Waited(Call(300, "allreduce_", 2, 0, 8), 400, 25), Call(100, "broadcast_", 1, 0, 16)});
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
  EXPECT_EQ(rows[1].wait_offset_ns, 100);  // its Work.wait() at 400, 100 ns after the call's start
  EXPECT_EQ(rows[1].wait_dur_ns, 25);
  EXPECT_EQ(rows[0].wait_offset_ns, 0);  // none recorded

  const std::string bytes = frame.SerializeAsString();
  internal::FrameRows frame_rows;
  ASSERT_TRUE(frame_rows.Decode(bytes));
  std::vector<CollectiveRow> from_rows;
  ASSERT_TRUE(internal::DecodeCollectives(frame_rows, &from_rows).ok());
  ASSERT_EQ(from_rows.size(), 2u);
  EXPECT_EQ(from_rows[1].op, "allreduce_");
  EXPECT_EQ(from_rows[1].tid, 7u);
  EXPECT_EQ(from_rows[1].wait_dur_ns, 25);

  // A frame without any wait has no wait columns.
  EXPECT_EQ(Encode({Call(100, "broadcast_", 1, 0)}).collectives().wait_offset_ns_size(), 0);
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
  frame = Encode({Waited(Call(100, "allreduce_", 1, 0), 200, 5)});
  frame.mutable_collectives()->add_wait_dur_ns(1);
  EXPECT_NE(internal::DecodeCollectives(frame, &rows).message().find("columns of different lengths"),
            std::string::npos);
  frame = Encode({Call(100, "allreduce_", 1, 0)});
  frame.mutable_collectives()->set_thread_index(0, 5);
  EXPECT_NE(internal::DecodeCollectives(frame, &rows).message().find("thread_index out of range"), std::string::npos);
}

// One stream per rank, its calls in one frame; `offset` is its file's monotonic-to-wall offset.
struct RankCalls {
  std::int32_t rank;
  std::int64_t offset;
  std::vector<CollectiveRecord> calls;
  std::vector<CommunicationLaunch> launches = {};
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
  metrics.AddCommunicationLaunches(r.launches);
  metrics.EndStream();
}

std::string Written(const CollectiveMetrics& metrics) {
  JsonWriter out;
  metrics.Write(out);
  return out.text();
}

// The two ranks' partial states saved, merged second rank first, and put back in order.
std::string MergedInReverse(const std::vector<RankCalls>& job) {
  CollectiveMetrics first, second, merged;
  AddStream(first, job[1]);
  AddStream(second, job[0]);
  for (const CollectiveMetrics* part : {&first, &second}) {
    PartialEncoder out;
    part->Save(out);
    const std::string bytes = out.Take();
    PartialDecoder in(bytes);
    merged.MergeFrom(in);
  }
  merged.ReorderStreams({1, 0});
  return Written(merged);
}

// Rank 1 arrives 30 ns late at instances 1 and 2 (its clock is 1,000 ns behind: the offsets align
// them), rank 0 is missing from instance 3, rank 0's bytes differ at 2, and a send is never matched.
std::vector<RankCalls> Job() {
  return {
      {0,
       0,
       {Waited(Call(100, "allreduce_", 1, 0), 160, 30), Call(200, "allreduce_", 2, 0, 32), Call(250, "send", 9, 0)}},
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
  EXPECT_NE(json.find("\"rank\":0,\"pid\":100,\"calls\":3,\"work_wait_ns\":30,\"instances_matched\":2,\"wait_ns\":60,"
                      "\"last_arrivals\":0,\"late_by_ns\":0"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"rank\":1,\"pid\":101,\"calls\":3,\"work_wait_ns\":0,\"instances_matched\":2,\"wait_ns\":0,"
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

// The job of Job() on GPUs: rank 0's kernels start 400 ns after rank 1's at instance 1 and 100 ns at
// instance 2, although rank 1 arrives last on the host; rank 0 has a second kernel in its call at 2,
// one launch whose thread has no call open and one launched after its call ended.
std::vector<RankCalls> GpuJob() {
  std::vector<RankCalls> job = Job();
  // Rank 0's calls run on thread 7 ([100, 150], [200, 250]), rank 1's on thread 8 ([-870, -820], ...).
  job[0].launches = {{7, 120, 0, 5400, 300},
                     {7, 210, 0, 6100, 200},
                     {7, 240, 0, 6350, 100},
                     {9, 120, 0, 5000, 50},
                     {7, 160, 0, 5500, 50}};
  job[1].launches = {{8, -850, 0, 5000, 700}, {8, -760, 0, 6000, 300}, {8, -690, 0, 7000, 10}};
  return job;
}

TEST(CollectiveMetrics, NcclKernelsLinkToTheirCallsAndMatchOnTheDevice) {
  CollectiveMetrics metrics;
  for (const RankCalls& r : GpuJob()) AddStream(metrics, r);
  const std::string json = Written(metrics);
  EXPECT_NE(json.find("\"kernels_linked\":6,\"kernels_not_linked\":2,\"instances_matched_on_device\":2"),
            std::string::npos)
      << json;
  // On the device rank 0 is the last at both instances (400 and 100 ns late); rank 1 waits for it.
  EXPECT_NE(json.find("\"late_by_ns\":0,\"kernels\":3,\"device_ns\":600,\"instances_matched_on_device\":2,"
                      "\"device_wait_ns\":0,\"device_last_arrivals\":2,\"device_late_by_ns\":500"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"late_by_ns\":60,\"kernels\":3,\"device_ns\":1010,\"instances_matched_on_device\":2,"
                      "\"device_wait_ns\":500,\"device_last_arrivals\":0"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"calls\":5,\"bytes\":288,\"call_ns\":250,\"waits\":1,\"work_wait_ns\":30,"
                      "\"instances_matched\":2,\"wait_ns\":60,"
                      "\"kernels\":6,\"device_ns\":1610,\"instances_matched_on_device\":2,\"device_wait_ns\":500"),
            std::string::npos)
      << json;
}

TEST(CollectiveMetrics, SavedAndMergedPartsWriteWhatOneStateWrites) {
  const std::vector<RankCalls> job = GpuJob();
  CollectiveMetrics whole;
  for (const RankCalls& r : job) AddStream(whole, r);

  EXPECT_EQ(MergedInReverse(job), Written(whole));
}

TEST(CollectiveMetrics, AnotherOpAtTheSameSequenceNumberIsNamedWithBothRanks) {
  const std::vector<RankCalls> job = {{0, 0, {Call(100, "allreduce_", 5, 0)}}, {1, 0, {Call(120, "broadcast_", 5, 1)}}};
  const std::string expected =
      "\"instances_op_differ\":1,\"op_differ_examples\":[{\"group\":\"0\",\"sequence\":5,\"rank\":0,"
      "\"op\":\"allreduce_\",\"other_rank\":1,\"other_op\":\"broadcast_\"}]";
  CollectiveMetrics whole;
  for (const RankCalls& r : job) AddStream(whole, r);
  EXPECT_NE(Written(whole).find(expected), std::string::npos) << Written(whole);

  EXPECT_EQ(MergedInReverse(job), Written(whole));
}

}  // namespace
}  // namespace smprof::analysis

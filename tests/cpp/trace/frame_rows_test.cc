// FrameRows' wire walker against protobuf's parse + Decode*(): on frames the
// real encoders write (every table, constant and per-row columns, counters),
// the walker takes them and gives exactly the reference rows; on inconsistent
// tables, unusual encodings and every one-byte corruption or truncation of a
// frame, FrameRows accepts and rejects exactly what protobuf does, with the
// same rows and the same per-table errors.
#include "trace/frame_rows.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/frame_rows_compare.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"

namespace smprof::internal {
namespace {

const std::map<NameId, std::string> kNames = {{1, "forward"},     {2, "void gemm<float>(float*)"},
                                              {3, "Memcpy HtoD"}, {4, "cudaLaunchKernel"},
                                              {5, "step"},        {6, ""},
                                              {7, "buffer flush"}};

// A frame with every table, as the drain writes it: annotations, GPU rows of
// every kind, API calls, external correlations, markers, overheads, a device,
// a context and two counter series. `varied` gives per-row columns; without
// it most columns are constant (one value) or empty.
std::string WriterFrame(int rows, bool varied) {
  FrameBuilder builder([](NameId id) { return kNames.at(id); },
                       [](std::uint32_t tid) { return "thread-" + std::to_string(tid); });
  std::vector<AnnotationRecord> annotations;
  GpuBatch batch;
  std::vector<CounterSample> samples;
  for (int i = 0; i < rows; ++i) {
    const std::int64_t t = 1'000'000'000 + 1000 * i;
    annotations.push_back(AnnotationRecord{t, 400 + (varied ? i : 0), static_cast<NameId>(varied ? 1 + i % 2 : 5),
                                           static_cast<std::uint32_t>(varied ? 4242 + i % 3 : 4242),
                                           static_cast<std::uint16_t>(varied ? i % 3 : 0), 0, 0});
    GpuActivityRecord a;
    a.start_ns = t + 300;
    a.end_ns = a.start_ns + 250 + i;
    a.name = static_cast<NameId>(varied && i % 3 == 1 ? 3 : 2);
    a.kind = varied ? static_cast<std::uint32_t>(1 + i % 4) : static_cast<std::uint32_t>(trace::GPU_KIND_KERNEL);
    a.device = varied ? static_cast<std::uint32_t>(i % 2) : 0;
    a.stream = 7;
    a.correlation_id = static_cast<std::uint32_t>(100 + i);
    a.bytes = varied ? (1ull << 33) + static_cast<std::uint64_t>(i) : 0;
    a.copy_kind = varied ? static_cast<std::uint32_t>(i % 11) : 0;
    a.src_memory_kind = varied ? static_cast<std::uint32_t>(i % 8) : 0;
    a.dst_memory_kind = varied ? static_cast<std::uint32_t>(7 - i % 8) : 2;
    a.graph_node_id = varied ? 0x1234567890ull * static_cast<std::uint64_t>(i) : 0;
    a.grid[0] = static_cast<std::uint32_t>(80 + (varied ? i : 0));
    a.block[0] = 256;
    a.registers_per_thread = 64;
    batch.activities.push_back(a);
    batch.api_calls.push_back(ApiCallRecord{t + 10, t + 60, 4, static_cast<std::uint32_t>(varied ? 4242 + i % 2 : 4242),
                                            static_cast<std::uint32_t>(100 + i), varied ? 1u + i % 2 : 1u});
    batch.external_correlations.push_back(
        ExternalCorrelationRecord{static_cast<std::uint32_t>(100 + i), kSmprofExternalCorrelationKindValue,
                                  static_cast<std::uint64_t>(i), static_cast<NameId>(varied ? 1 + i % 2 : 1)});
    batch.markers.push_back(MarkerRecord{t, t + 5, 5, 6, 4242});
    batch.overheads.push_back(OverheadRecord{t, t + 7, 7, 4242});
    samples.push_back(CounterSample{static_cast<std::uint32_t>(i % 2), t, 12.5 * i - 100});
  }
  batch.devices.push_back(GpuDeviceInfo{0, "NVIDIA H200", "GPU-0001", 132, 150ull << 30, 9, 0, 4800000000ull, 1024});
  batch.contexts.push_back(GpuContextInfo{3, 0});
  builder.Add(annotations.data(), annotations.size());
  trace::Frame frame;
  builder.Build(17, &frame);
  GpuFrameEncoder encoder;
  encoder.Add(std::move(batch));
  encoder.Build(&builder.tables(), &frame);
  EncodeCounters(
      samples,
      [](std::uint32_t track) {
        return CounterTrackInfo{track == 0 ? "cpu0.utilization" : "memory.rss", track == 0 ? "percent" : "bytes",
                                track == 0 ? 0.01 : 1.0};
      },
      &frame);
  frame.set_dropped_total(5);
  frame.set_gpu_dropped_total(6);
  return frame.SerializeAsString();
}

void ExpectWalkerDecodesLikeProtobuf(const std::string& bytes) {
  EXPECT_EQ(CompareWithProtobuf(bytes), "");
  FrameRows rows;
  ASSERT_TRUE(rows.Decode(bytes));
  EXPECT_TRUE(rows.decoded_by_walker()) << "a frame the writer wrote must take the fast path";
}

TEST(FrameRows, WriterFramesDecodeOnTheFastPathWithTheReferenceRows) {
  for (const bool varied : {false, true}) {
    for (const int rows : {0, 1, 2, 3, 500}) {
      SCOPED_TRACE(std::to_string(rows) + (varied ? " varied rows" : " constant columns"));
      ExpectWalkerDecodesLikeProtobuf(WriterFrame(rows, varied));
    }
  }
  FrameRows rows;
  const std::string bytes = WriterFrame(500, true);  // rows point into it
  ASSERT_TRUE(rows.Decode(bytes));
  EXPECT_EQ(rows.sequence, 17u);
  EXPECT_EQ(rows.annotations.size(), 500u);
  EXPECT_EQ(rows.gpu.size(), 500u);
  EXPECT_EQ(rows.api_calls.size(), 500u);
  EXPECT_EQ(rows.external_correlations.size(), 500u);
  EXPECT_EQ(rows.counters.size(), 500u);
  EXPECT_EQ(rows.tables().markers().dur_ns_size(), 500);
  EXPECT_EQ(rows.tables().devices_size(), 1);
  EXPECT_EQ(rows.message().gpu().dur_ns_size(), 500) << "message() is the whole frame";
}

TEST(FrameRows, BuffersAreReusedAcrossFramesWithoutStaleRows) {
  FrameRows rows;
  const std::string large = WriterFrame(500, true);
  ASSERT_TRUE(rows.Decode(large));
  const std::string small = WriterFrame(2, false);
  ASSERT_TRUE(rows.Decode(small));
  FrameRows fresh;
  ASSERT_TRUE(fresh.Decode(small));
  EXPECT_EQ(FrameRowsText(rows), FrameRowsText(fresh));
}

// The frame of `rows` rows with one column of a table changed.
template <typename Mutate>
std::string Mutated(Mutate mutate) {
  trace::Frame frame;
  EXPECT_TRUE(frame.ParseFromString(WriterFrame(4, true)));
  mutate(&frame);
  return frame.SerializeAsString();
}

TEST(FrameRows, ColumnsAbsentFromTheNextFrameAreZeroNotLeftFromTheFrameBefore) {
  // The walker overwrites the rows of the frame before in place: a column
  // the next frame leaves out must read as protobuf's 0, not the old value.
  FrameRows rows;
  const std::string full = WriterFrame(500, true);
  ASSERT_TRUE(rows.Decode(full));
  const std::string sparse = Mutated([](trace::Frame* frame) {
    auto* gpu = frame->mutable_gpu();
    gpu->clear_bytes();
    gpu->clear_stream();
    gpu->clear_grid_x();
    gpu->clear_registers_per_thread();
    gpu->clear_graph_node_id();
    frame->mutable_api_calls()->clear_domain();
    frame->mutable_external_correlations()->clear_external_id();
  });
  ASSERT_TRUE(rows.Decode(sparse));
  EXPECT_TRUE(rows.decoded_by_walker());
  FrameRows fresh;
  ASSERT_TRUE(fresh.Decode(sparse));
  EXPECT_EQ(FrameRowsText(rows), FrameRowsText(fresh));
  EXPECT_EQ(CompareWithProtobuf(sparse), "");
}

TEST(FrameRows, InconsistentTablesGiveTheReferenceErrors) {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"annotation column short",
       Mutated([](trace::Frame* f) { f->mutable_annotations()->mutable_depth()->RemoveLast(); })},
      {"annotation name out of range",
       Mutated([](trace::Frame* f) { f->mutable_annotations()->set_name_index(2, 1000); })},
      {"annotation thread out of range",
       Mutated([](trace::Frame* f) { f->mutable_annotations()->set_thread_index(0, 9); })},
      {"gpu column of 2 values for 4 rows",
       Mutated([](trace::Frame* f) { f->mutable_gpu()->mutable_kind()->Truncate(2); })},
      {"gpu name out of range", Mutated([](trace::Frame* f) { f->mutable_gpu()->set_name_index(3, 77); })},
      {"gpu dur_ns short", Mutated([](trace::Frame* f) { f->mutable_gpu()->mutable_dur_ns()->RemoveLast(); })},
      {"api thread out of range", Mutated([](trace::Frame* f) {
         f->mutable_api_calls()->mutable_thread_index()->Clear();
         f->mutable_api_calls()->add_thread_index(50);
       })},
      {"api with no strings", Mutated([](trace::Frame* f) {
         f->mutable_api_calls()->mutable_name_index()->Clear();
         f->clear_strings();
       })},
      {"external name out of range",
       Mutated([](trace::Frame* f) { f->mutable_external_correlations()->set_name_index(1, 500); })},
      {"counter track out of range", Mutated([](trace::Frame* f) { f->mutable_counters(0)->set_track_index(9); })},
      {"counter series lengths differ",
       Mutated([](trace::Frame* f) { f->mutable_counters(1)->mutable_value_delta()->RemoveLast(); })},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    EXPECT_EQ(CompareWithProtobuf(bytes), "");
    FrameRows rows;
    ASSERT_TRUE(rows.Decode(bytes));
    EXPECT_FALSE(rows.decoded_by_walker());
    EXPECT_FALSE(rows.annotations_status.ok() && rows.gpu_status.ok() && rows.api_calls_status.ok() &&
                 rows.external_correlations_status.ok() && rows.counters_status.ok())
        << "one table reports its error";
  }
}

// Raw wire bytes, for encodings the writer never produces.
std::string Tag(std::uint32_t field, std::uint32_t wire_type) {
  std::string out;
  for (std::uint64_t v = (std::uint64_t{field} << 3) | wire_type;; v >>= 7) {
    if (v < 0x80) return out + static_cast<char>(v);
    out += static_cast<char>((v & 0x7f) | 0x80);
  }
}
std::string Delimited(std::uint32_t field, const std::string& body) {
  return Tag(field, 2) + static_cast<char>(body.size()) + body;
}

TEST(FrameRows, UnusualEncodingsDecodeAsProtobufDoes) {
  const std::string frame = WriterFrame(3, true);
  const std::string annotations = Delimited(4, Tag(2, 2) + '\x01' + '\x02');
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"unknown fields of every wire type",
       frame + Tag(99, 0) + '\x05' + Tag(98, 5) + "abcd" + Tag(97, 1) + "abcdefgh" + Delimited(96, "xyz")},
      {"unknown field inside a table", Delimited(4, Tag(50, 0) + '\x01') + frame},
      {"a table given twice (protobuf merges)", frame + Delimited(8, Tag(1, 0) + '\x07')},
      {"an unpacked column", Delimited(4, Tag(2, 0) + '\x02' + Tag(3, 0) + '\x01')},
      {"a column given twice", Delimited(4, Tag(3, 2) + '\x01' + '\x01' + Tag(3, 2) + '\x01' + '\x02')},
      {"a group", frame + Tag(90, 3) + Tag(90, 4)},
      {"a lone end-group", frame + Tag(90, 4)},
      {"field number 0", frame + Tag(0, 0) + '\x01'},
      {"a wire type 6", frame + Tag(90, 6)},
      {"sequence given twice", frame + Tag(1, 0) + '\x09'},
      {"an 11-byte varint", frame + Tag(1, 0) + std::string(10, '\xff') + '\x01'},
      {"a 10-byte varint", frame + Tag(1, 0) + std::string(9, '\xff') + '\x01'},
      {"a column cut inside a varint", Delimited(4, Tag(2, 2) + '\x01' + '\x80')},
      {"a non-minimal length", frame + Tag(2, 2) + "\x81\x80\x80\x80\x00" + "x"},
      {"a 6-byte length", frame + Tag(2, 2) + "\x81\x80\x80\x80\x80\x00" + "x"},
      {"a length past the end", frame + Tag(2, 2) + '\x05' + "ab"},
      {"a thread with unknown fields", frame + Delimited(3, Tag(1, 0) + '\x07' + Tag(9, 2) + '\x00')},
      {"a bare annotation table", annotations},
      {"an empty frame", ""},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    EXPECT_EQ(CompareWithProtobuf(bytes), "");
  }
  FrameRows rows;
  ASSERT_TRUE(rows.Decode(cases[0].second));
  EXPECT_TRUE(rows.decoded_by_walker()) << "unknown fields do not leave the fast path";
}

// Every one-byte change (several values) and every truncation of a frame:
// FrameRows accepts exactly what protobuf parses, with the reference rows.
TEST(FrameRows, EveryCorruptionAndTruncationDecidesAsProtobuf) {
  const std::string frame = WriterFrame(3, true);
  std::size_t walker_took = 0;
  std::size_t rejected = 0;
  const auto check = [&](const std::string& bytes, const std::string& what) {
    const std::string difference = CompareWithProtobuf(bytes);
    ASSERT_EQ(difference, "") << what;
    FrameRows rows;
    if (!rows.Decode(bytes)) ++rejected;
    if (rows.decoded_by_walker()) ++walker_took;
  };
  for (std::size_t at = 0; at < frame.size(); ++at) {
    const auto original = static_cast<unsigned char>(frame[at]);
    for (const unsigned value : {0x00u, 0x01u, 0x7fu, 0x80u, 0xffu, original ^ 0x80u, original + 1u, original - 1u}) {
      std::string bytes = frame;
      bytes[at] = static_cast<char>(value);
      check(bytes, "byte " + std::to_string(at) + " = " + std::to_string(value & 0xff));
    }
    check(frame.substr(0, at), "cut at " + std::to_string(at));
  }
  EXPECT_GT(walker_took, frame.size()) << "mutants the walker decoded itself";
  EXPECT_GT(rejected, frame.size() / 4) << "mutants both reject";
}

}  // namespace
}  // namespace smprof::internal

// GpuFrameEncoder -> Frame -> Decode*: GPU rows come back exactly, each table
// sorted by start, sharing the frame's string and thread tables with the
// annotations; large backlogs split into bounded frames; devices and
// contexts go out once; malformed tables are rejected naming the column.
#include "trace/gpu_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "trace/frame_codec.h"

namespace smprof::internal {
namespace {

const std::map<NameId, std::string> kNames = {{1, "forward"},      {2, "void gemm<float>(float*)"},
                                              {3, "Memcpy HtoD"},  {4, "cudaLaunchKernel"},
                                              {5, "step"},         {6, ""},
                                              {7, "buffer flush"}, {8, "Stream synchronize"}};

FrameBuilder MakeBuilder() {
  return FrameBuilder([](NameId id) { return kNames.at(id); },
                      [](std::uint32_t tid) { return "thread-" + std::to_string(tid); });
}

GpuActivityRecord Kernel(std::int64_t start, std::uint32_t correlation) {
  GpuActivityRecord r;
  r.start_ns = start;
  r.end_ns = start + 250;
  r.name = 2;
  r.kind = trace::GPU_KIND_KERNEL;
  r.device = 1;
  r.context = 3;
  r.stream = 7;
  r.correlation_id = correlation;
  r.kernel_class = trace::KERNEL_CLASS_COMPUTE;
  r.precision = trace::PRECISION_FP32;
  r.graph_id = 4;
  r.graph_node_id = 0x1234567890ull;
  r.grid[0] = 80;
  r.grid[1] = 2;
  r.grid[2] = 1;
  r.block[0] = 256;
  r.block[1] = 1;
  r.block[2] = 1;
  r.shared_memory_bytes = 49152;
  r.registers_per_thread = 64;
  return r;
}

GpuBatch SampleBatch() {
  GpuBatch batch;
  batch.activities.push_back(Kernel(5000, 12));
  GpuActivityRecord copy;
  copy.start_ns = 1000;
  copy.end_ns = 1800;
  copy.name = 3;
  copy.kind = trace::GPU_KIND_MEMCPY;
  copy.copy_kind = trace::COPY_KIND_HTOD;
  copy.bytes = 1ull << 33;
  copy.correlation_id = 11;
  copy.src_memory_kind = trace::MEMORY_KIND_PAGEABLE;
  copy.dst_memory_kind = trace::MEMORY_KIND_DEVICE;
  batch.activities.push_back(copy);
  GpuActivityRecord peer = copy;
  peer.start_ns = 3000;
  peer.copy_kind = trace::COPY_KIND_PTOP;
  peer.peer_device = 3;
  batch.activities.push_back(peer);
  GpuActivityRecord sync;
  sync.start_ns = 6000;
  sync.end_ns = 5000;  // end before start: encoded as 0 duration
  sync.name = 8;
  sync.kind = trace::GPU_KIND_SYNC;
  batch.activities.push_back(sync);
  batch.api_calls.push_back(ApiCallRecord{900, 950, 4, 4242, 12, 1});
  batch.api_calls.push_back(ApiCallRecord{800, 850, 4, 4243, 11, 2});
  batch.external_correlations.push_back(ExternalCorrelationRecord{12, kSmprofExternalCorrelationKindValue, 1, 1});
  batch.external_correlations.push_back(ExternalCorrelationRecord{11, 3, 99, 0});
  batch.markers.push_back(MarkerRecord{700, 9000, 5, 6, 4242});
  batch.markers.push_back(MarkerRecord{600, 600, 5, 6, 4243});
  batch.overheads.push_back(OverheadRecord{400, 410, 7, 4242});
  batch.devices.push_back(GpuDeviceInfo{1, "NVIDIA H200", "GPU-0001", 132, 150ull << 30, 9, 0, 4800000000ull, 1024});
  batch.contexts.push_back(GpuContextInfo{3, 1});
  return batch;
}

trace::Frame Reparse(const trace::Frame& frame) {
  trace::Frame copy;
  EXPECT_TRUE(copy.ParseFromString(frame.SerializeAsString()));
  return copy;
}

TEST(GpuCodec, RoundTripGivesBackEveryRowSortedByStartWithSharedTables) {
  FrameBuilder builder = MakeBuilder();
  const AnnotationRecord annotation{100, 20000, 1, 4242, 0, 0, 0};
  builder.Add(&annotation, 1);
  GpuFrameEncoder encoder;
  encoder.Add(SampleBatch());
  EXPECT_EQ(encoder.size(), 4u + 2u + 2u + 2u + 1u + 1u + 1u);  // rows, a device and a context
  trace::Frame built;
  builder.Build(0, &built);
  EXPECT_EQ(encoder.Build(&builder.tables(), &built), 11u);
  EXPECT_EQ(encoder.size(), 0u);
  const trace::Frame frame = Reparse(built);

  // "forward" is both the annotation's name and the external correlation's;
  // thread 4242 ran the annotation, an API call, a marker and an overhead.
  EXPECT_EQ(std::count(frame.strings().begin(), frame.strings().end(), "forward"), 1);
  EXPECT_EQ(frame.threads_size(), 2);

  std::vector<GpuActivityRow> gpu;
  ASSERT_TRUE(DecodeGpuActivities(frame, &gpu).ok());
  ASSERT_EQ(gpu.size(), 4u);
  EXPECT_EQ(gpu[0].start_ns, 1000);
  EXPECT_EQ(gpu[0].name, "Memcpy HtoD");
  EXPECT_EQ(gpu[0].bytes, 1ull << 33);
  EXPECT_EQ(gpu[0].copy_kind, static_cast<std::uint32_t>(trace::COPY_KIND_HTOD));
  EXPECT_EQ(gpu[0].src_memory_kind, static_cast<std::uint32_t>(trace::MEMORY_KIND_PAGEABLE));
  EXPECT_EQ(gpu[0].dst_memory_kind, static_cast<std::uint32_t>(trace::MEMORY_KIND_DEVICE));
  EXPECT_EQ(gpu[1].start_ns, 3000);
  EXPECT_EQ(gpu[1].peer_device, 3u);
  const GpuActivityRow& k = gpu[2];
  const GpuActivityRecord want = Kernel(5000, 12);
  EXPECT_EQ(k.start_ns, want.start_ns);
  EXPECT_EQ(k.dur_ns, 250);
  EXPECT_EQ(k.name, "void gemm<float>(float*)");
  EXPECT_EQ(k.kind, want.kind);
  EXPECT_EQ(k.device, want.device);
  EXPECT_EQ(k.context, want.context);
  EXPECT_EQ(k.stream, want.stream);
  EXPECT_EQ(k.correlation_id, want.correlation_id);
  EXPECT_EQ(k.kernel_class, want.kernel_class);
  EXPECT_EQ(k.precision, want.precision);
  EXPECT_EQ(k.graph_id, want.graph_id);
  EXPECT_EQ(k.graph_node_id, want.graph_node_id);
  EXPECT_EQ(std::vector<std::uint32_t>(k.grid, k.grid + 3), std::vector<std::uint32_t>({80, 2, 1}));
  EXPECT_EQ(std::vector<std::uint32_t>(k.block, k.block + 3), std::vector<std::uint32_t>({256, 1, 1}));
  EXPECT_EQ(k.shared_memory_bytes, want.shared_memory_bytes);
  EXPECT_EQ(k.registers_per_thread, want.registers_per_thread);
  EXPECT_EQ(gpu[3].name, "Stream synchronize");
  EXPECT_EQ(gpu[3].dur_ns, 0);

  std::vector<ApiCallRow> api;
  ASSERT_TRUE(DecodeApiCalls(frame, &api).ok());
  ASSERT_EQ(api.size(), 2u);
  EXPECT_EQ(api[0].start_ns, 800);
  EXPECT_EQ(api[0].tid, 4243u);
  EXPECT_EQ(api[0].domain, 2u);
  EXPECT_EQ(api[1].name, "cudaLaunchKernel");
  EXPECT_EQ(api[1].dur_ns, 50);
  EXPECT_EQ(api[1].correlation_id, 12u);

  std::vector<ExternalCorrelationRow> ext;
  ASSERT_TRUE(DecodeExternalCorrelations(frame, &ext).ok());
  ASSERT_EQ(ext.size(), 2u);
  EXPECT_EQ(ext[0].name, "forward");
  EXPECT_EQ(ext[0].correlation_id, 12u);
  EXPECT_EQ(ext[1].name, "");
  EXPECT_EQ(ext[1].external_id, 99u);
  EXPECT_EQ(ext[1].external_kind, 3u);

  std::vector<MarkerRow> markers;
  ASSERT_TRUE(DecodeMarkers(frame, &markers).ok());
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(markers[0].start_ns, 600);
  EXPECT_EQ(markers[0].dur_ns, 0);
  EXPECT_EQ(markers[1].name, "step");
  EXPECT_EQ(markers[1].domain, "");
  EXPECT_EQ(markers[1].dur_ns, 8300);
  EXPECT_EQ(markers[1].tid, 4242u);

  std::vector<OverheadRow> overheads;
  ASSERT_TRUE(DecodeOverheads(frame, &overheads).ok());
  ASSERT_EQ(overheads.size(), 1u);
  EXPECT_EQ(overheads[0].name, "buffer flush");
  EXPECT_EQ(overheads[0].dur_ns, 10);

  ASSERT_EQ(frame.devices_size(), 1);
  EXPECT_EQ(frame.devices(0).name(), "NVIDIA H200");
  EXPECT_EQ(frame.devices(0).sm_count(), 132u);
  EXPECT_EQ(frame.devices(0).global_memory_bytes(), 150ull << 30);
  ASSERT_EQ(frame.contexts_size(), 1);
  EXPECT_EQ(frame.contexts(0).device(), 1u);
}

TEST(GpuCodec, LargeBacklogsSplitIntoBoundedFramesAndComeBackWhole) {
  FrameBuilder builder = MakeBuilder();
  GpuFrameEncoder encoder;
  constexpr int kRows = 2500;
  GpuBatch batch;
  for (int i = 0; i < kRows; ++i) batch.activities.push_back(Kernel((i * 7919) % 10007 * 10, i));
  encoder.Add(std::move(batch));
  std::vector<std::uint32_t> correlations;
  int frames = 0;
  while (encoder.size() > 0) {
    trace::Frame frame;
    builder.Build(frames, &frame);
    EXPECT_LE(encoder.Build(&builder.tables(), &frame, 1000), 1000u);
    std::vector<GpuActivityRow> rows;
    ASSERT_TRUE(DecodeGpuActivities(Reparse(frame), &rows).ok());
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(), [](const GpuActivityRow& a, const GpuActivityRow& b) {
      return a.start_ns < b.start_ns;
    }));
    for (const GpuActivityRow& row : rows) correlations.push_back(row.correlation_id);
    ++frames;
  }
  EXPECT_EQ(frames, 3);
  std::sort(correlations.begin(), correlations.end());
  ASSERT_EQ(correlations.size(), static_cast<std::size_t>(kRows));
  for (int i = 0; i < kRows; ++i) EXPECT_EQ(correlations[i], static_cast<std::uint32_t>(i));
}

TEST(GpuCodec, AFramesStringsStayWithinTheirBudgetTheRestWaits) {
  // 1,000 kernels of distinct 16 KiB names: four frames' worth of strings.
  constexpr int kRows = 1000;
  constexpr std::size_t kNameBytes = 16 << 10;
  FrameBuilder builder([](NameId id) { return std::to_string(id) + std::string(kNameBytes - 8, 'k'); },
                       [](std::uint32_t) { return std::string("t"); });
  GpuFrameEncoder encoder;
  GpuBatch batch;
  for (int i = 0; i < kRows; ++i) {
    batch.activities.push_back(Kernel(i * 10, i));
    batch.activities.back().name = static_cast<NameId>(i + 1);
  }
  encoder.Add(std::move(batch));
  std::vector<std::uint32_t> correlations;
  int frames = 0;
  while (encoder.size() > 0) {
    trace::Frame frame;
    builder.Build(frames++, &frame);
    encoder.Build(&builder.tables(), &frame);
    std::size_t bytes = 0;
    for (const std::string& s : frame.strings()) bytes += s.size();
    EXPECT_LT(bytes, FrameTables::kStringBudgetBytes + kNameBytes);
    std::vector<GpuActivityRow> rows;
    ASSERT_TRUE(DecodeGpuActivities(Reparse(frame), &rows).ok());
    for (const GpuActivityRow& row : rows) correlations.push_back(row.correlation_id);
  }
  EXPECT_EQ(frames, 4);
  ASSERT_EQ(correlations.size(), static_cast<std::size_t>(kRows));
  for (int i = 0; i < kRows; ++i) EXPECT_EQ(correlations[i], static_cast<std::uint32_t>(i));
}

TEST(GpuCodec, DevicesAndContextsAreSentOnceAndAgainAfterResend) {
  FrameBuilder builder = MakeBuilder();
  GpuFrameEncoder encoder;
  encoder.Add(SampleBatch());
  trace::Frame first;
  builder.Build(0, &first);
  encoder.Build(&builder.tables(), &first);
  EXPECT_EQ(first.devices_size(), 1);
  encoder.Add(SampleBatch());  // the same device and context again
  trace::Frame second;
  builder.Build(1, &second);
  encoder.Build(&builder.tables(), &second);
  EXPECT_EQ(second.devices_size(), 0);
  EXPECT_EQ(second.contexts_size(), 0);
  encoder.ResendMetadata();
  trace::Frame third;
  builder.Build(2, &third);
  encoder.Build(&builder.tables(), &third);
  EXPECT_EQ(third.devices_size(), 1);
  EXPECT_EQ(third.contexts_size(), 1);
}

TEST(GpuCodec, ConstantColumnsAreStoredOnceAndZeroColumnsNotAtAll) {
  FrameBuilder builder = MakeBuilder();
  GpuFrameEncoder encoder;
  GpuBatch batch;
  for (int i = 0; i < 3; ++i) batch.activities.push_back(Kernel(1000 * (i + 1), 10 + i));
  batch.activities[2].grid[0] = 7;
  encoder.Add(std::move(batch));
  trace::Frame built;
  builder.Build(0, &built);
  encoder.Build(&builder.tables(), &built);
  const trace::Frame frame = Reparse(built);
  EXPECT_EQ(frame.gpu().device_size(), 1);  // 1 in every row
  EXPECT_EQ(frame.gpu().bytes_size(), 0);   // 0 in every row
  EXPECT_EQ(frame.gpu().grid_x_size(), 3);  // varies
  EXPECT_EQ(frame.gpu().correlation_id_size(), 3);
  std::vector<GpuActivityRow> rows;
  ASSERT_TRUE(DecodeGpuActivities(frame, &rows).ok());
  ASSERT_EQ(rows.size(), 3u);
  for (const GpuActivityRow& row : rows) {
    EXPECT_EQ(row.device, 1u);
    EXPECT_EQ(row.kind, static_cast<std::uint32_t>(trace::GPU_KIND_KERNEL));
    EXPECT_EQ(row.bytes, 0u);
    EXPECT_EQ(row.block[0], 256u);
  }
  EXPECT_EQ(rows[2].grid[0], 7u);
  EXPECT_EQ(rows[1].correlation_id, 11u);
}

trace::Frame EncodedSample() {
  FrameBuilder builder = MakeBuilder();
  GpuFrameEncoder encoder;
  encoder.Add(SampleBatch());
  trace::Frame frame;
  builder.Build(7, &frame);
  encoder.Build(&builder.tables(), &frame);
  return frame;
}

TEST(GpuCodec, MalformedTablesAreRejectedNamingTheColumn) {
  {
    trace::Frame frame = EncodedSample();
    frame.mutable_gpu()->mutable_precision()->RemoveLast();
    std::vector<GpuActivityRow> rows;
    const Status status = DecodeGpuActivities(frame, &rows);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("frame 7: malformed gpu (precision has 3 rows, expected 4)"), std::string::npos)
        << status.message();
  }
  {
    trace::Frame frame = EncodedSample();
    frame.mutable_gpu()->set_name_index(1, 1000);
    std::vector<GpuActivityRow> rows;
    const Status status = DecodeGpuActivities(frame, &rows);
    EXPECT_NE(status.message().find("name_index 1000 out of range"), std::string::npos) << status.message();
  }
  {
    trace::Frame frame = EncodedSample();
    frame.mutable_api_calls()->set_thread_index(0, 9);
    std::vector<ApiCallRow> rows;
    EXPECT_NE(DecodeApiCalls(frame, &rows).message().find("malformed api_calls (thread_index 9"), std::string::npos);
  }
  {
    trace::Frame frame = EncodedSample();
    frame.mutable_markers()->add_thread_index(0);
    std::vector<MarkerRow> rows;
    EXPECT_NE(DecodeMarkers(frame, &rows).message().find("thread_index has 3 rows"), std::string::npos);
  }
  {
    trace::Frame frame = EncodedSample();
    frame.mutable_overheads()->mutable_dur_ns()->Clear();
    std::vector<OverheadRow> rows;
    EXPECT_NE(DecodeOverheads(frame, &rows).message().find("malformed overheads (dur_ns"), std::string::npos);
  }
  {
    trace::Frame frame = EncodedSample();
    frame.mutable_external_correlations()->set_name_index(1, 500);
    std::vector<ExternalCorrelationRow> rows;
    EXPECT_NE(DecodeExternalCorrelations(frame, &rows).message().find("external_correlations (name_index 500"),
              std::string::npos);
  }
}

TEST(GpuCodec, FramesWithoutGpuTablesDecodeToNothing) {
  trace::Frame frame;
  std::vector<GpuActivityRow> gpu;
  std::vector<ApiCallRow> api;
  std::vector<MarkerRow> markers;
  std::vector<OverheadRow> overheads;
  std::vector<ExternalCorrelationRow> ext;
  EXPECT_TRUE(DecodeGpuActivities(frame, &gpu).ok());
  EXPECT_TRUE(DecodeApiCalls(frame, &api).ok());
  EXPECT_TRUE(DecodeMarkers(frame, &markers).ok());
  EXPECT_TRUE(DecodeOverheads(frame, &overheads).ok());
  EXPECT_TRUE(DecodeExternalCorrelations(frame, &ext).ok());
  EXPECT_TRUE(gpu.empty() && api.empty() && markers.empty() && overheads.empty() && ext.empty());
}

}  // namespace
}  // namespace smprof::internal

// ActivityDecoder on CUPTI buffers built from the CUDA 13.0 header structs,
// walked both by HeaderNextRecord and by libcupti's own
// cuptiActivityGetNextRecord (loaded with dlopen; it needs no driver): every
// kind smprof records comes out with its fields, kernel names demangled and
// classified, NVTX ranges paired across buffers and threads, and bad input
// (zero timestamps, truncated buffers, unknown kinds) counted, never fatal.
#include "collectors/cuda/activity_decoder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "runtime/name_table.h"
#include "support/cupti_records.h"

namespace smprof::internal {
namespace {

using testing::ActivityBuffer;

std::string Name(NameId id) { return NameTable::Get().Lookup(id); }

// Runtime/driver callback names, as cuptiGetCallbackName gives them.
const std::map<std::pair<int, std::uint32_t>, const char*> kApiNames = {
    {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000}, "cudaLaunchKernel"},
    {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020}, "cudaMemcpyAsync"},
    {{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel}, "cuLaunchKernel"},
};

// Parameter: true walks buffers with libcupti's iterator, false with ours.
class ActivityDecoderTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (next_ == nullptr) GTEST_SKIP() << "libcupti.so.13 cannot be loaded here";
  }

  ActivityDecoder::Options Options() {
    ActivityDecoder::Options options;
    options.next_record = next_;
    options.api_names = [this](CUpti_CallbackDomain domain, std::uint32_t cbid) -> const char* {
      ++resolver_calls_;
      const auto it = kApiNames.find({domain, cbid});
      return it != kApiNames.end() ? it->second : nullptr;
    };
    return options;
  }

  GpuBatch Decode(ActivityBuffer& buffer) {
    GpuBatch batch;
    decoder_.Decode(buffer.data(), buffer.size(), &batch);
    return batch;
  }

  NextRecordFn next_ = GetParam() ? testing::LibcuptiNextRecord() : &HeaderNextRecord;
  std::atomic<int> resolver_calls_{0};
  ActivityDecoder decoder_{Options()};
};

TEST_P(ActivityDecoderTest, KernelsAreDemangledClassifiedAndKeepTheirLaunchGeometry) {
  static const char kGemm[] = "_Z16gemm_bf16_kernelIN3c108BFloat16EEvPKT_S4_PS2_i";
  static const char kNccl[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  ActivityBuffer buffer;
  buffer.Add(testing::Kernel(kGemm, 1000, 1500, 0, 7, 41)).Add(testing::Kernel(kNccl, 2000, 9000, 1, 13, 42));
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.activities.size(), 2u);
  const GpuActivityRecord& gemm = batch.activities[0];
  EXPECT_EQ(Name(gemm.name),
            "void gemm_bf16_kernel<c10::BFloat16>(c10::BFloat16 const*, c10::BFloat16 const*, "
            "c10::BFloat16*, int)");
  EXPECT_EQ(gemm.kind, 1u);
  EXPECT_EQ(gemm.start_ns, 1000);
  EXPECT_EQ(gemm.end_ns, 1500);
  EXPECT_EQ(gemm.device, 0u);
  EXPECT_EQ(gemm.context, 1u);
  EXPECT_EQ(gemm.stream, 7u);
  EXPECT_EQ(gemm.correlation_id, 41u);
  EXPECT_EQ(gemm.kernel_class, static_cast<std::uint32_t>(KernelClass::kCompute));
  EXPECT_EQ(gemm.precision, static_cast<std::uint32_t>(Precision::kBf16));
  EXPECT_EQ(gemm.grid[0], 128u);
  EXPECT_EQ(gemm.grid[1], 2u);
  EXPECT_EQ(gemm.block[0], 256u);
  EXPECT_EQ(gemm.shared_memory_bytes, 1024u + 4096u);
  EXPECT_EQ(gemm.registers_per_thread, 32u);
  EXPECT_EQ(gemm.graph_id, 0u);
  const GpuActivityRecord& nccl = batch.activities[1];
  EXPECT_EQ(Name(nccl.name), kNccl);
  EXPECT_EQ(nccl.device, 1u);
  EXPECT_EQ(nccl.kernel_class, static_cast<std::uint32_t>(KernelClass::kCommunication));
  EXPECT_EQ(nccl.precision, static_cast<std::uint32_t>(Precision::kFp32));
  EXPECT_EQ(decoder_.stats().records_by_kind[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], 2u);
}

TEST_P(ActivityDecoderTest, GraphKernelsWithoutLaunchRecordsAreKept) {
  CUpti_ActivityKernel10 k = testing::Kernel("graph_node_kernel", 500, 700, 0, 3, 0);
  k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  k.graphId = 9;
  k.graphNodeId = 0x100000002ull;
  ActivityBuffer buffer;
  buffer.Add(k);
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.activities.size(), 1u);
  EXPECT_TRUE(batch.api_calls.empty());
  EXPECT_EQ(batch.activities[0].correlation_id, 0u);
  EXPECT_EQ(batch.activities[0].graph_id, 9u);
  EXPECT_EQ(batch.activities[0].graph_node_id, 0x100000002ull);
  EXPECT_EQ(Name(batch.activities[0].name), "graph_node_kernel");
}

TEST_P(ActivityDecoderTest, CopiesOfEveryKindIncludingPeerToPeer) {
  const std::vector<std::pair<CUpti_ActivityMemcpyKind, const char*>> kinds = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, "Memcpy HtoD"}, {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "Memcpy DtoH"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, "Memcpy HtoA"}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, "Memcpy AtoH"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, "Memcpy AtoA"}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, "Memcpy AtoD"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, "Memcpy DtoA"}, {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, "Memcpy DtoD"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, "Memcpy HtoH"}, {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, "Memcpy"},
  };
  ActivityBuffer buffer;
  std::uint64_t t = 100;
  for (const auto& [kind, name] : kinds) {
    CUpti_ActivityMemcpy6 copy = testing::Memcpy(kind, 4096 * t, t, t + 10, static_cast<std::uint32_t>(t));
    copy.srcKind = static_cast<std::uint8_t>(t / 100 % 8);  // CUpti_ActivityMemoryKind
    copy.dstKind = static_cast<std::uint8_t>(7 - t / 100 % 8);
    buffer.Add(copy);
    t += 100;
  }
  CUpti_ActivityMemcpyPtoP4 p2p{};
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p2p.bytes = 1 << 20;
  p2p.start = 5000;
  p2p.end = 6000;
  p2p.deviceId = 2;
  p2p.srcDeviceId = 2;
  p2p.dstDeviceId = 3;
  p2p.streamId = 5;
  p2p.correlationId = 77;
  buffer.Add(p2p);
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.activities.size(), kinds.size() + 1);
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const GpuActivityRecord& r = batch.activities[i];
    EXPECT_EQ(r.kind, 2u);
    EXPECT_EQ(r.copy_kind, static_cast<std::uint32_t>(kinds[i].first));
    EXPECT_EQ(Name(r.name), kinds[i].second);
    EXPECT_EQ(r.bytes, 4096 * static_cast<std::uint64_t>(r.start_ns));
    EXPECT_EQ(r.stream, 7u);
    EXPECT_EQ(r.kernel_class, 0u);
    EXPECT_EQ(r.src_memory_kind, static_cast<std::uint32_t>(r.start_ns / 100 % 8));
    EXPECT_EQ(r.dst_memory_kind, static_cast<std::uint32_t>(7 - r.start_ns / 100 % 8));
  }
  const GpuActivityRecord& peer = batch.activities.back();
  EXPECT_EQ(peer.copy_kind, 10u);
  EXPECT_EQ(Name(peer.name), "Memcpy PtoP");
  EXPECT_EQ(peer.device, 2u);
  EXPECT_EQ(peer.peer_device, 3u);
  EXPECT_EQ(peer.bytes, 1u << 20);
  EXPECT_EQ(peer.correlation_id, 77u);
}

TEST_P(ActivityDecoderTest, MemsetsAndSynchronizationsOnTheirContextsDevice) {
  CUpti_ActivityContext3 context{};
  context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  context.contextId = 5;
  context.deviceId = 3;
  CUpti_ActivityMemset4 set{};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = 512;
  set.start = 10;
  set.end = 20;
  set.deviceId = 3;
  set.contextId = 5;
  set.streamId = 4;
  set.correlationId = 8;
  CUpti_ActivitySynchronization2 stream_sync{};
  stream_sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  stream_sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  stream_sync.start = 30;
  stream_sync.end = 90;
  stream_sync.contextId = 5;
  stream_sync.streamId = 4;
  stream_sync.correlationId = 9;
  CUpti_ActivitySynchronization2 context_sync = stream_sync;
  context_sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  context_sync.streamId = 0xffffffffu;
  ActivityBuffer buffer;
  buffer.Add(context).Add(set).Add(stream_sync).Add(context_sync);
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.contexts.size(), 1u);
  EXPECT_EQ(batch.contexts[0].id, 5u);
  EXPECT_EQ(batch.contexts[0].device, 3u);
  ASSERT_EQ(batch.activities.size(), 3u);
  EXPECT_EQ(batch.activities[0].kind, 3u);
  EXPECT_EQ(Name(batch.activities[0].name), "Memset");
  EXPECT_EQ(batch.activities[0].bytes, 512u);
  EXPECT_EQ(batch.activities[1].kind, 4u);
  EXPECT_EQ(Name(batch.activities[1].name), "Stream synchronize");
  EXPECT_EQ(batch.activities[1].device, 3u);
  EXPECT_EQ(batch.activities[1].stream, 4u);
  EXPECT_EQ(batch.activities[1].end_ns - batch.activities[1].start_ns, 60);
  EXPECT_EQ(Name(batch.activities[2].name), "Context synchronize");
  EXPECT_EQ(batch.activities[2].stream, 0u);
}

TEST_P(ActivityDecoderTest, ApiCallsGetTheirNamesOncePerCallback) {
  ActivityBuffer buffer;
  for (std::uint32_t i = 0; i < 4; ++i) {
    buffer.Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 100 + i,
                            105 + i, 4242, 10 + i));
  }
  buffer.Add(testing::Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 200, 210, 4243, 20));
  buffer.Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 9999, 300, 301, 4242, 21));
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.api_calls.size(), 6u);
  EXPECT_EQ(Name(batch.api_calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(batch.api_calls[0].domain, 1u);
  EXPECT_EQ(batch.api_calls[0].tid, 4242u);
  EXPECT_EQ(batch.api_calls[3].correlation_id, 13u);
  EXPECT_EQ(Name(batch.api_calls[4].name), "cuLaunchKernel");
  EXPECT_EQ(batch.api_calls[4].domain, 2u);
  EXPECT_EQ(Name(batch.api_calls[5].name), "runtime api 9999");
  EXPECT_EQ(resolver_calls_.load(), 3);  // one per distinct (domain, cbid)
}

TEST_P(ActivityDecoderTest, ExternalCorrelationsOfSmprofCarryTheAnnotationName) {
  const NameId annotation = NameTable::Get().Intern("forward");
  CUpti_ActivityExternalCorrelation ours{};
  ours.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  ours.externalKind = kSmprofExternalCorrelationKind;
  ours.externalId = annotation;
  ours.correlationId = 41;
  CUpti_ActivityExternalCorrelation kineto = ours;
  kineto.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  kineto.externalId = 123456789012ull;
  ActivityBuffer buffer;
  buffer.Add(ours).Add(kineto);
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.external_correlations.size(), 2u);
  EXPECT_EQ(batch.external_correlations[0].correlation_id, 41u);
  EXPECT_EQ(batch.external_correlations[0].external_kind, kSmprofExternalCorrelationKindValue);
  EXPECT_EQ(Name(batch.external_correlations[0].name), "forward");
  EXPECT_EQ(batch.external_correlations[1].external_id, 123456789012ull);
  EXPECT_EQ(batch.external_correlations[1].name, 0u);
}

TEST_P(ActivityDecoderTest, MarkersPairAcrossBuffersAndThreads) {
  ActivityBuffer first;
  first.Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 1000, 11, "step", nullptr))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 1100, 12, "load", "data"))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 1200, 11, "checkpoint", nullptr));
  const GpuBatch a = Decode(first);
  ASSERT_EQ(a.markers.size(), 1u);
  EXPECT_EQ(Name(a.markers[0].name), "checkpoint");
  EXPECT_EQ(a.markers[0].start_ns, a.markers[0].end_ns);

  ActivityBuffer second;  // ends arrive in another buffer, in another order
  second.Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 1900, 12, nullptr, nullptr))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 2000, 11, nullptr, nullptr))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 2100, 11, nullptr, nullptr));
  const GpuBatch b = Decode(second);
  ASSERT_EQ(b.markers.size(), 2u);
  EXPECT_EQ(Name(b.markers[0].name), "load");
  EXPECT_EQ(Name(b.markers[0].domain), "data");
  EXPECT_EQ(b.markers[0].tid, 12u);
  EXPECT_EQ(b.markers[0].start_ns, 1100);
  EXPECT_EQ(b.markers[0].end_ns, 1900);
  EXPECT_EQ(Name(b.markers[1].name), "step");
  EXPECT_EQ(Name(b.markers[1].domain), "");
  EXPECT_EQ(b.markers[1].end_ns - b.markers[1].start_ns, 1000);
  EXPECT_EQ(decoder_.stats().marker_unmatched_end, 1u);
}

TEST_P(ActivityDecoderTest, OpenMarkersAreBoundedAndOverflowIsCounted) {
  ActivityDecoder::Options options = Options();
  options.max_open_markers = 2;
  ActivityDecoder decoder(options);
  ActivityBuffer buffer;
  for (std::uint32_t id = 1; id <= 5; ++id) {
    buffer.Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, 100 * id, 1, "r", nullptr));
  }
  for (std::uint32_t id = 1; id <= 5; ++id) {
    buffer.Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, 1000 + id, 1, nullptr, nullptr));
  }
  GpuBatch batch;
  decoder.Decode(buffer.data(), buffer.size(), &batch);
  EXPECT_EQ(batch.markers.size(), 2u);
  EXPECT_EQ(decoder.stats().marker_overflow, 3u);
  EXPECT_EQ(decoder.stats().marker_unmatched_end, 3u);
}

TEST_P(ActivityDecoderTest, ZeroAndBackwardTimestampsAreDroppedAndCounted) {
  ActivityBuffer buffer;
  buffer.Add(testing::Kernel("k", 0, 100, 0, 1, 1))
      .Add(testing::Kernel("k", 500, 400, 0, 1, 2))
      .Add(testing::Memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 8, 100, 0, 3))
      .Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, 0, 0, 1, 4))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 1, 0, 1, "m", nullptr))
      .Add(testing::Kernel("k", 600, 600, 0, 1, 5));  // zero-length is fine
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.activities.size(), 1u);
  EXPECT_EQ(batch.activities[0].correlation_id, 5u);
  EXPECT_TRUE(batch.api_calls.empty());
  EXPECT_TRUE(batch.markers.empty());
  EXPECT_EQ(decoder_.stats().zero_timestamps, 4u) << "a 0 start or end in a buffer of finished records";
  EXPECT_EQ(decoder_.stats().incomplete, 0u);
  EXPECT_EQ(decoder_.stats().invalid_timestamps, 1u) << "end before start";
}

// Only the forced flush of a stop that did not wait for the GPU can hand
// back work still running; before it, a zero stamp is CUPTI's defect.
TEST_P(ActivityDecoderTest, ZeroStampsAreUnfinishedWorkOnlyOnceTheCollectorExpectsIt) {
  ActivityBuffer before;
  before.Add(testing::Kernel("k", 100, 0, 0, 1, 1))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 1, 0, 1, "m", nullptr));
  Decode(before);
  decoder_.ExpectUnfinishedWork();
  ActivityBuffer after;
  after.Add(testing::Kernel("k", 200, 0, 0, 1, 2))
      .Add(testing::Kernel("k", 0, 0, 0, 1, 3))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 2, 0, 1, "m", nullptr));
  Decode(after);
  EXPECT_EQ(decoder_.stats().zero_timestamps, 2u);
  EXPECT_EQ(decoder_.stats().incomplete, 3u);
}

// A session started after PyTorch created its context gets no CONTEXT record:
// the kernels and copies on that context still say which device it is.
TEST_P(ActivityDecoderTest, SynchronizationsLearnTheirDeviceFromKernelsWithoutContextRecords) {
  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sync.start = 300;
  sync.end = 400;
  sync.contextId = 4;  // testing::Kernel puts device 3 on context 4
  sync.streamId = 0xffffffffu;
  CUpti_ActivityMemcpy6 copy = testing::Memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8, 500, 600, 2);
  copy.contextId = 9;
  copy.deviceId = 6;
  CUpti_ActivitySynchronization2 later_sync = sync;
  later_sync.contextId = 9;
  ActivityBuffer first;
  first.Add(testing::Kernel("k", 100, 200, 3, 1, 1)).Add(sync);
  ActivityBuffer second;
  second.Add(copy).Add(later_sync);
  const GpuBatch a = Decode(first);
  const GpuBatch b = Decode(second);
  ASSERT_EQ(a.activities.size(), 2u);
  EXPECT_EQ(a.activities[1].device, 3u);
  ASSERT_EQ(b.activities.size(), 2u);
  EXPECT_EQ(b.activities[1].device, 6u);
}

// Another CUPTI client's timestamp callback (Kineto's TSC clock) or CUPTI's
// own clock puts records far from the session's CLOCK_MONOTONIC span: they
// are dropped and counted, never written as if they were on it.
TEST_P(ActivityDecoderTest, RecordsOnAnotherClockAreDroppedAndCounted) {
  ActivityDecoder::Options options = Options();
  const std::int64_t now = NowNs();
  options.earliest_ns = now - 1'000'000;
  ActivityDecoder decoder(options);
  const auto at = [now](std::int64_t offset) { return static_cast<std::uint64_t>(now + offset); };
  const std::uint64_t tsc = at(0) * 3;  // ticks of a 3 GHz counter since boot
  ActivityBuffer buffer;
  buffer.Add(testing::Kernel("k", at(0), at(10), 0, 1, 1))
      .Add(testing::Kernel("k", tsc, tsc + 30, 0, 1, 2))
      .Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, at(-2'000'000), at(-1'900'000), 1, 3))
      .Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, at(5), at(6), 1, 4))
      .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 1, tsc, 1, "m", nullptr));
  GpuBatch batch;
  decoder.Decode(buffer.data(), buffer.size(), &batch);
  ASSERT_EQ(batch.activities.size(), 1u);
  EXPECT_EQ(batch.activities[0].correlation_id, 1u);
  ASSERT_EQ(batch.api_calls.size(), 1u);
  EXPECT_EQ(batch.api_calls[0].correlation_id, 4u);
  EXPECT_TRUE(batch.markers.empty());
  EXPECT_EQ(decoder.stats().foreign_timebase, 3u);
}

TEST_P(ActivityDecoderTest, TruncatedBufferKeepsTheWholeRecordsBeforeTheCut) {
  ActivityBuffer buffer;
  buffer.Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, 10, 20, 1, 1))
      .Add(testing::Kernel("k", 30, 40, 0, 1, 1))
      .Add(testing::Kernel("k", 50, 60, 0, 1, 2));
  GpuBatch batch;
  decoder_.Decode(buffer.data(), buffer.size() - 100, &batch);
  EXPECT_EQ(batch.api_calls.size(), 1u);
  EXPECT_EQ(batch.activities.size(), 1u);
  EXPECT_EQ(decoder_.stats().truncated_buffers, 1u);
  GpuBatch tiny;  // shorter than one record header
  decoder_.Decode(buffer.data(), 3, &tiny);
  EXPECT_EQ(tiny.size(), 0u);
  EXPECT_EQ(decoder_.stats().truncated_buffers, 2u);
  GpuBatch whole;
  decoder_.Decode(buffer.data(), buffer.size(), &whole);
  EXPECT_EQ(whole.size(), 3u);
  EXPECT_EQ(decoder_.stats().truncated_buffers, 2u);
}

TEST_P(ActivityDecoderTest, KindsNotRecordedAreSkippedAndKindsNotKnownStopTheBuffer) {
  CUpti_ActivityCudaEvent2 event{};
  event.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  CUpti_ActivityAPI alien{};
  alien.kind = static_cast<CUpti_ActivityKind>(200);
  ActivityBuffer buffer;
  buffer.Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, 10, 20, 1, 1))
      .Add(event)
      .Add(testing::Kernel("k", 30, 40, 0, 1, 1))
      .Add(alien)
      .Add(testing::Kernel("k", 50, 60, 0, 1, 2));
  const GpuBatch batch = Decode(buffer);
  EXPECT_EQ(batch.api_calls.size(), 1u);
  EXPECT_EQ(batch.activities.size(), 1u);
  const ActivityDecoderStats stats = decoder_.stats();
  EXPECT_EQ(stats.unknown_kind, 1u);
  EXPECT_EQ(stats.records_by_kind[CUPTI_ACTIVITY_KIND_CUDA_EVENT], 1u);
  EXPECT_EQ(stats.unreadable_buffers, 1u);
}

TEST_P(ActivityDecoderTest, DevicesContextsAndOverheads) {
  ActivityBuffer buffer;
  for (std::uint32_t id = 0; id < 2; ++id) {
    CUpti_ActivityDevice5 device{};
    device.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    device.id = id;
    device.name = "NVIDIA H200";
    device.numMultiprocessors = 132;
    device.globalMemorySize = 150ull << 30;
    device.globalMemoryBandwidth = 4800000000ull;
    device.computeCapabilityMajor = 9;
    device.computeCapabilityMinor = 0;
    device.maxThreadsPerBlock = 1024;
    for (int b = 0; b < 16; ++b) device.uuid.bytes[b] = static_cast<char>(0x10 * id + b);
    CUpti_ActivityContext3 context{};
    context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    context.contextId = 10 + id;
    context.deviceId = id;
    buffer.Add(device).Add(context);
  }
  CUpti_ActivityOverhead3 overhead{};
  overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  overhead.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  overhead.objectId.pt.threadId = 777;
  overhead.start = 100;
  overhead.end = 250;
  buffer.Add(overhead);
  const GpuBatch batch = Decode(buffer);
  ASSERT_EQ(batch.devices.size(), 2u);
  EXPECT_EQ(batch.devices[1].id, 1u);
  EXPECT_EQ(batch.devices[1].name, "NVIDIA H200");
  EXPECT_EQ(batch.devices[0].uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(batch.devices[1].sm_count, 132u);
  EXPECT_EQ(batch.devices[1].global_memory_bytes, 150ull << 30);
  EXPECT_EQ(batch.devices[1].compute_capability_major, 9u);
  EXPECT_EQ(batch.devices[1].global_memory_bandwidth_kbps, 4800000000ull);
  EXPECT_EQ(batch.devices[1].max_threads_per_block, 1024u);
  ASSERT_EQ(batch.contexts.size(), 2u);
  EXPECT_EQ(batch.contexts[1].id, 11u);
  EXPECT_EQ(batch.contexts[1].device, 1u);
  ASSERT_EQ(batch.overheads.size(), 1u);
  EXPECT_EQ(Name(batch.overheads[0].name), "buffer flush");
  EXPECT_EQ(batch.overheads[0].tid, 777u);
  EXPECT_EQ(batch.overheads[0].end_ns - batch.overheads[0].start_ns, 150);
}

TEST_P(ActivityDecoderTest, AReusedNamePointerWithNewTextIsDescribedAgain) {
  char name[32] = "sgemm_kernel";
  ActivityBuffer first;
  first.Add(testing::Kernel(name, 10, 20, 0, 1, 1));
  const GpuBatch a = Decode(first);
  std::snprintf(name, sizeof(name), "%s", "hgemm_kernel");  // a module unloaded, another loaded there
  ActivityBuffer second;
  second.Add(testing::Kernel(name, 30, 40, 0, 1, 2));
  const GpuBatch b = Decode(second);
  EXPECT_EQ(Name(a.activities[0].name), "sgemm_kernel");
  EXPECT_EQ(a.activities[0].precision, static_cast<std::uint32_t>(Precision::kFp32));
  EXPECT_EQ(Name(b.activities[0].name), "hgemm_kernel");
  EXPECT_EQ(b.activities[0].precision, static_cast<std::uint32_t>(Precision::kFp16));
}

// CUPTI's clock as the clock's read gives it: a fixed reading.
CUptiResult FixedCuptiTime(std::uint64_t* ns) {
  *ns = 1'000'000;
  return CUPTI_SUCCESS;
}

TEST_P(ActivityDecoderTest, TheClockMovesEveryRecordToTheSessionTimebaseKeepingDurations) {
  const CuptiClock clock(FixedCuptiTime);
  ActivityDecoder::Options options = Options();
  options.clock = &clock;
  ActivityDecoder decoder(options);
  ActivityBuffer buffer;
  buffer.Add(testing::Kernel("k", 5000, 6000, 0, 1, 1))
      .Add(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, 4000, 4500, 1, 1));
  GpuBatch batch;
  decoder.Decode(buffer.data(), buffer.size(), &batch);
  ASSERT_EQ(batch.activities.size(), 1u);
  ASSERT_EQ(batch.api_calls.size(), 1u);
  EXPECT_EQ(batch.activities[0].start_ns, clock.ToSession(5000));
  EXPECT_NE(batch.activities[0].start_ns, 5000);
  EXPECT_EQ(batch.activities[0].end_ns - batch.activities[0].start_ns, 1000);
  EXPECT_EQ(batch.api_calls[0].start_ns, clock.ToSession(4000));
  EXPECT_EQ(batch.api_calls[0].end_ns - batch.api_calls[0].start_ns, 500);
}

TEST_P(ActivityDecoderTest, BuffersCompletingOnSeveralThreadsAreAllDecoded) {
  constexpr int kThreads = 4;
  constexpr int kBuffersPerThread = 50;
  std::vector<std::thread> threads;
  std::vector<std::size_t> kernels(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBuffersPerThread; ++b) {
        ActivityBuffer buffer;
        const std::uint32_t id = static_cast<std::uint32_t>(t * 1000 + b + 1);
        buffer.Add(testing::Kernel("elementwise_kernel", 10, 20, 0, 1, id))
            .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, 10, t, "r", nullptr))
            .Add(testing::Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, 30, t, nullptr, nullptr));
        GpuBatch batch;
        decoder_.Decode(buffer.data(), buffer.size(), &batch);
        kernels[t] += batch.activities.size() + batch.markers.size();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(kernels[t], 2u * kBuffersPerThread);
  EXPECT_EQ(decoder_.stats().records_by_kind[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL],
            static_cast<std::uint64_t>(kThreads * kBuffersPerThread));
}

// libcupti from CUDA 12 fills buffers with its own record versions
// (CUpti_ActivityKernel9, Memcpy5, ...); its iterator steps by their sizes and
// the decoder reads them through the CUDA 13 structs. That is correct only
// while every field the decoder reads sits at the same offset in both.
#define SMPROF_SAME_OFFSET(old_struct, new_struct, field) \
  static_assert(offsetof(old_struct, field) == offsetof(new_struct, field), #old_struct "." #field " moved")
#define SMPROF_SAME_STREAM_FIELDS(old_struct, new_struct)    \
  SMPROF_SAME_OFFSET(old_struct, new_struct, kind);          \
  SMPROF_SAME_OFFSET(old_struct, new_struct, start);         \
  SMPROF_SAME_OFFSET(old_struct, new_struct, end);           \
  SMPROF_SAME_OFFSET(old_struct, new_struct, deviceId);      \
  SMPROF_SAME_OFFSET(old_struct, new_struct, contextId);     \
  SMPROF_SAME_OFFSET(old_struct, new_struct, streamId);      \
  SMPROF_SAME_OFFSET(old_struct, new_struct, correlationId); \
  SMPROF_SAME_OFFSET(old_struct, new_struct, graphNodeId);   \
  SMPROF_SAME_OFFSET(old_struct, new_struct, graphId)

SMPROF_SAME_STREAM_FIELDS(CUpti_ActivityKernel9, CUpti_ActivityKernel10);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, name);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, gridX);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, gridY);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, gridZ);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, blockX);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, blockY);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, blockZ);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, staticSharedMemory);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, dynamicSharedMemory);
SMPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, registersPerThread);
SMPROF_SAME_STREAM_FIELDS(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6);
SMPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, copyKind);
SMPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, bytes);
SMPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, srcKind);
SMPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, dstKind);
SMPROF_SAME_STREAM_FIELDS(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4);
SMPROF_SAME_OFFSET(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4, bytes);
SMPROF_SAME_OFFSET(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4, srcDeviceId);
SMPROF_SAME_OFFSET(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4, dstDeviceId);
SMPROF_SAME_STREAM_FIELDS(CUpti_ActivityMemset3, CUpti_ActivityMemset4);
SMPROF_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, bytes);
SMPROF_SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, type);
SMPROF_SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, start);
SMPROF_SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, end);
SMPROF_SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, contextId);
SMPROF_SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, streamId);
SMPROF_SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, correlationId);
SMPROF_SAME_OFFSET(CUpti_ActivityOverhead2, CUpti_ActivityOverhead3, overheadKind);
SMPROF_SAME_OFFSET(CUpti_ActivityOverhead2, CUpti_ActivityOverhead3, objectKind);
SMPROF_SAME_OFFSET(CUpti_ActivityOverhead2, CUpti_ActivityOverhead3, objectId);
SMPROF_SAME_OFFSET(CUpti_ActivityOverhead2, CUpti_ActivityOverhead3, start);
SMPROF_SAME_OFFSET(CUpti_ActivityOverhead2, CUpti_ActivityOverhead3, end);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, id);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, name);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, uuid);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, numMultiprocessors);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, globalMemorySize);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, globalMemoryBandwidth);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, computeCapabilityMajor);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, computeCapabilityMinor);
SMPROF_SAME_OFFSET(CUpti_ActivityDevice4, CUpti_ActivityDevice5, maxThreadsPerBlock);
SMPROF_SAME_OFFSET(CUpti_ActivityContext2, CUpti_ActivityContext3, contextId);
SMPROF_SAME_OFFSET(CUpti_ActivityContext2, CUpti_ActivityContext3, deviceId);

// libcupti's iterator over a buffer of one record of `size` bytes.
template <std::size_t size>
CUptiResult FirstRecordOnly(std::uint8_t* data, std::size_t valid, CUpti_Activity** record) {
  if (*record != nullptr || valid < size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(data);
  return CUPTI_SUCCESS;
}

// And at run time: a CUDA 12 kernel record, stepped over by its own size,
// decodes field for field.
TEST(ActivityDecoderCuda12, AKernel9RecordDecodesThroughTheCuda13Struct) {
  CUpti_ActivityKernel9 old{};
  old.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  old.start = 1000;
  old.end = 1500;
  old.deviceId = 2;
  old.contextId = 3;
  old.streamId = 14;
  old.correlationId = 99;
  old.gridX = 64;
  old.blockX = 128;
  old.registersPerThread = 40;
  old.graphId = 5;
  old.name = "sgemm_kernel";
  ActivityBuffer buffer;
  buffer.Add(old);
  ActivityDecoder::Options options;
  options.next_record = FirstRecordOnly<sizeof(CUpti_ActivityKernel9)>;
  ActivityDecoder decoder(options);
  GpuBatch batch;
  decoder.Decode(buffer.data(), buffer.size(), &batch);
  ASSERT_EQ(batch.activities.size(), 1u);
  const GpuActivityRecord& k = batch.activities[0];
  EXPECT_EQ(k.end_ns - k.start_ns, 500);
  EXPECT_EQ(k.device, 2u);
  EXPECT_EQ(k.context, 3u);
  EXPECT_EQ(k.stream, 14u);
  EXPECT_EQ(k.correlation_id, 99u);
  EXPECT_EQ(k.grid[0], 64u);
  EXPECT_EQ(k.block[0], 128u);
  EXPECT_EQ(k.registers_per_thread, 40u);
  EXPECT_EQ(k.graph_id, 5u);
  EXPECT_EQ(Name(k.name), "sgemm_kernel");
}

// A libcupti newer than the headers may write longer records than they
// declare: the bytes after its last record are then no sign of truncation.
TEST(ActivityDecoderCuda12, ALongerRecordOfANewerLibcuptiIsNotTakenForATruncatedBuffer) {
  struct LongerKernel {
    CUpti_ActivityKernel10 known;
    std::uint64_t added_by_a_newer_version[4];
  } longer{testing::Kernel("k", 30, 40, 0, 1, 1), {}};
  ActivityBuffer buffer;
  buffer.Add(longer);
  ActivityDecoder::Options options;
  options.next_record = FirstRecordOnly<sizeof(LongerKernel)>;
  for (const std::uint32_t version : {std::uint32_t{CUPTI_API_VERSION}, std::uint32_t{CUPTI_API_VERSION + 1}}) {
    options.cupti_version = version;
    ActivityDecoder decoder(options);
    GpuBatch batch;
    decoder.Decode(buffer.data(), buffer.size(), &batch);
    EXPECT_EQ(batch.activities.size(), 1u) << version;
    EXPECT_EQ(decoder.stats().truncated_buffers, version == CUPTI_API_VERSION ? 1u : 0u) << version;
  }
}

INSTANTIATE_TEST_SUITE_P(Iterators, ActivityDecoderTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Libcupti" : "HeaderIterator";
                         });

}  // namespace
}  // namespace smprof::internal

// The summary's GPU aggregates through partial summaries: two process streams
// of frames with steps, data waits, kernel launches (some kernels shorter than
// their launch call), copies from pageable and pinned memory on two GPUs, read
// by one SummaryBuilder, and by one builder per stream whose saved states are
// merged in the other order: the same JSON and the same saved bytes, so
// gpu.kernel_launch, gpu.pageable_copies, gpu.idle and gpu.overlap survive
// Save / MergeFrom / SortStreams.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/base/partial_codec.h"
#include "analysis/summary/summary_builder.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"

namespace smprof::analysis {
namespace {

const std::map<NameId, std::string> kNames = {{1, "ProfilerStep#1"},   {2, "InputWait"},   {3, "gemm"},
                                              {4, "cudaLaunchKernel"}, {5, "Memcpy HtoD"}, {6, "cudaStreamSynchronize"},
                                              {7, "cudaMemcpyAsync"}};
constexpr int kSteps = 5;
constexpr int kKernelsPerStep = 20;
constexpr std::int64_t kStepNs = 1'000'000;

// Each step: an input wait, kernels launched one after the other (the odd
// ones shorter than their launch), on GPU 0 or 1, then a copy to GPU 0 from
// pageable memory (even steps) or pinned memory, then a synchronization.
trace::Frame StepsFrame(std::int64_t t0) {
  internal::FrameBuilder builder([](NameId id) { return kNames.at(id); },
                                 [](std::uint32_t tid) { return "thread-" + std::to_string(tid); });
  std::vector<internal::AnnotationRecord> annotations;
  internal::GpuBatch batch;
  std::uint32_t correlation = 1;
  for (int step = 0; step < kSteps; ++step) {
    const std::int64_t start = t0 + step * kStepNs;
    annotations.push_back({start, 900'000, 1, 1, 0, 0, 0});
    annotations.push_back({start, 50'000, 2, 1, 1, 0, 0});
    for (int k = 0; k < kKernelsPerStep; ++k) {
      const std::int64_t launch = start + 60'000 + k * 30'000;
      batch.api_calls.push_back({launch, launch + 10'000, 4, 1, correlation, 1});
      internal::GpuActivityRecord kernel;
      kernel.start_ns = launch + 15'000;
      kernel.end_ns = kernel.start_ns + (k % 2 == 1 ? 5'000 : 25'000);
      kernel.name = 3;
      kernel.kind = trace::GPU_KIND_KERNEL;
      kernel.device = k % 3 == 0 ? 1 : 0;
      kernel.correlation_id = correlation++;
      batch.activities.push_back(kernel);
    }
    batch.api_calls.push_back({start + 790'000, start + 795'000, 7, 1, correlation, 1});
    internal::GpuActivityRecord copy;
    copy.start_ns = start + 800'000;
    copy.end_ns = copy.start_ns + 20'000;
    copy.name = 5;
    copy.kind = trace::GPU_KIND_MEMCPY;
    copy.copy_kind = trace::COPY_KIND_HTOD;
    copy.src_memory_kind = step % 2 == 0 ? trace::MEMORY_KIND_PAGEABLE : trace::MEMORY_KIND_PINNED;
    copy.dst_memory_kind = trace::MEMORY_KIND_DEVICE;
    copy.bytes = 1 << 20;
    copy.correlation_id = correlation++;
    batch.activities.push_back(copy);
    batch.api_calls.push_back({start + 850'000, start + 890'000, 6, 1, 0, 1});
  }
  for (std::uint32_t device = 0; device < 2; ++device) {
    batch.devices.push_back({device, "NVIDIA H200", "GPU-" + std::to_string(device), 132, 150ull << 30, 9, 0, 0, 1024});
  }
  builder.Add(annotations.data(), annotations.size());
  trace::Frame frame;
  builder.Build(0, &frame);
  internal::GpuFrameEncoder encoder;
  encoder.Add(std::move(batch));
  encoder.Build(&builder.tables(), &frame);
  return frame;
}

ProcessStream Stream(const std::string& host, std::int64_t pid) {
  ProcessStream stream;
  stream.host = host;
  stream.pid = pid;
  TraceFileEntry file;
  file.path = host + ".smprof";
  file.header.set_host(host);
  file.header.set_pid(pid);
  stream.files.push_back(file);
  return stream;
}

void Read(const ProcessStream& stream, const trace::Frame& frame, SummaryBuilder& builder) {
  builder.BeginStream(stream);
  builder.OnFrame(stream.files.front(), frame);
  FileReadResult read;
  read.file = &stream.files.front();
  read.frames = 1;
  builder.EndFile(read);
  builder.EndStream();
}

std::string Saved(const SummaryBuilder& builder) {
  PartialEncoder out;
  builder.Save(out);
  return out.Take();
}

TEST(GpuPartialSummary, MergedStreamsWriteTheDirectGpuAggregates) {
  const SummaryOptions options;
  constexpr std::int64_t kOrigin = 1'000'000'000;
  const ProcessStream a = Stream("node-a", 11), b = Stream("node-b", 22);
  const trace::Frame frame_a = StepsFrame(kOrigin), frame_b = StepsFrame(kOrigin + 300'000);

  SummaryBuilder direct(options, kOrigin), only_a(options, kOrigin), only_b(options, kOrigin);
  Read(a, frame_a, direct);
  Read(b, frame_b, direct);
  Read(a, frame_a, only_a);
  Read(b, frame_b, only_b);
  const std::string json = direct.Write({});
  // Every new aggregate holds something to merge.
  EXPECT_NE(json.find(R"("tiny_kernels":)" + std::to_string(2 * kSteps * kKernelsPerStep / 2) + ","),
            std::string::npos);
  EXPECT_NE(json.find(R"("pageable_copies":{"count":6,)"), std::string::npos);
  EXPECT_NE(json.find(R"("data_wait_ns":)"), std::string::npos);
  EXPECT_EQ(json.find(R"("step_time_ns":0,)"), std::string::npos);

  SummaryBuilder merged(options, kOrigin);
  for (const std::string& bytes : {Saved(only_b), Saved(only_a)}) {
    PartialDecoder in(bytes);
    merged.MergeFrom(in);
    EXPECT_TRUE(in.done());
  }
  merged.SortStreams();
  EXPECT_EQ(merged.Write({}), json);
  EXPECT_EQ(Saved(merged), Saved(direct));
}

}  // namespace
}  // namespace smprof::analysis

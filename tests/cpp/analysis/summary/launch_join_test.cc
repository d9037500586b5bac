// The summary's join of kernels to their launch calls (gpu.kernel_launch,
// gpu.launch_latency) and of unclaimed GPU work to the annotation open at its
// launch (inferred attribution): within a frame the join does not pass
// through the bounded maps, so a frame of more launches than `max_pending`
// loses none of them; across frames, in either order, the maps join them.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/summary/summary_builder.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"

namespace smprof::analysis {
namespace {

const std::map<NameId, std::string> kNames = {{1, "train"}, {2, "gemm"}, {3, "cudaLaunchKernel"}};
constexpr std::int64_t kOrigin = 1'000'000'000;
constexpr std::uint32_t kAnnotatingThread = 1;
constexpr std::uint32_t kLaunchingThread = 2;  // no annotation of its own: attribution is inferred

// The launch call and the kernel of correlation id `id`, 100 us apart per id.
internal::ApiCallRecord Launch(std::uint32_t id) {
  const std::int64_t start = kOrigin + id * 100'000;
  return {start, start + 10'000, 3, kLaunchingThread, id, 1};
}

internal::GpuActivityRecord Kernel(std::uint32_t id) {
  internal::GpuActivityRecord kernel;
  kernel.start_ns = kOrigin + id * 100'000 + 30'000;
  kernel.end_ns = kernel.start_ns + 20'000;
  kernel.name = 2;
  kernel.kind = trace::GPU_KIND_KERNEL;
  kernel.correlation_id = id;
  return kernel;
}

// A frame of the given launch calls and kernels and, in the first frame, the
// annotation "train" open over every launch.
trace::Frame JoinFrame(std::uint64_t sequence, const std::vector<std::uint32_t>& launches,
                       const std::vector<std::uint32_t>& kernels) {
  internal::FrameBuilder builder([](NameId id) { return kNames.at(id); },
                                 [](std::uint32_t tid) { return "thread-" + std::to_string(tid); });
  std::vector<internal::AnnotationRecord> annotations;
  if (sequence == 0) annotations.push_back({kOrigin, 1'000'000'000, 1, kAnnotatingThread, 0, 0, 0});
  builder.Add(annotations.data(), annotations.size());
  internal::GpuBatch batch;
  for (const std::uint32_t id : launches) batch.api_calls.push_back(Launch(id));
  for (const std::uint32_t id : kernels) batch.activities.push_back(Kernel(id));
  trace::Frame frame;
  builder.Build(sequence, &frame);
  internal::GpuFrameEncoder encoder;
  encoder.Add(std::move(batch));
  encoder.Build(&builder.tables(), &frame);
  return frame;
}

std::vector<std::uint32_t> Ids(std::uint32_t first, std::uint32_t last) {
  std::vector<std::uint32_t> ids;
  for (std::uint32_t id = first; id <= last; ++id) ids.push_back(id);
  return ids;
}

// The summary of one process stream of `frames`.
std::string Summary(const SummaryOptions& options, const std::vector<trace::Frame>& frames) {
  ProcessStream stream;
  stream.host = "node";
  stream.pid = 7;
  TraceFileEntry file;
  file.path = "node.smprof";
  file.header.set_host(stream.host);
  file.header.set_pid(stream.pid);
  stream.files.push_back(file);
  SummaryBuilder builder(options, kOrigin);
  builder.BeginStream(stream);
  for (const trace::Frame& frame : frames) builder.OnFrame(stream.files.front(), frame);
  FileReadResult read;
  read.file = &stream.files.front();
  read.frames = frames.size();
  builder.EndFile(read);
  builder.EndStream();
  return builder.Write({});
}

TEST(LaunchJoin, AFrameOfMoreLaunchesThanTheJoinsHoldLosesNone) {
  SummaryOptions options;
  options.max_pending = 8;
  const std::string json = Summary(options, {JoinFrame(0, Ids(1, 100), Ids(1, 100))});
  EXPECT_NE(json.find(R"("kernels_joined":100,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("launch_latency":{"count":100,)"), std::string::npos) << json;
  // Every kernel's launch time is known, so each is attributed to "train".
  EXPECT_NE(json.find(R"("name":"train","gpu_time_ns":2000000,"activities":100,)"
                      R"("inferred_gpu_time_ns":2000000,"inferred_activities":100})"),
            std::string::npos)
      << json;
}

TEST(LaunchJoin, KernelsAndLaunchesInOtherFramesJoinInEitherOrder) {
  // Frame 0: launches 1-10, kernels 1-5 and 11-15; frame 1: kernels 6-10, launches 11-15.
  std::vector<std::uint32_t> first_kernels = Ids(1, 5);
  for (const std::uint32_t id : Ids(11, 15)) first_kernels.push_back(id);
  const std::string json =
      Summary(SummaryOptions{}, {JoinFrame(0, Ids(1, 10), first_kernels), JoinFrame(1, Ids(11, 15), Ids(6, 10))});
  EXPECT_NE(json.find(R"("kernels_joined":15,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("launch_latency":{"count":15,"total_ns":450000,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("inferred_activities":15})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("unmatched_correlations":0)"), std::string::npos) << json;
}

}  // namespace
}  // namespace smprof::analysis

// The summary's join of kernels to their launch calls (gpu.kernel_launch,
// gpu.launch_latency) and of unclaimed GPU work to the annotation open at its
// launch (inferred attribution): within a frame the join does not pass
// through the bounded maps, so a frame of more launches than `max_pending`
// loses none of them; across frames, in either order, the maps join them.
// A kernel starting before its call is counted apart; CUDA-graph work joins
// only through a graph launch's correlation id; with ranges open on several
// threads, the thread inside a backward range owns the unclaimed work.
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

const std::map<NameId, std::string> kNames = {
    {1, "train"},  {2, "gemm"},     {3, "cudaLaunchKernel"}, {4, "cudaGraphLaunch_v10000"},
    {5, "replay"}, {6, "Backward"}, {7, "Prefetch"},         {8, "Forward"}};
constexpr NameId kLaunchKernel = 3;
constexpr NameId kGraphLaunch = 4;
constexpr NameId kReplay = 5;
constexpr std::int64_t kOrigin = 1'000'000'000;
constexpr std::uint32_t kAnnotatingThread = 1;
constexpr std::uint32_t kLaunchingThread = 2;  // no annotation of its own: attribution is inferred
constexpr std::uint32_t kPrefetchThread = 3;

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

// A frame of `annotations` and `batch`.
trace::Frame FrameWith(std::uint64_t sequence, std::vector<internal::AnnotationRecord> annotations,
                       internal::GpuBatch batch) {
  internal::FrameBuilder builder([](NameId id) { return kNames.at(id); },
                                 [](std::uint32_t tid) { return "thread-" + std::to_string(tid); });
  builder.Add(annotations.data(), annotations.size());
  trace::Frame frame;
  builder.Build(sequence, &frame);
  internal::GpuFrameEncoder encoder;
  encoder.Add(std::move(batch));
  encoder.Build(&builder.tables(), &frame);
  return frame;
}

// A frame of `batch` and, in the first frame, the annotation "train" open over every launch.
trace::Frame FrameOf(std::uint64_t sequence, internal::GpuBatch batch) {
  std::vector<internal::AnnotationRecord> annotations;
  if (sequence == 0) annotations.push_back({kOrigin, 1'000'000'000, 1, kAnnotatingThread, 0, 0, 0});
  return FrameWith(sequence, std::move(annotations), std::move(batch));
}

// A frame of the given launch calls and kernels.
trace::Frame JoinFrame(std::uint64_t sequence, const std::vector<std::uint32_t>& launches,
                       const std::vector<std::uint32_t>& kernels) {
  internal::GpuBatch batch;
  for (const std::uint32_t id : launches) batch.api_calls.push_back(Launch(id));
  for (const std::uint32_t id : kernels) batch.activities.push_back(Kernel(id));
  return FrameOf(sequence, std::move(batch));
}

// Adds `kernels` graph kernels of graph 7 with correlation id `id`, 20 us each.
void AddGraphKernels(std::uint32_t id, int kernels, internal::GpuBatch* batch) {
  for (int i = 0; i < kernels; ++i) {
    internal::GpuActivityRecord kernel = Kernel(id);
    kernel.start_ns += i * 20'000;
    kernel.end_ns += i * 20'000;
    kernel.graph_id = 7;
    kernel.graph_node_id = 100 + static_cast<std::uint64_t>(i);
    batch->activities.push_back(kernel);
  }
}

// Adds `call` (named `name`) with id `id`, the annotation "replay" pushed
// around it (its external correlation), and `kernels` graph kernels of
// graph 7 carrying that id.
void AddGraphLaunch(std::uint32_t id, NameId name, int kernels, internal::GpuBatch* batch) {
  internal::ApiCallRecord call = Launch(id);
  call.name = name;
  call.tid = kAnnotatingThread;
  batch->api_calls.push_back(call);
  batch->external_correlations.push_back({id, internal::kSmprofExternalCorrelationKindValue, kReplay, kReplay});
  AddGraphKernels(id, kernels, batch);
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

TEST(LaunchJoin, AKernelStartingBeforeItsCallIsCountedAndLeftOutOfTheLatency) {
  internal::GpuBatch batch;
  for (const std::uint32_t id : Ids(1, 3)) {
    batch.api_calls.push_back(Launch(id));
    batch.activities.push_back(Kernel(id));
  }
  batch.activities[1].start_ns -= 50'000;  // 20 us before its call
  batch.activities[1].end_ns -= 50'000;
  const std::string json = Summary(SummaryOptions{}, {FrameOf(0, std::move(batch))});
  EXPECT_NE(json.find(R"("launch_latency":{"count":2,"total_ns":60000,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("kernels_before_launch":1)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("kernels_before_launch":1,)"), std::string::npos) << json;  // the drops
  EXPECT_NE(json.find("1 kernels start before their launch call on the host"), std::string::npos) << json;
}

TEST(LaunchJoin, GraphKernelsJoinOnlyThroughAGraphLaunch) {
  // id 50: a graph launch and its 20 kernels; id 51: 3 graph kernels whose id
  // is a cudaLaunchKernel's (CUPTI's wrong ids after the first session).
  internal::GpuBatch batch;
  AddGraphLaunch(50, kGraphLaunch, 20, &batch);
  AddGraphLaunch(51, kLaunchKernel, 3, &batch);
  const std::string json = Summary(SummaryOptions{}, {FrameOf(0, std::move(batch))});
  EXPECT_NE(json.find(R"("graph":{"activities":23,"time_ns":460000,"linked":20,"linked_time_ns":400000,)"
                      R"("unlinked":3,"unlinked_time_ns":60000})"),
            std::string::npos)
      << json;
  // The 20 go to the annotation around their launch; the 3 to none (not
  // "replay" through the wrong id, nor "train" by inference).
  EXPECT_NE(json.find(R"("name":"replay","gpu_time_ns":400000,"activities":20,"inferred_gpu_time_ns":0,)"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find(R"("name":"train","gpu_time_ns")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("graph_activities_unlinked":3)"), std::string::npos) << json;
  EXPECT_NE(json.find("3 CUDA-graph activities (0 ms) joined no graph launch"), std::string::npos) << json;
}

TEST(LaunchJoin, GraphKernelsBeforeTheirLaunchCallWaitForIt) {
  // Frame 0: kernels of ids 60 and 61, no calls; frame 1: 60 is a graph
  // launch, 61 a cudaLaunchKernel; 62's call never comes.
  internal::GpuBatch first;
  AddGraphKernels(60, 5, &first);
  AddGraphKernels(61, 2, &first);
  AddGraphKernels(62, 1, &first);
  internal::GpuBatch second;
  AddGraphLaunch(60, kGraphLaunch, 0, &second);
  AddGraphLaunch(61, kLaunchKernel, 0, &second);
  const std::string json = Summary(SummaryOptions{}, {FrameOf(0, std::move(first)), FrameOf(1, std::move(second))});
  EXPECT_NE(json.find(R"("graph":{"activities":8,"time_ns":160000,"linked":5,"linked_time_ns":100000,)"
                      R"("unlinked":3,)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("name":"replay","gpu_time_ns":100000,"activities":5,)"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"("name":"train","gpu_time_ns")"), std::string::npos) << json;
}

// Launches 20-29 on the autograd thread while the training thread has
// `training_range` open and another thread a later-started "Prefetch".
std::string SummaryWithPrefetchDuring(NameId training_range) {
  const std::vector<internal::AnnotationRecord> annotations = {
      {kOrigin, 100'000'000, training_range, kAnnotatingThread, 0, 0, 0},
      {kOrigin + 1'000'000, 98'000'000, 7, kPrefetchThread, 0, 0, 0}};
  internal::GpuBatch batch;
  for (const std::uint32_t id : Ids(20, 29)) {
    batch.api_calls.push_back(Launch(id));
    batch.activities.push_back(Kernel(id));
  }
  return Summary(SummaryOptions{}, {FrameWith(0, annotations, std::move(batch))});
}

TEST(LaunchJoin, TheThreadInsideBackwardOwnsTheAutogradWork) {
  const std::string json = SummaryWithPrefetchDuring(6);
  EXPECT_NE(json.find(R"("name":"Backward","gpu_time_ns":200000,"activities":10,"inferred_gpu_time_ns":200000,)"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find(R"("name":"Prefetch","gpu_time_ns")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("inferred_by_thread":[{"host":"node","rank":0,"pid":7,"tid":2,"thread":"thread-2",)"
                      R"("inferred_time_ns":200000,"inferred_activities":10,"ambiguous_time_ns":0,)"
                      R"("ambiguous_activities":0}])"),
            std::string::npos)
      << json;
}

TEST(LaunchJoin, WithoutABackwardRangeTheLatestOpenTakesItAndIsCountedAmbiguous) {
  const std::string json = SummaryWithPrefetchDuring(8);
  EXPECT_NE(json.find(R"("name":"Prefetch","gpu_time_ns":200000,"activities":10,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("ambiguous_time_ns":200000,"ambiguous_activities":10})"), std::string::npos) << json;
}

}  // namespace
}  // namespace smprof::analysis

// GpuIdleBreakdown against a brute-force classification of every nanosecond:
// random steps, data waits, launch and sync calls and compute, copy and NCCL
// work on one GPU, fed frame by frame as the drain writes them (annotations
// when they end), swept in several batches.
#include "analysis/summary/gpu_idle_breakdown.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/base/json_writer.h"
#include "analysis/base/partial_codec.h"

namespace smprof::analysis {
namespace {

enum Track { kStep, kDataWait, kSync, kLaunch, kCompute, kCopy, kCommunication, kTracks };

struct Item {
  std::int64_t start;
  std::int64_t end;
  Track track;
};

// The name each track is recorded under.
std::string_view NameOf(Track track) {
  switch (track) {
    case kStep:
      return "ProfilerStep#1";
    case kDataWait:
      return "InputWait";
    case kSync:
      return "cudaStreamSynchronize";
    case kLaunch:
      return "cudaLaunchKernel";
    case kCompute:
      return "gemm";
    case kCopy:
      return "Memcpy HtoD";
    default:
      return "ncclDevKernel_AllReduce";
  }
}

void AddToFrame(const Item& item, internal::FrameRows* frame) {
  const std::string_view name = NameOf(item.track);
  const std::int64_t dur = item.end - item.start;
  switch (item.track) {
    case kStep:
    case kDataWait:
      // The frame's strings are the names of the host tracks, by track.
      frame->annotations.push_back({item.start, dur, name, 1, 0, static_cast<std::uint32_t>(item.track)});
      break;
    case kSync:
    case kLaunch: {
      internal::ApiCallRow call;
      call.start_ns = item.start;
      call.dur_ns = dur;
      call.name = name;
      frame->api_calls.push_back(call);
      break;
    }
    default: {
      internal::GpuActivityRow row;
      row.start_ns = item.start;
      row.dur_ns = dur;
      row.name = name;
      row.device = 3;
      row.kind = item.track == kCopy ? trace::GPU_KIND_MEMCPY : trace::GPU_KIND_KERNEL;
      frame->gpu.push_back(row);
    }
  }
}

GpuIdleTotals BruteForce(const std::vector<Item>& items, std::int64_t span) {
  std::vector<std::array<int, kTracks>> open(span + 1, std::array<int, kTracks>{});
  for (const Item& item : items) {
    open[item.start][item.track] += 1;
    open[item.end][item.track] -= 1;
  }
  std::array<int, kTracks> now{};
  GpuIdleTotals t;
  for (std::int64_t ns = 0; ns < span; ++ns) {
    for (int k = 0; k < kTracks; ++k) now[k] += open[ns][k];
    const bool step = now[kStep] > 0, compute = now[kCompute] > 0, copy = now[kCopy] > 0,
               nccl = now[kCommunication] > 0;
    t.copy_ns += copy;
    t.communication_total_ns += nccl;
    t.copy_exposed_ns += copy && !compute;
    t.communication_exposed_ns += nccl && !compute;
    if (!step) continue;
    t.step_ns += 1;
    if (compute || (copy && !nccl)) continue;
    if (nccl) {
      t.communication_ns += 1;
    } else if (now[kDataWait] > 0) {
      t.data_wait_ns += 1;
    } else if (now[kSync] > 0) {
      t.sync_ns += 1;
    } else if (now[kLaunch] > 0) {
      t.launch_bound_ns += 1;
    } else {
      t.unexplained_ns += 1;
    }
  }
  return t;
}

TEST(GpuIdleBreakdown, MatchesBruteForceAcrossBatches) {
  std::mt19937_64 random(7);
  constexpr std::int64_t kSpan = 400'000;
  constexpr std::int64_t kStepLength = 20'000;
  std::vector<Item> items;
  for (std::int64_t start = 100; start + kStepLength < kSpan; start += kStepLength + 3'000) {
    items.push_back({start, start + kStepLength - static_cast<std::int64_t>(random() % 5'000), kStep});
  }
  for (int i = 0; i < 12'000; ++i) {
    const Track track = static_cast<Track>(1 + random() % (kTracks - 1));
    const std::int64_t start = static_cast<std::int64_t>(random() % (kSpan - 600));
    items.push_back({start, start + 1 + static_cast<std::int64_t>(random() % 500), track});
  }
  // The drain's order: host annotations when they end, everything else by start.
  const auto arrival = [](const Item& item) { return item.track <= kDataWait ? item.end : item.start; };
  std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) { return arrival(a) < arrival(b); });

  SummaryOptions options;
  options.reorder_window_ns = 1'000;
  GpuIdleBreakdown breakdown(options);
  ProcessStream stream;
  breakdown.BeginStream(stream);
  TraceFileEntry file;
  internal::FrameRows frame;
  frame.strings = {NameOf(kStep), NameOf(kDataWait)};
  frame.has_gpu = frame.has_api_calls = true;
  for (std::size_t i = 0; i < items.size(); ++i) {
    AddToFrame(items[i], &frame);
    if (i % 300 == 299 || i + 1 == items.size()) {
      breakdown.AddFrame(file, frame);
      frame.annotations.clear();
      frame.api_calls.clear();
      frame.gpu.clear();
    }
  }
  breakdown.EndStream();

  const GpuIdleTotals expected = BruteForce(items, kSpan);
  const GpuIdleTotals got = breakdown.total();
  EXPECT_EQ(breakdown.late_intervals(), 0u);
  EXPECT_EQ(got.step_ns, expected.step_ns);
  EXPECT_EQ(got.launch_bound_ns, expected.launch_bound_ns);
  EXPECT_EQ(got.data_wait_ns, expected.data_wait_ns);
  EXPECT_EQ(got.sync_ns, expected.sync_ns);
  EXPECT_EQ(got.communication_ns, expected.communication_ns);
  EXPECT_EQ(got.unexplained_ns, expected.unexplained_ns);
  EXPECT_EQ(got.copy_ns, expected.copy_ns);
  EXPECT_EQ(got.copy_exposed_ns, expected.copy_exposed_ns);
  EXPECT_EQ(got.communication_total_ns, expected.communication_total_ns);
  EXPECT_EQ(got.communication_exposed_ns, expected.communication_exposed_ns);
  EXPECT_GT(got.idle_ns(), 0);
}

// Copies [10 i, 10 i + 5) for i below 5,000 in one frame, then `late` in the next, with no reorder
// window (the frontier follows the newest start, or the bound's half that ends first).
GpuIdleBreakdown AfterALateCopy(std::size_t max_pending, const Item& late) {
  SummaryOptions options;
  options.reorder_window_ns = 0;
  options.max_pending = max_pending;
  GpuIdleBreakdown breakdown(options);
  ProcessStream stream;
  breakdown.BeginStream(stream);
  TraceFileEntry file;
  internal::FrameRows frame;
  frame.has_gpu = true;
  for (std::int64_t i = 0; i < 5'000; ++i) AddToFrame({i * 10, i * 10 + 5, kCopy}, &frame);
  breakdown.AddFrame(file, frame);
  frame.gpu.clear();
  AddToFrame(late, &frame);
  breakdown.AddFrame(file, frame);
  breakdown.EndStream();
  return breakdown;
}

TEST(GpuIdleBreakdown, LateIntervalsCountOnlyAfterTheFrontier) {
  // max_pending 8 forces a sweep of the older half once more wait; the late copy is long before the frontier.
  const GpuIdleBreakdown breakdown = AfterALateCopy(8, {0, 100, kCopy});
  EXPECT_EQ(breakdown.late_intervals(), 1u);
  EXPECT_EQ(breakdown.total().copy_ns, 5'000 * 5);
}

TEST(GpuIdleBreakdown, LateIntervalAcrossTheFrontierCountsFromIt) {
  // The frontier is 49,990 after the first frame; the late copy reaches past it.
  const GpuIdleBreakdown breakdown = AfterALateCopy(SummaryOptions().max_pending, {0, 60'000, kCopy});
  EXPECT_EQ(breakdown.late_intervals(), 1u);
  // The 4,999 copies swept before it, then its part after the frontier (which covers the last copy).
  EXPECT_EQ(breakdown.total().copy_ns, 4'999 * 5 + (60'000 - 49'990));
}

// One process stream of random steps, waits, calls and work on two GPUs (ids 3 and `other_device`).
void FeedStream(GpuIdleBreakdown& breakdown, const std::string& host, std::int64_t pid, std::uint32_t other_device,
                std::uint64_t seed) {
  std::mt19937_64 random(seed);
  ProcessStream stream;
  stream.host = host;
  stream.pid = pid;
  breakdown.BeginStream(stream);
  TraceFileEntry file;
  internal::FrameRows frame;
  frame.strings = {NameOf(kStep), NameOf(kDataWait)};
  frame.has_gpu = frame.has_api_calls = true;
  for (std::int64_t start = 0; start < 200'000; start += 10'000) {
    AddToFrame({start, start + 9'000, kStep}, &frame);
    for (int i = 0; i < 300; ++i) {
      const Track track = static_cast<Track>(1 + random() % (kTracks - 1));
      const std::int64_t at = start + static_cast<std::int64_t>(random() % 9'000);
      AddToFrame({at, at + 1 + static_cast<std::int64_t>(random() % 700), track}, &frame);
      if (track >= kCompute && random() % 2 == 0) frame.gpu.back().device = other_device;
    }
    breakdown.AddFrame(file, frame);
    frame.annotations.clear();
    frame.api_calls.clear();
    frame.gpu.clear();
  }
  AddToFrame({0, 50, kCopy}, &frame);  // late: before the swept frontier
  breakdown.AddFrame(file, frame);
  breakdown.EndStream();
}

std::string Json(const GpuIdleBreakdown& breakdown) {
  JsonWriter out;
  out.BeginArray();
  breakdown.WriteIdle(out);
  breakdown.WriteOverlap(out);
  out.EndArray();
  return out.text();
}

std::string Saved(const GpuIdleBreakdown& breakdown) {
  PartialEncoder out;
  breakdown.Save(out);
  return out.Take();
}

SummaryOptions SmallWindow() {
  SummaryOptions options;
  options.reorder_window_ns = 0;
  options.max_pending = 8;  // sweeps while the stream is read, so late intervals happen
  return options;
}

TEST(GpuIdleBreakdownPartial, MergedInAnyOrderWritesTheDirectJson) {
  const SummaryOptions options = SmallWindow();
  GpuIdleBreakdown direct(options), first(options), second(options);
  FeedStream(direct, "a", 1, 0, 1);
  FeedStream(direct, "b", 2, 5, 2);
  FeedStream(first, "a", 1, 0, 1);
  FeedStream(second, "b", 2, 5, 2);
  ASSERT_GT(direct.late_intervals(), 0u);

  GpuIdleBreakdown merged(options);  // the second stream's partial first, then sorted
  for (const std::string& bytes : {Saved(second), Saved(first)}) {
    PartialDecoder in(bytes);
    merged.MergeFrom(in);
    EXPECT_TRUE(in.done());
  }
  merged.ReorderStreams({1, 0});
  EXPECT_EQ(Json(merged), Json(direct));
  EXPECT_EQ(Saved(merged), Saved(direct));
}

TEST(GpuIdleBreakdownPartial, DamagedBytesAreInvalidArguments) {
  const SummaryOptions options = SmallWindow();
  GpuIdleBreakdown one(options);
  FeedStream(one, "a", 1, 0, 1);
  const std::string bytes = Saved(one);
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    GpuIdleBreakdown back(options);
    PartialDecoder in(std::string_view(bytes).substr(0, size));
    EXPECT_THROW(back.MergeFrom(in), std::invalid_argument) << size;
  }
  PartialEncoder twice;  // one stream listing GPU 3 twice
  twice.Uint(0);
  twice.Uint(1);
  twice.String("a");
  twice.Int(0);
  twice.Int(1);
  twice.Uint(1);
  twice.Uint(2);
  for (int device = 0; device < 2; ++device) {
    twice.Uint(3);
    for (int field = 0; field < 10; ++field) twice.Int(0);
  }
  GpuIdleBreakdown back(options);
  PartialDecoder in(twice.bytes());
  EXPECT_THROW(back.MergeFrom(in), std::invalid_argument);
}

TEST(ApiCallRoleOf, NamesLaunchesAndBlockingCalls) {
  EXPECT_EQ(ApiCallRoleOf("cudaLaunchKernel"), ApiCallRole::kLaunch);
  EXPECT_EQ(ApiCallRoleOf("cuLaunchKernelEx"), ApiCallRole::kLaunch);
  EXPECT_EQ(ApiCallRoleOf("cudaGraphLaunch_v10000"), ApiCallRole::kLaunch);
  EXPECT_EQ(ApiCallRoleOf("cudaStreamSynchronize"), ApiCallRole::kSync);
  EXPECT_EQ(ApiCallRoleOf("cudaDeviceSynchronize_v3020"), ApiCallRole::kSync);
  EXPECT_EQ(ApiCallRoleOf("cudaMemcpy"), ApiCallRole::kSync);
  EXPECT_EQ(ApiCallRoleOf("cuMemcpyDtoH_v2"), ApiCallRole::kSync);
  EXPECT_EQ(ApiCallRoleOf("cudaMemcpyAsync"), ApiCallRole::kOther);
  EXPECT_EQ(ApiCallRoleOf("cudaMalloc"), ApiCallRole::kOther);
}

}  // namespace
}  // namespace smprof::analysis

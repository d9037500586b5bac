// GpuRecordBuffer: bounded by a record count, batches that do not fit are
// dropped whole and counted (devices and contexts kept), several CUPTI
// threads add at once, and the drain takes everything.
#include "collectors/cuda/gpu_record_buffer.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace smprof::internal {
namespace {

GpuBatch Batch(std::size_t kernels, std::size_t api_calls) {
  GpuBatch batch;
  batch.activities.resize(kernels);
  batch.api_calls.resize(api_calls);
  return batch;
}

std::size_t Records(const std::vector<GpuBatch>& batches) {
  std::size_t n = 0;
  for (const GpuBatch& b : batches) n += b.size();
  return n;
}

TEST(GpuRecordBuffer, BatchesPastTheBoundAreDroppedWholeAndCounted) {
  GpuRecordBuffer buffer(10);
  EXPECT_TRUE(buffer.Add(Batch(4, 2)));
  EXPECT_FALSE(buffer.Add(Batch(3, 2)));  // 6 + 5 > 10
  EXPECT_TRUE(buffer.Add(Batch(2, 2)));   // 6 + 4 == 10
  EXPECT_EQ(buffer.size(), 10u);
  buffer.CountDropped(7);
  std::vector<GpuBatch> taken;
  EXPECT_EQ(buffer.Take(&taken), 5u + 7u);
  EXPECT_EQ(Records(taken), 10u);
  EXPECT_EQ(buffer.size(), 0u);
  taken.clear();
  EXPECT_EQ(buffer.Take(&taken), 0u);  // counts reset with each Take
  EXPECT_TRUE(taken.empty());
  EXPECT_TRUE(buffer.Add(Batch(10, 0)));  // room again after the drain
}

TEST(GpuRecordBuffer, DevicesAndContextsAreKeptWhenTheirBatchIsDropped) {
  GpuRecordBuffer buffer(1);
  GpuBatch batch = Batch(5, 0);
  batch.devices.push_back(GpuDeviceInfo{0, "NVIDIA H200", "GPU-1", 132, 0, 9, 0, 0, 1024});
  batch.contexts.push_back(GpuContextInfo{1, 0});
  EXPECT_FALSE(buffer.Add(std::move(batch)));
  std::vector<GpuBatch> taken;
  EXPECT_EQ(buffer.Take(&taken), 5u);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_TRUE(taken[0].activities.empty());
  EXPECT_EQ(taken[0].devices.size(), 1u);
  EXPECT_EQ(taken[0].contexts.size(), 1u);
}

TEST(GpuRecordBuffer, ConcurrentAddsAreAllAccountedFor) {
  constexpr int kThreads = 4;
  constexpr int kBatches = 500;
  GpuRecordBuffer buffer(kThreads * kBatches * 3 / 2);  // room for half
  std::vector<std::size_t> taken_records;
  std::uint64_t dropped = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&buffer] {
      for (int i = 0; i < kBatches; ++i) buffer.Add(Batch(2, 1));
    });
  }
  std::vector<GpuBatch> taken;
  for (int i = 0; i < 50; ++i) dropped += buffer.Take(&taken);  // a drain running meanwhile
  for (std::thread& thread : threads) thread.join();
  dropped += buffer.Take(&taken);
  EXPECT_EQ(Records(taken) + dropped, static_cast<std::size_t>(kThreads * kBatches * 3));
  for (const GpuBatch& b : taken) EXPECT_EQ(b.size(), 3u);
}

}  // namespace
}  // namespace smprof::internal

// The drain thread and the GpuRecordBuffer: every batch the CUPTI side adds
// ends up in the trace's GPU tables (split over frames past 65,536 rows),
// devices once, drops counted in the frames and the drain's totals.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "collectors/cuda/gpu_record_buffer.h"
#include "runtime/counter_buffer.h"
#include "runtime/name_table.h"
#include "session/drain_loop.h"
#include "session/rank_file_sequence.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"
#include "trace/file_format.h"
#include "trace/gpu_codec.h"
#include "trace/trace_writer.h"

namespace smprof::internal {
namespace {

GpuBatch Kernels(int count, std::int64_t first_start, NameId name) {
  GpuBatch batch;
  for (int i = 0; i < count; ++i) {
    GpuActivityRecord r;
    r.start_ns = first_start + i * 100;
    r.end_ns = r.start_ns + 80;
    r.name = name;
    r.kind = 1;
    r.correlation_id = static_cast<std::uint32_t>(i + 1);
    batch.activities.push_back(r);
  }
  batch.api_calls.push_back(ApiCallRecord{first_start - 50, first_start - 10, name, 77, 1, 1});
  return batch;
}

TEST(DrainGpu, EveryBufferedRecordIsWrittenAndDropsAreCounted) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/gpu.smprof";
  std::unique_ptr<TraceWriter> writer;
  ASSERT_TRUE(TraceWriter::Create(path, 3, &writer).ok());
  trace::FileHeader header;
  header.set_format_version(1);
  ASSERT_TRUE(writer->Append(trace_format::kHeaderTag, header).ok());
  RankFileSequence files(std::move(writer), header, 3, 0, 0);
  CounterBuffer counters(16);
  GpuRecordBuffer gpu(200'000);

  const NameId kernel = NameTable::Get().Intern("void gemm<float>(float*)");
  GpuBatch first = Kernels(70'000, 1'000'000, kernel);  // more than one frame holds
  first.devices.push_back(GpuDeviceInfo{0, "NVIDIA H200", "GPU-1", 132, 1, 9, 0, 0, 1024});
  first.contexts.push_back(GpuContextInfo{1, 0});
  ASSERT_TRUE(gpu.Add(std::move(first)));
  ASSERT_TRUE(gpu.Add(Kernels(100, 50'000'000, kernel)));
  EXPECT_FALSE(gpu.Add(Kernels(200'000, 60'000'000, kernel)));  // over the bound: 200,001 dropped

  std::atomic<bool> stop{true};  // drain what is there, then return
  DrainResult result;
  DrainJob job{&files, &counters, 0, 10, &stop, &result};
  job.gpu = &gpu;
  RunDrain(job);
  ASSERT_TRUE(files.Finish(result, 0, 5).ok());

  EXPECT_EQ(result.gpu_records, 70'000u + 1 + 100 + 1);
  EXPECT_EQ(result.gpu_records_dropped, 200'001u);
  const testing::TraceFileContents contents = testing::ReadTraceFile(path);
  ASSERT_TRUE(contents.open_status.ok()) << contents.open_status.message();
  ASSERT_TRUE(contents.has_footer);
  EXPECT_EQ(contents.footer.gpu_records_written(), 70'102u);
  EXPECT_EQ(contents.footer.gpu_records_dropped(), 200'001u);
  EXPECT_EQ(contents.footer.cupti_records_dropped(), 5u);
  ASSERT_EQ(contents.frames.size(), 2u);
  std::vector<GpuActivityRow> rows;
  std::vector<ApiCallRow> api;
  int devices = 0;
  for (const trace::Frame& frame : contents.frames) {
    ASSERT_TRUE(DecodeGpuActivities(frame, &rows).ok());
    ASSERT_TRUE(DecodeApiCalls(frame, &api).ok());
    EXPECT_LE(frame.gpu().dur_ns_size(), 1 << 16);
    EXPECT_EQ(frame.gpu_dropped_total(), 200'001u);
    devices += frame.devices_size();
  }
  EXPECT_EQ(rows.size(), 70'100u);
  EXPECT_EQ(api.size(), 2u);
  EXPECT_EQ(devices, 1);
  EXPECT_EQ(rows.front().name, "void gemm<float>(float*)");
  EXPECT_EQ(api.front().tid, 77u);
}

}  // namespace
}  // namespace smprof::internal

// What GPU records cost on the way from CUPTI to the trace, on one core:
//   decode  a CUPTI activity buffer -> GpuBatch (ActivityDecoder), walked by
//           our header iterator and by libcupti's own (when it loads)
//   encode  GpuBatch -> Frame tables -> serialized, zstd-compressed chunk in
//           a trace file (GpuFrameEncoder + TraceWriter, as the drain does)
// in records/s (target: 10 M/s each), and the trace bytes per kernel record.
// The baseline, measured in the same run, is a memcpy of the same buffer.
//
// The buffer is a training step's mix: per launch a runtime API record, an
// external correlation (the annotation) and a kernel (64 distinct names with
// stable pointers, as CUPTI gives them; grid and block sizes, shared memory
// and registers varying with name and launch), on two streams of one GPU,
// with a copy every 16th launch.
//
//   gpu_records_benchmark [--quick]
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "collectors/cuda/activity_decoder.h"
#include "runtime/name_table.h"
#include "smprof/trace.pb.h"
#include "support/cupti_records.h"
#include "trace/file_format.h"
#include "trace/gpu_codec.h"
#include "trace/trace_writer.h"

namespace {

using namespace smprof::internal;
using smprof::NameId;
namespace trace_format = smprof::trace_format;
using smprof::testing::ActivityBuffer;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Median over `reps` runs of `fn`'s CPU time in seconds; `setup` runs
// before each, untimed.
template <typename Setup, typename Fn>
double MedianSeconds(int reps, Setup&& setup, Fn&& fn) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    setup();
    const double start = ThreadCpuSeconds();
    fn();
    times.push_back(ThreadCpuSeconds() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void Nothing() {}

struct Workload {
  std::vector<std::string> kernel_names;  // mangled, at stable addresses
  ActivityBuffer buffer;
  std::size_t records = 0;
  std::size_t kernels = 0;
};

void Build(Workload* w, int launches) {
  for (int i = 0; i < 64; ++i) {
    w->kernel_names.push_back("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm" +
                              std::to_string(i + 1) + "EEEEviT0_T1_");
  }
  std::uint64_t t = 1'700'000'000'000'000'000ull;
  const NameId annotation = NameTable::Get().Intern("forward");
  for (int i = 0; i < launches; ++i) {
    const auto correlation = static_cast<std::uint32_t>(i + 1);
    w->buffer.Add(smprof::testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t,
                                       t + 2'500, 4242, correlation));
    CUpti_ActivityExternalCorrelation external{};
    external.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    external.externalKind = kSmprofExternalCorrelationKind;
    external.externalId = annotation;
    external.correlationId = correlation;
    w->buffer.Add(external);
    const std::uint64_t start = t + 4'000 + static_cast<std::uint64_t>(i % 7) * 130;
    // Launch geometry varies with the kernel and the tensor; two streams.
    const int name = i * 7 % 64;
    CUpti_ActivityKernel10 kernel =
        smprof::testing::Kernel(w->kernel_names[static_cast<std::size_t>(name)].c_str(), start,
                                start + 8'000 + static_cast<std::uint64_t>(i % 13) * 611, 0, 7 + i % 2, correlation);
    kernel.gridX = 108 * (1 + i % 5);
    kernel.gridY = 1;
    kernel.blockX = 128 << (name % 3);
    kernel.staticSharedMemory = 1024 * (name % 4);
    kernel.dynamicSharedMemory = 0;
    kernel.registersPerThread = static_cast<std::uint16_t>(24 + 8 * (name % 6));
    w->buffer.Add(kernel);
    w->records += 3;
    w->kernels += 1;
    if (i % 16 == 0) {
      w->buffer.Add(
          smprof::testing::Memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20, t + 100, t + 90'000, correlation));
      ++w->records;
    }
    t += 9'000 + static_cast<std::uint64_t>(i % 5) * 97;
  }
}

ActivityDecoder::Options DecoderOptions(NextRecordFn next) {
  ActivityDecoder::Options options;
  options.next_record = next;
  options.api_names = [](CUpti_CallbackDomain, std::uint32_t) { return "cudaLaunchKernel"; };
  return options;
}

struct Encoded {
  double seconds = 0;
  std::uint64_t bytes = 0;
};

// Encodes `batch` into frames of at most 65536 rows per table and appends
// them to a trace file (level-3 zstd, the default), as the drain does with
// its long-lived writer, frame and encoder; CPU time and bytes of the frames.
Encoded Encode(const GpuBatch& batch, int reps, bool write = true) {
  Encoded result;
  const std::string path = "/tmp/smprof-gpu-bench-" + std::to_string(getpid()) + ".smprof";
  unlink(path.c_str());
  std::unique_ptr<TraceWriter> writer;
  if (!TraceWriter::Create(path, 3, &writer).ok()) std::abort();
  FrameTables tables([](NameId id) { return NameTable::Get().Lookup(id); },
                     [](std::uint32_t tid) { return "thread-" + std::to_string(tid); });
  GpuFrameEncoder encoder;
  smprof::trace::Frame frame;
  std::uint64_t sequence = 0;
  std::uint64_t before = 0;
  GpuBatch input;
  result.seconds = MedianSeconds(
      reps,
      [&] {
        input = batch;
        before = writer->bytes_written();
      },
      [&] {
        encoder.Add(std::move(input));
        while (encoder.size() > 0) {
          frame.Clear();
          frame.set_sequence(sequence++);
          tables.Reset(&frame);
          encoder.Build(&tables, &frame, 1 << 16);
          if (write && !writer->Append(trace_format::kFrameTag, frame).ok()) std::abort();
        }
      });
  result.bytes = writer->bytes_written() - before;
  unlink(path.c_str());
  return result;
}

GpuBatch KernelsOnly(const GpuBatch& batch) {
  GpuBatch kernels;
  for (const GpuActivityRecord& r : batch.activities) {
    if (r.kind == 1) kernels.activities.push_back(r);
  }
  return kernels;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // About one 8 MB CUPTI buffer, the size buffers are requested in.
  const int launches = quick ? 5'000 : 28'000;
  const int reps = quick ? 3 : 21;
  Workload w;
  Build(&w, launches);
  const double n = static_cast<double>(w.records);
  std::printf("workload: %zu records (%zu kernels) in a %.1f MB CUPTI buffer\n", w.records, w.kernels,
              static_cast<double>(w.buffer.size()) / 1e6);

  std::vector<std::uint8_t> copy(w.buffer.size());
  const double memcpy_s = MedianSeconds(reps, Nothing, [&] {
    std::memcpy(copy.data(), w.buffer.data(), w.buffer.size());
    asm volatile("" : : "r"(copy.data()) : "memory");
  });
  std::printf("%-34s %10.1f M records/s  (baseline)\n", "memcpy of the buffer", n / memcpy_s / 1e6);

  GpuBatch decoded;
  struct Iterator {
    const char* label;
    NextRecordFn next;
  };
  for (const Iterator& it : {Iterator{"decode, header iterator", &HeaderNextRecord},
                             Iterator{"decode, libcupti iterator", smprof::testing::LibcuptiNextRecord()}}) {
    if (it.next == nullptr) {
      std::printf("%-34s (libcupti.so.13 not loadable here)\n", it.label);
      continue;
    }
    ActivityDecoder decoder(DecoderOptions(it.next));
    const double s = MedianSeconds(
        reps, [&] { decoded = GpuBatch(); }, [&] { decoder.Decode(w.buffer.data(), w.buffer.size(), &decoded); });
    std::printf("%-34s %10.1f M records/s  %6.1fx memcpy's time\n", it.label, n / s / 1e6, s / memcpy_s);
  }

  const Encoded mixed = Encode(decoded, reps);
  std::printf("%-34s %10.1f M records/s  %6.1fx memcpy's time  %.2f bytes/record\n", "encode+compress+write, mixed",
              n / mixed.seconds / 1e6, mixed.seconds / memcpy_s, static_cast<double>(mixed.bytes) / n);
  const Encoded frames_only = Encode(decoded, reps, false);
  std::printf("%-34s %10.1f M records/s  %6.1fx memcpy's time\n", "  of which building the frames",
              n / frames_only.seconds / 1e6, frames_only.seconds / memcpy_s);
  const GpuBatch kernels = KernelsOnly(decoded);
  const Encoded kernel_only = Encode(kernels, reps);
  const double k = static_cast<double>(kernels.activities.size());
  std::printf("%-34s %10.1f M records/s  %.2f bytes/kernel record (CUPTI: %zu)\n", "encode+compress+write, kernels",
              k / kernel_only.seconds / 1e6, static_cast<double>(kernel_only.bytes) / k,
              sizeof(CUpti_ActivityKernel10));
  return 0;
}

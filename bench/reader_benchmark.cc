// Reader and summary throughput on a synthetic trace written by the real
// TraceWriter: 2/3 annotations (names from a small set, steps among them),
// 1/3 GPU kernels with their launch API calls, 65,536 events per frame.
//   reader_benchmark [--quick | --events=N]
// Prints, per size: events/s of TraceReader + FrameRows (the wire walker:
// the baseline, what the summary reads with), of TraceReader + protobuf's
// parse + Decode*() (what the exporters read with), of SummarizeJob, each
// per wall-clock second and per CPU second (getrusage: the machine may be
// shared), the summary / read time ratio and SummarizeJob's peak RSS, each
// size in a child process so the peaks are separate. Bounded memory shows as
// the same peak for 1 M and 10 M events. The load average is printed first.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "analysis/summary/summary_builder.h"
#include "trace/file_format.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace {

using smprof::internal::TraceReader;
using smprof::internal::TraceWriter;
namespace trace = smprof::trace;

constexpr int kEventsPerFrame = 65536;

void WriteTrace(const std::string& path, std::int64_t events) {
  std::unique_ptr<TraceWriter> writer;
  if (!TraceWriter::Create(path, 1, &writer).ok()) std::abort();
  trace::FileHeader header;
  header.set_format_version(1);
  header.set_host("bench");
  header.mutable_start()->set_realtime_ns(1'700'000'000'000'000'000);
  writer->Append(smprof::trace_format::kHeaderTag, header);
  std::int64_t t = 0;
  std::uint32_t correlation = 1;
  for (std::int64_t done = 0; done < events;) {
    trace::Frame frame;
    for (const char* name :
         {"", "step", "forward", "backward", "optimizer", "gemm_kernel", "elementwise", "cudaLaunchKernel"}) {
      frame.add_strings(name);
    }
    frame.add_threads()->set_tid(1);
    auto* annotations = frame.mutable_annotations();
    auto* gpu = frame.mutable_gpu();
    auto* api = frame.mutable_api_calls();
    annotations->set_base_ns(t);
    gpu->set_base_ns(t);
    api->set_base_ns(t);
    const int n = static_cast<int>(std::min<std::int64_t>(kEventsPerFrame, events - done));
    for (int i = 0; i < n; ++i, t += 1000) {
      if (i % 3 == 2) {
        const bool first = gpu->dur_ns_size() == 0;
        gpu->add_start_delta_ns(first ? 0 : 1500);
        gpu->add_dur_ns(700 + (i % 7) * 100);
        gpu->add_kind(trace::GPU_KIND_KERNEL);
        gpu->add_device(0);
        gpu->add_stream(7 + i % 2);
        gpu->add_correlation_id(correlation);
        gpu->add_name_index(5 + i % 2);
        gpu->add_precision(4);
        api->add_start_delta_ns(first ? 0 : 1500);
        api->add_dur_ns(300);
        api->add_name_index(7);
        api->add_thread_index(0);
        api->add_correlation_id(correlation++);
      } else {
        annotations->add_start_delta_ns(annotations->dur_ns_size() == 0 ? 0 : (i % 3 == 0 ? 1000 : 2000));
        annotations->add_dur_ns(500 + i % 1000);
        annotations->add_name_index(1 + i % 4);
        annotations->add_thread_index(0);
        annotations->add_depth(0);
      }
    }
    // Columns the writer's GPU table must have for every row.
    for (auto* column :
         {gpu->mutable_context(), gpu->mutable_kernel_class(), gpu->mutable_copy_kind(), gpu->mutable_peer_device(),
          gpu->mutable_graph_id(), gpu->mutable_grid_x(), gpu->mutable_grid_y(), gpu->mutable_grid_z(),
          gpu->mutable_block_x(), gpu->mutable_block_y(), gpu->mutable_block_z(), gpu->mutable_shared_memory_bytes(),
          gpu->mutable_registers_per_thread()}) {
      column->Resize(gpu->dur_ns_size(), 0);
    }
    gpu->mutable_bytes()->Resize(gpu->dur_ns_size(), 0);
    gpu->mutable_graph_node_id()->Resize(gpu->dur_ns_size(), 0);
    api->mutable_domain()->Resize(api->dur_ns_size(), 1);
    writer->Append(smprof::trace_format::kFrameTag, frame);
    done += n;
  }
  trace::Footer footer;
  writer->Append(smprof::trace_format::kFooterTag, footer);
  writer->Close();
}

// Wall-clock and CPU seconds since construction.
class Stopwatch {
 public:
  Stopwatch() : wall_(std::chrono::steady_clock::now()), cpu_(CpuSeconds()) {}
  double wall() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count(); }
  double cpu() const { return CpuSeconds() - cpu_; }

 private:
  static double CpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  }
  std::chrono::steady_clock::time_point wall_;
  double cpu_;
};

// Read + decode the tables the summary uses with FrameRows: the floor for the summary.
// (Not inlined: callgrind then counts it apart, docs/BENCHMARKS.md section 10.)
[[gnu::noinline]] std::int64_t ReadRows(const std::string& path) {
  std::unique_ptr<TraceReader> reader;
  if (!TraceReader::Open(path, &reader).ok()) std::abort();
  smprof::internal::FrameRows rows;
  std::int64_t events = 0;
  while (reader->NextFrame(&rows)) events += rows.annotations.size() + rows.gpu.size() + rows.api_calls.size();
  return events;
}

// The same through protobuf's parse and Decode*(), as the exporters read.
[[gnu::noinline]] std::int64_t ReadMessages(const std::string& path) {
  std::unique_ptr<TraceReader> reader;
  if (!TraceReader::Open(path, &reader).ok()) std::abort();
  trace::Frame frame;
  std::vector<smprof::internal::AnnotationRow> annotations;
  std::vector<smprof::internal::GpuActivityRow> gpu;
  std::vector<smprof::internal::ApiCallRow> api;
  std::int64_t events = 0;
  while (reader->NextFrame(&frame)) {
    annotations.clear();
    gpu.clear();
    api.clear();
    smprof::internal::DecodeAnnotations(frame, &annotations);
    smprof::internal::DecodeGpuActivities(frame, &gpu);
    smprof::internal::DecodeApiCalls(frame, &api);
    events += annotations.size() + gpu.size() + api.size();
  }
  return events;
}

void Measure(const std::string& dir, std::int64_t events) {
  const std::string path = dir + "/bench_" + std::to_string(events) + ".smprof";
  WriteTrace(path, events);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    Stopwatch clock;
    const std::int64_t read = ReadRows(path);
    const double read_s = clock.wall();
    const double read_cpu = clock.cpu();
    clock = Stopwatch();
    if (ReadMessages(path) != read) std::abort();
    const double protobuf_cpu = clock.cpu();
    clock = Stopwatch();
    const std::string summary = smprof::analysis::SummarizeJob({path}, {});
    const double summary_s = clock.wall();
    const double summary_cpu = clock.cpu();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto rate = [read](double seconds) { return read / seconds / 1e6; };
    std::printf("%-11lld %9.1f %9.1f %10.1f %9.1f %9.1f %7.2f %9.2f %9.1f\n", static_cast<long long>(read),
                rate(read_s), rate(read_cpu), rate(protobuf_cpu), rate(summary_s), rate(summary_cpu),
                summary_cpu / read_cpu, summary_s, usage.ru_maxrss / 1024.0);
    std::fflush(stdout);
    _exit(summary.empty() ? 1 : 0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::filesystem::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool one_size = argc > 1 && std::strncmp(argv[1], "--events=", 9) == 0;
  const std::string dir = std::filesystem::temp_directory_path() / ("smprof_reader_bench_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("load average %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  std::printf("%-11s %9s %9s %10s %9s %9s %7s %9s %9s\n", "events", "read", "read/cpu", "pb read/cpu", "summary",
              "summ/cpu", "ratio", "summary s", "RSS MiB");
  std::printf("%-11s %9s %9s %10s %9s %9s %7s %9s %9s\n", "", "Mev/s", "Mev/cpu-s", "Mev/cpu-s", "Mev/s", "Mev/cpu-s",
              "cpu", "", "");
  const std::vector<std::int64_t> sizes = one_size ? std::vector<std::int64_t>{std::atoll(argv[1] + 9)}
                                          : quick  ? std::vector<std::int64_t>{100'000}
                                                   : std::vector<std::int64_t>{1'000'000, 10'000'000};
  for (const std::int64_t events : sizes) Measure(dir, events);
  std::filesystem::remove_all(dir);
  return 0;
}

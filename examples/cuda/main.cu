// Known GPU work under smprof annotations, with its own ground truth.
//
// Two hand-written kernels run a known number of times on two streams, each
// launch bracketed by cudaEvents; then stream synchronizations, host-to-
// device, device-to-device and device-to-host copies, two memsets, and cuBLAS
// GEMMs in fp32 and fp16 (gemm_cublas.cu; skipped, and said so, without
// cuBLAS). Everything runs in one smprof session with EnableCuda=1. At the end
// the program prints, as JSON on stdout, what it did: the trace path, launch
// counts, the annotation each kernel ran under, and the cudaEvent duration of
// every launch. scripts/gpu_check.sh compares that with the trace.
//
//   cuda_app TRACE_PATTERN > truth.json     # e.g. /tmp/gpu/cuda_app_%p.smprof
#include <cuda_runtime.h>
#include <smprof/smprof.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "gemm.h"

namespace {

constexpr int kScaleLaunches = 40;  // on stream a, under "scale_phase"
constexpr int kAddLaunches = 25;    // on stream b, under "add_phase"
constexpr int kGemmCalls = 3;       // per precision
constexpr int kElements = 1 << 22;
constexpr int kRounds = 2000;  // work per element: kernels of a few hundred microseconds

__global__ void smprof_scale(float* x, int n, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.9999f + 0.5f;
  x[i] = v;
}

__global__ void smprof_add(const float* a, float* b, int n, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = b[i];
  const float w = a[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.5f + w;
  b[i] = v;
}

// Launches `kernel` `count` times on `stream`, each between two events.
template <typename Launch>
std::vector<std::pair<cudaEvent_t, cudaEvent_t>> Timed(int count, cudaStream_t stream, Launch launch) {
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events(count);
  for (auto& [start, stop] : events) {
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_CUDA(cudaEventRecord(start, stream));
    launch();
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventRecord(stop, stream));
  }
  return events;
}

std::string Durations(const std::vector<std::pair<cudaEvent_t, cudaEvent_t>>& events) {
  std::string out = "[";
  for (std::size_t i = 0; i < events.size(); ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, events[i].first, events[i].second));
    out += (i ? "," : "") + std::to_string(static_cast<long long>(ms * 1e6));
  }
  return out + "]";
}

}  // namespace

int main(int argc, char** argv) {
  smprof::Config config;
  config.Set("EnableCuda", "1").Set("FlushIntervalMs", "200");
  if (argc > 1) config.Set("RecordFile", argv[1]);
  if (smprof::Status st = smprof::Start(config); !st.ok()) {
    std::fprintf(stderr, "smprof::Start: %s\n", st.message().c_str());
    return 1;
  }

  float *a = nullptr, *b = nullptr, *host = nullptr;
  CHECK_CUDA(cudaMalloc(&a, kElements * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b, kElements * sizeof(float)));
  CHECK_CUDA(cudaMallocHost(&host, kElements * sizeof(float)));
  for (int i = 0; i < kElements; ++i) host[i] = static_cast<float>(i % 7);
  cudaStream_t stream_a, stream_b;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream_a, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream_b, cudaStreamNonBlocking));
  const dim3 block(256), grid((kElements + 255) / 256);

  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> scale_events, add_events;
  {
    SMPROF_ANNOTATE("scale_phase");
    scale_events =
        Timed(kScaleLaunches, stream_a, [&] { smprof_scale<<<grid, block, 0, stream_a>>>(a, kElements, kRounds); });
  }
  {
    SMPROF_ANNOTATE("add_phase");
    add_events =
        Timed(kAddLaunches, stream_b, [&] { smprof_add<<<grid, block, 0, stream_b>>>(a, b, kElements, kRounds); });
  }
  {
    SMPROF_ANNOTATE("sync");
    CHECK_CUDA(cudaStreamSynchronize(stream_a));
    CHECK_CUDA(cudaStreamSynchronize(stream_b));
  }
  {
    SMPROF_ANNOTATE("copies");
    CHECK_CUDA(cudaMemcpyAsync(a, host, kElements * sizeof(float), cudaMemcpyHostToDevice, stream_a));
    CHECK_CUDA(cudaMemcpyAsync(b, a, kElements * sizeof(float), cudaMemcpyDeviceToDevice, stream_a));
    CHECK_CUDA(cudaMemsetAsync(a, 0, kElements * sizeof(float), stream_a));
    CHECK_CUDA(cudaMemcpyAsync(host, b, kElements * sizeof(float), cudaMemcpyDeviceToHost, stream_a));
    CHECK_CUDA(cudaStreamSynchronize(stream_a));
  }

  CHECK_CUDA(cudaMemsetAsync(b, 0, kElements * sizeof(float), stream_a));  // outside any annotation: the 2nd memset
  CHECK_CUDA(cudaStreamSynchronize(stream_a));
  std::string gemm_problem;
  const bool gemm = RunGemms(stream_a, kGemmCalls, &gemm_problem);
  CHECK_CUDA(cudaDeviceSynchronize());
  const std::string scale_ns = Durations(scale_events);
  const std::string add_ns = Durations(add_events);

  if (smprof::Status st = smprof::Stop(); !st.ok()) {
    std::fprintf(stderr, "smprof::Stop: %s\n", st.message().c_str());
    return 1;
  }
  const std::string calls = std::to_string(kGemmCalls);
  const std::string gemm_json = gemm ? "{\"gemm_fp32\": {\"calls\": " + calls +
                                           ", \"precision\": \"fp32\"}, \"gemm_fp16\": {\"calls\": " + calls +
                                           ", \"precision\": \"fp16\"}}"
                                     : "{\"missing\": \"" + gemm_problem + "\"}";
  std::printf(
      "{\"trace\": \"%s\",\n"
      " \"kernels\": {\n"
      "  \"smprof_scale\": {\"count\": %d, \"annotation\": \"scale_phase\", \"event_ns\": %s},\n"
      "  \"smprof_add\": {\"count\": %d, \"annotation\": \"add_phase\", \"event_ns\": %s}},\n"
      " \"memcpy\": {\"HtoD\": 1, \"DtoD\": 1, \"DtoH\": 1},\n"
      " \"memset\": 2,\n"
      " \"gemm\": %s}\n",
      smprof::LastSessionStats().path.c_str(), kScaleLaunches, scale_ns.c_str(), kAddLaunches, add_ns.c_str(),
      gemm_json.c_str());
  return 0;
}

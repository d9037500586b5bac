// correlation_benchmark: what GPU attribution adds to an annotation scope.
//
//   correlation_benchmark [--quick]
//
// While CUDA collection runs, every SMPROF_ANNOTATE / `with annotate` scope
// pushes its name on CUPTI's external-correlation stack and pops it at the
// end (runtime/annotation_correlation.h). Cases, interleaved over repetitions,
// median ns per scope and the ratio to the baseline of the same run:
//
//   baseline      SMPROF_ANNOTATE, profiling, no CUDA collection
//   hooks         the same with the correlation hooks installed, calling a
//                 stand-in for CUPTI's push/pop (a thread-local stack behind
//                 function pointers, as libcupti's is): smprof's share
//   libcupti      cuptiActivityPush/PopExternalCorrelationId of the real
//                 libcupti, called directly. Without a GPU they fail with 999
//                 after trying to initialise the driver: reported as such
//                 (the reason smprof only pushes while a collector is active).
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "collectors/cuda/activity_decoder.h"
#include "collectors/cuda/cupti_library.h"
#include "median.h"
#include "runtime/annotation_correlation.h"
#include "smprof/smprof.h"

namespace {

using smprof::internal::CuptiApi;

thread_local std::vector<std::uint64_t> t_stack;

void StandInPush(smprof::NameId name) { t_stack.push_back(name); }
bool StandInPop() {
  if (t_stack.empty()) return false;
  t_stack.pop_back();
  return true;
}

double NsPerScope(int iters) {
  static const smprof::NameId name = smprof::InternName("bench-scope");
  timespec a{}, b{};
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < iters; ++i) {
    smprof::Scope scope(name);
    asm volatile("" ::: "memory");
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 5 : 21;
  const int iters = quick ? 50000 : 200000;
  const std::string dir = std::filesystem::temp_directory_path() / "smprof-correlation-bench";
  smprof::Config config;
  config.Set("EnableCuda", "0").Set("RecordFile", dir + "/bench_%p_%s.smprof").Set("BucketCount", "64");
  config.Set("CpuProfilingDurationS", "0");

  std::vector<double> baseline, hooks;
  for (int rep = 0; rep <= reps; ++rep) {  // rep 0 warms up
    for (int with_hooks = 0; with_hooks < 2; ++with_hooks) {
      if (!smprof::Start(config).ok()) return 1;
      if (with_hooks) {
        smprof::internal::g_correlation_pop.store(StandInPop);
        smprof::internal::g_correlation_push.store(StandInPush);
      }
      const double ns = NsPerScope(iters);
      smprof::internal::g_correlation_push.store(nullptr);
      smprof::Stop();
      if (rep > 0) (with_hooks ? hooks : baseline).push_back(ns);
    }
  }
  std::filesystem::remove_all(dir);
  const double base = Median(baseline);
  std::printf("| case | median ns/scope | ratio vs baseline |\n|---|---:|---:|\n");
  std::printf("| baseline: SMPROF_ANNOTATE, profiling, no CUDA | %.2f | 1.00x |\n", base);
  std::printf("| hooks: + push/pop through the correlation hooks (stand-in CUPTI) | %.2f | %.2fx |\n", Median(hooks),
              Median(hooks) / base);

  std::string error;
  const CuptiApi* api = smprof::internal::LoadProductionCupti(&error);
  if (api == nullptr) {
    std::printf("| libcupti push/pop pair | not measured: %s | |\n", error.c_str());
    return 0;
  }
  const auto kind = smprof::internal::kSmprofExternalCorrelationKind;
  const CUptiResult first = api->ActivityPushExternalCorrelationId(kind, 1);
  if (first == CUPTI_SUCCESS) api->ActivityPopExternalCorrelationId(kind, nullptr);
  const int pairs = first == CUPTI_SUCCESS ? iters : 200;
  std::vector<double> real;
  for (int rep = 0; rep < reps; ++rep) {
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < pairs; ++i) {
      api->ActivityPushExternalCorrelationId(kind, static_cast<std::uint64_t>(i));
      api->ActivityPopExternalCorrelationId(kind, nullptr);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    real.push_back(((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / pairs);
  }
  std::printf("| libcupti push/pop pair (%s) | %.2f | %.2fx |\n",
              first == CUPTI_SUCCESS ? "succeeds" : smprof::internal::CuptiErrorText(*api, first).c_str(), Median(real),
              Median(real) / base);
  return 0;
}

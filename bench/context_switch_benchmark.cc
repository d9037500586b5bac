// What a profiling session adds to each context switch of the job's threads:
// the default collection opens software perf counters (task-clock,
// context-switches, cpu-migrations) on every thread, and the kernel updates
// them when it switches the thread out and in. Two threads pinned to one core
// pass a token back and forth through a futex, so every round trip is two
// context switches, each from one of the threads to the other; the
// CPU time of the process per round trip is measured in rounds that alternate
// no session (the baseline, twice: the second series is the noise floor),
// the default collection, the default without perf counters (EnablePerf=0),
// and each default software event alone. Sessions write into a temporary
// directory.
//
//   context_switch_benchmark [--quick]
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "smprof/config.h"
#include "smprof/smprof.h"

namespace {

std::atomic<int> turn{0};

void Wait(int mine) {
  while (turn.load(std::memory_order_acquire) != mine) {
    syscall(SYS_futex, reinterpret_cast<int*>(&turn), FUTEX_WAIT_PRIVATE, 1 - mine, nullptr, nullptr, 0);
  }
}

void Pass(int to) {
  turn.store(to, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<int*>(&turn), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

double ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// CPU ns of the process per round trip of the token between two new threads
// pinned to one core.
double RoundTrips(int n) {
  turn.store(0);
  cpu_set_t allowed, one;
  CPU_ZERO(&one);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) {
        CPU_SET(cpu, &one);  // the first core this process may run on
        break;
      }
    }
  }
  const double start = ProcessCpuNs();
  std::thread other([&] {
    sched_setaffinity(0, sizeof one, &one);
    for (int i = 0; i < n; ++i) {
      Wait(1);
      Pass(0);
    }
  });
  std::thread self([&] {
    sched_setaffinity(0, sizeof one, &one);
    for (int i = 0; i < n; ++i) {
      Pass(1);
      Wait(0);
    }
  });
  self.join();
  other.join();
  return (ProcessCpuNs() - start) / n;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int rounds = quick ? 3 : 15;
  const int trips = quick ? 20'000 : 100'000;
  char pattern[] = "/tmp/smprof-switch-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return 1;
  const std::string dir = pattern;
  struct Variant {
    const char* name;
    std::vector<std::pair<const char*, const char*>> settings;  // empty: no session
    std::vector<double> ns;
  };
  std::vector<Variant> variants = {
      {"no session", {}, {}},
      {"no session (noise floor)", {}, {}},
      {"default collection", {{"EnablePerf", "1"}}, {}},
      {"default, EnablePerf=0", {{"EnablePerf", "0"}}, {}},
      {"PerfEvents=task-clock", {{"PerfEvents", "task-clock"}}, {}},
      {"PerfEvents=context-switches", {{"PerfEvents", "context-switches"}}, {}},
      {"PerfEvents=cpu-migrations", {{"PerfEvents", "cpu-migrations"}}, {}},
  };
  RoundTrips(trips / 10);  // warm-up
  for (int r = 0; r < rounds; ++r) {
    for (Variant& v : variants) {
      const bool session = !v.settings.empty();
      if (session) {
        smprof::Config config;
        config.Set("RecordFile", dir + "/switch_%p_%s.smprof").Set("EnableCuda", "0");
        for (const auto& [key, value] : v.settings) config.Set(key, value);
        if (smprof::Status st = smprof::Start(config); !st.ok()) {
          std::fprintf(stderr, "start: %s\n", st.message().c_str());
          return 1;
        }
      }
      v.ns.push_back(RoundTrips(trips));
      if (session) smprof::Stop();
    }
  }
  std::filesystem::remove_all(dir);
  std::printf(
      "context_switch_benchmark: %d rounds x %d round trips (2 switches each) between two threads on one core\n",
      rounds, trips);
  std::printf("| variant | median CPU ns per round trip | min-max | ratio | ns per switch over the baseline |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  double base = 0;
  for (Variant& v : variants) {
    std::sort(v.ns.begin(), v.ns.end());
    const double median = v.ns[v.ns.size() / 2];
    if (base == 0) base = median;
    std::printf("| %s | %.0f | %.0f-%.0f | %.3fx | %+.0f |\n", v.name, median, v.ns.front(), v.ns.back(), median / base,
                (median - base) / 2);
  }
  return 0;
}

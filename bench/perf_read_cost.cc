// What reading a running thread's perf counters costs that thread: the
// sampler reads every counted thread's counters at each sample, and for a
// thread running on another CPU the kernel reads them there (an
// inter-processor interrupt, a VM exit on a virtual machine), taking time from
// the thread. A thread pinned to one core spins for a fixed time while
// another, on a second core, reads the spinner's three software counters
// (task-clock, context-switches, cpu-migrations: the default set where there
// is no PMU) as fast as it can, or not at all; rounds alternate. The spinner's
// lost work divided by the reads is the time each read takes from it.
//
//   perf_read_cost [--quick]
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "median.h"

namespace {

// The first two cores this process may run on (the same one twice if it has one).
std::vector<int> TwoCores() {
  cpu_set_t allowed;
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE && cores.size() < 2; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
    }
  }
  while (cores.size() < 2) cores.push_back(cores.empty() ? 0 : cores.front());
  return cores;
}

void Pin(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  sched_setaffinity(0, sizeof one, &one);
}

struct Round {
  double loops_per_s = 0;
  double reads_per_s = 0;
};

Round Spin(double seconds, bool read, const std::vector<int>& cores) {
  std::atomic<bool> stop{false};
  std::atomic<long> tid{0};
  long loops = 0;
  std::thread spinner([&] {
    Pin(cores[1]);
    tid = syscall(SYS_gettid);
    volatile double x = 1;
    while (!stop.load(std::memory_order_relaxed)) {
      for (int i = 0; i < 1000; ++i) x = x * 1.0000001;
      ++loops;
    }
  });
  while (tid.load() == 0) std::this_thread::yield();
  std::vector<int> fds;
  for (const auto config : {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS}) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = config;
    const long fd = syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(tid.load()), -1, -1, 0);
    if (fd >= 0) fds.push_back(static_cast<int>(fd));
  }
  Pin(cores[0]);
  long reads = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (!read || fds.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    for (const int fd : fds) {
      std::uint64_t value;
      if (::read(fd, &value, sizeof value) == sizeof value) ++reads;
    }
  }
  stop = true;
  spinner.join();
  for (const int fd : fds) close(fd);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (fds.empty()) std::fprintf(stderr, "perf_event_open refused here: no reads\n");
  return {loops / elapsed, reads / elapsed};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int rounds = quick ? 1 : 7;
  const double seconds = quick ? 0.3 : 2.0;
  const std::vector<int> cores = TwoCores();
  std::vector<double> idle, read, reads;
  for (int r = 0; r < rounds; ++r) {
    idle.push_back(Spin(seconds, false, cores).loops_per_s);
    const Round with = Spin(seconds, true, cores);
    read.push_back(with.loops_per_s);
    reads.push_back(with.reads_per_s);
  }
  const double base = Median(idle), slowed = Median(read), rate = Median(reads);
  // The spinner's lost fraction of each second, over the reads of that second.
  const double us_per_read = rate > 0 ? (1 - slowed / base) / rate * 1e6 : 0;
  std::printf("perf_read_cost: %d rounds of %.1f s, spinner on cpu %d, reader on cpu %d\n", rounds, seconds, cores[1],
              cores[0]);
  std::printf("| spinner | loops/s (median) | reads/s of its counters | us of the spinner per read |\n");
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| alone | %.0f | 0 | |\n", base);
  std::printf("| its counters read | %.0f | %.0f | %.1f |\n", slowed, rate, us_per_read);
  return 0;
}

// pool_memory_benchmark: the memory a session holds under load, against its
// configured buffer pool (BucketCount x BucketSizeMB).
//
//   pool_memory_benchmark                         # 64 MiB pool (the default), 8 threads, 3 s
//   pool_memory_benchmark --quick                 # the same for 1 s
//   pool_memory_benchmark --pool-mb=256 --threads=16 --seconds=5
//
// Threads record ranges as fast as they can, faster than the drain writes
// them, so the pool fills and stays full (ranges are dropped and counted).
// The process's peak RSS (VmHWM) over its RSS just before the session
// started, divided by the pool size, is the ratio printed: the pool itself
// is 1.0; the rest is the drain's frame, the compressor and the file cache.
// Peak RSS only rises within a process, so each run is one measurement: run
// it several times for a spread. A measurement, not a test: nothing is
// asserted.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "smprof/annotate.h"
#include "smprof/smprof.h"

namespace {

// A /proc/self/status field in KiB (VmRSS, VmHWM).
long StatusKiB(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field) + 1);
  }
  return -1;
}

long Flag(int argc, char** argv, const char* name, long fallback) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind(prefix, 0) == 0) return std::atol(argv[i] + prefix.size());
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const long pool_mb = Flag(argc, argv, "pool-mb", 64);
  const long threads = Flag(argc, argv, "threads", 8);
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const long seconds = Flag(argc, argv, "seconds", quick ? 1 : 3);
  char dir_template[] = "/tmp/smprof-pool-memory-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return 1;
  const std::string dir = dir_template;

  // Warm up what every session allocates once (thread states, name table).
  smprof::NameId name = smprof::InternName("load");
  const long rss_before_kib = StatusKiB("VmRSS");
  smprof::Config config;
  config.Set("RecordFile", dir + "/pool_%p.smprof")
      .Set("BucketCount", std::to_string(pool_mb / 4))
      .Set("BucketSizeMB", "4")
      .Set("EnablePerf", "0")
      .Set("CpuProfilingDurationS", "0");
  if (smprof::Status st = smprof::Start(config); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (long t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 1024; ++i) smprof::Scope range(name);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (std::thread& w : workers) w.join();
  smprof::Stop();
  const smprof::SessionStats stats = smprof::LastSessionStats();
  const long peak_kib = StatusKiB("VmHWM");
  std::filesystem::remove_all(dir);

  const double held_mib = (peak_kib - rss_before_kib) / 1024.0;
  std::printf("pool %ld MiB, %ld threads, %ld s: %llu ranges written, %llu dropped\n", pool_mb, threads, seconds,
              static_cast<unsigned long long>(stats.annotations_written),
              static_cast<unsigned long long>(stats.annotations_dropped));
  std::printf("peak RSS over RSS before start: %.1f MiB = %.2f x the pool\n", held_mib,
              held_mib / static_cast<double>(pool_mb));
  return 0;
}

// annotate_benchmark: what one annotation costs the thread that records it.
//
//   annotate_benchmark            # full run, about 20 s
//   annotate_benchmark --quick    # smoke run, a few seconds
//   annotate_benchmark --reps=N --iters=M
//   annotate_benchmark --cpu-time  # time each loop by the thread's CPU time
//                                  # (on a loaded machine: no preemption)
//
// Every case runs a loop of `iters` operations, `reps` times; the repetitions
// of all cases are interleaved (rep 1 of every case, then rep 2, ...) so that
// noise on a shared machine spreads over all of them. The table gives the
// median ns per operation, the spread of the repetitions (min, quartiles,
// max), and the ratio of the median to the baseline's median, measured in the
// same run:
//
//   baseline  two clock_gettime(CLOCK_MONOTONIC) reads, the clock the library
//             uses; an annotation cannot cost less than its two timestamps.
//
//   floor     two clock reads and one 32-byte store into a thread-local array
//             of the executable: what a range needs at the least, for
//             reference.
//
// Cases that record run inside a session of their own per repetition, writing
// into a temporary directory with a pool big enough for every range of the
// repetition; the stop (flush, compress, write) is outside the timed loop.
// Recorded and dropped counts are checked and printed, and so is the CPU time
// the drain thread spent per recorded range ("drain", measured as process
// minus calling-thread CPU time from start to stop). With the default
// FlushIntervalMs of 1 s the drain sleeps through a repetition and then
// encodes it as one backlog of `iters` ranges, so --iters also sets that
// backlog. Targets are printed for reference and never asserted: this is a
// measurement, not a test.
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "smprof/smprof.h"
#include "smprof/smprof_c.h"

namespace {

// Keeps results alive so the compiler cannot drop the work that made them.
volatile std::int64_t g_sink = 0;

inline void CompilerBarrier() { asm volatile("" ::: "memory"); }

inline std::int64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline std::int64_t MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }

// --- the measured loops ------------------------------------------------------
// Each is noinline so it compiles as it would in user code, not folded into
// the harness. Each returns the number of operations that did not do what the
// case expects (e.g. a handle that did not end kOk); 0 in a healthy run.

__attribute__((noinline)) std::uint64_t BaselineTwoClockReads(std::uint64_t iters) {
  std::int64_t sum = 0;
  for (std::uint64_t i = 0; i < iters; ++i) {
    const std::int64_t start = MonotonicNs();
    CompilerBarrier();
    sum += MonotonicNs() - start;
  }
  g_sink = sum;
  return 0;
}

// What a range needs at the least: two timestamps and one 32-byte store into a
// thread-local buffer of the executable (no chunk management, no drain).
struct FloorRecord {
  std::int64_t start_ns, dur_ns;
  std::uint32_t name, tid;
  std::uint16_t depth, flags;
  std::uint32_t reserved;
};
constexpr std::size_t kFloorRecords = 2048;
thread_local FloorRecord t_floor[kFloorRecords];

__attribute__((noinline)) std::uint64_t FloorClocksAndStore(std::uint64_t iters) {
  for (std::uint64_t i = 0; i < iters; ++i) {
    const std::int64_t start = MonotonicNs();
    CompilerBarrier();
    const std::int64_t end = MonotonicNs();
    t_floor[i % kFloorRecords] = FloorRecord{start, end - start, 1, 1, 0, 0, 0};
  }
  g_sink = t_floor[0].dur_ns;
  return 0;
}

__attribute__((noinline)) std::uint64_t RaiiScope(std::uint64_t iters) {
  for (std::uint64_t i = 0; i < iters; ++i) {
    SMPROF_ANNOTATE("x");
    CompilerBarrier();  // the "work" in the scope
  }
  return 0;
}

smprof::NameId HandleNameId() {
  static const smprof::NameId id = smprof::InternName("x");
  return id;
}

__attribute__((noinline)) std::uint64_t HandlePair(std::uint64_t iters) {
  const smprof::NameId id = HandleNameId();
  const smprof::EndResult expected = smprof::IsProfiling() ? smprof::EndResult::kOk : smprof::EndResult::kNotProfiling;
  std::uint64_t unexpected = 0;
  for (std::uint64_t i = 0; i < iters; ++i) {
    const smprof::AnnotationHandle h = smprof::AnnotationBegin(id);
    CompilerBarrier();
    unexpected += smprof::AnnotationEnd(h) != expected;
  }
  return unexpected;
}

__attribute__((noinline)) std::uint64_t CPairById(std::uint64_t iters) {
  const std::uint32_t id = smprof_intern_name("x");
  std::uint64_t unexpected = 0;
  for (std::uint64_t i = 0; i < iters; ++i) {
    const std::uint64_t h = smprof_annotation_begin_id(id);
    CompilerBarrier();
    unexpected += smprof_annotation_end(h) != 0;
  }
  return unexpected;
}

__attribute__((noinline)) std::uint64_t CPairByName(std::uint64_t iters) {
  std::uint64_t unexpected = 0;
  for (std::uint64_t i = 0; i < iters; ++i) {
    const std::uint64_t h = smprof_annotation_begin("x");
    CompilerBarrier();
    unexpected += smprof_annotation_end(h) != 0;
  }
  return unexpected;
}

// --- the harness -------------------------------------------------------------

struct Options {
  bool quick = false;
  clockid_t clock = CLOCK_MONOTONIC;  // what times the loops
  int reps = 31;
  std::uint64_t iters = 500000;
};

enum class Kind { kReference, kRecording, kNotRecording };

struct Case {
  const char* name = "";
  Kind kind = Kind::kReference;
  std::uint64_t (*run)(std::uint64_t) = nullptr;
  const char* target = "-";  // for the reader; never asserted
  double target_ratio = 0;   // >0: target is ratio <= target_ratio
  double target_ns = 0;      // >0: target is median ns <= target_ns
  std::vector<double> ns_per_op;
  std::vector<double> drain_ns_per_event;  // CPU of the drain thread per recorded range
  std::uint64_t unexpected = 0;
  std::uint64_t recorded = 0;
  std::uint64_t dropped = 0;
  std::uint64_t expected_records = 0;
};

// The q-quantile (0..1) of `v`, interpolating between neighbours.
double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double Median(const std::vector<double>& v) { return Quantile(v, 0.5); }

class Bench {
 public:
  explicit Bench(const Options& options) : options_(options) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/smprof-bench-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  }
  ~Bench() {
    if (dir_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  bool ok() const { return !dir_.empty(); }

  // Runs one repetition of `c`; false if a session could not be started.
  bool RunOnce(Case& c, bool keep) {
    const bool recording = c.kind == Kind::kRecording;
    // CPU time of the process minus that of this thread, from before Start to
    // after Stop: the drain thread's work, which runs beside the timed loop.
    const std::int64_t process_cpu0 = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
    const std::int64_t thread_cpu0 = ClockNs(CLOCK_THREAD_CPUTIME_ID);
    if (recording && !StartSession()) return false;
    const std::int64_t t0 = ClockNs(options_.clock);
    const std::uint64_t unexpected = c.run(options_.iters);
    const std::int64_t t1 = ClockNs(options_.clock);
    if (recording) {
      if (smprof::Status st = smprof::Stop(); !st.ok()) {
        std::fprintf(stderr, "annotate_benchmark: stop failed: %s\n", st.message().c_str());
        return false;
      }
      const smprof::SessionStats stats = smprof::LastSessionStats();
      const std::int64_t drain_cpu =
          (ClockNs(CLOCK_PROCESS_CPUTIME_ID) - process_cpu0) - (ClockNs(CLOCK_THREAD_CPUTIME_ID) - thread_cpu0);
      if (keep && stats.annotations_written > 0) {
        c.drain_ns_per_event.push_back(static_cast<double>(drain_cpu) / static_cast<double>(stats.annotations_written));
      }
      std::error_code ignored;
      std::filesystem::remove(stats.path, ignored);
      if (keep) {
        c.recorded += stats.annotations_written;
        c.dropped += stats.annotations_dropped;
        c.expected_records += options_.iters;
      }
    }
    if (keep) {
      c.unexpected += unexpected;
      c.ns_per_op.push_back(static_cast<double>(t1 - t0) / static_cast<double>(options_.iters));
    }
    return true;
  }

 private:
  bool StartSession() {
    // Room for every range of one repetition, twice over (32-byte records in
    // 64 KiB chunks), so that nothing is dropped while the drain catches up.
    const std::uint64_t need_mb = options_.iters * 32 * 2 / (1 << 20) + 1;
    const std::uint64_t bucket_mb = std::max<std::uint64_t>(4, (need_mb + 15) / 16);
    smprof::Config config;
    config.Set("RecordFile", dir_ + "/bench_%s.smprof")
        .Set("BucketCount", "16")
        .Set("BucketSizeMB", std::to_string(bucket_mb))
        .Set("EnableCuda", "0")
        .Set("EnablePerf", "0");
    if (smprof::Status st = smprof::Start(config); !st.ok()) {
      std::fprintf(stderr, "annotate_benchmark: start failed: %s\n", st.message().c_str());
      return false;
    }
    if (!smprof::IsProfiling()) {
      std::fprintf(stderr, "annotate_benchmark: profiling did not start (is SMP_DISABLE set?)\n");
      return false;
    }
    return true;
  }

  Options options_;
  std::string dir_;
};

std::string ReadFirstLine(const char* path, const char* prefix = nullptr) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (prefix == nullptr) return line;
    if (line.rfind(prefix, 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "?";
}

void PrintMachine(const Options& o) {
  std::printf("annotate_benchmark: smprof %s, %s mode, %d repetitions x %llu operations per case, timed by %s\n",
              smprof::Version(), o.quick ? "quick" : "full", o.reps, static_cast<unsigned long long>(o.iters),
              o.clock == CLOCK_MONOTONIC ? "wall clock" : "thread CPU time");
  std::printf("machine: %ld cpus, %s, clocksource %s\n", sysconf(_SC_NPROCESSORS_ONLN),
              ReadFirstLine("/proc/cpuinfo", "model name").c_str(),
              ReadFirstLine("/sys/devices/system/clocksource/clocksource0/current_clocksource").c_str());
}

bool ParseArgs(int argc, char** argv, Options* o) {
  bool reps_set = false, iters_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      o->quick = true;
    } else if (arg == "--cpu-time") {
      o->clock = CLOCK_THREAD_CPUTIME_ID;
    } else if (arg.rfind("--reps=", 0) == 0) {
      o->reps = std::max(1, std::atoi(arg.c_str() + 7));
      reps_set = true;
    } else if (arg.rfind("--iters=", 0) == 0) {
      o->iters = std::max<std::uint64_t>(1, std::strtoull(arg.c_str() + 8, nullptr, 10));
      iters_set = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--cpu-time] [--reps=N] [--iters=M]\n", argv[0]);
      return false;
    }
  }
  if (o->quick) {
    if (!reps_set) o->reps = 5;
    if (!iters_set) o->iters = 200000;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, &options)) return 2;
  PrintMachine(options);
  Bench bench(options);
  if (!bench.ok()) {
    std::fprintf(stderr, "annotate_benchmark: cannot create a temporary directory\n");
    return 1;
  }

  std::vector<Case> cases;
  auto add = [&cases](const char* name, Kind kind, std::uint64_t (*run)(std::uint64_t), const char* target = "-",
                      double target_ratio = 0, double target_ns = 0) {
    Case c;
    c.name = name;
    c.kind = kind;
    c.run = run;
    c.target = target;
    c.target_ratio = target_ratio;
    c.target_ns = target_ns;
    cases.push_back(std::move(c));
  };
  add("baseline: 2x clock_gettime(MONOTONIC)", Kind::kReference, BaselineTwoClockReads);
  add("floor: 2 clock reads + 32 B TLS store", Kind::kReference, FloorClocksAndStore);
  add("SMPROF_ANNOTATE scope, profiling", Kind::kRecording, RaiiScope, "<= 1.2x baseline", 1.2);
  add("SMPROF_ANNOTATE scope, not profiling", Kind::kNotRecording, RaiiScope, "a few ns (<= 5)", 0, 5.0);
  add("AnnotationBegin(id)/End(h), profiling", Kind::kRecording, HandlePair, "<= 1.5x baseline", 1.5);
  add("AnnotationBegin(id)/End(h), not profiling", Kind::kNotRecording, HandlePair);
  add("C begin_id/end, profiling", Kind::kRecording, CPairById);
  add("C begin(\"x\")/end, profiling", Kind::kRecording, CPairByName);

  // One unmeasured repetition each: page in the chunks, intern the names.
  for (Case& c : cases) {
    if (!bench.RunOnce(c, /*keep=*/false)) return 1;
  }
  for (int rep = 0; rep < options.reps; ++rep) {
    for (Case& c : cases) {
      if (!bench.RunOnce(c, /*keep=*/true)) return 1;
    }
  }

  const double baseline = Median(cases[0].ns_per_op);
  std::printf("\n%-42s %8s %8s %8s %8s %8s %8s  %-26s %7s  %s\n", "case", "median", "min", "p25", "p75", "max", "ratio",
              "target", "drain", "recorded/dropped");
  std::printf("%-42s %8s %8s %8s %8s %8s %8s  %-26s %7s\n", "", "ns/op", "", "", "", "", "vs base", "", "ns/ev");
  for (const Case& c : cases) {
    const double median = Median(c.ns_per_op);
    const double ratio = median / baseline;
    std::string verdict;
    if (c.target_ratio > 0) verdict = ratio <= c.target_ratio ? " (met)" : " (MISSED)";
    if (c.target_ns > 0) verdict = median <= c.target_ns ? " (met)" : " (MISSED)";
    std::string counts = "-";
    if (c.kind == Kind::kRecording) {
      counts = std::to_string(c.recorded) + "/" + std::to_string(c.dropped);
      if (c.recorded != c.expected_records) counts += " (expected " + std::to_string(c.expected_records) + ")";
    }
    if (c.unexpected != 0) counts += " unexpected results: " + std::to_string(c.unexpected);
    char drain[32] = "-";
    if (!c.drain_ns_per_event.empty()) std::snprintf(drain, sizeof drain, "%.1f", Median(c.drain_ns_per_event));
    std::printf("%-42s %8.2f %8.2f %8.2f %8.2f %8.2f %7.2fx  %-26s %7s  %s\n", c.name, median, Quantile(c.ns_per_op, 0),
                Quantile(c.ns_per_op, 0.25), Quantile(c.ns_per_op, 0.75), Quantile(c.ns_per_op, 1), ratio,
                (std::string(c.target) + verdict).c_str(), drain, counts.c_str());
  }
  std::printf(
      "\nratio = median / median of the baseline, same run. drain = median CPU time of the drain thread\n"
      "(encode, compress, write) per recorded range, spent beside the timed thread. Targets are reported,\n"
      "not asserted.\n");
  return 0;
}

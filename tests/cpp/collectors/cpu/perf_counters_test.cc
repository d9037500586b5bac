// Perf counters through perf_event_open and libpfm4, on the real kernel: name
// checking and suggestions, what is active here and why not, inheritance by
// new threads, fallbacks, per-CPU counting where permitted, and no descriptor
// leaks.
#include "collectors/cpu/perf_counters.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <perfmon/pfmlib.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

namespace smprof::internal {
namespace {

using Clock = std::chrono::steady_clock;

int OpenFdCount() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
  }
  return count;
}

bool HasCorePmu() {
  for (const char* name : {"cpu", "cpu_core", "cpu_atom"}) {
    if (access((std::string("/sys/bus/event_source/devices/") + name).c_str(), F_OK) == 0) return true;
  }
  return false;
}

// libpfm4's PMUs. No PMU is absent from every machine this suite runs on (an
// Intel family 6 model 167 has its own itlb_misses, without Skylake's unit
// masks; an AMD CPU has none of Intel's PMUs): tests that need an event of a
// PMU that is not here pick the PMU, and the event, at run time.
struct LibpfmPmu {
  int id;
  std::string name;  // as libpfm4 spells it
  bool present;
};

std::vector<LibpfmPmu> LibpfmPmus() {
  pfm_initialize();  // returns its first result again when called twice
  std::vector<LibpfmPmu> pmus;
  for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; ++p) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(p), &info) != PFM_SUCCESS || info.name == nullptr) continue;
    pmus.push_back({p, info.name, info.is_present != 0});
  }
  return pmus;
}

std::string Lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Each event of PMU `pmu` as "event" and "event.umask" for each of its unit masks, lowercase.
std::vector<std::string> EventsOf(int pmu, bool with_unit_masks) {
  std::vector<std::string> names;
  pfm_pmu_info_t info;
  std::memset(&info, 0, sizeof(info));
  info.size = sizeof(info);
  if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(pmu), &info) != PFM_SUCCESS) return names;
  for (int i = info.first_event; i != -1; i = pfm_get_event_next(i)) {
    pfm_event_info_t event;
    std::memset(&event, 0, sizeof(event));
    event.size = sizeof(event);
    if (pfm_get_event_info(i, PFM_OS_NONE, &event) != PFM_SUCCESS || event.name == nullptr) continue;
    const std::string name = Lowercase(event.name);
    names.push_back(name);
    for (int a = 0; with_unit_masks && a < event.nattrs; ++a) {
      pfm_event_attr_info_t attr;
      std::memset(&attr, 0, sizeof(attr));
      attr.size = sizeof(attr);
      if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &attr) == PFM_SUCCESS && attr.name != nullptr &&
          attr.type == PFM_ATTR_UMASK) {
        names.push_back(name + "." + Lowercase(attr.name));
      }
    }
  }
  return names;
}

// A PMU libpfm4 knows but this machine lacks whose events include `event`
// ("event" or "event.umask", lowercase): `preferred` if it qualifies, else the
// first; "" when there is none.
std::string AbsentPmuWith(const std::string& event, const std::string& preferred) {
  std::string found;
  for (const LibpfmPmu& pmu : LibpfmPmus()) {
    if (pmu.present) continue;
    const std::vector<std::string> events = EventsOf(pmu.id, event.find('.') != std::string::npos);
    if (std::find(events.begin(), events.end(), event) == events.end()) continue;
    if (pmu.name == preferred) return pmu.name;
    if (found.empty()) found = pmu.name;
  }
  return found;
}

// An "event.umask" (lowercase) of a PMU this machine lacks whose event name no
// PMU here has, so that the name alone resolves to absent PMUs only:
// `preferred` if it qualifies; "" when there is none.
std::string EventOnlyOnAbsentPmus(const std::string& preferred) {
  std::set<std::string> here;
  const std::vector<LibpfmPmu> pmus = LibpfmPmus();
  for (const LibpfmPmu& pmu : pmus) {
    if (!pmu.present) continue;
    for (std::string& name : EventsOf(pmu.id, false)) here.insert(std::move(name));
  }
  std::string found;
  for (const LibpfmPmu& pmu : pmus) {
    if (pmu.present) continue;
    for (const std::string& name : EventsOf(pmu.id, true)) {
      const auto dot = name.find('.');
      if (dot == std::string::npos || here.count(name.substr(0, dot)) != 0) continue;
      if (name == preferred) return name;
      if (found.empty()) found = name;
    }
  }
  return found;
}

int Paranoid() {
  int value = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> value;
  return value;
}

// Whether this process may count system-wide: CAP_PERFMON (38) or CAP_SYS_ADMIN (21), or paranoid <= 0.
bool PerCpuPermitted() {
  std::ifstream status("/proc/self/status");
  std::string line;
  std::uint64_t caps = 0;
  while (std::getline(status, line)) {
    if (line.compare(0, 7, "CapEff:") == 0) caps = std::strtoull(line.c_str() + 7, nullptr, 16);
  }
  return ((caps >> 38) & 1) != 0 || ((caps >> 21) & 1) != 0 || Paranoid() <= 0;
}

std::vector<int> OnlineCpus() {
  std::string text;
  std::getline(std::ifstream("/sys/devices/system/cpu/online"), text);
  std::vector<int> cpus;
  ParseCpuList(text, &cpus);
  return cpus;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> fields;
  std::istringstream in(text);
  std::string field;
  while (std::getline(in, field, separator)) fields.push_back(field);
  return fields;
}

// Runs `body` in a forked child, as the unprivileged user 65534 when
// `drop_root`, and puts what it returns in `text`.
::testing::AssertionResult RunInChild(bool drop_root, const std::function<std::string()>& body, std::string* text) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return ::testing::AssertionFailure() << "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    if (drop_root && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(2);
    const std::string out = body();
    const ssize_t written = write(pipe_fds[1], out.data(), out.size());
    _exit(written == static_cast<ssize_t>(out.size()) ? 0 : 3);
  }
  close(pipe_fds[1]);
  if (child < 0) {
    close(pipe_fds[0]);
    return ::testing::AssertionFailure() << "fork failed";
  }
  text->clear();
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) text->append(buffer, static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  int wstatus = 0;
  if (waitpid(child, &wstatus, 0) != child) return ::testing::AssertionFailure() << "waitpid failed";
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return ::testing::AssertionFailure() << "child status " << wstatus;
  }
  return ::testing::AssertionSuccess();
}

const PerfEventStatus* Find(const PerfCounters& counters, const std::string& name) {
  for (const PerfEventStatus& status : counters.statuses()) {
    if (status.name == name) return &status;
  }
  return nullptr;
}

std::map<std::string, double> ReadAll(PerfCounters* counters) {
  std::vector<std::pair<std::string, double>> values;
  counters->Read(&values);
  return {values.begin(), values.end()};
}

// Burns `how_long` of this thread's CPU time (not wall time: robust on a loaded machine).
void Spin(std::chrono::milliseconds how_long) {
  auto cpu_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  };
  const std::int64_t end = cpu_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(how_long).count();
  volatile std::uint64_t sink = 0;
  while (cpu_ns() < end) sink = sink + 1;
}

TEST(ScaleCount, MultiplexingEstimate) {
  EXPECT_EQ(ScaleCount(1000, 500, 500), 1000.0);   // always counted
  EXPECT_EQ(ScaleCount(1000, 1000, 500), 2000.0);  // counted half the time
  EXPECT_EQ(ScaleCount(300, 1000, 250), 1200.0);   // a quarter
  EXPECT_EQ(ScaleCount(1000, 1000, 0), 0.0);       // never scheduled
  EXPECT_EQ(ScaleCount(0, 0, 0), 0.0);             // not started yet
  EXPECT_EQ(ScaleCount(0, 1000, 500), 0.0);        // nothing happened
  EXPECT_EQ(ScaleCount(1000, 500, 600), 1000.0);   // running > enabled never scales down
  EXPECT_EQ(ScaleCount(1ull << 40, 3, 3), static_cast<double>(1ull << 40));
}

TEST(PerfEventNames, DefaultListIsThePerfStatSetWithoutPageFaults) {
  const std::vector<std::string> expected = {"cycles",     "instructions", "cache-misses",     "branch-misses",
                                             "ref-cycles", "task-clock",   "context-switches", "cpu-migrations"};
  EXPECT_EQ(DefaultPerfEvents(), expected);
  std::vector<std::string> names;
  std::string list;
  for (const std::string& name : expected) list += name + ",";
  ASSERT_TRUE(ParsePerfEventList(list, &names).ok());
  EXPECT_EQ(names, expected);
}

TEST(PerfEventNames, ListSplitsTrimsAndSkipsEmptiesAndRepeats) {
  std::vector<std::string> names;
  ASSERT_TRUE(ParsePerfEventList(" cycles,  instructions ,,\ttask-clock , ,CYCLES,", &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"cycles", "instructions", "task-clock"}));
  ASSERT_TRUE(ParsePerfEventList("", &names).ok());
  EXPECT_TRUE(names.empty());
  ASSERT_TRUE(ParsePerfEventList(" , ", &names).ok());
  EXPECT_TRUE(names.empty());
}

TEST(PerfEventNames, GenericPerfNamesAndAliasesAreKnown) {
  std::vector<std::string> names;
  const Status status = ParsePerfEventList(
      "cpu-clock,major-faults,minor-faults,cs,faults,cpu-cycles,branches,L1-dcache-load-misses,"
      "perf::PERF_COUNT_HW_CPU_CYCLES,instructions:u,task-clock:period=1000",
      &names);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(names.size(), 11u);
}

TEST(PerfEventNames, UnknownNameIsAnErrorWithSuggestions) {
  std::vector<std::string> names = {"stale"};
  const Status status = ParsePerfEventList("cycles, cycels", &names);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().rfind("unknown perf event 'cycels' in PerfEvents; did you mean: cycles", 0), 0u)
      << status.message();
  EXPECT_TRUE(names.empty());

  const Status prefix = ParsePerfEventList("instr", &names);
  EXPECT_NE(prefix.message().find("did you mean: instructions"), std::string::npos) << prefix.message();

  // Too far for edit distance: the words of events and their unit masks are compared.
  const Status words = ParsePerfEventList("clk_unhalted_ref.tsc", &names);
  EXPECT_NE(words.message().find("did you mean: cpu_clk_unhalted.ref_tsc"), std::string::npos) << words.message();

  const Status nothing_close = ParsePerfEventList("zzzzzzzzzzzz", &names);
  EXPECT_EQ(nothing_close.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nothing_close.message().find("unknown perf event 'zzzzzzzzzzzz' in PerfEvents; use a perf name"),
            std::string::npos)
      << nothing_close.message();
}

TEST(PerfEventNames, BadUnitMaskModifierOrPmuIsAnError) {
  std::vector<std::string> names;
  const Status modifier = ParsePerfEventList("cycles:kk", &names);
  EXPECT_EQ(modifier.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(modifier.message().rfind("unknown unit mask or modifier 'kk' of perf event 'cycles:kk' in PerfEvents", 0),
            0u)
      << modifier.message();

  // A unit mask of an event of a PMU that is not here is checked too: Skylake's
  // itlb_misses.miss_causes_a_walk, on a PMU that has it and this machine lacks.
  const std::string skl = AbsentPmuWith("itlb_misses.miss_causes_a_walk", "skl");
  ASSERT_FALSE(skl.empty()) << "every PMU with itlb_misses.miss_causes_a_walk is here";
  const Status umask = ParsePerfEventList(skl + "::itlb_misses.miss_causes_a_wlk", &names);
  EXPECT_EQ(umask.code(), StatusCode::kInvalidArgument) << skl;
  EXPECT_NE(umask.message().find("did you mean: miss_causes_a_walk"), std::string::npos) << umask.message();
  // ... and named without its PMU, when no PMU here has that event.
  const std::string absent = EventOnlyOnAbsentPmus("itlb_misses.miss_causes_a_walk");
  ASSERT_FALSE(absent.empty());
  const std::string typo = absent.substr(0, absent.size() - 1);  // a unit mask missing its last letter
  const Status bare = ParsePerfEventList(typo, &names);
  EXPECT_EQ(bare.code(), StatusCode::kInvalidArgument) << typo;
  EXPECT_NE(bare.message().find(absent.substr(absent.find('.') + 1)), std::string::npos) << bare.message();

  const Status pmu = ParsePerfEventList("sklx::cycles", &names);
  EXPECT_EQ(pmu.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pmu.message().rfind("unknown PMU 'sklx' in perf event 'sklx::cycles' in PerfEvents; did you mean: ", 0), 0u)
      << pmu.message();
}

TEST(PerfEventNames, EventsOfPmusNotOnThisCpuAreKnown) {
  // Chosen before the clock starts: walking libpfm4's tables is what is timed.
  const std::string absent = EventOnlyOnAbsentPmus("itlb_misses.miss_causes_a_walk");
  const std::string skl = AbsentPmuWith("itlb_misses.miss_causes_a_walk", "skl");
  const std::string core = AbsentPmuWith("instructions_retired", "core");
  ASSERT_FALSE(absent.empty() || skl.empty() || core.empty()) << absent << ", " << skl << ", " << core;
  const std::string list = absent + ", cpu_clk_unhalted.ref_tsc, " + skl + "::ITLB_MISSES:MISS_CAUSES_A_WALK:u, " +
                           core + "::INSTRUCTIONS_RETIRED";
  std::vector<std::string> names;
  const auto start = Clock::now();
  const Status status = ParsePerfEventList(list, &names);
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  ASSERT_TRUE(status.ok()) << list << ": " << status.message();
  EXPECT_EQ(names.size(), 4u);
  const auto again = Clock::now();
  ASSERT_TRUE(ParsePerfEventList(core + "::INSTRUCTIONS_RETIRED", &names).ok());
  const double second_ms = std::chrono::duration<double, std::milli>(Clock::now() - again).count();
  // The first lookup of an absent event builds the index of every PMU's events.
  std::cout << "name index: first lookup " << first_ms << " ms, next " << second_ms << " ms\n";
  RecordProperty("index_first_lookup_ms", std::to_string(first_ms));
  EXPECT_LT(first_ms, 2000.0);
}

TEST(PerfCounters, EventsOfAbsentPmusAreInactiveNamingThePmu) {
  // Intel Core 2 ("core") where it is not here, which is about everywhere.
  const std::string pmu = AbsentPmuWith("instructions_retired", "core");
  ASSERT_FALSE(pmu.empty());
  const std::string absent = pmu + "::INSTRUCTIONS_RETIRED";
  auto counters = PerfCounters::Open({absent, "cpu_clk_unhalted.ref_tsc", "cycels"});
  const PerfEventStatus* core = Find(*counters, absent);
  ASSERT_NE(core, nullptr);
  EXPECT_FALSE(core->active);
  EXPECT_EQ(core->reason, "not supported by this CPU (event of PMU '" + pmu + "')");
  EXPECT_EQ(core->track, "perf." + absent);
  EXPECT_EQ(core->unit, "count");

  const PerfEventStatus* ref_tsc = Find(*counters, "cpu_clk_unhalted.ref_tsc");
  ASSERT_NE(ref_tsc, nullptr);
  if (!ref_tsc->active) {
    EXPECT_NE(ref_tsc->reason.find("not supported"), std::string::npos) << ref_tsc->reason;
  }

  const PerfEventStatus* unknown = Find(*counters, "cycels");
  ASSERT_NE(unknown, nullptr);
  EXPECT_FALSE(unknown->active);
  EXPECT_EQ(unknown->reason, "unknown perf event: not a perf or libpfm4 event name");
}

TEST(PerfCounters, HardwareEventsAreInactiveWithAReasonOrCount) {
  auto counters = PerfCounters::Open({"cycles", "instructions"});
  for (const char* name : {"cycles", "instructions"}) {
    const PerfEventStatus* status = Find(*counters, name);
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(status->track, std::string("perf.") + name);
    EXPECT_EQ(status->unit, "count");
    EXPECT_FALSE(status->fallback);
    if (status->active) {
      EXPECT_TRUE(status->reason.empty());
      Spin(std::chrono::milliseconds(20));
      const double before = ReadAll(counters.get())[status->track];
      Spin(std::chrono::milliseconds(20));
      const double after = ReadAll(counters.get())[status->track];
      EXPECT_GT(before, 0);
      EXPECT_GE(after, before);
    } else if (!HasCorePmu()) {
      EXPECT_EQ(status->reason, "hardware events are not supported here (no PMU: virtual machine?)");
    } else {
      EXPECT_TRUE(status->reason.find("not supported") != std::string::npos ||
                  status->reason.find("perf_event_paranoid") != std::string::npos)
          << status->reason;
    }
  }
}

TEST(PerfCounters, SoftwareEventsCountEveryThreadAndNeverDecrease) {
  // A thread that exists before Open, and one created after it (inherited).
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  std::thread existing([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return go; });
    lock.unlock();
    Spin(std::chrono::milliseconds(150));
  });
  auto counters = PerfCounters::Open({"task-clock", "context-switches", "page-faults", "cpu-migrations"});
  const PerfEventStatus* task_clock = Find(*counters, "task-clock");
  ASSERT_NE(task_clock, nullptr);
  if (!task_clock->active) {
    {
      std::lock_guard<std::mutex> lock(mu);
      go = true;
    }
    cv.notify_all();
    existing.join();
    GTEST_SKIP() << "software counters are not permitted here: " << task_clock->reason;
  }
  EXPECT_EQ(task_clock->unit, "ns");
  EXPECT_GE(task_clock->threads, 2);
  EXPECT_EQ(task_clock->threads_missed, 0);
  EXPECT_EQ(Find(*counters, "context-switches")->unit, "count");

  std::size_t active = 0;
  for (const PerfEventStatus& status : counters->statuses()) active += status.active ? 1 : 0;
  auto start = ReadAll(counters.get());
  ASSERT_EQ(start.size(), active + counters->per_cpu_tracks().size());
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  std::map<std::string, double> last = start;
  for (int i = 0; i < 15; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto now = ReadAll(counters.get());
    for (const auto& [track, value] : now) {
      EXPECT_GE(value, last[track]) << track;
      EXPECT_GE(value, 0) << track;
    }
    last = now;
  }
  existing.join();
  const double after_existing = ReadAll(counters.get())["perf.task-clock"];
  EXPECT_GT(after_existing - start["perf.task-clock"], 100e6) << "a thread alive at Open is counted";

  const double faults_before = ReadAll(counters.get())["perf.page-faults"];
  std::thread created_later([] {
    Spin(std::chrono::milliseconds(150));
    std::vector<char> touched(16 << 20);  // 4,096 pages, each faulted in by its first write
    for (std::size_t i = 0; i < touched.size(); i += 4096) touched[i] = 1;
  });
  created_later.join();
  auto after = ReadAll(counters.get());
  EXPECT_GT(after["perf.task-clock"] - after_existing, 100e6)
      << "a thread created after Open is counted (and kept after it exits)";
  // The software events of a thread are read as one group (its leader task-clock): the other
  // members count too.
  EXPECT_GT(after["perf.page-faults"] - faults_before, 2000) << "page-faults, read through task-clock's group";
}

TEST(PerfCounters, ChildProcessesAreNotCounted) {
  auto counters = PerfCounters::Open({"task-clock"});
  if (!counters->statuses()[0].active) GTEST_SKIP() << counters->statuses()[0].reason;
  if (counters->follows_child_processes()) GTEST_SKIP() << "kernel without inherit_thread (< 5.13)";
  const double before = ReadAll(counters.get())["perf.task-clock"];
  const pid_t child = fork();
  if (child == 0) {
    Spin(std::chrono::milliseconds(200));
    _exit(0);
  }
  ASSERT_GT(child, 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  const double after = ReadAll(counters.get())["perf.task-clock"];
  EXPECT_LT(after - before, 100e6);
}

TEST(PerfCounters, SoftwareFallbacksWhenNoHardwareEventOpens) {
  auto counters = PerfCounters::Open({"cycles", "task-clock", "instructions"});
  bool hardware_active = false;
  for (const char* name : {"cycles", "instructions"}) hardware_active |= Find(*counters, name)->active;
  if (hardware_active) {
    EXPECT_EQ(counters->statuses().size(), 3u) << "no fallbacks when a hardware event counts";
    return;
  }
  std::vector<std::string> fallbacks;
  for (const PerfEventStatus& status : counters->statuses()) {
    if (status.fallback) fallbacks.push_back(status.name);
  }
  // task-clock was asked for already, so it is not added again.
  // page-faults is not among them: it costs every fault of the job (docs/CONFIG.md).
  EXPECT_EQ(fallbacks, (std::vector<std::string>{"context-switches", "cpu-migrations"}));
  EXPECT_FALSE(Find(*counters, "task-clock")->fallback);
  if (Find(*counters, "task-clock")->active) {
    EXPECT_TRUE(Find(*counters, "context-switches")->active) << Find(*counters, "context-switches")->reason;
  }

  auto only_hardware = PerfCounters::Open({"cycles"});
  if (!only_hardware->statuses()[0].active) {
    EXPECT_EQ(only_hardware->statuses().size(), 4u);
    EXPECT_EQ(Find(*only_hardware, "task-clock")->unit, "ns");
    EXPECT_TRUE(Find(*only_hardware, "task-clock")->fallback);
  }
}

TEST(PerfCounters, NoFallbacksWhenOnlySoftwareWasAsked) {
  auto counters = PerfCounters::Open({"task-clock", "unknown-name"});
  EXPECT_EQ(counters->statuses().size(), 2u);
}

TEST(PerfCounters, DescriptorsAreClosedOnDestruction) {
  const int before = OpenFdCount();
  {
    auto counters = PerfCounters::Open(DefaultPerfEvents());
    std::size_t active = 0;
    for (const PerfEventStatus& status : counters->statuses()) active += status.active ? 1 : 0;
    const std::size_t per_cpu = counters->per_cpu_tracks().size();
    EXPECT_GE(OpenFdCount(), before + static_cast<int>(active + per_cpu));
    std::vector<std::pair<std::string, double>> values;
    counters->Read(&values);
    EXPECT_EQ(values.size(), active + per_cpu);
  }
  EXPECT_EQ(OpenFdCount(), before);
  {
    // Nothing requested can open: no descriptor is kept for it.
    auto nothing = PerfCounters::Open({"zzz", "task-clock:foo", "sklx::cycles"});
    EXPECT_EQ(nothing->statuses().size(), 3u);
    EXPECT_EQ(OpenFdCount(), before);
  }
  EXPECT_EQ(OpenFdCount(), before);
}

// As an unprivileged user, the kernel allows user mode only (paranoid 2) or
// nothing (3); the statuses say so. Runs the check in a child that drops root.
TEST(PerfCounters, UnprivilegedUserGetsUserModeOrAReason) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop to an unprivileged user";
  std::string text;
  ASSERT_TRUE(RunInChild(
      true,
      [] {
        auto counters = PerfCounters::Open({"task-clock", "page-faults", "context-switches"});
        std::ostringstream out;
        for (const PerfEventStatus& s : counters->statuses()) {
          out << s.name << '\t' << s.active << '\t' << s.user_only << '\t' << s.reason << '\n';
        }
        return out.str();
      },
      &text));

  std::map<std::string, std::vector<std::string>> rows;
  for (const std::string& line : Split(text, '\n')) {
    std::vector<std::string> fields = Split(line, '\t');
    fields.resize(4);
    rows[fields[0]] = fields;
  }
  ASSERT_EQ(rows.size(), 3u) << text;
  const int paranoid = Paranoid();
  if (paranoid >= 3) {
    for (const auto& [name, row] : rows) {
      EXPECT_EQ(row[1], "0") << name;
      EXPECT_EQ(row[3], "perf_event_paranoid=" + std::to_string(paranoid) +
                            " forbids it: run as root or set kernel.perf_event_paranoid<=2");
    }
  } else if (paranoid == 2) {
    EXPECT_EQ(rows["task-clock"][1], "1") << rows["task-clock"][3];
    EXPECT_EQ(rows["task-clock"][2], "1");
    EXPECT_EQ(rows["page-faults"][1], "1");
    EXPECT_EQ(rows["context-switches"][1], "0");
    EXPECT_EQ(rows["context-switches"][3],
              "perf_event_paranoid=2 limits counting to user mode, where this event never happens: run as root or "
              "set kernel.perf_event_paranoid<=1");
  } else {
    EXPECT_EQ(rows["context-switches"][1], "1") << rows["context-switches"][3];
    EXPECT_EQ(rows["context-switches"][2], "0");
  }
}

TEST(PerfCpuList, ParsesKernelCpuLists) {
  std::vector<int> cpus;
  ASSERT_TRUE(ParseCpuList("0-1\n", &cpus));
  EXPECT_EQ(cpus, (std::vector<int>{0, 1}));
  ASSERT_TRUE(ParseCpuList("0", &cpus));
  EXPECT_EQ(cpus, (std::vector<int>{0}));
  ASSERT_TRUE(ParseCpuList("0-3,8,10-11", &cpus));
  EXPECT_EQ(cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  ASSERT_TRUE(ParseCpuList("4,2,2-3", &cpus));
  EXPECT_EQ(cpus, (std::vector<int>{2, 3, 4}));
  for (const char* bad : {"", "\n", "1-", "-1", "3-1", "a", "0,,1", "0-1,", "1 2", "0-99999999999"}) {
    EXPECT_FALSE(ParseCpuList(bad, &cpus)) << bad;
    EXPECT_TRUE(cpus.empty()) << bad;
  }
}

TEST(PerfCounters, PerCpuTracksForEveryOnlineCpuWherePermitted) {
  auto counters = PerfCounters::Open({"context-switches", "task-clock", "page-faults"});
  const std::vector<int> cpus = OnlineCpus();
  ASSERT_FALSE(cpus.empty());
  const PerfEventStatus* switches = Find(*counters, "context-switches");
  const PerfEventStatus* task_clock = Find(*counters, "task-clock");
  const PerfEventStatus* faults = Find(*counters, "page-faults");
  ASSERT_TRUE(switches && task_clock && faults);
  if (!switches->active) GTEST_SKIP() << "software counters are not permitted here: " << switches->reason;
  if (!PerCpuPermitted()) {
    EXPECT_FALSE(counters->per_cpu());
    EXPECT_TRUE(counters->per_cpu_tracks().empty());
    EXPECT_EQ(counters->per_cpu_reason(),
              "per-CPU counting needs CAP_PERFMON or kernel.perf_event_paranoid<=0 (it is " +
                  std::to_string(Paranoid()) + ")");
    return;
  }
  ASSERT_TRUE(counters->per_cpu()) << counters->per_cpu_reason();
  EXPECT_EQ(counters->per_cpu_reason(), "");

  // context-switches and page-faults on every online CPU, by event then CPU; task-clock on none.
  std::vector<std::string> expected;
  for (const char* name : {"context-switches", "page-faults"}) {
    for (int cpu : cpus) expected.push_back("perf.cpu" + std::to_string(cpu) + "." + name);
  }
  std::vector<std::string> tracks;
  for (const PerfCpuTrack& track : counters->per_cpu_tracks()) {
    tracks.push_back(track.track);
    EXPECT_EQ(track.track, "perf.cpu" + std::to_string(track.cpu) + "." + track.name);
    EXPECT_EQ(track.unit, "count");
  }
  EXPECT_EQ(tracks, expected);
  EXPECT_EQ(switches->cpus, static_cast<int>(cpus.size()));
  EXPECT_EQ(switches->per_cpu_reason, "");
  EXPECT_EQ(faults->cpus, static_cast<int>(cpus.size()));
  EXPECT_EQ(task_clock->cpus, 0);
  EXPECT_EQ(task_clock->per_cpu_reason,
            "not counted per CPU: on a CPU a clock event only measures elapsed time, busy or idle alike");

  // Read gives the process-wide values, then the per-CPU ones in per_cpu_tracks() order.
  std::vector<std::pair<std::string, double>> first;
  counters->Read(&first);
  ASSERT_EQ(first.size(), 3 + expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(first[3 + i].first, expected[i]);
  auto switches_on_all_cpus = [&](const std::map<std::string, double>& values) {
    double sum = 0;
    for (int cpu : cpus) sum += values.at("perf.cpu" + std::to_string(cpu) + ".context-switches");
    return sum;
  };
  const std::map<std::string, double> start(first.begin(), first.end());
  std::map<std::string, double> last = start;
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a sleep is a context switch, on some CPU
    const auto now = ReadAll(counters.get());
    ASSERT_EQ(now.size(), first.size());
    for (const auto& [track, value] : now) EXPECT_GE(value, last.at(track)) << track;
    last = now;
  }
  EXPECT_GE(switches_on_all_cpus(last) - switches_on_all_cpus(start), 10.0);
}

TEST(PerfCounters, PerCpuCountsFollowAThreadPinnedToItsCpu) {
  auto counters = PerfCounters::Open({"context-switches"});
  if (!counters->per_cpu()) GTEST_SKIP() << "no per-CPU counting here: " << counters->per_cpu_reason();
  const PerfCpuTrack target = counters->per_cpu_tracks().back();
  const double before = ReadAll(counters.get())[target.track];
  constexpr int kSleeps = 1000;
  std::atomic<int> ran_on{-1};
  std::thread worker([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(target.cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) return;  // this thread only
    for (int i = 0; i < kSleeps; ++i) {
      timespec ts{0, 20000};  // each sleep switches this CPU to another task and back
      nanosleep(&ts, nullptr);
    }
    ran_on = sched_getcpu();
  });
  worker.join();
  if (ran_on != target.cpu) GTEST_SKIP() << "cannot pin a thread to CPU " << target.cpu;
  const double after = ReadAll(counters.get())[target.track];
  EXPECT_GE(after - before, kSleeps / 2) << target.track;
}

TEST(PerfCounters, UnprivilegedUserGetsNoPerCpuTracksAndTheReason) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop to an unprivileged user";
  std::string text;
  ASSERT_TRUE(RunInChild(
      true,
      [] {
        auto counters = PerfCounters::Open({"page-faults", "context-switches"});
        std::vector<std::pair<std::string, double>> values;
        counters->Read(&values);
        int per_cpu_values = 0;
        for (const auto& [track, value] : values) per_cpu_values += track.rfind("perf.cpu", 0) == 0 ? 1 : 0;
        const PerfEventStatus& faults = counters->statuses()[0];
        return std::to_string(counters->per_cpu()) + '\t' + std::to_string(counters->per_cpu_tracks().size()) + '\t' +
               std::to_string(per_cpu_values) + '\t' + counters->per_cpu_reason() + '\t' +
               std::to_string(faults.active) + '\t' + faults.per_cpu_reason;
      },
      &text));
  std::vector<std::string> fields = Split(text, '\t');
  fields.resize(6);
  const int paranoid = Paranoid();
  if (paranoid <= 0) {
    EXPECT_EQ(fields[0], "1") << fields[3];
    EXPECT_EQ(fields[3], "");
    return;
  }
  EXPECT_EQ(fields[0], "0");
  EXPECT_EQ(fields[1], "0");
  EXPECT_EQ(fields[2], "0") << "Read gives no per-CPU value";
  const std::string reason =
      "per-CPU counting needs CAP_PERFMON or kernel.perf_event_paranoid<=0 (it is " + std::to_string(paranoid) + ")";
  EXPECT_EQ(fields[3], reason);
  if (fields[4] == "1") {
    EXPECT_EQ(fields[5], reason) << "an active event says why it has no per-CPU tracks";
  }
}

TEST(PerfCounters, PerCpuCountingGivesWayWhenDescriptorsRunShort) {
  if (!PerfCounters::Open({"context-switches"})->per_cpu()) GTEST_SKIP() << "no per-CPU counting here";
  std::string text;
  ASSERT_TRUE(RunInChild(
      false,
      [] {
        // The module leaves 256 descriptors (or a quarter of the limit) to the
        // job: this leaves it 2, for the process-wide counters of this child's
        // single thread, and none for per-CPU ones.
        rlimit limit{};
        getrlimit(RLIMIT_NOFILE, &limit);
        limit.rlim_cur = static_cast<rlim_t>(OpenFdCount() + 256 + 2);
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return std::string("setrlimit failed");
        auto counters = PerfCounters::Open({"context-switches", "page-faults"});
        const PerfEventStatus& first = counters->statuses()[0];
        const PerfEventStatus& second = counters->statuses()[1];
        return std::to_string(first.active) + std::to_string(second.active) + '\t' +
               std::to_string(counters->per_cpu()) + '\t' + counters->per_cpu_reason() + '\t' + first.per_cpu_reason;
      },
      &text));
  std::vector<std::string> fields = Split(text, '\t');
  fields.resize(4);
  EXPECT_EQ(fields[0], "11") << text;
  EXPECT_EQ(fields[1], "0");
  EXPECT_EQ(fields[2],
            "no file descriptors left for per-CPU counting (one per event and CPU): raise the open-files limit "
            "(ulimit -n)");
  EXPECT_EQ(fields[3],
            "not counted per CPU: no file descriptors left (one per event and CPU): raise the open-files limit "
            "(ulimit -n)");
}

}  // namespace
}  // namespace smprof::internal

// Per-process perf counters: one perf_event_open descriptor per event and
// thread, inherited by the threads those threads create. The per-CPU ones are
// in perf_per_cpu.cc.
#include "collectors/cpu/perf_counters.h"

#include <dirent.h>
#include <perfmon/pfmlib_perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace smprof::internal {

namespace {

constexpr std::uint64_t kCapSysAdmin = 21;
constexpr std::uint64_t kCapPerfmon = 38;
// Descriptors never taken from the job, and the most this module holds.
constexpr long kReservedFds = 256;
constexpr long kMaxFds = 16384;
// Software events that only ever happen in kernel mode.
constexpr std::uint64_t kKernelOnlySoftware[] = {PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS,
                                                 PERF_COUNT_SW_CGROUP_SWITCHES};
// Without page-faults: counting it runs the kernel's software-event hook on
// every fault of every thread (~270 ns each, docs/BENCHMARKS.md); it stays
// available by name in PerfEvents.
const char* const kFallbackEvents[] = {"task-clock", "context-switches", "cpu-migrations"};

// What the machine allows, read once per Open.
struct Environment {
  int paranoid = -100;  // kernel.perf_event_paranoid; -100 when unknown
  bool privileged = false;
  bool core_pmu = true;  // a CPU PMU is registered with the kernel (or we cannot tell)
  bool kernel_allowed() const { return privileged || paranoid <= 1; }
};

bool ReadParanoid(int* value) {
  std::ifstream file("/proc/sys/kernel/perf_event_paranoid");
  return static_cast<bool>(file >> *value);
}

// CAP_PERFMON or CAP_SYS_ADMIN in the effective set.
bool Privileged() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, 7, "CapEff:") != 0) continue;
    const std::uint64_t caps = std::strtoull(line.c_str() + 7, nullptr, 16);
    return ((caps >> kCapPerfmon) & 1) != 0 || ((caps >> kCapSysAdmin) & 1) != 0;
  }
  return geteuid() == 0;
}

// The kernel lists a core PMU as "cpu" (x86; "cpu_core"/"cpu_atom" on hybrid
// parts) or "armv8_..." (Arm). A VM without a virtual PMU has none.
bool HasCorePmu() {
  DIR* dir = opendir("/sys/bus/event_source/devices");
  if (dir == nullptr) return true;  // cannot tell
  bool found = false;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "cpu" || name == "cpu_core" || name == "cpu_atom" || name.compare(0, 6, "armv8_") == 0 ||
        name.compare(0, 6, "armv9_") == 0) {
      found = true;
    }
  }
  closedir(dir);
  return found;
}

Environment Probe() {
  Environment env;
  if (!ReadParanoid(&env.paranoid)) env.paranoid = -100;
  env.privileged = Privileged();
  env.core_pmu = HasCorePmu();
  return env;
}

long GetTid() { return syscall(SYS_gettid); }

// The threads to open counters on: the caller, the main thread, then the rest.
std::vector<long> Threads() {
  std::vector<long> rest;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) {
      char* end = nullptr;
      const long tid = std::strtol(entry->d_name, &end, 10);
      if (tid > 0 && *end == '\0') rest.push_back(tid);
    }
    closedir(dir);
  }
  std::sort(rest.begin(), rest.end());
  std::vector<long> tids = {GetTid()};
  if (getpid() != tids[0]) tids.push_back(getpid());
  for (long tid : rest) {
    if (std::find(tids.begin(), tids.end(), tid) == tids.end()) tids.push_back(tid);
  }
  return tids;
}

// How many descriptors this module may hold: the open-files limit less what is
// open, less a reserve for the job.
long FdBudget() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  const long soft = limit.rlim_cur == RLIM_INFINITY ? kMaxFds * 4 : static_cast<long>(limit.rlim_cur);
  long open = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++open;
    closedir(dir);
  }
  return std::clamp(soft - open - std::max(kReservedFds, soft / 4), 0L, kMaxFds);
}

bool IsHardware(const perf_event_attr& attr) {
  return attr.type == PERF_TYPE_HARDWARE || attr.type == PERF_TYPE_HW_CACHE || attr.type == PERF_TYPE_RAW ||
         attr.type >= PERF_TYPE_MAX;  // a PMU registered at run time (its type is in sysfs)
}

bool IsKernelOnly(const perf_event_attr& attr) {
  return attr.type == PERF_TYPE_SOFTWARE && std::find(std::begin(kKernelOnlySoftware), std::end(kKernelOnlySoftware),
                                                      attr.config) != std::end(kKernelOnlySoftware);
}

const char* UnitOf(const perf_event_attr& attr) {
  const bool clock = attr.type == PERF_TYPE_SOFTWARE &&
                     (attr.config == PERF_COUNT_SW_TASK_CLOCK || attr.config == PERF_COUNT_SW_CPU_CLOCK);
  return clock ? "ns" : "count";
}

int OpenCounter(perf_event_attr* attr, long tid, int group_fd = -1) {
  const long fd = syscall(__NR_perf_event_open, attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
  return static_cast<int>(fd);
}

// Reads a group leader opened with PERF_FORMAT_GROUP and the times enabled and running: `n`
// counts, each scaled (ScaleCount), in the group's order; false when the read fails or the
// group is not `n` events.
bool ReadScaledGroup(int leader_fd, std::size_t n, double* values) {
  std::uint64_t buffer[3 + PerfCounters::kMaxGroup];  // nr, time enabled, time running, the values
  if (n > PerfCounters::kMaxGroup) return false;
  ssize_t got;
  do {
    got = read(leader_fd, buffer, (3 + n) * sizeof(std::uint64_t));
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>((3 + n) * sizeof(std::uint64_t)) || buffer[0] != n) return false;
  for (std::size_t i = 0; i < n; ++i) values[i] = ScaleCount(buffer[3 + i], buffer[1], buffer[2]);
  return true;
}

std::string Paranoid(const Environment& env) { return "perf_event_paranoid=" + std::to_string(env.paranoid); }

std::string Permissions(const Environment& env) {
  const std::string paranoid = env.paranoid == -100 ? "perf_event_paranoid unreadable" : Paranoid(env);
  return paranoid + (env.privileged ? ", CAP_PERFMON" : ", no CAP_PERFMON");
}

std::string ReasonForErrno(int error, const perf_event_attr& attr, const Environment& env) {
  const std::string call = std::string("perf_event_open: ") + std::strerror(error);
  switch (error) {
    case EACCES:
    case EPERM:
      if (!env.privileged && env.paranoid >= 3) {
        return Paranoid(env) + " forbids it: run as root or set kernel.perf_event_paranoid<=2";
      }
      if (!env.privileged && env.paranoid >= 2 && !attr.exclude_kernel) {
        return Paranoid(env) + " forbids counting kernel mode: run as root or set kernel.perf_event_paranoid<=1";
      }
      return "permission denied (" + call +
             "): a container's seccomp profile or a security module may block perf events; allow perf_event_open "
             "or grant CAP_PERFMON";
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
    case ENXIO:
      if (IsHardware(attr) && !env.core_pmu) return "hardware events are not supported here (no PMU: virtual machine?)";
      return "not supported by this CPU or kernel (" + call + ")";
    case ENOSYS:
      return "perf events are not available in this kernel (" + call + ")";
    case EMFILE:
    case ENFILE:
      return "no file descriptors left (" + call + "): raise the open-files limit (ulimit -n)";
    case EBUSY:
      return "the counter is busy: another tool holds it exclusively (" + call + ")";
    default:
      return "the kernel refused this event (" + call + ")";
  }
}

std::string ReasonForEncoding(PerfEncodeResult result, const std::string& detail) {
  switch (result) {
    case PerfEncodeResult::kOk:
      return "";
    case PerfEncodeResult::kUnknown:
      return "unknown perf event: not a perf or libpfm4 event name";
    case PerfEncodeResult::kPmuNotPresent:
      return "not supported by this CPU (" + detail + ")";
    case PerfEncodeResult::kNoKernelDriver:
      return "not supported by this kernel (PMU '" + detail + "' has no perf_events driver here)";
    case PerfEncodeResult::kUncore:
      return "counts a whole socket, not one process (uncore PMU '" + detail + "'): use a core event";
    case PerfEncodeResult::kInvalid:
      return "invalid event: " + detail;
    case PerfEncodeResult::kLibraryFailed:
      return "libpfm4 could not start (" + detail + ")";
  }
  return "unknown error";
}

// One event being opened.
struct Pending {
  std::size_t status_index;
  perf_event_attr attr;
};

}  // namespace

const std::vector<std::string>& DefaultPerfEvents() {
  // perf stat's set less page-faults (see kFallbackEvents).
  static const std::vector<std::string> events = {"cycles",     "instructions", "cache-misses",     "branch-misses",
                                                  "ref-cycles", "task-clock",   "context-switches", "cpu-migrations"};
  return events;
}

double ScaleCount(std::uint64_t value, std::uint64_t time_enabled, std::uint64_t time_running) {
  if (time_running == 0) return 0;
  if (time_running >= time_enabled) return static_cast<double>(value);
  return static_cast<double>(value) * (static_cast<double>(time_enabled) / static_cast<double>(time_running));
}

bool ReadScaledCount(int fd, double* value) {
  std::uint64_t values[3];  // value, time enabled, time running
  ssize_t n;
  do {
    n = read(fd, values, sizeof(values));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(values))) return false;
  *value = ScaleCount(values[0], values[1], values[2]);
  return true;
}

std::unique_ptr<PerfCounters> PerfCounters::Open(const std::vector<std::string>& names) {
  std::unique_ptr<PerfCounters> counters(new PerfCounters());
  try {
    const Environment env = Probe();
    counters->permissions_ = Permissions(env);
    const std::vector<long> tids = Threads();
    long budget = FdBudget();
    bool inherit_thread = true;                 // cleared when the kernel predates it (< 5.13)
    std::vector<perf_event_attr> active_attrs;  // parallel to counters_

    // Encodes one name into a Pending event, or records why it cannot count.
    auto prepare = [&](const std::string& name, bool fallback, std::vector<Pending>* pending,
                       std::vector<perf_event_attr>* encoded) {
      PerfEventStatus status;
      status.name = name;
      status.track = "perf." + name;
      status.unit = "count";
      status.fallback = fallback;
      perf_event_attr attr;
      std::string detail;
      const PerfEncodeResult result = EncodePerfEvent(name, env.kernel_allowed(), &attr, &detail);
      // An event of a PMU that is absent, undriven or uncore is a hardware event that did not open.
      bool hardware = result == PerfEncodeResult::kPmuNotPresent || result == PerfEncodeResult::kNoKernelDriver ||
                      result == PerfEncodeResult::kUncore;
      if (result == PerfEncodeResult::kOk) {
        hardware = IsHardware(attr);
        status.unit = UnitOf(attr);
        encoded->push_back(attr);
        if (!env.kernel_allowed() && IsKernelOnly(attr)) {
          status.reason = Paranoid(env) +
                          " limits counting to user mode, where this event never happens: run as root or set "
                          "kernel.perf_event_paranoid<=1";
        } else {
          pending->push_back({counters->statuses_.size(), attr});
        }
      } else {
        status.reason = ReasonForEncoding(result, detail);
      }
      counters->statuses_.push_back(std::move(status));
      return hardware;
    };

    // Opens every pending event on the first thread, then the other threads on the active ones.
    // Each thread's software events form one group, read at once (one read per thread, not one
    // per event and thread: for a thread running on another core each read interrupts it there).
    auto open_all = [&](std::vector<Pending>* pending) {
      std::vector<std::size_t> active;  // into counters_
      Group first_thread;               // its software events
      for (Pending& p : *pending) {
        PerfEventStatus& status = counters->statuses_[p.status_index];
        p.attr.size = sizeof(perf_event_attr);
        p.attr.inherit = 1;
        p.attr.inherit_thread = inherit_thread ? 1 : 0;
        p.attr.disabled = 0;
        p.attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        int fd = OpenCounter(&p.attr, tids[0]);
        int error = fd < 0 ? errno : 0;
        if (fd < 0 && error == EINVAL && p.attr.inherit_thread) {
          p.attr.inherit_thread = 0;
          fd = OpenCounter(&p.attr, tids[0]);
          error = fd < 0 ? errno : 0;
          if (fd >= 0) inherit_thread = false;
        }
        bool user_only_retry = false;
        if (fd < 0 && (error == EACCES || error == EPERM) && !p.attr.exclude_kernel) {
          // Kernel mode refused where we could not tell in advance: count user mode only.
          perf_event_attr user_only;
          if (EncodePerfEvent(status.name, false, &user_only, nullptr) == PerfEncodeResult::kOk) {
            user_only.size = p.attr.size;
            user_only.inherit = 1;
            user_only.inherit_thread = p.attr.inherit_thread;
            user_only.read_format = p.attr.read_format;
            const int retry = OpenCounter(&user_only, tids[0]);
            if (retry >= 0 || errno != error) {
              user_only_retry = true;
              fd = retry;
              error = retry < 0 ? errno : 0;
              p.attr = user_only;
            }
          }
        }
        if (fd < 0) {
          status.reason = ReasonForErrno(error, p.attr, env);
          continue;
        }
        if (user_only_retry && IsKernelOnly(p.attr)) {  // would read 0 forever
          close(fd);
          status.reason = "the kernel refuses to count kernel mode here, where this event only happens: run as root";
          continue;
        }
        bool grouped = false;
        if (!IsHardware(p.attr) && first_thread.counters.size() < PerfCounters::kMaxGroup) {
          perf_event_attr in_group = p.attr;
          in_group.read_format |= PERF_FORMAT_GROUP;
          const int member = OpenCounter(&in_group, tids[0], first_thread.leader_fd);
          if (member >= 0) {  // else it is read alone
            close(fd);
            fd = member;
            p.attr = in_group;
            grouped = true;
            if (first_thread.leader_fd < 0) first_thread.leader_fd = fd;
            first_thread.counters.push_back(counters->counters_.size());
          }
        }
        --budget;
        status.active = true;
        status.user_only = p.attr.exclude_kernel != 0;
        status.threads = 1;
        Counter counter;
        counter.status_index = p.status_index;
        counter.grouped = grouped;
        counter.fds.push_back(fd);
        counters->counters_.push_back(std::move(counter));
        active_attrs.push_back(p.attr);
        active_attrs.back().read_format &= ~static_cast<std::uint64_t>(PERF_FORMAT_GROUP);
        active.push_back(counters->counters_.size() - 1);
      }
      if (first_thread.leader_fd >= 0) counters->groups_.push_back(std::move(first_thread));
      if (active.empty()) return;
      std::vector<perf_event_attr*> attrs;  // of the active counters, in `active` order
      for (Pending& p : *pending) {
        if (counters->statuses_[p.status_index].active) attrs.push_back(&p.attr);
      }
      for (std::size_t t = 1; t < tids.size(); ++t) {
        // A thread gets all its counters or none, so every counter covers the same threads.
        std::vector<int> fds;
        Group group;
        int error = 0;
        if (budget < static_cast<long>(active.size())) error = EMFILE;
        for (std::size_t a = 0; a < active.size() && error == 0; ++a) {
          const bool grouped = counters->counters_[active[a]].grouped;
          const int fd = OpenCounter(attrs[a], tids[t], grouped ? group.leader_fd : -1);
          if (fd >= 0) {
            fds.push_back(fd);
            if (grouped && group.leader_fd < 0) group.leader_fd = fd;
            if (grouped) group.counters.push_back(active[a]);
          } else {
            error = errno;
          }
        }
        if (error != 0) {
          for (int fd : fds) close(fd);
          if (error == ESRCH) continue;  // the thread exited meanwhile
          if (error == EMFILE || error == ENFILE) budget = 0;
          for (std::size_t c : active) ++counters->statuses_[counters->counters_[c].status_index].threads_missed;
          continue;
        }
        budget -= static_cast<long>(fds.size());
        if (group.leader_fd >= 0) counters->groups_.push_back(std::move(group));
        for (std::size_t a = 0; a < active.size(); ++a) {
          Counter& counter = counters->counters_[active[a]];
          counter.fds.push_back(fds[a]);
          ++counters->statuses_[counter.status_index].threads;
        }
      }
    };

    std::vector<Pending> pending;
    std::vector<perf_event_attr> requested;  // encodings of every requested name
    bool hardware_requested = false;
    for (const std::string& raw : names) {
      const auto begin = raw.find_first_not_of(" \t");
      if (begin == std::string::npos) continue;
      const std::string name = raw.substr(begin, raw.find_last_not_of(" \t") - begin + 1);
      hardware_requested |= prepare(name, false, &pending, &requested);
    }
    open_all(&pending);

    bool hardware_active = false;
    for (const Pending& p : pending) {
      hardware_active |= counters->statuses_[p.status_index].active && IsHardware(p.attr);
    }
    if (hardware_requested && !hardware_active) {
      std::vector<Pending> fallbacks;
      for (const char* name : kFallbackEvents) {
        perf_event_attr attr;
        if (EncodePerfEvent(name, true, &attr, nullptr) != PerfEncodeResult::kOk) continue;
        const bool already = std::any_of(requested.begin(), requested.end(), [&attr](const perf_event_attr& r) {
          return r.type == attr.type && r.config == attr.config;
        });
        if (!already) prepare(name, true, &fallbacks, &requested);
      }
      open_all(&fallbacks);
    }
    counters->follows_child_processes_ = !inherit_thread;
    counters->OpenPerCpu(active_attrs, env.paranoid, env.privileged, &budget);
  } catch (...) {
    // Out of memory: keep what was opened; the destructor closes it.
  }
  return counters;
}

PerfCounters::~PerfCounters() {
  for (const Counter& counter : counters_) {
    for (int fd : counter.fds) close(fd);
  }
  for (const CpuCounter& counter : cpu_counters_) close(counter.fd);
}

void PerfCounters::Read(std::vector<std::pair<std::string, double>>* out) {
  try {
    totals_.assign(counters_.size(), 0.0);
    for (std::size_t c = 0; c < counters_.size(); ++c) {
      if (counters_[c].grouped) continue;
      for (int fd : counters_[c].fds) {
        double value = 0;
        if (ReadScaledCount(fd, &value)) totals_[c] += value;
      }
    }
    double values[kMaxGroup];
    for (const Group& group : groups_) {
      if (!ReadScaledGroup(group.leader_fd, group.counters.size(), values)) continue;
      for (std::size_t i = 0; i < group.counters.size(); ++i) totals_[group.counters[i]] += values[i];
    }
    for (std::size_t c = 0; c < counters_.size(); ++c) {
      Counter& counter = counters_[c];
      counter.last = std::max(counter.last, totals_[c]);
      out->emplace_back(statuses_[counter.status_index].track, counter.last);
    }
    ReadPerCpu(out);
  } catch (...) {
    // Out of memory: this sample is incomplete.
  }
}

}  // namespace smprof::internal

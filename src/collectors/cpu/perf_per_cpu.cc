// Per-CPU perf counters: each active event counted system-wide on each online
// CPU (perf_event_open with pid -1, cpu N), where the kernel permits it. See
// perf_counters.h for which events and why.
#include <perfmon/pfmlib_perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "collectors/cpu/perf_counters.h"

namespace smprof::internal {

namespace {

constexpr char kOnlineCpus[] = "/sys/devices/system/cpu/online";
constexpr long kMaxCpu = 1L << 20;  // a bound on CPU numbers, against a malformed list

// Why an event has no per-CPU meaning; nullptr when it has one.
const char* NotPerCpu(const perf_event_attr& attr) {
  if (attr.type == PERF_TYPE_SOFTWARE) {
    switch (attr.config) {
      case PERF_COUNT_SW_CPU_CLOCK:
      case PERF_COUNT_SW_TASK_CLOCK:
        return "not counted per CPU: on a CPU a clock event only measures elapsed time, busy or idle alike";
      case PERF_COUNT_SW_DUMMY:
      case PERF_COUNT_SW_BPF_OUTPUT:
        return "not counted per CPU: this software event counts nothing";
      default:
        return nullptr;
    }
  }
  if (attr.type == PERF_TYPE_BREAKPOINT) return "not counted per CPU: a breakpoint watches this process's memory";
  return nullptr;
}

int OpenOnCpu(perf_event_attr* attr, int cpu) {
  return static_cast<int>(syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

bool IsPermissionError(int error) { return error == EACCES || error == EPERM; }

// Why perf_event_open failed, as the end of a sentence.
std::string Refusal(int error) {
  const std::string call = std::string("perf_event_open: ") + std::strerror(error);
  if (IsPermissionError(error)) {
    return "the kernel refused it (" + call +
           "): it needs CAP_PERFMON in the initial user namespace or kernel.perf_event_paranoid<=0, and a "
           "container's seccomp profile or a security module may block it";
  }
  if (error == EMFILE || error == ENFILE) {
    return "no file descriptors left (" + call + "): raise the open-files limit (ulimit -n)";
  }
  return "the kernel refused it (" + call + ")";
}

// "3", "3, 5", "3, 5, 7 and 2 more".
std::string CpuNumbers(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size() && i < 3; ++i) out += (i ? ", " : "") + std::to_string(cpus[i]);
  if (cpus.size() > 3) out += " and " + std::to_string(cpus.size() - 3) + " more";
  return out;
}

}  // namespace

bool ParseCpuList(const std::string& text, std::vector<int>* cpus) {
  cpus->clear();
  std::string list = text;
  while (!list.empty() && std::isspace(static_cast<unsigned char>(list.back()))) list.pop_back();
  if (list.empty()) return false;
  // One number at `*pos`, advancing it; -1 when there is none.
  auto number = [&list](std::size_t* pos) {
    long value = -1;
    while (*pos < list.size() && std::isdigit(static_cast<unsigned char>(list[*pos])) && value < kMaxCpu) {
      value = (value < 0 ? 0 : value * 10) + (list[*pos] - '0');
      ++*pos;
    }
    return value;
  };
  std::size_t pos = 0;
  while (true) {
    const long first = number(&pos);
    long last = first;
    if (pos < list.size() && list[pos] == '-') {
      ++pos;
      last = number(&pos);
    }
    if (first < 0 || last < first || last >= kMaxCpu) {
      cpus->clear();
      return false;
    }
    for (long cpu = first; cpu <= last; ++cpu) cpus->push_back(static_cast<int>(cpu));
    if (pos == list.size()) break;
    if (list[pos] != ',') {
      cpus->clear();
      return false;
    }
    ++pos;
  }
  std::sort(cpus->begin(), cpus->end());
  cpus->erase(std::unique(cpus->begin(), cpus->end()), cpus->end());
  return true;
}

void PerfCounters::OpenPerCpu(const std::vector<perf_event_attr>& attrs, int paranoid, bool privileged, long* budget) {
  // Events without per-CPU meaning say so whatever happens next.
  std::vector<std::size_t> eligible;  // into counters_
  for (std::size_t c = 0; c < counters_.size() && c < attrs.size(); ++c) {
    if (const char* why = NotPerCpu(attrs[c])) {
      statuses_[counters_[c].status_index].per_cpu_reason = why;
    } else {
      eligible.push_back(c);
    }
  }
  auto give_up = [&](const std::string& reason) {
    per_cpu_reason_ = reason;
    for (std::size_t c : eligible) statuses_[counters_[c].status_index].per_cpu_reason = reason;
  };
  if (!privileged && paranoid > 0) {
    give_up("per-CPU counting needs CAP_PERFMON or kernel.perf_event_paranoid<=0 (it is " + std::to_string(paranoid) +
            ")");
    return;
  }
  if (counters_.empty()) {
    give_up("no perf event is counted, so none is counted per CPU");
    return;
  }
  if (eligible.empty()) {
    give_up(
        "none of the counted perf events is counted per CPU (task-clock and cpu-clock only measure elapsed time "
        "there): add one such as context-switches, page-faults or cycles");
    return;
  }
  std::ifstream online(kOnlineCpus);
  std::string text;
  std::getline(online, text);
  std::vector<int> cpus;
  if (!ParseCpuList(text, &cpus)) {
    give_up(std::string("cannot tell which CPUs are online: ") + kOnlineCpus +
            (online ? " reads '" + text + "'" : " cannot be read"));
    return;
  }

  cpu_tracks_.reserve(eligible.size() * cpus.size());
  cpu_counters_.reserve(eligible.size() * cpus.size());
  std::string first_failure;  // why the first event that opened on no CPU failed
  for (std::size_t c : eligible) {
    PerfEventStatus& status = statuses_[counters_[c].status_index];
    // An event gets every CPU's descriptor or none, so its tracks cover the same CPUs.
    if (*budget < static_cast<long>(cpus.size())) {
      status.per_cpu_reason =
          "not counted per CPU: no file descriptors left (one per event and CPU): raise the open-files limit "
          "(ulimit -n)";
      if (first_failure.empty()) {
        first_failure =
            "no file descriptors left for per-CPU counting (one per event and CPU): raise the open-files limit "
            "(ulimit -n)";
      }
      continue;
    }
    perf_event_attr attr = attrs[c];
    attr.inherit = 0;
    attr.inherit_thread = 0;
    attr.disabled = 0;
    const std::size_t first = cpu_tracks_.size();
    std::vector<int> failed;
    int error = 0;  // the first one, or running out of descriptors
    bool out_of_fds = false;
    for (int cpu : cpus) {
      PerfCpuTrack track;
      track.name = status.name;
      track.track = "perf.cpu" + std::to_string(cpu) + "." + status.name;
      track.unit = status.unit;
      track.cpu = cpu;
      const int fd = OpenOnCpu(&attr, cpu);
      if (fd < 0) {
        const int open_error = errno;
        if (open_error == EMFILE || open_error == ENFILE) {
          out_of_fds = true;
          error = open_error;
          break;
        }
        if (error == 0) error = open_error;
        failed.push_back(cpu);
        if (IsPermissionError(open_error)) break;  // so would the other CPUs be
        continue;
      }
      --*budget;
      cpu_tracks_.push_back(std::move(track));  // reserved: does not throw
      cpu_counters_.push_back({fd, 0});
      ++status.cpus;
    }
    if (out_of_fds) {  // every CPU or none, as with the budget
      for (std::size_t i = first; i < cpu_counters_.size(); ++i) close(cpu_counters_[i].fd);
      cpu_counters_.erase(cpu_counters_.begin() + static_cast<std::ptrdiff_t>(first), cpu_counters_.end());
      cpu_tracks_.erase(cpu_tracks_.begin() + static_cast<std::ptrdiff_t>(first), cpu_tracks_.end());
      status.cpus = 0;
      *budget = 0;
    }
    if (error == 0) continue;
    if (status.cpus == 0) {
      status.per_cpu_reason = "not counted per CPU: " + Refusal(error);
      if (first_failure.empty()) first_failure = "per-CPU counting failed: " + Refusal(error);
    } else {
      // Which CPUs were missed: those that failed, and those not tried after a refusal.
      for (int cpu : cpus) {
        const bool counted = std::any_of(cpu_tracks_.begin() + static_cast<std::ptrdiff_t>(first), cpu_tracks_.end(),
                                         [cpu](const PerfCpuTrack& t) { return t.cpu == cpu; });
        if (!counted && std::find(failed.begin(), failed.end(), cpu) == failed.end()) failed.push_back(cpu);
      }
      std::sort(failed.begin(), failed.end());
      status.per_cpu_reason = std::string("not counted on CPU") + (failed.size() > 1 ? "s " : " ") +
                              CpuNumbers(failed) + ": " + Refusal(error);
    }
  }
  if (cpu_tracks_.empty()) per_cpu_reason_ = first_failure;
}

void PerfCounters::ReadPerCpu(std::vector<std::pair<std::string, double>>* out) {
  const std::size_t n = std::min(cpu_tracks_.size(), cpu_counters_.size());
  for (std::size_t i = 0; i < n; ++i) {
    CpuCounter& counter = cpu_counters_[i];
    double value = 0;
    if (ReadScaledCount(counter.fd, &value)) counter.last = std::max(counter.last, value);
    out->emplace_back(cpu_tracks_[i].track, counter.last);
  }
}

}  // namespace smprof::internal

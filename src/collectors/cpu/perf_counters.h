// Hardware and software counters of the whole process through perf_event_open,
// with event names resolved by libpfm4.
//
// Names. A name is a generic perf name (cycles, instructions, cache-misses,
// task-clock, context-switches, cs, L1-dcache-load-misses, ...) or a libpfm4
// event, [pmu::]EVENT[:UMASK][:modifier[=value]] with ':' or '.' between the
// parts, in any case (itlb_misses.miss_causes_a_walk, cpu_clk_unhalted.ref_tsc,
// amd64_fam19h_zen3::RETIRED_INSTRUCTIONS). A name is KNOWN when libpfm4 knows
// it for any PMU it supports, present on this machine or not; a known event of
// a PMU this CPU does not have is accepted and reported inactive.
//
// Reading. A thread's software events are one perf group, read with one
// read() (PERF_FORMAT_GROUP); hardware events are read one by one. Reading a
// thread's counters while it runs on another core makes the kernel read them
// there (an interrupt; a VM exit on a virtual machine: 7-10 us of that thread
// per read measured, docs/BENCHMARKS.md section 4), so fewer reads cost the
// job less.
//
// What is counted. Open attaches one counter per event to every thread listed
// in /proc/self/task, with inherit=1, so every thread created later by a
// counted thread (recursively: threads of those threads too) is counted; a
// thread's counts stay in the total after it exits. In practice this is every
// thread of the process from Open on. Not counted:
//  - work done before Open;
//  - a thread created during Open itself (a window of a few microseconds per
//    thread) by a thread whose counter was not open yet;
//  - threads beyond the file-descriptor budget (threads_missed);
//  - child processes (fork, or clone without CLONE_THREAD): inherit_thread=1
//    keeps them out on Linux >= 5.13; on older kernels they ARE counted while
//    they live and after they exit (follows_child_processes() says which);
//  - kernel mode, where perf_event_paranoid forbids it (user_only).
// After fork() the child's copy of a PerfCounters reads the PARENT's counters:
// a forked child must destroy it (closing is safe) and Open its own.
//
// Per CPU. Where permitted (CAP_PERFMON or CAP_SYS_ADMIN, or
// kernel.perf_event_paranoid<=0), Open also counts each active event on each
// online CPU (/sys/devices/system/cpu/online), system-wide: every task that
// runs there, of any process, and the kernel. These are the extra tracks
// "perf.cpu<N>.<name>" (per_cpu_tracks()). Events that get them: hardware
// events (cycles, instructions, cache events, raw and libpfm4 core events),
// tracepoints, and the software events that count occurrences
// (context-switches, cpu-migrations, page-faults, minor-faults, major-faults,
// alignment-faults, emulation-faults, cgroup-switches). Not: task-clock and
// cpu-clock (on a CPU they measure elapsed time, busy or idle alike), dummy,
// bpf-output and breakpoints; uncore events are never active. Per-CPU
// hardware counters share the PMU with the process's own, so both multiplex
// more (the values are scaled). Where not permitted there are no per-CPU
// tracks and per_cpu_reason() says why.
//
// Cost: events x (threads + CPUs) file descriptors; Read makes one read() per
// descriptor (reading a running per-CPU counter interrupts that CPU briefly).
// Nothing here prints: statuses() and per_cpu_reason() say what is active and
// why not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "smprof/status.h"

struct perf_event_attr;  // <perfmon/perf_event.h>, the kernel ABI struct

namespace smprof::internal {

struct PerfEventStatus {
  std::string name;   // as the user wrote it (trimmed), e.g. "cycles", "itlb_misses.miss_causes_a_walk"
  std::string track;  // counter track name, "perf.<name>"
  std::string unit;   // "ns" for task-clock and cpu-clock, else "count"
  bool active = false;
  std::string reason;      // empty when active; else why not, in words a user can act on
  bool fallback = false;   // added because no requested hardware event could be opened
  bool user_only = false;  // kernel mode is not counted (perf_event_paranoid)
  int threads = 0;         // threads whose counter was opened at Open (later ones are inherited)
  int threads_missed = 0;  // threads alive at Open that could not be counted (fd limit, ...)
  int cpus = 0;            // CPUs counted system-wide (tracks "perf.cpu<N>.<name>")
  // Empty when the event is inactive or counted on every online CPU; else why
  // not (on some CPUs), in words a user can act on.
  std::string per_cpu_reason;
};

// A per-CPU counter track.
struct PerfCpuTrack {
  std::string name;   // the event, as in PerfEventStatus::name
  std::string track;  // "perf.cpu<N>.<name>"
  std::string unit;   // the event's
  int cpu = 0;
};

// The default event list when the user gives none.
const std::vector<std::string>& DefaultPerfEvents();

// Splits a comma-separated list ("cycles, instructions"), skipping empty items
// and repeated names, and checks that every name is known (see above). An
// unknown name is kInvalidArgument naming it, with up to 3 close known names:
// "unknown perf event 'cycels' in PerfEvents; did you mean: cycles, ...".
// When libpfm4 itself cannot start, every name is accepted (Open says why
// nothing counts): a broken environment is not a configuration error.
Status ParsePerfEventList(const std::string& list, std::vector<std::string>* names);

class PerfCounters {
 public:
  // Opens the counters; never fails: statuses() says what is active. When no
  // requested hardware event opens, the software events task-clock,
  // context-switches and cpu-migrations are added (fallback=true) unless
  // already requested.
  static std::unique_ptr<PerfCounters> Open(const std::vector<std::string>& names);
  ~PerfCounters();  // closes every descriptor
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;

  const std::vector<PerfEventStatus>& statuses() const { return statuses_; }
  bool follows_child_processes() const { return follows_child_processes_; }
  // What the kernel allows this process, e.g. "perf_event_paranoid=2, no
  // CAP_PERFMON": the context of every reason in statuses().
  const std::string& permissions() const { return permissions_; }

  // Per-CPU counting (see above): whether any per-CPU track is open, the
  // tracks (by event in statuses() order, then by CPU), and when none is open
  // why not, e.g. "per-CPU counting needs CAP_PERFMON or
  // kernel.perf_event_paranoid<=0 (it is 2)"; empty when per_cpu().
  bool per_cpu() const { return !cpu_tracks_.empty(); }
  const std::vector<PerfCpuTrack>& per_cpu_tracks() const { return cpu_tracks_; }
  const std::string& per_cpu_reason() const { return per_cpu_reason_; }

  // Appends (track, value) for every active counter, in statuses() order:
  // summed over threads, each thread's count scaled for multiplexing, and
  // cumulative since Open; then one per per_cpu_tracks(), in that order,
  // scaled the same way. Values never decrease (a scaled estimate that would
  // dip is held at the last value). Call from one thread at a time.
  void Read(std::vector<std::pair<std::string, double>>* out);

  // Most software events read as one group per thread; more are read alone.
  static constexpr std::size_t kMaxGroup = 16;

 private:
  struct Counter {
    std::size_t status_index = 0;
    std::vector<int> fds;  // one per thread counted directly
    bool grouped = false;  // a software event: its fds are read through groups_
    double last = 0;
  };
  // One thread's software events: one read of the leader gives them all, in this order.
  struct Group {
    int leader_fd = -1;                 // also in its counter's fds
    std::vector<std::size_t> counters;  // into counters_
  };
  struct CpuCounter {  // parallel to cpu_tracks_
    int fd = -1;
    double last = 0;
  };
  PerfCounters() = default;

  // perf_per_cpu.cc: opens the per-CPU counters of the active counters, whose
  // encodings `attrs` are (parallel to counters_), taking descriptors from
  // `budget`; or sets per_cpu_reason_.
  void OpenPerCpu(const std::vector<perf_event_attr>& attrs, int paranoid, bool privileged, long* budget);
  void ReadPerCpu(std::vector<std::pair<std::string, double>>* out);

  std::vector<PerfEventStatus> statuses_;
  std::vector<Counter> counters_;  // the active ones
  std::vector<Group> groups_;      // one per thread counted, if it has software events
  std::vector<double> totals_;     // Read's, per counter
  bool follows_child_processes_ = false;
  std::vector<PerfCpuTrack> cpu_tracks_;
  std::vector<CpuCounter> cpu_counters_;
  std::string per_cpu_reason_;
  std::string permissions_;
};

// The multiplexing estimate: value * time_enabled / time_running; 0 when the
// counter never ran; value itself when it always ran.
double ScaleCount(std::uint64_t value, std::uint64_t time_enabled, std::uint64_t time_running);

// --- Shared by perf_counters.cc and perf_event_names.cc (libpfm4 side) ---

// The result of turning a name into a perf_event_attr.
enum class PerfEncodeResult {
  kOk,
  kUnknown,         // no PMU libpfm4 supports has it
  kPmuNotPresent,   // known, but only on PMUs this CPU does not have; `detail` names them
  kNoKernelDriver,  // the PMU is here but the kernel exposes no perf driver for it; `detail` names it
  kUncore,          // a socket-wide PMU: cannot count one process; `detail` names it
  kInvalid,         // a known event with a bad unit mask or modifier; `detail` says which
  kLibraryFailed,   // libpfm4 could not start; `detail` says why
};

// Encodes `name` into `attr` (zeroed first), counting kernel mode too when
// `with_kernel` unless the name says otherwise. Thread-safe.
PerfEncodeResult EncodePerfEvent(const std::string& name, bool with_kernel, perf_event_attr* attr, std::string* detail);

// Reads a counter opened with PERF_FORMAT_TOTAL_TIME_ENABLED|RUNNING into
// `value`, scaled (ScaleCount); false when the read fails.
bool ReadScaledCount(int fd, double* value);

// Parses a kernel CPU list, "0-3,8,10-11" (a trailing newline allowed), in
// ascending order without repeats; false when it is empty or malformed.
bool ParseCpuList(const std::string& text, std::vector<int>* cpus);

}  // namespace smprof::internal

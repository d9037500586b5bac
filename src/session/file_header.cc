#include "session/file_header.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <utility>

#include "runtime/warnings.h"
#include "trace/file_format.h"

namespace smprof::internal {

namespace {

std::vector<std::string> CommandLine() {
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(cmdline, arg, '\0')) argv.push_back(arg);
  return argv;
}

void AddCollector(trace::FileHeader* header, const char* name, bool active, const std::string& reason) {
  trace::CollectorStatus* collector = header->add_collectors();
  collector->set_name(name);
  collector->set_active(active);
  collector->set_reason(reason);
}

// The perf collector's status, and one warning naming what is missing.
void AddPerf(trace::FileHeader* header, const ResolvedConfig& config, const HeaderInputs& in) {
  if (!config.enable_perf) {
    AddCollector(header, "perf", false, "disabled by EnablePerf");
    return;
  }
  if (config.cpu_duration_s == 0) {
    AddCollector(header, "perf", false, "disabled by CpuProfilingDurationS=0 (the CPU sampler reads the counters)");
    return;
  }
  const std::vector<PerfEventStatus>& events = *in.perf_events;
  if (events.empty()) {
    AddCollector(header, "perf", false, "the perf counters could not be set up (out of memory)");
    return;
  }
  std::string active;
  std::vector<std::pair<std::string, std::string>> missing_by_reason;  // reason, names
  for (const PerfEventStatus& e : events) {
    trace::PerfEvent* event = header->add_perf_events();
    event->set_name(e.name);
    event->set_track(e.track);
    event->set_unit(e.unit);
    event->set_active(e.active);
    event->set_reason(e.reason);
    event->set_cpus(static_cast<std::uint32_t>(e.cpus));
    event->set_per_cpu_reason(e.per_cpu_reason);
    if (e.active) {
      active += (active.empty() ? "" : ", ") + e.name;
      continue;
    }
    auto it = std::find_if(missing_by_reason.begin(), missing_by_reason.end(),
                           [&e](const auto& group) { return group.first == e.reason; });
    if (it == missing_by_reason.end()) it = missing_by_reason.insert(it, {e.reason, ""});
    it->second += (it->second.empty() ? "" : ", ") + e.name;
  }
  std::string missing;
  for (const auto& [reason, names] : missing_by_reason)
    missing += (missing.empty() ? "" : "; ") + names + ": " + reason;
  AddCollector(header, "perf", !active.empty(),
               active.empty() ? "no perf event could be opened (" + in.perf_permissions + "): " + missing : "");
  header->set_perf_per_cpu_reason(in.perf_per_cpu_reason);
  if (!missing.empty()) {
    WarnOnce("perf-missing",
             "perf events not counted: " + missing + (active.empty() ? "; no perf counters" : "; counting " + active));
  }
}

// The cuda collector's status and versions, and one warning when the user
// wanted GPU data and gets none.
void AddCuda(trace::FileHeader* header, const ResolvedConfig& config, const CudaCollectionStatus* cuda) {
  CudaCollectionStatus off;
  off.reason = "disabled by EnableCuda";
  if (cuda == nullptr) cuda = &off;
  AddCollector(header, "cuda", cuda->active, cuda->reason);
  header->set_cupti_version(cuda->cupti_version);
  header->set_cuda_driver_version(cuda->driver_version);
  header->set_gpu_timebase(cuda->timebase);
  header->set_cupti_library(cuda->cupti_library);
  if (cuda->warn && !cuda->active) {
    const auto set = config.explicit_keys.find("EnableCuda");
    const std::string value = set == config.explicit_keys.end() ? "auto" : set->second;
    WarnOnce("cuda", "EnableCuda=" + value + ": GPU activity is not recorded: " + cuda->reason +
                         "; annotations and CPU data are recorded as usual");
  }
  if (cuda->active && !cuda->warning.empty()) WarnOnce("cuda-version", cuda->warning);
  if (cuda->active && !cuda->missing_kinds.empty()) {
    WarnOnce("cuda-kinds", "CUPTI refused some activity kinds; they are not recorded: " + cuda->missing_kinds);
  }
}

}  // namespace

trace::FileHeader MakeFileHeader(const HeaderInputs& in) {
  const ResolvedConfig& config = *in.config;
  const RankInfo& rank = *in.rank;
  trace::FileHeader header;
  header.set_format_version(trace_format::kFormatVersion);
  header.set_library_version(SMPROF_VERSION);
  header.set_host(rank.host);
  header.set_rank(rank.rank);
  header.set_local_rank(rank.local_rank);
  header.set_world_size(rank.world_size);
  header.set_job(rank.job);
  header.set_rank_source(rank.source);
  header.set_pid(getpid());
  header.set_parent_pid(getppid());
  for (const std::string& arg : CommandLine()) header.add_argv(arg);
  for (const auto& [key, value] : config.effective) (*header.mutable_config())[key] = value;
  header.mutable_start()->set_monotonic_ns(in.clock.monotonic_ns);
  header.mutable_start()->set_realtime_ns(in.clock.realtime_ns);
  header.set_session_index(in.session_index);
  if (!in.parent_trace.empty()) {
    header.set_forked_child(true);
    header.set_parent_trace(in.parent_trace);
  }

  AddCollector(&header, "annotations", true, "");
  AddCollector(&header, "cpu", config.cpu_duration_s > 0,
               config.cpu_duration_s > 0 ? "" : "disabled by CpuProfilingDurationS=0");
  AddPerf(&header, config, in);
  AddCollector(&header, "fork_follow", config.enable_fork_follow,
               config.enable_fork_follow ? "" : "disabled by EnableForkFollow");
  AddCuda(&header, config, in.cuda);
  return header;
}

}  // namespace smprof::internal

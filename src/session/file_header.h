// The FileHeader of a session's trace: who wrote it, with which settings,
// when, and which collectors run (and why the others do not).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectors/cpu/perf_counters.h"
#include "collectors/cuda/cuda_collection.h"
#include "runtime/clock_anchor.h"
#include "runtime/resolved_config.h"
#include "session/rank_info.h"
#include "smprof/trace.pb.h"

namespace smprof::internal {

struct HeaderInputs {
  const ResolvedConfig* config;
  const RankInfo* rank;
  ClockPair clock;
  std::uint32_t session_index = 0;
  const std::vector<PerfEventStatus>* perf_events;  // empty when EnablePerf=0 or without CPU sampling
  std::string perf_per_cpu_reason;
  std::string perf_permissions;                // PerfCounters::permissions()
  std::string parent_trace;                    // set for a followed forked child
  const CudaCollectionStatus* cuda = nullptr;  // null: GPU collection was not attempted
};

// Also prints, once per process, a warning for each collector the user
// asked for that cannot run.
trace::FileHeader MakeFileHeader(const HeaderInputs& in);

}  // namespace smprof::internal

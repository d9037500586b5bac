// Clock alignment between the processes of a job (docs/ANALYSIS.md, "One
// clock across hosts"). A launcher measures round trips between this process
// and a reference process (rank 0) and records them here; they go in the
// footer of the session's files, and the analysis places this process on the
// reference's wall clock with them. smppy does this over torch.distributed's
// store at start and stop (smppy.align_clocks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smprof/export.h"
#include "smprof/status.h"

namespace smprof {

// One round trip, each time on its process's CLOCK_MONOTONIC (nanoseconds):
// this process sends at local_send_ns, the reference receives at
// reference_receive_ns and answers at reference_send_ns, this process
// receives the answer at local_receive_ns.
struct ClockSample {
  std::int64_t local_send_ns = 0;
  std::int64_t reference_receive_ns = 0;
  std::int64_t reference_send_ns = 0;
  std::int64_t local_receive_ns = 0;
};

struct ClockAlignment {
  std::string phase;  // "start", "stop", or a caller's name for the round
  std::int32_t reference_rank = 0;
  std::string reference_host;
  // The reference's CLOCK_REALTIME - CLOCK_MONOTONIC during the round.
  std::int64_t reference_clock_offset_ns = 0;
  std::vector<ClockSample> samples;  // empty in the reference's own record
  std::string problem;               // why the round failed; "" when it succeeded
};

// Adds one round to the running session (written in its footers). Fails
// when no session is running.
SMPROF_API Status RecordClockAlignment(const ClockAlignment& alignment);

// This process's CLOCK_REALTIME - CLOCK_MONOTONIC, as the trace's clock
// anchors read it: what a reference sends as reference_clock_offset_ns.
SMPROF_API std::int64_t ClockOffsetNs();

}  // namespace smprof

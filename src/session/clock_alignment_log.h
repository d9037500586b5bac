// The running session's clock-alignment rounds (smprof/clock_alignment.h),
// between the callers of RecordClockAlignment and the footers that carry
// them. Thread-safe.
#pragma once

#include "smprof/trace.pb.h"

namespace smprof::internal {

// Forgets the rounds of the previous session (at start).
void ClearClockAlignments();

// Copies every round recorded so far into `footer`.
void AddClockAlignmentsTo(trace::Footer* footer);

}  // namespace smprof::internal

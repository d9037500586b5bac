// The collective calls on their way from the framework hooks (the PyTorch
// dispatcher kernel of smppy.integrations._torch_auto, through
// _smppy.record_collective) to the drain: one bounded buffer for the process,
// never destroyed, so a hook that fires while a session stops writes into
// valid memory and never waits for the stop.
#pragma once

#include <cstddef>

#include "runtime/bounded_buffer.h"
#include "trace/records.h"

namespace smprof::internal {

// Calls buffered between two frames, at most (a DDP step makes one per
// gradient bucket; about 10 MiB at the bound).
constexpr std::size_t kMaxBufferedCollectives = 1 << 16;

BoundedBuffer<CollectiveRecord>& CollectiveRecords();

// Buffers `record` while a session records; false (and nothing kept) otherwise.
bool RecordCollective(CollectiveRecord record);

}  // namespace smprof::internal

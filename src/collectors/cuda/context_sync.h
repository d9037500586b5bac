// Waiting for the GPU work already queued when a session stops, so its
// records are complete (non-zero end) when CUPTI flushes them.
//
// Through the driver entry points of the CuptiApi table (libcuda.so.1, which
// the process has loaded). Synchronizes every device's primary context that
// is active (what PyTorch and the runtime API use; one that does not exist is
// never created) and the stopping thread's current context (a C++ program's
// own). Never initialises CUDA: without cuInit there is nothing to wait for.
//
// cuCtxSynchronize has no timeout, and one kernel that never ends (a
// collective whose peer died) would hang the stop, and with it the training
// job. The wait runs on a helper thread; the stop waits for it until a
// deadline and then goes on without it. A helper still blocked in the driver
// makes later waits give up at once (one blocked thread at most).
#pragma once

#include <cstdint>
#include <string>

#include "collectors/cuda/cupti_library.h"

namespace smprof::internal {

struct ContextSyncResult {
  std::uint32_t synchronized = 0;  // contexts waited for
  std::string failure;             // the first driver error, or why the wait gave up; "" when none
  bool timed_out = false;          // the deadline passed (or an earlier wait is still blocked)
};

// Waits at most `timeout_ms` for the queued work of the active contexts.
ContextSyncResult WaitForQueuedWork(const CuptiApi& api, std::uint32_t timeout_ms);

}  // namespace smprof::internal

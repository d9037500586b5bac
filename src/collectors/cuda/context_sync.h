// Waiting for the GPU work already queued when a session stops, so its
// records are complete (non-zero end) when CUPTI flushes them.
//
// Through the driver entry points of the CuptiApi table (libcuda.so.1, which
// the process has loaded). Synchronizes every device's primary context that
// is active (what PyTorch and the runtime API use; one that does not exist is
// never created) and the calling thread's current context (a C++ program's
// own). Never initialises CUDA: without cuInit there is nothing to wait for.
#pragma once

#include <cstdint>
#include <string>

#include "collectors/cuda/cupti_library.h"

namespace smprof::internal {

struct ContextSyncResult {
  std::uint32_t synchronized = 0;  // contexts waited for
  std::string failure;             // the first driver error, "" when none
};

ContextSyncResult SynchronizeActiveContexts(const CuptiApi& api);

}  // namespace smprof::internal

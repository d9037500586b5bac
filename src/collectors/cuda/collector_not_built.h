// What a libsmprof built without the CUPTI headers (the CPU-only build,
// cmake/smprof_cuda_headers.cmake) says at start: why there is no GPU data,
// and, when the user asked for it (EnableCuda=1) or an NVIDIA driver is on
// the machine under EnableCuda=auto, one warning, so a source install that
// missed the headers does not pass for a GPU profile.
#pragma once

#include "collectors/cuda/cuda_collection.h"
#include "runtime/resolved_config.h"

namespace smprof::internal {

// The kernel driver's version file: present where an NVIDIA driver is
// loaded. Looked at, never opened through CUDA (smprof must not load or
// initialise the CUDA driver, docs/GPU.md).
inline constexpr const char* kNvidiaDriverVersionFile = "/proc/driver/nvidia/version";

bool NvidiaDriverPresent(const char* version_file = kNvidiaDriverVersionFile);

CudaCollectionStatus CollectorNotBuiltStatus(const ResolvedConfig& config, bool nvidia_driver_present);

}  // namespace smprof::internal

#include "collectors/cuda/collector_not_built.h"

#include <unistd.h>

namespace smprof::internal {

bool NvidiaDriverPresent(const char* version_file) { return access(version_file, F_OK) == 0; }

CudaCollectionStatus CollectorNotBuiltStatus(const ResolvedConfig& config, bool nvidia_driver_present) {
  CudaCollectionStatus status;
  if (config.enable_cuda == Tristate::kOff) {
    status.reason = "disabled by EnableCuda";
    return status;
  }
  status.reason =
      "this libsmprof was built without the CUPTI headers (no CUDA toolkit or CUDA header wheels at build time, "
      "docs/GPU.md \"Building without a toolkit\"): GPU activity is not recorded";
  if (nvidia_driver_present) status.reason += " although an NVIDIA driver is loaded";
  status.warn = config.enable_cuda == Tristate::kOn || nvidia_driver_present;
  return status;
}

}  // namespace smprof::internal

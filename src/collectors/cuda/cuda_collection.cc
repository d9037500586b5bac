#include "collectors/cuda/cuda_collection.h"

#include <algorithm>

#include "collectors/cuda/cupti_collector.h"
#include "collectors/cuda/cupti_library.h"

namespace smprof::internal {

namespace {

// CUPTI's own recommendation is a few MiB per buffer; CudaBufferMB sets how
// many there may be.
constexpr std::size_t kCuptiBufferMB = 4;

CuptiCollectorOptions OptionsFor(const ResolvedConfig& config) {
  CuptiCollectorOptions options;
  options.buffer_bytes = kCuptiBufferMB << 20;
  options.max_buffers = std::max<std::size_t>(2, config.cuda_buffer_mb / kCuptiBufferMB);
  return options;
}

}  // namespace

std::size_t GpuRecordLimit(const ResolvedConfig& config) {
  return (static_cast<std::size_t>(config.cuda_buffer_mb) << 20) / sizeof(GpuActivityRecord);
}

CudaCollectionStatus StartCudaCollection(const ResolvedConfig& config, GpuRecordBuffer* sink) {
  CudaCollectionStatus status;
  if (config.enable_cuda == Tristate::kOff) {
    status.reason = "disabled by EnableCuda";
    return status;
  }
  if (config.enable_cuda == Tristate::kAuto && !CudaDriverPresent()) {
    status.reason = "EnableCuda=auto and no CUDA driver (libcuda.so.1 not found)";
    return status;
  }
  status.warn = true;
  std::string error;
  const CuptiApi* api = LoadProductionCupti(&error);
  if (api == nullptr) {
    status.reason = error;
    return status;
  }
  const CuptiStartResult started = StartCuptiCollection(api, OptionsFor(config), sink);
  status.active = started.active;
  status.reason = started.reason;
  status.cupti_version = started.cupti_version;
  status.driver_version = started.driver_version;
  status.timebase = started.timebase;
  status.missing_kinds = started.missing_kinds;
  return status;
}

CudaCollectionTotals StopCudaCollection() {
  const CuptiStopResult stopped = StopCuptiCollection();
  return CudaCollectionTotals{stopped.cupti_dropped, stopped.buffers_refused};
}

void AbandonCudaCollectionInChild() { AbandonCuptiCollectionInChild(); }

}  // namespace smprof::internal

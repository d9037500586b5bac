// GPU collection in a libsmprof built without the CUPTI headers.
#include "collectors/cuda/cuda_collection.h"

namespace smprof::internal {

std::size_t GpuRecordLimit(const ResolvedConfig&) { return 0; }

CudaCollectionStatus StartCudaCollection(const ResolvedConfig& config, GpuRecordBuffer*) {
  CudaCollectionStatus status;
  status.reason = config.enable_cuda == Tristate::kOff
                      ? "disabled by EnableCuda"
                      : "this libsmprof was built without the CUPTI headers (CUDA toolkit or nvidia-cuda-cupti)";
  status.warn = config.enable_cuda == Tristate::kOn;
  return status;
}

CudaCollectionTotals StopCudaCollection(const std::string&) { return {}; }

void TickCudaCollection() {}

void AbandonCudaCollectionInChild() {}

void UseCuptiApiForTesting(const CuptiApi*) {}

}  // namespace smprof::internal

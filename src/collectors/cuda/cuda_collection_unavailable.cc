// GPU collection in a libsmprof built without the CUPTI headers.
#include "collectors/cuda/collector_not_built.h"
#include "collectors/cuda/cuda_collection.h"

namespace smprof::internal {

std::size_t GpuRecordLimit(const ResolvedConfig&) { return 0; }

CudaCollectionStatus StartCudaCollection(const ResolvedConfig& config, GpuRecordBuffer*) {
  return CollectorNotBuiltStatus(config, NvidiaDriverPresent());
}

CudaCollectionTotals StopCudaCollection(const std::string&) { return {}; }

void TickCudaCollection() {}

void AbandonCudaCollectionInChild() {}

void UseCuptiApiForTesting(const CuptiApi*) {}

}  // namespace smprof::internal

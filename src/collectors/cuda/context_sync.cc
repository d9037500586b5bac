#include "collectors/cuda/context_sync.h"

namespace smprof::internal {

namespace {

void Note(ContextSyncResult* result, const char* call, CUresult code) {
  if (code == CUDA_SUCCESS || !result->failure.empty()) return;
  result->failure = std::string(call) + " returned " + std::to_string(static_cast<int>(code));
}

bool HasDriverEntryPoints(const CuptiApi& api) {
  return api.DeviceGetCount != nullptr && api.DeviceGet != nullptr && api.DevicePrimaryCtxGetState != nullptr &&
         api.DevicePrimaryCtxRetain != nullptr && api.DevicePrimaryCtxRelease != nullptr &&
         api.CtxGetCurrent != nullptr && api.CtxPushCurrent != nullptr && api.CtxPopCurrent != nullptr &&
         api.CtxSynchronize != nullptr;
}

}  // namespace

ContextSyncResult SynchronizeActiveContexts(const CuptiApi& api) {
  ContextSyncResult result;
  if (!HasDriverEntryPoints(api)) return result;
  CUcontext current = nullptr;
  if (api.CtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr) {
    const CUresult synced = api.CtxSynchronize();
    Note(&result, "cuCtxSynchronize", synced);
    if (synced == CUDA_SUCCESS) ++result.synchronized;
  }
  int devices = 0;
  if (api.DeviceGetCount(&devices) != CUDA_SUCCESS) return result;  // CUDA never initialised
  for (int ordinal = 0; ordinal < devices; ++ordinal) {
    CUdevice device = 0;
    unsigned int flags = 0;
    int active = 0;
    if (api.DeviceGet(&device, ordinal) != CUDA_SUCCESS ||
        api.DevicePrimaryCtxGetState(device, &flags, &active) != CUDA_SUCCESS || active == 0) {
      continue;
    }
    CUcontext primary = nullptr;
    if (CUresult retained = api.DevicePrimaryCtxRetain(&primary, device); retained != CUDA_SUCCESS) {
      Note(&result, "cuDevicePrimaryCtxRetain", retained);
      continue;
    }
    if (primary != current) {  // the current one is already done
      if (CUresult pushed = api.CtxPushCurrent(primary); pushed == CUDA_SUCCESS) {
        const CUresult synced = api.CtxSynchronize();
        Note(&result, "cuCtxSynchronize", synced);
        if (synced == CUDA_SUCCESS) ++result.synchronized;
        CUcontext popped = nullptr;
        api.CtxPopCurrent(&popped);
      } else {
        Note(&result, "cuCtxPushCurrent", pushed);
      }
    }
    api.DevicePrimaryCtxRelease(device);
  }
  return result;
}

}  // namespace smprof::internal

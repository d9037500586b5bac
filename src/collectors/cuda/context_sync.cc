#include "collectors/cuda/context_sync.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

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

// Makes `context` current on this (the helper's) thread, waits, pops it.
void SynchronizeContext(const CuptiApi& api, CUcontext context, ContextSyncResult* result) {
  if (CUresult pushed = api.CtxPushCurrent(context); pushed != CUDA_SUCCESS) {
    Note(result, "cuCtxPushCurrent", pushed);
    return;
  }
  const CUresult synced = api.CtxSynchronize();
  Note(result, "cuCtxSynchronize", synced);
  if (synced == CUDA_SUCCESS) ++result->synchronized;
  CUcontext popped = nullptr;
  api.CtxPopCurrent(&popped);
}

// `stopping_context`: the stopping thread's current context, or nullptr.
ContextSyncResult SynchronizeActiveContexts(const CuptiApi& api, CUcontext stopping_context) {
  ContextSyncResult result;
  if (stopping_context != nullptr) SynchronizeContext(api, stopping_context, &result);
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
    if (primary != stopping_context) SynchronizeContext(api, primary, &result);  // else already done
    api.DevicePrimaryCtxRelease(device);
  }
  return result;
}

// Shared by the stop and its helper: the helper may outlive the stop.
struct PendingWait {
  std::mutex mutex;
  std::condition_variable done_changed;
  bool done = false;
  ContextSyncResult result;
};

// Set while a helper is inside the driver, until it returns.
std::atomic<bool> g_helper_in_driver{false};

}  // namespace

ContextSyncResult WaitForQueuedWork(const CuptiApi& api, std::uint32_t timeout_ms) {
  ContextSyncResult result;
  if (!HasDriverEntryPoints(api)) return result;
  if (g_helper_in_driver.exchange(true)) {
    result.timed_out = true;
    result.failure = "an earlier stop's wait for the GPU is still blocked in the driver; not waiting again";
    return result;
  }
  CUcontext stopping_context = nullptr;
  if (api.CtxGetCurrent(&stopping_context) != CUDA_SUCCESS) stopping_context = nullptr;
  auto pending = std::make_shared<PendingWait>();
  try {
    std::thread([&api, stopping_context, pending] {
      ContextSyncResult synced = SynchronizeActiveContexts(api, stopping_context);
      g_helper_in_driver.store(false);
      std::lock_guard<std::mutex> lock(pending->mutex);
      pending->result = std::move(synced);
      pending->done = true;
      pending->done_changed.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    g_helper_in_driver.store(false);
    result.failure = std::string("could not start the thread that waits for the GPU: ") + e.what();
    return result;
  }
  std::unique_lock<std::mutex> lock(pending->mutex);
  if (pending->done_changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return pending->done; })) {
    return pending->result;
  }
  result.timed_out = true;
  result.failure = "gave up waiting for the GPU after " + std::to_string(timeout_ms) +
                   " ms (CudaSyncTimeoutMs): a kernel still running, or a collective waiting for a peer";
  return result;
}

}  // namespace smprof::internal

#include "collectors/cuda/cupti_library.h"

#include <dlfcn.h>

#include <mutex>

#include "collectors/cuda/cupti_search.h"

namespace smprof::internal {

namespace {

template <typename Fn>
bool Resolve(void* handle, const char* symbol, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (*out == nullptr) *missing += (missing->empty() ? "" : ", ") + std::string(symbol);
  return *out != nullptr;
}

bool ResolveAll(void* handle, CuptiApi* api, std::string* error) {
  std::string missing;
  Resolve(handle, "cuptiGetVersion", &api->GetVersion, &missing);
  Resolve(handle, "cuptiGetResultString", &api->GetResultString, &missing);
  Resolve(handle, "cuptiGetTimestamp", &api->GetTimestamp, &missing);
  Resolve(handle, "cuptiGetCallbackName", &api->GetCallbackName, &missing);
  Resolve(handle, "cuptiSubscribe", &api->Subscribe, &missing);
  Resolve(handle, "cuptiUnsubscribe", &api->Unsubscribe, &missing);
  Resolve(handle, "cuptiEnableCallback", &api->EnableCallback, &missing);
  Resolve(handle, "cuptiActivityRegisterCallbacks", &api->ActivityRegisterCallbacks, &missing);
  Resolve(handle, "cuptiActivityRegisterTimestampCallback", &api->ActivityRegisterTimestampCallback, &missing);
  Resolve(handle, "cuptiSetThreadIdType", &api->SetThreadIdType, &missing);
  Resolve(handle, "cuptiActivityEnable", &api->ActivityEnable, &missing);
  Resolve(handle, "cuptiActivityDisable", &api->ActivityDisable, &missing);
  Resolve(handle, "cuptiActivityFlushAll", &api->ActivityFlushAll, &missing);
  Resolve(handle, "cuptiActivityGetNumDroppedRecords", &api->ActivityGetNumDroppedRecords, &missing);
  Resolve(handle, "cuptiActivityGetNextRecord", &api->ActivityGetNextRecord, &missing);
  Resolve(handle, "cuptiActivityPushExternalCorrelationId", &api->ActivityPushExternalCorrelationId, &missing);
  Resolve(handle, "cuptiActivityPopExternalCorrelationId", &api->ActivityPopExternalCorrelationId, &missing);
  if (!missing.empty()) *error = "libcupti lacks " + missing + "; smprof needs CUPTI from CUDA 12 or later";
  std::string optional;  // a library without these works, with less
  Resolve(handle, "cuptiActivityEnableAndDump", &api->ActivityEnableAndDump, &optional);
  Resolve(handle, "cuptiActivityFlushPeriod", &api->ActivityFlushPeriod, &optional);
  Resolve(handle, "cuptiActivitySetAttribute", &api->ActivitySetAttribute, &optional);
  Resolve(handle, "cuptiActivityEnableRuntimeApi", &api->ActivityEnableRuntimeApi, &optional);
  Resolve(handle, "cuptiActivityEnableDriverApi", &api->ActivityEnableDriverApi, &optional);
  Resolve(handle, "cuptiActivityEnableAllSyncRecords", &api->ActivityEnableAllSyncRecords, &optional);
  return missing.empty();
}

// The driver's entry points, by the names cuda.h's macros select (_v2).
void ResolveDriver(void* driver, CuptiApi* api) {
  std::string absent;  // each is checked for null where it is used
  Resolve(driver, "cuDriverGetVersion", &api->DriverGetVersion, &absent);
  Resolve(driver, "cuDeviceGetCount", &api->DeviceGetCount, &absent);
  Resolve(driver, "cuDeviceGet", &api->DeviceGet, &absent);
  Resolve(driver, "cuDevicePrimaryCtxGetState", &api->DevicePrimaryCtxGetState, &absent);
  Resolve(driver, "cuDevicePrimaryCtxRetain", &api->DevicePrimaryCtxRetain, &absent);
  Resolve(driver, "cuDevicePrimaryCtxRelease_v2", &api->DevicePrimaryCtxRelease, &absent);
  Resolve(driver, "cuCtxGetCurrent", &api->CtxGetCurrent, &absent);
  Resolve(driver, "cuCtxPushCurrent_v2", &api->CtxPushCurrent, &absent);
  Resolve(driver, "cuCtxPopCurrent_v2", &api->CtxPopCurrent, &absent);
  Resolve(driver, "cuCtxSynchronize", &api->CtxSynchronize, &absent);
}

std::string LoadedPath(void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "";
}

}  // namespace

const CuptiApi* LoadProductionCupti(std::string* error) {
  static std::mutex mutex;
  static const CuptiApi* loaded = nullptr;  // leaked with the library: see the header
  static std::string load_error;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded == nullptr && load_error.empty()) {
    const OpenedCupti opened = OpenCupti(CuptiSearchInputsOfThisProcess());
    void* handle = opened.handle;
    load_error = opened.error;
    auto* api = new CuptiApi();
    if (handle != nullptr && ResolveAll(handle, api, &load_error)) {
      api->cupti_path = LoadedPath(reinterpret_cast<void*>(api->GetVersion));
      if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) ResolveDriver(driver, api);
      loaded = api;
    } else {
      delete api;
    }
  }
  if (loaded == nullptr) *error = load_error;
  return loaded;
}

bool CudaDriverPresent() {
  static const bool present = [] {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    return driver != nullptr;  // kept loaded: CUPTI loads it anyway
  }();
  return present;
}

std::string CuptiErrorText(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.GetResultString == nullptr || api.GetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    text = "CUPTI error";
  }
  return std::string(text) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

}  // namespace smprof::internal

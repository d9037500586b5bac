// CuptiApi: the CUPTI functions smprof calls, and the CUDA driver's version
// query, as a table of function pointers.
//
// libsmprof never links libcupti or libcuda: LoadProductionCupti() dlopens
// them when a session asks for GPU collection (never at import or static
// initialisation), so the library works on machines without CUDA. Tests fill
// the same table with a scriptable double (tests/cpp/support/fake_cupti.h).
//
// The libraries stay loaded for the rest of the process once loaded: CUPTI
// may still call back into smprof (late buffers), annotations may still pop
// correlation ids, and unloading CUPTI is one of the ways to crash.
#pragma once

#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <cupti_version.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace smprof::internal {

struct CuptiApi {
  CUptiResult (*GetVersion)(std::uint32_t* version) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult result, const char** text) = nullptr;
  CUptiResult (*GetTimestamp)(std::uint64_t* ns) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain domain, std::uint32_t cbid, const char** name) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* data) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle subscriber) = nullptr;
  CUptiResult (*EnableCallback)(std::uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                                CUpti_CallbackId cbid) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc requested,
                                           CUpti_BuffersCallbackCompleteFunc completed) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc callback) = nullptr;
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType type) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*ActivityFlushAll)(std::uint32_t flag) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext context, std::uint32_t stream, std::size_t* dropped) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(std::uint8_t* buffer, std::size_t valid_size, CUpti_Activity** record) = nullptr;
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind kind, std::uint64_t id) = nullptr;
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind kind, std::uint64_t* last) = nullptr;

  // Newer CUPTI only; null where the loaded library lacks them.
  CUptiResult (*ActivityEnableAndDump)(CUpti_ActivityKind kind) = nullptr;  // 11.0+
  CUptiResult (*ActivityFlushPeriod)(std::uint32_t period_ms) = nullptr;    // 11.0+
  CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute attr, std::size_t* size, void* value) = nullptr;
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId cbid, std::uint8_t enable) = nullptr;  // 12.6+
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId cbid, std::uint8_t enable) = nullptr;   // 12.6+
  CUptiResult (*ActivityEnableAllSyncRecords)(std::uint8_t enable) = nullptr;                     // 12.4+

  // libcuda.so.1's cuDriverGetVersion; null when no CUDA driver is installed.
  CUresult (*DriverGetVersion)(int* version) = nullptr;
  // The driver entry points stop uses to wait for queued GPU work
  // (context_sync.h); null without a driver.
  CUresult (*DeviceGetCount)(int* count) = nullptr;
  CUresult (*DeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*DevicePrimaryCtxGetState)(CUdevice device, unsigned int* flags, int* active) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*DevicePrimaryCtxRelease)(CUdevice device) = nullptr;
  CUresult (*CtxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*CtxPushCurrent)(CUcontext context) = nullptr;
  CUresult (*CtxPopCurrent)(CUcontext* context) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;

  std::string cupti_path;  // the file libcupti was loaded from (NVTX injection)
};

// Loads libcupti (the one cupti_search.h picks for this process) and
// resolves every function of the table; the driver entry stays null without
// libcuda.so.1. Loaded once per process; later calls return the same table. nullptr when libcupti cannot be loaded,
// with the places tried in *error.
const CuptiApi* LoadProductionCupti(std::string* error);

// Whether a CUDA driver is installed (libcuda.so.1 loads): what
// EnableCuda=auto decides on. Does not initialise CUDA.
bool CudaDriverPresent();

// "CUPTI_ERROR_UNKNOWN (999)", using the table's GetResultString if it has one.
std::string CuptiErrorText(const CuptiApi& api, CUptiResult result);

}  // namespace smprof::internal

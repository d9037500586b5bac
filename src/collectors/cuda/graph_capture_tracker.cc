#include "collectors/cuda/graph_capture_tracker.h"

#include <cuda.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <algorithm>

namespace smprof::internal {

namespace {

// Every capture call, runtime and driver, takes the stream first
// (generated_cuda_runtime_api_meta.h and generated_cuda_meta.h: the
// *_params structs of cudaStreamBeginCapture, cudaStreamBeginCaptureToGraph,
// cudaStreamEndCapture and their cu* twins); cudaStream_t is CUstream.
struct StreamFirstParams {
  CUstream stream;
};

constexpr CUpti_CallbackId kRuntimeBegin[] = {CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                                              CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000,
                                              CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030,
                                              CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030};
constexpr CUpti_CallbackId kRuntimeEnd[] = {CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
                                            CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000};
constexpr CUpti_CallbackId kDriverBegin[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,        CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,     CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz};
constexpr CUpti_CallbackId kDriverEnd[] = {CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
                                           CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz};

template <std::size_t N>
bool Contains(const CUpti_CallbackId (&ids)[N], CUpti_CallbackId cbid) {
  return std::find(std::begin(ids), std::end(ids), cbid) != std::end(ids);
}

// The call's return value at API exit: 0 is success in both APIs.
bool Succeeded(CUpti_CallbackDomain domain, const CUpti_CallbackData* data) {
  if (data->functionReturnValue == nullptr) return false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return *static_cast<const int*>(data->functionReturnValue) == 0;
  return *static_cast<const CUresult*>(data->functionReturnValue) == CUDA_SUCCESS;
}

}  // namespace

const std::vector<GraphCaptureTracker::Callback>& GraphCaptureTracker::Callbacks() {
  static const auto* callbacks = [] {
    auto* all = new std::vector<Callback>();
    for (CUpti_CallbackId id : kRuntimeBegin) all->push_back({CUPTI_CB_DOMAIN_RUNTIME_API, id});
    for (CUpti_CallbackId id : kRuntimeEnd) all->push_back({CUPTI_CB_DOMAIN_RUNTIME_API, id});
    for (CUpti_CallbackId id : kDriverBegin) all->push_back({CUPTI_CB_DOMAIN_DRIVER_API, id});
    for (CUpti_CallbackId id : kDriverEnd) all->push_back({CUPTI_CB_DOMAIN_DRIVER_API, id});
    return all;
  }();
  return *callbacks;
}

void GraphCaptureTracker::OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                        const CUpti_CallbackData* data) {
  if (data == nullptr || data->callbackSite != CUPTI_API_EXIT || data->functionParams == nullptr) return;
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const bool begins = runtime ? Contains(kRuntimeBegin, cbid) : Contains(kDriverBegin, cbid);
  const bool ends = runtime ? Contains(kRuntimeEnd, cbid) : Contains(kDriverEnd, cbid);
  if (!begins && !ends) return;
  const void* stream = static_cast<const StreamFirstParams*>(data->functionParams)->stream;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = std::find(streams_.begin(), streams_.end(), stream);
  if (begins) {
    // The runtime's begin reaches the driver's too: one stream, one entry.
    if (!Succeeded(domain, data) || it != streams_.end()) return;
    if (streams_.size() < kMaxStreams) {
      streams_.push_back(stream);
    } else {
      ++untracked_;
    }
    return;
  }
  // An end closes the capture whatever it returns (an invalidated capture too).
  if (it != streams_.end()) {
    streams_.erase(it);
  } else if (untracked_ > 0) {
    --untracked_;
  }
}

std::size_t GraphCaptureTracker::capturing() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return streams_.size() + untracked_;
}

void GraphCaptureTracker::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.clear();
  untracked_ = 0;
}

}  // namespace smprof::internal

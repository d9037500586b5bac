// Which streams are capturing a CUDA graph now, from CUPTI's API callbacks on
// stream capture begin and end (the runtime's and the driver's, each
// variant). Stop must not wait for the device while one is: a device-wide
// cuCtxSynchronize from another thread invalidates a global-mode capture
// (torch.cuda.graph, torch.compile's "reduce-overhead"), and from the
// capturing thread it is illegal (docs/GPU.md, "Stop during a capture").
//
// Only captures begun while smprof is subscribed are seen; smppy also asks
// torch whether the stopping thread's stream is capturing.
//
// Thread safety: OnApiCallback runs on the application's threads.
#pragma once

#include <cupti_callbacks.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace smprof::internal {

class GraphCaptureTracker {
 public:
  // The (domain, cbid) pairs to enable with cuptiEnableCallback.
  struct Callback {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
  };
  static const std::vector<Callback>& Callbacks();

  // A CUPTI API callback; ignores anything but capture begin and end.
  void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data);

  std::size_t capturing() const;  // streams capturing now
  void Clear();

 private:
  static constexpr std::size_t kMaxStreams = 1024;
  mutable std::mutex mutex_;
  std::vector<const void*> streams_;
  std::size_t untracked_ = 0;  // began past kMaxStreams
};

}  // namespace smprof::internal

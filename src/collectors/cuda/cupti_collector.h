// The CUPTI collector: one process-wide GPU activity collection, started and
// stopped with the session (docs/GPU.md, "Collection").
//
// Start subscribes to CUPTI (claiming its only subscriber slot), registers
// the timestamp callback once per process, the buffer callbacks, and enables
// the activity kinds; completed buffers are decoded (ActivityDecoder) into
// the session's GpuRecordBuffer. Stop disables the kinds, forces a flush,
// reads CUPTI's drop count and unsubscribes, so a later session in the same
// process can start again. Never cuptiFinalize; no CUPTI call from signal
// handlers or static destructors.
//
// CUPTI's callbacks carry no user data, so the state is process-wide; Start
// and Stop are serialized by the caller (the session's control lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collectors/cuda/cupti_library.h"
#include "collectors/cuda/gpu_record_buffer.h"

namespace smprof::internal {

struct CuptiCollectorOptions {
  std::size_t buffer_bytes = std::size_t{4} << 20;  // one CUPTI activity buffer
  std::size_t max_buffers = 16;                     // the pool's cap
  // Set NVTX_INJECTION64_PATH to the loaded libcupti when it is unset, so
  // NVTX ranges the application emits later reach CUPTI.
  bool inject_nvtx = true;
};

struct CuptiStartResult {
  bool active = false;
  std::string reason;  // why not, when inactive
  std::uint32_t cupti_version = 0;
  std::uint32_t driver_version = 0;
  std::string timebase;       // FileHeader.gpu_timebase
  std::string missing_kinds;  // optional activity kinds CUPTI refused, e.g. "MARKER: ..."
};

struct CuptiStopResult {
  std::uint64_t cupti_dropped = 0;    // cuptiActivityGetNumDroppedRecords over the session
  std::uint64_t buffers_refused = 0;  // buffer requests the full pool refused
  std::uint64_t buffers_completed = 0;
};

// Starts collecting into `sink` through `api` (which outlives the process).
// Every failure is soft: the result says why, nothing stays enabled.
CuptiStartResult StartCuptiCollection(const CuptiApi* api, const CuptiCollectorOptions& options, GpuRecordBuffer* sink);

// Flushes every buffer into the sink, then stops. No-op when not active.
CuptiStopResult StopCuptiCollection();

bool CuptiCollectionActive();

// In a forked child: forget the parent's collection without calling CUPTI;
// CUPTI stays off for the rest of the child's life.
void AbandonCuptiCollectionInChild();

// The callbacks registered with CUPTI, public so tests can call them as
// CUPTI does (from any thread, concurrently).
void CUPTIAPI CuptiBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
void CUPTIAPI CuptiBufferCompleted(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                                   std::size_t valid_size);

// CUPTI from CUDA 12.9 (API version 27) on accepts a NULL buffer from the
// buffer-requested callback; older versions may crash on it.
constexpr std::uint32_t kFirstCuptiAcceptingNullBuffers = 27;

}  // namespace smprof::internal

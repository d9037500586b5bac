// The CUPTI collector: one process-wide GPU activity collection, started and
// stopped with the session (docs/GPU.md, "Collection").
//
// Start subscribes to CUPTI (claiming its only subscriber slot; on failure
// nothing else is touched), registers the timestamp callback (once per
// process, where CUPTI's callback is not broken: cupti_clock.h), registers
// the buffer callbacks and enables the activity kinds (DEVICE and CONTEXT
// with cuptiActivityEnableAndDump, so a session started after CUDA was
// initialised still gets them). Started before the application initialised
// CUDA (cuDeviceGetCount: CUDA_ERROR_NOT_INITIALIZED), it enables only the
// resource callback and does the rest just after the application's first
// context (on a thread of its own, not inside the driver's callback), so
// smprof is never the one that initialises CUDA.
// Completed buffers are decoded
// (ActivityDecoder) into the session's GpuRecordBuffer, outside the lock
// buffer requests take. Stop waits for the queued GPU work (context_sync.h),
// disables the kinds, forces a flush, reads CUPTI's drop count and the
// decoder's counters, and unsubscribes, so a later session in the same
// process can start again. Never cuptiFinalize; no CUPTI call from signal
// handlers or static destructors.
//
// CUPTI's callbacks carry no user data, so the state is process-wide; Start
// and Stop are serialized by the caller (the session's control lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collectors/cuda/activity_decoder.h"
#include "collectors/cuda/cupti_library.h"
#include "collectors/cuda/gpu_record_buffer.h"

namespace smprof::internal {

struct CuptiCollectorOptions {
  std::size_t buffer_bytes = std::size_t{4} << 20;  // one CUPTI activity buffer
  std::size_t max_buffers = 16;                     // the pool's cap
  // Set NVTX_INJECTION64_PATH to the loaded libcupti when it is unset, so
  // NVTX ranges the application emits later reach CUPTI; at most once per
  // process, never withdrawn (nvtx_injection.h).
  bool inject_nvtx = true;
  // cuptiActivityFlushPeriod: CUPTI's worker completes full buffers at least
  // this often, so a killed job keeps its GPU rows; 0 leaves CUPTI's default.
  std::uint32_t flush_period_ms = 1000;
  // Stop waits for the GPU work already queued (cuCtxSynchronize), at most
  // sync_timeout_ms (context_sync.h).
  bool synchronize_at_stop = true;
  std::uint32_t sync_timeout_ms = 5000;
};

struct CuptiStartResult {
  bool active = false;
  std::string reason;  // why not, when inactive
  std::uint32_t cupti_version = 0;
  std::uint32_t driver_version = 0;
  std::string timebase;       // FileHeader.gpu_timebase
  std::string missing_kinds;  // optional activity kinds CUPTI refused, e.g. "MARKER: ..."
  std::string cupti_library;  // the libcupti file
  std::string warning;        // a known defect of this CUPTI, "" when none
};

struct CuptiStopResult {
  std::uint64_t cupti_dropped = 0;    // cuptiActivityGetNumDroppedRecords over the session
  std::uint64_t buffers_refused = 0;  // buffer requests the full pool refused
  std::uint64_t buffers_completed = 0;
  // Buffers lent to CUPTI that did not come back by the forced flush at stop:
  // another CUPTI client (Kineto) registered its own buffer callbacks.
  std::uint64_t buffers_not_returned = 0;
  // Buffers that came back to our callback but were not ours (another
  // client's, after we registered ours over its): decoded, never reused.
  std::uint64_t foreign_buffers = 0;
  ActivityDecoderStats decoder;  // what the session's decoder dropped
  std::uint32_t contexts_synchronized = 0;
  std::string synchronize_failure;     // the first driver error while waiting, or why it gave up; "" when none
  bool synchronize_timed_out = false;  // the wait passed sync_timeout_ms and the stop went on
  std::string synchronize_skipped;     // why stop did not wait at all, "" when it did
  // Why another CUPTI client is believed active in this process, "" when
  // nothing suggests one.
  std::string foreign_client;
  std::string timebase;  // the clock the session's records were stamped on (CuptiStartResult::timebase)
};

// Starts collecting into `sink` through `api` (which outlives the process).
// Every failure is soft: the result says why, nothing stays enabled.
CuptiStartResult StartCuptiCollection(const CuptiApi* api, const CuptiCollectorOptions& options, GpuRecordBuffer* sink);

// Waits for queued GPU work, flushes every buffer into the sink, then stops.
// The wait is bounded (sync_timeout_ms), runs with the API and
// synchronization kinds already off (its own calls are not recorded), and is
// skipped when the options say so, while a stream captures a CUDA graph
// (graph_capture_tracker.h), or when `no_wait_reason` is given (the exit
// stop: a stuck kernel must not hang the exit). No-op when not active.
CuptiStopResult StopCuptiCollection(const std::string& no_wait_reason = "");

// Every drain frame: reads a clock pair (cupti_clock.h) and has CUPTI hand
// back every buffer holding finished records (cuptiActivityFlushAll(0)), so
// a job killed without a stop loses at most the last frame's GPU rows. A
// no-op while inactive or while a stop is under way.
void TickCuptiCollection();

bool CuptiCollectionActive();

// In a forked child: forget the parent's collection without calling CUPTI;
// CUPTI stays off for the rest of the child's life.
void AbandonCuptiCollectionInChild();

// The callbacks registered with CUPTI, public so tests can call them as
// CUPTI does (from any thread, concurrently).
void CUPTIAPI CuptiBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
void CUPTIAPI CuptiBufferCompleted(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                                   std::size_t valid_size);

// cuptiActivityRegisterTimestampCallback zeroes or shifts kernel stamps
// from CUDA 12.6 Update 2 (API version 24 covers every 12.6 update) until
// CUDA 13.1 (CUPTI release notes, 13.1: "invalid (zero) kernel timestamps
// when using cuptiActivityRegisterTimestampCallback"; pytorch/pytorch#192021).
// On those versions CUPTI keeps its own clock (cupti_clock.h).
constexpr std::uint32_t kFirstCuptiWithTimestampCallbackBug = 24;
constexpr std::uint32_t kFirstCuptiWithTimestampCallbackFix = 130100;
bool CuptiTimestampCallbackIsSafe(std::uint32_t version);

// CUPTI from CUDA 12.9 (API version 27) on accepts a NULL buffer from the
// buffer-requested callback; older versions may crash on it.
constexpr std::uint32_t kFirstCuptiAcceptingNullBuffers = 27;

// CuptiStopResult::synchronize_skipped of a session in which the application
// created no CUDA context: started before CUDA was initialised, the
// collector enabled nothing (it waits for the first context, never
// initialising CUDA itself).
inline constexpr const char* kNoContextYet =
    "the application created no CUDA context during the session (smprof waits for its first; it never "
    "initialises CUDA)";

// CUPTI of CUDA 13.0 GA: disabling CONCURRENT_KERNEL can deadlock and
// cuptiActivityFlushAll can crash (fixed in 13.0 Update 1, CUPTI release
// notes), the two calls of every stop.
constexpr std::uint32_t kCuptiWithStopDefects = 130000;

}  // namespace smprof::internal

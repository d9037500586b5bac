// GPU collection as the session sees it: what EnableCuda asks for, what the
// machine allows, and why not. CUPTI-free, so the session builds the same way
// with or without the CUDA headers: cuda_collection.cc (CUPTI headers found)
// or cuda_collection_unavailable.cc (not found) implements it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collectors/cuda/gpu_record_buffer.h"
#include "runtime/resolved_config.h"

namespace smprof::internal {

struct CudaCollectionStatus {
  bool active = false;
  // The user wanted GPU data (EnableCuda=1, or auto on a machine with a CUDA
  // driver) and gets none: worth one warning.
  bool warn = false;
  std::string reason;  // why not, when inactive
  std::uint32_t cupti_version = 0;
  std::uint32_t driver_version = 0;
  std::string timebase;
  std::string missing_kinds;  // optional activity kinds CUPTI refused, and why
  std::string cupti_library;  // the libcupti file
  std::string warning;        // a known defect of this CUPTI, "" when none
};

// What the collector dropped, waited for and noticed (trace.proto's
// GpuCollectionReport, field for field).
struct GpuCollectionLosses {
  std::uint64_t incomplete_records = 0;
  std::uint64_t zero_timestamp_records = 0;
  std::uint64_t invalid_records = 0;
  std::uint64_t unknown_kind_records = 0;
  std::uint64_t unreadable_buffers = 0;
  std::uint64_t truncated_buffers = 0;
  std::uint64_t foreign_timebase_records = 0;
  std::uint64_t marker_overflow = 0;
  std::uint64_t marker_unmatched_end = 0;
  std::uint64_t buffers_not_returned = 0;
  std::uint64_t foreign_buffers = 0;
  std::uint32_t contexts_synchronized = 0;
  std::string synchronize_failure;
  bool synchronize_timed_out = false;
  std::string synchronize_skipped;
  std::string foreign_client;
};

struct CudaCollectionTotals {
  bool collected = false;             // a collection was active and stopped
  std::uint64_t cupti_dropped = 0;    // records CUPTI reports lost
  std::uint64_t buffers_refused = 0;  // CUPTI buffer requests the full pool refused
  GpuCollectionLosses losses;
  std::string timebase;  // the clock CUPTI stamped the session's records on
};

// The bound of a session's GpuRecordBuffer (records), from CudaBufferMB.
std::size_t GpuRecordLimit(const ResolvedConfig& config);

// Starts collecting GPU activity into `sink` if `config` asks for it and the
// machine allows it. Never fails hard: the status says why not.
CudaCollectionStatus StartCudaCollection(const ResolvedConfig& config, GpuRecordBuffer* sink);

// Flushes the last records into the sink and stops; zeros when not active.
// With a `no_wait_reason` it never waits for the GPU (the exit stop: a stuck
// kernel would hang the exit); the reason goes into the trace.
CudaCollectionTotals StopCudaCollection(const std::string& no_wait_reason = "");

// The drain loop's call every frame (cupti_collector.h, TickCuptiCollection).
void TickCudaCollection();

// In a forked child (pthread_atfork): forget the parent's collection without
// any CUPTI call.
void AbandonCudaCollectionInChild();

// Tests: sessions started from now on use `api` (tests/cpp/support/fake_cupti.h)
// instead of loading libcupti; nullptr goes back to libcupti.
struct CuptiApi;
void UseCuptiApiForTesting(const CuptiApi* api);

}  // namespace smprof::internal

#include "collectors/cuda/cuda_collection.h"

#include <algorithm>
#include <atomic>

#include "collectors/cuda/cupti_collector.h"
#include "collectors/cuda/cupti_library.h"

namespace smprof::internal {

namespace {

// CUPTI's own recommendation is a few MiB per buffer; CudaBufferMB sets how
// many there may be.
constexpr std::size_t kCuptiBufferMB = 4;

std::atomic<const CuptiApi*> g_test_api{nullptr};

CuptiCollectorOptions OptionsFor(const ResolvedConfig& config) {
  CuptiCollectorOptions options;
  options.buffer_bytes = kCuptiBufferMB << 20;
  options.max_buffers = std::max<std::size_t>(2, config.cuda_buffer_mb / kCuptiBufferMB);
  options.flush_period_ms = config.cuda_flush_period_ms;
  options.synchronize_at_stop = config.cuda_sync_at_stop;
  options.sync_timeout_ms = config.cuda_sync_timeout_ms;
  return options;
}

GpuCollectionLosses LossesOf(const CuptiStopResult& r) {
  GpuCollectionLosses l;
  l.incomplete_records = r.decoder.incomplete;
  l.zero_timestamp_records = r.decoder.zero_timestamps;
  l.invalid_records = r.decoder.invalid_timestamps;
  l.unknown_kind_records = r.decoder.unknown_kind;
  l.unreadable_buffers = r.decoder.unreadable_buffers;
  l.truncated_buffers = r.decoder.truncated_buffers;
  l.foreign_timebase_records = r.decoder.foreign_timebase;
  l.marker_overflow = r.decoder.marker_overflow;
  l.marker_unmatched_end = r.decoder.marker_unmatched_end;
  l.buffers_not_returned = r.buffers_not_returned;
  l.foreign_buffers = r.foreign_buffers;
  l.contexts_synchronized = r.contexts_synchronized;
  l.synchronize_failure = r.synchronize_failure;
  l.synchronize_timed_out = r.synchronize_timed_out;
  l.synchronize_skipped = r.synchronize_skipped;
  l.foreign_client = r.foreign_client;
  return l;
}

}  // namespace

std::size_t GpuRecordLimit(const ResolvedConfig& config) {
  return (static_cast<std::size_t>(config.cuda_buffer_mb) << 20) / sizeof(GpuActivityRecord);
}

CudaCollectionStatus StartCudaCollection(const ResolvedConfig& config, GpuRecordBuffer* sink) {
  CudaCollectionStatus status;
  if (config.enable_cuda == Tristate::kOff) {
    status.reason = "disabled by EnableCuda";
    return status;
  }
  const CuptiApi* test_api = g_test_api.load(std::memory_order_acquire);
  if (config.enable_cuda == Tristate::kAuto && test_api == nullptr && !CudaDriverPresent()) {
    status.reason = "EnableCuda=auto and no CUDA driver (libcuda.so.1 not found)";
    return status;
  }
  status.warn = true;
  std::string error;
  const CuptiApi* api = test_api != nullptr ? test_api : LoadProductionCupti(&error);
  if (api == nullptr) {
    status.reason = error;
    return status;
  }
  const CuptiStartResult started = StartCuptiCollection(api, OptionsFor(config), sink);
  status.active = started.active;
  status.reason = started.reason;
  status.cupti_version = started.cupti_version;
  status.driver_version = started.driver_version;
  status.timebase = started.timebase;
  status.missing_kinds = started.missing_kinds;
  status.cupti_library = started.cupti_library;
  status.warning = started.warning;
  return status;
}

CudaCollectionTotals StopCudaCollection(const std::string& no_wait_reason) {
  CudaCollectionTotals totals;
  if (!CuptiCollectionActive()) return totals;
  const CuptiStopResult stopped = StopCuptiCollection(no_wait_reason);
  totals.collected = true;
  totals.cupti_dropped = stopped.cupti_dropped;
  totals.buffers_refused = stopped.buffers_refused;
  totals.losses = LossesOf(stopped);
  totals.timebase = stopped.timebase;
  return totals;
}

void TickCudaCollection() { TickCuptiCollection(); }

void AbandonCudaCollectionInChild() { AbandonCuptiCollectionInChild(); }

void UseCuptiApiForTesting(const CuptiApi* api) { g_test_api.store(api, std::memory_order_release); }

}  // namespace smprof::internal

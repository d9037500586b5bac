#include "collectors/cuda/gpu_collection_report.h"

#include <sstream>
#include <string>

#include "runtime/warnings.h"

namespace smprof::internal {

trace::GpuCollectionReport GpuCollectionReportOf(const GpuCollectionLosses& l) {
  trace::GpuCollectionReport r;
  r.set_incomplete_records(l.incomplete_records);
  r.set_zero_timestamp_records(l.zero_timestamp_records);
  r.set_invalid_records(l.invalid_records);
  r.set_unknown_kind_records(l.unknown_kind_records);
  r.set_unreadable_buffers(l.unreadable_buffers);
  r.set_truncated_buffers(l.truncated_buffers);
  r.set_foreign_timebase_records(l.foreign_timebase_records);
  r.set_marker_overflow(l.marker_overflow);
  r.set_marker_unmatched_end(l.marker_unmatched_end);
  r.set_buffers_not_returned(l.buffers_not_returned);
  r.set_foreign_buffers(l.foreign_buffers);
  r.set_contexts_synchronized(l.contexts_synchronized);
  r.set_synchronize_failure(l.synchronize_failure);
  r.set_synchronize_timed_out(l.synchronize_timed_out);
  r.set_synchronize_skipped(l.synchronize_skipped);
  r.set_foreign_client(l.foreign_client);
  return r;
}

void WarnAboutGpuCollection(const GpuCollectionLosses& l, const std::string& timebase) {
  const std::uint64_t dropped = l.incomplete_records + l.invalid_records + l.unreadable_buffers + l.truncated_buffers +
                                l.marker_overflow + l.marker_unmatched_end;
  if (dropped > 0) {
    std::ostringstream message;
    message << "dropped GPU records CUPTI delivered unusable: " << l.incomplete_records
            << " unfinished at a stop that did not wait for the GPU (start or end 0), " << l.invalid_records
            << " with end before start, " << l.unreadable_buffers << " buffers cut at an unreadable record, "
            << l.truncated_buffers << " truncated buffers, " << l.marker_overflow + l.marker_unmatched_end
            << " unpaired NVTX ranges";
    if (l.incomplete_records > 0 && l.contexts_synchronized == 0) {
      message << "; set CudaSyncAtStop=1 (or synchronize before stop_profiling) to keep unfinished work";
    }
    Warn(message.str());
  }
  if (l.zero_timestamp_records > 0) {
    Warn(
        std::to_string(l.zero_timestamp_records) +
        " finished GPU records CUPTI delivered with a zero start or end timestamp were dropped (timebase: " + timebase +
        "): a CUPTI defect, not unfinished work (CUPTI 12.6 Update 2 to 13.0 zero kernel stamps with a "
        "timestamp callback; fixed in CUDA 13.1)");
  }
  if (l.foreign_timebase_records > 0) {
    Warn(std::to_string(l.foreign_timebase_records) +
         " GPU records were stamped outside the session's span (another CUPTI client's clock) and were dropped: "
         "the GPU timestamps of this trace cannot be trusted");
  }
  if (!l.foreign_client.empty()) {
    Warn("another CUDA profiler is active in this process (torch.profiler?); GPU records may be missing: " +
         l.foreign_client);
  }
  if (!l.synchronize_failure.empty()) {
    Warn("could not wait for the GPU at stop: " + l.synchronize_failure + "; unfinished work may be missing");
  }
  // A capture in progress is worth saying; CudaSyncAtStop=0 and the exit
  // stop are what the user asked for.
  if (l.synchronize_skipped.find("CUDA graph") != std::string::npos) {
    Warn("did not wait for the GPU at stop: " + l.synchronize_skipped + "; unfinished work may be missing");
  }
}

}  // namespace smprof::internal

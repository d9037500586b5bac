// ActivityDecoder: one completed CUPTI activity buffer -> a GpuBatch.
//
// The CUPTI runtime (cupti_runtime.*) calls Decode from its buffer-completed
// callback and hands the batch to the GpuRecordBuffer. Records are read with
// an injected iterator: production passes libcupti's
// cuptiActivityGetNextRecord (from dlopen), tests may pass HeaderNextRecord,
// which walks the buffer using the record sizes of the CUDA 13.0 headers.
// API names come from an injected resolver (libcupti's cuptiGetCallbackName
// in production) and are cached per (domain, cbid); kernel names are
// demangled, interned in the NameTable, classified and given a precision
// once per distinct name (kernel_names.h).
//
// Thread safety: buffers complete concurrently on several CUPTI threads, so
// Decode may be called from any thread; calls serialize on one lock (the
// caches and the open NVTX ranges are shared state).
//
// Records that cannot be trusted are counted and dropped, never dereferenced
// blindly: zero timestamps, end < start, timestamps on another clock, unknown
// kinds. A zero stamp is work still running only in the forced flush of a
// stop that did not wait for the GPU (the collector says so with
// ExpectUnfinishedWork); cuptiActivityFlushAll(0) and CUPTI's own completed
// buffers hand back finished records only, so anywhere else it is CUPTI's
// defect (the timestamp callback of CUPTI 12.6 U2..13.0, cupti_collector.h). A marker end whose
// start was never seen is dropped and counted; open markers are bounded.
//
// Every kernel, copy and set names its context and device: the decoder
// learns context -> device from them too, so synchronization rows get their
// device even when CUPTI sent no CONTEXT record (a session started after the
// context was created).
#pragma once

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "collectors/cuda/cupti_clock.h"
#include "collectors/cuda/kernel_names.h"
#include "trace/records.h"

namespace smprof::internal {

// The external correlation kind smprof pushes its annotations under
// (cuptiActivityPushExternalCorrelationId(kSmprofExternalCorrelationKind,
// name_id)): the external id is the innermost annotation's NameId. CUSTOM0
// and CUSTOM1 are taken by PyTorch's Kineto; CUSTOM2 is left for us.
constexpr CUpti_ExternalCorrelationKind kSmprofExternalCorrelationKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
static_assert(kSmprofExternalCorrelationKind == kSmprofExternalCorrelationKindValue);

// libcupti's record iterator: on the first call *record is nullptr; returns
// CUPTI_SUCCESS with the next record, CUPTI_ERROR_MAX_LIMIT_REACHED at the
// end, anything else when the buffer cannot be walked further.
using NextRecordFn = CUptiResult (*)(std::uint8_t* buffer, std::size_t valid_size, CUpti_Activity** record);

// The same contract as cuptiActivityGetNextRecord, from the record sizes of
// the CUDA 13.0 headers. Stops with CUPTI_ERROR_INVALID_KIND at a kind whose
// size it does not know, CUPTI_ERROR_MAX_LIMIT_REACHED at a record that does
// not fit in `valid_size`.
CUptiResult HeaderNextRecord(std::uint8_t* buffer, std::size_t valid_size, CUpti_Activity** record);

// The name of API callback `cbid` in CUPTI callback domain `domain`
// (CUPTI_CB_DOMAIN_RUNTIME_API / _DRIVER_API), or nullptr if unknown.
// Production wraps cuptiGetCallbackName.
using ApiNameResolver = std::function<const char*(CUpti_CallbackDomain domain, std::uint32_t cbid)>;

struct ActivityDecoderStats {
  // Records read, by CUpti_ActivityKind (kinds past the array are counted
  // in records_by_kind's last slot).
  std::array<std::uint64_t, 64> records_by_kind{};
  std::uint64_t unknown_kind = 0;  // read but not decoded (skipped)
  // Start or end 0, dropped: work unfinished at a stop that did not wait
  // for the GPU (incomplete), or a finished record CUPTI stamped 0
  // (zero_timestamps).
  std::uint64_t incomplete = 0;
  std::uint64_t zero_timestamps = 0;
  std::uint64_t invalid_timestamps = 0;  // end < start: dropped
  // Outside [earliest_ns, now + future_slack_ns]: stamped by another clock
  // (another CUPTI client's timestamp callback, TSC ticks): dropped.
  std::uint64_t foreign_timebase = 0;
  std::uint64_t marker_overflow = 0;       // starts dropped: too many open ranges
  std::uint64_t marker_unmatched_end = 0;  // ends whose start was never seen
  // The iterator stopped on a record it cannot walk past (an unknown kind);
  // the rest of that buffer is lost.
  std::uint64_t unreadable_buffers = 0;
  // Bytes were left after the last whole record (a record cut short).
  std::uint64_t truncated_buffers = 0;
};

class ActivityDecoder {
 public:
  struct Options {
    NextRecordFn next_record = nullptr;
    // cuptiGetVersion of the libcupti that fills the buffers. One newer than
    // the headers built against may write longer records than they declare,
    // so bytes after a buffer's last record do not show it was truncated.
    std::uint32_t cupti_version = CUPTI_API_VERSION;
    ApiNameResolver api_names;
    // Puts CUPTI's timestamps on the session's timebase; nullptr: they are
    // on it already (smprof's timestamp callback). Outlives the decoder.
    const CuptiClock* clock = nullptr;
    // Records are expected on the session's clock, between earliest_ns and
    // the moment of decoding (plus future_slack_ns); 0 disables the check.
    std::int64_t earliest_ns = 0;
    std::int64_t future_slack_ns = std::int64_t{10'000'000'000};
    // NVTX ranges open at once (across threads) before starts are dropped.
    std::size_t max_open_markers = 1 << 16;
    // Contexts remembered to give synchronization records their device.
    std::size_t max_contexts = 1 << 12;
  };

  explicit ActivityDecoder(Options options);

  // Appends the records of `buffer[0, valid_size)` to `batch`.
  void Decode(std::uint8_t* buffer, std::size_t valid_size, GpuBatch* batch);

  ActivityDecoderStats stats() const;

  // From now on a zero stamp is work still running (the forced flush of a
  // stop that did not wait for the GPU), not CUPTI's defect.
  void ExpectUnfinishedWork();

 private:
  struct KernelName {
    std::string mangled;  // to detect a reused pointer
    KernelInfo info;
  };
  struct OpenMarker {
    std::int64_t start_ns;
    NameId name;
    NameId domain;
    std::uint32_t tid;
  };

  void DecodeRecord(const CUpti_Activity* record, GpuBatch* batch);
  void DecodeMarker(const CUpti_ActivityMarker2* marker, GpuBatch* batch);
  const KernelInfo& Kernel(const char* name);
  NameId ApiName(CUpti_CallbackDomain domain, std::uint32_t cbid);
  NameId Intern(const char* text);
  bool ValidSpan(std::uint64_t start, std::uint64_t end);
  void CountZeroStamp();
  bool OnSessionClock(std::int64_t start_ns, std::int64_t end_ns);
  void LearnContext(std::uint32_t context, std::uint32_t device);
  std::int64_t Time(std::uint64_t cupti_ns) const {
    return options_.clock != nullptr ? options_.clock->ToSession(cupti_ns) : static_cast<std::int64_t>(cupti_ns);
  }
  // An end converted with its start's offset, so durations stay CUPTI's own.
  std::int64_t EndTime(std::uint64_t cupti_start, std::uint64_t cupti_end) const {
    return Time(cupti_start) + static_cast<std::int64_t>(cupti_end - cupti_start);
  }

  const Options options_;
  mutable std::mutex mutex_;
  ActivityDecoderStats stats_;
  bool unfinished_work_expected_ = false;
  std::unordered_map<const char*, KernelName> kernels_;
  std::unordered_map<std::uint64_t, NameId> api_names_;  // (domain << 32) | cbid
  std::unordered_map<std::uint32_t, OpenMarker> open_markers_;
  std::unordered_map<std::uint32_t, std::uint32_t> context_devices_;
  std::unordered_map<std::uint32_t, NameId> overhead_names_;  // by overhead kind
  // Fixed names of non-kernel activities, interned once.
  std::array<NameId, 11> memcpy_names_{};  // by trace CopyKind
  NameId memset_name_ = 0;
  std::array<NameId, 6> sync_names_{};  // by CUpti_ActivitySynchronizationType
};

}  // namespace smprof::internal

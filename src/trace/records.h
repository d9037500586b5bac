// The record vocabulary of smprof: the data types producers hand to the drain
// thread and the trace codecs read and write. Below every producer (the hot
// path, the samplers, the CUDA collector) and every consumer (frame_codec,
// gpu_codec, the readers), as Tracy's TracyQueue.hpp sits below its client and
// server: only data types here, no buffers, no behaviour.
//
// AnnotationRecord: a closed annotation range as the hot path writes it
// (runtime/chunk.h stores them). CounterTrackInfo/CounterSample: what the
// samplers add to runtime/counter_buffer.h.
//
// GPU records as the CUDA collector hands them to the drain thread: decoded
// from CUPTI's activity records (activity_decoder), independent of CUPTI's
// structs, with names already interned. The drain encodes them into a
// Frame's GpuActivities, ApiCalls, ExternalCorrelations, Markers, Overheads,
// devices and contexts (proto/smprof/trace.proto).
//
// All timestamps are on the session's timebase (CLOCK_MONOTONIC ns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smprof/annotate.h"

namespace smprof::internal {

// A closed annotation range as the hot path writes it.
struct AnnotationRecord {
  std::int64_t start_ns;
  std::int64_t dur_ns;
  std::uint32_t name;
  std::uint32_t tid;  // the thread that opened the range
  std::uint16_t depth;
  std::uint16_t flags;
  std::uint32_t reserved;
};
static_assert(sizeof(AnnotationRecord) == 32, "two records per cache line");

struct CounterTrackInfo {
  std::string name;
  std::string unit;
  double resolution = 1.0;
};

struct CounterSample {
  std::uint32_t track;
  std::int64_t ts_ns;
  double value;
};

// One collective or point-to-point call of a process group (trace::Collectives).
struct CollectiveRecord {
  std::int64_t start_ns = 0;  // CLOCK_MONOTONIC
  std::int64_t call_dur_ns = 0;
  std::uint32_t tid = 0;
  std::string op;
  std::string group;
  std::uint32_t group_size = 0;
  std::uint32_t group_rank = 0;
  std::uint64_t sequence = 0;
  std::uint64_t bytes = 0;
  std::string dtype;
  bool async_op = false;
  std::int64_t wait_start_ns = 0;  // its Work.wait() (CLOCK_MONOTONIC); 0: none recorded
  std::int64_t wait_dur_ns = 0;
};

// Kernels, copies, sets and synchronizations; fields that do not apply to
// `kind` are 0. The enums are the trace's (trace::GpuKind, KernelClass,
// Precision, CopyKind).
struct GpuActivityRecord {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t bytes = 0;
  std::uint64_t graph_node_id = 0;
  NameId name = 0;
  std::uint32_t kind = 0;
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t kernel_class = 0;
  std::uint32_t precision = 0;
  std::uint32_t copy_kind = 0;
  std::uint32_t peer_device = 0;
  std::uint32_t src_memory_kind = 0;  // trace::MemoryKind (memcpy)
  std::uint32_t dst_memory_kind = 0;
  std::uint32_t graph_id = 0;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t shared_memory_bytes = 0;
  std::uint32_t registers_per_thread = 0;
};

// A CUDA runtime (domain 1) or driver (domain 2) API call on a host thread.
struct ApiCallRecord {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  NameId name = 0;
  std::uint32_t tid = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t domain = 0;
};

// The CUpti_ExternalCorrelationKind smprof pushes its annotations under
// (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2; activity_decoder.h checks it).
constexpr std::uint32_t kSmprofExternalCorrelationKindValue = 5;

// For smprof's own external kind, `external_id` is the innermost annotation's
// NameId and `name` is that id; 0 for other kinds (encoded as "").
struct ExternalCorrelationRecord {
  std::uint32_t correlation_id = 0;
  std::uint32_t external_kind = 0;
  std::uint64_t external_id = 0;
  NameId name = 0;
};

// An NVTX range (start and end paired) or mark (end_ns == start_ns).
struct MarkerRecord {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  NameId name = 0;
  NameId domain = 0;
  std::uint32_t tid = 0;
};

struct OverheadRecord {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  NameId name = 0;
  std::uint32_t tid = 0;
};

struct GpuDeviceInfo {
  std::uint32_t id = 0;
  std::string name;
  std::string uuid;
  std::uint32_t sm_count = 0;
  std::uint64_t global_memory_bytes = 0;
  std::uint32_t compute_capability_major = 0;
  std::uint32_t compute_capability_minor = 0;
  std::uint64_t global_memory_bandwidth_kbps = 0;
  std::uint32_t max_threads_per_block = 0;
};

struct GpuContextInfo {
  std::uint32_t id = 0;
  std::uint32_t device = 0;
};

// What one CUPTI buffer decodes to.
struct GpuBatch {
  std::vector<GpuActivityRecord> activities;
  std::vector<ApiCallRecord> api_calls;
  std::vector<ExternalCorrelationRecord> external_correlations;
  std::vector<MarkerRecord> markers;
  std::vector<OverheadRecord> overheads;
  std::vector<GpuDeviceInfo> devices;
  std::vector<GpuContextInfo> contexts;

  std::size_t size() const {
    return activities.size() + api_calls.size() + external_correlations.size() + markers.size() + overheads.size() +
           devices.size() + contexts.size();
  }
};

}  // namespace smprof::internal

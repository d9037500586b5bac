// GPU records <-> a Frame's GpuActivities, ApiCalls, ExternalCorrelations,
// Markers and Overheads tables (proto/smprof/trace.proto). Decoding is what
// every reader uses (TraceFile for Python, the analysis, the exporters);
// GpuFrameEncoder is what the drain writes with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "smprof/status.h"
#include "smprof/trace.pb.h"
#include "trace/frame_codec.h"
#include "trace/records.h"

namespace smprof::internal {

// One decoded GPU activity; `name` points into the frame it came from.
struct GpuActivityRow {
  std::int64_t start_ns = 0;
  std::int64_t dur_ns = 0;
  std::uint64_t bytes = 0;
  std::uint64_t graph_node_id = 0;
  std::string_view name;
  std::uint32_t kind = 0;  // trace::GpuKind
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t kernel_class = 0;  // trace::KernelClass
  std::uint32_t precision = 0;     // trace::Precision
  std::uint32_t copy_kind = 0;     // trace::CopyKind
  std::uint32_t peer_device = 0;
  std::uint32_t src_memory_kind = 0;  // trace::MemoryKind (memcpy)
  std::uint32_t dst_memory_kind = 0;
  std::uint32_t graph_id = 0;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t shared_memory_bytes = 0;
  std::uint32_t registers_per_thread = 0;
  std::uint32_t name_index = 0;  // `name`'s index in the frame's strings (per-frame caches)
};

struct ApiCallRow {
  std::int64_t start_ns = 0;
  std::int64_t dur_ns = 0;
  std::string_view name;
  std::uint32_t tid = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t domain = 0;  // 1 runtime, 2 driver
};

struct MarkerRow {
  std::int64_t start_ns = 0;
  std::int64_t dur_ns = 0;
  std::string_view name;
  std::string_view domain;
  std::uint32_t tid = 0;
};

struct OverheadRow {
  std::int64_t start_ns = 0;
  std::int64_t dur_ns = 0;
  std::string_view name;
  std::uint32_t tid = 0;
};

struct ExternalCorrelationRow {
  std::uint32_t correlation_id = 0;
  std::uint64_t external_id = 0;
  std::uint32_t external_kind = 0;  // CUpti_ExternalCorrelationKind
  std::string_view name;            // the annotation, for smprof's own kind
};

// Each fails (naming the column) on an inconsistent table: columns of
// different lengths, an index out of range. Rows are appended to `rows`.
Status DecodeGpuActivities(const trace::Frame& frame, std::vector<GpuActivityRow>* rows);
Status DecodeApiCalls(const trace::Frame& frame, std::vector<ApiCallRow>* rows);
Status DecodeMarkers(const trace::Frame& frame, std::vector<MarkerRow>* rows);
Status DecodeOverheads(const trace::Frame& frame, std::vector<OverheadRow>* rows);
Status DecodeExternalCorrelations(const trace::Frame& frame, std::vector<ExternalCorrelationRow>* rows);

// GPU records waiting for frames. The drain adds every batch it takes from
// the GpuRecordBuffer and encodes the pending rows into each frame it
// writes, with the frame's shared string and thread tables (FrameTables).
// Devices and contexts go into the first frame after they are first seen.
class GpuFrameEncoder {
 public:
  void Add(GpuBatch&& batch);

  // Records pending: rows of the five tables, devices and contexts unsent.
  std::size_t size() const;

  // Moves the first `limit` pending rows of each table (in arrival order)
  // into `frame`, each table sorted by start time, with the devices and
  // contexts not yet sent. Returns the rows written.
  std::uint64_t Build(FrameTables* tables, trace::Frame* frame, std::size_t limit = SIZE_MAX);

  // Sends every device and context seen so far again with the next frame
  // (a new file of a rotated session must describe its GPUs too).
  void ResendMetadata();

  // A FIFO of rows; frames take from the front, like FrameBuilder.
  template <typename Row>
  struct Pending {
    std::vector<Row> rows;
    std::size_t head = 0;
    std::size_t size() const { return rows.size() - head; }
    void Add(std::vector<Row>&& more);
    void Pop(std::size_t n);
  };

 private:
  Pending<GpuActivityRecord> activities_;
  Pending<ApiCallRecord> api_calls_;
  Pending<ExternalCorrelationRecord> external_correlations_;
  Pending<MarkerRecord> markers_;
  Pending<OverheadRecord> overheads_;
  std::unordered_map<std::uint32_t, GpuDeviceInfo> devices_;  // by id
  std::unordered_map<std::uint32_t, GpuContextInfo> contexts_;
  std::vector<std::uint32_t> unsent_devices_;
  std::vector<std::uint32_t> unsent_contexts_;
  std::vector<std::pair<std::int64_t, std::uint32_t>> sort_keys_;  // StartOrder's scratch

  // Encodes the next `limit` rows of `pending` into `table` with `encode`.
  template <typename Row, typename Table, typename EncodeFn>
  std::uint64_t Encode(Pending<Row>* pending, std::size_t limit, FrameTables* tables, Table* table, EncodeFn encode);
};

}  // namespace smprof::internal

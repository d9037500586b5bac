// GPU records <-> a Frame's GpuActivities, ApiCalls, ExternalCorrelations,
// Markers and Overheads tables (proto/smprof/trace.proto). Decoding is what
// every reader uses (TraceFile for Python, the analysis, the exporters).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "smprof/status.h"
#include "smprof/trace.pb.h"

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
  std::uint32_t graph_id = 0;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t shared_memory_bytes = 0;
  std::uint32_t registers_per_thread = 0;
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

// Each fails (naming the column) on an inconsistent table: columns of
// different lengths, an index out of range. Rows are appended to `rows`.
Status DecodeGpuActivities(const trace::Frame& frame, std::vector<GpuActivityRow>* rows);
Status DecodeApiCalls(const trace::Frame& frame, std::vector<ApiCallRow>* rows);
Status DecodeMarkers(const trace::Frame& frame, std::vector<MarkerRow>* rows);
Status DecodeOverheads(const trace::Frame& frame, std::vector<OverheadRow>* rows);

}  // namespace smprof::internal

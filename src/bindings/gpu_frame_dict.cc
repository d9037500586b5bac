#include "bindings/gpu_frame_dict.h"

#include <stdexcept>
#include <string_view>
#include <vector>

#include "bindings/text.h"
#include "trace/gpu_codec.h"

namespace py = pybind11;

namespace smppy {

namespace {

using namespace smprof::internal;

void Check(const smprof::Status& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

// One column: `value(row)` for every row, as a Python list.
template <typename Row, typename Value>
py::list Column(const std::vector<Row>& rows, Value value) {
  py::list out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = value(rows[i]);
  return out;
}

py::dict GpuActivities(const smprof::trace::Frame& frame) {
  std::vector<GpuActivityRow> rows;
  Check(DecodeGpuActivities(frame, &rows));
  py::dict c;
  c["start_ns"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.start_ns); });
  c["dur_ns"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.dur_ns); });
  c["kind"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.kind); });
  c["name"] = Column(rows, [](const GpuActivityRow& r) { return Text(r.name); });
  c["device"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.device); });
  c["context"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.context); });
  c["stream"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.stream); });
  c["correlation_id"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.correlation_id); });
  c["kernel_class"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.kernel_class); });
  c["precision"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.precision); });
  c["bytes"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.bytes); });
  c["copy_kind"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.copy_kind); });
  c["peer_device"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.peer_device); });
  c["src_memory_kind"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.src_memory_kind); });
  c["dst_memory_kind"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.dst_memory_kind); });
  c["graph_id"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.graph_id); });
  c["graph_node_id"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.graph_node_id); });
  c["grid"] = Column(rows, [](const GpuActivityRow& r) { return py::make_tuple(r.grid[0], r.grid[1], r.grid[2]); });
  c["block"] = Column(rows, [](const GpuActivityRow& r) { return py::make_tuple(r.block[0], r.block[1], r.block[2]); });
  c["shared_memory_bytes"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.shared_memory_bytes); });
  c["registers_per_thread"] = Column(rows, [](const GpuActivityRow& r) { return py::int_(r.registers_per_thread); });
  return c;
}

py::dict ApiCalls(const smprof::trace::Frame& frame) {
  std::vector<ApiCallRow> rows;
  Check(DecodeApiCalls(frame, &rows));
  py::dict c;
  c["start_ns"] = Column(rows, [](const ApiCallRow& r) { return py::int_(r.start_ns); });
  c["dur_ns"] = Column(rows, [](const ApiCallRow& r) { return py::int_(r.dur_ns); });
  c["name"] = Column(rows, [](const ApiCallRow& r) { return Text(r.name); });
  c["tid"] = Column(rows, [](const ApiCallRow& r) { return py::int_(r.tid); });
  c["correlation_id"] = Column(rows, [](const ApiCallRow& r) { return py::int_(r.correlation_id); });
  c["domain"] = Column(rows, [](const ApiCallRow& r) { return py::int_(r.domain); });
  return c;
}

py::dict ExternalCorrelations(const smprof::trace::Frame& frame) {
  std::vector<ExternalCorrelationRow> rows;
  Check(DecodeExternalCorrelations(frame, &rows));
  py::dict c;
  c["correlation_id"] = Column(rows, [](const ExternalCorrelationRow& r) { return py::int_(r.correlation_id); });
  c["external_id"] = Column(rows, [](const ExternalCorrelationRow& r) { return py::int_(r.external_id); });
  c["external_kind"] = Column(rows, [](const ExternalCorrelationRow& r) { return py::int_(r.external_kind); });
  c["name"] = Column(rows, [](const ExternalCorrelationRow& r) { return Text(r.name); });
  return c;
}

py::dict Markers(const smprof::trace::Frame& frame) {
  std::vector<MarkerRow> rows;
  Check(DecodeMarkers(frame, &rows));
  py::dict c;
  c["start_ns"] = Column(rows, [](const MarkerRow& r) { return py::int_(r.start_ns); });
  c["dur_ns"] = Column(rows, [](const MarkerRow& r) { return py::int_(r.dur_ns); });
  c["name"] = Column(rows, [](const MarkerRow& r) { return Text(r.name); });
  c["domain"] = Column(rows, [](const MarkerRow& r) { return Text(r.domain); });
  c["tid"] = Column(rows, [](const MarkerRow& r) { return py::int_(r.tid); });
  return c;
}

py::dict Overheads(const smprof::trace::Frame& frame) {
  std::vector<OverheadRow> rows;
  Check(DecodeOverheads(frame, &rows));
  py::dict c;
  c["start_ns"] = Column(rows, [](const OverheadRow& r) { return py::int_(r.start_ns); });
  c["dur_ns"] = Column(rows, [](const OverheadRow& r) { return py::int_(r.dur_ns); });
  c["name"] = Column(rows, [](const OverheadRow& r) { return Text(r.name); });
  c["tid"] = Column(rows, [](const OverheadRow& r) { return py::int_(r.tid); });
  return c;
}

}  // namespace

void AddGpuTables(const smprof::trace::Frame& frame, py::dict* out) {
  (*out)["gpu"] = GpuActivities(frame);
  (*out)["api_calls"] = ApiCalls(frame);
  (*out)["external_correlations"] = ExternalCorrelations(frame);
  (*out)["markers"] = Markers(frame);
  (*out)["overheads"] = Overheads(frame);
  py::list devices;
  for (const smprof::trace::GpuDevice& d : frame.devices()) {
    py::dict device;
    device["id"] = d.id();
    device["name"] = d.name();
    device["uuid"] = d.uuid();
    device["sm_count"] = d.sm_count();
    device["global_memory_bytes"] = d.global_memory_bytes();
    device["compute_capability"] = py::make_tuple(d.compute_capability_major(), d.compute_capability_minor());
    device["global_memory_bandwidth_kbps"] = d.global_memory_bandwidth_kbps();
    device["max_threads_per_block"] = d.max_threads_per_block();
    devices.append(device);
  }
  (*out)["devices"] = devices;
  py::list contexts;
  for (const smprof::trace::GpuContext& c : frame.contexts()) {
    py::dict context;
    context["id"] = c.id();
    context["device"] = c.device();
    contexts.append(context);
  }
  (*out)["contexts"] = contexts;
  (*out)["gpu_dropped_total"] = frame.gpu_dropped_total();
}

}  // namespace smppy

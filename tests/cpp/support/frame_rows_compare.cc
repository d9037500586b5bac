#include "support/frame_rows_compare.h"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <sstream>

namespace smprof::internal {

namespace {

template <typename Messages>
std::string Serialized(const Messages& messages) {
  std::string out;
  for (const auto& m : messages) out += m.SerializeAsString() + "|";
  return out;
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  const auto at = static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
  const std::size_t from = at > 200 ? at - 200 : 0;
  return "at character " + std::to_string(at) + ":\nFrameRows: " + a.substr(from, 400) +
         "\nreference: " + b.substr(from, 400);
}

}  // namespace

std::string FrameRowsText(const FrameRows& f) {
  std::ostringstream out;
  out << "sequence " << f.sequence << " dropped " << f.dropped_total << " gpu_dropped " << f.gpu_dropped_total
      << " has_gpu " << f.has_gpu << " has_api_calls " << f.has_api_calls << "\nstrings";
  for (std::string_view s : f.strings) out << " [" << s << "]";
  out << "\nthreads";
  for (const ThreadRow& t : f.threads) out << " " << t.tid << ":[" << t.name << "]";
  out << "\nannotations " << f.annotations_status.message() << "\n";
  for (const AnnotationRow& r : f.annotations) {
    out << r.start_ns << " " << r.dur_ns << " [" << r.name << "] " << r.name_index << " " << r.tid << " " << r.depth
        << "\n";
  }
  out << "gpu " << f.gpu_status.message() << "\n";
  for (const GpuActivityRow& r : f.gpu) {
    out << r.start_ns << " " << r.dur_ns << " " << r.bytes << " " << r.graph_node_id << " [" << r.name << "] "
        << r.name_index << " " << r.kind << " " << r.device << " " << r.context << " " << r.stream << " "
        << r.correlation_id << " " << r.kernel_class << " " << r.precision << " " << r.copy_kind << " " << r.peer_device
        << " " << r.src_memory_kind << " " << r.dst_memory_kind << " " << r.graph_id << " " << r.grid[0] << " "
        << r.grid[1] << " " << r.grid[2] << " " << r.block[0] << " " << r.block[1] << " " << r.block[2] << " "
        << r.shared_memory_bytes << " " << r.registers_per_thread << "\n";
  }
  out << "api_calls " << f.api_calls_status.message() << "\n";
  for (const ApiCallRow& r : f.api_calls) {
    out << r.start_ns << " " << r.dur_ns << " [" << r.name << "] " << r.tid << " " << r.correlation_id << " "
        << r.domain << "\n";
  }
  out << "external_correlations " << f.external_correlations_status.message() << "\n";
  for (const ExternalCorrelationRow& r : f.external_correlations) {
    out << r.correlation_id << " " << r.external_id << " " << r.external_kind << " [" << r.name << "]\n";
  }
  out << "counters " << f.counters_status.message() << "\n";
  for (const CounterRow& r : f.counters) out << r.ts_ns << " " << r.value << " [" << r.name << "] [" << r.unit << "]\n";
  const trace::Frame& t = f.tables();
  out << "tables " << Serialized(t.counter_tracks()) << " " << t.markers().SerializeAsString() << " "
      << t.overheads().SerializeAsString() << " " << Serialized(t.devices()) << " " << Serialized(t.contexts());
  return out.str();
}

std::string CompareWithProtobuf(std::string_view bytes) {
  FrameRows rows;
  const bool accepted = rows.Decode(bytes);
  trace::Frame message;
  bool parsed = false;
  {
    google::protobuf::LogSilencer quiet;
    parsed = message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }
  if (accepted != parsed) {
    return std::string("FrameRows ") + (accepted ? "accepts" : "rejects") + " a frame protobuf " +
           (parsed ? "parses" : "rejects") + (rows.decoded_by_walker() ? " (decoded by the walker)" : "");
  }
  if (!accepted) return "";
  FrameRows reference;
  reference.Decode(message);
  const std::string a = FrameRowsText(rows);
  const std::string b = FrameRowsText(reference);
  if (a != b) return "rows differ " + FirstDifference(a, b);
  if (rows.message().SerializeAsString() != message.SerializeAsString()) return "message() differs";
  return "";
}

}  // namespace smprof::internal

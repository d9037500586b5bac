#include "analysis/job/stream_codec.h"

#include <stdexcept>

namespace smprof::analysis {

void SaveStream(const ProcessStream& stream, PartialEncoder& out) {
  out.String(stream.host);
  out.Int(stream.rank);
  out.Int(stream.pid);
  out.Uint(stream.session_index);
  out.Int(stream.worker_of_pid);
  out.Int(stream.clock.correction_ns);
  out.Int(stream.clock.uncertainty_ns);
  out.Bool(stream.clock.aligned);
  out.String(stream.clock.problem);
  out.Uint(stream.files.size());
  for (const TraceFileEntry& file : stream.files) {
    out.String(file.path);
    out.Uint(file.bytes);
    out.Int(file.wall_offset_ns);
    out.Message(file.header);
  }
}

ProcessStream RestoreStream(PartialDecoder& in) {
  ProcessStream stream;
  stream.host = in.String();
  stream.rank = static_cast<std::int32_t>(in.Int());
  stream.pid = in.Int();
  stream.session_index = static_cast<std::uint32_t>(in.Uint());
  stream.worker_of_pid = in.Int();
  stream.clock.correction_ns = in.Int();
  stream.clock.uncertainty_ns = in.Int();
  stream.clock.aligned = in.Bool();
  stream.clock.problem = in.String();
  stream.files.resize(in.Count());
  if (stream.files.empty()) throw std::invalid_argument("partial summary damaged: a stream without files");
  for (TraceFileEntry& file : stream.files) {
    file.path = in.String();
    file.bytes = in.Uint();
    file.wall_offset_ns = in.Int();
    in.Message(&file.header);
  }
  return stream;
}

}  // namespace smprof::analysis

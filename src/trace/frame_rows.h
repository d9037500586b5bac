// FrameRows: one frame's hot tables decoded into rows (annotations, GPU
// activities, API calls, external correlations, counter samples), for readers
// that go through every event (the job summary).
//
// Decode() takes the frame's serialized bytes. Its fast path walks the wire
// format itself (frame_wire.h) and parses the packed columns straight into
// rows, reusing every buffer from frame to frame. Anything that path does not
// take (a malformed or unusually encoded frame, a table that fails its
// consistency checks) is parsed by protobuf and decoded by frame_codec.h /
// gpu_codec.h instead, so the rows, the accepted frames and every table's
// error are exactly those of protobuf's parse plus Decode*().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smprof/status.h"
#include "smprof/trace.pb.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"

namespace smprof::internal {

struct ThreadRow {
  std::uint32_t tid = 0;
  std::string_view name;
};

class FrameRows {
 public:
  // Decodes the serialized Frame `bytes`, which must stay valid and unchanged
  // until the next Decode (rows point into them). False if protobuf would not
  // parse them; a table that is inconsistent has no rows and a failed status.
  bool Decode(std::string_view bytes);
  // The same rows from an already parsed frame (the reference path); rows
  // point into `frame`.
  void Decode(const trace::Frame& frame);
  // Whether the last Decode(bytes) took the fast path (tests, benchmarks).
  bool decoded_by_walker() const { return decoded_by_walker_; }

  std::uint64_t sequence = 0;
  std::uint64_t dropped_total = 0;
  std::uint64_t gpu_dropped_total = 0;
  std::vector<std::string_view> strings;
  std::vector<ThreadRow> threads;
  bool has_gpu = false;  // the frame has a GpuActivities message (maybe empty)
  bool has_api_calls = false;
  std::vector<AnnotationRow> annotations;
  std::vector<GpuActivityRow> gpu;
  std::vector<ApiCallRow> api_calls;
  std::vector<ExternalCorrelationRow> external_correlations;
  std::vector<CounterRow> counters;
  Status annotations_status;
  Status gpu_status;
  Status api_calls_status;
  Status external_correlations_status;
  Status counters_status;

  // The frame's other fields, parsed by protobuf: counter_tracks, markers,
  // overheads, devices and contexts are always there; the rest may be.
  const trace::Frame& tables() const { return *tables_; }
  // The whole frame as protobuf parses it (parsed on first use), for readers
  // of what FrameRows does not decode.
  const trace::Frame& message() const;

 private:
  void Clear();
  // Clear but for the annotation, GPU, API call and external correlation rows (the walker resizes them).
  void ClearKeepingRowTables();
  // Parses `bytes_` with protobuf into message_; false if it does not parse.
  bool ParseMessage() const;

  std::string_view bytes_;
  mutable trace::Frame message_;
  mutable bool message_parsed_ = false;
  bool decoded_by_walker_ = false;
  trace::Frame cold_;                             // the fast path's fields it does not decode
  std::string cold_bytes_;                        // their wire bytes, gathered for protobuf
  std::vector<std::string_view> counter_series_;  // the CounterSeries messages' bytes
  const trace::Frame* tables_ = &cold_;
  friend class FrameWireDecoder;
};

}  // namespace smprof::internal

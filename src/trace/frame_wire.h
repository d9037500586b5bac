// FrameWireDecoder: FrameRows' fast path, a protobuf wire-format walker of
// our own for a serialized Frame. It parses the packed columns of the hot
// tables (Annotations, GpuActivities, ApiCalls, ExternalCorrelations,
// CounterSeries) straight into rows, without RepeatedFields, and hands the
// frame's other fields to protobuf (FrameRows::tables()).
//
// It never trusts the bytes: every length is checked against what is left,
// every varint against its 10 bytes. It takes only frames it can decode
// exactly as protobuf + Decode*() would and declines everything else (any
// malformed input, groups, a field with an unexpected wire type, a message
// field given twice, a table that fails its consistency checks), for
// FrameRows to decode the reference way.
#pragma once

#include <string_view>

#include "trace/frame_rows.h"

namespace smprof::internal {

class FrameWireDecoder {
 public:
  // Fills `rows` from `bytes`; false when it declines (rows are then partly
  // filled, to be cleared).
  static bool Decode(std::string_view bytes, FrameRows* rows);
};

}  // namespace smprof::internal

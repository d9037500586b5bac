// Differential checks of FrameRows' wire walker against protobuf's parse plus
// the Decode*() functions (the reference), used by frame_rows_test and the
// trace reader fuzzer.
#pragma once

#include <string>
#include <string_view>

#include "trace/frame_rows.h"

namespace smprof::internal {

// Every field, row and status of `rows` (and the tables() it keeps) as text.
std::string FrameRowsText(const FrameRows& rows);

// Decodes the serialized frame `bytes` with FrameRows and the reference way;
// "" if both reject it, or both accept it with equal rows, statuses, tables
// and message(); else what differs.
std::string CompareWithProtobuf(std::string_view bytes);

}  // namespace smprof::internal

// Collective calls <-> the frame's Collectives table (trace.proto): rows
// sorted by start, delta-encoded starts, names and threads in the frame's
// shared string and thread tables.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "smprof/status.h"
#include "smprof/trace.pb.h"
#include "trace/frame_codec.h"
#include "trace/frame_rows.h"
#include "trace/records.h"

namespace smprof::internal {

// Adds `records` to `frame`'s Collectives table, in start order.
void EncodeCollectives(std::vector<CollectiveRecord> records, FrameTables* tables, trace::Frame* frame);

// One decoded collective call; the strings point into the frame.
struct CollectiveRow {
  std::int64_t start_ns = 0;
  std::int64_t call_dur_ns = 0;
  std::string_view op;
  std::string_view group;
  std::uint32_t group_size = 0;
  std::uint32_t group_rank = 0;
  std::uint64_t sequence = 0;
  std::uint64_t bytes = 0;
  std::string_view dtype;
  bool async_op = false;
  std::uint32_t tid = 0;
  std::int64_t wait_offset_ns = 0;  // its Work.wait() from the call's start; 0: none recorded
  std::int64_t wait_dur_ns = 0;
};

// Decodes a frame's collectives; fails (naming the column) if the table is
// inconsistent: columns of different lengths or an index out of range.
Status DecodeCollectives(const trace::Frame& frame, std::vector<CollectiveRow>* rows);
// The same from FrameRows (the table is among its protobuf-parsed tables,
// the strings and threads its own).
Status DecodeCollectives(const FrameRows& frame, std::vector<CollectiveRow>* rows);

}  // namespace smprof::internal

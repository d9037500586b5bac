// Expands a RecordFile pattern into the path of one session's trace file.
#pragma once

#include <cstdint>
#include <string>

#include "session/rank_info.h"

namespace smprof::internal {

struct RecordPathFields {
  long pid = 0;
  std::int64_t start_realtime_ns = 0;  // %t, written as UTC 20261129T141500.123456Z
  std::uint32_t session_index = 0;     // %s
};

// %p pid, %t start time, %r rank, %l local rank, %h host, %j job, %s session
// index, %% a percent sign. Host and job are made safe as path components.
std::string ExpandRecordPath(const std::string& pattern, const RankInfo& rank, const RecordPathFields& fields);

// The path of a session's file number `file_index` under rotation
// (RotateIntervalS): file 0 is `first_path` itself; file N inserts ".NNNN"
// (at least four digits) before the extension of the file name, e.g.
// rank0.smprof, rank0.0001.smprof, rank0.0002.smprof.
std::string RotatedPath(const std::string& first_path, std::uint32_t file_index);

// Creates every missing parent directory of `path`; false with `error` set on failure.
bool MakeParentDirectories(const std::string& path, std::string* error);

}  // namespace smprof::internal

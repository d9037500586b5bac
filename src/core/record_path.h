// Expands a RecordFile pattern into the path of one session's trace file.
#pragma once

#include <cstdint>
#include <string>

#include "core/rank_info.h"

namespace smprof::internal {

struct RecordPathFields {
  long pid = 0;
  std::int64_t start_realtime_ns = 0;  // %t, written as UTC 20261129T141500.123456Z
  std::uint32_t session_index = 0;     // %s
};

// %p pid, %t start time, %r rank, %l local rank, %h host, %j job, %s session
// index, %% a percent sign. Host and job are made safe as path components.
std::string ExpandRecordPath(const std::string& pattern, const RankInfo& rank, const RecordPathFields& fields);

// Creates every missing parent directory of `path`; false with `error` set on failure.
bool MakeParentDirectories(const std::string& path, std::string* error);

}  // namespace smprof::internal

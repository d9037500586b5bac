// ReadTraceFile: everything a TraceReader gets out of one trace file, in
// plain structs the tests can compare (names copied out of their frames).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smprof/config.h"
#include "smprof/status.h"
#include "smprof/trace.pb.h"

namespace smprof::testing {

struct DecodedRange {
  std::int64_t start_ns = 0;
  std::int64_t dur_ns = 0;
  std::string name;
  std::uint32_t tid = 0;
  std::uint32_t depth = 0;

  std::int64_t end_ns() const { return start_ns + dur_ns; }
};

struct TraceFileContents {
  Status open_status;  // not ok: nothing else is filled in
  trace::FileHeader header;
  std::vector<trace::Frame> frames;
  std::vector<DecodedRange> ranges;  // every frame's annotations, in file order
  std::string decode_error;          // first DecodeAnnotations failure, if any
  bool has_footer = false;
  trace::Footer footer;
  std::string problem;  // TraceReader::problem()
  std::uint64_t problem_offset = 0;
  // The file read again through NextFrame(FrameRows*): "" when that gives the
  // same frames (rows equal to Decode*() of each parsed frame), problem and
  // offset; else what differs.
  std::string rows_reader_difference;
};

TraceFileContents ReadTraceFile(const std::string& path);

// A Config that writes into `dir` (an absolute directory) with `pattern` as
// the file name, e.g. "trace_%s.smprof".
Config ConfigWritingTo(const std::string& dir, const std::string& pattern);

}  // namespace smprof::testing

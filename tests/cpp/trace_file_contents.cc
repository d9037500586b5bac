#include "trace_file_contents.h"

#include <memory>

#include "trace/frame_codec.h"
#include "trace/trace_reader.h"

namespace smprof::testing {

TraceFileContents ReadTraceFile(const std::string& path) {
  TraceFileContents contents;
  std::unique_ptr<internal::TraceReader> reader;
  contents.open_status = internal::TraceReader::Open(path, &reader);
  if (!contents.open_status.ok()) return contents;
  contents.header = reader->header();
  trace::Frame frame;
  while (reader->NextFrame(&frame)) {
    std::vector<internal::AnnotationRow> rows;
    if (Status s = internal::DecodeAnnotations(frame, &rows); !s.ok() && contents.decode_error.empty()) {
      contents.decode_error = s.message();
    }
    for (const internal::AnnotationRow& row : rows) {
      contents.ranges.push_back(DecodedRange{row.start_ns, row.dur_ns, std::string(row.name), row.tid, row.depth});
    }
    contents.frames.push_back(frame);
  }
  contents.has_footer = reader->has_footer();
  contents.footer = reader->footer();
  contents.problem = reader->problem();
  contents.problem_offset = reader->problem_offset();
  return contents;
}

Config ConfigWritingTo(const std::string& dir, const std::string& pattern) {
  Config config;
  config.Set("RecordFile", dir + "/" + pattern);
  return config;
}

}  // namespace smprof::testing

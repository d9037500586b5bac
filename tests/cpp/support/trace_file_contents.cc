#include "support/trace_file_contents.h"

#include <memory>

#include "support/frame_rows_compare.h"
#include "trace/frame_codec.h"
#include "trace/trace_reader.h"

namespace smprof::testing {

namespace {

std::string CompareRowsReader(const std::string& path, const TraceFileContents& contents) {
  std::unique_ptr<internal::TraceReader> reader;
  if (!internal::TraceReader::Open(path, &reader).ok()) return "does not open";
  internal::FrameRows rows;
  internal::FrameRows reference;
  std::size_t frames = 0;
  for (; reader->NextFrame(&rows); ++frames) {
    if (frames >= contents.frames.size()) return "more frames than NextFrame(trace::Frame*)";
    reference.Decode(contents.frames[frames]);
    if (internal::FrameRowsText(rows) != internal::FrameRowsText(reference)) {
      return "frame " + std::to_string(frames) + " decodes differently";
    }
  }
  if (frames != contents.frames.size()) return "fewer frames: " + std::to_string(frames);
  if (reader->problem() != contents.problem || reader->problem_offset() != contents.problem_offset) {
    return "problem '" + reader->problem() + "' instead of '" + contents.problem + "'";
  }
  if (reader->has_footer() != contents.has_footer) return "footer differs";
  return "";
}

}  // namespace

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
  contents.rows_reader_difference = CompareRowsReader(path, contents);
  return contents;
}

Config ConfigWritingTo(const std::string& dir, const std::string& pattern) {
  Config config;
  config.Set("RecordFile", dir + "/" + pattern);
  return config;
}

}  // namespace smprof::testing

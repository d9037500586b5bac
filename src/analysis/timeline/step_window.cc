#include "analysis/timeline/step_window.h"

#include <algorithm>
#include <memory>
#include <regex>
#include <vector>

#include "analysis/job/step_matcher.h"
#include "trace/frame_codec.h"
#include "trace/trace_reader.h"

namespace smprof::analysis {

namespace {

std::string RangeText(const TimelineOptions& options) {
  std::string text = "no step " + std::to_string(options.steps->first) + "-" + std::to_string(options.steps->last);
  if (options.ranks.empty()) return text;
  text += " for ranks [";
  for (std::size_t i = 0; i < options.ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(options.ranks[i]);
  return text + "]";
}

}  // namespace

bool FindStepWindow(const TimelinePlan& plan, const StepRange& steps, const std::string& step_pattern,
                    std::int64_t* start_wall_ns, std::int64_t* end_wall_ns) {
  StepMatcher matcher(step_pattern);
  bool found = false;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::vector<internal::AnnotationRow> rows;
  trace::Frame frame;
  for (const TimelineGroup& group : plan.groups) {
    for (const ProcessStream* stream : group.streams) {
      std::int64_t ordinal = 0;  // of the stream's steps, across its files (the steps table's numbering)
      for (const TraceFileEntry& file : stream->files) {
        std::unique_ptr<internal::TraceReader> reader;
        if (!internal::TraceReader::Open(file.path, &reader).ok()) continue;
        while (reader->NextFrame(&frame)) {
          rows.clear();
          if (!internal::DecodeAnnotations(frame, &rows).ok()) continue;
          for (const internal::AnnotationRow& row : rows) {
            std::int64_t number = -1;
            if (!matcher.Match(row.name, &number)) continue;
            const std::int64_t step = number >= 0 ? number : ordinal;
            ++ordinal;
            if (step < steps.first || step > steps.last) continue;
            const std::int64_t row_start = row.start_ns + file.wall_offset_ns;
            const std::int64_t row_end = row_start + row.dur_ns;
            start = found ? std::min(start, row_start) : row_start;
            end = found ? std::max(end, row_end) : row_end;
            found = true;
          }
        }
      }
    }
  }
  if (found) {
    *start_wall_ns = start;
    *end_wall_ns = end;
  }
  return found;
}

Status ApplyStepWindow(const TimelinePlan& plan, TimelineOptions* options, bool* no_step) {
  if (no_step != nullptr) *no_step = false;
  if (!options->steps) return Status::Ok();
  std::int64_t start = 0;
  std::int64_t end = 0;
  bool found = false;
  try {
    found = FindStepWindow(plan, *options->steps, options->step_pattern, &start, &end);
  } catch (const std::regex_error& e) {
    return Status(StatusCode::kInvalidArgument, "step_pattern: not a valid regular expression (" +
                                                    std::string(e.what()) + "): " + options->step_pattern);
  }
  if (!found) {
    if (no_step != nullptr) *no_step = true;
    return Status(StatusCode::kInvalidArgument, RangeText(*options));
  }
  options->window_start_wall_ns = std::max(options->window_start_wall_ns, start);
  options->window_end_wall_ns = std::min(options->window_end_wall_ns, end);
  if (options->window_end_wall_ns < options->window_start_wall_ns) {
    return Status(StatusCode::kInvalidArgument, "the window is empty: --end is before --start");
  }
  return Status::Ok();
}

}  // namespace smprof::analysis

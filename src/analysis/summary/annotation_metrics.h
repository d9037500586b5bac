// AnnotationMetrics: per-name duration statistics over the whole job, and
// steps (StepMatcher) with their durations per process stream.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/base/json_writer.h"
#include "analysis/base/log_histogram.h"
#include "analysis/base/partial_codec.h"
#include "analysis/job/job_reader.h"
#include "analysis/job/step_matcher.h"
#include "analysis/job/summary_options.h"
#include "analysis/summary/stats_json.h"
#include "trace/frame_rows.h"

namespace smprof::analysis {

class AnnotationMetrics {
 public:
  explicit AnnotationMetrics(const SummaryOptions& options) : steps_matcher_(options.step_pattern) {}

  void BeginStream(const ProcessStream& stream);
  // Adds a frame's annotations; extends `span` with them. Returns false (and
  // adds nothing) if the frame's table is inconsistent; `error` says why.
  bool AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span, std::string* error);

  std::uint64_t stream_annotations() const { return stream_->annotations; }
  const LogHistogram& stream_steps() const { return stream_->steps; }

  void WriteAnnotations(JsonWriter& out) const;                        // the "annotations" list
  void WriteSteps(const std::string& pattern, JsonWriter& out) const;  // the "steps" object

  // Partial summaries (docs/ANALYSIS.md): Save writes the state after
  // EndStream; MergeFrom merges a saved state in, its streams after these;
  // ReorderStreams puts the streams in `order` (indexes into them).
  void Save(PartialEncoder& out) const;
  void MergeFrom(PartialDecoder& in);
  void ReorderStreams(const std::vector<std::size_t>& order);

 private:
  struct StreamSteps {
    std::string host;
    std::int32_t rank = 0;
    std::int64_t pid = 0;
    std::uint64_t annotations = 0;
    LogHistogram steps;
  };
  struct NameSlot {
    LogHistogram durations;
    bool is_step = false;
    std::int64_t step_number = -1;
  };
  NameSlot* SlotFor(std::string_view name);

  StepMatcher steps_matcher_;
  std::unordered_map<std::string, std::unique_ptr<NameSlot>> names_;
  std::vector<std::unique_ptr<StreamSteps>> streams_;
  StreamSteps* stream_ = nullptr;
  std::vector<NameSlot*> frame_slots_;  // by index in the frame's strings, valid for one frame
};

}  // namespace smprof::analysis

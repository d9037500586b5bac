// SummaryBuilder: the job summary's state, fed by JobReader one process
// stream at a time, written as the JSON of docs/ANALYSIS.md. The state after
// any set of whole streams is a partial summary: Save writes it in the
// partial-summary codec, MergeFrom merges a saved one in, and the merged
// state writes the same JSON as one builder that read every stream
// (docs/ANALYSIS.md, "Partial summaries"; partial_summary.h drives it).
// SummarizeJob drives one builder over a whole job.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "analysis/base/json_writer.h"
#include "analysis/base/partial_codec.h"
#include "analysis/job/job_reader.h"
#include "analysis/job/summary_options.h"
#include "analysis/summary/annotation_metrics.h"
#include "analysis/summary/collective_metrics.h"
#include "analysis/summary/cpu_metrics.h"
#include "analysis/summary/gpu_idle_breakdown.h"
#include "analysis/summary/gpu_metrics.h"
#include "analysis/summary/step_profile.h"

namespace smprof::analysis {

class SummaryBuilder : public FrameVisitor {
 public:
  // `origin_ns`: the job's earliest header start (JobReader::origin_ns), the
  // origin of every time bucket. Throws std::regex_error for a bad step pattern.
  SummaryBuilder(const SummaryOptions& options, std::int64_t origin_ns);

  void BeginStream(const ProcessStream& stream) override;
  bool ReadsRows() const override { return true; }
  void OnFrame(const TraceFileEntry& file, const trace::Frame& frame) override;
  void OnFrameRows(const TraceFileEntry& file, const internal::FrameRows& frame) override;
  void EndFile(const FileReadResult& result) override;
  void EndStream() override;

  // Every stream's state, then every aggregator's (between streams only).
  void Save(PartialEncoder& out) const;
  // Merges a saved state in: its streams are appended, the job-wide
  // aggregates combined. Call SortStreams after the last one.
  void MergeFrom(PartialDecoder& in);
  // Puts the streams in JobReader's order; throws std::invalid_argument if
  // a stream came in twice (overlapping partials).
  void SortStreams();

  // The summary JSON; `listing_warnings` are JobReader's before reading
  // (unreadable headers): damaged files' warnings are the builder's own.
  std::string Write(const std::vector<std::string>& listing_warnings) const;

 private:
  struct FileRead {
    std::uint64_t frames = 0;
    bool complete = false;
    std::string problem;
  };
  struct ProcessSummary {
    ProcessStream stream;  // a copy: partial summaries carry their streams
    WallSpan span;
    std::int64_t clock_offset_ns = 0;
    std::uint64_t annotations = 0;
    std::int64_t gpu_active_ns = 0;
    double cpu_utilization_percent = -1;
    LogHistogram steps;
    std::vector<FileRead> files;              // as stream.files
    std::vector<std::string> read_warnings;   // damaged files
    std::vector<std::string> frame_warnings;  // frames skipped in part
    // How the session ended: its last file's footer's, how "no_footer"
    // without one, "unknown" when the footer predates SessionEnd.
    trace::SessionEnd end;
  };
  struct Drops {
    std::uint64_t annotations = 0;
    std::uint64_t open_ranges = 0;
    std::uint64_t gpu = 0;
    std::uint64_t cupti = 0;
    trace::GpuCollectionReport gpu_collection;  // counts summed; the strings are not kept
    std::uint64_t lost_to_write_errors = 0;     // annotations (footer only)
    std::uint64_t refused_open_limit = 0;       // annotation_begin past 4096 open (footer only)
    std::uint64_t names_cut = 0;                // names cut at 16 KiB (footer only)
    std::uint64_t names_refused = 0;            // names past the name table's limits (footer only)
  };

  void WriteJob(JsonWriter& out, const WallSpan& job_span) const;
  void WriteRanks(JsonWriter& out) const;
  std::string GpuReason() const;

  SummaryOptions options_;
  AnnotationMetrics annotations_;
  GpuMetrics gpu_;
  GpuIdleBreakdown gpu_idle_;
  CpuMetrics cpu_;
  StepProfile step_profile_;
  CollectiveMetrics collectives_;
  std::int64_t origin_ns_;
  std::deque<ProcessSummary> processes_;  // a deque: process_ stays valid
  ProcessSummary* process_ = nullptr;
  const TraceFileEntry* current_file_ = nullptr;
  std::uint64_t frame_index_ = 0;
  Drops drops_;
  Drops stream_drops_;                               // the largest running totals in the stream's frames
  Drops footer_drops_;                               // summed over the stream's footers
  std::uint64_t processes_with_foreign_client_ = 0;  // footers naming another CUPTI client
  internal::FrameRows frame_rows_;                   // OnFrame's decoding of a parsed frame
};

// SummarizeJob: reads every rank file under `paths` once, streaming, and
// returns the summary as JSON text in the schema of docs/ANALYSIS.md: the one
// place where smprof's metrics are computed (summary, report, notebooks).
// Throws std::regex_error for a bad step pattern; bad files are warnings.
std::string SummarizeJob(const std::vector<std::string>& paths, const SummaryOptions& options,
                         const ProgressCallback& progress = nullptr);

}  // namespace smprof::analysis

// The job's timeline as a Chrome JSON or Perfetto trace file, written by
// this process alone (ExportTimeline) or in parts by workers
// (WriteTimelinePart, then AssembleTimeline): the same bytes either way.
//
// The file is a prologue (the format's header, the hosts), one segment per
// rank process in export order, and an epilogue: the machine-wide counters,
// each shown once per host from the first rank process that recorded it, and
// the format's end. A rank process's segment depends on nothing outside it
// (its track uuids, flow ids and Perfetto packet sequence are its own), so a
// worker can write any run of them; gzip output is one gzip member made of
// the segments (export_output.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/timeline/export_output.h"
#include "analysis/timeline/timeline_walker.h"
#include "smprof/status.h"

namespace smprof::analysis {

enum class TimelineFormat { kChrome, kPerfetto };

// A sink that writes one format (chrome_export.cc, perfetto_export.cc). The
// prologue is OnStart and the hosts' OnProcess.
class TimelineWriter : public TimelineSink {
 public:
  // Starts a segment of the job's file after the prologue; `sequence` is a
  // Perfetto packet sequence of its own (names are interned anew).
  virtual void BeginSegment(const TimelineJob& job, std::uint32_t sequence) = 0;
  // The file's end, after the last segment.
  virtual void Finish() = 0;
};

// Writes `path` (gzip-compressed when `gzip`) from `options.files`; `stats`
// says what went in and `file_bytes` how big the file is. With
// `options.steps`, the window is narrowed to the steps' (ApplyStepWindow,
// step_window.h) before anything is written.
Status ExportTimeline(TimelineFormat format, const TimelineOptions& options, const std::string& path, bool gzip,
                      TimelineStats* stats, std::uint64_t* file_bytes);

// Writes the segments of `plan.groups[first_group, end_group)` to `part_path`
// in `options`' window as given (its steps applied beforehand, once for all
// parts, by ApplyStepWindow) and their machine counters beside it (MachineCounterLogPath); `stats`
// counts what they hold (not the processes nor the machine counters: the
// assembly's).
Status WriteTimelinePart(TimelineFormat format, const TimelinePlan& plan, std::size_t first_group,
                         std::size_t end_group, const TimelineOptions& options, const std::string& part_path, bool gzip,
                         TimelineStats* stats);
std::string MachineCounterLogPath(const std::string& part_path);

// Writes `path` from `parts`, which hold every group of `plan` in order (each
// written by WriteTimelinePart with the same format and gzip); `stats` gets
// the processes and machine counter samples.
Status AssembleTimeline(TimelineFormat format, const TimelinePlan& plan, const std::vector<std::string>& parts,
                        const std::string& path, bool gzip, TimelineStats* stats, std::uint64_t* file_bytes);

std::unique_ptr<TimelineWriter> NewChromeWriter(ExportOutput* out);
std::unique_ptr<TimelineWriter> NewPerfettoWriter(ExportOutput* out);

}  // namespace smprof::analysis

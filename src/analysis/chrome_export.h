// The job's timeline as a Chrome Trace Event Format file (JSON, optionally
// gzipped), which ui.perfetto.dev and chrome://tracing open. Streaming: the
// rank files are read frame by frame and events are written as they come,
// so memory does not grow with the trace. docs/EXPORT.md describes the
// processes, tracks, ids and timestamps.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/timeline_walker.h"
#include "smprof/status.h"

namespace smprof::analysis {

// Writes `path` (gzip-compressed when `gzip`); `stats` says what went in and
// `file_bytes` how big the file is.
Status ExportChromeTrace(const TimelineOptions& options, const std::string& path, bool gzip, TimelineStats* stats,
                         std::uint64_t* file_bytes);

}  // namespace smprof::analysis

// The job's timeline in Perfetto's native protobuf trace format (a Trace of
// TracePackets with TrackDescriptors and TrackEvents), which ui.perfetto.dev
// and trace_processor load. Far smaller and faster to load than the Chrome
// JSON: names are interned, timestamps are integers. Hand-encoded from the
// documented field numbers of Perfetto's protos (no Perfetto dependency) and
// streamed like the Chrome export. docs/EXPORT.md describes the tracks.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/timeline_walker.h"
#include "smprof/status.h"

namespace smprof::analysis {

Status ExportPerfettoTrace(const TimelineOptions& options, const std::string& path, bool gzip, TimelineStats* stats,
                           std::uint64_t* file_bytes);

}  // namespace smprof::analysis

// The summary's Stats object (docs/ANALYSIS.md) from a LogHistogram.
#pragma once

#include "analysis/base/json_writer.h"
#include "analysis/base/log_histogram.h"

namespace smprof::analysis {

void WriteStats(const LogHistogram& histogram, JsonWriter& out);

}  // namespace smprof::analysis

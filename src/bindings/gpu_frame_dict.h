// The GPU tables of a frame as Python column dicts, for _smppy.TraceFile's
// next_frame(): "gpu", "api_calls", "external_correlations", "markers",
// "overheads" (one list per column, enums as their integer values),
// "devices", "contexts" (lists of dicts) and "gpu_dropped_total".
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>

#include "smprof/trace.pb.h"

namespace smppy {

// Adds the keys above to `out`; raises RuntimeError on a malformed table.
void AddGpuTables(const smprof::trace::Frame& frame, pybind11::dict* out);

}  // namespace smppy

// _smprof_testing.RawTraceWriter: the C++ TraceWriter for tests and benchmarks
// that build trace files from serialized messages (synthetic traces with known
// ground truth), so every such file goes through the same writer as a
// session's. Test-only: it lives in the _smprof_testing extension, which is
// never installed, not in the shipped _smppy.
#pragma once

#include <pybind11/pybind11.h>

namespace smprof_testing {

void BindRawTraceWriter(pybind11::module_& m);

}  // namespace smprof_testing

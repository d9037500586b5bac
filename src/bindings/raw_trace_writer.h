// _smppy.RawTraceWriter: the C++ TraceWriter for tests and tools that build
// trace files from serialized messages (synthetic traces with known ground
// truth), so every such file goes through the same writer as a session's.
#pragma once

#include <pybind11/pybind11.h>

namespace smppy {

void BindRawTraceWriter(pybind11::module_& m);

}  // namespace smppy

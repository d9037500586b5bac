// _smppy.TraceFile: the C++ TraceReader for Python (smprof info / dump and
// the analysis tools).
#pragma once

#include <pybind11/pybind11.h>

namespace smppy {

void BindTraceFile(pybind11::module_& m);

}  // namespace smppy

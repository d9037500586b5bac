// _smppy.export_timeline and its parts (export_timeline_part,
// assemble_timeline): the Chrome JSON and Perfetto timeline exporters
// (src/analysis/timeline/timeline_export.h) for `smprof export`.
#pragma once

#include <pybind11/pybind11.h>

namespace smppy {

void BindExport(pybind11::module_& m);

}  // namespace smppy

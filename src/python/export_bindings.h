// _smppy.export_timeline: the Chrome JSON and Perfetto timeline exporters
// (src/analysis/chrome_export.h, perfetto_export.h) for `smprof export`.
#pragma once

#include <pybind11/pybind11.h>

namespace smppy {

void BindExport(pybind11::module_& m);

}  // namespace smppy

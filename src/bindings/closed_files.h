// _smppy.watch_closed_files / next_closed_file: the trace files libsmprof has
// closed for good, for smppy's background upload (docs/S3.md).
#pragma once

#include <pybind11/pybind11.h>

namespace smppy {

void BindClosedFiles(pybind11::module_& m);

}  // namespace smppy

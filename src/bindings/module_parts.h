// The parts of _smppy that module.cc puts together, one function each, defined
// in the file of the same subject.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

namespace smppy {

// annotate_type.cc: `annotate`, `annotation_begin`, `annotation_end` and
// `_set_decorator`, written against the CPython API directly: `with
// smppy.annotate("x"):` must cost little more than a `with` of an empty Python
// class, which pybind11's call machinery would not allow. Returns 0 on
// success, -1 with a Python error set.
int AddAnnotationApi(PyObject* module);

// analysis_bindings.cc: summarize (the job summary of docs/ANALYSIS.md, as
// JSON text), its partial-summary steps (job_streams, partial_summary,
// merge_partial_summaries, summary_from_partial) and read_tables (the tables
// of smppy.analysis.load).
void BindAnalysis(pybind11::module_& m);

// export_bindings.cc: export_timeline and its parts (export_timeline_part,
// assemble_timeline): the Chrome JSON and Perfetto timeline exporters
// (src/analysis/timeline/timeline_export.h) for `smprof export`.
void BindExport(pybind11::module_& m);

// closed_files.cc: watch_closed_files / next_closed_file: the trace files
// libsmprof has closed for good, for smppy's background upload (docs/S3.md).
void BindClosedFiles(pybind11::module_& m);

// trace_file.cc: TraceFile, the C++ TraceReader for Python (smprof info /
// dump and the analysis tools).
void BindTraceFile(pybind11::module_& m);

}  // namespace smppy

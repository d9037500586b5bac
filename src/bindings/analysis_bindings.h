// _smppy's analysis functions: summarize (the job summary of
// docs/ANALYSIS.md, as JSON text), its partial-summary steps (job_streams,
// partial_summary, merge_partial_summaries, summary_from_partial) and
// read_tables (the tables of smppy.analysis.load).
#pragma once

#include <pybind11/pybind11.h>

namespace smppy {

void BindAnalysis(pybind11::module_& m);

}  // namespace smppy

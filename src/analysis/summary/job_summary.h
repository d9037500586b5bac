// SummarizeJob: reads every rank file under `paths` once, streaming, and
// returns the summary as JSON text in the schema of docs/ANALYSIS.md: the one
// place where smprof's metrics are computed (summary, report, notebooks).
#pragma once

#include <string>
#include <vector>

#include "analysis/job/job_reader.h"
#include "analysis/job/summary_options.h"

namespace smprof::analysis {

// Throws std::regex_error for a bad step pattern; bad files are warnings.
std::string SummarizeJob(const std::vector<std::string>& paths, const SummaryOptions& options,
                         const ProgressCallback& progress = nullptr);

}  // namespace smprof::analysis

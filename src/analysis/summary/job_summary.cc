#include "analysis/summary/job_summary.h"

#include "analysis/summary/summary_builder.h"

namespace smprof::analysis {

std::string SummarizeJob(const std::vector<std::string>& paths, const SummaryOptions& options,
                         const ProgressCallback& progress) {
  JobReader reader(paths);
  const std::vector<std::string> listing_warnings = reader.warnings();
  SummaryBuilder builder(options, reader.origin_ns());
  reader.Read(builder, progress);
  return builder.Write(listing_warnings);
}

}  // namespace smprof::analysis

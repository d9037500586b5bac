// smppy.ProcessStream: a process stream of a job as JobReader groups it,
// with the job's origin (what a partial summary of it needs); pickles as
// EncodeStream's bytes and its files' local copies. Bound in
// analysis_bindings.cc; the timeline export's parts take them too.
#pragma once

#include <cstdint>

#include "analysis/job/job_reader.h"

namespace smppy {

struct JobStream {
  smprof::analysis::ProcessStream stream;
  std::int64_t origin_ns = 0;
};

}  // namespace smppy

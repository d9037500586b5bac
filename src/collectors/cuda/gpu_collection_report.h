// The GPU collector's account of a session as the trace and the user see
// it: the footer's GpuCollectionReport and the warnings at stop.
#pragma once

#include <string>

#include "collectors/cuda/cuda_collection.h"
#include "smprof/trace.pb.h"

namespace smprof::internal {

trace::GpuCollectionReport GpuCollectionReportOf(const GpuCollectionLosses& losses);

// One warning for the GPU records the collector could not keep, one for the
// finished records CUPTI stamped 0 (on `timebase`, the session's CUPTI
// clock), one for the timebase, one for another CUDA profiler in the
// process, one for a failed wait; nothing when all is well.
void WarnAboutGpuCollection(const GpuCollectionLosses& losses, const std::string& timebase);

}  // namespace smprof::internal

// A process stream (the files of one process, with their headers, as
// JobReader groups them) in the partial-summary codec: partial summaries
// carry their streams, and a stream handed to another process (a worker, a
// Dask task) travels as these bytes.
#pragma once

#include "analysis/base/partial_codec.h"
#include "analysis/job/job_reader.h"

namespace smprof::analysis {

void SaveStream(const ProcessStream& stream, PartialEncoder& out);
// Throws std::invalid_argument on damaged bytes.
ProcessStream RestoreStream(PartialDecoder& in);

}  // namespace smprof::analysis

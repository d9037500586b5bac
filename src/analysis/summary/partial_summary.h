// Partial summaries (docs/ANALYSIS.md, "Partial summaries"): the job summary
// computed per process stream, anywhere (another core, a Dask worker), into
// compact bytes that merge associatively and in any order; the summary of
// the merged bytes is, byte for byte, SummarizeJob's of the same files.
//
//   JobReader job(paths);                       // the streams, their origin
//   parts[i] = SummarizeStreams({job.streams()[i]}, job.origin_ns(), options);
//   json = SummaryFromPartial(MergePartials(parts), job.warnings());
//
// The bytes begin with a magic string and a version (kPartialVersion), then
// the options and origin they were computed with (partials merge only with
// partials of the same ones), then SummaryBuilder::Save's state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/job/job_reader.h"
#include "analysis/job/summary_options.h"

namespace smprof::analysis {

inline constexpr std::uint64_t kPartialVersion = 7;  // 7: collectives and their NCCL kernels

// Reads `streams` (of one job, whose earliest header start is `origin_ns`)
// into a partial summary. Damaged files are warnings inside it. Throws
// std::regex_error for a bad step pattern. `progress` (may be empty) gets
// the bytes of `streams` read so far and in all.
std::string SummarizeStreams(const std::vector<ProcessStream>& streams, std::int64_t origin_ns,
                             const SummaryOptions& options, const ProgressCallback& progress = nullptr);

// One partial holding every stream of `partials` (at least one). Throws
// std::invalid_argument for damaged bytes, another version, partials of
// other options or origins, or a stream in more than one of them.
std::string MergePartials(const std::vector<std::string_view>& partials);

// The summary JSON of a partial; `listing_warnings`: JobReader::warnings()
// before reading (files whose headers could not be read).
std::string SummaryFromPartial(std::string_view partial, const std::vector<std::string>& listing_warnings);

// A stream as bytes and back (to hand it to another process).
std::string EncodeStream(const ProcessStream& stream, std::int64_t origin_ns);
ProcessStream DecodeStream(std::string_view bytes, std::int64_t* origin_ns);

}  // namespace smprof::analysis

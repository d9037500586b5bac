#include "analysis/summary/partial_summary.h"

#include <stdexcept>

#include "analysis/base/partial_codec.h"
#include "analysis/job/stream_codec.h"
#include "analysis/summary/summary_builder.h"

namespace smprof::analysis {

namespace {

constexpr std::string_view kPartialMagic = "smprof partial summary";
constexpr std::string_view kStreamMagic = "smprof process stream";

// What a partial was computed with: partials merge only when these are equal.
struct PartialHeader {
  SummaryOptions options;
  std::int64_t origin_ns = 0;
};

void SaveHeader(const PartialHeader& header, PartialEncoder& out) {
  out.String(kPartialMagic);
  out.Uint(kPartialVersion);
  out.String(header.options.step_pattern);
  out.String(header.options.data_wait_pattern);
  out.Int(header.options.top_k);
  out.Int(header.options.max_buckets);
  out.Int(header.options.reorder_window_ns);
  out.Uint(header.options.max_pending);
  out.Int(header.options.max_profiled_steps);
  out.Int(header.origin_ns);
}

void ReadMagicAndVersion(PartialDecoder& in, std::string_view magic, const char* what) {
  if (in.String() != magic) throw std::invalid_argument(std::string("not ") + what);
  const std::uint64_t version = in.Uint();
  if (version != kPartialVersion) {
    throw std::invalid_argument(std::string(what) + " of version " + std::to_string(version) +
                                ", this smprof reads version " + std::to_string(kPartialVersion));
  }
}

PartialHeader ReadHeader(PartialDecoder& in) {
  ReadMagicAndVersion(in, kPartialMagic, "a partial summary");
  PartialHeader header;
  header.options.step_pattern = in.String();
  header.options.data_wait_pattern = in.String();
  header.options.top_k = static_cast<int>(in.Int());
  header.options.max_buckets = static_cast<int>(in.Int());
  header.options.reorder_window_ns = in.Int();
  header.options.max_pending = in.Uint();
  header.options.max_profiled_steps = in.Int();
  header.origin_ns = in.Int();
  if (header.options.max_buckets < 1 || header.options.top_k < 0) {
    throw std::invalid_argument("partial summary damaged: options out of range");
  }
  return header;
}

bool SameHeader(const PartialHeader& a, const PartialHeader& b) {
  return a.options.step_pattern == b.options.step_pattern &&
         a.options.data_wait_pattern == b.options.data_wait_pattern && a.options.top_k == b.options.top_k &&
         a.options.max_buckets == b.options.max_buckets && a.options.reorder_window_ns == b.options.reorder_window_ns &&
         a.options.max_pending == b.options.max_pending &&
         a.options.max_profiled_steps == b.options.max_profiled_steps && a.origin_ns == b.origin_ns;
}

void ExpectEnd(const PartialDecoder& in) {
  if (!in.done()) throw std::invalid_argument("partial summary damaged: bytes after its end");
}

}  // namespace

std::string SummarizeStreams(const std::vector<ProcessStream>& streams, std::int64_t origin_ns,
                             const SummaryOptions& options, const ProgressCallback& progress) {
  SummaryBuilder builder(options, origin_ns);
  std::vector<std::string> warnings;  // the builder keeps its own copy of each
  std::uint64_t total_bytes = 0;
  for (const ProcessStream& stream : streams) {
    for (const TraceFileEntry& file : stream.files) total_bytes += file.bytes;
  }
  std::uint64_t done_bytes = 0;
  for (const ProcessStream& stream : streams) {
    std::function<void(std::uint64_t)> stream_progress;
    if (progress) stream_progress = [&](std::uint64_t stream_done) { progress(done_bytes + stream_done, total_bytes); };
    ReadStream(stream, builder, &warnings, stream_progress);
    for (const TraceFileEntry& file : stream.files) done_bytes += file.bytes;
  }
  PartialEncoder out;
  SaveHeader({options, origin_ns}, out);
  builder.Save(out);
  return out.Take();
}

std::string MergePartials(const std::vector<std::string_view>& partials) {
  if (partials.empty()) throw std::invalid_argument("no partial summaries to merge");
  PartialDecoder first(partials.front());
  const PartialHeader header = ReadHeader(first);
  SummaryBuilder builder(header.options, header.origin_ns);
  for (const std::string_view partial : partials) {
    PartialDecoder in(partial);
    if (!SameHeader(ReadHeader(in), header)) {
      throw std::invalid_argument("partial summaries of different options or job origins do not merge");
    }
    builder.MergeFrom(in);
    ExpectEnd(in);
  }
  builder.SortStreams();
  PartialEncoder out;
  SaveHeader(header, out);
  builder.Save(out);
  return out.Take();
}

std::string SummaryFromPartial(std::string_view partial, const std::vector<std::string>& listing_warnings) {
  PartialDecoder in(partial);
  const PartialHeader header = ReadHeader(in);
  SummaryBuilder builder(header.options, header.origin_ns);
  builder.MergeFrom(in);
  ExpectEnd(in);
  builder.SortStreams();
  return builder.Write(listing_warnings);
}

std::string EncodeStream(const ProcessStream& stream, std::int64_t origin_ns) {
  PartialEncoder out;
  out.String(kStreamMagic);
  out.Uint(kPartialVersion);
  out.Int(origin_ns);
  SaveStream(stream, out);
  return out.Take();
}

ProcessStream DecodeStream(std::string_view bytes, std::int64_t* origin_ns) {
  PartialDecoder in(bytes);
  ReadMagicAndVersion(in, kStreamMagic, "a process stream");
  *origin_ns = in.Int();
  ProcessStream stream = RestoreStream(in);
  ExpectEnd(in);
  return stream;
}

}  // namespace smprof::analysis

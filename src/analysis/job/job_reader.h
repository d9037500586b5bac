// JobReader: every rank file of a job, as process streams on one wall clock.
//
// A path is a trace file or a directory searched recursively for trace files,
// recognised by their magic bytes whatever their names (*.smprof, SageMaker
// Profiler's smpfile_<pid>_<time>.raw, *.smpraw, ...).
// Files are grouped into process streams by (host, pid, session_index) and
// ordered by header.file_index, so a rotated session reads as one stream.
// Each stream is placed on the reference process's wall clock by the clock
// alignment rounds in its footer (read before any frame; clock_correction.h).
// Frames are read one at a time (bounded memory). A damaged or unfinished
// file is read up to its last good chunk and produces one warning naming it;
// a file whose header cannot be read is skipped with a warning.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/job/clock_correction.h"
#include "smprof/trace.pb.h"
#include "trace/frame_rows.h"

namespace smprof::analysis {

struct TraceFileEntry {
  std::string path;  // what the summary names it by
  // Where its bytes are read from when not at `path` (a worker's copy of an
  // S3 object); never saved with the stream.
  std::string local_copy;
  std::uint64_t bytes = 0;
  trace::FileHeader header;
  // wall_ns = t + wall_offset_ns: the header's start anchor, plus the
  // stream's clock correction.
  std::int64_t wall_offset_ns = 0;
  // The header's start on that clock.
  std::int64_t start_wall_ns() const { return header.start().monotonic_ns() + wall_offset_ns; }
};

struct ProcessStream {
  std::string host;
  std::int32_t rank = 0;
  std::int64_t pid = 0;
  std::uint32_t session_index = 0;
  // A worker of its rank (a followed forked child, or ProcessRole=worker):
  // the pid of the rank process that started it, through any workers that
  // started it (forkserver); 0 for a rank's own process.
  std::int64_t worker_of_pid = 0;
  std::vector<TraceFileEntry> files;  // by file_index
  // Onto the reference process's clock (already in the files'
  // wall_offset_ns): from the stream's own alignment rounds, else from its
  // rank process's or another stream's of its host.
  ClockCorrection clock;
};

// The order of a job's streams (JobReader::streams, merged partial summaries).
inline auto StreamKey(const ProcessStream& s) { return std::tie(s.host, s.rank, s.pid, s.session_index); }

// What reading one file found.
struct FileReadResult {
  const TraceFileEntry* file = nullptr;
  std::uint64_t frames = 0;
  bool has_footer = false;
  trace::Footer footer;
  std::string problem;  // empty, or the reader's "truncated ..." / "corrupt ..."
};

class FrameVisitor {
 public:
  virtual ~FrameVisitor() = default;
  virtual void BeginStream(const ProcessStream& stream) = 0;
  virtual void OnFrame(const TraceFileEntry& file, const trace::Frame& frame) = 0;
  // Visitors that go through every event return true here: JobReader then
  // decodes each frame's hot tables straight into rows (trace/frame_rows.h,
  // no protobuf message) and calls OnFrameRows instead of OnFrame.
  virtual bool ReadsRows() const { return false; }
  virtual void OnFrameRows(const TraceFileEntry& file, const internal::FrameRows& rows) {
    OnFrame(file, rows.message());
  }
  virtual void EndFile(const FileReadResult& result) = 0;
  virtual void EndStream() = 0;
};

// Called after each frame and each file with the bytes read so far and in all.
using ProgressCallback = std::function<void(std::uint64_t done_bytes, std::uint64_t total_bytes)>;

// The warning a damaged file adds ("PATH: truncated ..."), or "" for a good one.
std::string ReadProblemWarning(const FileReadResult& result);

// Streams every frame of `stream`'s files to `visitor`, from BeginStream to
// EndStream; each damaged file adds its ReadProblemWarning to `warnings`.
// `progress` (may be empty) gets the bytes of this stream read so far.
void ReadStream(const ProcessStream& stream, FrameVisitor& visitor, std::vector<std::string>* warnings,
                const std::function<void(std::uint64_t done_bytes)>& progress = nullptr);

// A trace file known by some of its bytes (an S3 object read by ranged
// GETs): `start` from its first byte through the header chunk
// (HeaderChunkEnd), `tail` its last bytes (with the footer, if it has one).
struct TraceFileEnds {
  std::string name;
  std::uint64_t bytes = 0;
  std::string start;
  std::string tail;
};

// The clock-alignment rounds of a stream (ReadClockAlignments, by default).
using AlignmentsOf = std::function<std::vector<trace::ClockAlignment>(const ProcessStream&)>;

class JobReader {
 public:
  // Lists and opens (headers only) every trace file under `paths`. Unreadable
  // headers become warnings; no path with any trace file is not an error here
  // (streams() is empty).
  explicit JobReader(const std::vector<std::string>& paths);
  // The same grouping for files known by their ends, without opening them
  // (the footer's rounds come from the tails): the streams' files are named
  // TraceFileEnds::name; set their local_copy before reading them.
  explicit JobReader(const std::vector<TraceFileEnds>& files);

  const std::vector<ProcessStream>& streams() const { return streams_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::uint64_t total_bytes() const { return total_bytes_; }
  // The earliest header start (wall clock) among the files: the origin of the
  // summary's time buckets; 0 without files.
  std::int64_t origin_ns() const { return origin_ns_; }

  // Streams every frame of every stream to `visitor`; damaged files add a
  // warning. May be called more than once.
  void Read(FrameVisitor& visitor, const ProgressCallback& progress = nullptr);

 private:
  // Groups `files` into streams_ (by process, in file_index order), corrects
  // their clocks with the rounds `alignments_of` gives and sets origin_ns_.
  void Group(std::vector<TraceFileEntry> files, const AlignmentsOf& alignments_of);

  std::vector<ProcessStream> streams_;
  std::vector<std::string> warnings_;
  std::uint64_t total_bytes_ = 0;
  std::int64_t origin_ns_ = 0;
};

// The clock-alignment rounds of a stream: those of its last file with a
// readable footer (every footer carries the session's rounds so far).
std::vector<trace::ClockAlignment> ReadClockAlignments(const ProcessStream& stream);

// Sets every stream's clock correction, from the rounds `alignments_of`
// gives it, and shifts its files' wall offsets.
void CorrectClocks(std::vector<ProcessStream>* streams, const AlignmentsOf& alignments_of = ReadClockAlignments);

// Every trace file at or below `path` (by its magic bytes, whatever its name,
// and every *.smprof file, damaged ones too), sorted; `path` itself if a file.
std::vector<std::string> ListTraceFiles(const std::string& path);

}  // namespace smprof::analysis

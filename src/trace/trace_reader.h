// TraceReader: reads one rank file frame by frame, in bounded memory.
//
// It never trusts the bytes: a file that is truncated or damaged anywhere is
// read up to its last intact chunk, and problem() says at which byte offset
// reading stopped and why. A file without a footer was not stopped cleanly
// (the process was killed, or is still writing). Frames whose `sequence`
// numbers skip or repeat, or a footer whose frame count differs from the
// frames read, are reported the same way, but reading goes on. What one chunk
// may make it allocate is bounded (docs/TRACE_FORMAT.md, "Limits when reading").
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "smprof/status.h"
#include "smprof/trace.pb.h"
#include "trace/frame_rows.h"

namespace smprof::internal {

// True if the file at `path` starts like an smprof trace (the magic's first
// seven bytes, any format version), whatever its name.
bool HasTraceMagic(const std::string& path);

class TraceReader {
 public:
  // Opens `path` and reads its header; fails if the file is not an smprof
  // trace or its header chunk is unreadable.
  static Status Open(const std::string& path, std::unique_ptr<TraceReader>* out);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const trace::FileHeader& header() const { return header_; }

  // Reads the next frame into `frame`. Returns false at the clean end of the
  // file (after the footer) or where reading had to stop (see problem()).
  bool NextFrame(trace::Frame* frame);
  // The same, decoded into rows (trace/frame_rows.h) without building the
  // protobuf message; `rows` points into the reader's buffer, valid until the
  // next call.
  bool NextFrame(FrameRows* rows);

  // Reads the footer alone, stepping over the frames' chunks without reading
  // or checking them (what the job reader wants before reading: the clock
  // alignment rounds). False when the file has no readable footer. Use a
  // reader for this alone: it reads no frame afterwards.
  bool ReadFooterOnly();

  bool has_footer() const { return has_footer_; }
  const trace::Footer& footer() const { return footer_; }

  // Empty, or the first problem found ("truncated ..." / "corrupt ..."): why
  // reading stopped early, or frames missing or duplicated. A file that ends
  // cleanly after its last frame but has no footer is reported as
  // "truncated: no footer ...", at the offset where it ends.
  const std::string& problem() const { return problem_; }
  std::uint64_t problem_offset() const { return problem_offset_; }
  const std::string& path() const { return path_; }
  // Bytes of the file consumed so far (for progress reports).
  std::uint64_t bytes_read() const { return offset_; }

 private:
  TraceReader(std::FILE* file, std::string path);
  enum class ChunkResult { kOk, kEnd, kProblem };
  // Reads one chunk; on kOk `tag` and `payload_` hold it, decoded.
  ChunkResult ReadChunk(std::string* tag);
  // Records the first problem and stops reading.
  void SetProblem(std::uint64_t offset, std::string message);
  // Records the first problem; reading goes on.
  void NoteProblem(std::uint64_t offset, std::string message);
  // Reads up to the next frame chunk (reading a footer on the way); true
  // with its message in payload_ and `start` its offset.
  bool NextFramePayload(std::uint64_t* start);
  // Flags a frame whose sequence number does not follow the previous frame's.
  void CheckSequence(std::uint64_t offset, std::uint64_t sequence);

  std::FILE* file_;
  std::string path_;
  std::uint64_t offset_ = 0;
  void* zstd_context_ = nullptr;  // ZSTD_DCtx
  std::string stored_;
  std::string payload_;
  trace::FileHeader header_;
  trace::Footer footer_;
  std::uint64_t frames_ = 0;  // frames returned so far
  std::uint64_t last_sequence_ = 0;
  bool has_footer_ = false;
  bool done_ = false;
  std::string problem_;
  std::uint64_t problem_offset_ = 0;
};

}  // namespace smprof::internal

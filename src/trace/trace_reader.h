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
#include <string_view>

#include "smprof/status.h"
#include "smprof/trace.pb.h"
#include "trace/frame_rows.h"

namespace smprof::internal {

// True if the file at `path` starts like an smprof trace (the magic's first
// seven bytes, any format version), whatever its name.
bool HasTraceMagic(const std::string& path);

// The bytes from a file's start through the end of its header chunk, from
// its first bytes (at least 16: the magic, the chunk's tag and length); 0 if
// they do not start like a trace.
std::uint64_t HeaderChunkEnd(std::string_view start);

// The footer of a file from its first bytes `start` (through the header
// chunk) and its last bytes `tail`: the footer chunk that ends where the
// file ends, checked as a reader checks it. False if `tail` ends with none
// (the file has no footer, or a longer one than `tail`).
bool FooterFromTail(const std::string& name, std::string_view start, std::string_view tail, trace::Footer* footer);

class TraceReader {
 public:
  // Opens `path` and reads its header; fails if the file is not an smprof
  // trace or its header chunk is unreadable.
  static Status Open(const std::string& path, std::unique_ptr<TraceReader>* out);
  // The same for a file's bytes held in memory, named `name` in messages:
  // some of them will do (a remote object's header read by a ranged GET).
  static Status OpenBytes(const std::string& name, std::string bytes, std::unique_ptr<TraceReader>* out);
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

  // Follows a file still being written (`smprof top`): its end before a
  // footer, or a last chunk not yet whole, is no problem; NextFrame returns
  // false with waiting() true, and a later call goes on from that chunk.
  void set_follow(bool follow) { follow_ = follow; }
  bool waiting() const { return waiting_; }

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
  // Checks the magic and reads the header of a reader just made.
  static Status Start(std::unique_ptr<TraceReader> reader, std::unique_ptr<TraceReader>* out);
  // The size of the file now (it may grow while being written).
  bool FileSize(std::uint64_t* size) const;
  enum class ChunkResult { kOk, kEnd, kProblem, kWaiting };
  // Reads one chunk; on kOk `tag` and `payload_` hold it, decoded. Following,
  // a chunk not yet whole at the end is kWaiting, the file left at its start.
  ChunkResult ReadChunk(std::string* tag);
  ChunkResult WaitAt(std::uint64_t start);
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
  std::string bytes_;  // the file, for OpenBytes (file_ reads it)
  bool in_memory_ = false;
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
  bool follow_ = false;
  bool waiting_ = false;
  std::string problem_;
  std::uint64_t problem_offset_ = 0;
};

}  // namespace smprof::internal

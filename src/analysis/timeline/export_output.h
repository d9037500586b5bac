// ExportOutput: the file an exporter streams into, plain or gzip-compressed
// (chosen by the caller, usually from a ".gz" suffix), written in segments so
// that workers can write parts of it: a part holds segments written
// elsewhere (OpenPart) and is appended as they are (AppendPart), giving the
// same bytes as writing its contents here.
//
// A gzip file is one gzip member whose deflate stream is the segments, each
// compressed from a fresh state and ended by a sync flush (byte-aligned, not
// final), then a final empty block; the trailer's CRC-32 combines the
// segments' (what pigz does). Any gzip reader reads it as one stream.
// Writes are buffered; errors are remembered and reported by Close().
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "smprof/status.h"

namespace smprof::analysis {

class ExportOutput {
 public:
  // A whole file.
  static Status Open(const std::string& path, bool gzip, std::unique_ptr<ExportOutput>* out);
  // A part of a file opened with the same `gzip`, for its AppendPart.
  static Status OpenPart(const std::string& path, bool gzip, std::unique_ptr<ExportOutput>* out);
  ~ExportOutput();
  ExportOutput(const ExportOutput&) = delete;
  ExportOutput& operator=(const ExportOutput&) = delete;

  void Write(std::string_view bytes) {
    buffer_.append(bytes);
    if (buffer_.size() >= kFlushBytes) Flush(false);
  }
  // Ends the segment being written (nothing when it is empty): what follows
  // is compressed from a fresh state.
  void EndSegment();
  // Appends the segments of the closed part at `part_path` (after ending the
  // segment being written).
  void AppendPart(const std::string& part_path);
  // Ends the segment, finishes the file and closes it; the first error of
  // any write, of reading a part, or of closing.
  Status Close();
  // Bytes of the file on disk once closed.
  std::uint64_t file_bytes() const { return file_bytes_; }

 private:
  static constexpr std::size_t kFlushBytes = 1u << 20;
  struct Deflater;
  ExportOutput(std::string path, std::FILE* file, bool gzip, bool part);
  // Writes the buffer out (compressed, and sync-flushed when `end_segment`).
  void Flush(bool end_segment);
  void WriteFile(const void* data, std::size_t size);
  void Fail(const std::string& what);

  std::string path_;
  std::FILE* file_;
  bool part_;
  std::unique_ptr<Deflater> deflater_;  // null for plain output
  std::string buffer_;
  bool segment_open_ = false;  // bytes written since the segment began
  // Uncompressed bytes and their CRC-32, over every segment.
  std::uint32_t crc_ = 0;
  std::uint64_t length_ = 0;
  std::string error_;
  std::uint64_t file_bytes_ = 0;
};

}  // namespace smprof::analysis

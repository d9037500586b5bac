// TraceWriter: appends the chunks of one rank file (see file_format.h).
//
// Each chunk is written with one write() call on an O_APPEND descriptor, so a
// process killed at any moment leaves every earlier chunk intact. A chunk that
// cannot be written whole (disk full) is cut off again, so that a later
// Append, once there is space, continues a readable file. Not thread-safe:
// the session's drain thread is its only user.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "smprof/status.h"

namespace google::protobuf {
class MessageLite;
}

namespace smprof::internal {

class TraceWriter {
 public:
  // Creates `path` (never overwrites: fails if it exists) and writes the
  // magic; on failure leaves no file behind.
  static Status Create(const std::string& path, int compression_level, std::unique_ptr<TraceWriter>* out);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Serializes `message` and appends it as one chunk with `tag`. On a write
  // error the file is left as it was, and the error names the file and cause.
  Status Append(std::string_view tag, const google::protobuf::MessageLite& message);

  // Closes the file; later calls fail. Called by the destructor too.
  Status Close();

  // For a forked child: forget the file without writing anything.
  void Abandon();

  // Closes and removes the file (one that never got its header).
  void Discard();

  std::uint64_t bytes_written() const { return bytes_written_; }
  const std::string& path() const { return path_; }

 private:
  TraceWriter(int fd, std::string path, int level);
  Status WriteAll(const void* data, std::size_t size);

  int fd_;
  std::string path_;
  int level_;
  void* zstd_context_ = nullptr;  // ZSTD_CCtx, kept out of this header
  std::string serialized_;
  std::string chunk_;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace smprof::internal

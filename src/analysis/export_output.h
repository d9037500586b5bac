// ExportOutput: the file an exporter streams into, plain or gzip-compressed
// (chosen by the caller, usually from a ".gz" suffix). Writes are buffered;
// errors are remembered and reported by Close().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "smprof/status.h"

namespace smprof::analysis {

class ExportOutput {
 public:
  static Status Open(const std::string& path, bool gzip, std::unique_ptr<ExportOutput>* out);
  ~ExportOutput();
  ExportOutput(const ExportOutput&) = delete;
  ExportOutput& operator=(const ExportOutput&) = delete;

  void Write(std::string_view bytes) {
    buffer_.append(bytes);
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  // Flushes and closes; the first error of any write, or of closing.
  Status Close();
  // Bytes of the file on disk once closed.
  std::uint64_t file_bytes() const { return file_bytes_; }

 private:
  static constexpr std::size_t kFlushBytes = 1u << 20;
  ExportOutput(std::string path, void* file, bool gzip) : path_(std::move(path)), file_(file), gzip_(gzip) {}
  void Flush();

  std::string path_;
  void* file_;  // gzFile or std::FILE*
  bool gzip_;
  std::string buffer_;
  std::string error_;
  std::uint64_t file_bytes_ = 0;
};

}  // namespace smprof::analysis

#include "trace/trace_writer.h"

#include <fcntl.h>
#include <google/protobuf/message_lite.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "trace/file_format.h"

namespace smprof::internal {

namespace {

void PutU32(std::string* out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) (*out)[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace

Status TraceWriter::Create(const std::string& path, int compression_level, std::unique_ptr<TraceWriter>* out) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status(StatusCode::kIoError, "cannot create trace file '" + path + "': " + std::strerror(errno));
  }
  std::unique_ptr<TraceWriter> writer(new TraceWriter(fd, path, compression_level));
  if (Status s = writer->WriteAll(trace_format::kMagic, sizeof(trace_format::kMagic)); !s.ok()) {
    writer->Discard();
    return s;
  }
  *out = std::move(writer);
  return Status::Ok();
}

TraceWriter::TraceWriter(int fd, std::string path, int level) : fd_(fd), path_(std::move(path)), level_(level) {
  if (level_ > 0) zstd_context_ = ZSTD_createCCtx();
}

TraceWriter::~TraceWriter() {
  Close();
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_context_));
}

Status TraceWriter::Append(std::string_view tag, const google::protobuf::MessageLite& message) {
  if (fd_ < 0) return Status(StatusCode::kFailedPrecondition, "trace file '" + path_ + "' is closed");
  serialized_.clear();
  if (!message.AppendToString(&serialized_)) {
    return Status(StatusCode::kInternal, "cannot serialize a trace message");
  }
  chunk_.assign(trace_format::kChunkHeaderBytes, '\0');
  auto encoding = trace_format::Encoding::kRaw;
  if (zstd_context_ != nullptr) {
    const std::size_t bound = ZSTD_compressBound(serialized_.size());
    chunk_.resize(trace_format::kChunkHeaderBytes + bound);
    const std::size_t n =
        ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_context_), chunk_.data() + trace_format::kChunkHeaderBytes,
                          bound, serialized_.data(), serialized_.size(), level_);
    if (ZSTD_isError(n)) return Status(StatusCode::kInternal, std::string("zstd: ") + ZSTD_getErrorName(n));
    chunk_.resize(trace_format::kChunkHeaderBytes + n);
    encoding = trace_format::Encoding::kZstd;
    // Compressed past the reader's ratio limit (over 16 MiB of repetitive content): stored raw.
    if (serialized_.size() > trace_format::MaxDecompressedBytes(n)) {
      chunk_.resize(trace_format::kChunkHeaderBytes);
      encoding = trace_format::Encoding::kRaw;
    }
  }
  if (encoding == trace_format::Encoding::kRaw) chunk_ += serialized_;
  const std::size_t payload = chunk_.size() - trace_format::kChunkHeaderBytes;
  if (payload > trace_format::kMaxChunkBytes) {
    return Status(StatusCode::kInternal, "trace chunk too large");
  }
  std::memcpy(chunk_.data(), tag.data(), 4);
  PutU32(&chunk_, 4, static_cast<std::uint32_t>(payload));
  chunk_[8] = static_cast<char>(encoding);
  PutU32(&chunk_, 12, trace_format::Crc32(chunk_.data() + trace_format::kChunkHeaderBytes, payload));
  return WriteAll(chunk_.data(), chunk_.size());
}

Status TraceWriter::WriteAll(const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  const std::uint64_t complete = bytes_written_;
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string cause = n < 0 ? std::strerror(errno) : "nothing written";
      // Cut the partial chunk off: what follows, once writes work again,
      // must come right after the last complete chunk.
      if (bytes_written_ != complete && ::ftruncate(fd_, static_cast<off_t>(complete)) == 0) bytes_written_ = complete;
      return Status(StatusCode::kIoError, "cannot write trace file '" + path_ + "': " + cause);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    bytes_written_ += static_cast<std::uint64_t>(n);
  }
  return Status::Ok();
}

Status TraceWriter::Close() {
  if (fd_ < 0) return Status::Ok();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return Status(StatusCode::kIoError, "cannot close trace file '" + path_ + "': " + std::strerror(errno));
  return Status::Ok();
}

void TraceWriter::Abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TraceWriter::Discard() {
  Abandon();
  ::unlink(path_.c_str());
}

}  // namespace smprof::internal

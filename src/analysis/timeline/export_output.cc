#include "analysis/timeline/export_output.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace smprof::analysis {

namespace {

// Level 6: zlib's default, most of level 9's ratio at a third of its time.
constexpr int kLevel = 6;
// A gzip member's header (RFC 1952): deflate, no name, no time, Unix.
constexpr unsigned char kGzipHeader[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
// A part ends with its bytes' CRC-32 (4 bytes) and length (8), little-endian.
constexpr std::size_t kPartTrailerBytes = 12;

void PutLittleEndian(std::uint64_t v, int bytes, unsigned char* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint64_t GetLittleEndian(const unsigned char* in, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{in[i]} << (8 * i);
  return v;
}

}  // namespace

// A raw deflate stream (no zlib or gzip framing: the file adds gzip's).
struct ExportOutput::Deflater {
  z_stream stream{};
  std::vector<unsigned char> out = std::vector<unsigned char>(1u << 18);
  bool ok = deflateInit2(&stream, kLevel, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  ~Deflater() { deflateEnd(&stream); }
};

Status ExportOutput::Open(const std::string& path, bool gzip, std::unique_ptr<ExportOutput>* out) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return Status(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  out->reset(new ExportOutput(path, file, gzip, false));
  if (gzip) (*out)->WriteFile(kGzipHeader, sizeof kGzipHeader);
  return Status::Ok();
}

Status ExportOutput::OpenPart(const std::string& path, bool gzip, std::unique_ptr<ExportOutput>* out) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return Status(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  out->reset(new ExportOutput(path, file, gzip, true));
  return Status::Ok();
}

ExportOutput::ExportOutput(std::string path, std::FILE* file, bool gzip, bool part)
    : path_(std::move(path)), file_(file), part_(part) {
  if (gzip) {
    deflater_ = std::make_unique<Deflater>();
    if (!deflater_->ok) Fail("cannot start compressing " + path_);
  }
}

ExportOutput::~ExportOutput() {
  if (file_ != nullptr) Close();
}

void ExportOutput::Fail(const std::string& what) {
  if (error_.empty()) error_ = what;
}

void ExportOutput::WriteFile(const void* data, std::size_t size) {
  if (size != 0 && error_.empty() && std::fwrite(data, 1, size, file_) != size) {
    Fail("cannot write " + path_ + ": " + std::strerror(errno));
  }
}

void ExportOutput::Flush(bool end_segment) {
  if (!buffer_.empty()) segment_open_ = true;
  if (!error_.empty()) {
    buffer_.clear();
    return;
  }
  length_ += buffer_.size();
  if (deflater_ == nullptr) {
    WriteFile(buffer_.data(), buffer_.size());
    buffer_.clear();
    return;
  }
  crc_ = crc32(crc_, reinterpret_cast<const Bytef*>(buffer_.data()), static_cast<uInt>(buffer_.size()));
  z_stream& z = deflater_->stream;
  z.next_in = reinterpret_cast<Bytef*>(buffer_.data());
  z.avail_in = static_cast<uInt>(buffer_.size());
  do {
    z.next_out = deflater_->out.data();
    z.avail_out = static_cast<uInt>(deflater_->out.size());
    if (deflate(&z, end_segment ? Z_SYNC_FLUSH : Z_NO_FLUSH) == Z_STREAM_ERROR) {
      Fail("cannot compress " + path_);
      break;
    }
    WriteFile(deflater_->out.data(), deflater_->out.size() - z.avail_out);
  } while (z.avail_out == 0);
  if (end_segment) deflateReset(&z);
  buffer_.clear();
}

void ExportOutput::EndSegment() {
  if (!segment_open_ && buffer_.empty()) return;
  Flush(true);
  segment_open_ = false;
}

void ExportOutput::AppendPart(const std::string& part_path) {
  EndSegment();
  std::FILE* part = std::fopen(part_path.c_str(), "rb");
  if (part == nullptr) return Fail("cannot read " + part_path + ": " + std::strerror(errno));
  struct stat st {};
  unsigned char trailer[kPartTrailerBytes];
  if (::fstat(fileno(part), &st) != 0 || static_cast<std::uint64_t>(st.st_size) < kPartTrailerBytes ||
      std::fseek(part, st.st_size - static_cast<long>(kPartTrailerBytes), SEEK_SET) != 0 ||
      std::fread(trailer, 1, sizeof trailer, part) != sizeof trailer || std::fseek(part, 0, SEEK_SET) != 0) {
    std::fclose(part);
    return Fail(part_path + " is not a part of an export (no trailer)");
  }
  std::uint64_t left = static_cast<std::uint64_t>(st.st_size) - kPartTrailerBytes;
  // In the kernel where it can (no copy through this process; a reflink on file systems that share
  // extents), else through a buffer.
  if (error_.empty() && std::fflush(file_) == 0) {
    loff_t from = 0;
    ssize_t n = 0;
    while (left > 0 && (n = ::copy_file_range(fileno(part), &from, fileno(file_), nullptr, left, 0)) > 0) left -= n;
    std::fseek(part, from, SEEK_SET);
    std::fseek(file_, 0, SEEK_END);  // the stream's position after what the kernel wrote
  }
  std::vector<char> chunk(1u << 20);
  while (left > 0 && error_.empty()) {
    const std::size_t n = std::fread(chunk.data(), 1, std::min<std::uint64_t>(left, chunk.size()), part);
    if (n == 0) {
      Fail("cannot read " + part_path + ": " + (std::ferror(part) ? std::strerror(errno) : "ended early"));
      break;
    }
    WriteFile(chunk.data(), n);
    left -= n;
  }
  std::fclose(part);
  const std::uint64_t part_length = GetLittleEndian(trailer + 4, 8);
  if (deflater_ != nullptr) {
    crc_ = static_cast<std::uint32_t>(
        crc32_combine(crc_, static_cast<uLong>(GetLittleEndian(trailer, 4)), static_cast<z_off_t>(part_length)));
  }
  length_ += part_length;
}

Status ExportOutput::Close() {
  if (file_ == nullptr) return Status(StatusCode::kFailedPrecondition, path_ + " is already closed");
  EndSegment();
  unsigned char trailer[kPartTrailerBytes];
  if (part_) {
    PutLittleEndian(crc_, 4, trailer);
    PutLittleEndian(length_, 8, trailer + 4);
    WriteFile(trailer, kPartTrailerBytes);
  } else if (deflater_ != nullptr && error_.empty()) {
    // The final block (empty), then gzip's CRC-32 and length modulo 2^32.
    z_stream& z = deflater_->stream;
    z.avail_in = 0;
    z.next_out = deflater_->out.data();
    z.avail_out = static_cast<uInt>(deflater_->out.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) Fail("cannot finish compressing " + path_);
    WriteFile(deflater_->out.data(), deflater_->out.size() - z.avail_out);
    PutLittleEndian(crc_, 4, trailer);
    PutLittleEndian(length_ & 0xffffffffu, 4, trailer + 4);
    WriteFile(trailer, 8);
  }
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  deflater_.reset();
  if (!closed) Fail("cannot close " + path_ + ": " + std::strerror(errno));
  if (!error_.empty()) return Status(StatusCode::kIoError, error_);
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) file_bytes_ = static_cast<std::uint64_t>(st.st_size);
  return Status::Ok();
}

}  // namespace smprof::analysis

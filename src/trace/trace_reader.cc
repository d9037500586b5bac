#include "trace/trace_reader.h"

#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "trace/file_format.h"

namespace smprof::internal {

namespace {

std::uint32_t GetU32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Decompressed messages larger than this are treated as corruption.
constexpr unsigned long long kMaxMessageBytes = 1ull << 30;

}  // namespace

Status TraceReader::Open(const std::string& path, std::unique_ptr<TraceReader>* out) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status(StatusCode::kIoError, "cannot open '" + path + "': " + std::strerror(errno));
  }
  std::unique_ptr<TraceReader> reader(new TraceReader(file, path));
  char magic[sizeof(trace_format::kMagic)];
  const std::size_t magic_bytes = std::fread(magic, 1, sizeof(magic), file);
  if (magic_bytes < sizeof(magic) && std::memcmp(magic, trace_format::kMagic, magic_bytes) == 0) {
    return Status(StatusCode::kInvalidArgument, "'" + path + "' is truncated: it ends at byte " +
                                                    std::to_string(magic_bytes) + ", inside the 8-byte magic");
  }
  if (magic_bytes < sizeof(magic) || std::memcmp(magic, trace_format::kMagic, sizeof(magic) - 1) != 0) {
    return Status(StatusCode::kInvalidArgument, "'" + path + "' is not an smprof trace (bad magic)");
  }
  if (static_cast<unsigned char>(magic[7]) != trace_format::kFormatVersion) {
    return Status(StatusCode::kInvalidArgument, "'" + path + "' has trace format version " +
                                                    std::to_string(static_cast<unsigned char>(magic[7])) +
                                                    "; this reader knows version 1");
  }
  reader->offset_ = sizeof(magic);
  std::string tag;
  const ChunkResult header = reader->ReadChunk(&tag);
  if (header == ChunkResult::kEnd) reader->SetProblem(reader->offset_, "truncated: no header chunk");
  if (header != ChunkResult::kOk || tag != trace_format::kHeaderTag ||
      !reader->header_.ParseFromString(reader->payload_)) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + path + "': unreadable header" + (reader->problem_.empty() ? "" : ": " + reader->problem_));
  }
  *out = std::move(reader);
  return Status::Ok();
}

TraceReader::TraceReader(std::FILE* file, std::string path)
    : file_(file), path_(std::move(path)), zstd_context_(ZSTD_createDCtx()) {}

TraceReader::~TraceReader() {
  std::fclose(file_);
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_context_));
}

void TraceReader::SetProblem(std::uint64_t offset, std::string message) {
  problem_offset_ = offset;
  problem_ = std::move(message) + " at byte " + std::to_string(offset);
  done_ = true;
}

TraceReader::ChunkResult TraceReader::ReadChunk(std::string* tag) {
  const std::uint64_t start = offset_;
  unsigned char head[trace_format::kChunkHeaderBytes];
  const std::size_t got = std::fread(head, 1, sizeof(head), file_);
  if (got == 0) return ChunkResult::kEnd;
  if (got < sizeof(head)) {
    SetProblem(start, "truncated: incomplete chunk header");
    return ChunkResult::kProblem;
  }
  tag->assign(reinterpret_cast<const char*>(head), 4);
  const std::uint32_t length = GetU32(head + 4);
  const auto encoding = static_cast<trace_format::Encoding>(head[8]);
  if ((*tag != trace_format::kHeaderTag && *tag != trace_format::kFrameTag && *tag != trace_format::kFooterTag) ||
      length > trace_format::kMaxChunkBytes ||
      (encoding != trace_format::Encoding::kRaw && encoding != trace_format::Encoding::kZstd)) {
    SetProblem(start, "corrupt: bad chunk header");
    return ChunkResult::kProblem;
  }
  stored_.resize(length);
  if (std::fread(stored_.data(), 1, length, file_) != length) {
    SetProblem(start, "truncated: incomplete chunk");
    return ChunkResult::kProblem;
  }
  offset_ += sizeof(head) + length;
  if (trace_format::Crc32(stored_.data(), length) != GetU32(head + 12)) {
    SetProblem(start, "corrupt: checksum mismatch");
    return ChunkResult::kProblem;
  }
  if (encoding == trace_format::Encoding::kRaw) {
    payload_.swap(stored_);
    return ChunkResult::kOk;
  }
  const unsigned long long size = ZSTD_getFrameContentSize(stored_.data(), length);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMaxMessageBytes) {
    SetProblem(start, "corrupt: bad zstd frame");
    return ChunkResult::kProblem;
  }
  payload_.resize(size);
  const std::size_t n =
      ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_context_), payload_.data(), size, stored_.data(), length);
  if (ZSTD_isError(n) || n != size) {
    SetProblem(start, "corrupt: zstd frame does not decompress");
    return ChunkResult::kProblem;
  }
  return ChunkResult::kOk;
}

bool TraceReader::NextFrame(trace::Frame* frame) {
  std::string tag;
  while (!done_) {
    const std::uint64_t start = offset_;
    const ChunkResult result = ReadChunk(&tag);
    if (result == ChunkResult::kEnd && !has_footer_) {
      SetProblem(start, "truncated: no footer (the session was not stopped, or is still writing)");
    }
    if (result != ChunkResult::kOk) {
      done_ = true;
      return false;
    }
    if (has_footer_) {
      SetProblem(start, "corrupt: data after the footer");
      return false;
    }
    if (tag == trace_format::kFrameTag) {
      if (frame->ParseFromString(payload_)) return true;
      SetProblem(start, "corrupt: frame does not parse");
      return false;
    }
    if (tag == trace_format::kFooterTag) {
      if (!footer_.ParseFromString(payload_)) {
        SetProblem(start, "corrupt: footer does not parse");
        return false;
      }
      has_footer_ = true;
      continue;
    }
    SetProblem(start, "corrupt: a second header");
    return false;
  }
  return false;
}

}  // namespace smprof::internal

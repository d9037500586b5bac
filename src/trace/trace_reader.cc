#include "trace/trace_reader.h"

#include <google/protobuf/stubs/logging.h>
#include <sys/stat.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "trace/file_format.h"

namespace smprof::internal {

namespace {

std::uint32_t GetU32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// A message has at most kMaxMessageFields top-level fields: each repeated string or message
// costs tens of bytes once parsed, from as little as two on disk.
constexpr std::uint64_t kMaxMessageFields = 1u << 21;

// Skips one base-128 varint; false if it runs past `end` or over 10 bytes.
bool SkipVarint(const unsigned char*& p, const unsigned char* end, std::uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const unsigned char byte = *p++;
    *value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// The number of top-level fields of the serialized message, counting stops past `limit`. A
// malformed message counts as far as it goes: the protobuf parser rejects it afterwards.
std::uint64_t CountTopLevelFields(const std::string& message, std::uint64_t limit) {
  const auto* p = reinterpret_cast<const unsigned char*>(message.data());
  const unsigned char* const end = p + message.size();
  std::uint64_t fields = 0;
  std::uint64_t value = 0;
  while (p < end && fields <= limit) {
    if (!SkipVarint(p, end, &value)) break;
    const auto wire_type = static_cast<unsigned>(value & 7);
    std::uint64_t skip = 0;
    if (wire_type == 0) {
      if (!SkipVarint(p, end, &value)) break;
    } else if (wire_type == 1 || wire_type == 5) {
      skip = wire_type == 1 ? 8 : 4;
    } else if (wire_type == 2) {
      if (!SkipVarint(p, end, &skip)) break;
    } else {
      break;
    }
    if (skip > static_cast<std::uint64_t>(end - p)) break;
    p += skip;
    ++fields;
  }
  return fields;
}

// Parses without protobuf's own log line on damaged input (e.g. "String field contains invalid
// UTF-8"): the reader reports the problem once, with the file and offset.
bool ParseQuietly(const std::string& bytes, google::protobuf::MessageLite* message) {
  google::protobuf::LogSilencer quiet;
  return message->ParseFromString(bytes);
}

}  // namespace

bool HasTraceMagic(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  char magic[sizeof(trace_format::kMagic) - 1];
  const bool match = std::fread(magic, 1, sizeof(magic), file) == sizeof(magic) &&
                     std::memcmp(magic, trace_format::kMagic, sizeof(magic)) == 0;
  std::fclose(file);
  return match;
}

std::uint64_t HeaderChunkEnd(std::string_view start) {
  constexpr std::size_t kLengthAt = sizeof(trace_format::kMagic) + 4;
  if (start.size() < kLengthAt + 4 ||
      start.compare(0, sizeof(trace_format::kMagic) - 1,
                    std::string_view(trace_format::kMagic, sizeof(trace_format::kMagic) - 1)) != 0) {
    return 0;
  }
  return sizeof(trace_format::kMagic) + trace_format::kChunkHeaderBytes +
         GetU32(reinterpret_cast<const unsigned char*>(start.data()) + kLengthAt);
}

bool FooterFromTail(const std::string& name, std::string_view start, std::string_view tail, trace::Footer* footer) {
  const std::uint64_t header_end = HeaderChunkEnd(start);
  if (header_end == 0 || header_end > start.size() || tail.size() < trace_format::kChunkHeaderBytes) return false;
  // The footer is the chunk whose length reaches exactly the end: read the
  // header and that chunk as one file, so it is checked like any chunk.
  for (std::size_t at = 0; at + trace_format::kChunkHeaderBytes <= tail.size(); ++at) {
    if (tail.compare(at, 4, trace_format::kFooterTag) != 0 ||
        GetU32(reinterpret_cast<const unsigned char*>(tail.data()) + at + 4) !=
            tail.size() - at - trace_format::kChunkHeaderBytes) {
      continue;
    }
    std::string bytes(start.substr(0, header_end));
    bytes.append(tail.substr(at));
    std::unique_ptr<TraceReader> reader;
    if (TraceReader::OpenBytes(name, std::move(bytes), &reader).ok() && reader->ReadFooterOnly()) {
      *footer = reader->footer();
      return true;
    }
  }
  return false;
}

Status TraceReader::Open(const std::string& path, std::unique_ptr<TraceReader>* out) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status(StatusCode::kIoError, "cannot open '" + path + "': " + std::strerror(errno));
  }
  return Start(std::unique_ptr<TraceReader>(new TraceReader(file, path)), out);
}

Status TraceReader::OpenBytes(const std::string& name, std::string bytes, std::unique_ptr<TraceReader>* out) {
  if (bytes.empty()) return Status(StatusCode::kInvalidArgument, "'" + name + "' is empty");
  std::unique_ptr<TraceReader> reader(new TraceReader(nullptr, name));
  reader->bytes_ = std::move(bytes);
  reader->in_memory_ = true;
  reader->file_ = ::fmemopen(reader->bytes_.data(), reader->bytes_.size(), "rb");
  if (reader->file_ == nullptr) {
    return Status(StatusCode::kIoError, "cannot read '" + name + "' in memory: " + std::strerror(errno));
  }
  return Start(std::move(reader), out);
}

Status TraceReader::Start(std::unique_ptr<TraceReader> reader, std::unique_ptr<TraceReader>* out) {
  const std::string& path = reader->path_;
  char magic[sizeof(trace_format::kMagic)];
  const std::size_t magic_bytes = std::fread(magic, 1, sizeof(magic), reader->file_);
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
      !ParseQuietly(reader->payload_, &reader->header_)) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + path + "': unreadable header" + (reader->problem_.empty() ? "" : ": " + reader->problem_));
  }
  *out = std::move(reader);
  return Status::Ok();
}

TraceReader::TraceReader(std::FILE* file, std::string path)
    : file_(file), path_(std::move(path)), zstd_context_(ZSTD_createDCtx()) {}

TraceReader::~TraceReader() {
  if (file_ != nullptr) std::fclose(file_);
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_context_));
}

bool TraceReader::FileSize(std::uint64_t* size) const {
  if (in_memory_) {
    *size = bytes_.size();
    return true;
  }
  struct stat file_stat {};
  if (::fstat(::fileno(file_), &file_stat) != 0) return false;
  *size = static_cast<std::uint64_t>(file_stat.st_size);
  return true;
}

void TraceReader::SetProblem(std::uint64_t offset, std::string message) {
  NoteProblem(offset, std::move(message));
  done_ = true;
}

void TraceReader::NoteProblem(std::uint64_t offset, std::string message) {
  if (!problem_.empty()) return;  // the first problem explains the rest
  problem_offset_ = offset;
  problem_ = std::move(message) + " at byte " + std::to_string(offset);
}

void TraceReader::CheckSequence(std::uint64_t offset, std::uint64_t sequence) {
  if (frames_ > 0 && sequence != last_sequence_ + 1) {
    NoteProblem(offset, sequence <= last_sequence_
                            ? "corrupt: frame " + std::to_string(sequence) + " again after frame " +
                                  std::to_string(last_sequence_) + " (a duplicated frame)"
                            : "corrupt: frame " + std::to_string(sequence) + " follows frame " +
                                  std::to_string(last_sequence_) + " (" +
                                  std::to_string(sequence - last_sequence_ - 1) + " frame(s) missing)");
  }
  last_sequence_ = sequence;
  ++frames_;
}

TraceReader::ChunkResult TraceReader::WaitAt(std::uint64_t start) {
  std::clearerr(file_);
  if (::fseeko(file_, static_cast<off_t>(start), SEEK_SET) != 0) {
    SetProblem(start, "truncated: cannot seek back to wait for the chunk");
    return ChunkResult::kProblem;
  }
  offset_ = start;
  return ChunkResult::kWaiting;
}

TraceReader::ChunkResult TraceReader::ReadChunk(std::string* tag) {
  const std::uint64_t start = offset_;
  unsigned char head[trace_format::kChunkHeaderBytes];
  const std::size_t got = std::fread(head, 1, sizeof(head), file_);
  if (follow_ && !has_footer_ && got < sizeof(head)) return WaitAt(start);  // its end is not written yet
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
  // Never allocate more than the file holds: a damaged length is found before the buffer grows.
  std::uint64_t file_size = 0;
  if (follow_ && FileSize(&file_size) && file_size < start + sizeof(head) + length) return WaitAt(start);
  if (!FileSize(&file_size) || file_size < start + sizeof(head) + length) {
    SetProblem(start, "truncated: incomplete chunk");
    return ChunkResult::kProblem;
  }
  stored_.resize(length);
  if (std::fread(stored_.data(), 1, length, file_) != length) {
    SetProblem(start, "truncated: incomplete chunk");
    return ChunkResult::kProblem;
  }
  offset_ += sizeof(head) + length;
  if (trace_format::Crc32(stored_.data(), length) != GetU32(head + 12)) {
    // Following, the last chunk may still be being copied in: its checksum is checked again later.
    if (follow_ && file_size == start + sizeof(head) + length) return WaitAt(start);
    SetProblem(start, "corrupt: checksum mismatch");
    return ChunkResult::kProblem;
  }
  if (encoding == trace_format::Encoding::kRaw) {
    payload_.swap(stored_);
  } else {
    const unsigned long long size = ZSTD_getFrameContentSize(stored_.data(), length);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
      SetProblem(start, "corrupt: bad zstd frame");
      return ChunkResult::kProblem;
    }
    if (size > trace_format::MaxDecompressedBytes(length)) {
      SetProblem(start, "corrupt: a " + std::to_string(length) + "-byte zstd frame claims " + std::to_string(size) +
                            " bytes, over the reader's limit of " +
                            std::to_string(trace_format::MaxDecompressedBytes(length)) +
                            " (see 'Limits when reading' in docs/TRACE_FORMAT.md)");
      return ChunkResult::kProblem;
    }
    payload_.resize(size);
    const std::size_t n =
        ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_context_), payload_.data(), size, stored_.data(), length);
    if (ZSTD_isError(n) || n != size) {
      SetProblem(start, "corrupt: zstd frame does not decompress");
      return ChunkResult::kProblem;
    }
  }
  if (CountTopLevelFields(payload_, kMaxMessageFields) > kMaxMessageFields) {
    SetProblem(start, "corrupt: message has over " + std::to_string(kMaxMessageFields) +
                          " fields, the reader's limit (see 'Limits when reading' in docs/TRACE_FORMAT.md)");
    return ChunkResult::kProblem;
  }
  return ChunkResult::kOk;
}

bool TraceReader::NextFramePayload(std::uint64_t* start) {
  std::string tag;
  waiting_ = false;
  while (!done_) {
    *start = offset_;
    const ChunkResult result = ReadChunk(&tag);
    if (result == ChunkResult::kWaiting) {
      waiting_ = true;
      return false;
    }
    if (result == ChunkResult::kEnd && !has_footer_) {
      SetProblem(*start, "truncated: no footer (the session was not stopped, or is still writing)");
    }
    if (result != ChunkResult::kOk) {
      done_ = true;
      return false;
    }
    if (has_footer_) {
      SetProblem(*start, "corrupt: data after the footer");
      return false;
    }
    if (tag == trace_format::kFrameTag) return true;
    if (tag == trace_format::kFooterTag) {
      if (!ParseQuietly(payload_, &footer_)) {
        SetProblem(*start, "corrupt: footer does not parse");
        return false;
      }
      if (footer_.frames_written() != frames_) {
        NoteProblem(*start, "corrupt: the footer counts " + std::to_string(footer_.frames_written()) +
                                " frames, the file holds " + std::to_string(frames_));
      }
      has_footer_ = true;
      continue;
    }
    SetProblem(*start, "corrupt: a second header");
    return false;
  }
  return false;
}

bool TraceReader::ReadFooterOnly() {
  while (!done_) {
    const std::uint64_t start = offset_;
    unsigned char head[trace_format::kChunkHeaderBytes];
    if (std::fread(head, 1, sizeof(head), file_) != sizeof(head)) break;
    const std::uint32_t length = GetU32(head + 4);
    if (std::string_view(reinterpret_cast<const char*>(head), 4) == trace_format::kFrameTag) {
      if (length > trace_format::kMaxChunkBytes || ::fseeko(file_, length, SEEK_CUR) != 0) break;
      offset_ += sizeof(head) + length;
      continue;
    }
    if (::fseeko(file_, static_cast<off_t>(start), SEEK_SET) != 0) break;
    std::string tag;
    if (ReadChunk(&tag) != ChunkResult::kOk || tag != trace_format::kFooterTag) break;
    has_footer_ = ParseQuietly(payload_, &footer_);
    break;
  }
  done_ = true;
  return has_footer_;
}

bool TraceReader::NextFrame(trace::Frame* frame) {
  std::uint64_t start = 0;
  if (!NextFramePayload(&start)) return false;
  if (!ParseQuietly(payload_, frame)) {
    SetProblem(start, "corrupt: frame does not parse");
    return false;
  }
  CheckSequence(start, frame->sequence());
  return true;
}

bool TraceReader::NextFrame(FrameRows* rows) {
  std::uint64_t start = 0;
  if (!NextFramePayload(&start)) return false;
  if (!rows->Decode(payload_)) {
    SetProblem(start, "corrupt: frame does not parse");
    return false;
  }
  CheckSequence(start, rows->sequence);
  return true;
}

}  // namespace smprof::internal

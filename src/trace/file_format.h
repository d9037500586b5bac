// The byte layout around the protobuf messages of proto/smprof/trace.proto.
//
//   file   := magic chunk*
//   magic  := "SMPROF\0\x01"                      (8 bytes, the last is the format version)
//   chunk  := tag[4] length:u32 encoding:u8 reserved[3] crc32:u32 payload[length]
//
// All integers little-endian. `crc32` (IEEE, as in zlib) covers the payload
// bytes as stored. `encoding` 0 stores the serialized message as is, 1 holds
// it in one zstd frame. Tags: "SMPH" FileHeader (first), "SMPF" Frame,
// "SMPE" Footer (last; absent when the process died before stop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace smprof::trace_format {

inline constexpr char kMagic[8] = {'S', 'M', 'P', 'R', 'O', 'F', '\0', '\x01'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kChunkHeaderBytes = 16;
// Larger lengths are corruption: the writer caps frames far below this.
inline constexpr std::uint32_t kMaxChunkBytes = 256u << 20;

inline constexpr std::string_view kHeaderTag = "SMPH";
inline constexpr std::string_view kFrameTag = "SMPF";
inline constexpr std::string_view kFooterTag = "SMPE";

enum class Encoding : std::uint8_t { kRaw = 0, kZstd = 1 };

// What a zstd chunk may make the reader allocate (docs/TRACE_FORMAT.md, "Limits when reading"):
// a message decompresses to at most kMaxChunkBytes, and past kSmallMessageBytes to at most
// kMaxCompressionRatio times its stored size (frames of real events compress far less), so a
// small file cannot claim or inflate into gigabytes. The writer stores a message that would pass
// this limit raw (TraceWriter::Append): what it writes, the reader reads.
inline constexpr std::uint64_t kSmallMessageBytes = 16u << 20;
inline constexpr std::uint64_t kMaxCompressionRatio = 1024;
inline constexpr std::uint64_t MaxDecompressedBytes(std::uint64_t stored) {
  const std::uint64_t by_ratio = stored * kMaxCompressionRatio;
  const std::uint64_t at_least = by_ratio > kSmallMessageBytes ? by_ratio : kSmallMessageBytes;
  return at_least < kMaxChunkBytes ? at_least : kMaxChunkBytes;
}

std::uint32_t Crc32(const void* data, std::size_t size);

}  // namespace smprof::trace_format

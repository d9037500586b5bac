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

std::uint32_t Crc32(const void* data, std::size_t size);

}  // namespace smprof::trace_format

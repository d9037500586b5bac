// libFuzzer target for the trace reader: each input is a whole trace file,
// read with TraceReader to its end, every frame decoded by every table
// decoder, as `smprof info`, `dump`, `summary` and the exporters do.
//
// Random bytes rarely get past the CRC of the first chunk, so the custom
// mutator keeps inputs checksum-valid: it mutates either the raw bytes or,
// half of the time, the decompressed message of one chunk (recompressing it),
// then repairs every chunk's CRC. That reaches the protobuf parser and the
// column decoders with well-framed but inconsistent messages. Every frame
// message is also decoded by FrameRows (the wire walker) and compared with
// protobuf's parse + Decode*(): a disagreement aborts. docs/TESTING.md says
// how to run it.
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/frame_rows_compare.h"
#include "trace/file_format.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"
#include "trace/trace_reader.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using namespace smprof;
using namespace smprof::internal;

std::uint32_t GetU32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void PutU32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

struct Chunk {
  std::size_t offset;  // of the chunk header
  std::uint32_t length;
};

// The chunks whose header and payload lie inside `data`, in order.
std::vector<Chunk> Chunks(const std::uint8_t* data, std::size_t size) {
  std::vector<Chunk> out;
  std::size_t offset = sizeof(trace_format::kMagic);
  while (offset + trace_format::kChunkHeaderBytes <= size) {
    const std::uint32_t length = GetU32(data + offset + 4);
    if (length > size - offset - trace_format::kChunkHeaderBytes) break;
    out.push_back({offset, length});
    offset += trace_format::kChunkHeaderBytes + length;
  }
  return out;
}

void RepairChecksums(std::uint8_t* data, std::size_t size) {
  for (const Chunk& c : Chunks(data, size)) {
    const std::uint8_t* payload = data + c.offset + trace_format::kChunkHeaderBytes;
    PutU32(data + c.offset + 12, trace_format::Crc32(payload, c.length));
  }
}

// Mutates the decompressed message of one zstd chunk and puts it back,
// recompressed; returns the new size, or 0 if there was no such chunk.
std::size_t MutateOneMessage(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed) {
  const std::vector<Chunk> chunks = Chunks(data, size);
  if (chunks.empty()) return 0;
  const Chunk chunk = chunks[std::minstd_rand(seed)() % chunks.size()];
  std::uint8_t* head = data + chunk.offset;
  const bool zstd = head[8] == static_cast<std::uint8_t>(trace_format::Encoding::kZstd);
  const std::uint8_t* payload = head + trace_format::kChunkHeaderBytes;
  std::string message;
  if (zstd) {
    const unsigned long long content = ZSTD_getFrameContentSize(payload, chunk.length);
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN || content > (1u << 20)) return 0;
    message.resize(content);
    if (ZSTD_isError(ZSTD_decompress(message.data(), message.size(), payload, chunk.length))) return 0;
  } else {
    message.assign(reinterpret_cast<const char*>(payload), chunk.length);
  }
  message.resize(message.size() + 64);
  message.resize(
      LLVMFuzzerMutate(reinterpret_cast<std::uint8_t*>(message.data()), message.size() - 64, message.size()));
  std::string stored = message;
  if (zstd) {
    stored.resize(ZSTD_compressBound(message.size()));
    const std::size_t n = ZSTD_compress(stored.data(), stored.size(), message.data(), message.size(), 1);
    if (ZSTD_isError(n)) return 0;
    stored.resize(n);
  }
  const std::size_t tail = chunk.offset + trace_format::kChunkHeaderBytes + chunk.length;
  const std::size_t new_size = size - chunk.length + stored.size();
  if (new_size > max_size) return 0;
  std::string rest(reinterpret_cast<const char*>(data + tail), size - tail);
  PutU32(head + 4, static_cast<std::uint32_t>(stored.size()));
  std::memcpy(head + trace_format::kChunkHeaderBytes, stored.data(), stored.size());
  std::memcpy(head + trace_format::kChunkHeaderBytes + stored.size(), rest.data(), rest.size());
  return new_size;
}

// Every decoder the reading tools use, on one frame; results are discarded.
void DecodeAll(const trace::Frame& frame) {
  std::vector<AnnotationRow> annotations;
  (void)DecodeAnnotations(frame, &annotations);
  std::vector<CounterRow> counters;
  (void)DecodeCounters(frame, &counters);
  std::vector<GpuActivityRow> gpu;
  (void)DecodeGpuActivities(frame, &gpu);
  std::vector<ApiCallRow> api;
  (void)DecodeApiCalls(frame, &api);
  std::vector<MarkerRow> markers;
  (void)DecodeMarkers(frame, &markers);
  std::vector<OverheadRow> overheads;
  (void)DecodeOverheads(frame, &overheads);
  std::vector<ExternalCorrelationRow> correlations;
  (void)DecodeExternalCorrelations(frame, &correlations);
}

// The message of every frame chunk in `data`, decoded by FrameRows and the
// reference way: any difference is a bug of the walker.
void CompareFrameDecoders(const std::uint8_t* data, std::size_t size) {
  for (const Chunk& c : Chunks(data, size)) {
    const std::uint8_t* head = data + c.offset;
    if (std::memcmp(head, trace_format::kFrameTag.data(), 4) != 0) continue;
    const std::uint8_t* payload = head + trace_format::kChunkHeaderBytes;
    std::string message;
    if (head[8] == static_cast<std::uint8_t>(trace_format::Encoding::kZstd)) {
      const unsigned long long content = ZSTD_getFrameContentSize(payload, c.length);
      if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN || content > (16u << 20)) continue;
      message.resize(content);
      const std::size_t n = ZSTD_decompress(message.data(), message.size(), payload, c.length);
      if (ZSTD_isError(n) || n != content) continue;
    } else {
      message.assign(reinterpret_cast<const char*>(payload), c.length);
    }
    const std::string difference = CompareWithProtobuf(message);
    if (!difference.empty()) {
      std::fprintf(stderr, "FrameRows disagrees with protobuf: %s\n", difference.c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::size_t new_size = 0;
  if (seed % 2 == 0) new_size = MutateOneMessage(data, size, max_size, seed / 2);
  if (new_size == 0) new_size = LLVMFuzzerMutate(data, size, max_size);
  RepairChecksums(data, new_size);
  return new_size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader opens a path: the input as an in-memory file.
  const int fd = memfd_create("trace", 0);
  if (fd < 0) return 0;
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) {
      close(fd);
      return 0;
    }
    done += static_cast<std::size_t>(n);
  }
  std::unique_ptr<TraceReader> reader;
  std::string full_read_footer;  // serialized; empty when reading every frame found none
  if (TraceReader::Open("/proc/self/fd/" + std::to_string(fd), &reader).ok()) {
    trace::Frame frame;
    while (reader->NextFrame(&frame)) DecodeAll(frame);
    if (reader->has_footer()) full_read_footer = reader->footer().SerializeAsString();
  }
  // The footer read alone (stepping over the frames) is the one a full read
  // reaches, whenever a full read reaches one.
  if (TraceReader::Open("/proc/self/fd/" + std::to_string(fd), &reader).ok()) {
    const bool found = reader->ReadFooterOnly();
    if (!full_read_footer.empty() && (!found || reader->footer().SerializeAsString() != full_read_footer)) {
      std::fprintf(stderr, "ReadFooterOnly disagrees with the full read's footer\n");
      std::abort();
    }
  }
  if (TraceReader::Open("/proc/self/fd/" + std::to_string(fd), &reader).ok()) {
    FrameRows rows;
    while (reader->NextFrame(&rows)) {
    }
  }
  reader.reset();
  CompareFrameDecoders(data, size);
  close(fd);
  return 0;
}

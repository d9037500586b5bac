#include "trace/frame_wire.h"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace smprof::internal {

namespace {

using Byte = unsigned char;

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// A base-128 varint of at most 10 bytes (protobuf's limit) starting at `p`,
// which must end before `end`; nullptr if it does not.
inline const Byte* ReadVarint(const Byte* p, const Byte* end, std::uint64_t* value) {
  std::uint64_t result = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    const std::uint64_t byte = *p++;
    result |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      *value = result;
      return p;
    }
  }
  return nullptr;
}

// A varint known to end inside its buffer (a packed column whose last byte
// ends a varint); nullptr past 10 bytes.
inline const Byte* ReadTerminatedVarint(const Byte* p, std::uint64_t* value) {
  std::uint64_t byte = *p++;
  if (byte < 0x80) {
    *value = byte;
    return p;
  }
  std::uint64_t result = byte & 0x7f;
  for (int shift = 7; shift < 70; shift += 7) {
    byte = *p++;
    result |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      *value = result;
      return p;
    }
  }
  return nullptr;
}

inline std::int64_t ZigZag(std::uint64_t v) { return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

// Wrapping addition: a damaged delta must not be signed overflow.
inline std::int64_t Add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// A message's bytes, walked field by field.
class Fields {
 public:
  Fields(const Byte* begin, const Byte* end) : p_(begin), end_(end) {}

  bool done() const { return p_ == end_; }
  const Byte* position() const { return p_; }

  // The next field's number and wire type; false if the tag is malformed
  // (over 5 bytes or 32 bits, field 0) or names a group.
  bool Next(std::uint32_t* field, std::uint32_t* wire_type) {
    std::uint64_t tag = 0;
    const Byte* after = ReadVarint(p_, p_ + std::min<std::ptrdiff_t>(end_ - p_, 5), &tag);
    if (after == nullptr || tag > UINT32_MAX || (tag >> 3) == 0) return false;
    p_ = after;
    *field = static_cast<std::uint32_t>(tag >> 3);
    *wire_type = static_cast<std::uint32_t>(tag & 7);
    return *wire_type == kVarint || *wire_type == kFixed64 || *wire_type == kLengthDelimited || *wire_type == kFixed32;
  }

  bool Varint(std::uint64_t* value) {
    p_ = ReadVarint(p_, end_, value);
    return p_ != nullptr;
  }

  // A length-delimited field's bytes (the length at most 5 bytes, under 2 GiB, inside the message).
  bool Bytes(const Byte** begin, const Byte** end) {
    std::uint64_t length = 0;
    const Byte* after = ReadVarint(p_, p_ + std::min<std::ptrdiff_t>(end_ - p_, 5), &length);
    if (after == nullptr || length > INT32_MAX || length > static_cast<std::uint64_t>(end_ - after)) return false;
    *begin = after;
    *end = after + length;
    p_ = *end;
    return true;
  }

  // Steps over the value of a field of `wire_type` (an unknown field).
  bool Skip(std::uint32_t wire_type) {
    std::uint64_t ignored = 0;
    const Byte* begin = nullptr;
    const Byte* end = nullptr;
    switch (wire_type) {
      case kVarint:
        return Varint(&ignored);
      case kLengthDelimited:
        return Bytes(&begin, &end);
      default: {
        const std::ptrdiff_t size = wire_type == kFixed64 ? 8 : 4;
        if (end_ - p_ < size) return false;
        p_ += size;
        return true;
      }
    }
  }

 private:
  const Byte* p_;
  const Byte* end_;
};

// A packed varint column: its bytes and the number of values in them.
struct Column {
  const Byte* begin = nullptr;
  const Byte* end = nullptr;
  std::size_t count = 0;
  bool seen = false;
  const Byte* next = nullptr;  // Fill's position, for the next block of rows
};

// Takes a packed column's bytes; false if the column was given before or its
// last varint is cut off.
bool TakeColumn(Fields& fields, Column* column) {
  if (column->seen || !fields.Bytes(&column->begin, &column->end)) return false;
  column->seen = true;
  column->next = column->begin;
  // Values = bytes without the continuation bit, counted 8 bytes at a time.
  const Byte* p = column->begin;
  std::size_t continued = 0;
  for (; column->end - p >= 8; p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    // The continuation bits moved to the bottom of each byte, summed into the top byte.
    continued += static_cast<std::size_t>((((word >> 7) & 0x0101010101010101ull) * 0x0101010101010101ull) >> 56);
  }
  for (; p < column->end; ++p) continued += *p >> 7;
  column->count = static_cast<std::size_t>(column->end - column->begin) - continued;
  return column->begin == column->end || column->end[-1] < 0x80;
}

// A table message: an optional leading varint (base_ns, track_index) as
// field 1, then packed columns as fields 2.. (or 1.. without a leading
// varint). Unknown fields are skipped.
template <std::size_t kFields>
struct Table {
  std::uint64_t leading = 0;
  std::array<Column, kFields + 1> columns{};  // by field number

  bool Parse(const Byte* begin, const Byte* end, bool has_leading) {
    Fields fields(begin, end);
    while (!fields.done()) {
      std::uint32_t field = 0;
      std::uint32_t wire_type = 0;
      if (!fields.Next(&field, &wire_type)) return false;
      if (has_leading && field == 1) {
        if (wire_type != kVarint || !fields.Varint(&leading)) return false;
      } else if (field <= kFields) {
        if (wire_type != kLengthDelimited || !TakeColumn(fields, &columns[field])) return false;
      } else if (!fields.Skip(wire_type)) {
        return false;
      }
    }
    return true;
  }

  Column& operator[](std::size_t field) { return columns[field]; }
};

// A column with one value per row.
bool Full(const Column& column, std::size_t rows) { return column.count == rows; }
// A column with no value (0 in every row), one (the same in every row) or one per row.
bool FullOrConstant(const Column& column, std::size_t rows) { return column.count <= 1 || column.count == rows; }

// Rows [begin, end) of a table, decoded together: a table's rows are
// decoded a block at a time, every column of one block before the next, so
// the block's rows stay in cache while each column writes its field (column
// after column over the whole table would bring every row in once per column).
struct Block {
  std::size_t begin;
  std::size_t end;
};
constexpr std::size_t kBlockRows = 256;

// Calls decode(block) for the blocks of `rows` rows, in order; false when one fails.
template <typename Decode>
bool InBlocks(std::size_t rows, Decode decode) {
  for (std::size_t begin = 0; begin < rows; begin += kBlockRows) {
    if (!decode(Block{begin, std::min(rows, begin + kBlockRows)})) return false;
  }
  return true;
}

// Calls set(i, value) for each row i of `rows` from a column that passed
// FullOrConstant (an empty column sets 0, protobuf's default), continuing
// where the column's previous block ended; false on a varint over 10 bytes.
template <typename Set>
bool Fill(Column& column, Block rows, Set set) {
  if (column.count == 0) {  // absent: protobuf's default in every row
    for (std::size_t i = rows.begin; i < rows.end; ++i) set(i, 0);
    return true;
  }
  std::uint64_t value = 0;
  if (column.count == 1) {
    if (ReadTerminatedVarint(column.begin, &value) == nullptr) return false;
    for (std::size_t i = rows.begin; i < rows.end; ++i) set(i, value);
    return true;
  }
  if (static_cast<std::size_t>(column.end - column.begin) == column.count) {  // every value one byte
    for (std::size_t i = rows.begin; i < rows.end; ++i) set(i, column.begin[i]);
    return true;
  }
  const Byte* p = column.next;
  for (std::size_t i = rows.begin; i < rows.end; ++i) {
    p = ReadTerminatedVarint(p, &value);
    if (p == nullptr) return false;
    set(i, value);
  }
  column.next = p;
  return true;
}

// As Fill, for a column of indices into a table of `size` entries: false if
// one is out of range (an empty column is index 0 in every row).
template <typename Set>
bool FillIndex(Column& column, Block rows, std::size_t size, Set set) {
  if (column.count == 0) {
    if (rows.end > rows.begin && size == 0) return false;
    for (std::size_t i = rows.begin; i < rows.end; ++i) set(i, 0);
    return true;
  }
  bool in_range = true;
  const bool ok = Fill(column, rows, [&](std::size_t i, std::uint64_t value) {
    const auto index = static_cast<std::uint32_t>(value);
    if (index < size) {
      set(i, index);
    } else {
      in_range = false;
    }
  });
  return ok && in_range;
}

// Start times: base + the running sum of the zigzag deltas; `start` carries
// the sum from block to block (it begins as the table's base).
template <typename Row>
bool FillStarts(Column& column, Block rows, std::int64_t* start, Row* out) {
  return Fill(column, rows, [&](std::size_t i, std::uint64_t v) {
    *start = Add(*start, ZigZag(v));
    out[i].start_ns = *start;
  });
}

template <typename Row>
bool FillDurations(Column& column, Block rows, Row* out) {
  return Fill(column, rows, [out](std::size_t i, std::uint64_t v) { out[i].dur_ns = static_cast<std::int64_t>(v); });
}

// A column of indices into the frame's strings: each row's name and its index (per-frame caches).
template <typename Row>
bool FillNames(Column& column, Block rows, const std::vector<std::string_view>& strings, Row* out) {
  return FillIndex(column, rows, strings.size(), [&](std::size_t i, std::uint32_t v) {
    out[i].name = strings[v];
    out[i].name_index = v;
  });
}

// Frame's field numbers (proto/smprof/trace.proto).
enum FrameField : std::uint32_t {
  kSequence = 1,
  kStrings = 2,
  kThreads = 3,
  kAnnotations = 4,
  kDroppedTotal = 5,
  kCounters = 7,
  kGpu = 8,
  kApiCalls = 9,
  kExternalCorrelations = 10,
  kGpuDroppedTotal = 15,
};

// A field's bytes, and whether the field was given.
struct Span {
  const Byte* begin = nullptr;
  const Byte* end = nullptr;
  bool seen = false;
};

// A singular message field: false if given twice (protobuf would merge the two).
bool TakeMessage(Fields& fields, Span* span) {
  if (span->seen || !fields.Bytes(&span->begin, &span->end)) return false;
  span->seen = true;
  return true;
}

bool TakeThread(Fields& fields, std::vector<ThreadRow>* threads) {
  Span message;
  if (!TakeMessage(fields, &message)) return false;
  ThreadRow thread;
  Fields inner(message.begin, message.end);
  while (!inner.done()) {
    std::uint32_t field = 0;
    std::uint32_t wire_type = 0;
    if (!inner.Next(&field, &wire_type)) return false;
    if (field == 1) {
      std::uint64_t tid = 0;
      if (wire_type != kVarint || !inner.Varint(&tid)) return false;
      thread.tid = static_cast<std::uint32_t>(tid);
    } else if (field == 2) {
      Span name;
      if (wire_type != kLengthDelimited || !inner.Bytes(&name.begin, &name.end)) return false;
      thread.name =
          std::string_view(reinterpret_cast<const char*>(name.begin), static_cast<std::size_t>(name.end - name.begin));
    } else if (!inner.Skip(wire_type)) {
      return false;
    }
  }
  threads->push_back(thread);
  return true;
}

bool DecodeAnnotationTable(const Span& span, FrameRows* frame) {
  Table<6> t;
  if (span.seen && !t.Parse(span.begin, span.end, true)) return false;
  const std::size_t n = t[2].count;
  if (!(Full(t[3], n) && Full(t[4], n) && Full(t[5], n) && Full(t[6], n))) return false;
  std::vector<AnnotationRow>& rows = frame->annotations;
  rows.resize(n);
  AnnotationRow* out = rows.data();
  const auto& strings = frame->strings;
  const auto& threads = frame->threads;
  auto start = static_cast<std::int64_t>(t.leading);
  return InBlocks(n, [&](Block b) {
    return FillStarts(t[2], b, &start, out) && FillDurations(t[3], b, out) && FillNames(t[4], b, strings, out) &&
           FillIndex(t[5], b, threads.size(), [&](std::size_t i, std::uint32_t v) { out[i].tid = threads[v].tid; }) &&
           Fill(t[6], b, [out](std::size_t i, std::uint64_t v) { out[i].depth = static_cast<std::uint32_t>(v); });
  });
}

bool DecodeGpuTable(const Span& span, FrameRows* frame) {
  Table<26> t;
  if (span.seen && !t.Parse(span.begin, span.end, true)) return false;
  const std::size_t n = t[2].count;
  if (!Full(t[3], n) || !Full(t[9], n)) return false;
  for (std::size_t field = 4; field <= 26; ++field) {
    if (field != 9 && !FullOrConstant(t[field], n)) return false;
  }
  std::vector<GpuActivityRow>& rows = frame->gpu;
  rows.resize(n);
  GpuActivityRow* out = rows.data();
  const auto& strings = frame->strings;
  // Columns of uint32 values, truncated as protobuf does.
  const auto u32 = [&t](std::size_t field, Block b, auto set) {
    return Fill(t[field], b, [set](std::size_t i, std::uint64_t v) { set(i, static_cast<std::uint32_t>(v)); });
  };
  auto start = static_cast<std::int64_t>(t.leading);
  return InBlocks(n, [&](Block b) {
    return FillStarts(t[2], b, &start, out) && FillDurations(t[3], b, out) && FillNames(t[9], b, strings, out) &&
           Fill(t[12], b, [out](std::size_t i, std::uint64_t v) { out[i].bytes = v; }) &&
           Fill(t[16], b, [out](std::size_t i, std::uint64_t v) { out[i].graph_node_id = v; }) &&
           u32(4, b, [out](std::size_t i, std::uint32_t v) { out[i].kind = v; }) &&
           u32(5, b, [out](std::size_t i, std::uint32_t v) { out[i].device = v; }) &&
           u32(6, b, [out](std::size_t i, std::uint32_t v) { out[i].context = v; }) &&
           u32(7, b, [out](std::size_t i, std::uint32_t v) { out[i].stream = v; }) &&
           u32(8, b, [out](std::size_t i, std::uint32_t v) { out[i].correlation_id = v; }) &&
           u32(10, b, [out](std::size_t i, std::uint32_t v) { out[i].kernel_class = v; }) &&
           u32(11, b, [out](std::size_t i, std::uint32_t v) { out[i].precision = v; }) &&
           u32(13, b, [out](std::size_t i, std::uint32_t v) { out[i].copy_kind = v; }) &&
           u32(14, b, [out](std::size_t i, std::uint32_t v) { out[i].peer_device = v; }) &&
           u32(15, b, [out](std::size_t i, std::uint32_t v) { out[i].graph_id = v; }) &&
           u32(17, b, [out](std::size_t i, std::uint32_t v) { out[i].grid[0] = v; }) &&
           u32(18, b, [out](std::size_t i, std::uint32_t v) { out[i].grid[1] = v; }) &&
           u32(19, b, [out](std::size_t i, std::uint32_t v) { out[i].grid[2] = v; }) &&
           u32(20, b, [out](std::size_t i, std::uint32_t v) { out[i].block[0] = v; }) &&
           u32(21, b, [out](std::size_t i, std::uint32_t v) { out[i].block[1] = v; }) &&
           u32(22, b, [out](std::size_t i, std::uint32_t v) { out[i].block[2] = v; }) &&
           u32(23, b, [out](std::size_t i, std::uint32_t v) { out[i].shared_memory_bytes = v; }) &&
           u32(24, b, [out](std::size_t i, std::uint32_t v) { out[i].registers_per_thread = v; }) &&
           u32(25, b, [out](std::size_t i, std::uint32_t v) { out[i].src_memory_kind = v; }) &&
           u32(26, b, [out](std::size_t i, std::uint32_t v) { out[i].dst_memory_kind = v; });
  });
}

bool DecodeApiCallTable(const Span& span, FrameRows* frame) {
  Table<7> t;
  if (span.seen && !t.Parse(span.begin, span.end, true)) return false;
  const std::size_t n = t[2].count;
  if (!(Full(t[3], n) && FullOrConstant(t[4], n) && FullOrConstant(t[5], n) && Full(t[6], n) &&
        FullOrConstant(t[7], n))) {
    return false;
  }
  std::vector<ApiCallRow>& rows = frame->api_calls;
  rows.resize(n);
  ApiCallRow* out = rows.data();
  const auto& strings = frame->strings;
  const auto& threads = frame->threads;
  auto start = static_cast<std::int64_t>(t.leading);
  return InBlocks(n, [&](Block b) {
    return FillStarts(t[2], b, &start, out) && FillDurations(t[3], b, out) &&
           FillIndex(t[4], b, strings.size(), [&](std::size_t i, std::uint32_t v) { out[i].name = strings[v]; }) &&
           FillIndex(t[5], b, threads.size(), [&](std::size_t i, std::uint32_t v) { out[i].tid = threads[v].tid; }) &&
           Fill(t[6], b,
                [out](std::size_t i, std::uint64_t v) { out[i].correlation_id = static_cast<std::uint32_t>(v); }) &&
           Fill(t[7], b, [out](std::size_t i, std::uint64_t v) { out[i].domain = static_cast<std::uint32_t>(v); });
  });
}

bool DecodeExternalCorrelationTable(const Span& span, FrameRows* frame) {
  Table<4> t;
  if (span.seen && !t.Parse(span.begin, span.end, false)) return false;
  const std::size_t n = t[1].count;
  if (!(FullOrConstant(t[2], n) && FullOrConstant(t[3], n) && FullOrConstant(t[4], n))) return false;
  std::vector<ExternalCorrelationRow>& rows = frame->external_correlations;
  rows.resize(n);
  ExternalCorrelationRow* out = rows.data();
  const auto& strings = frame->strings;
  return InBlocks(n, [&](Block b) {
    return Fill(t[1], b,
                [out](std::size_t i, std::uint64_t v) { out[i].correlation_id = static_cast<std::uint32_t>(v); }) &&
           Fill(t[2], b, [out](std::size_t i, std::uint64_t v) { out[i].external_id = v; }) &&
           Fill(t[3], b,
                [out](std::size_t i, std::uint64_t v) { out[i].external_kind = static_cast<std::uint32_t>(v); }) &&
           FillIndex(t[4], b, strings.size(), [&](std::size_t i, std::uint32_t v) { out[i].name = strings[v]; });
  });
}

// One CounterSeries, appended to the frame's counter rows.
bool DecodeCounterSeries(std::string_view series, FrameRows* frame) {
  Table<3> t;
  const auto* begin = reinterpret_cast<const Byte*>(series.data());
  if (!t.Parse(begin, begin + series.size(), true)) return false;
  const auto& tracks = frame->tables().counter_tracks();
  const auto track_index = static_cast<std::uint32_t>(t.leading);
  const std::size_t n = t[2].count;
  if (track_index >= static_cast<std::uint32_t>(tracks.size()) || !Full(t[3], n)) return false;
  const trace::CounterTrack& track = tracks.Get(static_cast<int>(track_index));
  const double resolution = track.resolution() > 0 ? track.resolution() : 1.0;
  std::vector<CounterRow>& rows = frame->counters;
  const std::size_t first = rows.size();
  rows.resize(first + n, CounterRow{0, 0, track.name(), track.unit()});
  CounterRow* out = rows.data() + first;
  std::int64_t ts = 0;
  std::int64_t value = 0;
  return InBlocks(n, [&](Block b) {
    return Fill(t[2], b,
                [&](std::size_t i, std::uint64_t v) {
                  ts = Add(ts, ZigZag(v));
                  out[i].ts_ns = ts;
                }) &&
           Fill(t[3], b, [&](std::size_t i, std::uint64_t v) {
             value = Add(value, ZigZag(v));
             out[i].value = static_cast<double>(value) * resolution;
           });
  });
}

// Parses the fields the walker does not decode with protobuf, into `cold`.
bool ParseCold(const std::string& bytes, trace::Frame* cold) {
  if (bytes.empty()) return true;
  google::protobuf::LogSilencer quiet;
  return cold->ParseFromString(bytes);
}

}  // namespace

bool FrameWireDecoder::Decode(std::string_view bytes, FrameRows* rows) {
  const auto* begin = reinterpret_cast<const Byte*>(bytes.data());
  Fields fields(begin, begin + bytes.size());
  Span annotations, gpu, api_calls, external_correlations;
  std::vector<std::string_view>& series = rows->counter_series_;
  series.clear();
  while (!fields.done()) {
    const Byte* start = fields.position();
    std::uint32_t field = 0;
    std::uint32_t wire_type = 0;
    if (!fields.Next(&field, &wire_type)) return false;
    const bool varint = wire_type == kVarint;
    const bool bytes_field = wire_type == kLengthDelimited;
    bool ok = true;
    Span value;
    switch (field) {
      case kSequence:
        ok = varint && fields.Varint(&rows->sequence);
        break;
      case kDroppedTotal:
        ok = varint && fields.Varint(&rows->dropped_total);
        break;
      case kGpuDroppedTotal:
        ok = varint && fields.Varint(&rows->gpu_dropped_total);
        break;
      case kStrings:
        ok = bytes_field && fields.Bytes(&value.begin, &value.end);
        if (ok) {
          rows->strings.emplace_back(reinterpret_cast<const char*>(value.begin),
                                     static_cast<std::size_t>(value.end - value.begin));
        }
        break;
      case kThreads:
        ok = bytes_field && TakeThread(fields, &rows->threads);
        break;
      case kAnnotations:
        ok = bytes_field && TakeMessage(fields, &annotations);
        break;
      case kGpu:
        ok = bytes_field && TakeMessage(fields, &gpu);
        break;
      case kApiCalls:
        ok = bytes_field && TakeMessage(fields, &api_calls);
        break;
      case kExternalCorrelations:
        ok = bytes_field && TakeMessage(fields, &external_correlations);
        break;
      case kCounters:
        ok = bytes_field && fields.Bytes(&value.begin, &value.end);
        if (ok) {
          series.emplace_back(reinterpret_cast<const char*>(value.begin),
                              static_cast<std::size_t>(value.end - value.begin));
        }
        break;
      default:  // counter tracks, markers, overheads, devices, contexts, unknown fields: protobuf's
        ok = fields.Skip(wire_type);
        if (ok) {
          rows->cold_bytes_.append(reinterpret_cast<const char*>(start),
                                   static_cast<std::size_t>(fields.position() - start));
        }
    }
    if (!ok) return false;
  }
  rows->has_gpu = gpu.seen;
  rows->has_api_calls = api_calls.seen;
  if (!ParseCold(rows->cold_bytes_, &rows->cold_)) return false;
  if (!DecodeAnnotationTable(annotations, rows) || !DecodeGpuTable(gpu, rows) || !DecodeApiCallTable(api_calls, rows) ||
      !DecodeExternalCorrelationTable(external_correlations, rows)) {
    return false;
  }
  for (std::string_view s : series) {
    if (!DecodeCounterSeries(s, rows)) return false;
  }
  return true;
}

}  // namespace smprof::internal

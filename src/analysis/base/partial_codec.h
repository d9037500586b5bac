// PartialEncoder / PartialDecoder: the binary codec of partial summaries
// (docs/ANALYSIS.md, "Partial summaries"). Each aggregator writes its state
// field by field in a fixed order (Save) and reads it back in the same order
// (Load): unsigned integers as LEB128 varints, signed ones zigzag-encoded,
// doubles as their 8 bytes (so sums come back bit for bit), strings and
// protobuf messages (headers, devices) length-prefixed. The decoder throws
// std::invalid_argument on bytes that end early or do not parse.
//
// Why not protobuf, which is linked (issue 27): a protobuf-lite message of
// GpuMetrics' state, the largest aggregator's, was measured against this
// codec on a state modelled on a stream of partial_summary_benchmark.py's
// job (bench/partial_codec_benchmark.cc, docs/BENCHMARKS.md "Perfetto encoding:
// hand-written or generated"): 8-13% more bytes (a tag per field), decode and
// merge 1.0-1.3x this codec's time, encode 0.7-1.0x, each about 10-25 us per
// partial, under 0.05% of the tens of milliseconds it takes to read the
// stream a partial summarizes. Partials live between processes of one smprof
// version (kPartialVersion), so a schema's compatibility buys nothing either:
// not clearly better, so not ported.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace google::protobuf {
class MessageLite;
}

namespace smprof::analysis {

class PartialEncoder {
 public:
  void Uint(std::uint64_t value);
  void Int(std::int64_t value);
  void Double(double value);
  void Bool(bool value) { Uint(value ? 1 : 0); }
  void String(std::string_view value);
  // Length-prefixed, serialized deterministically (map fields sorted), so the
  // same state is the same bytes.
  void Message(const google::protobuf::MessageLite& message);

  const std::string& bytes() const { return bytes_; }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class PartialDecoder {
 public:
  explicit PartialDecoder(std::string_view bytes) : bytes_(bytes) {}

  std::uint64_t Uint();
  std::int64_t Int();
  double Double();
  bool Bool() { return Uint() != 0; }
  std::string String();
  void Message(google::protobuf::MessageLite* message);
  // A count of items that follow, each at least one byte long: larger than
  // what is left means damaged bytes, not a request to allocate.
  std::size_t Count();

  bool done() const { return position_ == bytes_.size(); }

 private:
  [[noreturn]] void Fail(const char* what) const;
  std::string_view bytes_;
  std::size_t position_ = 0;
};

}  // namespace smprof::analysis

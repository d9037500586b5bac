#include "analysis/base/partial_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

#include <cstring>

namespace smprof::analysis {

void PartialEncoder::Uint(std::uint64_t value) {
  while (value >= 0x80) {
    bytes_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  bytes_.push_back(static_cast<char>(value));
}

void PartialEncoder::Int(std::int64_t value) {
  const auto bits = static_cast<std::uint64_t>(value);
  Uint((bits << 1) ^ (value < 0 ? ~std::uint64_t{0} : 0));
}

void PartialEncoder::Double(double value) {
  char raw[sizeof(double)];
  std::memcpy(raw, &value, sizeof(double));
  bytes_.append(raw, sizeof(double));
}

void PartialEncoder::String(std::string_view value) {
  Uint(value.size());
  bytes_.append(value.data(), value.size());
}

void PartialEncoder::Message(const google::protobuf::MessageLite& message) {
  std::string serialized;
  {
    google::protobuf::io::StringOutputStream stream(&serialized);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  String(serialized);
}

void PartialDecoder::Fail(const char* what) const {
  throw std::invalid_argument(std::string("partial summary damaged: ") + what + " at byte " +
                              std::to_string(position_));
}

std::uint64_t PartialDecoder::Uint() {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (position_ >= bytes_.size()) Fail("ends inside a number");
    const auto byte = static_cast<std::uint8_t>(bytes_[position_++]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  Fail("a number longer than 10 bytes");
}

std::int64_t PartialDecoder::Int() {
  const std::uint64_t bits = Uint();
  return static_cast<std::int64_t>((bits >> 1) ^ (~(bits & 1) + 1));
}

double PartialDecoder::Double() {
  if (bytes_.size() - position_ < sizeof(double)) Fail("ends inside a double");
  double value = 0;
  std::memcpy(&value, bytes_.data() + position_, sizeof(double));
  position_ += sizeof(double);
  return value;
}

std::string PartialDecoder::String() {
  const std::uint64_t size = Uint();
  if (size > bytes_.size() - position_) Fail("ends inside a string");
  std::string value(bytes_.substr(position_, size));
  position_ += size;
  return value;
}

void PartialDecoder::Message(google::protobuf::MessageLite* message) {
  if (!message->ParseFromString(String())) Fail("a protobuf message that does not parse");
}

std::size_t PartialDecoder::Count() {
  const std::uint64_t count = Uint();
  if (count > bytes_.size() - position_) Fail("a count larger than the bytes left");
  return static_cast<std::size_t>(count);
}

}  // namespace smprof::analysis

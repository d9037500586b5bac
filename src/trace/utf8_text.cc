#include "trace/utf8_text.h"

#include <algorithm>
#include <cstdint>

namespace smprof::internal {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// How many bytes at the start of `text` form the maximal prefix of a valid
// sequence (Unicode's "maximal subpart"), at least 1: replaced by one U+FFFD.
std::size_t InvalidPrefixLength(std::string_view text) {
  const auto lead = static_cast<unsigned char>(text[0]);
  std::size_t need = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return 1;
  }
  std::size_t length = 1;
  for (std::size_t i = 1; i <= need && i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool ok = i == 1 ? (c >= low && c <= high) : IsContinuation(c);
    if (!ok) break;
    ++length;
  }
  return length;
}

}  // namespace

std::size_t Utf8SequenceLength(std::string_view text) {
  if (text.empty()) return 0;
  const auto lead = static_cast<unsigned char>(text[0]);
  if (lead < 0x80) return 1;
  const std::size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  if (text.size() < need || InvalidPrefixLength(text) != need) return 0;
  return need;
}

void AppendValidUtf8(std::string_view text, std::string* out) {
  while (!text.empty()) {
    std::size_t valid = 0;
    while (valid < text.size()) {
      const std::size_t n = Utf8SequenceLength(text.substr(valid));
      if (n == 0) break;
      valid += n;
    }
    out->append(text.substr(0, valid));
    text.remove_prefix(valid);
    if (text.empty()) break;
    out->append(kReplacement);
    text.remove_prefix(InvalidPrefixLength(text));
  }
}

std::string CutText(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // The marker's length depends on N; N's digits never exceed the whole length's.
  const std::size_t marker =
      std::string(" [cut: ").size() + std::to_string(text.size()).size() + std::string(" bytes]").size();
  std::size_t keep = 0;
  while (keep < text.size()) {
    const std::size_t step = std::max<std::size_t>(Utf8SequenceLength(text.substr(keep)), 1);
    if (keep + step + marker > max_bytes) break;
    keep += step;
  }
  return std::string(text.substr(0, keep)) + " [cut: " + std::to_string(text.size() - keep) + " bytes]";
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendValidUtf8(text, &out);
  return out;
}

}  // namespace smprof::internal

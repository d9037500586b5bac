#include "analysis/base/json_string.h"

#include <cstdio>

#include "trace/utf8_text.h"

namespace smprof::analysis {

void AppendJsonString(std::string_view value, std::string* out) {
  const std::string text = internal::ValidUtf8(value);
  *out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          *out += escaped;
        } else {
          *out += c;
        }
    }
  }
  *out += '"';
}

}  // namespace smprof::analysis

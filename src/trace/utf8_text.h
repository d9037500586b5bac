// Names in a trace are bytes (Frame.strings, Thread.name): usually UTF-8, but
// a C/C++ caller may pass anything. Every reader shows them as valid UTF-8,
// each invalid sequence replaced by U+FFFD (docs/TRACE_FORMAT.md), as
// Python's bytes.decode("utf-8", errors="replace") does.
#pragma once

#include <string>
#include <string_view>

namespace smprof::internal {

// The length of the valid UTF-8 sequence at the start of `text` (1 to 4
// bytes), or 0 when its first byte does not start one.
std::size_t Utf8SequenceLength(std::string_view text);

// Appends `text` to `out` with each maximal invalid subsequence replaced by
// U+FFFD.
void AppendValidUtf8(std::string_view text, std::string* out);

// `text` itself when valid, else its AppendValidUtf8 form.
std::string ValidUtf8(std::string_view text);

// `text` itself when it has at most `max_bytes`, else its first bytes up to a
// UTF-8 sequence's boundary followed by " [cut: N bytes]" (N the bytes left
// out), `max_bytes` in all.
std::string CutText(std::string_view text, std::size_t max_bytes);

}  // namespace smprof::internal

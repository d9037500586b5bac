// A JSON string literal: the one escaping every JSON output uses (the summary,
// the Chrome trace export). Names from traces are bytes: each invalid UTF-8
// sequence becomes U+FFFD, so the output is always valid JSON.
#pragma once

#include <string>
#include <string_view>

namespace smprof::analysis {

// Appends `value` to `out` as a quoted JSON string.
void AppendJsonString(std::string_view value, std::string* out);

}  // namespace smprof::analysis

// One place for the profiler's messages to the user, on stderr, prefixed
// "smprof: ". Warn() prints every time; WarnOnce() once per key per process.
#pragma once

#include <string>
#include <string_view>

namespace smprof::internal {

void Warn(std::string_view message);
void WarnOnce(std::string_view key, std::string_view message);
void Info(std::string_view message);

}  // namespace smprof::internal

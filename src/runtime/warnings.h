// One place for the profiler's messages to the user, on stderr, prefixed
// "smprof: ". Warn() prints every time; WarnOnce() once per key per process,
// and under `smprof run` once per message for the job's processes on a host
// (SMP_RUN_WARNED_DIR, which the launcher creates). The trace keeps what each
// process found (its header), and the summary groups it (warning_groups.py).
#pragma once

#include <string>
#include <string_view>

namespace smprof::internal {

void Warn(std::string_view message);
void WarnOnce(std::string_view key, std::string_view message);
void Info(std::string_view message);

}  // namespace smprof::internal

// How a session ends: the footer's SessionEnd (trace.proto). Stop() ends a
// session as "stop"; the process-lifetime hooks (exit, SIGTERM) and smppy's
// exit paths (interpreter exit, an uncaught exception, os._exit) say how the
// process is ending, and never wait for the GPU.
#pragma once

#include <optional>
#include <string>

#include "smprof/status.h"
#include "smprof/trace.pb.h"

namespace smprof::internal {

struct SessionEnd {
  std::string how = "stop";  // see trace.proto's SessionEnd
  std::optional<int> exit_code;
  int signal = 0;
  std::string exception_type;
  std::string exception_message;  // cut at kMaxExceptionMessageBytes
};

inline constexpr std::size_t kMaxExceptionMessageBytes = 4096;

trace::SessionEnd ToProto(const SessionEnd& end);

// Stops the running session as the process ends, without waiting for the GPU
// (a kernel that never ends would turn an exiting process into a hung one).
// kFailedPrecondition when nothing runs.
Status StopAtEnd(const SessionEnd& end);

}  // namespace smprof::internal

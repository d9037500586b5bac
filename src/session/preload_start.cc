// The LD_PRELOAD entry point of `smprof run` (docs/RUN.md): a native program
// started by `smprof run` profiles itself from load time, its settings from
// the SMP_* environment variables. The session stops at exit through the
// atexit hook every session installs. A process that embeds Python is left
// to smppy's start-up bootstrap, which also runs the schedule and the
// PyTorch hooks.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runtime/warnings.h"
#include "smprof/smprof.h"

namespace smprof::internal {

namespace {

// Whether `smprof run` asks this process to profile itself: SMP_RUN_NATIVE is
// "all", or "top" and this process is the command `smprof run` started.
bool RunAsksForNativeProfiling() {
  const char* run = std::getenv("SMP_RUN");
  const char* native = std::getenv("SMP_RUN_NATIVE");
  if (run == nullptr || std::string(run) != "1" || native == nullptr) return false;
  if (std::string(native) == "all") return true;
  const char* launcher = std::getenv("SMP_RUN_LAUNCHER_PID");
  return std::string(native) == "top" && launcher != nullptr && std::to_string(getppid()) == launcher;
}

bool EmbedsPython() { return dlsym(RTLD_DEFAULT, "Py_Initialize") != nullptr; }

__attribute__((constructor)) void StartFromPreload() {
  if (!RunAsksForNativeProfiling() || EmbedsPython()) return;
  if (Status st = Start(Config{}); !st.ok())
    Warn("smprof run: profiling is off in pid " + std::to_string(getpid()) + ": " + st.message());
}

}  // namespace

}  // namespace smprof::internal

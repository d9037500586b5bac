// SIGTERM, how schedulers and spot interruptions end jobs: while a session
// runs, a SIGTERM stops it as at exit (last frame, footer) before the process
// goes on to what SIGTERM would have done without smprof.
//
// The handler does nothing unsafe: it writes one byte to a pipe and calls the
// handler it replaced (Python's, the framework's), if any. A watcher thread,
// one per session, reads the byte and runs the stop, waiting for it at most a
// bounded time; then, if there was no previous handler (SIG_DFL), it restores
// the default action and sends SIGTERM again, so the process ends as it would
// have. With a previous handler, that handler decides. A SIGTERM that was
// ignored stays ignored (nothing is installed). StopOnSigterm=0 opts out
// (docs/CONFIG.md).
#pragma once

#include <chrono>

namespace smprof::internal {

// At session start: installs the handler and starts the watcher; `stop` runs
// on a helper thread, waited for at most `timeout`.
void StopOnSigterm(void (*stop)(), std::chrono::milliseconds timeout);

// At session stop: puts the previous disposition back (unless someone
// replaced the handler since) and ends the watcher, which would otherwise
// keep a process alive whose other threads have all exited.
void ReleaseSigterm();

// In a forked child, where the watcher thread does not exist: puts the
// previous disposition back and forgets the parent's pipe.
void ForgetSigtermStopInChild();

}  // namespace smprof::internal

// NVTX_INJECTION64_PATH: NVTX (initialised lazily, at the application's
// first NVTX call) loads the library it names as its injection, so setting
// it to libcupti lets NVTX ranges reach CUPTI (docs/GPU.md, "Collection:
// NVTX").
//
// setenv and unsetenv race with getenv on every other thread (undefined
// behaviour in glibc), and a training's threads call getenv whenever they
// like. So the environment is written at most once per process: by the
// first start that reaches it (the preload constructor under `smprof run`,
// smppy's bootstrap at interpreter start, or the application's first start),
// before that session starts a thread of its own, and it is never unset
// while threads may run. A value already there (the user's, another tool's)
// is never overwritten. Ours stays after stop: NVTX in this process keeps
// its injection for later sessions, and programs exec'd later inherit it.
// A forked child takes ours back out (from the pthread_atfork child handler,
// where the forking thread is the child's only thread, so nothing races):
// CUPTI stays off in the child of a process that used it.
#pragma once

#include <string>

namespace smprof::internal {

// The first call of the process sets NVTX_INJECTION64_PATH to `cupti_path`
// (which must outlive the process) when it is unset; every later call does
// nothing. Callers are serialized (the session's control lock).
void InjectNvtxOncePerProcess(const std::string& cupti_path);

// In a forked child: removes NVTX_INJECTION64_PATH if it holds our value.
void WithdrawNvtxInForkedChild();

// How often this process wrote NVTX_INJECTION64_PATH (tests).
int NvtxEnvironmentWrites();

}  // namespace smprof::internal

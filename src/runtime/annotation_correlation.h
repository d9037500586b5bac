// Annotations as CUDA external correlation ids.
//
// While a CUDA collector is active, every RAII/`with` scope pushes its NameId
// on CUPTI's per-thread external-correlation stack when it opens and pops it
// when it closes, so each CUDA API call (and every kernel, copy and set it
// launched) carries the innermost annotation it ran under. The collector
// installs the hooks; core code only sees these function pointers, so the
// paths without CUDA cost one relaxed load more than before (docs/GPU.md).
//
// Handle ranges (AnnotationBegin/End) are never pushed: they may end on
// another thread or out of order, and CUPTI's stacks are per thread and pop
// only their top.
#pragma once

#include <atomic>

#include "smprof/annotate.h"

namespace smprof::internal {

// Pushes `name` on the calling thread's stack.
using CorrelationPush = void (*)(NameId name);
// Pops the calling thread's top entry; false when the stack was empty.
using CorrelationPop = bool (*)();

// Non-null while a collector is active: scopes opened then push.
extern std::atomic<CorrelationPush> g_correlation_push;
// Non-null once a collector was active in this process (null again in a
// forked child): a scope that pushed pops when it closes, even after the
// session stopped, so the stack stays balanced.
extern std::atomic<CorrelationPop> g_correlation_pop;

// A scope that pushed and is closed on another thread (a Python `with` left
// on another thread) cannot pop: CUPTI's stack is the opening thread's. Every
// thread then empties its stack the next time it opens an outermost scope,
// when no entry of its own can be on it.
void AbandonCorrelatedScope() noexcept;

}  // namespace smprof::internal

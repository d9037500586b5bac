// The annotation API: RAII scopes (EnterScope/ExitScope) and handle ranges.
#include "smprof/annotate.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "runtime/annotation_correlation.h"
#include "runtime/name_table.h"
#include "runtime/recorder.h"
#include "runtime/warnings.h"

namespace smprof {

namespace internal {

std::atomic<bool> g_recording{false};
std::atomic<CorrelationPush> g_correlation_push{nullptr};
std::atomic<CorrelationPop> g_correlation_pop{nullptr};

namespace {

constexpr int kSeqBits = 40;
constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << kSeqBits) - 1;
// docs/API.md: a begin past it is refused (handle 0), warned of once and
// counted (footer annotations_refused_open_limit).
constexpr std::size_t kMaxOpenRangesPerThread = 4096;
// Deeper than any stack of scopes: bounds the emptying of a thread's stack.
constexpr int kMaxCorrelationPops = 1 << 16;

// Counts AbandonCorrelatedScope calls; each thread remembers the count its
// stack was last emptied at.
std::atomic<std::uint32_t> g_abandoned_scopes{0};
thread_local std::uint32_t t_abandoned_seen = 0;

// Called at an outermost scope: nothing of this thread's is on its stack.
void DropAbandonedCorrelations(CorrelationPop pop) noexcept {
  const std::uint32_t abandoned = g_abandoned_scopes.load(std::memory_order_relaxed);
  if (abandoned == t_abandoned_seen || pop == nullptr) return;
  t_abandoned_seen = abandoned;
  for (int i = 0; i < kMaxCorrelationPops && pop(); ++i) {
  }
}

// Only while GPU collection runs: out of line, so that the common scope saves
// no registers for it.
__attribute__((noinline)) void PushCorrelation(CorrelationPush push, NameId name, std::uint32_t open_scopes) noexcept {
  if (open_scopes == 0) DropAbandonedCorrelations(g_correlation_pop.load(std::memory_order_relaxed));
  push(name);
}

__attribute__((noinline)) void PopCorrelation() noexcept {
  if (const CorrelationPop pop = g_correlation_pop.load(std::memory_order_relaxed)) pop();
}

std::uint16_t ClampDepth(std::uint32_t depth) {
  return static_cast<std::uint16_t>(std::min<std::uint32_t>(depth, 0xffff));
}

inline __attribute__((always_inline)) void Record(ThreadState* writer, std::uint32_t tid, NameId name,
                                                  std::int64_t start_ns, std::int64_t end_ns, std::uint16_t depth) {
  Recorder::Append(writer, AnnotationRecord{start_ns, end_ns - start_ns, name, tid, depth, 0, 0});
}

// Ends `owner`'s innermost range if it is `seq`: reads it into *range, then
// claims it. Lock-free; see InnermostRange.
bool ClaimInnermost(ThreadState* owner, std::uint64_t seq, OpenRange* range) {
  InnermostRange& slot = owner->innermost;
  if (slot.seq.load(std::memory_order_acquire) != seq) return false;
  *range = OpenRange{seq, slot.start_ns.load(std::memory_order_relaxed), slot.name.load(std::memory_order_relaxed),
                     slot.depth.load(std::memory_order_relaxed)};
  return slot.seq.compare_exchange_strong(seq, 0, std::memory_order_acq_rel, std::memory_order_relaxed);
}

// Ends the range `seq` of `owner`, innermost or older; caller holds its
// open_mutex.
EndResult TakeOpenRange(ThreadState* owner, std::uint64_t seq, OpenRange* range) {
  if (ClaimInnermost(owner, seq, range)) return EndResult::kOk;
  auto& open = owner->open;
  auto it = std::find_if(open.rbegin(), open.rend(), [seq](const OpenRange& r) { return r.seq == seq; });
  if (it == open.rend()) return EndResult::kUnknownHandle;
  const bool innermost = it == open.rbegin() && owner->innermost.seq.load(std::memory_order_relaxed) == 0;
  *range = *it;
  open.erase(std::next(it).base());
  owner->open_count.store(static_cast<std::uint32_t>(open.size()), std::memory_order_relaxed);
  return innermost ? EndResult::kOk : EndResult::kOutOfOrder;
}

// Before the owner opens a new range: moves its open innermost one to `open`.
// False, leaving it in place, when `open` is full.
bool MoveInnermostToOpen(ThreadState* thread) {
  std::lock_guard<std::mutex> lock(thread->open_mutex);
  const std::uint64_t seq = thread->innermost.seq.load(std::memory_order_acquire);
  if (seq == 0) return true;  // another thread ended it meanwhile
  if (thread->open.size() + 1 >= kMaxOpenRangesPerThread) return false;
  OpenRange range{};
  if (!ClaimInnermost(thread, seq, &range)) return true;
  thread->open.push_back(range);
  thread->open_count.store(static_cast<std::uint32_t>(thread->open.size()), std::memory_order_relaxed);
  return true;
}

// The next handle sequence number of the owner: 40 bits, never 0 (a free
// InnermostRange).
std::uint64_t NextSeq(ThreadState* thread) {
  std::uint64_t seq = thread->next_seq++ & kSeqMask;
  if (seq == 0) seq = thread->next_seq++ & kSeqMask;
  return seq;
}

// A thread's first scope: registers the thread, then opens the scope. Out of
// line, so that EnterScope's common path saves no registers for it.
__attribute__((noinline)) ThreadState* EnterFirstScope(NameId name, std::uint16_t* depth, bool* correlated) noexcept {
  if (Recorder::Current() == nullptr) return nullptr;
  return EnterScope(name, depth, correlated);
}

}  // namespace

ThreadState* EnterScope(NameId name, std::uint16_t* depth, bool* correlated) noexcept {
  ThreadState* thread = Recorder::CurrentIfRegistered();
  if (thread == nullptr) return EnterFirstScope(name, depth, correlated);
  const std::uint32_t scopes = thread->scope_depth.load(std::memory_order_relaxed);
  *depth = ClampDepth(scopes + thread->OpenRanges());
  const CorrelationPush push = g_correlation_push.load(std::memory_order_relaxed);
  *correlated = push != nullptr;
  if (push != nullptr) PushCorrelation(push, name, scopes);
  thread->scope_depth.store(scopes + 1, std::memory_order_relaxed);
  return thread;
}

void ExitScope(ThreadState* thread, NameId name, std::int64_t start_ns, std::int64_t end_ns, std::uint16_t depth,
               bool correlated) noexcept {
  const std::uint32_t scopes = thread->scope_depth.load(std::memory_order_relaxed);
  if (scopes > 0) thread->scope_depth.store(scopes - 1, std::memory_order_relaxed);
  if (g_recording.load(std::memory_order_relaxed)) Record(thread, thread->tid, name, start_ns, end_ns, depth);
  // Last, so that the common path keeps nothing across a call.
  if (correlated) PopCorrelation();
}

void AbandonCorrelatedScope() noexcept { g_abandoned_scopes.fetch_add(1, std::memory_order_relaxed); }

}  // namespace internal

using internal::Recorder;
using internal::ThreadState;

NameId InternName(std::string_view name) { return internal::NameTable::Get().Intern(name); }

AnnotationHandle AnnotationBegin(std::string_view name) {
  if (!internal::g_recording.load(std::memory_order_relaxed)) return 0;
  return AnnotationBegin(InternName(name));
}

AnnotationHandle AnnotationBegin(NameId name) {
  if (!internal::g_recording.load(std::memory_order_relaxed)) return 0;
  ThreadState* thread = Recorder::Current();
  if (thread == nullptr) return 0;
  internal::InnermostRange& slot = thread->innermost;
  if (slot.seq.load(std::memory_order_relaxed) != 0 && !internal::MoveInnermostToOpen(thread)) {
    Recorder::Get().CountRefusedOpenRange();
    internal::WarnOnce("too-many-open",
                       "more than 4096 annotation ranges open on one thread; "
                       "new ones are not recorded until some are ended (counted: annotations_refused_open_limit)");
    return 0;
  }
  const std::uint64_t seq = internal::NextSeq(thread);
  slot.depth.store(internal::ClampDepth(thread->scope_depth.load(std::memory_order_relaxed) +
                                        thread->open_count.load(std::memory_order_relaxed)),
                   std::memory_order_relaxed);
  slot.name.store(name, std::memory_order_relaxed);
  slot.start_ns.store(internal::NowNs(), std::memory_order_relaxed);
  slot.seq.store(seq, std::memory_order_release);
  return (static_cast<std::uint64_t>(thread->index) << internal::kSeqBits) | seq;
}

namespace {

// Ends the range `handle` and records it, under `recorded_name` when given.
inline EndResult EndRange(AnnotationHandle handle, const NameId* recorded_name) {
  if (handle == 0) return EndResult::kNotProfiling;
  const std::int64_t end_ns = internal::NowNs();
  const auto index = static_cast<std::uint32_t>(handle >> internal::kSeqBits);
  const std::uint64_t seq = handle & internal::kSeqMask;
  ThreadState* self = Recorder::Current();
  if (self == nullptr) return EndResult::kNotProfiling;

  internal::OpenRange range{};
  std::uint32_t owner_tid = 0;
  EndResult result;
  if (self->index == index) {
    owner_tid = self->tid;
    // The common case, the newest range ended by its own thread: no lock.
    if (internal::ClaimInnermost(self, seq, &range)) {
      result = EndResult::kOk;
    } else {
      std::lock_guard<std::mutex> lock(self->open_mutex);
      result = internal::TakeOpenRange(self, seq, &range);
    }
  } else {
    std::lock_guard<std::mutex> registry_lock(Recorder::Get().registry_mutex());
    ThreadState* owner = Recorder::Get().FindLocked(index);
    if (owner == nullptr) {
      result = EndResult::kUnknownHandle;
    } else {
      std::lock_guard<std::mutex> lock(owner->open_mutex);
      result = internal::TakeOpenRange(owner, seq, &range);
      owner_tid = owner->tid;
    }
  }
  if (result == EndResult::kUnknownHandle) return result;
  if (!internal::g_recording.load(std::memory_order_relaxed)) return EndResult::kNotProfiling;
  internal::Record(self, owner_tid, recorded_name != nullptr ? *recorded_name : range.name, range.start_ns, end_ns,
                   range.depth);
  return result;
}

}  // namespace

EndResult AnnotationEnd(AnnotationHandle handle) { return EndRange(handle, nullptr); }

EndResult AnnotationEnd(AnnotationHandle handle, NameId recorded_name) { return EndRange(handle, &recorded_name); }

}  // namespace smprof

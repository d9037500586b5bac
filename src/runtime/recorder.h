// Recorder: the process-wide per-thread buffers that annotations are written
// into, and the drain side that empties them.
//
// Each thread that records gets a ThreadState (registered on its first event)
// holding its current chunk. The owner appends; when a chunk is full it is
// sealed and queued, and a new one is taken from the ChunkPool. The drain
// thread (one at a time, see Session) calls DrainOnce() to read every
// published record: from sealed chunks, which it then recycles, and from the
// live chunk of every thread, which it only reads. A thread's state outlives
// the thread until the drain has read all of it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/chunk.h"
#include "runtime/chunk_pool.h"
#include "smprof/annotate.h"

namespace smprof::internal {

// A range opened with AnnotationBegin and not yet ended.
struct OpenRange {
  std::uint64_t seq;
  std::int64_t start_ns;
  NameId name;
  std::uint16_t depth;
};

// The newest range a thread opened by handle, kept apart from the older ones
// so that the common begin/end pair on one thread takes no lock: the owner
// fills a free slot and publishes it by storing `seq` (release); whoever ends
// the range (the owner without a lock, another thread under open_mutex) reads
// the fields and then claims it by a CAS of `seq` to 0. The fields cannot
// change under a reader while `seq` stays the same: the owner writes them
// only into a free slot, and a thread never reuses a seq.
struct InnermostRange {
  std::atomic<std::uint64_t> seq{0};  // 0: free
  std::atomic<std::int64_t> start_ns{0};
  std::atomic<NameId> name{0};
  std::atomic<std::uint16_t> depth{0};
};

struct ThreadState {
  std::uint32_t tid = 0;
  std::uint32_t index = 0;  // registry slot, part of every handle
  // Open RAII/with scopes: written by the owner only, read at stop.
  std::atomic<std::uint32_t> scope_depth{0};
  std::atomic<Chunk*> current{nullptr};  // written by the owner only
  std::atomic<bool> exited{false};

  // Ranges opened by handle: the newest in `innermost`, the older ones (moved
  // there when a newer one opens) in `open`, guarded by open_mutex because any
  // thread may end them.
  InnermostRange innermost;
  std::mutex open_mutex;
  std::vector<OpenRange> open;
  std::atomic<std::uint32_t> open_count{0};  // open.size()
  std::uint64_t next_seq = 1;                // owner thread only

  // Handle ranges open on this thread.
  std::uint32_t OpenRanges() const {
    return open_count.load(std::memory_order_relaxed) + (innermost.seq.load(std::memory_order_relaxed) != 0 ? 1 : 0);
  }
  // Forgets them; the caller holds open_mutex.
  void ForgetOpenRanges() {
    innermost.seq.store(0, std::memory_order_relaxed);
    open.clear();
    open_count.store(0, std::memory_order_relaxed);
  }
};

// The calling thread's state once Recorder::Current() registered it.
// Initial-exec: every annotation reads it with one %fs-relative load instead
// of a call to __tls_get_addr. The library was flagged STATIC_TLS before
// (`readelf -d`: its thread-locals, 168 bytes in all, were in the static TLS
// block already), which glibc keeps a surplus of for libraries that are
// dlopened, as the Python extension is.
extern __thread ThreadState* t_thread_state __attribute__((tls_model("initial-exec")));

class Recorder {
 public:
  // Never destroyed: safe from static destructors. Inline, as every
  // annotation asks for it.
  static Recorder& Get() {
    static Recorder* const recorder = Create();  // leaked on purpose
    return *recorder;
  }

  // The calling thread's state, registered on first use (takes a lock once).
  static ThreadState* Current() {
    ThreadState* const state = t_thread_state;
    return state != nullptr ? state : Get().Register();
  }
  // The calling thread's state, or nullptr before Current() registered it.
  static ThreadState* CurrentIfRegistered() { return t_thread_state; }

  // Appends a closed range to `thread`'s current chunk; drops and counts it
  // if the pool is exhausted. Must be called by the thread that owns `thread`.
  // Inline while the chunk has room; a full or missing chunk takes the call.
  static void Append(ThreadState* thread, const AnnotationRecord& record) noexcept {
    Chunk* const chunk = thread->current.load(std::memory_order_relaxed);
    if (chunk != nullptr) {
      const std::uint32_t n = chunk->committed.load(std::memory_order_relaxed);
      if (n != Chunk::kCapacity) {
        chunk->records[n] = record;
        chunk->committed.store(n + 1, std::memory_order_release);
        return;
      }
    }
    AppendToNewChunk(thread, chunk, record);
  }

  // Reads every record published since the last pass, calling
  // `sink(records, count)` for each contiguous run. Drain thread only.
  // `after_sealed_chunk()` runs, holding no lock, after each queued full
  // chunk was read and returned to the pool: the drain writes frames there,
  // so that what it holds besides the pool stays about one frame.
  template <typename Sink, typename AfterChunk>
  void DrainOnce(Sink&& sink, AfterChunk&& after_sealed_chunk);
  template <typename Sink>
  void DrainOnce(Sink&& sink) {
    DrainOnce(sink, [] {});
  }

  // Waits until a producer asks for a drain (the pool is half used) or
  // `timeout_ms` passes.
  void WaitForWork(std::uint32_t timeout_ms);
  void WakeDrain();

  // Events dropped since the last call.
  std::uint64_t TakeDropped() { return dropped_.exchange(0, std::memory_order_relaxed); }
  // Ranges annotation_begin refused since the last call: their thread had
  // kMaxOpenRangesPerThread open (annotate.cc).
  void CountRefusedOpenRange() { refused_open_ranges_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t TakeRefusedOpenRanges() { return refused_open_ranges_.exchange(0, std::memory_order_relaxed); }

  // The state of the thread with registry slot `index`, or nullptr. The
  // returned pointer is only valid while `registry_mutex()` is held.
  ThreadState* FindLocked(std::uint32_t index);
  std::mutex& registry_mutex() { return registry_mutex_; }

  // Calls `fn(ThreadState*)` for every registered thread; caller holds
  // registry_mutex().
  template <typename Fn>
  void ForEachThreadLocked(Fn&& fn) {
    for (ThreadState* thread : threads_) fn(thread);
  }

  ChunkPool& pool() { return pool_; }

  // Locks every mutex a forked child could inherit in a locked state;
  // see Session's pthread_atfork handlers.
  void LockForFork();
  void UnlockAfterFork();
  // In a forked child (only the forking thread exists): forgets every
  // inherited thread state and chunk, so the child starts empty.
  void ResetInChild();

  // Runs `start` (once) the next time any thread needs a chunk: a followed
  // forked child opens its file and threads only when it first records, so a
  // child that just calls exec() costs nothing and leaves no file.
  void StartOnFirstEvent(void (*start)()) { on_first_event_.store(start, std::memory_order_release); }
  void CancelStartOnFirstEvent() { on_first_event_.store(nullptr, std::memory_order_release); }

 private:
  Recorder() = default;
  static Recorder* Create();
  ThreadState* Register();
  static void AppendToNewChunk(ThreadState* thread, Chunk* full, const AnnotationRecord& record) noexcept;
  Chunk* Refill(ThreadState* thread, Chunk* full);
  void Seal(Chunk* chunk);
  void OnThreadExit(ThreadState* thread);
  friend struct ThreadExitHook;

  template <typename Sink>
  static void Consume(Chunk* chunk, Sink& sink);

  ChunkPool pool_;
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> refused_open_ranges_{0};
  std::atomic<void (*)()> on_first_event_{nullptr};

  std::mutex registry_mutex_;
  std::vector<ThreadState*> threads_;
  std::uint32_t next_index_ = 1;

  std::mutex sealed_mutex_;
  std::vector<Chunk*> sealed_;

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool wake_requested_ = false;
};

template <typename Sink>
void Recorder::Consume(Chunk* chunk, Sink& sink) {
  const std::uint32_t end = chunk->committed.load(std::memory_order_acquire);
  if (end > chunk->consumed) {
    sink(chunk->records + chunk->consumed, end - chunk->consumed);
    chunk->consumed = end;
  }
}

template <typename Sink, typename AfterChunk>
void Recorder::DrainOnce(Sink&& sink, AfterChunk&& after_sealed_chunk) {
  std::vector<Chunk*> sealed;
  {
    std::lock_guard<std::mutex> lock(sealed_mutex_);
    sealed.swap(sealed_);
  }
  for (Chunk* chunk : sealed) {
    Consume(chunk, sink);
    pool_.Release(chunk);
    after_sealed_chunk();
  }
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (std::size_t i = 0; i < threads_.size();) {
    ThreadState* thread = threads_[i];
    if (Chunk* chunk = thread->current.load(std::memory_order_acquire)) Consume(chunk, sink);
    // A thread's handle ranges may still be ended (or counted at stop) after
    // it exits: its state lives on until none is open.
    if (thread->exited.load(std::memory_order_acquire) && thread->OpenRanges() == 0) {
      threads_[i] = threads_.back();
      threads_.pop_back();
      delete thread;
    } else {
      ++i;
    }
  }
}

}  // namespace smprof::internal

#include "runtime/recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <new>

namespace smprof::internal {

__thread ThreadState* t_thread_state = nullptr;

// Constructed only when a thread registers, so that threads which never record
// pay nothing; its destructor hands the thread's last chunk to the drain.
struct ThreadExitHook {
  ThreadState* state = nullptr;
  ~ThreadExitHook() {
    if (state != nullptr) Recorder::Get().OnThreadExit(state);
    t_thread_state = nullptr;
  }
};

namespace {
thread_local ThreadExitHook t_exit_hook;
}  // namespace

Recorder* Recorder::Create() { return new Recorder(); }

ThreadState* Recorder::Register() {
  auto* state = new (std::nothrow) ThreadState();
  if (state == nullptr) return nullptr;
  state->tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  state->open.reserve(16);
  {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    state->index = next_index_++;
    threads_.push_back(state);
  }
  t_exit_hook.state = state;
  t_thread_state = state;
  return state;
}

void Recorder::AppendToNewChunk(ThreadState* thread, Chunk* full, const AnnotationRecord& record) noexcept {
  Recorder& recorder = Get();
  Chunk* chunk = recorder.Refill(thread, full);
  if (chunk == nullptr) {
    recorder.dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  chunk->records[0] = record;
  chunk->committed.store(1, std::memory_order_release);
}

Chunk* Recorder::Refill(ThreadState* thread, Chunk* full) {
  if (on_first_event_.load(std::memory_order_acquire) != nullptr) {
    if (auto start = on_first_event_.exchange(nullptr, std::memory_order_acq_rel)) start();
  }
  if (full != nullptr) {
    // Unpublish before queueing: the drain may recycle a queued chunk at once.
    thread->current.store(nullptr, std::memory_order_release);
    Seal(full);
  }
  if (!pool_.MaybeAvailable()) return nullptr;
  Chunk* chunk = pool_.Acquire();
  if (chunk == nullptr) {
    WakeDrain();
    return nullptr;
  }
  thread->current.store(chunk, std::memory_order_release);
  if (pool_.in_use() * 2 > pool_.capacity()) WakeDrain();
  return chunk;
}

void Recorder::Seal(Chunk* chunk) {
  chunk->sealed.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(sealed_mutex_);
  sealed_.push_back(chunk);
}

void Recorder::OnThreadExit(ThreadState* thread) {
  if (Chunk* chunk = thread->current.exchange(nullptr, std::memory_order_acq_rel)) Seal(chunk);
  thread->exited.store(true, std::memory_order_release);  // last touch: the drain deletes it
}

void Recorder::WaitForWork(std::uint32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(wake_mutex_);
  wake_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return wake_requested_; });
  wake_requested_ = false;
}

void Recorder::WakeDrain() {
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    wake_requested_ = true;
  }
  wake_.notify_one();
}

ThreadState* Recorder::FindLocked(std::uint32_t index) {
  for (ThreadState* thread : threads_) {
    if (thread->index == index) return thread;
  }
  return nullptr;
}

void Recorder::LockForFork() {
  registry_mutex_.lock();
  for (ThreadState* thread : threads_) thread->open_mutex.lock();
  sealed_mutex_.lock();
  wake_mutex_.lock();
  pool_.mutex().lock();
}

void Recorder::UnlockAfterFork() {
  pool_.mutex().unlock();
  wake_mutex_.unlock();
  sealed_mutex_.unlock();
  for (ThreadState* thread : threads_) thread->open_mutex.unlock();
  registry_mutex_.unlock();
}

void Recorder::ResetInChild() {
  threads_.clear();  // their states and chunks are copies of the parent's: leaked
  sealed_.clear();
  pool_.ForgetInUse();
  dropped_.store(0, std::memory_order_relaxed);
  refused_open_ranges_.store(0, std::memory_order_relaxed);
  wake_requested_ = false;
  t_thread_state = nullptr;
  t_exit_hook.state = nullptr;
}

}  // namespace smprof::internal

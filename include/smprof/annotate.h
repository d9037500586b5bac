// Annotations: named time ranges on the thread that records them.
//
// Two styles:
//
//   void Step() {
//     SMPROF_ANNOTATE("step");          // RAII: ends at the closing brace
//     ...
//   }
//
//   smprof::AnnotationHandle h = smprof::AnnotationBegin("data");
//   ...
//   smprof::AnnotationEnd(h);           // handles may end on another thread
//
// Scopes nest; each recorded range carries its depth (0 for outermost). When no
// session is running, a scope costs one relaxed atomic load. While profiling,
// SMPROF_ANNOTATE does two clock reads and one write into a thread-local
// buffer: no lock, no allocation, no system call (except when the thread's
// 64 KiB chunk is full, which takes a lock once per ~2000 ranges).
//
// Names are interned once: SMPROF_ANNOTATE caches the id in a function-local
// static, so its name must be a constant for that line. For names built at run
// time call InternName() yourself, or use AnnotationBegin(const char*).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#include <string_view>

#include "smprof/export.h"

namespace smprof {

using NameId = std::uint32_t;

// Returns the id of `name`, registering it on first use. Thread-safe; takes a
// lock, so cache the result on hot paths.
SMPROF_API NameId InternName(std::string_view name);

// Handle of a range opened by AnnotationBegin. 0 is never a valid handle.
using AnnotationHandle = std::uint64_t;

// Opens a range. Returns 0 (a no-op handle) when no session is running.
SMPROF_API AnnotationHandle AnnotationBegin(NameId name);
SMPROF_API AnnotationHandle AnnotationBegin(std::string_view name);

// What AnnotationEnd found. Misuse never corrupts the trace: the range is
// either recorded once or not at all. The caller decides how to report it
// (the Python API turns it into a RuntimeWarning).
enum class EndResult {
  kOk = 0,
  kNotProfiling = 1,   // the handle is 0 or the session has ended
  kUnknownHandle = 2,  // never issued, or already ended
  kOutOfOrder = 3,     // ended while ranges opened after it were still open;
                       // recorded anyway (its inner ranges stay open)
};
SMPROF_API EndResult AnnotationEnd(AnnotationHandle handle);
// Ends it the same way but records it under `recorded_name`, for a range whose
// meaning is known only at its end (smppy: a step still open when the session
// stops is recorded as the tail it was, not as a step).
SMPROF_API EndResult AnnotationEnd(AnnotationHandle handle, NameId recorded_name);

namespace internal {

// Set while a session records. Read with relaxed order on every annotation.
extern SMPROF_API std::atomic<bool> g_recording;

inline std::int64_t NowNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct ThreadState;

// Opens a scope named `name` on the calling thread; returns its state and
// the depth, and sets *correlated to whether it pushed `name` as the CUDA
// external correlation id (only while GPU collection runs).
SMPROF_API ThreadState* EnterScope(NameId name, std::uint16_t* depth, bool* correlated) noexcept;
// Closes it: records [start_ns, end_ns) under `name` if still profiling, and
// pops the correlation id if EnterScope pushed one. The caller reads end_ns,
// so that this call needs no registers kept across a clock read.
SMPROF_API void ExitScope(ThreadState* thread, NameId name, std::int64_t start_ns, std::int64_t end_ns,
                          std::uint16_t depth, bool correlated) noexcept;

}  // namespace internal

// An RAII range; prefer the SMPROF_ANNOTATE macro.
class Scope {
 public:
  explicit Scope(NameId name) noexcept : name_(name) {
    if (internal::g_recording.load(std::memory_order_relaxed)) {
      thread_ = internal::EnterScope(name_, &depth_, &correlated_);
      start_ns_ = internal::NowNs();
    }
  }
  ~Scope() {
    if (thread_ != nullptr) internal::ExitScope(thread_, name_, start_ns_, internal::NowNs(), depth_, correlated_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  internal::ThreadState* thread_ = nullptr;
  std::int64_t start_ns_ = 0;
  NameId name_;
  std::uint16_t depth_ = 0;
  bool correlated_ = false;
};

}  // namespace smprof

#define SMPROF_CONCAT_INNER(a, b) a##b
#define SMPROF_CONCAT(a, b) SMPROF_CONCAT_INNER(a, b)

// Records the enclosing block as a range named `name` (a constant string).
#define SMPROF_ANNOTATE(name)                                                                       \
  static const ::smprof::NameId SMPROF_CONCAT(smprof_name_, __LINE__) = ::smprof::InternName(name); \
  ::smprof::Scope SMPROF_CONCAT(smprof_scope_, __LINE__)(SMPROF_CONCAT(smprof_name_, __LINE__))

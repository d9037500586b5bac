// ClosedFileQueue: the paths of trace files this process has closed for good
// (rotated or stopped), for a consumer that ships them elsewhere while the job
// runs (smppy's background S3 upload, docs/S3.md).
//
// Nothing is queued unless a consumer watches, and the queue is bounded, so a
// consumer that stops reading costs a fixed amount of memory; files it never
// sees stay on disk for `smprof upload`.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace smprof::internal {

class ClosedFileQueue {
 public:
  static ClosedFileQueue& Get();  // process-wide

  // Starts or stops queueing; stopping discards what is queued.
  void Watch(bool on);
  // Called when a file is complete and final (its footer is written).
  void Push(const std::string& path);
  // The oldest queued path, waiting up to `timeout_ms`; nullopt if none came.
  std::optional<std::string> Next(std::uint32_t timeout_ms);
  // Paths discarded because the queue was full, since the last call.
  std::uint64_t TakeOverflow();

  // Fork: locked before fork, unlocked after it in both processes; the child
  // (which has none of the parent's threads, so no consumer) stops queueing.
  void LockForFork();
  void UnlockAfterFork(bool in_child);

 private:
  // One path per rotation: thousands cover days of RotateIntervalS=60.
  static constexpr std::size_t kMaxQueued = 4096;

  std::mutex mutex_;
  std::condition_variable ready_;
  bool watching_ = false;
  std::deque<std::string> paths_;
  std::uint64_t overflow_ = 0;
};

}  // namespace smprof::internal

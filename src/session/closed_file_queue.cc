#include "session/closed_file_queue.h"

#include <chrono>

namespace smprof::internal {

ClosedFileQueue& ClosedFileQueue::Get() {
  static auto* queue = new ClosedFileQueue();  // leaked: usable from exit handlers
  return *queue;
}

void ClosedFileQueue::Watch(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = on;
  if (!on) paths_.clear();
}

void ClosedFileQueue::Push(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!watching_) return;
    if (paths_.size() == kMaxQueued) {
      paths_.pop_front();
      ++overflow_;
    }
    paths_.push_back(path);
  }
  ready_.notify_one();
}

std::optional<std::string> ClosedFileQueue::Next(std::uint32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return !paths_.empty(); })) {
    return std::nullopt;
  }
  std::string path = std::move(paths_.front());
  paths_.pop_front();
  return path;
}

std::uint64_t ClosedFileQueue::TakeOverflow() {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t n = overflow_;
  overflow_ = 0;
  return n;
}

void ClosedFileQueue::LockForFork() { mutex_.lock(); }

void ClosedFileQueue::UnlockAfterFork(bool in_child) {
  if (in_child) {
    watching_ = false;
    paths_.clear();
  }
  mutex_.unlock();
}

}  // namespace smprof::internal

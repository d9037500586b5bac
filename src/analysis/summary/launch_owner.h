// LaunchOwner: the range inferred attribution gives GPU work that was
// launched at time t by a thread with no annotation open (PyTorch's autograd
// threads launch the backward pass): docs/ANALYSIS.md "Inferred GPU time per
// annotation".
//
// - One thread has a range open at t: its innermost range.
// - Several do, and exactly one of them is inside a backward range (its
//   innermost open range is named like `Backward`: smppy's TorchAutoSteps
//   annotation of Tensor.backward, or the user's own): that thread's
//   innermost range. The thread that called backward() waits in it while
//   the autograd threads launch, so a prefetch, logging or checkpoint range
//   open on another thread meanwhile does not take the autograd kernels.
// - Otherwise: the innermost range open in the process (the latest start,
//   then the deepest), counted as ambiguous.
//
// The ranges are kept twice, in one window for the process and one per
// thread, forgotten in arrival order from both (so the per-thread windows
// hold exactly the process window's ranges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "analysis/summary/open_range_search.h"

namespace smprof::analysis {

template <typename Payload>
class LaunchOwner {
 public:
  struct Choice {
    const Payload* range = nullptr;  // nullptr: no range open at t
    bool ambiguous = false;          // several threads had ranges open, none (or several) inside a backward range
  };

  void Clear() {
    all_.Clear();
    per_thread_.clear();
  }
  std::size_t size() const { return all_.size(); }

  void Add(std::int64_t start_ns, std::int64_t end_ns, std::uint32_t depth, std::uint32_t tid, bool backward,
           Payload payload) {
    all_.Add(start_ns, end_ns, depth, Entry{payload, tid, backward});
    per_thread_[tid].Add(start_ns, end_ns, depth, Entry{payload, tid, backward});
  }

  // Forgets the earliest arrival kept (size() > 0), from its thread's window too.
  void PopFront() {
    const auto thread = per_thread_.find(all_.front().tid);
    thread->second.PopFront();
    if (thread->second.size() == 0) per_thread_.erase(thread);
    all_.PopFront();
  }

  // Readies the windows for At after Adds and PopFronts.
  void Prepare() {
    all_.Prepare();
    if (per_thread_.size() > 1) {
      for (auto& [tid, ranges] : per_thread_) ranges.Prepare();
    }
  }

  Choice At(std::int64_t t) {
    if (per_thread_.size() <= 1) return Choice{Of(all_.InnermostOpenAt(t)), false};
    const Entry* open = nullptr;
    const Entry* backward = nullptr;
    int threads_open = 0;
    int threads_in_backward = 0;
    for (auto& [tid, ranges] : per_thread_) {
      const Entry* innermost = ranges.InnermostOpenAt(t);
      if (innermost == nullptr) continue;
      open = innermost;
      ++threads_open;
      if (innermost->backward) {
        backward = innermost;
        ++threads_in_backward;
      }
    }
    if (threads_open <= 1) return Choice{Of(open), false};
    if (threads_in_backward == 1) return Choice{&backward->payload, false};
    return Choice{Of(all_.InnermostOpenAt(t)), true};
  }

 private:
  struct Entry {
    Payload payload;
    std::uint32_t tid = 0;
    bool backward = false;
  };
  static const Payload* Of(const Entry* entry) { return entry != nullptr ? &entry->payload : nullptr; }

  OpenRanges<Entry> all_;
  std::unordered_map<std::uint32_t, OpenRanges<Entry>> per_thread_;
};

}  // namespace smprof::analysis

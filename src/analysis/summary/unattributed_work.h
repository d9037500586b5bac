// UnattributedWork: GPU work, by correlation id, that no annotation has
// claimed yet, in one map where two joins took a lookup each. An id's work
// has up to two roles at once:
// - waiting for its external correlation, which may come in a later frame:
//   bounded as PendingById is (correlation_join.h): beyond `capacity` the
//   oldest is evicted (counted: evicted()), and none stays older than
//   `window_ns` behind the newest start seen;
// - unclaimed: waiting for inferred attribution, which takes the oldest first.
// A claim through the external correlation ends both roles; inference ends
// the unclaimed one, and the waiting one too when it attributes the work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "analysis/base/fifo.h"
#include "analysis/base/id_window_map.h"

namespace smprof::analysis {

class UnattributedWork {
 public:
  struct Work {
    std::int64_t time_ns = 0;
    std::uint64_t activities = 0;
  };
  // The API call that launched the work: when, and on which thread.
  struct Launch {
    std::int64_t start_ns = -1;  // -1 while the call is unknown
    std::uint32_t tid = 0;
  };
  struct Unclaimed {
    Launch launch;
    Work work;
  };

  UnattributedWork(std::size_t capacity, std::int64_t window_ns) : capacity_(capacity), window_ns_(window_ns) {}

  // GPU work of `id` (one row, or the rows of a CUDA graph's launch held
  // back until their launch call was seen), the first starting at
  // `start_ns`: added to the id's waiting and unclaimed work. When its
  // unclaimed work starts, `launch_of(id)` gives its Launch (start -1 if
  // unknown); it must not use this map.
  template <typename LaunchOf>
  void Add(std::uint32_t id, std::int64_t start_ns, const Work& work, LaunchOf launch_of) {
    bool added = false;
    Entry& entry = entries_.FindOrAdd(id, &added);
    if (!entry.waiting) {
      entry.waiting = true;
      entry.waiting_since_ns = start_ns;
      entry.waiting_work = Work{};
      ++waiting_;
    }
    entry.waiting_work.time_ns += work.time_ns;
    entry.waiting_work.activities += work.activities;
    if (!entry.unclaimed) {
      entry.unclaimed = true;
      entry.unclaimed_work = Unclaimed{launch_of(id), Work{}};
      unclaimed_order_.push_back(id);
    }
    entry.unclaimed_work.work.time_ns += work.time_ns;
    entry.unclaimed_work.work.activities += work.activities;
    const std::int64_t since_ns = entry.waiting_since_ns;
    newest_ns_ = std::max(newest_ns_, since_ns);
    waiting_order_.emplace_back(id, since_ns);
    Evict();
  }

  // The launch of `id`'s unclaimed work, if it has any.
  void SetLaunch(std::uint32_t id, const Launch& launch) {
    Entry* entry = entries_.Find(id);
    if (entry != nullptr && entry->unclaimed) entry->unclaimed_work.launch = launch;
  }

  // The external correlation of `id` arrived: its waiting work, and both roles end.
  bool Claim(std::uint32_t id, Work* work) {
    const Entry* entry = entries_.Find(id);
    if (entry == nullptr || !entry->waiting) return false;
    *work = entry->waiting_work;
    --waiting_;
    entries_.Erase(id);
    return true;
  }

  // Unclaimed records, oldest first; a record whose work was claimed or
  // resolved since stays counted until it is taken.
  std::size_t unclaimed_records() const { return unclaimed_order_.size(); }

  // Takes the oldest unclaimed record: false if its work is gone since.
  bool TakeOldestUnclaimed(std::uint32_t* id, Unclaimed* unclaimed) {
    *id = unclaimed_order_.front();
    unclaimed_order_.pop_front();
    Entry* entry = entries_.Find(*id);
    if (entry == nullptr || !entry->unclaimed) return false;
    *unclaimed = entry->unclaimed_work;
    entry->unclaimed = false;
    if (!entry->waiting) entries_.Erase(*id);
    return true;
  }

  // Inference attributed `id`'s work: a late external correlation must not claim it again.
  void EndWaiting(std::uint32_t id) {
    Entry* entry = entries_.Find(id);
    if (entry == nullptr || !entry->waiting) return;
    DropWaiting(entry, id);
  }

  // Forgets everything and the eviction count (a new process stream).
  void Clear() {
    entries_.Clear();
    waiting_order_.clear();
    unclaimed_order_.clear();
    waiting_ = 0;
    newest_ns_ = 0;
    evicted_ = 0;
  }
  std::uint64_t evicted() const { return evicted_; }  // since the last Clear

 private:
  struct Entry {
    std::int64_t waiting_since_ns = 0;  // the start of its first row since it began waiting
    Work waiting_work;
    Unclaimed unclaimed_work;
    bool waiting = false;
    bool unclaimed = false;
  };

  void DropWaiting(Entry* entry, std::uint32_t id) {
    entry->waiting = false;
    --waiting_;
    if (!entry->unclaimed) entries_.Erase(id);
  }

  // PendingById::Evict over the waiting role.
  void Evict() {
    while (!waiting_order_.empty()) {
      const auto [id, since_ns] = waiting_order_.front();
      Entry* entry = entries_.Find(id);
      // Taken already, or waiting again since (a newer record).
      const bool stale = entry == nullptr || !entry->waiting || entry->waiting_since_ns != since_ns;
      const bool over_capacity = waiting_ > capacity_;
      const bool too_old = since_ns < newest_ns_ - window_ns_;
      if (!stale && !over_capacity && !too_old && waiting_order_.size() <= 2 * capacity_) return;
      waiting_order_.pop_front();
      if (stale) continue;
      DropWaiting(entry, id);
      if (over_capacity) ++evicted_;
    }
  }

  std::size_t capacity_;
  std::int64_t window_ns_;
  std::int64_t newest_ns_ = 0;
  IdWindowMap<Entry> entries_;
  std::size_t waiting_ = 0;  // entries in the waiting role
  Fifo<std::pair<std::uint32_t, std::int64_t>> waiting_order_;
  Fifo<std::uint32_t> unclaimed_order_;
  std::uint64_t evicted_ = 0;
};

}  // namespace smprof::analysis

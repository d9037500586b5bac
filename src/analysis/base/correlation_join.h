// CorrelationJoin: joins rows of two tables on CUPTI correlation ids when
// either side may arrive first (in a later frame), in bounded memory.
// Unmatched entries wait in insertion order; the oldest are evicted once more
// than `capacity` wait (counted: evicted()) or once they are older than
// `window_ns` behind the newest time seen (not counted: most ids legitimately
// never match, e.g. an API call that launched nothing).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "analysis/base/fifo.h"
#include "analysis/base/id_window_map.h"

namespace smprof::analysis {

template <typename Value>
class PendingById {
 public:
  PendingById(std::size_t capacity, std::int64_t window_ns) : capacity_(capacity), window_ns_(window_ns) {}

  void Put(std::uint32_t id, std::int64_t time_ns, Value value) {
    newest_ns_ = std::max(newest_ns_, time_ns);
    bool added = false;
    values_.FindOrAdd(id, &added) = Entry{time_ns, std::move(value)};
    order_.emplace_back(id, time_ns);
    Evict();
  }

  // Moves the window's clock to `time_ns` (if later), forgetting what is then too old.
  void AdvanceTo(std::int64_t time_ns) {
    newest_ns_ = std::max(newest_ns_, time_ns);
    Evict();
  }

  // Removes and returns the value for `id`, if waiting.
  bool Take(std::uint32_t id, Value* value) {
    Entry entry;
    if (!values_.Take(id, &entry)) return false;
    *value = std::move(entry.value);
    return true;
  }

  // Whether `id` is waiting (it stays).
  bool Contains(std::uint32_t id) { return values_.Find(id) != nullptr; }
  std::size_t size() const { return values_.size(); }

  // Forgets every entry and the eviction count (a new process stream).
  void Clear() {
    values_.Clear();
    order_.clear();
    newest_ns_ = 0;
    evicted_ = 0;
  }
  std::uint64_t evicted() const { return evicted_; }  // since the last Clear

 private:
  struct Entry {
    std::int64_t time_ns = 0;
    Value value{};
  };
  void Evict() {
    while (!order_.empty()) {
      const auto [id, time_ns] = order_.front();
      const Entry* entry = values_.Find(id);
      // An id taken already, or put again later (a newer entry in order_).
      const bool stale = entry == nullptr || entry->time_ns != time_ns;
      const bool over_capacity = values_.size() > capacity_;
      const bool too_old = time_ns < newest_ns_ - window_ns_;
      if (!stale && !over_capacity && !too_old && order_.size() <= 2 * capacity_) return;
      order_.pop_front();
      if (stale) continue;
      values_.Erase(id);
      if (over_capacity) ++evicted_;
    }
  }

  std::size_t capacity_;
  std::int64_t window_ns_;
  std::int64_t newest_ns_ = 0;
  IdWindowMap<Entry> values_;
  Fifo<std::pair<std::uint32_t, std::int64_t>> order_;
  std::uint64_t evicted_ = 0;
};

}  // namespace smprof::analysis

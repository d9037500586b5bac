// IdWindowMap: a map from CUPTI correlation ids to values, for the joins
// that hold a window of recent ids: ids arrive about counting up and leave
// about oldest first. Id n lives in slot n mod the ring's size, so
// consecutive ids are neighbours in memory: adding, finding and removing
// walk the ring about in order (cache lines and the prefetcher serve them),
// where a hash map (FlatIdMap) sends each id to a random cache line of a
// table of megabytes. A lookup is one slot; no probing.
//
// An id whose slot holds another live id (the window's ids spread wider
// than the ring) makes the ring double while it is at least half full;
// otherwise the older of the two waits in a FlatIdMap beside the ring
// (stragglers, ids far apart), looked up when the ring misses. The ring is
// thus at most about four times the entries, each slot the value plus 8
// bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "analysis/base/flat_id_map.h"

namespace smprof::analysis {

template <typename Value>
class IdWindowMap {
 public:
  std::size_t size() const { return size_ + overflow_.size(); }
  bool empty() const { return size() == 0; }

  // The value of `id`, or nullptr.
  Value* Find(std::uint32_t id) {
    if (!MayHold(id)) return nullptr;
    Slot& slot = ring_[id & mask_];
    if (slot.used && slot.id == id) return &slot.value;
    return overflow_.empty() ? nullptr : overflow_.Find(id);
  }

  // The value of `id`, value-initialized if it was absent; `added` says which.
  // The reference is valid until the next FindOrAdd.
  Value& FindOrAdd(std::uint32_t id, bool* added) {
    if (Value* found = Find(id)) {
      *added = false;
      return *found;
    }
    *added = true;
    largest_id_ = std::max(largest_id_, id);
    if (ring_.empty()) Resize(kInitialSlots);
    for (;;) {
      Slot& slot = ring_[id & mask_];
      if (!slot.used) {
        slot = Slot{id, true, Value{}};
        ++size_;
        return slot.value;
      }
      if (2 * size_ >= ring_.size()) {
        Resize(2 * ring_.size());
        continue;
      }
      // The ring is roomy but the ids spread wider: the older one (smaller, ids count up) waits beside it.
      if (slot.id > id) return overflow_.FindOrAdd(id, added);
      bool moved = false;
      overflow_.FindOrAdd(slot.id, &moved) = std::move(slot.value);
      slot = Slot{id, true, Value{}};
      return slot.value;
    }
  }

  // Removes `id`; false if it was absent.
  bool Erase(std::uint32_t id) { return Take(id, nullptr); }

  // Removes `id`, moving its value to `*value` (when not null); false if it was absent.
  bool Take(std::uint32_t id, Value* value) {
    if (!MayHold(id)) return false;
    Slot& slot = ring_[id & mask_];
    if (slot.used && slot.id == id) {
      if (value != nullptr) *value = std::move(slot.value);
      slot.used = false;
      // (A trivial value stays as it is: FindOrAdd sets a slot whole.)
      if constexpr (!std::is_trivially_destructible_v<Value>) slot.value = Value{};
      --size_;
      return true;
    }
    return !overflow_.empty() && overflow_.Take(id, value);
  }

  // Empties the map, keeping its memory.
  void Clear() {
    largest_id_ = 0;
    overflow_.Clear();
    if (size_ == 0) return;
    for (Slot& slot : ring_) slot = Slot{};
    size_ = 0;
  }

 private:
  static constexpr std::size_t kInitialSlots = 1024;

  struct Slot {
    std::uint32_t id = 0;
    bool used = false;
    Value value{};
  };

  // False when `id` cannot be there: the map is empty, or no id as large was
  // ever added (correlation ids count up, so most lookups of an id not seen
  // yet end here, before a cache miss on its slot).
  bool MayHold(std::uint32_t id) const { return size() > 0 && id <= largest_id_; }

  // Moves every entry into a ring of `slots` (a power of two).
  void Resize(std::size_t slots) {
    std::vector<Slot> old = std::move(ring_);
    ring_.assign(slots, Slot{});
    mask_ = slots - 1;
    size_ = 0;
    for (Slot& slot : old) {
      if (!slot.used) continue;
      bool added = false;
      FindOrAdd(slot.id, &added) = std::move(slot.value);
    }
  }

  std::vector<Slot> ring_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;  // entries in ring_
  FlatIdMap<Value> overflow_;
  std::uint32_t largest_id_ = 0;  // no id above it was added since the last Clear
};

}  // namespace smprof::analysis

// FlatIdMap: a hash map from 32-bit ids (CUPTI correlation ids) to values in
// one flat array (open addressing, linear probing, deletion by backward
// shift), for the joins the summary does once per GPU row and API call:
// unlike std::unordered_map it allocates only when it grows, not per entry.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace smprof::analysis {

template <typename Value>
class FlatIdMap {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The value of `id`, or nullptr.
  Value* Find(std::uint32_t id) {
    if (!MayHold(id)) return nullptr;
    for (std::size_t i = Home(id);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.id == id) return &slot.value;
    }
  }

  // The value of `id`, value-initialized if it was absent; `added` says which.
  Value& FindOrAdd(std::uint32_t id, bool* added) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    largest_id_ = std::max(largest_id_, id);
    std::size_t i = Home(id);
    for (; slots_[i].used; i = (i + 1) & mask_) {
      if (slots_[i].id == id) {
        *added = false;
        return slots_[i].value;
      }
    }
    slots_[i].used = true;
    slots_[i].id = id;
    slots_[i].value = Value{};
    ++size_;
    *added = true;
    return slots_[i].value;
  }

  // Removes `id`; false if it was absent.
  bool Erase(std::uint32_t id) { return Take(id, nullptr); }

  // Removes `id`, moving its value to `*value` (when not null); false if it was absent.
  bool Take(std::uint32_t id, Value* value) {
    if (!MayHold(id)) return false;
    std::size_t hole = Home(id);
    for (;; hole = (hole + 1) & mask_) {
      if (!slots_[hole].used) return false;
      if (slots_[hole].id == id) break;
    }
    if (value != nullptr) *value = std::move(slots_[hole].value);
    // Backward shift: move later entries of the probe run into the hole when
    // their home does not lie (cyclically) in (hole, their slot].
    for (std::size_t next = (hole + 1) & mask_; slots_[next].used; next = (next + 1) & mask_) {
      const std::size_t home = Home(slots_[next].id);
      const bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
      if (stays) continue;
      slots_[hole] = std::move(slots_[next]);
      hole = next;
    }
    slots_[hole].used = false;
    slots_[hole].value = Value{};
    --size_;
    return true;
  }

  // Empties the map, keeping its memory.
  void Clear() {
    largest_id_ = 0;
    if (size_ == 0) return;
    for (Slot& slot : slots_) slot = Slot{};
    size_ = 0;
  }

 private:
  struct Slot {
    std::uint32_t id = 0;
    bool used = false;
    Value value{};
  };

  // False when `id` cannot be there: the map is empty, or no id as large was
  // ever added (correlation ids count up, so most lookups of an id not seen
  // yet end here, before a cache miss on its slot).
  bool MayHold(std::uint32_t id) const { return size_ > 0 && id <= largest_id_; }

  std::size_t Home(std::uint32_t id) const {
    // Fibonacci hashing: consecutive ids (correlation ids count up) spread out.
    return static_cast<std::size_t>((static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::size_t capacity = old.empty() ? 16 : old.size() * 2;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (Slot& slot : old) {
      if (!slot.used) continue;
      bool added = false;
      FindOrAdd(slot.id, &added) = std::move(slot.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  std::uint32_t largest_id_ = 0;  // no id above it was added since the last Clear
  int shift_ = 64;
};

}  // namespace smprof::analysis

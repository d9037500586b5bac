// Fifo: a queue in one contiguous vector, for the summary's per-row queues
// (rows waiting in a window, ids in arrival order). Items are pushed at the
// back and popped at the front by moving an index: no chunk arithmetic on
// each access and no allocation once the vector has grown, unlike
// std::deque. The popped prefix is dropped (one move of the rest) once it is
// at least half the vector, so a queue of n items holds at most about 2n.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace smprof::analysis {

template <typename T>
class Fifo {
 public:
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;

  bool empty() const { return first_ == items_.size(); }
  std::size_t size() const { return items_.size() - first_; }

  T& operator[](std::size_t i) { return items_[first_ + i]; }
  const T& operator[](std::size_t i) const { return items_[first_ + i]; }
  T& front() { return items_[first_]; }
  const T& front() const { return items_[first_]; }
  T& back() { return items_.back(); }
  const T& back() const { return items_.back(); }
  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(first_); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(first_); }
  const_iterator end() const { return items_.end(); }

  void push_back(const T& item) { items_.push_back(item); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return items_.emplace_back(std::forward<Args>(args)...);
  }

  void pop_front() { pop_front(1); }
  // Pops the first `n` items (n <= size()).
  void pop_front(std::size_t n) {
    first_ += n;
    if (first_ == items_.size()) {
      clear();
    } else if (first_ >= kCompactAfter && 2 * first_ >= items_.size()) {
      items_.erase(items_.begin(), begin());
      first_ = 0;
    }
  }

  // Keeps the first `n` items (n <= size()).
  void resize(std::size_t n) { items_.resize(first_ + n); }

  void clear() {
    items_.clear();
    first_ = 0;
  }

 private:
  static constexpr std::size_t kCompactAfter = 1024;  // popped items kept before their memory is reused

  std::vector<T> items_;
  std::size_t first_ = 0;  // items_[0, first_) are popped
};

}  // namespace smprof::analysis

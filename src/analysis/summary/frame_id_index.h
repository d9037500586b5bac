// FrameIdIndex: the position of each correlation id among one frame's rows,
// so that a frame's kernels find their launch calls in the same frame without
// the calls entering the bounded joins (correlation_join.h) first. CUPTI
// counts ids up per process (every API call takes one, so a frame's
// launches are a few ids apart): a direct table over [smallest, largest]
// when that span is at most 16 times the rows (64 bytes per row at most,
// walked about in order), else a FlatIdMap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/base/flat_id_map.h"

namespace smprof::analysis {

class FrameIdIndex {
 public:
  static constexpr std::int32_t kAbsent = -1;

  // Indexes id_of(i) -> i for i in [0, rows); id 0 (no correlation) is left
  // out, and an id given twice keeps its last position.
  template <typename IdOf>
  void Build(std::size_t rows, IdOf id_of) {
    std::uint32_t smallest = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t largest = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      const std::uint32_t id = id_of(i);
      if (id == 0) continue;
      smallest = std::min(smallest, id);
      largest = std::max(largest, id);
    }
    table_.clear();
    sparse_.Clear();
    first_ = smallest;
    const std::uint64_t span = largest >= smallest ? std::uint64_t{largest} - smallest + 1 : 0;
    dense_ = span <= 16 * std::uint64_t{rows} + 1024;
    if (dense_) table_.assign(span, kAbsent);
    for (std::size_t i = 0; i < rows; ++i) {
      const std::uint32_t id = id_of(i);
      if (id == 0) continue;
      const auto position = static_cast<std::int32_t>(i);
      if (dense_) {
        table_[id - first_] = position;
      } else {
        bool added = false;
        sparse_.FindOrAdd(id, &added) = position;
      }
    }
  }

  // The position of `id`, or kAbsent.
  std::int32_t Find(std::uint32_t id) {
    if (dense_) {
      const std::uint32_t offset = id - first_;  // wraps above the table for ids below first_
      return offset < table_.size() ? table_[offset] : kAbsent;
    }
    const std::int32_t* position = sparse_.Find(id);
    return position != nullptr ? *position : kAbsent;
  }

  // Forgets every id, keeping the memory.
  void Clear() {
    Build(0, [](std::size_t) { return std::uint32_t{0}; });
  }

 private:
  bool dense_ = true;
  std::uint32_t first_ = 0;
  std::vector<std::int32_t> table_;  // dense: position by id - first_
  FlatIdMap<std::int32_t> sparse_;
};

}  // namespace smprof::analysis

// Reorder: puts the per-stream lists of the summary's aggregators in the
// order of their process streams after partial summaries were merged
// (docs/ANALYSIS.md, "Partial summaries"): every aggregator keeps one entry
// per stream, in the same order, so one permutation sorts them all.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace smprof::analysis {

// `items` becomes {items[order[0]], items[order[1]], ...}; `order` is a
// permutation of the indexes of `items`.
template <typename Container>
void Reorder(Container& items, const std::vector<std::size_t>& order) {
  if (order.size() != items.size()) throw std::logic_error("Reorder: not one index per stream");
  Container sorted;
  for (const std::size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

}  // namespace smprof::analysis

// The median of a benchmark's repetitions (the upper middle one of an even
// count), which the C++ benchmarks report.
#pragma once

#include <algorithm>
#include <vector>

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

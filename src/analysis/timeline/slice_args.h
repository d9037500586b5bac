// The arguments a timeline slice carries (kernel launch geometry, bytes,
// precision, correlation id, ...), as key/value pairs every export format
// writes the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/timeline/timeline_walker.h"

namespace smprof::analysis {

struct SliceArg {
  std::string_view key;  // a string literal
  bool is_string = false;
  std::int64_t int_value = 0;
  std::string string_value;
};

// Appends `slice`'s arguments to `args` (nothing for annotations; a
// collective's group, sequence, group size and rank, bytes, dtype, async_op,
// and Kineto's names for op, group, size and elements).
void CollectSliceArgs(const TimelineSlice& slice, std::vector<SliceArg>* args);

// "bf16", "fp32", ... "unknown" (trace::Precision).
std::string_view PrecisionLabel(std::uint32_t precision);
// "compute", "communication", "memory", "" (trace::KernelClass).
std::string_view KernelClassLabel(std::uint32_t kernel_class);
// "HtoD", "DtoH", "PtoP", ... (trace::CopyKind).
std::string_view CopyKindLabel(std::uint32_t copy_kind);

}  // namespace smprof::analysis

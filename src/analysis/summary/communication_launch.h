// CommunicationLaunch: an NCCL kernel joined to the host call that launched
// it (GpuMetrics makes the join by correlation id; CollectiveMetrics links
// the launch to the collective call on the same thread that contains it).
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/gpu_codec.h"

namespace smprof::analysis {

struct CommunicationLaunch {
  std::uint32_t tid = 0;            // the launching thread (CUPTI's system thread id, as the collective's)
  std::int64_t call_start_ns = 0;   // the launch call's start on the process's clock
  std::uint32_t device = 0;         // the kernel's CUDA device
  std::int64_t kernel_wall_ns = 0;  // the kernel's start on the job's wall clock
  std::int64_t kernel_dur_ns = 0;
};

// An NCCL kernel: kernel class communication, or a name starting "nccl" (traces written before the class).
inline bool IsCommunicationKernel(const internal::GpuActivityRow& row) {
  return row.kind == trace::GPU_KIND_KERNEL &&
         (row.kernel_class == trace::KERNEL_CLASS_COMMUNICATION || std::string_view(row.name).substr(0, 4) == "nccl");
}

}  // namespace smprof::analysis

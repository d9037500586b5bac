#pragma once

// The CUPTI activity record structs whose versions differ between the headers
// the collector builds against: CUDA 13's (CUPTI_API_VERSION 130000 on) or
// CUDA 12.9 Update 1's (CUPTI_API_VERSION 28, the PyPI cu12 wheels; older
// headers are refused by cmake/smprof_cuda_headers.cmake). The other record
// structs the decoder reads have the same version in both. Every field read
// sits at the same offset in both versions (tests/cpp/collectors/cuda/activity_decoder_test.cc
// pins it), so the decoding is one code path whichever headers built it.

#include <cupti_activity.h>
#include <cupti_version.h>

namespace smprof::internal {

#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MarkerDataRecord = CUpti_ActivityMarkerData2;
using MemoryPoolRecord = CUpti_ActivityMemoryPool3;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MarkerDataRecord = CUpti_ActivityMarkerData;
using MemoryPoolRecord = CUpti_ActivityMemoryPool2;
#endif

}  // namespace smprof::internal

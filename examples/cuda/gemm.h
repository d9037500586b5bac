// cuBLAS GEMMs of known precision under the annotations "gemm_fp32" and
// "gemm_fp16": `calls` of each on `stream`, then a synchronization. False
// (and why) when the example was built without cuBLAS.
#pragma once

#include <cuda_runtime.h>

#include <string>

bool RunGemms(cudaStream_t stream, int calls, std::string* problem);

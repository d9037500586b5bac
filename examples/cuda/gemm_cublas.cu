#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <smprof/smprof.h>

#include "check.h"
#include "gemm.h"

#define CHECK_CUBLAS(call)                                                                      \
  do {                                                                                          \
    cublasStatus_t status = (call);                                                             \
    if (status != CUBLAS_STATUS_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, status); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

bool RunGemms(cudaStream_t stream, int calls, std::string*) {
  constexpr int n = 1024;
  cublasHandle_t cublas;
  CHECK_CUBLAS(cublasCreate(&cublas));
  CHECK_CUBLAS(cublasSetStream(cublas, stream));
  float *fa, *fb, *fc;
  __half *ha, *hb, *hc;
  CHECK_CUDA(cudaMalloc(&fa, n * n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&fb, n * n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&fc, n * n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&ha, n * n * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&hb, n * n * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&hc, n * n * sizeof(__half)));
  {
    SMPROF_ANNOTATE("gemm_fp32");
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < calls; ++i) {
      CHECK_CUBLAS(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, fa, n, fb, n, &zero, fc, n));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  {
    SMPROF_ANNOTATE("gemm_fp16");
    const __half one = __float2half(1.0f), zero = __float2half(0.0f);
    for (int i = 0; i < calls; ++i) {
      CHECK_CUBLAS(cublasHgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, ha, n, hb, n, &zero, hc, n));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  CHECK_CUBLAS(cublasDestroy(cublas));
  for (void* p : {static_cast<void*>(fa), static_cast<void*>(fb), static_cast<void*>(fc), static_cast<void*>(ha),
                  static_cast<void*>(hb), static_cast<void*>(hc)}) {
    CHECK_CUDA(cudaFree(p));
  }
  return true;
}

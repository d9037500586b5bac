// Kernel classes and precisions (docs/GPU.md) against a corpus of kernel
// names as CUPTI reports them in real training runs: cuBLAS (xmma, nvjet and
// the older architecture-named kernels), CUTLASS, NCCL, cuDNN, PyTorch's
// elementwise/reduce/copy kernels, FlashAttention and Triton. Unknown stays
// unknown.
#include "collectors/cuda/kernel_names.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/name_table.h"

namespace smprof::internal {
namespace {

struct Case {
  const char* name;  // demangled, as the decoder classifies it
  KernelClass kernel_class;
  Precision precision;
};

constexpr KernelClass kCompute = KernelClass::kCompute;
constexpr KernelClass kComm = KernelClass::kCommunication;
constexpr KernelClass kMemory = KernelClass::kMemory;

const Case kCorpus[] = {
    // cuBLAS xmma
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
     "cublas",
     kCompute, Precision::kBf16},
    {"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x32_stage3_warpsize2x4x1_tensor16x8x16_kernel", kCompute,
     Precision::kFp16},
    {"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel", kCompute,
     Precision::kTf32},
    {"sm80_xmma_gemm_i8i8_i8i32_f32_tn_n_tilesize128x128x64_stage3_warpsize2x2x1_tensor16x8x32_kernel", kCompute,
     Precision::kInt8},
    {"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_cluster1x2x1_execute_segment_k_off_kernel__5x_"
     "cublas",
     kCompute, Precision::kFp8},
    {"sm90_xmma_gemm_e5m2e4m3_bf16f32_f32_tn_n_tilesize64x128x128_warpgroupsize1x1x1_kernel", kCompute,
     Precision::kFp8},
    {"sm80_xmma_gemm_f64f64_f64f64_f64_nt_n_tilesize64x64x16_stage4_warpsize2x2x1_tensor8x8x4_kernel", kCompute,
     Precision::kFp64},
    // cuBLAS nvjet (Hopper/Blackwell)
    {"nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", kCompute, Precision::kFp16},
    {"nvjet_tst_256x128_64x4_1x2_h_bz_coopA_TNT", kCompute, Precision::kBf16},
    {"nvjet_sss_128x64_32x8_1x2_h_bz_TNN", kCompute, Precision::kFp32},
    {"nvjet_qqtst_128x128_128x6_1x2_h_bz_coopA_TNT", kCompute, Precision::kFp8},
    // cuBLAS by architecture, CUTLASS
    {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", kCompute, Precision::kFp16},
    {"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn", kCompute, Precision::kBf16},
    {"ampere_s16816gemm_128x128_ldg8_stages_32x5_tn", kCompute, Precision::kFp16},
    {"volta_h884gemm_128x128_ldg8_nn", kCompute, Precision::kFp16},
    {"maxwell_hgemm_256x128_nt", kCompute, Precision::kFp16},
    {"volta_sgemm_128x64_nn", kCompute, Precision::kFp32},
    {"ampere_sgemm_64x32_sliced1x4_tn", kCompute, Precision::kFp32},
    {"volta_dgemm_64x64_nn", kCompute, Precision::kFp64},
    {"cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8", kCompute, Precision::kFp16},
    {"cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8", kCompute, Precision::kBf16},
    {"cutlass_80_tensorop_i16832gemm_s8_128x128_64x3_tn_align16", kCompute, Precision::kInt8},
    {"cutlass_80_tensorop_d884gemm_64x32_16x4_nn_align1", kCompute, Precision::kFp64},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
     "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, "
     "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecialized>, "
     "cute::tuple<cute::C<128>, cute::C<128>, cute::C<64> >, cutlass::bfloat16_t, cute::tuple<long, cute::C<1>, "
     "long>, cutlass::bfloat16_t, cute::tuple<long, cute::C<1>, long>, cute::TiledMMA<cute::MMA_Atom<cute::SM90_"
     "64x128x16_F32BF16BF16_SS<(cute::GMMA::Major)0, (cute::GMMA::Major)0> > >, cute::SM90_TMA_LOAD, "
     "cute::Copy_Atom<cute::SM75_U32x4_LDSM_N, cutlass::bfloat16_t>, float> > >(cutlass::gemm::kernel::"
     "GemmUniversal<>::Params)",
     kCompute, Precision::kBf16},
    // NCCL, three generations of names
    {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kComm, Precision::kBf16},
    {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kComm, Precision::kUnknown},
    {"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kComm, Precision::kFp32},
    {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", kComm, Precision::kUnknown},
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", kComm, Precision::kFp32},
    {"ncclKernel_AllReduce_RING_LL_Sum_half(ncclDevComm*, unsigned long, ncclWork*)", kComm, Precision::kFp16},
    {"ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_bf16(ncclSymkDevWorkArgs4K)", kComm, Precision::kBf16},
    // cuDNN
    {"sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_"
     "tensor16x8x16_kernel",
     kCompute, Precision::kBf16},
    {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int=512, bool=1, int=2>(cudnnTensorStruct, float const*, "
     "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, "
     "float)",
     kCompute, Precision::kFp32},
    {"void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>(cudnn::ops::"
     "nchw2nhwc_params_t<float>, __half const*, __half*)",
     kCompute, Precision::kFp16},
    {"cudnn_infer_ampere_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", kCompute, Precision::kFp32},
    // PyTorch
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> "
     ">(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
     kCompute, Precision::kFp32},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
     "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::"
     "BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
     "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::"
     "BFloat16)#1}, std::array<char*, 2ul>)",
     kCompute, Precision::kBf16},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> "
     ">(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
     kMemory, Precision::kFp32},
    {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_"
     "cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
     "const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
     "::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}"
     ">(int, at::native::gpu_kernel_impl_nocast<>)",
     kMemory, Precision::kFp32},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, "
     "unsigned int, 3, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous "
     "namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, "
     "at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
     kMemory, Precision::kUnknown},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, "
     "at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, "
     "float)#1}>, unsigned int, c10::Half, 4, 4> >(at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::"
     "Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, "
     "float)#1}>, unsigned int, c10::Half, 4, 4>)",
     kCompute, Precision::kFp16},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
     "namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
     kCompute, Precision::kFp32},
    {"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<"
     "at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, "
     "char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
     "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1}>(long, "
     "at::native::gpu_index_kernel<>::{lambda(int)#1})",
     kCompute, Precision::kUnknown},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::BitwiseAndFunctor<signed char>, "
     "std::array<char*, 3ul> >(int, at::native::BitwiseAndFunctor<signed char>, std::array<char*, 3ul>)",
     kCompute, Precision::kInt8},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<unsigned char>, std::array<char*, "
     "3ul> >(int, at::native::CUDAFunctor_add<unsigned char>, std::array<char*, 3ul>)",
     kCompute, Precision::kUnknown},
    {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
     "{lambda()#3}::operator()() const::{lambda()#4}::operator()() const::{lambda(double)#1}, std::array<char*, 2ul>, "
     "4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
     "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)",
     kMemory, Precision::kFp64},
    // FlashAttention
    {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, "
     "Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, false, false, false, true, true, false, "
     "false>(flash::Flash_fwd_params)",
     kCompute, Precision::kFp16},
    {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, "
     "64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, "
     "cutlass::bfloat16_t> >, false, false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)",
     kCompute, Precision::kBf16},
    // Triton (torch.compile): the name says what was fused, not the types
    {"triton_poi_fused_add_mul_0", kCompute, Precision::kUnknown},
    {"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_1", kCompute, Precision::kUnknown},
    {"triton_per_fused__softmax_2", kCompute, Precision::kUnknown},
    {"triton_tem_fused_mm_3", kCompute, Precision::kUnknown},
    {"_attn_fwd", kCompute, Precision::kUnknown},
    // low-precision GEMMs on Blackwell
    {"sm100_xmma_gemm_e2m1e2m1_bf16f32_f32_tn_n_tilesize128x128x256_cluster2x1x1_kernel", kCompute, Precision::kFp4},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<int4b_t, int4_config> >(Params)", kCompute,
     Precision::kInt4},
    // copy kernels named as such
    {"memcpy32_post", kMemory, Precision::kUnknown},
    {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, long, unsigned int>::Policy800, false, "
     "long, long, unsigned int, int, cub::detail::identity_decomposer_t>(int*, int*, long*, long*, long*, long*, int, "
     "int, int, cub::detail::identity_decomposer_t)",
     kCompute, Precision::kUnknown},
};

TEST(KernelNames, CorpusGetsItsDocumentedClassAndPrecision) {
  for (const Case& c : kCorpus) {
    EXPECT_EQ(ClassifyKernel(c.name), c.kernel_class) << c.name;
    EXPECT_EQ(KernelPrecision(c.name), c.precision)
        << c.name << "\n  got " << PrecisionName(KernelPrecision(c.name)) << ", want " << PrecisionName(c.precision);
  }
}

TEST(KernelNames, MangledNamesAreDemangledOthersKeptAsTheyAre) {
  EXPECT_EQ(
      DemangleKernelName("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEv"
                         "iT0_T1_"),
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> "
      ">(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)");
  EXPECT_EQ(DemangleKernelName("_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL19ncclDevKernelArgs4K"),
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs4K)");
  EXPECT_EQ(DemangleKernelName("triton_poi_fused_add_mul_0"), "triton_poi_fused_add_mul_0");
  EXPECT_EQ(DemangleKernelName("_Z_not_really_mangled"), "_Z_not_really_mangled");
  EXPECT_EQ(DemangleKernelName(""), "");
  EXPECT_EQ(DemangleKernelName(nullptr), "");
}

TEST(KernelNames, DescribeInternsTheDemangledNameAndClassifiesIt) {
  const KernelInfo fill = DescribeKernel(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_");
  EXPECT_EQ(NameTable::Get().Lookup(fill.name).rfind("void at::native::vectorized_elementwise_kernel<4", 0), 0u);
  EXPECT_EQ(fill.kernel_class, KernelClass::kMemory);
  EXPECT_EQ(fill.precision, Precision::kFp32);
  const KernelInfo nccl = DescribeKernel("_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL19ncclDevKernelArgs4K");
  EXPECT_EQ(nccl.kernel_class, KernelClass::kCommunication);
  EXPECT_EQ(nccl.precision, Precision::kBf16);
}

TEST(KernelNames, EnumNamesMatchTheTraceSchema) {
  EXPECT_STREQ(KernelClassName(KernelClass::kCommunication), "communication");
  EXPECT_STREQ(KernelClassName(KernelClass::kMemory), "memory");
  EXPECT_STREQ(PrecisionName(Precision::kBf16), "bf16");
  EXPECT_STREQ(PrecisionName(Precision::kUnknown), "unknown");
  EXPECT_STREQ(PrecisionName(Precision::kInt4), "int4");
}

}  // namespace
}  // namespace smprof::internal

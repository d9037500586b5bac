#include "collectors/cuda/kernel_names.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "runtime/name_table.h"

namespace smprof::internal {

namespace {

// A pattern looked for in the demangled name. With `word_start`, the
// character before it must not be a letter ("int8" but not "uint8",
// "float" but not "bfloat16", "signed char" but not "unsigned char").
struct PrecisionRule {
  const char* pattern;
  bool word_start;
  Precision precision;
};

// First match wins, so the narrower types come first: a bf16 GEMM also names
// its float accumulator, an fp16 one "f16f32", a tf32 one "f32f32_tf32".
// docs/GPU.md has this table; keep the two in step.
constexpr PrecisionRule kPrecisionRules[] = {
    {"e2m1", false, Precision::kFp4},        {"nvfp4", false, Precision::kFp4},
    {"mxfp4", false, Precision::kFp4},       {"fp4", true, Precision::kFp4},
    {"e4m3", false, Precision::kFp8},        {"e5m2", false, Precision::kFp8},
    {"fp8", false, Precision::kFp8},         {"Float8", false, Precision::kFp8},
    {"i4i4", false, Precision::kInt4},       {"int4", true, Precision::kInt4},
    {"i8i8", false, Precision::kInt8},       {"imma", false, Precision::kInt8},
    {"i16832gemm", false, Precision::kInt8}, {"int8", true, Precision::kInt8},
    {"i8", true, Precision::kInt8},          {"signed char", true, Precision::kInt8},
    {"bf16", false, Precision::kBf16},       {"BFloat16", false, Precision::kBf16},
    {"bfloat16", false, Precision::kBf16},   {"tf32", false, Precision::kTf32},
    {"f16", false, Precision::kFp16},        {"Half", true, Precision::kFp16},
    {"half", true, Precision::kFp16},        {"h884gemm", false, Precision::kFp16},
    {"h1688gemm", false, Precision::kFp16},  {"h16816gemm", false, Precision::kFp16},
    {"s16816gemm", false, Precision::kFp16}, {"hgemm", false, Precision::kFp16},
    {"hcudnn", false, Precision::kFp16},     {"dgemm", false, Precision::kFp64},
    {"d884gemm", false, Precision::kFp64},   {"dmma", false, Precision::kFp64},
    {"double", true, Precision::kFp64},      {"f64", true, Precision::kFp64},
    {"sgemm", false, Precision::kFp32},      {"scudnn", false, Precision::kFp32},
    {"f32", true, Precision::kFp32},         {"float", true, Precision::kFp32},
};

// NCCL's kernels by generation: ncclKernel_ (before 2.19), ncclDevKernel_,
// ncclSymkDevKernel_ (symmetric kernels, 2.27+).
constexpr const char* kCommunicationPrefixes[] = {"ncclDevKernel_", "ncclKernel_", "ncclSymkDevKernel_"};

// Kernels that only move or fill memory: PyTorch's copy and fill kernels
// (named inside the elementwise kernel's template arguments), concatenation
// copies, and kernels named for memcpy/memset. Matched anywhere in the name.
constexpr const char* kMemoryPatterns[] = {"copy_kernel", "CopyKernel", "BatchedCopy", "FillFunctor", "fill_kernel",
                                           "memcpy",      "memset",     "Memcpy",      "Memset"};

bool StartsWith(std::string_view name, std::string_view prefix) {
  return name.size() >= prefix.size() && name.compare(0, prefix.size(), prefix) == 0;
}

bool Contains(std::string_view name, std::string_view pattern, bool word_start) {
  for (std::size_t at = name.find(pattern); at != std::string_view::npos; at = name.find(pattern, at + 1)) {
    if (!word_start || at == 0 || !std::isalpha(static_cast<unsigned char>(name[at - 1]))) return true;
  }
  return false;
}

// cuBLAS's nvjet kernels name their types in the first field after "nvjet_":
// "qq..." takes fp8 inputs; otherwise its first letter is the input type
// (h fp16, t bf16, s fp32, d fp64), e.g. nvjet_hsh_, nvjet_tst_, nvjet_sss_.
Precision NvjetPrecision(std::string_view name) {
  constexpr std::string_view kPrefix = "nvjet_";
  const std::size_t at = name.find(kPrefix);
  if (at == std::string_view::npos || at + kPrefix.size() >= name.size()) return Precision::kUnknown;
  const std::string_view types = name.substr(at + kPrefix.size());
  if (StartsWith(types, "qq")) return Precision::kFp8;
  switch (types[0]) {
    case 'h':
      return Precision::kFp16;
    case 't':
      return Precision::kBf16;
    case 's':
      return Precision::kFp32;
    case 'd':
      return Precision::kFp64;
    default:
      return Precision::kUnknown;
  }
}

}  // namespace

std::string DemangleKernelName(const char* name) {
  if (name == nullptr) return std::string();
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) {
    std::free(demangled);
    return name;
  }
  std::string result(demangled);
  std::free(demangled);
  return result;
}

KernelClass ClassifyKernel(std::string_view name) {
  // Demangled C++ names start with the return type ("void ncclDevKernel_...").
  std::string_view function = name;
  if (StartsWith(function, "void ")) function.remove_prefix(5);
  for (const char* prefix : kCommunicationPrefixes) {
    if (StartsWith(function, prefix)) return KernelClass::kCommunication;
  }
  for (const char* pattern : kMemoryPatterns) {
    if (Contains(name, pattern, false)) return KernelClass::kMemory;
  }
  return KernelClass::kCompute;
}

Precision KernelPrecision(std::string_view name) {
  if (const Precision nvjet = NvjetPrecision(name); nvjet != Precision::kUnknown) return nvjet;
  for (const PrecisionRule& rule : kPrecisionRules) {
    if (Contains(name, rule.pattern, rule.word_start)) return rule.precision;
  }
  return Precision::kUnknown;
}

KernelInfo DescribeKernel(const char* mangled_name) {
  const std::string name = DemangleKernelName(mangled_name);
  KernelInfo info;
  info.name = NameTable::Get().Intern(name);
  info.kernel_class = ClassifyKernel(name);
  info.precision = KernelPrecision(name);
  return info;
}

const char* KernelClassName(KernelClass kernel_class) {
  switch (kernel_class) {
    case KernelClass::kCompute:
      return "compute";
    case KernelClass::kCommunication:
      return "communication";
    case KernelClass::kMemory:
      return "memory";
    default:
      return "unspecified";
  }
}

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp64:
      return "fp64";
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kInt8:
      return "int8";
    case Precision::kFp4:
      return "fp4";
    case Precision::kInt4:
      return "int4";
    default:
      return "unknown";
  }
}

}  // namespace smprof::internal

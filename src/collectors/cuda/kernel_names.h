// What a kernel's name says about it: the demangled name, its class
// (compute / communication / memory) and its arithmetic precision.
// docs/GPU.md ("Kernel classes and precision") lists the rules as tables;
// kernel_names.cc implements exactly those rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "smprof/annotate.h"

namespace smprof::internal {

// trace::KernelClass and trace::Precision values (proto/smprof/trace.proto),
// without pulling the generated protobuf header into the collector.
enum class KernelClass : std::uint32_t { kUnspecified = 0, kCompute = 1, kCommunication = 2, kMemory = 3 };
enum class Precision : std::uint32_t {
  kUnknown = 0,
  kFp64 = 1,
  kFp32 = 2,
  kTf32 = 3,
  kFp16 = 4,
  kBf16 = 5,
  kFp8 = 6,
  kInt8 = 7,
  kFp4 = 8,
  kInt4 = 9,
};

struct KernelInfo {
  NameId name = 0;  // the demangled name, interned
  KernelClass kernel_class = KernelClass::kCompute;
  Precision precision = Precision::kUnknown;
};

// The demangled form of an Itanium-mangled name ("_Z..."); other names
// (extern "C" kernels, Triton's) come back unchanged.
std::string DemangleKernelName(const char* name);

// Both take the demangled name.
KernelClass ClassifyKernel(std::string_view name);
Precision KernelPrecision(std::string_view name);

// Demangles, interns (NameTable) and classifies.
KernelInfo DescribeKernel(const char* mangled_name);

const char* KernelClassName(KernelClass kernel_class);  // "compute", ...
const char* PrecisionName(Precision precision);         // "bf16", ...

}  // namespace smprof::internal

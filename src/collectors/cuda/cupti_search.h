// Which libcupti to load: the one that matches the CUDA runtime the process
// runs, from the places CUDA is installed by the toolkit, pip wheels and conda.
//
// CUPTI must come from the same CUDA major as the runtime (libcudart) that
// launches the work: a CUDA 13 CUPTI in a process whose PyTorch runs CUDA 12
// sees nothing or fails. So when a libcudart.so.N is already loaded, only
// libcupti.so.N is accepted, searched first next to that runtime; a CUPTI of
// another major is refused with its file named. Without a loaded runtime
// (smprof started before `import torch`), the CUDA wheels beside smprof's own
// Python package come before the system's ldconfig and toolkit, since that
// is the CUDA the job's framework will load.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/resolved_config.h"

namespace smprof::internal {

// The sonames smprof accepts, newest first.
inline constexpr const char* kCuptiSonames[] = {"libcupti.so.13", "libcupti.so.12"};

// A CUDA library file of the process: its path and the major of its soname
// ("libcudart.so.12" -> 12).
struct CudaLibraryFile {
  std::string path;
  int major = 0;
};

// The first loaded object whose file name is `stem`.so.N (e.g. "libcudart"),
// from `loaded_paths` (LoadedObjectPaths()).
std::optional<CudaLibraryFile> FindLoadedLibrary(const std::vector<std::string>& loaded_paths, const std::string& stem);

// The path of every object mapped into this process (dl_iterate_phdr).
std::vector<std::string> LoadedObjectPaths();

// What the search depends on, gathered by CuptiSearchInputsOfThisProcess().
struct CuptiSearchInputs {
  std::vector<std::string> loaded_paths;
  std::string smprof_path;  // libsmprof's own file: the site-packages it may live in
  EnvLookup env;
};
CuptiSearchInputs CuptiSearchInputsOfThisProcess();

// Where to look, in order; `path` is absolute, or a bare soname that the
// dynamic loader resolves (LD_LIBRARY_PATH, ldconfig). Only libcupti.so.N
// when the process has libcudart.so.N:
//   next to that libcudart: its directory, the pip CUDA 12 layout's
//     nvidia/cuda_cupti/lib beside its nvidia/cuda_runtime/lib, and the
//     toolkit's extras/CUPTI/lib64 beside its lib64;
//   the pip layouts in smprof's site-packages: nvidia/cu13/lib (CUDA 13
//     wheels), nvidia/cuda_cupti/lib (CUDA 12 wheels);
//   $CONDA_PREFIX/lib;
//   the bare sonames;
//   $CUDA_HOME/extras/CUPTI/lib64, $CUDA_HOME/lib64, /usr/local/cuda/lib64,
//     /usr/local/cuda/extras/CUPTI/lib64.
// In each place the newer soname first.
std::vector<CudaLibraryFile> CuptiCandidates(const CuptiSearchInputs& inputs);

// The opened libcupti (a dlopen handle, never closed: see cupti_library.h),
// or a null handle and the reason: what was tried, or the mismatched file.
struct OpenedCupti {
  void* handle = nullptr;
  std::string error;
};
OpenedCupti OpenCupti(const CuptiSearchInputs& inputs);

}  // namespace smprof::internal

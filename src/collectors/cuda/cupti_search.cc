#include "collectors/cuda/cupti_search.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace smprof::internal {

namespace {

// "…/libcudart.so.12" -> 12 for stem "libcudart"; 0 when the name differs.
int SonameMajor(const std::string& path, const std::string& stem) {
  const std::string name = std::filesystem::path(path).filename().string();
  const std::string prefix = stem + ".so.";
  if (name.compare(0, prefix.size(), prefix) != 0) return 0;
  const std::string rest = name.substr(prefix.size());
  const std::size_t digits = rest.find_first_not_of("0123456789");
  if (digits == 0 || rest.empty()) return 0;
  return std::atoi(rest.substr(0, digits).c_str());
}

std::string Directory(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

std::string Under(const std::string& directory, const std::string& relative) {
  return (std::filesystem::path(directory) / relative).lexically_normal().string();
}

std::string Env(const EnvLookup& env, const char* name) {
  if (!env) return "";
  auto value = env(name);
  return value ? *value : "";
}

// The places of the search, in order; "" stands for the bare sonames.
std::vector<std::string> SearchPlaces(const CuptiSearchInputs& inputs, const std::optional<CudaLibraryFile>& runtime) {
  std::vector<std::string> places;
  if (runtime) {
    const std::string directory = Directory(runtime->path);
    places.push_back(directory);
    places.push_back(Under(directory, "../../cuda_cupti/lib"));
    places.push_back(Under(directory, "../extras/CUPTI/lib64"));
  }
  if (!inputs.smprof_path.empty()) {
    // site-packages/smppy/libsmprof.so -> site-packages
    const std::string site_packages = Directory(Directory(inputs.smprof_path));
    places.push_back(Under(site_packages, "nvidia/cu13/lib"));
    places.push_back(Under(site_packages, "nvidia/cuda_cupti/lib"));
  }
  if (const std::string conda = Env(inputs.env, "CONDA_PREFIX"); !conda.empty()) places.push_back(Under(conda, "lib"));
  places.emplace_back("");
  if (const std::string cuda_home = Env(inputs.env, "CUDA_HOME"); !cuda_home.empty()) {
    places.push_back(Under(cuda_home, "extras/CUPTI/lib64"));
    places.push_back(Under(cuda_home, "lib64"));
  }
  places.emplace_back("/usr/local/cuda/lib64");
  places.emplace_back("/usr/local/cuda/extras/CUPTI/lib64");
  std::vector<std::string> unique;
  for (const std::string& place : places) {
    if (std::find(unique.begin(), unique.end(), place) == unique.end()) unique.push_back(place);
  }
  return unique;
}

std::string Joined(const std::vector<CudaLibraryFile>& files) {
  std::string text;
  for (const CudaLibraryFile& file : files) text += (text.empty() ? "" : ", ") + file.path;
  return text;
}

std::string InstallHint(int major) {
  const std::string wheel = major == 12 ? "nvidia-cuda-cupti-cu12" : "nvidia-cuda-cupti";
  return "install the CUDA " + std::to_string(major) + " toolkit's CUPTI or the " + wheel +
         " package, or add its directory to LD_LIBRARY_PATH";
}

}  // namespace

std::optional<CudaLibraryFile> FindLoadedLibrary(const std::vector<std::string>& loaded_paths,
                                                 const std::string& stem) {
  for (const std::string& path : loaded_paths) {
    if (const int major = SonameMajor(path, stem); major > 0) return CudaLibraryFile{path, major};
  }
  return std::nullopt;
}

std::vector<std::string> LoadedObjectPaths() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  return paths;
}

CuptiSearchInputs CuptiSearchInputsOfThisProcess() {
  CuptiSearchInputs inputs;
  inputs.loaded_paths = LoadedObjectPaths();
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&CuptiSearchInputsOfThisProcess), &info) != 0 && info.dli_fname != nullptr) {
    inputs.smprof_path = info.dli_fname;
  }
  inputs.env = ProcessEnv();
  return inputs;
}

std::vector<CudaLibraryFile> CuptiCandidates(const CuptiSearchInputs& inputs) {
  const auto runtime = FindLoadedLibrary(inputs.loaded_paths, "libcudart");
  std::vector<CudaLibraryFile> candidates;
  for (const std::string& place : SearchPlaces(inputs, runtime)) {
    for (const char* soname : kCuptiSonames) {
      const int major = SonameMajor(soname, "libcupti");
      if (runtime && runtime->major != major) continue;
      candidates.push_back({place.empty() ? soname : place + "/" + soname, major});
    }
  }
  return candidates;
}

OpenedCupti OpenCupti(const CuptiSearchInputs& inputs) {
  const auto runtime = FindLoadedLibrary(inputs.loaded_paths, "libcudart");
  const std::string runtime_text =
      runtime ? "the process's CUDA runtime is " + runtime->path + " (CUDA " + std::to_string(runtime->major) + ")"
              : "";
  // Never a second CUPTI beside one the process already has.
  if (const auto loaded = FindLoadedLibrary(inputs.loaded_paths, "libcupti")) {
    if (runtime && loaded->major != runtime->major) {
      return {nullptr, "refusing " + loaded->path + " (CUDA " + std::to_string(loaded->major) +
                           "), already loaded: " + runtime_text + ", and CUPTI must match its major"};
    }
    if (void* handle = dlopen(loaded->path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL)) return {handle, ""};
  }
  const std::vector<CudaLibraryFile> candidates = CuptiCandidates(inputs);
  for (const CudaLibraryFile& candidate : candidates) {
    if (void* handle = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL)) return {handle, ""};
  }
  if (!runtime) {
    return {nullptr, "libcupti not found (tried " + Joined(candidates) +
                         "); install the CUDA toolkit's CUPTI or the nvidia-cuda-cupti package, or add its "
                         "directory to LD_LIBRARY_PATH"};
  }
  // Name a CUPTI of another major that is there, so the mismatch is plain.
  CuptiSearchInputs any_major = inputs;
  any_major.loaded_paths.clear();
  for (const CudaLibraryFile& other : CuptiCandidates(any_major)) {
    if (other.major != runtime->major && other.path.find('/') != std::string::npos &&
        access(other.path.c_str(), F_OK) == 0) {
      return {nullptr, "refusing " + other.path + " (CUDA " + std::to_string(other.major) + "): " + runtime_text +
                           ", and CUPTI must match its major; no libcupti.so." + std::to_string(runtime->major) +
                           " found (tried " + Joined(candidates) + "); " + InstallHint(runtime->major)};
    }
  }
  return {nullptr, "libcupti.so." + std::to_string(runtime->major) + " not found for " + runtime_text + " (tried " +
                       Joined(candidates) + "); " + InstallHint(runtime->major)};
}

}  // namespace smprof::internal

// Which libcupti the collector loads: the major of the CUDA runtime the
// process has, next to that runtime first; the pip layouts of smprof's own
// site-packages before the system; another major refused with its file named.
// Directories are built in a temp dir from a tiny shared object
// (fake_cuda_library.cc) and, where a real CUPTI matters, the toolkit's
// libcupti.so.13.
#include "collectors/cuda/cupti_search.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <filesystem>
#include <map>

#include "support/temp_dir.h"

namespace smprof::internal {
namespace {

namespace fs = std::filesystem;

EnvLookup EnvOf(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// `target` placed at `path` (directories made): a copy of the fake library,
// or a symlink to a real one.
std::string Place(const std::string& path, const std::string& target = SMPROF_FAKE_CUDA_LIBRARY) {
  fs::create_directories(fs::path(path).parent_path());
  if (target == SMPROF_FAKE_CUDA_LIBRARY) {
    fs::copy_file(target, path);
  } else {
    fs::create_symlink(target, path);
  }
  return path;
}

std::string OpenedPath(void* handle) {
  link_map* map = nullptr;
  if (handle == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return "";
  return map->l_name;
}

std::vector<std::string> Paths(const std::vector<CudaLibraryFile>& files) {
  std::vector<std::string> paths;
  for (const CudaLibraryFile& file : files) paths.push_back(file.path);
  return paths;
}

TEST(CuptiSearch, TheMajorComesFromTheSoname) {
  const std::vector<std::string> loaded = {"/lib/x86_64-linux-gnu/libc.so.6", "/opt/libcudart_static.so",
                                           "/sp/nvidia/cu13/lib/libcudart.so.13.0.96", "/cuda12/libcudart.so.12"};
  const auto runtime = FindLoadedLibrary(loaded, "libcudart");
  ASSERT_TRUE(runtime.has_value());
  EXPECT_EQ(runtime->path, "/sp/nvidia/cu13/lib/libcudart.so.13.0.96");
  EXPECT_EQ(runtime->major, 13);
  EXPECT_FALSE(FindLoadedLibrary(loaded, "libcupti").has_value());
}

TEST(CuptiSearch, WithACuda12RuntimeOnlyCupti12NextToItFirst) {
  CuptiSearchInputs inputs;
  inputs.loaded_paths = {"/venv/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"};
  inputs.smprof_path = "/venv/site-packages/smppy/libsmprof.so";
  inputs.env = EnvOf({{"CONDA_PREFIX", "/conda"}, {"CUDA_HOME", "/opt/cuda"}});
  const std::vector<std::string> expected = {
      "/venv/site-packages/nvidia/cuda_runtime/lib/libcupti.so.12",
      "/venv/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12",
      "/venv/site-packages/nvidia/cuda_runtime/extras/CUPTI/lib64/libcupti.so.12",
      "/venv/site-packages/nvidia/cu13/lib/libcupti.so.12",
      "/conda/lib/libcupti.so.12",
      "libcupti.so.12",
      "/opt/cuda/extras/CUPTI/lib64/libcupti.so.12",
      "/opt/cuda/lib64/libcupti.so.12",
      "/usr/local/cuda/lib64/libcupti.so.12",
      "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12"};
  EXPECT_EQ(Paths(CuptiCandidates(inputs)), expected);
}

TEST(CuptiSearch, WithoutARuntimeThePipLayoutsComeBeforeTheSystemNewestFirst) {
  CuptiSearchInputs inputs;
  inputs.smprof_path = "/venv/site-packages/smppy/libsmprof.so";
  inputs.env = EnvOf({});
  const std::vector<std::string> expected = {"/venv/site-packages/nvidia/cu13/lib/libcupti.so.13",
                                             "/venv/site-packages/nvidia/cu13/lib/libcupti.so.12",
                                             "/venv/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13",
                                             "/venv/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12",
                                             "libcupti.so.13",
                                             "libcupti.so.12",
                                             "/usr/local/cuda/lib64/libcupti.so.13",
                                             "/usr/local/cuda/lib64/libcupti.so.12",
                                             "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                             "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12"};
  EXPECT_EQ(Paths(CuptiCandidates(inputs)), expected);
}

// The case: a CUDA 13 CUPTI in ldconfig (this machine has one) and a
// cu12 PyTorch whose runtime is loaded: the wheel's CUPTI 12 is opened.
TEST(CuptiSearch, OpensTheCu12WheelsCuptiNextToTheLoadedCuda12Runtime) {
  testing::TempDir tmp;
  const std::string site_packages = tmp.File("site-packages");
  const std::string runtime = Place(site_packages + "/nvidia/cuda_runtime/lib/libcudart.so.12");
  const std::string cupti = Place(site_packages + "/nvidia/cuda_cupti/lib/libcupti.so.12");
  ASSERT_NE(dlopen(runtime.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
  CuptiSearchInputs inputs = CuptiSearchInputsOfThisProcess();
  ASSERT_EQ(FindLoadedLibrary(inputs.loaded_paths, "libcudart")->path, runtime) << "found by dl_iterate_phdr";
  const OpenedCupti opened = OpenCupti(inputs);
  EXPECT_EQ(OpenedPath(opened.handle), cupti) << opened.error;
}

TEST(CuptiSearch, ACuptiOfAnotherMajorIsRefusedWithItsFileNamed) {
  testing::TempDir tmp;
  CuptiSearchInputs inputs;
  inputs.loaded_paths = {Place(tmp.File("cuda12/lib/libcudart.so.12"))};
  const std::string cuda13 = Place(tmp.File("cuda13/lib64/libcupti.so.13"));
  inputs.env = EnvOf({{"CUDA_HOME", tmp.File("cuda13")}});
  const OpenedCupti opened = OpenCupti(inputs);
  EXPECT_EQ(opened.handle, nullptr) << OpenedPath(opened.handle);
  EXPECT_NE(opened.error.find("refusing " + cuda13 + " (CUDA 13)"), std::string::npos) << opened.error;
  EXPECT_NE(opened.error.find(inputs.loaded_paths[0] + " (CUDA 12)"), std::string::npos) << opened.error;
  EXPECT_NE(opened.error.find("nvidia-cuda-cupti-cu12"), std::string::npos) << opened.error;
}

TEST(CuptiSearch, AnAlreadyLoadedCuptiOfAnotherMajorIsRefused) {
  CuptiSearchInputs inputs;
  inputs.loaded_paths = {"/cuda12/lib64/libcudart.so.12", "/cuda13/lib64/libcupti.so.13"};
  const OpenedCupti opened = OpenCupti(inputs);
  EXPECT_EQ(opened.handle, nullptr);
  EXPECT_NE(opened.error.find("refusing /cuda13/lib64/libcupti.so.13 (CUDA 13), already loaded"), std::string::npos)
      << opened.error;
}

// The CUDA 13 wheels' layout, with the toolkit's real libcupti.so.13 in it.
TEST(CuptiSearch, OpensTheRealCupti13OfTheCu13WheelLayout) {
  if (std::string(SMPROF_TEST_CUPTI13).empty()) GTEST_SKIP() << "no libcupti.so.13 found at configure time";
  testing::TempDir tmp;
  const std::string lib = tmp.File("site-packages/nvidia/cu13/lib");
  const std::string runtime = Place(lib + "/libcudart.so.13");
  const std::string cupti = Place(lib + "/libcupti.so.13", SMPROF_TEST_CUPTI13);
  CuptiSearchInputs inputs;
  inputs.loaded_paths = {runtime};
  const OpenedCupti opened = OpenCupti(inputs);
  EXPECT_EQ(OpenedPath(opened.handle), cupti) << opened.error;
  EXPECT_NE(dlsym(opened.handle, "cuptiGetVersion"), nullptr);
}

}  // namespace
}  // namespace smprof::internal

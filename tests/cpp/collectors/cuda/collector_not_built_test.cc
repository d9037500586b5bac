// The CPU-only build's status at start: a reason always, a warning when the
// user asked for GPU data or an NVIDIA driver is loaded under EnableCuda=auto,
// nothing to say when EnableCuda=0.
#include "collectors/cuda/collector_not_built.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace smprof::internal {
namespace {

ResolvedConfig WithCuda(Tristate enable) {
  ResolvedConfig config;
  config.enable_cuda = enable;
  return config;
}

TEST(CollectorNotBuilt, WarnsUnderAutoOnlyWhereADriverIsLoaded) {
  const CudaCollectionStatus with_driver = CollectorNotBuiltStatus(WithCuda(Tristate::kAuto), true);
  EXPECT_FALSE(with_driver.active);
  EXPECT_TRUE(with_driver.warn);
  EXPECT_NE(with_driver.reason.find("built without the CUPTI headers"), std::string::npos) << with_driver.reason;
  EXPECT_NE(with_driver.reason.find("although an NVIDIA driver is loaded"), std::string::npos) << with_driver.reason;

  const CudaCollectionStatus without = CollectorNotBuiltStatus(WithCuda(Tristate::kAuto), false);
  EXPECT_FALSE(without.warn);
  EXPECT_EQ(without.reason.find("driver"), std::string::npos) << without.reason;
}

TEST(CollectorNotBuilt, EnableCudaOnWarnsAndOffSaysOnlyThat) {
  EXPECT_TRUE(CollectorNotBuiltStatus(WithCuda(Tristate::kOn), false).warn);
  const CudaCollectionStatus off = CollectorNotBuiltStatus(WithCuda(Tristate::kOff), true);
  EXPECT_FALSE(off.warn);
  EXPECT_EQ(off.reason, "disabled by EnableCuda");
}

TEST(CollectorNotBuilt, TheDriverIsSeenByItsVersionFile) {
  smprof::testing::TempDir dir;
  const std::string file = dir.File("version");
  EXPECT_FALSE(NvidiaDriverPresent(file.c_str()));
  std::ofstream(file) << "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05\n";
  EXPECT_TRUE(NvidiaDriverPresent(file.c_str()));
}

}  // namespace
}  // namespace smprof::internal

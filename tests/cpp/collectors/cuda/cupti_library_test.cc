// The real libcupti of this machine (CUDA 13.0, no driver): it loads, answers
// version and timestamp queries, and everything that needs the driver fails
// with 999, which the collector turns into a soft, explained failure.
#include "collectors/cuda/cupti_library.h"

#include <gtest/gtest.h>

#include <ctime>

#include "collectors/cuda/cupti_collector.h"
#include "runtime/annotation_correlation.h"

namespace smprof::internal {
namespace {

const CuptiApi& Cupti() {
  std::string error;
  const CuptiApi* api = LoadProductionCupti(&error);
  if (api == nullptr) {
    ADD_FAILURE() << error;
    static const CuptiApi empty;
    return empty;
  }
  return *api;
}

TEST(CuptiLibrary, LoadsTheNewestCuptiAndEveryFunction) {
  const CuptiApi& api = Cupti();
  ASSERT_NE(api.GetVersion, nullptr);
  EXPECT_NE(api.cupti_path.find("libcupti.so.13"), std::string::npos) << api.cupti_path;
  std::uint32_t version = 0;
  ASSERT_EQ(api.GetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, 130001u);
  std::string again_error;
  EXPECT_EQ(LoadProductionCupti(&again_error), &api) << "loaded once per process";
}

TEST(CuptiLibrary, TimestampIsRealtimeNanoseconds) {
  const CuptiApi& api = Cupti();
  ASSERT_NE(api.GetTimestamp, nullptr);
  std::uint64_t cupti_ns = 0;
  ASSERT_EQ(api.GetTimestamp(&cupti_ns), CUPTI_SUCCESS);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const auto realtime_ns = static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  EXPECT_LT(std::llabs(realtime_ns - static_cast<std::int64_t>(cupti_ns)), 60LL * 1000000000)
      << "CUPTI's default clock is CLOCK_REALTIME";
}

TEST(CuptiLibrary, ErrorsAreNamedByCupti) {
  EXPECT_EQ(CuptiErrorText(Cupti(), CUPTI_ERROR_UNKNOWN), "CUPTI_ERROR_UNKNOWN (999)");
  EXPECT_EQ(CuptiErrorText(Cupti(), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
            "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)");
}

// With a driver claimed (this machine has none), the real CUPTI fails as it
// does on a machine whose GPU is missing or broken: softly, with the reason.
TEST(CuptiLibrary, WithoutAGpuStartingFailsSoftlyWith999) {
  if (CudaDriverPresent()) GTEST_SKIP() << "a CUDA driver is installed here";
  CuptiApi api = Cupti();
  api.DriverGetVersion = [](int* version) {
    *version = 13000;
    return CUDA_SUCCESS;
  };
  GpuRecordBuffer sink(16);
  const CuptiStartResult started = StartCuptiCollection(&api, CuptiCollectorOptions{}, &sink);
  EXPECT_FALSE(started.active);
  EXPECT_NE(started.reason.find("CUPTI_ERROR_UNKNOWN (999)"), std::string::npos) << started.reason;
  EXPECT_NE(started.reason.find("CUDA could not be initialised"), std::string::npos) << started.reason;
  EXPECT_EQ(g_correlation_push.load(), nullptr) << "annotations never call a CUPTI that failed";
  EXPECT_FALSE(CuptiCollectionActive());
}

}  // namespace
}  // namespace smprof::internal

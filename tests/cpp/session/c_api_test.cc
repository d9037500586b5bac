// The C API (smprof_c.h): start from key/value arrays, status codes and
// smprof_last_error() messages, begin/end by name and by interned id, stop,
// names that are not UTF-8, and that the calls agree with the C++ API.
#include <gtest/gtest.h>
#include <pthread.h>

#include <filesystem>
#include <string>
#include <thread>

#include "smprof/smprof.h"
#include "smprof/smprof_c.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace {

using smprof::testing::ReadTraceFile;
using smprof::testing::TempDir;
using smprof::testing::TraceFileContents;

TEST(CApi, StatusCodesMatchTheCppApi) {
  EXPECT_EQ(SMPROF_OK, static_cast<int>(smprof::StatusCode::kOk));
  EXPECT_EQ(SMPROF_INVALID_ARGUMENT, static_cast<int>(smprof::StatusCode::kInvalidArgument));
  EXPECT_EQ(SMPROF_FAILED_PRECONDITION, static_cast<int>(smprof::StatusCode::kFailedPrecondition));
  EXPECT_EQ(SMPROF_IO_ERROR, static_cast<int>(smprof::StatusCode::kIoError));
  EXPECT_EQ(SMPROF_INTERNAL, static_cast<int>(smprof::StatusCode::kInternal));
  EXPECT_STREQ(smprof_version(), smprof::Version());
}

TEST(CApi, StartAnnotateStopWritesTheTrace) {
  TempDir dir;
  const std::string path = dir.File("c_api_%s.smprof");
  const char* keys[] = {"RecordFile", "BucketCount", "Compression"};
  const char* values[] = {path.c_str(), "2", "none"};
  ASSERT_EQ(smprof_start(keys, values, 3), SMPROF_OK) << smprof_last_error();
  EXPECT_STREQ(smprof_last_error(), "") << "success clears the last error";
  EXPECT_EQ(smprof_is_profiling(), 1);

  const uint64_t outer = smprof_annotation_begin("c-outer");
  const uint32_t id = smprof_intern_name("c-by-id");
  EXPECT_EQ(smprof_intern_name("c-by-id"), id);
  const uint64_t inner = smprof_annotation_begin_id(id);
  ASSERT_NE(outer, 0u);
  ASSERT_NE(inner, 0u);
  EXPECT_EQ(smprof_annotation_end(inner), static_cast<int>(smprof::EndResult::kOk));
  EXPECT_EQ(smprof_annotation_end(outer), 0);
  EXPECT_EQ(smprof_annotation_end(outer), static_cast<int>(smprof::EndResult::kUnknownHandle));
  EXPECT_EQ(smprof_annotation_end(0), static_cast<int>(smprof::EndResult::kNotProfiling));

  ASSERT_EQ(smprof_stop(), SMPROF_OK) << smprof_last_error();
  EXPECT_EQ(smprof_is_profiling(), 0);
  const TraceFileContents trace = ReadTraceFile(smprof::LastSessionStats().path);
  ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
  EXPECT_EQ(trace.header.config().at("BucketCount"), "2");
  EXPECT_EQ(trace.header.config().at("Compression"), "none");
  ASSERT_EQ(trace.ranges.size(), 2u);
  EXPECT_EQ(trace.ranges[0].name, "c-outer");
  EXPECT_EQ(trace.ranges[0].depth, 0u);
  EXPECT_EQ(trace.ranges[1].name, "c-by-id");
  EXPECT_EQ(trace.ranges[1].depth, 1u);
}

TEST(CApi, BadKeyIsAnInvalidArgumentNamingTheKey) {
  TempDir dir;
  const std::string path = dir.File("never-written.smprof");
  const char* keys[] = {"RecordFile", "BucketCnt"};
  const char* values[] = {path.c_str(), "4"};
  EXPECT_EQ(smprof_start(keys, values, 2), SMPROF_INVALID_ARGUMENT);
  const std::string error = smprof_last_error();
  EXPECT_NE(error.find("BucketCnt"), std::string::npos) << error;
  EXPECT_NE(error.find("BucketCount"), std::string::npos) << "lists the valid keys: " << error;
  EXPECT_EQ(smprof_is_profiling(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(CApi, BadValueIsAnInvalidArgumentNamingKeyAndValidValues) {
  const char* keys[] = {"EnableCuda"};
  const char* values[] = {"sometimes"};
  EXPECT_EQ(smprof_start(keys, values, 1), SMPROF_INVALID_ARGUMENT);
  const std::string error = smprof_last_error();
  EXPECT_NE(error.find("EnableCuda"), std::string::npos) << error;
  EXPECT_NE(error.find("auto, 1 or 0"), std::string::npos) << error;
}

TEST(CApi, NullKeyOrValueIsRejected) {
  TempDir dir;
  const std::string path = dir.File("never-written.smprof");
  const char* keys[] = {"RecordFile", nullptr};
  const char* values[] = {path.c_str(), "1"};
  EXPECT_EQ(smprof_start(keys, values, 2), SMPROF_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smprof_last_error()).find("null"), std::string::npos);
  const char* keys2[] = {"RecordFile"};
  const char* values2[] = {nullptr};
  EXPECT_EQ(smprof_start(keys2, values2, 1), SMPROF_INVALID_ARGUMENT);
  EXPECT_EQ(smprof_is_profiling(), 0);
}

TEST(CApi, PreconditionFailuresAreReportedPerThread) {
  EXPECT_EQ(smprof_stop(), SMPROF_FAILED_PRECONDITION);
  EXPECT_NE(std::string(smprof_last_error()).find("not running"), std::string::npos);
  std::string other_thread_error = "unset";
  std::thread([&] { other_thread_error = smprof_last_error(); }).join();
  EXPECT_EQ(other_thread_error, "") << "the last error belongs to the thread that failed";

  TempDir dir;
  const std::string path = dir.File("twice.smprof");
  const char* keys[] = {"RecordFile"};
  const char* values[] = {path.c_str()};
  ASSERT_EQ(smprof_start(keys, values, 1), SMPROF_OK);
  EXPECT_EQ(smprof_start(keys, values, 1), SMPROF_FAILED_PRECONDITION);
  EXPECT_NE(std::string(smprof_last_error()).find("already running"), std::string::npos);
  EXPECT_EQ(smprof_stop(), SMPROF_OK);
}

TEST(CApi, NoKeysStartsWithDefaultsAndNullNameIsHarmless) {
  TempDir dir;
  const std::string pattern = dir.File("env_%p.smprof");
  setenv("SMP_RECORD_FILE", pattern.c_str(), 1);
  ASSERT_EQ(smprof_start(nullptr, nullptr, 0), SMPROF_OK) << smprof_last_error();
  unsetenv("SMP_RECORD_FILE");
  const uint64_t h = smprof_annotation_begin(nullptr);
  EXPECT_NE(h, 0u);
  EXPECT_EQ(smprof_annotation_end(h), 0);
  ASSERT_EQ(smprof_stop(), SMPROF_OK);
  const TraceFileContents trace = ReadTraceFile(smprof::LastSessionStats().path);
  ASSERT_EQ(trace.ranges.size(), 1u);
  EXPECT_EQ(trace.ranges[0].name, "");
}

TEST(CApi, ANameThatIsNotUtf8KeepsItsBytesAndLosesNoOtherEvent) {
  TempDir dir;
  const std::string path = dir.File("bytes_%s.smprof");
  const char* keys[] = {"RecordFile"};
  const char* values[] = {path.c_str()};
  ASSERT_EQ(smprof_start(keys, values, 1), SMPROF_OK) << smprof_last_error();
  const std::string latin1 = "caf\xe9 \xff\xfe";  // not UTF-8
  for (int i = 0; i < 100; ++i) smprof_annotation_end(smprof_annotation_begin("good"));
  smprof_annotation_end(smprof_annotation_begin(latin1.c_str()));
  // A thread named with bytes that are not UTF-8 either.
  std::thread([] {
    pthread_setname_np(pthread_self(), "thr\xc3");
    smprof_annotation_end(smprof_annotation_begin("on-a-thread"));
  }).join();
  ASSERT_EQ(smprof_stop(), SMPROF_OK) << smprof_last_error();
  const TraceFileContents trace = ReadTraceFile(smprof::LastSessionStats().path);
  ASSERT_TRUE(trace.problem.empty()) << trace.problem;
  ASSERT_EQ(trace.ranges.size(), 102u);
  std::size_t good = 0;
  std::size_t bytes = 0;
  for (const auto& range : trace.ranges) {
    good += range.name == "good";
    bytes += range.name == latin1;
  }
  EXPECT_EQ(good, 100u);
  EXPECT_EQ(bytes, 1u) << "the name is written as the caller's bytes";
  EXPECT_EQ(trace.footer.annotations_written(), 102u);
}

TEST(CApi, BeginWithoutSessionReturnsZero) {
  ASSERT_EQ(smprof_is_profiling(), 0);
  EXPECT_EQ(smprof_annotation_begin("idle"), 0u);
  EXPECT_EQ(smprof_annotation_begin_id(smprof_intern_name("idle")), 0u);
}

TEST(CApi, ClockAlignmentRoundsGoInTheFooter) {
  const smprof_clock_sample samples[] = {{100, 110, 111, 121}, {200, 215, 216, 231}};
  EXPECT_EQ(smprof_record_clock_alignment("start", 0, "host-a", 7, samples, 2, ""), SMPROF_FAILED_PRECONDITION);
  TempDir dir;
  const std::string path = dir.File("aligned.smprof");
  const char* keys[] = {"RecordFile"};
  const char* values[] = {path.c_str()};
  ASSERT_EQ(smprof_start(keys, values, 1), SMPROF_OK) << smprof_last_error();
  EXPECT_EQ(smprof_record_clock_alignment("start", 0, "host-a", 7, nullptr, 1, ""), SMPROF_INVALID_ARGUMENT);
  ASSERT_EQ(smprof_record_clock_alignment("start", 0, "host-a", smprof_clock_offset_ns(), samples, 2, nullptr),
            SMPROF_OK)
      << smprof_last_error();
  ASSERT_EQ(smprof_stop(), SMPROF_OK);
  const TraceFileContents trace = smprof::testing::ReadTraceFile(path);
  ASSERT_EQ(trace.footer.clock_alignments_size(), 1);
  const auto& round = trace.footer.clock_alignments(0);
  EXPECT_EQ(round.reference_host(), "host-a");
  EXPECT_EQ(round.problem(), "");
  ASSERT_EQ(round.samples_size(), 2);
  EXPECT_EQ(round.samples(1).local_receive_ns(), 231);
  EXPECT_NEAR(static_cast<double>(round.reference_clock_offset_ns()),
              static_cast<double>(trace.header.start().realtime_ns() - trace.header.start().monotonic_ns()), 1e6)
      << "the offset the anchors read";
}

}  // namespace

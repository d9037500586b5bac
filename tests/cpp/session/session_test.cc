// Session lifecycle: Start/Stop preconditions, configuration and I/O errors
// that leave nothing running, repeated sessions writing distinct readable
// files, SMP_DISABLE turning profiling off, and the stats of the last session.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace smprof {
namespace {

using testing::ConfigWritingTo;
using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Session, StartTwiceIsAFailedPrecondition) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "first.smprof")).ok());
  const Status again = Start(ConfigWritingTo(dir.path(), "second.smprof"));
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("already running"), std::string::npos) << again.message();
  EXPECT_NE(again.message().find(dir.File("first.smprof")), std::string::npos) << again.message();
  EXPECT_TRUE(IsProfiling()) << "the running session is not disturbed";
  EXPECT_FALSE(std::filesystem::exists(dir.File("second.smprof")));
  ASSERT_TRUE(Stop().ok());
  EXPECT_EQ(LastSessionStats().path, dir.File("first.smprof"));
}

// The names of this process's threads (/proc/self/task/*/comm).
std::multiset<std::string> ThreadNames() {
  std::multiset<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.insert(name);
  }
  return names;
}

TEST(Session, ItsThreadsAreNamedAndEndWithTheSession) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "named.smprof");
  config.Set("CpuProfilingDurationS", "60");
  ASSERT_TRUE(Start(config).ok());
  const std::multiset<std::string> during = ThreadNames();
  EXPECT_EQ(during.count("smprof-drain"), 1u);
  EXPECT_EQ(during.count("smprof-sampler"), 1u);
  ASSERT_TRUE(Stop().ok());
  const std::multiset<std::string> after = ThreadNames();
  EXPECT_EQ(after.count("smprof-drain") + after.count("smprof-sampler"), 0u);
}

TEST(Session, StopWithoutStartIsAFailedPrecondition) {
  ASSERT_FALSE(IsProfiling());
  const Status status = Stop();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("not running"), std::string::npos) << status.message();

  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "once.smprof")).ok());
  ASSERT_TRUE(Stop().ok());
  EXPECT_EQ(Stop().code(), StatusCode::kFailedPrecondition) << "a second Stop";
}

TEST(Session, BadConfigStartsNothing) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "never.smprof");
  config.Set("Bogus", "1");
  const Status status = Start(config);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("Bogus"), std::string::npos);
  EXPECT_FALSE(IsProfiling());
  EXPECT_FALSE(std::filesystem::exists(dir.File("never.smprof")));
  EXPECT_EQ(Stop().code(), StatusCode::kFailedPrecondition);
}

TEST(Session, UncreatableFileIsAnIoErrorAndStartsNothing) {
  TempDir dir;
  std::ofstream(dir.File("a-file")) << "x";
  const Status status = Start(ConfigWritingTo(dir.path(), "a-file/sub/t.smprof"));
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("a-file/sub"), std::string::npos) << status.message();
  EXPECT_FALSE(IsProfiling());

  // An existing file is never overwritten.
  const Status exists = Start(ConfigWritingTo(dir.path(), "a-file"));
  EXPECT_EQ(exists.code(), StatusCode::kIoError);
  EXPECT_FALSE(IsProfiling());
  std::ifstream in(dir.File("a-file"));
  std::string content;
  in >> content;
  EXPECT_EQ(content, "x");
}

TEST(Session, RecordFileDirectoriesAreCreated) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "deep/er/%r/trace.smprof")).ok());
  ASSERT_TRUE(Stop().ok());
  EXPECT_TRUE(std::filesystem::is_regular_file(LastSessionStats().path)) << LastSessionStats().path;
  EXPECT_EQ(LastSessionStats().path.rfind(dir.File("deep/er/"), 0), 0u);
}

TEST(Session, RepeatedSessionsWriteDistinctReadableFiles) {
  TempDir dir;
  std::set<std::string> paths;
  std::set<std::uint32_t> session_indexes;
  for (int session = 0; session < 4; ++session) {
    ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "repeat_%s_%p.smprof")).ok()) << session;
    for (int i = 0; i <= session; ++i) {
      SMPROF_ANNOTATE("work");
    }
    ASSERT_TRUE(Stop().ok());
    const SessionStats stats = LastSessionStats();
    EXPECT_TRUE(paths.insert(stats.path).second) << "reused " << stats.path;
    const TraceFileContents trace = ReadTraceFile(stats.path);
    ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
    EXPECT_TRUE(trace.has_footer);
    EXPECT_TRUE(trace.problem.empty()) << trace.problem;
    EXPECT_EQ(trace.ranges.size(), static_cast<std::size_t>(session + 1)) << "only this session's ranges";
    EXPECT_EQ(stats.annotations_written, static_cast<std::uint64_t>(session + 1));
    EXPECT_TRUE(session_indexes.insert(trace.header.session_index()).second);
    EXPECT_NE(stats.path.find("repeat_" + std::to_string(trace.header.session_index()) + "_"), std::string::npos);
  }
  EXPECT_EQ(*session_indexes.rbegin() - *session_indexes.begin(), 3u) << "session indexes count up";
}

TEST(Session, RangeOpenAcrossStopIsNotRecordedInTheNextSession) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "span_%s.smprof")).ok());
  {
    SMPROF_ANNOTATE("spans-two-sessions");
    ASSERT_TRUE(Stop().ok());
    ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "span_%s.smprof")).ok());
  }
  { SMPROF_ANNOTATE("second-only"); }
  ASSERT_TRUE(Stop().ok());
  const TraceFileContents trace = ReadTraceFile(LastSessionStats().path);
  ASSERT_EQ(trace.ranges.size(), 1u);
  EXPECT_EQ(trace.ranges[0].name, "second-only");
  EXPECT_EQ(trace.ranges[0].depth, 0u) << "the scope left open by the first session does not deepen the second";
}

TEST(Session, SmpDisableMakesStartANoOp) {
  TempDir dir;
  ScopedEnv disable("SMP_DISABLE", "1");
  const Status status = Start(ConfigWritingTo(dir.path(), "disabled.smprof"));
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(IsProfiling());
  EXPECT_EQ(AnnotationBegin("ignored"), 0u);
  { SMPROF_ANNOTATE("ignored-scope"); }
  EXPECT_FALSE(std::filesystem::exists(dir.File("disabled.smprof")));
  EXPECT_EQ(Stop().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Session, SmpDisableStillRejectsABadConfig) {
  ScopedEnv disable("SMP_DISABLE", "1");
  EXPECT_EQ(Start(Config().Set("Bogus", "1")).code(), StatusCode::kInvalidArgument);
}

TEST(Session, SmpDisableZeroOrEmptyDoesNotDisable) {
  for (const char* value : {"0", ""}) {
    TempDir dir;
    ScopedEnv disable("SMP_DISABLE", value);
    ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "enabled.smprof")).ok());
    EXPECT_TRUE(IsProfiling()) << "SMP_DISABLE='" << value << "'";
    ASSERT_TRUE(Stop().ok());
    EXPECT_TRUE(std::filesystem::exists(dir.File("enabled.smprof")));
  }
}

TEST(Session, EnvironmentConfiguresTheSession) {
  TempDir dir;
  const std::string pattern = dir.File("from_env_%s.smprof");
  ScopedEnv record_file("SMP_RECORD_FILE", pattern.c_str());
  ScopedEnv compression("SMP_COMPRESSION", "none");
  ASSERT_TRUE(Start(Config()).ok());
  ASSERT_TRUE(Stop().ok());
  const TraceFileContents trace = ReadTraceFile(LastSessionStats().path);
  ASSERT_TRUE(trace.open_status.ok()) << trace.open_status.message();
  EXPECT_EQ(trace.header.config().at("RecordFile"), pattern);
  EXPECT_EQ(trace.header.config().at("Compression"), "none");
}

// A session without CPU sampling says which key turned perf off (the reasons
// of a sampled session: file_header_test).
TEST(Session, PerfCollectorOffSaysWhy) {
  TempDir dir;
  auto perf_reason = [](const TraceFileContents& trace) {
    for (const auto& collector : trace.header.collectors()) {
      if (collector.name() == "perf") return std::make_pair(collector.active(), collector.reason());
    }
    return std::make_pair(false, std::string("no perf collector in the header"));
  };
  Config unsampled = ConfigWritingTo(dir.path(), "unsampled.smprof");
  unsampled.Set("CpuProfilingDurationS", "0");
  ASSERT_TRUE(Start(unsampled).ok());
  ASSERT_TRUE(Stop().ok());
  const auto [unsampled_active, unsampled_reason] = perf_reason(ReadTraceFile(LastSessionStats().path));
  EXPECT_FALSE(unsampled_active);
  EXPECT_NE(unsampled_reason.find("CpuProfilingDurationS=0"), std::string::npos) << unsampled_reason;
}

TEST(Session, StatsDescribeTheLastSession) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "stats.smprof")).ok());
  EXPECT_EQ(LastSessionStats().path, dir.File("stats.smprof")) << "the current session's path is known at once";
  for (int i = 0; i < 10; ++i) {
    SMPROF_ANNOTATE("counted");
  }
  ASSERT_TRUE(Stop().ok());
  const SessionStats stats = LastSessionStats();
  EXPECT_EQ(stats.annotations_written, 10u);
  EXPECT_EQ(stats.annotations_dropped, 0u);
  EXPECT_GE(stats.frames_written, 1u);
  EXPECT_EQ(stats.bytes_written, std::filesystem::file_size(stats.path));
  EXPECT_EQ(LastSessionStats().path, stats.path) << "stats survive Stop";
}

TEST(Session, VersionIsSemantic) {
  const std::string version = Version();
  EXPECT_EQ(std::count(version.begin(), version.end(), '.'), 2) << version;
}

}  // namespace
}  // namespace smprof

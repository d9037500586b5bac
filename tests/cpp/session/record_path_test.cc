// RecordFile expansion: every % code, host and job made safe as path
// components, and creation of the trace file's parent directories.
#include "session/record_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace smprof::internal {
namespace {

RankInfo SampleRank() {
  RankInfo rank;
  rank.rank = 12;
  rank.local_rank = 4;
  rank.world_size = 16;
  rank.host = "algo-1";
  rank.job = "job-7";
  return rank;
}

// 2025-11-29 14:15:00.123456789 UTC.
constexpr std::int64_t kStartNs = 1764425700123456789;

std::string Expand(const std::string& pattern, const RankInfo& rank = SampleRank()) {
  return ExpandRecordPath(pattern, rank, RecordPathFields{4321, kStartNs, 3});
}

TEST(RecordPath, EveryCodeExpands) {
  EXPECT_EQ(Expand("%p"), "4321");
  EXPECT_EQ(Expand("%t"), "20251129T141500.123456Z");
  EXPECT_EQ(Expand("%r"), "12");
  EXPECT_EQ(Expand("%l"), "4");
  EXPECT_EQ(Expand("%h"), "algo-1");
  EXPECT_EQ(Expand("%j"), "job-7");
  EXPECT_EQ(Expand("%s"), "3");
  EXPECT_EQ(Expand("%%"), "%");
}

TEST(RecordPath, CodesCombineWithLiteralText) {
  EXPECT_EQ(Expand("out/%j/%h/rank%r_pid%p_%t.smprof"),
            "out/job-7/algo-1/rank12_pid4321_20251129T141500.123456Z.smprof");
  EXPECT_EQ(Expand("/abs/100%%_%s.smprof"), "/abs/100%_3.smprof");
  EXPECT_EQ(Expand("no-codes.smprof"), "no-codes.smprof");
  EXPECT_EQ(Expand("trailing%"), "trailing%");
}

TEST(RecordPath, EpochStartTimeFormats) {
  EXPECT_EQ(ExpandRecordPath("%t", SampleRank(), RecordPathFields{1, 0, 0}), "19700101T000000.000000Z");
}

TEST(RecordPath, UnsafeHostAndJobCharactersAreReplaced) {
  RankInfo rank = SampleRank();
  rank.host = "evil/../host name";
  rank.job = "job:with*glob?";
  EXPECT_EQ(Expand("%h", rank), "evil_.._host_name");
  EXPECT_EQ(Expand("%j", rank), "job_with_glob_");
  EXPECT_EQ(Expand("out/%h/x", rank).find("/../"), std::string::npos);

  rank.host = "..";
  rank.job = "";
  EXPECT_EQ(Expand("%h", rank), "_..") << "'..' must not climb out of the directory";
  EXPECT_EQ(Expand("%j", rank), "_") << "an empty component must not collapse the path";
  rank.host = ".";
  EXPECT_EQ(Expand("%h", rank), "_.");
  rank.host = "ok-host_1.example.com";
  EXPECT_EQ(Expand("%h", rank), "ok-host_1.example.com");
}

TEST(RecordPath, MakeParentDirectoriesCreatesEveryMissingLevel) {
  testing::TempDir dir;
  const std::string file = dir.File("a/b/c/trace.smprof");
  std::string error;
  ASSERT_TRUE(MakeParentDirectories(file, &error)) << error;
  EXPECT_TRUE(std::filesystem::is_directory(dir.File("a/b/c")));
  EXPECT_FALSE(std::filesystem::exists(file)) << "only directories are created";
  ASSERT_TRUE(MakeParentDirectories(file, &error)) << "existing directories are fine: " << error;
  EXPECT_TRUE(MakeParentDirectories("relative-file-without-dirs.smprof", &error));
}

TEST(RecordPath, MakeParentDirectoriesReportsWhatItCouldNotCreate) {
  testing::TempDir dir;
  std::ofstream(dir.File("plain-file")) << "x";
  std::string error;
  EXPECT_FALSE(MakeParentDirectories(dir.File("plain-file/sub/trace.smprof"), &error));
  EXPECT_NE(error.find("cannot create directory"), std::string::npos) << error;
  EXPECT_NE(error.find(dir.File("plain-file/sub")), std::string::npos) << error;
}

}  // namespace
}  // namespace smprof::internal

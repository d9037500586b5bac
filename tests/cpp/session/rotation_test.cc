// File rotation (RotateIntervalS): the names of a session's files, and that
// rotating on the drain thread neither loses nor duplicates an event: each
// closed file has its footer (with next_file), each file a full header, and
// the files read in file_index order give the events in program order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "session/closed_file_queue.h"
#include "session/record_path.h"
#include "smprof/annotate.h"
#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace smprof {
namespace {

using internal::ClosedFileQueue;
using internal::RotatedPath;
using testing::ConfigWritingTo;
using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

TEST(RotatedPath, InsertsTheIndexBeforeTheExtension) {
  EXPECT_EQ(RotatedPath("/out/rank0_pid7.smprof", 0), "/out/rank0_pid7.smprof");
  EXPECT_EQ(RotatedPath("/out/rank0_pid7.smprof", 1), "/out/rank0_pid7.0001.smprof");
  EXPECT_EQ(RotatedPath("/out/rank0_pid7.smprof", 12345), "/out/rank0_pid7.12345.smprof");
  EXPECT_EQ(RotatedPath("smpfile_1_2.raw", 3), "smpfile_1_2.0003.raw");
  EXPECT_EQ(RotatedPath("/a.b/trace", 2), "/a.b/trace.0002") << "a dot in a directory is no extension";
  EXPECT_EQ(RotatedPath("/out/.hidden", 2), "/out/.hidden.0002");
}

// Records ranges one after another on this thread for `duration`; returns how many.
std::uint64_t AnnotateFor(std::chrono::milliseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  std::uint64_t n = 0;
  while (std::chrono::steady_clock::now() < until) {
    SMPROF_ANNOTATE("tick");
    ++n;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return n;
}

// The session's files in order, starting at `first` and following next_file.
std::vector<TraceFileContents> ReadChain(const std::string& first) {
  std::vector<TraceFileContents> files;
  std::string path = first;
  while (!path.empty()) {
    files.push_back(ReadTraceFile(path));
    if (!files.back().open_status.ok() || files.size() > 100) break;
    path = files.back().footer.next_file();
  }
  return files;
}

TEST(Rotation, EveryEventExactlyOnceAcrossFilesInOrder) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "rank%r.smprof");
  config.Set("RotateIntervalS", "1").Set("FlushIntervalMs", "50");
  ASSERT_TRUE(Start(config).ok());
  const std::uint64_t recorded = AnnotateFor(std::chrono::milliseconds(3300));
  ASSERT_TRUE(Stop().ok());
  const SessionStats stats = LastSessionStats();
  ASSERT_EQ(stats.annotations_dropped, 0u);
  EXPECT_EQ(stats.path, dir.File("rank0.smprof")) << "the session's path is its first file";

  const std::vector<TraceFileContents> files = ReadChain(stats.path);
  ASSERT_GE(files.size(), 3u) << "3.3 s at one rotation per second";
  std::size_t on_disk = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) on_disk += entry.is_regular_file();
  EXPECT_EQ(on_disk, files.size()) << "every file is reachable from the first";

  std::uint64_t events = 0, frames = 0, bytes = 0;
  std::int64_t previous_start = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const TraceFileContents& f = files[i];
    SCOPED_TRACE("file " + std::to_string(i));
    ASSERT_TRUE(f.open_status.ok()) << f.open_status.message();
    EXPECT_TRUE(f.problem.empty()) << f.problem;
    ASSERT_TRUE(f.has_footer) << "a closed file is complete";
    EXPECT_EQ(f.header.file_index(), i);
    EXPECT_EQ(f.header.previous_file(), i == 0 ? "" : RotatedPath(stats.path, static_cast<std::uint32_t>(i - 1)));
    EXPECT_EQ(f.footer.next_file(),
              i + 1 < files.size() ? RotatedPath(stats.path, static_cast<std::uint32_t>(i + 1)) : "");
    EXPECT_EQ(f.header.session_index(), files[0].header.session_index());
    EXPECT_EQ(f.header.pid(), getpid());
    EXPECT_EQ(f.header.config().at("RotateIntervalS"), "1");
    if (i > 0) {
      EXPECT_GT(f.header.start().monotonic_ns(), files[i - 1].header.start().monotonic_ns());
    }
    EXPECT_EQ(f.footer.annotations_written(), f.ranges.size()) << "footer counts are the file's own";
    EXPECT_EQ(f.footer.has_end(), i + 1 == files.size()) << "how the session ended: in its last file only";
    EXPECT_EQ(f.footer.frames_written(), f.frames.size());
    for (const trace::Frame& frame : f.frames) EXPECT_EQ(frame.sequence(), frames++) << "numbered across files";
    for (const auto& range : f.ranges) {
      EXPECT_GT(range.start_ns, previous_start) << "order kept across the boundary, nothing twice";
      previous_start = range.start_ns;
    }
    events += f.ranges.size();
    bytes += std::filesystem::file_size(i == 0 ? stats.path : RotatedPath(stats.path, static_cast<std::uint32_t>(i)));
  }
  EXPECT_EQ(events, recorded);
  EXPECT_EQ(stats.annotations_written, recorded);
  EXPECT_EQ(stats.bytes_written, bytes);
}

TEST(Rotation, ClosedFilesAreQueuedForAWatcherInOrder) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "watched.smprof");
  config.Set("RotateIntervalS", "1").Set("FlushIntervalMs", "50");
  ClosedFileQueue::Get().Watch(true);
  ASSERT_TRUE(Start(config).ok());
  AnnotateFor(std::chrono::milliseconds(2300));
  ASSERT_TRUE(Stop().ok());
  std::vector<std::string> closed;
  while (auto path = ClosedFileQueue::Get().Next(0)) closed.push_back(*path);
  ClosedFileQueue::Get().Watch(false);

  const std::vector<TraceFileContents> files = ReadChain(dir.File("watched.smprof"));
  ASSERT_EQ(closed.size(), files.size());
  for (std::size_t i = 0; i < closed.size(); ++i) {
    EXPECT_EQ(closed[i], RotatedPath(dir.File("watched.smprof"), static_cast<std::uint32_t>(i)));
  }
  EXPECT_EQ(ClosedFileQueue::Get().TakeOverflow(), 0u);
}

TEST(Rotation, NothingIsQueuedWithoutAWatcher) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "unwatched.smprof")).ok());
  ASSERT_TRUE(Stop().ok());
  EXPECT_FALSE(ClosedFileQueue::Get().Next(0).has_value());
}

TEST(Rotation, ZeroIntervalWritesOneFile) {
  TempDir dir;
  Config config = ConfigWritingTo(dir.path(), "single.smprof");
  config.Set("RotateIntervalS", "0").Set("FlushIntervalMs", "50");
  ASSERT_TRUE(Start(config).ok());
  const std::uint64_t recorded = AnnotateFor(std::chrono::milliseconds(1200));
  ASSERT_TRUE(Stop().ok());
  const TraceFileContents f = ReadTraceFile(dir.File("single.smprof"));
  ASSERT_TRUE(f.has_footer);
  EXPECT_EQ(f.footer.next_file(), "");
  EXPECT_EQ(f.ranges.size(), recorded);
  EXPECT_FALSE(std::filesystem::exists(RotatedPath(dir.File("single.smprof"), 1)));
}

TEST(Rotation, ANextFileThatCannotBeCreatedKeepsTheCurrentOne) {
  TempDir dir;
  const std::string first = dir.File("blocked.smprof");
  std::ofstream(RotatedPath(first, 1)) << "not ours";  // never overwritten
  Config config = ConfigWritingTo(dir.path(), "blocked.smprof");
  config.Set("RotateIntervalS", "1").Set("FlushIntervalMs", "50");
  ASSERT_TRUE(Start(config).ok());
  const std::uint64_t recorded = AnnotateFor(std::chrono::milliseconds(2300));
  ASSERT_TRUE(Stop().ok());
  const TraceFileContents f = ReadTraceFile(first);
  ASSERT_TRUE(f.has_footer);
  EXPECT_EQ(f.footer.next_file(), "");
  EXPECT_EQ(f.ranges.size(), recorded) << "nothing lost";
  std::ifstream blocker(RotatedPath(first, 1));
  std::string content;
  std::getline(blocker, content);
  EXPECT_EQ(content, "not ours");
}

}  // namespace
}  // namespace smprof

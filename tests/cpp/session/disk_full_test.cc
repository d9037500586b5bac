// Disk full (a small tmpfs): a frame that cannot be written is lost and
// counted in the footer, the file stays readable, and writing resumes, in
// the current file and in files opened by rotation, once space is back. The
// stop warning names the cause and the file, not the buffer pool. Mounting a
// tmpfs needs root (CAP_SYS_ADMIN); the test is skipped without it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "session/record_path.h"
#include "smprof/annotate.h"
#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace smprof {
namespace {

using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

// Gives up on a condition that never comes (a hang guard, not a timing check).
constexpr auto kPatience = std::chrono::seconds(60);

class SmallTmpfs {
 public:
  SmallTmpfs(std::string dir, const char* size) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    const std::string options = std::string("size=") + size;
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

// Writes `path` until the file system is full.
void FillUp(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const std::vector<char> block(4096, 'x');
  while (::write(fd, block.data(), block.size()) > 0) {
  }
  ::close(fd);
}

// The process's stderr (libsmprof's warnings) goes to a file while alive.
class CapturedStderr {
 public:
  explicit CapturedStderr(std::string path) : path_(std::move(path)) {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~CapturedStderr() { Restore(); }
  void Restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::string Text() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  bool WaitFor(const std::string& needle) const {
    const auto until = std::chrono::steady_clock::now() + kPatience;
    while (Text().find(needle) == std::string::npos) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  std::string path_;
  int saved_ = -1;
};

std::size_t Count(const TraceFileContents& file, const std::string& name) {
  std::size_t n = 0;
  for (const auto& range : file.ranges) n += range.name == name;
  return n;
}

TEST(DiskFull, LostFramesAreCountedAndWritingResumesInRotatedFilesOnceSpaceIsBack) {
  TempDir dir;
  const std::string mount_point = dir.File("small");
  SmallTmpfs fs(mount_point, "1m");
  if (!fs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << fs.error();
  CapturedStderr captured(dir.File("stderr.txt"));

  ASSERT_TRUE(Start(Config()
                        .Set("RecordFile", mount_point + "/full_%s.smprof")
                        .Set("Compression", "none")
                        .Set("FlushIntervalMs", "10")
                        .Set("RotateIntervalS", "1")
                        .Set("EnablePerf", "0")
                        .Set("CpuProfilingDurationS", "0"))
                  .ok());
  const NameId while_full = InternName("while-full");
  const NameId after = InternName("after");
  FillUp(mount_point + "/filler");
  constexpr std::size_t kWhileFull = 2000;
  for (std::size_t i = 0; i < kWhileFull; ++i) Scope range(while_full);
  ASSERT_TRUE(captured.WaitFor("No space left on device")) << captured.Text();

  std::filesystem::remove(mount_point + "/filler");
  // Record until the session is two rotations further: both new files were
  // created, and written to, after space came back.
  const std::string third_file = internal::RotatedPath(mount_point + "/full_0.smprof", 2);
  std::size_t recorded_after = 0;
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (!std::filesystem::exists(third_file) && std::chrono::steady_clock::now() < until) {
    { Scope range(after); }
    ++recorded_after;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_TRUE(std::filesystem::exists(third_file));
  for (int i = 0; i < 10; ++i) {
    Scope range(after);
    ++recorded_after;
  }
  ASSERT_TRUE(Stop().ok());
  captured.Restore();
  const std::string warnings = captured.Text();

  std::uint64_t written_while_full = 0;
  std::uint64_t written_after = 0;
  std::uint64_t frames_lost = 0;
  std::uint64_t annotations_lost = 0;
  std::uint64_t pool_dropped = 0;
  std::vector<std::size_t> after_per_file;
  for (std::string path = LastSessionStats().path; !path.empty();) {
    const TraceFileContents file = ReadTraceFile(path);
    ASSERT_TRUE(file.open_status.ok()) << path << ": " << file.open_status.message();
    EXPECT_TRUE(file.problem.empty()) << path << ": " << file.problem;
    ASSERT_TRUE(file.has_footer) << path;
    written_while_full += Count(file, "while-full");
    written_after += Count(file, "after");
    after_per_file.push_back(Count(file, "after"));
    frames_lost += file.footer.frames_lost_to_write_errors();
    annotations_lost += file.footer.annotations_lost_to_write_errors();
    pool_dropped += file.footer.annotations_dropped();
    if (file.footer.frames_lost_to_write_errors() > 0) {
      EXPECT_NE(file.footer.last_write_error().find("No space left on device"), std::string::npos);
    }
    path = file.footer.next_file();
  }
  EXPECT_GE(frames_lost, 1u);
  EXPECT_GE(annotations_lost, 1u);
  EXPECT_EQ(written_while_full + annotations_lost, kWhileFull) << "each range is either written or counted lost";
  EXPECT_EQ(written_after, recorded_after) << "nothing recorded after space came back is lost";
  EXPECT_EQ(pool_dropped, 0u) << "a write error is not a full buffer pool";
  ASSERT_GE(after_per_file.size(), 3u);
  EXPECT_GT(after_per_file.back(), 0u) << "the files rotated to after the error get events";
  EXPECT_GT(after_per_file[after_per_file.size() - 2], 0u);

  EXPECT_NE(warnings.find("No space left on device"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find(mount_point), std::string::npos) << "names the file: " << warnings;
  EXPECT_NE(warnings.find("could not be written"), std::string::npos) << "the stop warning: " << warnings;
  EXPECT_EQ(warnings.find("BucketCount"), std::string::npos) << "does not blame the buffer pool: " << warnings;
  EXPECT_EQ(LastSessionStats().annotations_dropped, annotations_lost);
}

}  // namespace
}  // namespace smprof

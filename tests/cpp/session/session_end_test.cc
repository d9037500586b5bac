// How a session ended, in its last footer: the API's stop, exit() with its
// status, SIGTERM; and the exception text kept valid and bounded. (smppy's
// paths, an uncaught exception and os._exit: tests/python/unit/test_session_end.py.)
#include "session/session_end.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "smprof/annotate.h"
#include "smprof/smprof.h"
#include "support/temp_dir.h"
#include "support/trace_file_contents.h"

namespace smprof {
namespace {

using testing::ConfigWritingTo;
using testing::ReadTraceFile;
using testing::TempDir;
using testing::TraceFileContents;

// The child's wait status, or -1 after killing it when it is still there after 60 s.
int WaitStatus(pid_t pid) {
  for (int i = 0; i < 6000; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

trace::SessionEnd EndIn(const std::string& path) {
  const TraceFileContents trace = ReadTraceFile(path);
  EXPECT_TRUE(trace.open_status.ok()) << trace.open_status.message();
  EXPECT_TRUE(trace.has_footer) << path;
  EXPECT_TRUE(trace.footer.has_end()) << path;
  return trace.footer.end();
}

TEST(SessionEnd, TheApisStopIsAStop) {
  TempDir dir;
  ASSERT_TRUE(Start(ConfigWritingTo(dir.path(), "stop.smprof")).ok());
  ASSERT_TRUE(Stop().ok());
  const trace::SessionEnd end = EndIn(dir.File("stop.smprof"));
  EXPECT_EQ(end.how(), "stop");
  EXPECT_FALSE(end.exit_code_known());
}

TEST(SessionEnd, ExitKeepsItsStatus) {
  TempDir dir;
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!Start(ConfigWritingTo(dir.path(), "exit.smprof")).ok()) _exit(100);
    { SMPROF_ANNOTATE("work"); }
    std::exit(3);
  }
  const int status = WaitStatus(pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(WEXITSTATUS(status), 3);
  const trace::SessionEnd end = EndIn(dir.File("exit.smprof"));
  EXPECT_EQ(end.how(), "exit");
  EXPECT_TRUE(end.exit_code_known());
  EXPECT_EQ(end.exit_code(), 3);
}

TEST(SessionEnd, SigtermNamesTheSignalAndStillEndsTheProcess) {
  TempDir dir;
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!Start(ConfigWritingTo(dir.path(), "term.smprof")).ok()) _exit(100);
    { SMPROF_ANNOTATE("work"); }
    kill(getpid(), SIGTERM);
    std::this_thread::sleep_for(std::chrono::seconds(30));
    _exit(101);  // SIGTERM did not end it
  }
  const int status = WaitStatus(pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  const trace::SessionEnd end = EndIn(dir.File("term.smprof"));
  EXPECT_EQ(end.how(), "signal");
  EXPECT_EQ(end.signal(), SIGTERM);
}

TEST(SessionEnd, ExceptionTextIsValidAndBounded) {
  internal::SessionEnd end;
  end.how = "exception";
  end.exit_code = 1;
  end.exception_type = "torch.OutOfMemoryError";
  end.exception_message = "bad \xff byte " + std::string(10000, 'x');
  const trace::SessionEnd out = internal::ToProto(end);
  EXPECT_EQ(out.exception_type(), "torch.OutOfMemoryError");
  EXPECT_LE(out.exception_message().size(), internal::kMaxExceptionMessageBytes);
  EXPECT_EQ(out.exception_message().rfind("bad \xEF\xBF\xBD byte xxx", 0), 0u) << out.exception_message();
  EXPECT_NE(out.exception_message().find(" [cut: "), std::string::npos);
  EXPECT_TRUE(out.exit_code_known());
  EXPECT_EQ(out.exit_code(), 1);
}

}  // namespace
}  // namespace smprof

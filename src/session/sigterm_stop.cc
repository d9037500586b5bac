#include "session/sigterm_stop.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "runtime/warnings.h"

namespace smprof::internal {

namespace {

constexpr char kSigterm = 't';  // from the handler
constexpr char kQuit = 'q';     // from ReleaseSigterm: the session is over

// The pipe from the handler to the watcher, created once per process.
std::atomic<int> g_wake_fd{-1};  // the handler's end (non-blocking)
int g_watch_fd = -1;             // the watcher's end
bool g_installed = false;
struct sigaction g_previous;  // the disposition our handler replaced

std::mutex& InstallMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

bool PreviousIsAHandler() {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0) return g_previous.sa_sigaction != nullptr;
  return g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN;
}

void Send(char byte) {
  const int fd = g_wake_fd.load(std::memory_order_relaxed);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);  // a full pipe wakes the watcher already
}

void OnSigterm(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  Send(kSigterm);
  errno = saved_errno;
  if ((g_previous.sa_flags & SA_SIGINFO) != 0) {
    if (g_previous.sa_sigaction != nullptr) g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  }
}

bool IsOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == OnSigterm;
}

// Puts the previous disposition back if ours is still installed.
void RestorePrevious() {
  struct sigaction current {};
  if (::sigaction(SIGTERM, nullptr, &current) == 0 && IsOurs(current)) ::sigaction(SIGTERM, &g_previous, nullptr);
}

// Runs `stop` on a helper thread and waits at most `timeout` for it: a stop
// stuck on a hung file system must not keep the process from ending.
void StopWithin(void (*stop)(), std::chrono::milliseconds timeout) {
  struct Done {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  };
  auto done = std::make_shared<Done>();
  std::thread([stop, done] {
    stop();
    std::lock_guard<std::mutex> lock(done->mutex);
    done->done = true;
    done->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(done->mutex);
  if (!done->cv.wait_for(lock, timeout, [&] { return done->done; })) {
    Warn("SIGTERM: the profiling session did not stop within " + std::to_string(timeout.count()) +
         " ms; the trace may lack its last frame and footer");
  }
}

void Watch(int read_fd, bool previous_is_a_handler, void (*stop)(), std::chrono::milliseconds timeout) {
  pthread_setname_np(pthread_self(), "smprof-sigterm");
  for (;;) {
    char byte;
    const ssize_t n = ::read(read_fd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kQuit) return;
    Info("SIGTERM: stopping the profiling session (last frame and footer)");
    StopWithin(stop, timeout);
    if (!previous_is_a_handler) {
      // What SIGTERM does without smprof: the default action, now.
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      sigemptyset(&default_action.sa_mask);
      ::sigaction(SIGTERM, &default_action, nullptr);
      ::kill(::getpid(), SIGTERM);
    }
  }
}

bool StartWatcher(void (*stop)(), std::chrono::milliseconds timeout) {
  // The watcher takes no signal: they go to the process's own threads.
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  bool started = true;
  try {
    std::thread(Watch, g_watch_fd, PreviousIsAHandler(), stop, timeout).detach();
  } catch (const std::system_error& e) {
    started = false;
    WarnOnce("sigterm-thread", std::string("StopOnSigterm: cannot start a thread (") + e.what() +
                                   "); SIGTERM ends the process without a footer");
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return started;
}

}  // namespace

void StopOnSigterm(void (*stop)(), std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(InstallMutex());
  if (g_installed) return;
  struct sigaction current {};
  if (::sigaction(SIGTERM, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN) return;  // the process ignores it
  if (g_watch_fd < 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      WarnOnce("sigterm-pipe", "StopOnSigterm: cannot create a pipe; SIGTERM ends the process without a footer");
      return;
    }
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);  // the handler never blocks
    g_watch_fd = fds[0];
    g_wake_fd.store(fds[1], std::memory_order_relaxed);
  }
  if (!IsOurs(current)) g_previous = current;  // ours still there (put back by someone): chain to what it replaced
  if (!StartWatcher(stop, timeout)) return;
  struct sigaction handler {};
  handler.sa_sigaction = OnSigterm;
  handler.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&handler.sa_mask);
  ::sigaction(SIGTERM, &handler, nullptr);
  g_installed = true;
}

void ReleaseSigterm() {
  std::lock_guard<std::mutex> lock(InstallMutex());
  if (!g_installed) return;
  g_installed = false;
  RestorePrevious();
  Send(kQuit);
}

void ForgetSigtermStopInChild() {
  if (g_installed) RestorePrevious();
  g_installed = false;
  const int fd = g_wake_fd.exchange(-1, std::memory_order_relaxed);
  if (fd >= 0) ::close(fd);
  if (g_watch_fd >= 0) ::close(g_watch_fd);  // the parent's pipe: the child makes its own
  g_watch_fd = -1;
}

}  // namespace smprof::internal

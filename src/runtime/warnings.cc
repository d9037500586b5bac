#include "runtime/warnings.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace smprof::internal {

namespace {

void Print(std::string_view kind, std::string_view message) {
  std::string line = "smprof: ";
  line.append(kind).append(message).append("\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Under `smprof run` the processes of the job on this host share the directory
// SMP_RUN_WARNED_DIR: the first to have a message claims it with a file named
// by its hash (O_EXCL), so six processes say it once. Anything but "already
// claimed" (no directory, no permission) lets it print.
bool FirstInJob(std::string_view message) {
  const char* dir = std::getenv("SMP_RUN_WARNED_DIR");
  if (dir == nullptr || *dir == '\0') return true;
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (const char c : message) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  char path[4096];
  if (std::snprintf(path, sizeof path, "%s/%016llx", dir, static_cast<unsigned long long>(hash)) >=
      static_cast<int>(sizeof path)) {
    return true;
  }
  const int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  return errno != EEXIST;
}

}  // namespace

void Warn(std::string_view message) { Print("warning: ", message); }

void Info(std::string_view message) { Print("", message); }

void WarnOnce(std::string_view key, std::string_view message) {
  static std::mutex* mutex = new std::mutex();
  static auto* seen = new std::set<std::string, std::less<>>();
  {
    std::lock_guard<std::mutex> lock(*mutex);
    if (!seen->emplace(key).second) return;
  }
  if (FirstInJob(message)) Warn(message);
}

}  // namespace smprof::internal

#include "runtime/warnings.h"

#include <cstdio>
#include <mutex>
#include <set>

namespace smprof::internal {

namespace {

void Print(std::string_view kind, std::string_view message) {
  std::string line = "smprof: ";
  line.append(kind).append(message).append("\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
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
  Warn(message);
}

}  // namespace smprof::internal

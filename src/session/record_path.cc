#include "session/record_path.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace smprof::internal {

namespace {

std::string SafeComponent(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

std::string UtcTime(std::int64_t realtime_ns) {
  const std::time_t seconds = static_cast<std::time_t>(realtime_ns / 1000000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%04d%02d%02dT%02d%02d%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>((realtime_ns / 1000) % 1000000));
  return buffer;
}

}  // namespace

std::string ExpandRecordPath(const std::string& pattern, const RankInfo& rank, const RecordPathFields& fields) {
  std::string path;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      path += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'p':
        path += std::to_string(fields.pid);
        break;
      case 't':
        path += UtcTime(fields.start_realtime_ns);
        break;
      case 'r':
        path += std::to_string(rank.rank);
        break;
      case 'l':
        path += std::to_string(rank.local_rank);
        break;
      case 'h':
        path += SafeComponent(rank.host);
        break;
      case 'j':
        path += SafeComponent(rank.job);
        break;
      case 's':
        path += std::to_string(fields.session_index);
        break;
      default:
        path += pattern[i];
        break;  // "%%"; validation rejects other codes
    }
  }
  return path;
}

std::string RotatedPath(const std::string& first_path, std::uint32_t file_index) {
  if (file_index == 0) return first_path;
  char index[16];
  std::snprintf(index, sizeof(index), ".%04u", file_index);
  const std::size_t name_start = first_path.rfind('/') + 1;  // npos + 1 == 0
  const std::size_t dot = first_path.rfind('.');
  // A dot that starts the name (".hidden") is not an extension.
  if (dot == std::string::npos || dot <= name_start) return first_path + index;
  return first_path.substr(0, dot) + index + first_path.substr(dot);
}

bool MakeParentDirectories(const std::string& path, std::string* error) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = "cannot create directory '" + dir + "': " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

}  // namespace smprof::internal

#include "collectors/cpu/proc_stat.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace smprof::internal {

namespace {

// Splits `text` into lines without copying.
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    fn(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

bool NextNumber(std::string_view* rest, std::uint64_t* value) {
  std::size_t i = 0;
  while (i < rest->size() && (*rest)[i] == ' ') ++i;
  if (i == rest->size() || (*rest)[i] < '0' || (*rest)[i] > '9') return false;
  std::uint64_t v = 0;
  while (i < rest->size() && (*rest)[i] >= '0' && (*rest)[i] <= '9')
    v = v * 10 + static_cast<std::uint64_t>((*rest)[i++] - '0');
  rest->remove_prefix(i);
  *value = v;
  return true;
}

}  // namespace

std::vector<CpuTimes> ParseProcStat(std::string_view text) {
  std::vector<CpuTimes> cpus;
  ForEachLine(text, [&cpus](std::string_view line) {
    if (line.substr(0, 3) != "cpu") return;
    std::size_t name_end = line.find(' ');
    if (name_end == std::string_view::npos) return;
    CpuTimes t;
    if (name_end > 3) {
      std::string_view digits = line.substr(3, name_end - 3);
      std::uint64_t n = 0;
      if (!NextNumber(&digits, &n) || !digits.empty()) return;
      t.cpu = static_cast<int>(n);
    }
    std::string_view rest = line.substr(name_end);
    std::uint64_t* fields[] = {&t.user, &t.nice, &t.system, &t.idle, &t.iowait, &t.irq, &t.softirq, &t.steal};
    int parsed = 0;
    for (std::uint64_t* field : fields) {
      if (!NextNumber(&rest, field)) break;
      ++parsed;
    }
    if (parsed >= 4) cpus.push_back(t);  // old kernels stop after idle
  });
  return cpus;
}

bool ComputeShares(const CpuTimes& before, const CpuTimes& after, CpuShares* shares) {
  // Counters can go backwards when a CPU goes offline and back; skip that interval.
  if (after.total() <= before.total()) return false;
  const auto delta = [](std::uint64_t a, std::uint64_t b) { return b >= a ? static_cast<double>(b - a) : 0.0; };
  const double total = static_cast<double>(after.total() - before.total());
  const double idle = delta(before.idle, after.idle);
  const double iowait = delta(before.iowait, after.iowait);
  shares->user = 100.0 * (delta(before.user, after.user) + delta(before.nice, after.nice)) / total;
  shares->system =
      100.0 *
      (delta(before.system, after.system) + delta(before.irq, after.irq) + delta(before.softirq, after.softirq)) /
      total;
  shares->iowait = 100.0 * iowait / total;
  shares->idle = 100.0 * idle / total;
  shares->utilization = 100.0 - shares->idle - shares->iowait;
  if (shares->utilization < 0) shares->utilization = 0;
  return true;
}

bool ParseProcessStat(std::string_view text, ProcessStat* stat) {
  // The command name (field 2) may hold spaces and parentheses: fields are
  // counted from after its last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  std::string_view rest = text.substr(close + 1);
  // After ')': field 3 (state) is a letter, then numeric fields 4, 5, ...
  std::size_t i = 0;
  while (i < rest.size() && rest[i] == ' ') ++i;
  if (i == rest.size()) return false;
  rest.remove_prefix(i + 1);
  std::uint64_t values[22] = {};  // fields 4..25
  for (std::uint64_t& v : values) {
    while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    if (!rest.empty() && rest[0] == '-') rest.remove_prefix(1);  // negative fields (e.g. tty) are not used
    if (!NextNumber(&rest, &v)) return false;
  }
  stat->utime_ticks = values[14 - 4];
  stat->stime_ticks = values[15 - 4];
  stat->threads = static_cast<std::int64_t>(values[20 - 4]);
  stat->rss_pages = static_cast<std::int64_t>(values[24 - 4]);
  return true;
}

bool ParseMeminfo(std::string_view text, std::uint64_t* total_bytes, std::uint64_t* available_bytes) {
  bool have_total = false, have_available = false;
  ForEachLine(text, [&](std::string_view line) {
    const auto read_kib = [&line](std::string_view key, std::uint64_t* out) {
      if (line.substr(0, key.size()) != key) return false;
      std::string_view rest = line.substr(key.size());
      std::uint64_t kib = 0;
      if (!NextNumber(&rest, &kib)) return false;
      *out = kib * 1024;
      return true;
    };
    have_total = read_kib("MemTotal:", total_bytes) || have_total;
    have_available = read_kib("MemAvailable:", available_bytes) || have_available;
  });
  return have_total && have_available;
}

std::string ReadProcFile(const char* path) {
  std::string text;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[8192];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

}  // namespace smprof::internal

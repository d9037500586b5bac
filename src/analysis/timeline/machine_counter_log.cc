#include "analysis/timeline/machine_counter_log.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "analysis/base/partial_codec.h"

namespace smprof::analysis {

namespace {

constexpr std::size_t kSampleBytes = 4 + 8 + 8;

struct ReadFile {
  std::FILE* file;
  ~ReadFile() {
    if (file != nullptr) std::fclose(file);
  }
};

}  // namespace

Status MachineCounterLog::Create(const std::string& path, std::unique_ptr<MachineCounterLog>* out) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return Status(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  out->reset(new MachineCounterLog(path, file));
  return Status::Ok();
}

MachineCounterLog::~MachineCounterLog() {
  if (file_ != nullptr) Close();
}

void MachineCounterLog::Write(const void* data, std::size_t size) {
  if (error_.empty() && std::fwrite(data, 1, size, file_) != size) {
    error_ = "cannot write " + path_ + ": " + std::strerror(errno);
  }
  offset_ += size;
}

std::uint32_t MachineCounterLog::Series(std::uint32_t process, std::uint32_t host_process, std::string_view name,
                                        std::string_view unit) {
  const auto [it, inserted] =
      index_.try_emplace({process, std::string(name)}, static_cast<std::uint32_t>(series_.size()));
  if (inserted) series_.push_back({process, host_process, std::string(name), std::string(unit)});
  return it->second;
}

void MachineCounterLog::Add(std::uint32_t series, std::int64_t wall_ns, double value) {
  unsigned char sample[kSampleBytes];
  std::memcpy(sample, &series, 4);
  std::memcpy(sample + 4, &wall_ns, 8);
  std::memcpy(sample + 12, &value, 8);
  Write(sample, sizeof sample);
}

Status MachineCounterLog::Close() {
  if (file_ == nullptr) return Status(StatusCode::kFailedPrecondition, path_ + " is already closed");
  const std::uint64_t table_offset = offset_;
  PartialEncoder table;
  table.Uint(series_.size());
  for (const MachineCounterSeries& s : series_) {
    table.Uint(s.process);
    table.Uint(s.host_process);
    table.String(s.name);
    table.String(s.unit);
  }
  Write(table.bytes().data(), table.bytes().size());
  Write(&table_offset, sizeof table_offset);
  if (std::fclose(file_) != 0 && error_.empty()) error_ = "cannot close " + path_ + ": " + std::strerror(errno);
  file_ = nullptr;
  if (!error_.empty()) return Status(StatusCode::kIoError, error_);
  return Status::Ok();
}

Status ReadMachineCounterLog(const std::string& path, std::vector<MachineCounterSeries>* series,
                             const std::function<void(std::uint32_t, std::int64_t, double)>& sample) {
  const Status damaged(StatusCode::kIoError, path + " is not a machine counter log");
  ReadFile in{std::fopen(path.c_str(), "rb")};
  if (in.file == nullptr) return Status(StatusCode::kIoError, "cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  std::uint64_t table_offset = 0;
  if (::fstat(fileno(in.file), &st) != 0 || st.st_size < 8 || std::fseek(in.file, st.st_size - 8, SEEK_SET) != 0 ||
      std::fread(&table_offset, 8, 1, in.file) != 1 || table_offset > static_cast<std::uint64_t>(st.st_size) - 8 ||
      table_offset % kSampleBytes != 0) {
    return damaged;
  }
  std::string table(static_cast<std::size_t>(st.st_size) - 8 - table_offset, '\0');
  if (std::fseek(in.file, static_cast<long>(table_offset), SEEK_SET) != 0 ||
      std::fread(table.data(), 1, table.size(), in.file) != table.size()) {
    return damaged;
  }
  series->clear();
  try {
    PartialDecoder in_table(table);
    for (std::size_t n = in_table.Count(); n > 0; --n) {
      MachineCounterSeries& s = series->emplace_back();
      s.process = static_cast<std::uint32_t>(in_table.Uint());
      s.host_process = static_cast<std::uint32_t>(in_table.Uint());
      s.name = in_table.String();
      s.unit = in_table.String();
    }
    if (!in_table.done()) return damaged;
  } catch (const std::invalid_argument&) {
    return damaged;
  }
  if (!sample) return Status::Ok();
  if (std::fseek(in.file, 0, SEEK_SET) != 0) return damaged;
  std::vector<unsigned char> chunk(kSampleBytes * 8192);
  for (std::uint64_t left = table_offset / kSampleBytes; left > 0;) {
    const std::size_t n = std::fread(chunk.data(), kSampleBytes, std::min<std::uint64_t>(left, 8192), in.file);
    if (n == 0) return damaged;
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned char* s = chunk.data() + i * kSampleBytes;
      std::uint32_t index;
      std::int64_t wall_ns;
      double value;
      std::memcpy(&index, s, 4);
      std::memcpy(&wall_ns, s + 4, 8);
      std::memcpy(&value, s + 12, 8);
      if (index >= series->size()) return damaged;
      sample(index, wall_ns, value);
    }
    left -= n;
  }
  return Status::Ok();
}

}  // namespace smprof::analysis

// MachineCounterLog: the machine-wide counters of the processes a timeline
// part holds, kept aside while the part is written. Every rank of a host
// records the same machine counters (CPU shares, machine memory, per-CPU
// perf counts) and the timeline shows each once, on the host's process, from
// the first process in export order that recorded it: which one that is, a
// worker writing one part cannot know. The assembly (timeline_export.h)
// reads every part's log in order and keeps each host's first series of each
// counter.
//
// The file: the samples {u32 series, i64 wall ns, f64 value} as they came,
// then the series {process, host process, name, unit} in the order they were
// first seen (partial_codec.h's encoding), then the byte offset of that table
// (u64). Written and read by the same build on one machine, so in its byte
// order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smprof/status.h"

namespace smprof::analysis {

struct MachineCounterSeries {
  std::uint32_t process = 0;       // the timeline process that recorded it
  std::uint32_t host_process = 0;  // its host's timeline process
  std::string name;
  std::string unit;
};

class MachineCounterLog {
 public:
  static Status Create(const std::string& path, std::unique_ptr<MachineCounterLog>* out);
  ~MachineCounterLog();
  MachineCounterLog(const MachineCounterLog&) = delete;
  MachineCounterLog& operator=(const MachineCounterLog&) = delete;

  // The index in this log of the counter `name` as `process` recorded it.
  std::uint32_t Series(std::uint32_t process, std::uint32_t host_process, std::string_view name, std::string_view unit);
  void Add(std::uint32_t series, std::int64_t wall_ns, double value);
  // Writes the series table; the first write error, if any.
  Status Close();

 private:
  MachineCounterLog(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  void Write(const void* data, std::size_t size);

  std::string path_;
  std::FILE* file_;
  std::vector<MachineCounterSeries> series_;
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> index_;
  std::uint64_t offset_ = 0;
  std::string error_;
};

// Reads a closed log: `series` gets its series table, then `sample` (when
// given) each sample in the order it was added.
Status ReadMachineCounterLog(
    const std::string& path, std::vector<MachineCounterSeries>* series,
    const std::function<void(std::uint32_t series, std::int64_t wall_ns, double value)>& sample);

}  // namespace smprof::analysis

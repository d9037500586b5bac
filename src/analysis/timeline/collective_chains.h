// CollectiveChains: for each collective instance of a timeline export
// (CollectiveFlowId), the rank process that arrived first and the one that
// arrived last, among the calls inside the export's window. The Chrome
// export needs them to chain an instance's slices with one flow from the
// first arriver to the last (a JSON flow must say which of its events begins
// it and which ends it; the Perfetto export's flow ids need no such thing).
// Found once for the export, before the rank processes are walked (the
// parallel export hands it to its workers as bytes).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "analysis/timeline/timeline_walker.h"

namespace smprof::analysis {

class CollectiveChains {
 public:
  // Reads the collectives of `plan`'s rank processes inside `options`' window.
  static CollectiveChains Read(const TimelinePlan& plan, const TimelineOptions& options);

  // A call of instance `flow_id` by rank process `process` (TimelineProcess::id) at `wall_ns`.
  void Add(std::uint64_t flow_id, std::uint32_t process, std::int64_t wall_ns);
  // None for an instance only one process of the export has.
  ChainRole RoleOf(std::uint64_t flow_id, std::uint32_t process) const;
  std::size_t size() const { return ends_.size(); }

  // For the workers of a parallel export; Parse throws std::invalid_argument on damaged bytes.
  std::string Serialize() const;
  static CollectiveChains Parse(const std::string& bytes);

 private:
  struct Arrival {
    std::int64_t wall_ns = 0;
    std::uint32_t process = 0;
    bool operator<(const Arrival& other) const {
      return wall_ns != other.wall_ns ? wall_ns < other.wall_ns : process < other.process;
    }
  };
  struct Ends {
    Arrival first;
    Arrival last;
  };
  std::unordered_map<std::uint64_t, Ends> ends_;
};

}  // namespace smprof::analysis

#include "analysis/timeline/collective_chains.h"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "trace/collective_codec.h"
#include "trace/frame_rows.h"
#include "trace/trace_reader.h"

namespace smprof::analysis {

CollectiveChains CollectiveChains::Read(const TimelinePlan& plan, const TimelineOptions& options) {
  CollectiveChains chains;
  std::vector<internal::CollectiveRow> rows;
  internal::FrameRows frame;
  for (const TimelineGroup& group : plan.groups) {
    for (const ProcessStream* stream : group.streams) {
      for (const TraceFileEntry& file : stream->files) {
        std::unique_ptr<internal::TraceReader> reader;
        if (!internal::TraceReader::Open(file.path, &reader).ok()) continue;  // the walk reports it
        while (reader->NextFrame(&frame)) {
          if (!frame.tables().has_collectives()) continue;
          rows.clear();
          if (!internal::DecodeCollectives(frame, &rows).ok()) continue;
          for (const internal::CollectiveRow& row : rows) {
            const std::int64_t wall = row.start_ns + file.wall_offset_ns;
            // The walk's window test (GroupWalker::InWindow): only slices it writes take part.
            if (wall > options.window_end_wall_ns || wall + row.call_dur_ns < options.window_start_wall_ns) continue;
            chains.Add(CollectiveFlowId(row.group, row.sequence), group.process.id, wall);
          }
        }
      }
    }
  }
  return chains;
}

void CollectiveChains::Add(std::uint64_t flow_id, std::uint32_t process, std::int64_t wall_ns) {
  const Arrival arrival{wall_ns, process};
  const auto [it, added] = ends_.try_emplace(flow_id, Ends{arrival, arrival});
  if (added) return;
  if (arrival < it->second.first) it->second.first = arrival;
  if (it->second.last < arrival) it->second.last = arrival;
}

ChainRole CollectiveChains::RoleOf(std::uint64_t flow_id, std::uint32_t process) const {
  const auto it = ends_.find(flow_id);
  if (it == ends_.end() || it->second.first.process == it->second.last.process) return ChainRole::kNone;
  if (process == it->second.first.process) return ChainRole::kBegin;
  return process == it->second.last.process ? ChainRole::kEnd : ChainRole::kStep;
}

namespace {

constexpr std::size_t kEntryBytes = 8 + 2 * (8 + 4);  // flow id, then first and last: wall ns, process

template <typename T>
void Put(std::string* out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

template <typename T>
T Get(const char*& at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  at += sizeof(T);
  return value;
}

}  // namespace

std::string CollectiveChains::Serialize() const {
  std::string out;
  out.reserve(ends_.size() * kEntryBytes);
  for (const auto& [id, ends] : ends_) {
    Put(&out, id);
    for (const Arrival& a : {ends.first, ends.last}) {
      Put(&out, a.wall_ns);
      Put(&out, a.process);
    }
  }
  return out;
}

CollectiveChains CollectiveChains::Parse(const std::string& bytes) {
  if (bytes.size() % kEntryBytes != 0) throw std::invalid_argument("collective chains damaged: a partial entry");
  CollectiveChains chains;
  const char* at = bytes.data();
  for (std::size_t n = bytes.size() / kEntryBytes; n > 0; --n) {
    const auto id = Get<std::uint64_t>(at);
    Ends ends;
    for (Arrival* a : {&ends.first, &ends.last}) {
      a->wall_ns = Get<std::int64_t>(at);
      a->process = Get<std::uint32_t>(at);
    }
    chains.ends_[id] = ends;
  }
  return chains;
}

}  // namespace smprof::analysis

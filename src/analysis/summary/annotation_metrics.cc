#include "analysis/summary/annotation_metrics.h"

#include <algorithm>

#include "analysis/job/stream_order.h"

namespace smprof::analysis {

void AnnotationMetrics::BeginStream(const ProcessStream& stream) {
  streams_.push_back(std::make_unique<StreamSteps>());
  stream_ = streams_.back().get();
  stream_->host = stream.host;
  stream_->rank = stream.rank;
  stream_->pid = stream.pid;
}

AnnotationMetrics::NameSlot* AnnotationMetrics::SlotFor(std::string_view name) {
  auto& slot = names_[std::string(name)];
  if (!slot) {
    slot = std::make_unique<NameSlot>();
    slot->is_step = steps_matcher_.Match(name, &slot->step_number);
  }
  return slot.get();
}

bool AnnotationMetrics::AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span,
                                 std::string* error) {
  if (!frame.annotations_status.ok()) {
    *error = frame.annotations_status.message();
    return false;
  }
  const auto& rows = frame.annotations;
  if (rows.empty()) return true;
  // One name lookup per name and frame, not per row.
  frame_slots_.assign(frame.strings.size(), nullptr);
  std::int64_t end = INT64_MIN;
  for (const auto& row : rows) {
    NameSlot*& slot = frame_slots_[row.name_index];
    if (slot == nullptr) slot = SlotFor(row.name);
    slot->durations.Add(row.dur_ns);
    if (slot->is_step) stream_->steps.Add(row.dur_ns);
    end = std::max(end, row.start_ns + row.dur_ns);
  }
  stream_->annotations += rows.size();
  span->Extend(rows.front().start_ns + file.wall_offset_ns, end + file.wall_offset_ns);
  return true;
}

void AnnotationMetrics::Save(PartialEncoder& out) const {
  std::vector<std::pair<const std::string*, const NameSlot*>> by_name;  // sorted: the same state, the same bytes
  for (const auto& [name, slot] : names_) by_name.emplace_back(&name, slot.get());
  std::sort(by_name.begin(), by_name.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  out.Uint(by_name.size());
  for (const auto& [name, slot] : by_name) {
    out.String(*name);
    slot->durations.Save(out);
  }
  out.Uint(streams_.size());
  for (const auto& s : streams_) {
    out.String(s->host);
    out.Int(s->rank);
    out.Int(s->pid);
    out.Uint(s->annotations);
    s->steps.Save(out);
  }
}

void AnnotationMetrics::MergeFrom(PartialDecoder& in) {
  for (std::size_t n = in.Count(); n > 0; --n) SlotFor(in.String())->durations.MergeFrom(in);
  for (std::size_t n = in.Count(); n > 0; --n) {
    auto s = std::make_unique<StreamSteps>();
    s->host = in.String();
    s->rank = static_cast<std::int32_t>(in.Int());
    s->pid = in.Int();
    s->annotations = in.Uint();
    s->steps.MergeFrom(in);
    streams_.push_back(std::move(s));
  }
  stream_ = nullptr;
}

void AnnotationMetrics::ReorderStreams(const std::vector<std::size_t>& order) { Reorder(streams_, order); }

void AnnotationMetrics::WriteAnnotations(JsonWriter& out) const {
  std::vector<std::pair<const std::string*, const LogHistogram*>> sorted;
  for (const auto& [name, slot] : names_) sorted.emplace_back(&name, &slot->durations);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second->total() != b.second->total()) return a.second->total() > b.second->total();
    return *a.first < *b.first;
  });
  out.BeginArray();
  for (const auto& [name, durations] : sorted) {
    out.BeginObject().Field("name", *name).Key("stats");
    WriteStats(*durations, out);
    out.EndObject();
  }
  out.EndArray();
}

void AnnotationMetrics::WriteSteps(const std::string& pattern, JsonWriter& out) const {
  LogHistogram all;
  const StreamSteps* slowest = nullptr;
  for (const auto& s : streams_) {
    all.Merge(s->steps);
    if (s->steps.count() > 0 && (slowest == nullptr || s->steps.mean() > slowest->steps.mean())) slowest = s.get();
  }
  out.BeginObject().Field("pattern", pattern).Key("stats");
  WriteStats(all, out);
  out.Key("per_rank").BeginArray();
  for (const auto& s : streams_) {
    out.BeginObject().Field("host", s->host).Field("rank", s->rank).Field("pid", s->pid).Key("stats");
    WriteStats(s->steps, out);
    out.EndObject();
  }
  out.EndArray();
  out.Key("slowest_rank");
  if (slowest == nullptr) {
    out.Null();
  } else {
    out.BeginObject()
        .Field("host", slowest->host)
        .Field("rank", slowest->rank)
        .Field("pid", slowest->pid)
        .Field("mean_ns", slowest->steps.mean())
        .EndObject();
  }
  out.EndObject();
}

}  // namespace smprof::analysis

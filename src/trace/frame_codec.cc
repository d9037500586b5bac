#include "trace/frame_codec.h"

#include <algorithm>
#include <cmath>

namespace smprof::internal {

void FrameTables::Reset(trace::Frame* frame) {
  frame_ = frame;
  for (smprof::NameId id : names_used_) name_slots_[id] = 0;
  names_used_.clear();
  text_index_.clear();
  thread_index_.clear();
  string_bytes_ = 0;
}

std::uint32_t FrameTables::Name(smprof::NameId id) {
  if (id >= name_slots_.size()) name_slots_.resize(static_cast<std::size_t>(id) + 1, 0);
  std::uint32_t& slot = name_slots_[id];
  if (slot == 0) {
    slot = static_cast<std::uint32_t>(frame_->strings_size()) + 1;
    names_used_.push_back(id);
    frame_->add_strings(names_(id));
    string_bytes_ += frame_->strings(frame_->strings_size() - 1).size();
  }
  return slot - 1;
}

std::uint32_t FrameTables::Text(std::string_view text) {
  auto [it, added] = text_index_.try_emplace(std::string(text), frame_->strings_size());
  if (added) {
    frame_->add_strings(std::string(text));
    string_bytes_ += text.size();
  }
  return it->second;
}

std::uint32_t FrameTables::Thread(std::uint32_t tid) {
  auto [it, added] = thread_index_.try_emplace(tid, frame_->threads_size());
  if (added) {
    trace::Thread* thread = frame_->add_threads();
    thread->set_tid(tid);
    thread->set_name(thread_names_(tid));
  }
  return it->second;
}

void FrameBuilder::Build(std::uint64_t sequence, trace::Frame* frame, std::size_t limit) {
  frame->Clear();
  frame->set_sequence(sequence);
  // Frames are cut off the front in place: a large backlog costs linear time.
  const auto first = pending_.begin() + static_cast<std::ptrdiff_t>(head_);
  const auto last = first + static_cast<std::ptrdiff_t>(std::min(limit, size()));
  const auto by_start = [](const AnnotationRecord& a, const AnnotationRecord& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(first, last, by_start)) std::stable_sort(first, last, by_start);
  tables_.Reset(frame);
  trace::Annotations* columns = frame->mutable_annotations();
  const auto n = static_cast<int>(last - first);
  columns->mutable_start_delta_ns()->Reserve(n);
  columns->mutable_dur_ns()->Reserve(n);
  columns->mutable_name_index()->Reserve(n);
  columns->mutable_thread_index()->Reserve(n);
  columns->mutable_depth()->Reserve(n);
  std::int64_t previous = n > 0 ? first->start_ns : 0;
  columns->set_base_ns(previous);
  auto it = first;
  for (; it != last && tables_.string_bytes() < FrameTables::kStringBudgetBytes; ++it) {
    const AnnotationRecord& r = *it;
    columns->add_start_delta_ns(r.start_ns - previous);
    previous = r.start_ns;
    columns->add_dur_ns(static_cast<std::uint64_t>(std::max<std::int64_t>(r.dur_ns, 0)));
    columns->add_name_index(tables_.Name(r.name));
    columns->add_thread_index(tables_.Thread(r.tid));
    columns->add_depth(r.depth);
  }
  head_ += static_cast<std::size_t>(it - first);
  if (head_ == pending_.size()) {
    pending_.clear();
    head_ = 0;
  } else if (head_ * 2 >= pending_.size()) {
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

Status DecodeAnnotations(const trace::Frame& frame, std::vector<AnnotationRow>* rows) {
  const trace::Annotations& a = frame.annotations();
  const int n = a.start_delta_ns_size();
  const auto bad = [&frame](const std::string& what) {
    return Status(StatusCode::kInternal,
                  "frame " + std::to_string(frame.sequence()) + ": malformed annotations (" + what + ")");
  };
  if (a.dur_ns_size() != n || a.name_index_size() != n || a.thread_index_size() != n || a.depth_size() != n) {
    return bad("columns of different lengths");
  }
  rows->reserve(rows->size() + static_cast<std::size_t>(n));
  std::int64_t start = a.base_ns();
  for (int i = 0; i < n; ++i) {
    start += a.start_delta_ns(i);
    const std::uint32_t name = a.name_index(i);
    const std::uint32_t thread = a.thread_index(i);
    if (name >= static_cast<std::uint32_t>(frame.strings_size())) return bad("name_index out of range");
    if (thread >= static_cast<std::uint32_t>(frame.threads_size())) return bad("thread_index out of range");
    rows->push_back(AnnotationRow{start, static_cast<std::int64_t>(a.dur_ns(i)), frame.strings(static_cast<int>(name)),
                                  frame.threads(static_cast<int>(thread)).tid(), a.depth(i), name});
  }
  return Status::Ok();
}

void EncodeCounters(std::vector<CounterSample> samples, const TrackLookup& tracks, trace::Frame* frame) {
  std::stable_sort(samples.begin(), samples.end(), [](const CounterSample& a, const CounterSample& b) {
    return a.track != b.track ? a.track < b.track : a.ts_ns < b.ts_ns;
  });
  trace::CounterSeries* series = nullptr;
  std::uint32_t current = 0;
  double resolution = 1.0;
  std::int64_t previous_ts = 0;
  std::int64_t previous_value = 0;
  for (const CounterSample& sample : samples) {
    if (series == nullptr || sample.track != current) {
      const CounterTrackInfo info = tracks(sample.track);
      trace::CounterTrack* track = frame->add_counter_tracks();
      track->set_name(info.name);
      track->set_unit(info.unit);
      track->set_resolution(info.resolution);
      series = frame->add_counters();
      series->set_track_index(static_cast<std::uint32_t>(frame->counter_tracks_size() - 1));
      current = sample.track;
      resolution = info.resolution > 0 ? info.resolution : 1.0;
      previous_ts = 0;
      previous_value = 0;
    }
    const auto value = static_cast<std::int64_t>(std::llround(sample.value / resolution));
    series->add_ts_delta_ns(sample.ts_ns - previous_ts);
    series->add_value_delta(value - previous_value);
    previous_ts = sample.ts_ns;
    previous_value = value;
  }
}

Status DecodeCounters(const trace::Frame& frame, std::vector<CounterRow>* rows) {
  for (const trace::CounterSeries& series : frame.counters()) {
    if (series.track_index() >= static_cast<std::uint32_t>(frame.counter_tracks_size()) ||
        series.ts_delta_ns_size() != series.value_delta_size()) {
      return Status(StatusCode::kInternal, "frame " + std::to_string(frame.sequence()) + ": malformed counter series");
    }
    const trace::CounterTrack& track = frame.counter_tracks(static_cast<int>(series.track_index()));
    const double resolution = track.resolution() > 0 ? track.resolution() : 1.0;
    std::int64_t ts = 0;
    std::int64_t value = 0;
    for (int i = 0; i < series.ts_delta_ns_size(); ++i) {
      ts += series.ts_delta_ns(i);
      value += series.value_delta(i);
      rows->push_back(CounterRow{ts, static_cast<double>(value) * resolution, track.name(), track.unit()});
    }
  }
  return Status::Ok();
}

}  // namespace smprof::internal

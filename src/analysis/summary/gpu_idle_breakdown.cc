#include "analysis/summary/gpu_idle_breakdown.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "analysis/job/stream_order.h"
#include "analysis/summary/communication_launch.h"

namespace smprof::analysis {

namespace {

// Sweeps wait for this many pending intervals, so each walks a batch (a sweep also costs per track).
constexpr std::size_t kSweepBatch = 4096;

// (A compare of the prefix's length, known where it is inlined: no call to memcmp per GPU row.)
bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && std::memcmp(text.data(), prefix.data(), prefix.size()) == 0;
}

double Share(std::int64_t part, std::int64_t total) {
  return total > 0 ? static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

void WriteIdleCauses(const GpuIdleTotals& t, JsonWriter& out) {
  out.Field("step_time_ns", t.step_ns)
      .Field("idle_ns", t.idle_ns())
      .Field("idle_share", Share(t.idle_ns(), t.step_ns))
      .Field("launch_bound_ns", t.launch_bound_ns)
      .Field("data_wait_ns", t.data_wait_ns)
      .Field("sync_ns", t.sync_ns)
      .Field("communication_ns", t.communication_ns)
      .Field("unexplained_ns", t.unexplained_ns);
}

void WriteOverlapTimes(const GpuIdleTotals& t, JsonWriter& out) {
  out.Field("copy_ns", t.copy_ns)
      .Field("copy_exposed_ns", t.copy_exposed_ns)
      .Field("communication_ns", t.communication_total_ns)
      .Field("communication_exposed_ns", t.communication_exposed_ns);
}

// Every field of `t` but the device id, in a fixed order.
void SaveIdleTimes(const GpuIdleTotals& t, PartialEncoder& out) {
  for (const std::int64_t ns :
       {t.step_ns, t.launch_bound_ns, t.data_wait_ns, t.sync_ns, t.communication_ns, t.unexplained_ns, t.copy_ns,
        t.copy_exposed_ns, t.communication_total_ns, t.communication_exposed_ns}) {
    out.Int(ns);
  }
}

void RestoreIdleTimes(PartialDecoder& in, GpuIdleTotals* t) {
  for (std::int64_t* ns :
       {&t->step_ns, &t->launch_bound_ns, &t->data_wait_ns, &t->sync_ns, &t->communication_ns, &t->unexplained_ns,
        &t->copy_ns, &t->copy_exposed_ns, &t->communication_total_ns, &t->communication_exposed_ns}) {
    *ns = in.Int();
  }
}

}  // namespace

ApiCallRole ApiCallRoleOf(std::string_view name) {
  for (const std::string_view launch : {"cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch"}) {
    if (StartsWith(name, launch)) return ApiCallRole::kLaunch;
  }
  if (name.find("Synchronize") != std::string_view::npos) return ApiCallRole::kSync;
  // Blocking copies: cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD_v2, ... but not the *Async ones.
  if ((StartsWith(name, "cudaMemcpy") || StartsWith(name, "cuMemcpy")) &&
      name.find("Async") == std::string_view::npos) {
    return ApiCallRole::kSync;
  }
  return ApiCallRole::kOther;
}

GpuIdleBreakdown::GpuIdleBreakdown(const SummaryOptions& options)
    : options_(options), steps_(options.step_pattern), data_wait_(DataWaitRegex(options.data_wait_pattern)) {}

void GpuIdleBreakdown::BeginStream(const ProcessStream& stream) {
  streams_.push_back(std::make_unique<Stream>());
  stream_ = streams_.back().get();
  stream_->host = stream.host;
  stream_->rank = stream.rank;
  stream_->pid = stream.pid;
  open_.clear();
  open_.resize(kCompute);
  pending_ends_.clear();
  last_device_ = 0;
  swept_ns_ = INT64_MIN;
  newest_ns_ = INT64_MIN;
  longest_step_ns_ = 0;
}

GpuIdleBreakdown::AnnotationRole GpuIdleBreakdown::RoleOf(std::string_view name) {
  std::int64_t number = 0;
  if (steps_.Match(name, &number)) return AnnotationRole::kStep;
  auto [it, added] = data_wait_names_.try_emplace(std::string(name), false);
  if (added) it->second = std::regex_match(it->first, data_wait_);
  return it->second ? AnnotationRole::kDataWait : AnnotationRole::kOther;
}

std::uint32_t GpuIdleBreakdown::DeviceIndex(std::uint32_t id) {
  if (!stream_->devices.empty() && stream_->devices[last_device_].id == id) return last_device_;
  auto [it, added] = stream_->device_index.try_emplace(id, static_cast<std::uint32_t>(stream_->devices.size()));
  if (added) {
    stream_->devices.push_back(GpuIdleTotals{id});
    open_.resize(kCompute + kDeviceTracks * stream_->devices.size());
  }
  last_device_ = it->second;
  return it->second;
}

void GpuIdleBreakdown::Add(std::int64_t start_ns, std::int64_t end_ns, Track track, std::uint32_t device) {
  if (end_ns <= start_ns) return;
  if (start_ns < swept_ns_) {
    ++late_intervals_;
    if (end_ns <= swept_ns_) return;
  }
  newest_ns_ = std::max(newest_ns_, start_ns);
  start_ns = std::max(start_ns, swept_ns_);  // a late one counts from the frontier on
  pending_ends_.push_back(end_ns);
  open_[track < kCompute ? track : kCompute + kDeviceTracks * device + (track - kCompute)].Add(start_ns, end_ns);
}

void GpuIdleBreakdown::AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame) {
  const std::int64_t offset = file.wall_offset_ns;
  if (frame.annotations_status.ok()) {
    // One name lookup per name and frame, not per row.
    frame_roles_.assign(frame.strings.size(), AnnotationRole::kUnknown);
    for (const auto& row : frame.annotations) {
      AnnotationRole& role = frame_roles_[row.name_index];
      if (role == AnnotationRole::kUnknown) role = RoleOf(row.name);
      const std::int64_t start = row.start_ns + offset;
      if (role == AnnotationRole::kStep) {
        ++stream_->steps;
        longest_step_ns_ = std::max(longest_step_ns_, row.dur_ns);
        Add(start, start + row.dur_ns, kStep);
      } else if (role == AnnotationRole::kDataWait) {
        Add(start, start + row.dur_ns, kDataWait);
      }
    }
  }
  if (frame.has_api_calls && frame.api_calls_status.ok()) {
    // Names point into the frame's strings: a name at the same place is the same name.
    std::string_view name;
    ApiCallRole role = ApiCallRoleOf(name);
    for (const auto& call : frame.api_calls) {
      if (call.name.data() != name.data() || call.name.size() != name.size()) {
        name = call.name;
        role = ApiCallRoleOf(name);
      }
      if (role == ApiCallRole::kOther) continue;
      const std::int64_t start = call.start_ns + offset;
      Add(start, start + call.dur_ns, role == ApiCallRole::kLaunch ? kLaunch : kSync);
    }
  }
  if (frame.has_gpu && frame.gpu_status.ok()) {
    for (const auto& row : frame.gpu) {
      const std::int64_t start = row.start_ns + offset;
      switch (row.kind) {
        case trace::GPU_KIND_KERNEL: {
          Add(start, start + row.dur_ns, IsCommunicationKernel(row) ? kCommunication : kCompute,
              DeviceIndex(row.device));
          break;
        }
        case trace::GPU_KIND_MEMSET:
          Add(start, start + row.dur_ns, kCompute, DeviceIndex(row.device));
          break;
        case trace::GPU_KIND_MEMCPY:
          Add(start, start + row.dur_ns, kCopy, DeviceIndex(row.device));
          break;
        case trace::GPU_KIND_SYNC:
          Add(start, start + row.dur_ns, kSync);
          break;
        default:
          break;
      }
    }
  }
  SweepIfDue();
}

void GpuIdleBreakdown::SweepIfDue() {
  if (pending_ends_.size() < kSweepBatch) return;
  std::int64_t frontier = newest_ns_ - options_.reorder_window_ns - longest_step_ns_;
  if (pending_ends_.size() > options_.max_pending) {
    // Bounded: the half that ends first is swept even if later rows may still
    // reach back into it (every pending interval ends after swept_ns_).
    auto middle = pending_ends_.begin() + static_cast<std::ptrdiff_t>(pending_ends_.size() / 2);
    std::nth_element(pending_ends_.begin(), middle, pending_ends_.end());
    frontier = std::max(frontier, *middle);
  }
  if (frontier > swept_ns_) SweepTo(frontier);
}

void GpuIdleBreakdown::SweepTo(std::int64_t frontier_ns) {
  // Each track's pending time is the union of its intervals (only "open or
  // not" matters), kept as disjoint segments as the intervals come. Per
  // device, the sweep walks its tracks' and the host's segments before the
  // frontier in time order, summing the time spent in each state; the tracks
  // keep what reaches past it.
  pending_ends_.erase(std::remove_if(pending_ends_.begin(), pending_ends_.end(),
                                     [frontier_ns](std::int64_t end) { return end <= frontier_ns; }),
                      pending_ends_.end());
  swept_ns_ = frontier_ns;
  walks_.resize(open_.size());
  for (std::size_t t = 0; t < open_.size(); ++t) open_[t].BeginSweep(frontier_ns, &walks_[t]);
  for (std::size_t d = 0; d < stream_->devices.size(); ++d) {
    // The tracks with segments before the frontier, each at its next change.
    // No branch on which changes (a guess missed at every other change):
    // every cursor compares with the time and moves by the result, and the
    // segment after its own is loaded ahead, out of the way of the next time.
    std::array<TrackCursor, kCompute + kDeviceTracks> cursors;
    std::size_t n = 0;
    const auto add = [&](std::size_t t, unsigned bit) {
      if (open_[t].swept == 0) return;
      const TrackTime::Segment* first = walks_[t].data();
      cursors[n++] = TrackCursor{first, first[0], first[1], first[0].start_ns, bit, 0};
    };
    for (std::size_t t = 0; t < kCompute; ++t) add(t, 1u << (kDeviceTracks + t));  // host tracks above the device's
    for (std::size_t t = 0; t < kDeviceTracks; ++t) add(kCompute + kDeviceTracks * d + t, 1u << t);
    if (n == 0) continue;
    state_ns_.fill(0);
    unsigned state = 0;
    std::int64_t previous = INT64_MAX;
    for (std::size_t i = 0; i < n; ++i) previous = std::min(previous, cursors[i].next_ns);
    for (;;) {
      std::int64_t now = INT64_MAX;
      for (std::size_t i = 0; i < n; ++i) now = std::min(now, cursors[i].next_ns);
      if (now == INT64_MAX) break;  // every cursor is on its walk's end mark
      state_ns_[state] += now - previous;
      previous = now;
      for (std::size_t i = 0; i < n; ++i) {
        TrackCursor& c = cursors[i];
        const unsigned hit = c.next_ns == now ? 1u : 0u;
        state ^= c.bit & (0u - hit);
        c.open ^= hit;
        const unsigned advance = hit & (c.open ^ 1u);  // closed: on to the next segment
        c.at += advance;
        c.segment = advance != 0 ? c.next : c.segment;
        c.next = c.at[1];
        c.next_ns = c.open != 0 ? c.segment.end_ns : c.segment.start_ns;
      }
    }
    for (unsigned st = 0; st < kStates; ++st) {
      if (state_ns_[st] != 0) AddStateTime(st, state_ns_[st], &stream_->devices[d]);
    }
  }
  for (TrackTime& track : open_) track.EndSweep(frontier_ns);
}

void GpuIdleBreakdown::TrackTime::Finish() {
  if (sorted) return;
  // Out of start order (late intervals): the union of the segments, sorted.
  std::sort(segments.begin(), segments.end(),
            [](const Segment& a, const Segment& b) { return a.start_ns < b.start_ns; });
  std::size_t united = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Segment segment = segments[i];
    if (united > 0 && segment.start_ns <= segments[united - 1].end_ns) {
      segments[united - 1].end_ns = std::max(segments[united - 1].end_ns, segment.end_ns);
    } else {
      segments[united++] = segment;
    }
  }
  segments.resize(united);
  sorted = true;
}

void GpuIdleBreakdown::TrackTime::BeginSweep(std::int64_t frontier_ns, std::vector<Segment>* walk) {
  Finish();
  swept = static_cast<std::size_t>(
      std::partition_point(segments.begin(), segments.end(),
                           [frontier_ns](const Segment& segment) { return segment.start_ns < frontier_ns; }) -
      segments.begin());
  walk->assign(segments.begin(), segments.begin() + static_cast<std::ptrdiff_t>(swept));
  if (swept > 0) walk->back().end_ns = std::min(walk->back().end_ns, frontier_ns);
  // Two end marks, segments that never start: a cursor on the first still loads the one after.
  walk->insert(walk->end(), 2, Segment{INT64_MAX, INT64_MAX});
}

void GpuIdleBreakdown::TrackTime::EndSweep(std::int64_t frontier_ns) {
  if (swept == 0) return;
  std::size_t done = swept;
  if (segments[done - 1].end_ns > frontier_ns) segments[--done].start_ns = frontier_ns;  // kept from the frontier on
  segments.pop_front(done);
  swept = 0;
}

void GpuIdleBreakdown::AddStateTime(unsigned state, std::int64_t length, GpuIdleTotals* totals) {
  const auto open = [state](Track track) {
    return (state >> (track < kCompute ? kDeviceTracks + track : track - kCompute) & 1) != 0;
  };
  const bool step = open(kStep);
  if (open(kCopy)) totals->copy_ns += length;
  if (open(kCommunication)) totals->communication_total_ns += length;
  if (step) totals->step_ns += length;
  if (open(kCompute)) return;
  if (open(kCopy)) totals->copy_exposed_ns += length;
  if (open(kCommunication)) totals->communication_exposed_ns += length;
  if (!step) return;
  if (open(kCommunication)) {
    totals->communication_ns += length;
  } else if (open(kCopy)) {
    // The copy engine works: not idle.
  } else if (open(kDataWait)) {
    totals->data_wait_ns += length;
  } else if (open(kSync)) {
    totals->sync_ns += length;
  } else if (open(kLaunch)) {
    totals->launch_bound_ns += length;
  } else {
    totals->unexplained_ns += length;
  }
}

void GpuIdleBreakdown::EndStream() {
  if (!pending_ends_.empty()) SweepTo(*std::max_element(pending_ends_.begin(), pending_ends_.end()));
}

void GpuIdleBreakdown::Save(PartialEncoder& out) const {
  if (!pending_ends_.empty()) throw std::logic_error("GpuIdleBreakdown::Save: inside a stream");
  out.Uint(late_intervals_);
  out.Uint(streams_.size());
  for (const auto& s : streams_) {
    out.String(s->host);
    out.Int(s->rank);
    out.Int(s->pid);
    out.Uint(s->steps);
    out.Uint(s->devices.size());
    for (const GpuIdleTotals& d : s->devices) {
      out.Uint(d.id);
      SaveIdleTimes(d, out);
    }
  }
}

void GpuIdleBreakdown::MergeFrom(PartialDecoder& in) {
  late_intervals_ += in.Uint();
  for (std::size_t n = in.Count(); n > 0; --n) {
    auto s = std::make_unique<Stream>();
    s->host = in.String();
    s->rank = static_cast<std::int32_t>(in.Int());
    s->pid = in.Int();
    s->steps = in.Uint();
    for (std::size_t devices = in.Count(); devices > 0; --devices) {
      GpuIdleTotals& d = s->devices.emplace_back();
      d.id = static_cast<std::uint32_t>(in.Uint());
      RestoreIdleTimes(in, &d);
      if (!s->device_index.emplace(d.id, static_cast<std::uint32_t>(s->devices.size() - 1)).second) {
        throw std::invalid_argument("partial summary damaged: a GPU twice in a stream's idle breakdown");
      }
    }
    streams_.push_back(std::move(s));
  }
  stream_ = nullptr;
}

void GpuIdleBreakdown::ReorderStreams(const std::vector<std::size_t>& order) { Reorder(streams_, order); }

GpuIdleTotals GpuIdleBreakdown::total() const {
  GpuIdleTotals sum;
  for (const auto& s : streams_) {
    for (const GpuIdleTotals& d : s->devices) {
      sum.step_ns += d.step_ns;
      sum.launch_bound_ns += d.launch_bound_ns;
      sum.data_wait_ns += d.data_wait_ns;
      sum.sync_ns += d.sync_ns;
      sum.communication_ns += d.communication_ns;
      sum.unexplained_ns += d.unexplained_ns;
      sum.copy_ns += d.copy_ns;
      sum.copy_exposed_ns += d.copy_exposed_ns;
      sum.communication_total_ns += d.communication_total_ns;
      sum.communication_exposed_ns += d.communication_exposed_ns;
    }
  }
  return sum;
}

void GpuIdleBreakdown::WriteDevices(JsonWriter& out,
                                    const std::function<void(const Stream&, const GpuIdleTotals&)>& fields) const {
  out.Key("devices").BeginArray();
  for (const auto& s : streams_) {
    for (const GpuIdleTotals& d : s->devices) {
      out.BeginObject().Field("host", s->host).Field("rank", s->rank).Field("pid", s->pid).Field("device", d.id);
      fields(*s, d);
      out.EndObject();
    }
  }
  out.EndArray();
}

void GpuIdleBreakdown::WriteIdle(JsonWriter& out) const {
  std::uint64_t steps = 0;
  for (const auto& s : streams_) {
    if (!s->devices.empty()) steps += s->steps;
  }
  out.BeginObject();
  out.Field("data_wait_pattern", options_.data_wait_pattern);
  WriteDevices(out, [&out](const Stream& s, const GpuIdleTotals& d) {
    out.Field("steps", s.steps);
    WriteIdleCauses(d, out);
  });
  out.Field("steps", steps);
  WriteIdleCauses(total(), out);
  out.Field("late_intervals", late_intervals_);
  out.EndObject();
}

void GpuIdleBreakdown::WriteOverlap(JsonWriter& out) const {
  const GpuIdleTotals total = this->total();
  out.BeginObject();
  WriteDevices(out, [&out](const Stream&, const GpuIdleTotals& d) { WriteOverlapTimes(d, out); });
  WriteOverlapTimes(total, out);
  out.Field("copy_exposed_share", Share(total.copy_exposed_ns, total.copy_ns));
  out.Field("communication_exposed_share", Share(total.communication_exposed_ns, total.communication_total_ns));
  out.EndObject();
}

}  // namespace smprof::analysis

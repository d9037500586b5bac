#include "analysis/summary/step_profile.h"

#include <algorithm>
#include <iterator>
#include <unordered_set>

#include "analysis/job/stream_order.h"

namespace smprof::analysis {

namespace {

constexpr const char* kCounterKeys[] = {"cpu_utilization_percent", "process_cpu_percent", "page_faults",
                                        "context_switches"};

// The counter a sample feeds, or -1 (the rest are not tracked per step).
int CounterOf(std::string_view name) {
  if (name == "cpu.utilization") return 0;
  if (name == "process.cpu_percent") return 1;
  if (name == "perf.page-faults" || name == "perf.faults") return 2;
  if (name == "perf.context-switches" || name == "perf.cs") return 3;
  return -1;
}

bool IsShare(int counter) { return counter <= 1; }

// The length of the union of [start, end) intervals; sorts them.
std::int64_t UnionLength(std::vector<std::pair<std::int64_t, std::int64_t>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0;
  std::int64_t covered_to = INT64_MIN;
  for (const auto& [start, end] : intervals) {
    const std::int64_t from = std::max(start, covered_to);
    if (end > from) total += end - from;
    covered_to = std::max(covered_to, end);
  }
  return total;
}

}  // namespace

StepProfile::StepProfile(const SummaryOptions& options)
    : max_steps_(options.max_profiled_steps),
      steps_matcher_(options.step_pattern),
      data_wait_pattern_(DataWaitRegex(options.data_wait_pattern)),
      data_wait_pattern_text_(options.data_wait_pattern) {}

void StepProfile::BeginStream(const ProcessStream& stream) {
  streams_.push_back(std::make_unique<Stream>());
  stream_ = streams_.back().get();
  stream_->host = stream.host;
  stream_->rank = stream.rank;
  stream_->pid = stream.pid;
  stream_->worker_of_pid = stream.worker_of_pid;
}

const StepProfile::Name* StepProfile::NameOf(std::string_view text) {
  auto& slot = names_[std::string(text)];
  if (!slot) {
    slot = std::make_unique<Name>();
    slot->text = std::string(text);
    if (steps_matcher_.Match(text, &slot->step_number)) {
      slot->kind = Kind::kStep;
    } else if (std::regex_match(slot->text, data_wait_pattern_)) {
      slot->kind = Kind::kData;
    }
  }
  return slot.get();
}

void StepProfile::AddFrame(const std::vector<internal::AnnotationRow>& annotations,
                           const std::vector<internal::CounterRow>& counters, std::int64_t wall_offset_ns) {
  for (const auto& row : counters) AddSample(row, wall_offset_ns);
  // A frame stores its samples one counter after the other: in time order, a step takes its own.
  std::stable_sort(stream_->pending_samples.begin(), stream_->pending_samples.end(),
                   [](const Sample& a, const Sample& b) { return a.ts_ns < b.ts_ns; });
  frame_names_.clear();
  // A step closes as soon as the frame's next row starts after it ends (in
  // row order: behind the steps before it): its scan of the waiting
  // annotations stops at the first that starts after it ends, so the rows to
  // come would not be looked at. Only the annotations of the steps still
  // open wait.
  frame_steps_.clear();
  std::size_t closed = 0;
  const auto close_next = [&] {
    const internal::AnnotationRow& step = *frame_steps_[closed++];
    CloseStep(step, frame_names_[step.name_index], wall_offset_ns);
  };
  for (const auto& row : annotations) {
    while (closed < frame_steps_.size() &&
           row.start_ns >= frame_steps_[closed]->start_ns + frame_steps_[closed]->dur_ns) {
      close_next();
    }
    if (row.name_index >= frame_names_.size()) frame_names_.resize(row.name_index + 1, nullptr);
    const Name*& name = frame_names_[row.name_index];
    if (name == nullptr) name = NameOf(row.name);
    if (name->kind == Kind::kStep) {
      frame_steps_.push_back(&row);
      continue;
    }
    if (stream_->pending.size() == kMaxPending) {
      stream_->pending.pop_front();
      ++stream_->pending_dropped;
    }
    stream_->pending.push_back(
        {name, row.start_ns + wall_offset_ns, row.start_ns + row.dur_ns + wall_offset_ns, row.tid, row.depth});
  }
  while (closed < frame_steps_.size()) close_next();
}

void StepProfile::AddTo(CounterSum* sums, const Sample& sample) {
  CounterSum& sum = sums[sample.counter];
  sum.amount += sample.amount;
  sum.weight += sample.weight;
  sum.seen = true;
}

void StepProfile::AddSample(const internal::CounterRow& row, std::int64_t wall_offset_ns) {
  if (row.name == "process.threads") {
    stream_->max_threads = std::max(stream_->max_threads, row.value);
    return;
  }
  const int counter = CounterOf(row.name);
  if (counter < 0) return;
  const std::int64_t ts = row.ts_ns + wall_offset_ns;
  std::int64_t& last_ts = stream_->last_ts_ns[counter];
  double& last_value = stream_->last_value[counter];
  const bool first = last_ts == 0;
  const std::int64_t interval = ts - last_ts;
  const double increase = row.value - last_value;
  last_ts = ts;
  last_value = row.value;
  // The first sample of a counter has no interval (shares) or base (counts).
  if (first || interval <= 0) return;
  const Sample sample{ts, static_cast<Counter>(counter),
                      IsShare(counter) ? row.value * interval : std::max(0.0, increase),
                      IsShare(counter) ? interval : 0};
  AddTo(stream_->totals, sample);
  if (ts <= stream_->last_step_end_ns) {
    // A late sample: it belongs to a kept step, found by start (steps do not overlap).
    auto& steps = stream_->steps;
    auto it =
        std::upper_bound(steps.begin(), steps.end(), ts, [](std::int64_t t, const Step& s) { return t < s.start_ns; });
    if (it != steps.begin() && ts <= std::prev(it)->start_ns + std::prev(it)->dur_ns)
      AddTo(std::prev(it)->counters, sample);
    return;
  }
  if (stream_->pending_samples.size() == kMaxPending) stream_->pending_samples.pop_front();
  stream_->pending_samples.push_back(sample);
}

void StepProfile::CloseStep(const internal::AnnotationRow& row, const Name* name, std::int64_t wall_offset_ns) {
  Stream& s = *stream_;
  const std::int64_t start = row.start_ns + wall_offset_ns;
  const std::int64_t end = start + row.dur_ns;
  const std::int64_t window_start = s.last_step_end_ns == INT64_MIN ? start : std::min(start, s.last_step_end_ns);
  // The step's own sums (a Step is made only for the steps kept one by one).
  std::int64_t data_wait_ns = 0;
  data_waits_.clear();
  CounterSum counters[kCounters];
  // Phases: one level under the step on its thread, or at its level between
  // the previous step and this one; data waits at any depth on its thread,
  // nested ones counted once (a user's DataLoad around smppy's InputWait).
  auto& pending = s.pending;
  // Phases gather in a buffer kept from step to step: only the steps kept one by one copy them.
  auto& phases = phases_;
  phases.clear();
  phase_index_.clear();
  // Pending annotations are in start order (rows come sorted by start, frames in time order), so
  // this step's own lie before the first that starts after it ends: only those are looked at.
  std::size_t scanned = 0;
  while (scanned < pending.size() && pending[scanned].start_ns < end) ++scanned;
  std::size_t kept_from = scanned;  // pending[kept_from, scanned): the scanned ones a later step closes
  for (std::size_t i = scanned; i-- > 0;) {
    const PendingAnnotation a = pending[i];
    if (a.end_ns > end) {
      pending[--kept_from] = a;
      continue;
    }
    if (a.tid != row.tid || a.start_ns < window_start) continue;
    const bool inside = a.start_ns >= start;
    const bool phase = (inside && a.depth == row.depth + 1) || (!inside && a.depth == row.depth);
    if (phase) {
      const auto [it, added] = phase_index_.try_emplace(a.name, phases.size());
      if (added) {
        phases.emplace_back(a.name, a.end_ns - a.start_ns);
      } else {
        phases[it->second].second += a.end_ns - a.start_ns;
      }
    }
    if (a.name->kind == Kind::kData && (phase || (inside ? a.depth > row.depth + 1 : a.depth > row.depth))) {
      data_waits_.emplace_back(a.start_ns, a.end_ns);
    }
  }
  data_wait_ns = UnionLength(data_waits_);
  pending.pop_front(kept_from);
  for (const auto& [phase, ns] : phases) s.phase_ns[phase] += ns;
  auto& samples = s.pending_samples;
  while (!samples.empty() && samples.front().ts_ns <= end) {
    if (samples.front().ts_ns >= start) AddTo(counters, samples.front());
    samples.pop_front();
  }
  const std::int64_t number = name->step_number >= 0 ? name->step_number : static_cast<std::int64_t>(s.steps_seen);
  ++s.steps_seen;
  s.step_time_ns += row.dur_ns + (start - window_start);
  s.data_wait_ns += data_wait_ns;
  s.last_step_end_ns = std::max(s.last_step_end_ns, end);
  if (static_cast<std::int64_t>(s.steps.size()) >= max_steps_) return;
  Step step;
  step.number = number;
  step.start_ns = start;
  step.dur_ns = row.dur_ns;
  step.gap_before_ns = start - window_start;
  step.data_wait_ns = data_wait_ns;
  std::copy(std::begin(counters), std::end(counters), std::begin(step.counters));
  step.phases.assign(phases.begin(), phases.end());
  std::sort(step.phases.begin(), step.phases.end(),
            [](const auto& a, const auto& b) { return a.first->text < b.first->text; });
  s.steps.push_back(std::move(step));
}

void StepProfile::WriteCounters(const CounterSum* sums, JsonWriter& out) {
  for (int c = 0; c < kCounters; ++c) {
    const CounterSum& sum = sums[c];
    out.Key(kCounterKeys[c]);
    if (!sum.seen) {
      out.Null();
    } else if (IsShare(c)) {
      out.Double(sum.weight > 0 ? sum.amount / static_cast<double>(sum.weight) : 0.0);
    } else {
      out.Int(static_cast<std::int64_t>(sum.amount));
    }
  }
}

void StepProfile::SaveCounters(const CounterSum* sums, PartialEncoder& out) {
  for (int c = 0; c < kCounters; ++c) {
    out.Double(sums[c].amount);
    out.Int(sums[c].weight);
    out.Bool(sums[c].seen);
  }
}

void StepProfile::RestoreCounters(PartialDecoder& in, CounterSum* sums) {
  for (int c = 0; c < kCounters; ++c) {
    sums[c].amount = in.Double();
    sums[c].weight = in.Int();
    sums[c].seen = in.Bool();
  }
}

void StepProfile::Save(PartialEncoder& out) const {
  out.Uint(streams_.size());
  for (const auto& s : streams_) {
    out.String(s->host);
    out.Int(s->rank);
    out.Int(s->pid);
    out.Int(s->worker_of_pid);
    out.Uint(s->steps_seen);
    out.Int(s->step_time_ns);
    out.Int(s->data_wait_ns);
    out.Uint(s->pending_dropped);
    out.Double(s->max_threads);
    SaveCounters(s->totals, out);
    out.Uint(s->phase_ns.size());
    for (const auto& [name, ns] : s->phase_ns) {
      out.String(name->text);
      out.Int(ns);
    }
    out.Uint(s->steps.size());
    for (const Step& step : s->steps) {
      out.Int(step.number);
      out.Int(step.start_ns);
      out.Int(step.dur_ns);
      out.Int(step.gap_before_ns);
      out.Int(step.data_wait_ns);
      out.Uint(step.phases.size());
      for (const auto& [name, ns] : step.phases) {
        out.String(name->text);
        out.Int(ns);
      }
      SaveCounters(step.counters, out);
    }
  }
}

void StepProfile::MergeFrom(PartialDecoder& in) {
  for (std::size_t n = in.Count(); n > 0; --n) {
    auto s = std::make_unique<Stream>();
    s->host = in.String();
    s->rank = static_cast<std::int32_t>(in.Int());
    s->pid = in.Int();
    s->worker_of_pid = in.Int();
    s->steps_seen = in.Uint();
    s->step_time_ns = in.Int();
    s->data_wait_ns = in.Int();
    s->pending_dropped = in.Uint();
    s->max_threads = in.Double();
    RestoreCounters(in, s->totals);
    for (std::size_t phases = in.Count(); phases > 0; --phases) {
      const Name* name = NameOf(in.String());
      s->phase_ns[name] += in.Int();
    }
    s->steps.resize(in.Count());
    for (Step& step : s->steps) {
      step.number = in.Int();
      step.start_ns = in.Int();
      step.dur_ns = in.Int();
      step.gap_before_ns = in.Int();
      step.data_wait_ns = in.Int();
      step.phases.resize(in.Count());
      for (auto& [name, ns] : step.phases) {
        name = NameOf(in.String());
        ns = in.Int();
      }
      RestoreCounters(in, step.counters);
    }
    streams_.push_back(std::move(s));
  }
  stream_ = nullptr;
}

void StepProfile::ReorderStreams(const std::vector<std::size_t>& order) { Reorder(streams_, order); }

void StepProfile::Write(JsonWriter& out) const {
  out.BeginObject()
      .Field("max_profiled_steps", max_steps_)
      .Field("data_wait_pattern", data_wait_pattern_text_)
      .Key("per_rank")
      .BeginArray();
  for (const auto& s : streams_) {
    out.BeginObject()
        .Field("host", s->host)
        .Field("rank", s->rank)
        .Field("pid", s->pid)
        .Field("worker_of_pid", s->worker_of_pid)
        .Field("steps_seen", s->steps_seen)
        .Field("cycle_time_ns", s->step_time_ns)
        .Field("data_wait_ns", s->data_wait_ns)
        .Field("annotations_not_profiled", s->pending_dropped)
        .Field("max_threads", static_cast<std::int64_t>(s->max_threads));
    WriteCounters(s->totals, out);
    std::vector<std::pair<const Name*, std::int64_t>> phases(s->phase_ns.begin(), s->phase_ns.end());
    std::sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first->text < b.first->text;
    });
    std::unordered_set<const Name*> written;  // the phases named one by one
    std::int64_t other_ns = 0;
    std::uint64_t others = 0;
    out.Key("phases").BeginArray();
    for (const auto& [name, ns] : phases) {
      if (written.size() >= kMaxPhasesWritten && name->kind != Kind::kData) {
        other_ns += ns;
        ++others;
        continue;
      }
      written.insert(name);
      out.BeginObject()
          .Field("name", name->text)
          .Field("total_ns", ns)
          .Field("data", name->kind == Kind::kData)
          .EndObject();
    }
    if (others > 0) {
      out.BeginObject()
          .Field("name", kOtherPhases)
          .Field("total_ns", other_ns)
          .Field("data", false)
          .Field("names", others)
          .EndObject();
    }
    out.EndArray().Key("steps").BeginArray();
    for (const Step& step : s->steps) {
      out.BeginObject()
          .Field("step", step.number)
          .Field("start_wall_ns", step.start_ns)
          .Field("dur_ns", step.dur_ns)
          .Field("gap_before_ns", step.gap_before_ns)
          .Field("data_wait_ns", step.data_wait_ns);
      out.Key("phases").BeginObject();
      std::int64_t step_other_ns = 0;
      bool step_has_other = false;
      for (const auto& [name, ns] : step.phases) {
        if (written.count(name) != 0) {
          out.Field(name->text, ns);
        } else {
          step_other_ns += ns;
          step_has_other = true;
        }
      }
      if (step_has_other) out.Field(kOtherPhases, step_other_ns);
      out.EndObject();
      WriteCounters(step.counters, out);
      out.EndObject();
    }
    out.EndArray().EndObject();
  }
  out.EndArray().EndObject();
}

}  // namespace smprof::analysis

#include "analysis/summary/collective_metrics.h"

#include <algorithm>
#include <stdexcept>

#include "analysis/job/stream_order.h"
#include "analysis/summary/stats_json.h"
#include "trace/collective_codec.h"

namespace smprof::analysis {

namespace {

bool IsPointToPoint(std::string_view op) { return op == "send" || op == "recv_" || op == "recv_any_source_"; }

// Ops whose ranks' inputs differ by design: all-to-all with uneven splits, a scatter's root.
bool UnevenByDesign(std::string_view op) { return op.rfind("alltoall", 0) == 0 || op == "scatter_"; }

// Instances whose ranks sent different bytes, or called different ops, listed in the summary, at most.
constexpr std::size_t kDifferExamples = 20;

}  // namespace

void CollectiveMetrics::BeginStream(const ProcessStream& stream) {
  streams_.push_back(std::make_unique<Stream>());
  stream_ = streams_.back().get();
  stream_->host = stream.host;
  stream_->rank = stream.rank;
  stream_->pid = stream.pid;
}

bool CollectiveMetrics::AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, std::string* error) {
  stream_->frame_dropped = std::max(stream_->frame_dropped, frame.tables().collectives_dropped_total());
  if (!frame.tables().has_collectives()) return true;
  rows_.clear();
  if (Status st = internal::DecodeCollectives(frame, &rows_); !st.ok()) {
    *error = st.message();
    return false;
  }
  const auto stream_index = static_cast<std::uint32_t>(streams_.size() - 1);
  for (const internal::CollectiveRow& r : rows_) {
    ++calls_;
    OpKey key{std::string(r.op), std::string(r.group)};
    ++stream_->calls[key];
    OpTotals& totals = ops_[key];
    if (totals.calls == 0) totals.dtype = std::string(r.dtype);
    totals.group_size = std::max(totals.group_size, r.group_size);
    ++totals.calls;
    totals.bytes += r.bytes;
    totals.call_ns += r.call_dur_ns;
    if (r.wait_offset_ns != 0) {
      ++totals.waits;
      totals.work_wait_ns += r.wait_dur_ns;
      stream_->work_wait_ns += r.wait_dur_ns;
    }
    Call call{r.tid, r.start_ns, r.start_ns + r.call_dur_ns, &totals, nullptr, 0};
    if (IsPointToPoint(r.op)) {
      ++point_to_point_calls_;
    } else if (arrivals_ >= kMaxArrivals) {
      ++calls_not_matched_;
    } else {
      Instance& instance = instances_[{key.second, r.sequence}];
      if (instance.arrivals.empty()) {
        instance.op = key.first;
      } else if (instance.op != key.first && instance.other_op.empty()) {
        instance.other_op = key.first;
        instance.other_stream = stream_index;
      }
      instance.group_size = std::max(instance.group_size, r.group_size);
      call.instance = &instance;
      call.arrival = static_cast<std::uint32_t>(instance.arrivals.size());
      instance.arrivals.push_back(Arrival{stream_index, r.group_rank, r.start_ns + file.wall_offset_ns, r.bytes});
      ++arrivals_;
    }
    if (stream_calls_.size() < kMaxArrivals) stream_calls_.push_back(call);
  }
  return true;
}

void CollectiveMetrics::AddCommunicationLaunches(const std::vector<CommunicationLaunch>& launches) {
  for (const CommunicationLaunch& launch : launches) {
    if (stream_launches_.size() < kMaxArrivals) {
      stream_launches_.push_back(launch);
    } else {
      ++kernels_not_linked_;
    }
  }
}

void CollectiveMetrics::EndStream() {
  dropped_ += std::max(stream_->frame_dropped, stream_->footer_dropped);
  // Each launch belongs to the call of its thread that started last at or before it, if it is still open then.
  const auto by_thread_start = [](const auto& a, const auto& b) {
    return std::pair(a.tid, a.start_ns) < std::pair(b.tid, b.start_ns);
  };
  std::sort(stream_calls_.begin(), stream_calls_.end(), by_thread_start);
  for (const CommunicationLaunch& launch : stream_launches_) {
    const Call probe{launch.tid, launch.call_start_ns};
    auto it = std::upper_bound(stream_calls_.begin(), stream_calls_.end(), probe, by_thread_start);
    if (it == stream_calls_.begin() || (--it)->tid != launch.tid || it->end_ns < launch.call_start_ns) {
      ++kernels_not_linked_;
      continue;
    }
    ++kernels_linked_;
    ++stream_->kernels;
    stream_->device_ns += launch.kernel_dur_ns;
    ++it->op->kernels;
    it->op->device_ns += launch.kernel_dur_ns;
    if (it->instance == nullptr) continue;
    Arrival& a = it->instance->arrivals[it->arrival];
    if (a.device_wall_ns == 0 || launch.kernel_wall_ns < a.device_wall_ns) a.device_wall_ns = launch.kernel_wall_ns;
    a.device_ns += launch.kernel_dur_ns;
  }
  stream_calls_.clear();
  stream_launches_.clear();
}

void CollectiveMetrics::AddMatched(const std::vector<const Arrival*>& by_time, std::int64_t Arrival::*clock,
                                   const OpKey& key, ClockWaits* waits) {
  ++waits->matched;
  const Arrival& last = *by_time.back();
  OpWaits& o = waits->ops[key];
  ++o.matched;
  o.skew.Add(last.*clock - by_time.front()->*clock);
  for (const Arrival* a : by_time) {
    StreamWaits& w = waits->streams[a->stream];
    ++w.matched;
    w.wait_ns += last.*clock - a->*clock;
    o.wait_ns += last.*clock - a->*clock;
  }
  if (by_time.size() >= 2) {
    StreamWaits& w = waits->streams[last.stream];
    ++w.last_arrivals;
    w.late_by_ns += last.*clock - by_time[by_time.size() - 2]->*clock;
  }
}

void CollectiveMetrics::Write(JsonWriter& out) const {
  ClockWaits host;
  ClockWaits device;
  host.streams.resize(streams_.size());
  device.streams.resize(streams_.size());
  std::uint64_t bytes_differ = 0;
  std::uint64_t op_differ = 0;
  std::vector<std::pair<const std::pair<std::string, std::uint64_t>*, const Instance*>> op_examples;
  struct BytesDiffer {
    const std::string* op;
    const std::string* group;
    std::uint64_t sequence;
    const Arrival* low;
    const Arrival* high;
  };
  std::vector<BytesDiffer> examples;
  for (const auto& [id, instance] : instances_) {
    if (!instance.other_op.empty() && op_differ++ < kDifferExamples) op_examples.emplace_back(&id, &instance);
    std::vector<const Arrival*> by_time;
    for (const Arrival& a : instance.arrivals) by_time.push_back(&a);
    std::sort(by_time.begin(), by_time.end(),
              [](const Arrival* a, const Arrival* b) { return a->wall_ns < b->wall_ns; });
    std::vector<bool> seen(instance.group_size, false);
    std::size_t distinct = 0;
    for (const Arrival* a : by_time) {
      if (a->group_rank < seen.size() && !seen[a->group_rank]) {
        seen[a->group_rank] = true;
        ++distinct;
      }
    }
    // Every rank of the group once: a rank profiled twice, or not at all, leaves the instance unmatched.
    if (distinct != instance.group_size || by_time.size() != distinct) continue;
    // Where the ranks called different ops, the lower stream's (what a merge in any order writes).
    const bool other = !instance.other_op.empty() && instance.other_stream < instance.arrivals.front().stream;
    const OpKey key{other ? instance.other_op : instance.op, id.first};
    AddMatched(by_time, &Arrival::wall_ns, key, &host);
    if (std::all_of(by_time.begin(), by_time.end(), [](const Arrival* a) { return a->device_wall_ns != 0; })) {
      std::vector<const Arrival*> on_device = by_time;
      std::sort(on_device.begin(), on_device.end(),
                [](const Arrival* a, const Arrival* b) { return a->device_wall_ns < b->device_wall_ns; });
      AddMatched(on_device, &Arrival::device_wall_ns, key, &device);
    }
    const auto [low, high] = std::minmax_element(
        by_time.begin(), by_time.end(), [](const Arrival* a, const Arrival* b) { return a->bytes < b->bytes; });
    if ((*low)->bytes != (*high)->bytes && !UnevenByDesign(instance.op)) {
      if (bytes_differ++ < kDifferExamples) examples.push_back({&instance.op, &id.first, id.second, *low, *high});
    }
  }

  out.BeginObject()
      .Field("calls", calls_)
      .Field("point_to_point_calls", point_to_point_calls_)
      .Field("dropped", dropped_)
      .Field("instances", static_cast<std::uint64_t>(instances_.size()))
      .Field("instances_matched", host.matched)
      .Field("calls_not_matched", calls_not_matched_)
      .Field("kernels_linked", kernels_linked_)
      .Field("kernels_not_linked", kernels_not_linked_)
      .Field("instances_matched_on_device", device.matched);
  std::vector<std::pair<const OpKey*, const OpTotals*>> ops;
  for (const auto& [key, totals] : ops_) ops.emplace_back(&key, &totals);
  static const OpWaits kNoWaits;
  const auto waits_of = [](const ClockWaits& clock, const OpKey& key) -> const OpWaits& {
    const auto it = clock.ops.find(key);
    return it == clock.ops.end() ? kNoWaits : it->second;
  };
  const auto wait_of = [&](const OpKey& key) { return waits_of(host, key).wait_ns; };
  std::stable_sort(ops.begin(), ops.end(), [&](const auto& a, const auto& b) {
    if (wait_of(*a.first) != wait_of(*b.first)) return wait_of(*a.first) > wait_of(*b.first);
    return a.second->calls > b.second->calls;
  });
  out.Key("ops").BeginArray();
  for (const auto& [key, totals] : ops) {
    const OpWaits& w = waits_of(host, *key);
    const OpWaits& d = waits_of(device, *key);
    out.BeginObject()
        .Field("op", key->first)
        .Field("group", key->second)
        .Field("group_size", totals->group_size)
        .Field("dtype", totals->dtype)
        .Field("point_to_point", IsPointToPoint(key->first))
        .Field("calls", totals->calls)
        .Field("bytes", totals->bytes)
        .Field("call_ns", totals->call_ns)
        .Field("waits", totals->waits)
        .Field("work_wait_ns", totals->work_wait_ns)
        .Field("instances_matched", w.matched)
        .Field("wait_ns", w.wait_ns)
        .Field("kernels", totals->kernels)
        .Field("device_ns", totals->device_ns)
        .Field("instances_matched_on_device", d.matched)
        .Field("device_wait_ns", d.wait_ns)
        .Key("skew");
    WriteStats(w.skew, out);
    out.Key("device_skew");
    WriteStats(d.skew, out);
    out.Key("calls_per_rank").BeginArray();
    for (const auto& s : streams_) {
      const auto c = s->calls.find(*key);
      out.BeginObject()
          .Field("host", s->host)
          .Field("rank", s->rank)
          .Field("pid", s->pid)
          .Field("calls", c == s->calls.end() ? std::uint64_t{0} : c->second)
          .EndObject();
    }
    out.EndArray().EndObject();
  }
  out.EndArray();
  out.Key("ranks").BeginArray();
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    const Stream& s = *streams_[i];
    std::uint64_t calls = 0;
    for (const auto& [key, n] : s.calls) calls += n;
    const StreamWaits& w = host.streams[i];
    const StreamWaits& d = device.streams[i];
    out.BeginObject()
        .Field("host", s.host)
        .Field("rank", s.rank)
        .Field("pid", s.pid)
        .Field("calls", calls)
        .Field("work_wait_ns", s.work_wait_ns)
        .Field("instances_matched", w.matched)
        .Field("wait_ns", w.wait_ns)
        .Field("last_arrivals", w.last_arrivals)
        .Field("late_by_ns", w.late_by_ns)
        .Field("kernels", s.kernels)
        .Field("device_ns", s.device_ns)
        .Field("instances_matched_on_device", d.matched)
        .Field("device_wait_ns", d.wait_ns)
        .Field("device_last_arrivals", d.last_arrivals)
        .Field("device_late_by_ns", d.late_by_ns)
        .EndObject();
  }
  out.EndArray();
  out.Field("instances_bytes_differ", bytes_differ);
  out.Key("bytes_differ_examples").BeginArray();
  for (const BytesDiffer& e : examples) {
    out.BeginObject()
        .Field("op", *e.op)
        .Field("group", *e.group)
        .Field("sequence", e.sequence)
        .Field("bytes_min", e.low->bytes)
        .Field("rank_min", streams_[e.low->stream]->rank)
        .Field("bytes_max", e.high->bytes)
        .Field("rank_max", streams_[e.high->stream]->rank)
        .EndObject();
  }
  out.EndArray();
  out.Field("instances_op_differ", op_differ);
  out.Key("op_differ_examples").BeginArray();
  for (const auto& [id, instance] : op_examples) {
    // The two calls in stream order: what a merge of partial states writes too.
    std::pair<std::uint32_t, const std::string*> a{instance->arrivals.front().stream, &instance->op};
    std::pair<std::uint32_t, const std::string*> b{instance->other_stream, &instance->other_op};
    if (b.first < a.first) std::swap(a, b);
    out.BeginObject()
        .Field("group", id->first)
        .Field("sequence", id->second)
        .Field("rank", streams_[a.first]->rank)
        .Field("op", *a.second)
        .Field("other_rank", streams_[b.first]->rank)
        .Field("other_op", *b.second)
        .EndObject();
  }
  out.EndArray();
  out.EndObject();
}

void CollectiveMetrics::Save(PartialEncoder& out) const {
  out.Uint(streams_.size());
  for (const auto& s : streams_) {
    out.String(s->host);
    out.Int(s->rank);
    out.Int(s->pid);
    out.Uint(s->kernels);
    out.Int(s->device_ns);
    out.Int(s->work_wait_ns);
    out.Uint(s->calls.size());
    for (const auto& [key, n] : s->calls) {
      out.String(key.first);
      out.String(key.second);
      out.Uint(n);
    }
  }
  out.Uint(instances_.size());
  for (const auto& [id, instance] : instances_) {
    out.String(id.first);
    out.Uint(id.second);
    out.String(instance.op);
    out.String(instance.other_op);
    out.Uint(instance.other_stream);
    out.Uint(instance.group_size);
    out.Uint(instance.arrivals.size());
    for (const Arrival& a : instance.arrivals) {
      out.Uint(a.stream);
      out.Uint(a.group_rank);
      out.Int(a.wall_ns);
      out.Uint(a.bytes);
      out.Int(a.device_wall_ns);
      out.Int(a.device_ns);
    }
  }
  out.Uint(ops_.size());
  for (const auto& [key, t] : ops_) {
    out.String(key.first);
    out.String(key.second);
    out.Uint(t.group_size);
    out.String(t.dtype);
    out.Uint(t.calls);
    out.Uint(t.bytes);
    out.Int(t.call_ns);
    out.Uint(t.kernels);
    out.Int(t.device_ns);
    out.Uint(t.waits);
    out.Int(t.work_wait_ns);
  }
  out.Uint(calls_);
  out.Uint(point_to_point_calls_);
  out.Uint(calls_not_matched_);
  out.Uint(dropped_);
  out.Uint(kernels_linked_);
  out.Uint(kernels_not_linked_);
}

void CollectiveMetrics::MergeFrom(PartialDecoder& in) {
  const auto first_stream = static_cast<std::uint32_t>(streams_.size());
  for (std::size_t n = in.Count(); n > 0; --n) {
    auto s = std::make_unique<Stream>();
    s->host = in.String();
    s->rank = static_cast<std::int32_t>(in.Int());
    s->pid = in.Int();
    s->kernels = in.Uint();
    s->device_ns = in.Int();
    s->work_wait_ns = in.Int();
    for (std::size_t m = in.Count(); m > 0; --m) {
      OpKey key;
      key.first = in.String();
      key.second = in.String();
      s->calls[key] += in.Uint();
    }
    streams_.push_back(std::move(s));
  }
  for (std::size_t n = in.Count(); n > 0; --n) {
    std::pair<std::string, std::uint64_t> id;
    id.first = in.String();
    id.second = in.Uint();
    Instance& instance = instances_[id];
    const bool fresh = instance.arrivals.empty();
    std::string op = in.String();
    std::string other_op = in.String();
    const auto other_stream = first_stream + static_cast<std::uint32_t>(in.Uint());
    instance.group_size = std::max(instance.group_size, static_cast<std::uint32_t>(in.Uint()));
    const std::size_t arrivals_before = instance.arrivals.size();
    for (std::size_t m = in.Count(); m > 0; --m) {
      Arrival a;
      a.stream = first_stream + static_cast<std::uint32_t>(in.Uint());
      a.group_rank = static_cast<std::uint32_t>(in.Uint());
      a.wall_ns = in.Int();
      a.bytes = in.Uint();
      a.device_wall_ns = in.Int();
      a.device_ns = in.Int();
      if (a.stream >= streams_.size()) throw std::invalid_argument("partial summary damaged: a collective's stream");
      if (arrivals_ >= kMaxArrivals) {
        ++calls_not_matched_;
        continue;
      }
      instance.arrivals.push_back(a);
      ++arrivals_;
    }
    if (instance.arrivals.empty()) {
      instances_.erase(id);
      continue;
    }
    if (fresh) {
      instance.op = std::move(op);
    } else if (instance.other_op.empty() && op != instance.op && instance.arrivals.size() > arrivals_before) {
      instance.other_op = std::move(op);  // the saved state's first arrival called it
      instance.other_stream = instance.arrivals[arrivals_before].stream;
      continue;
    }
    if (instance.other_op.empty() && !other_op.empty()) {
      instance.other_op = std::move(other_op);
      instance.other_stream = other_stream;
    }
  }
  for (std::size_t n = in.Count(); n > 0; --n) {
    OpKey key;
    key.first = in.String();
    key.second = in.String();
    OpTotals& t = ops_[key];
    t.group_size = std::max(t.group_size, static_cast<std::uint32_t>(in.Uint()));
    std::string dtype = in.String();
    if (t.calls == 0) t.dtype = std::move(dtype);
    t.calls += in.Uint();
    t.bytes += in.Uint();
    t.call_ns += in.Int();
    t.kernels += in.Uint();
    t.device_ns += in.Int();
    t.waits += in.Uint();
    t.work_wait_ns += in.Int();
  }
  calls_ += in.Uint();
  point_to_point_calls_ += in.Uint();
  calls_not_matched_ += in.Uint();
  dropped_ += in.Uint();
  kernels_linked_ += in.Uint();
  kernels_not_linked_ += in.Uint();
  stream_ = nullptr;
}

void CollectiveMetrics::ReorderStreams(const std::vector<std::size_t>& order) {
  Reorder(streams_, order);
  std::vector<std::uint32_t> new_index(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) new_index[order[i]] = static_cast<std::uint32_t>(i);
  for (auto& [id, instance] : instances_) {
    for (Arrival& a : instance.arrivals) a.stream = new_index[a.stream];
    if (!instance.other_op.empty()) instance.other_stream = new_index[instance.other_stream];
  }
}

}  // namespace smprof::analysis

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

// Instances whose ranks sent different bytes listed in the summary, at most.
constexpr std::size_t kBytesDifferExamples = 20;

}  // namespace

void CollectiveMetrics::BeginStream(const ProcessStream& stream) {
  streams_.push_back(std::make_unique<Stream>());
  stream_ = streams_.back().get();
  stream_->host = stream.host;
  stream_->rank = stream.rank;
  stream_->pid = stream.pid;
}

bool CollectiveMetrics::AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, std::string* error) {
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
    if (IsPointToPoint(r.op)) {
      ++point_to_point_calls_;
      continue;
    }
    if (arrivals_ >= kMaxArrivals) {
      ++calls_not_matched_;
      continue;
    }
    Instance& instance = instances_[{key.second, r.sequence}];
    if (instance.arrivals.empty()) instance.op = key.first;
    instance.group_size = std::max(instance.group_size, r.group_size);
    instance.arrivals.push_back(Arrival{stream_index, r.group_rank, r.start_ns + file.wall_offset_ns, r.bytes});
    ++arrivals_;
  }
  return true;
}

void CollectiveMetrics::Write(JsonWriter& out) const {
  struct StreamWaits {
    std::uint64_t matched = 0;
    std::int64_t wait_ns = 0;
    std::uint64_t last_arrivals = 0;
    std::int64_t late_by_ns = 0;  // as the last arriver: after the one before it
  };
  struct OpWaits {
    std::uint64_t matched = 0;
    std::int64_t wait_ns = 0;
    LogHistogram skew;  // last arrival - first arrival, per instance
  };
  std::vector<StreamWaits> waits(streams_.size());
  std::map<OpKey, OpWaits> op_waits;
  std::uint64_t matched = 0;
  std::uint64_t bytes_differ = 0;
  struct BytesDiffer {
    const std::string* op;
    const std::string* group;
    std::uint64_t sequence;
    const Arrival* low;
    const Arrival* high;
  };
  std::vector<BytesDiffer> examples;
  for (const auto& [id, instance] : instances_) {
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
    ++matched;
    const Arrival& last = *by_time.back();
    OpWaits& o = op_waits[{instance.op, id.first}];
    ++o.matched;
    o.skew.Add(last.wall_ns - by_time.front()->wall_ns);
    for (const Arrival* a : by_time) {
      StreamWaits& w = waits[a->stream];
      ++w.matched;
      w.wait_ns += last.wall_ns - a->wall_ns;
      o.wait_ns += last.wall_ns - a->wall_ns;
    }
    if (by_time.size() >= 2) {
      ++waits[last.stream].last_arrivals;
      waits[last.stream].late_by_ns += last.wall_ns - by_time[by_time.size() - 2]->wall_ns;
    }
    const auto [low, high] = std::minmax_element(
        by_time.begin(), by_time.end(), [](const Arrival* a, const Arrival* b) { return a->bytes < b->bytes; });
    if ((*low)->bytes != (*high)->bytes && !UnevenByDesign(instance.op)) {
      if (bytes_differ++ < kBytesDifferExamples) examples.push_back({&instance.op, &id.first, id.second, *low, *high});
    }
  }

  out.BeginObject()
      .Field("calls", calls_)
      .Field("point_to_point_calls", point_to_point_calls_)
      .Field("dropped", dropped_)
      .Field("instances", static_cast<std::uint64_t>(instances_.size()))
      .Field("instances_matched", matched)
      .Field("calls_not_matched", calls_not_matched_);
  std::vector<std::pair<const OpKey*, const OpTotals*>> ops;
  for (const auto& [key, totals] : ops_) ops.emplace_back(&key, &totals);
  const auto wait_of = [&](const OpKey& key) {
    const auto it = op_waits.find(key);
    return it == op_waits.end() ? std::int64_t{0} : it->second.wait_ns;
  };
  std::stable_sort(ops.begin(), ops.end(), [&](const auto& a, const auto& b) {
    if (wait_of(*a.first) != wait_of(*b.first)) return wait_of(*a.first) > wait_of(*b.first);
    return a.second->calls > b.second->calls;
  });
  out.Key("ops").BeginArray();
  static const OpWaits kNoWaits;
  for (const auto& [key, totals] : ops) {
    const auto it = op_waits.find(*key);
    const OpWaits& w = it == op_waits.end() ? kNoWaits : it->second;
    out.BeginObject()
        .Field("op", key->first)
        .Field("group", key->second)
        .Field("group_size", totals->group_size)
        .Field("dtype", totals->dtype)
        .Field("point_to_point", IsPointToPoint(key->first))
        .Field("calls", totals->calls)
        .Field("bytes", totals->bytes)
        .Field("call_ns", totals->call_ns)
        .Field("instances_matched", w.matched)
        .Field("wait_ns", w.wait_ns)
        .Key("skew");
    WriteStats(w.skew, out);
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
    out.BeginObject()
        .Field("host", s.host)
        .Field("rank", s.rank)
        .Field("pid", s.pid)
        .Field("calls", calls)
        .Field("instances_matched", waits[i].matched)
        .Field("wait_ns", waits[i].wait_ns)
        .Field("last_arrivals", waits[i].last_arrivals)
        .Field("late_by_ns", waits[i].late_by_ns)
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
  out.EndObject();
}

void CollectiveMetrics::Save(PartialEncoder& out) const {
  out.Uint(streams_.size());
  for (const auto& s : streams_) {
    out.String(s->host);
    out.Int(s->rank);
    out.Int(s->pid);
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
    out.Uint(instance.group_size);
    out.Uint(instance.arrivals.size());
    for (const Arrival& a : instance.arrivals) {
      out.Uint(a.stream);
      out.Uint(a.group_rank);
      out.Int(a.wall_ns);
      out.Uint(a.bytes);
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
  }
  out.Uint(calls_);
  out.Uint(point_to_point_calls_);
  out.Uint(calls_not_matched_);
  out.Uint(dropped_);
}

void CollectiveMetrics::MergeFrom(PartialDecoder& in) {
  const auto first_stream = static_cast<std::uint32_t>(streams_.size());
  for (std::size_t n = in.Count(); n > 0; --n) {
    auto s = std::make_unique<Stream>();
    s->host = in.String();
    s->rank = static_cast<std::int32_t>(in.Int());
    s->pid = in.Int();
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
    instance.op = in.String();
    instance.group_size = std::max(instance.group_size, static_cast<std::uint32_t>(in.Uint()));
    for (std::size_t m = in.Count(); m > 0; --m) {
      Arrival a;
      a.stream = first_stream + static_cast<std::uint32_t>(in.Uint());
      a.group_rank = static_cast<std::uint32_t>(in.Uint());
      a.wall_ns = in.Int();
      a.bytes = in.Uint();
      if (a.stream >= streams_.size()) throw std::invalid_argument("partial summary damaged: a collective's stream");
      if (arrivals_ >= kMaxArrivals) {
        ++calls_not_matched_;
        continue;
      }
      instance.arrivals.push_back(a);
      ++arrivals_;
    }
    if (instance.arrivals.empty()) instances_.erase(id);
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
  }
  calls_ += in.Uint();
  point_to_point_calls_ += in.Uint();
  calls_not_matched_ += in.Uint();
  dropped_ += in.Uint();
  stream_ = nullptr;
}

void CollectiveMetrics::ReorderStreams(const std::vector<std::size_t>& order) {
  Reorder(streams_, order);
  std::vector<std::uint32_t> new_index(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) new_index[order[i]] = static_cast<std::uint32_t>(i);
  for (auto& [id, instance] : instances_) {
    for (Arrival& a : instance.arrivals) a.stream = new_index[a.stream];
  }
}

}  // namespace smprof::analysis

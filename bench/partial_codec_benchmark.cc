// The partial-summary codec (src/analysis/base/partial_codec.*) against a
// protobuf-lite message of the same content (issue 27): encode and
// decode+merge time, allocations and bytes of the largest aggregator's
// state, GpuMetrics' (its kernel table is most of a partial's bytes).
//
//   ./build-bench/bench/partial_codec_benchmark           # 21 runs of 2,000 operations per case
//   ./build-bench/bench/partial_codec_benchmark --quick   # 5 runs of 200
//
// The state is that of a stream of partial_summary_benchmark.py's job
// (report_benchmark.py's writer: 555 k events per stream, kernels from 200
// names, 5 annotation names, one GPU) and of the merged partial of its 8
// streams. The baseline is the shipped codec, written in GpuMetrics::Save's
// and MergeFrom's order (bench/partial_state_prototype.proto has the
// prototype, field for field). "encode": the state (maps sorted by key, as
// Save does) to bytes; "decode+merge": the bytes added into an empty state
// (as MergePartials does), for protobuf a parse into a reused message and
// then the same adds. Thread CPU time; cases interleaved; medians with min
// and max. Both decodings are checked to give back the state.
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocation_counter.h"
#include "analysis/base/partial_codec.h"
#include "median.h"
#include "partial_state_prototype.pb.h"
#include "smprof/trace.pb.h"

namespace {

using smprof::analysis::PartialDecoder;
using smprof::analysis::PartialEncoder;

// GpuMetrics' saved members, with its container types.
struct Totals {
  std::uint64_t count = 0;
  std::int64_t time_ns = 0;
  std::uint64_t bytes = 0;
  bool operator==(const Totals& o) const { return count == o.count && time_ns == o.time_ns && bytes == o.bytes; }
};
struct AnnotationGpu {
  std::int64_t gpu_time_ns = 0;
  std::uint64_t activities = 0;
  std::int64_t inferred_time_ns = 0;
  std::uint64_t inferred_activities = 0;
  bool operator==(const AnnotationGpu& o) const {
    return gpu_time_ns == o.gpu_time_ns && activities == o.activities && inferred_time_ns == o.inferred_time_ns &&
           inferred_activities == o.inferred_activities;
  }
};
struct Histogram {
  std::uint64_t count = 0;
  std::int64_t total = 0, min = 0, max = 0;
  std::vector<std::uint64_t> counts;  // by bucket index
  bool operator==(const Histogram& o) const {
    return count == o.count && total == o.total && min == o.min && max == o.max && counts == o.counts;
  }
};
struct Device {
  std::int64_t span_ns = 0, union_ns = 0;
  std::uint64_t late_records = 0;
  std::int64_t width_ns = 0;
  std::vector<double> busy;
  bool operator==(const Device& o) const {
    return span_ns == o.span_ns && union_ns == o.union_ns && late_records == o.late_records && width_ns == o.width_ns &&
           busy == o.busy;
  }
};
struct Stream {
  std::string host;
  std::int32_t rank = 0;
  std::int64_t pid = 0;
  std::map<std::uint32_t, Device> devices;
  std::map<std::uint32_t, smprof::trace::GpuDevice> device_info;
};
struct State {
  std::uint64_t rows_seen = 0, evicted = 0;
  std::array<Totals, 5> activity{};
  std::array<Totals, 6> memory_ops{};
  std::array<Totals, 10> precision{};
  std::unordered_map<std::string, Totals> kernels;
  std::unordered_map<std::string, AnnotationGpu> annotations;
  Histogram latency;
  std::uint64_t launch_kernels = 0;
  std::int64_t launch_kernel_time_ns = 0;
  std::uint64_t tiny_kernels = 0;
  std::int64_t tiny_kernel_time_ns = 0, tiny_launch_time_ns = 0;
  Totals copies_all;
  std::uint64_t copies_kind_known = 0;
  Totals copies_pageable;
  std::vector<Stream> streams;
};

bool SameState(const State& a, const State& b) {
  if (a.rows_seen != b.rows_seen || a.activity != b.activity || a.memory_ops != b.memory_ops ||
      a.precision != b.precision || a.kernels != b.kernels || a.annotations != b.annotations ||
      !(a.latency == b.latency) || a.launch_kernels != b.launch_kernels || !(a.copies_all == b.copies_all) ||
      a.streams.size() != b.streams.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.streams.size(); ++i) {
    const Stream &x = a.streams[i], &y = b.streams[i];
    if (x.host != y.host || x.rank != y.rank || x.pid != y.pid || x.devices != y.devices ||
        x.device_info.size() != y.device_info.size()) {
      return false;
    }
    for (const auto& [id, info] : x.device_info) {
      if (info.SerializeAsString() != y.device_info.at(id).SerializeAsString()) return false;
    }
  }
  return true;
}

// The state of `streams` streams of the job (per stream: 37,000 steps of 4 kernels and a copy).
State MakeState(int streams) {
  State s;
  const std::uint64_t steps = 37'000ull * static_cast<std::uint64_t>(streams);
  s.rows_seen = steps * 5;
  s.activity[1] = {steps * 4, static_cast<std::int64_t>(steps * 4 * 300'000), 0};
  s.activity[2] = {steps, static_cast<std::int64_t>(steps * 300'000), steps << 20};
  s.memory_ops[0] = s.activity[2];
  for (int p = 2; p < 6; ++p) s.precision[p] = {steps, static_cast<std::int64_t>(steps * 300'000), 0};
  for (int i = 0; i < 200; ++i) {
    const std::string name = "void gemm_kernel_" + std::to_string(i) + "<float, " + std::to_string(i % 7) + ">(Params)";
    const std::uint64_t count = steps * 4 / 200 + static_cast<std::uint64_t>(i % 3);
    s.kernels[name] = {count, static_cast<std::int64_t>(count * 300'000 + static_cast<std::uint64_t>(i) * 17), 0};
  }
  for (const char* name : {"step", "Forward", "Loss", "Backward", "Optimizer"}) {
    s.annotations[name] = {static_cast<std::int64_t>(steps * 1'500'000), steps * 5, 0, 0};
  }
  s.latency.count = steps * 4;
  s.latency.total = static_cast<std::int64_t>(steps * 4 * 15'000);
  s.latency.min = 9'000;
  s.latency.max = 2'400'000;
  s.latency.counts.assign(156, 0);  // the last bucket used is the last one, as after a merge
  for (int b = 40; b < 156; b += 5) s.latency.counts[b] = steps / 7 + static_cast<std::uint64_t>(b);
  s.launch_kernels = steps * 4;
  s.launch_kernel_time_ns = static_cast<std::int64_t>(steps * 4 * 300'000);
  s.copies_all = s.activity[2];
  s.copies_kind_known = steps;
  for (int r = 0; r < streams; ++r) {
    Stream& st = s.streams.emplace_back();
    st.host = "host-" + std::to_string(r);
    st.rank = r;
    st.pid = 4711 + r;
    Device& d = st.devices[0];
    d.span_ns = 74'000'000'000;
    d.union_ns = 55'500'000'000;
    d.width_ns = 512'000'000;
    for (int b = 0; b < 145; ++b) d.busy.push_back(383'000'000.0 + 1'250.0 * b + 0.5 * (b % 3));
    smprof::trace::GpuDevice& info = st.device_info[0];
    info.set_id(0);
    info.set_name("NVIDIA H200");
    info.set_uuid("GPU-5b1b2f43-8a5b-c3f1-0a7d-3e2f6c9d0b11");
    info.set_sm_count(132);
    info.set_global_memory_bytes(150'754'820'096ull);
    info.set_compute_capability_major(9);
    info.set_global_memory_bandwidth_kbps(4'800'000'000ull);
    info.set_max_threads_per_block(1024);
  }
  return s;
}

template <typename Map>
std::vector<const typename Map::value_type*> ByKey(const Map& map) {
  std::vector<const typename Map::value_type*> out;
  for (const auto& entry : map) out.push_back(&entry);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  return out;
}

// ---- the shipped codec, in GpuMetrics::Save / MergeFrom order ------------------
template <std::size_t N>
void SaveArray(const std::array<Totals, N>& all, PartialEncoder& out) {
  out.Uint(N);
  for (const Totals& t : all) {
    out.Uint(t.count);
    out.Int(t.time_ns);
    out.Uint(t.bytes);
  }
}
void MergeTotals(PartialDecoder& in, Totals* t) {
  t->count += in.Uint();
  t->time_ns += in.Int();
  t->bytes += in.Uint();
}
template <std::size_t N>
void MergeArray(PartialDecoder& in, std::array<Totals, N>* all) {
  if (in.Uint() != N) std::abort();
  for (Totals& t : *all) MergeTotals(in, &t);
}

std::string HandEncode(const State& s) {
  PartialEncoder out;
  out.Uint(s.rows_seen);
  out.Uint(s.evicted);
  SaveArray(s.activity, out);
  SaveArray(s.memory_ops, out);
  SaveArray(s.precision, out);
  out.Uint(s.kernels.size());
  for (const auto* k : ByKey(s.kernels)) {
    out.String(k->first);
    out.Uint(k->second.count);
    out.Int(k->second.time_ns);
    out.Uint(k->second.bytes);
  }
  out.Uint(s.annotations.size());
  for (const auto* a : ByKey(s.annotations)) {
    out.String(a->first);
    out.Int(a->second.gpu_time_ns);
    out.Uint(a->second.activities);
    out.Int(a->second.inferred_time_ns);
    out.Uint(a->second.inferred_activities);
  }
  out.Uint(s.latency.count);  // LogHistogram::Save
  if (s.latency.count != 0) {
    out.Int(s.latency.total);
    out.Int(s.latency.min);
    out.Int(s.latency.max);
    std::size_t used = 0;
    for (const std::uint64_t c : s.latency.counts) used += c != 0;
    out.Uint(used);
    std::size_t previous = 0;
    for (std::size_t i = 0; i < s.latency.counts.size(); ++i) {
      if (s.latency.counts[i] == 0) continue;
      out.Uint(i - previous);
      out.Uint(s.latency.counts[i]);
      previous = i;
    }
  }
  out.Uint(s.launch_kernels);
  out.Int(s.launch_kernel_time_ns);
  out.Uint(s.tiny_kernels);
  out.Int(s.tiny_kernel_time_ns);
  out.Int(s.tiny_launch_time_ns);
  out.Uint(s.copies_all.count);
  out.Int(s.copies_all.time_ns);
  out.Uint(s.copies_all.bytes);
  out.Uint(s.copies_kind_known);
  out.Uint(s.copies_pageable.count);
  out.Int(s.copies_pageable.time_ns);
  out.Uint(s.copies_pageable.bytes);
  out.Uint(s.streams.size());
  for (const Stream& st : s.streams) {
    out.String(st.host);
    out.Int(st.rank);
    out.Int(st.pid);
    out.Uint(st.devices.size());
    for (const auto& [id, d] : st.devices) {
      out.Uint(id);
      out.Int(d.span_ns);
      out.Int(d.union_ns);  // IntervalUnion::Save
      out.Uint(d.late_records);
      out.Int(d.width_ns);  // BucketSeries::Save
      out.Uint(d.busy.size());
      for (const double v : d.busy) out.Double(v);
    }
    out.Uint(st.device_info.size());
    for (const auto& [id, info] : st.device_info) {
      out.Uint(id);
      out.Message(info);
    }
  }
  return out.Take();
}

void HandMerge(std::string_view bytes, State* s) {
  PartialDecoder in(bytes);
  s->rows_seen += in.Uint();
  s->evicted += in.Uint();
  MergeArray(in, &s->activity);
  MergeArray(in, &s->memory_ops);
  MergeArray(in, &s->precision);
  for (std::size_t n = in.Count(); n > 0; --n) MergeTotals(in, &s->kernels[in.String()]);
  for (std::size_t n = in.Count(); n > 0; --n) {
    AnnotationGpu& a = s->annotations[in.String()];
    a.gpu_time_ns += in.Int();
    a.activities += in.Uint();
    a.inferred_time_ns += in.Int();
    a.inferred_activities += in.Uint();
  }
  Histogram saved;  // LogHistogram::MergeFrom
  saved.count = in.Uint();
  if (saved.count != 0) {
    saved.total = in.Int();
    saved.min = in.Int();
    saved.max = in.Int();
    std::size_t index = 0;
    for (std::size_t n = in.Count(); n > 0; --n) {
      index += in.Uint();
      if (index >= saved.counts.size()) saved.counts.resize(index + 1, 0);
      saved.counts[index] += in.Uint();
    }
    Histogram& h = s->latency;
    h.min = h.count == 0 ? saved.min : std::min(h.min, saved.min);
    h.max = h.count == 0 ? saved.max : std::max(h.max, saved.max);
    h.count += saved.count;
    h.total += saved.total;
    if (h.counts.size() < saved.counts.size()) h.counts.resize(saved.counts.size(), 0);
    for (std::size_t i = 0; i < saved.counts.size(); ++i) h.counts[i] += saved.counts[i];
  }
  s->launch_kernels += in.Uint();
  s->launch_kernel_time_ns += in.Int();
  s->tiny_kernels += in.Uint();
  s->tiny_kernel_time_ns += in.Int();
  s->tiny_launch_time_ns += in.Int();
  MergeTotals(in, &s->copies_all);
  s->copies_kind_known += in.Uint();
  MergeTotals(in, &s->copies_pageable);
  for (std::size_t n = in.Count(); n > 0; --n) {
    Stream& st = s->streams.emplace_back();
    st.host = in.String();
    st.rank = static_cast<std::int32_t>(in.Int());
    st.pid = in.Int();
    for (std::size_t d = in.Count(); d > 0; --d) {
      Device& device = st.devices[static_cast<std::uint32_t>(in.Uint())];
      device.span_ns = in.Int();
      device.union_ns = in.Int();
      device.late_records = in.Uint();
      device.width_ns = in.Int();
      device.busy.resize(in.Count());
      for (double& v : device.busy) v = in.Double();
    }
    for (std::size_t d = in.Count(); d > 0; --d) in.Message(&st.device_info[static_cast<std::uint32_t>(in.Uint())]);
  }
  if (!in.done()) std::abort();
}

// ---- the prototype message -----------------------------------------------------
namespace pb = smprof_bench;

void FillTotals(const Totals& t, pb::Totals* out) {
  out->set_count(t.count);
  out->set_time_ns(t.time_ns);
  out->set_bytes(t.bytes);
}
void AddTotals(const pb::Totals& in, Totals* t) {
  t->count += in.count();
  t->time_ns += in.time_ns();
  t->bytes += in.bytes();
}
template <std::size_t N>
void AddArray(const google::protobuf::RepeatedPtrField<pb::Totals>& in, std::array<Totals, N>* all) {
  if (static_cast<std::size_t>(in.size()) != N) std::abort();
  for (std::size_t i = 0; i < N; ++i) AddTotals(in.Get(static_cast<int>(i)), &(*all)[i]);
}

std::string ProtoEncode(const State& s, pb::GpuMetricsState* m) {
  m->Clear();
  m->set_rows_seen(s.rows_seen);
  m->set_evicted_correlations(s.evicted);
  for (const Totals& t : s.activity) FillTotals(t, m->add_activity());
  for (const Totals& t : s.memory_ops) FillTotals(t, m->add_memory_ops());
  for (const Totals& t : s.precision) FillTotals(t, m->add_precision());
  for (const auto* k : ByKey(s.kernels)) {
    pb::NamedTotals* e = m->add_kernels();
    e->set_name(k->first);
    e->set_count(k->second.count);
    e->set_time_ns(k->second.time_ns);
    e->set_bytes(k->second.bytes);
  }
  for (const auto* a : ByKey(s.annotations)) {
    pb::AnnotationGpu* e = m->add_annotations();
    e->set_name(a->first);
    e->set_gpu_time_ns(a->second.gpu_time_ns);
    e->set_activities(a->second.activities);
    e->set_inferred_time_ns(a->second.inferred_time_ns);
    e->set_inferred_activities(a->second.inferred_activities);
  }
  pb::LogHistogram* h = m->mutable_launch_latency();
  h->set_count(s.latency.count);
  if (s.latency.count != 0) {
    h->set_total(s.latency.total);
    h->set_min(s.latency.min);
    h->set_max(s.latency.max);
    std::size_t previous = 0;
    for (std::size_t i = 0; i < s.latency.counts.size(); ++i) {
      if (s.latency.counts[i] == 0) continue;
      h->add_index_gaps(i - previous);
      h->add_counts(s.latency.counts[i]);
      previous = i;
    }
  }
  pb::LaunchTotals* l = m->mutable_launches();
  l->set_kernels(s.launch_kernels);
  l->set_kernel_time_ns(s.launch_kernel_time_ns);
  l->set_tiny_kernels(s.tiny_kernels);
  l->set_tiny_kernel_time_ns(s.tiny_kernel_time_ns);
  l->set_tiny_launch_time_ns(s.tiny_launch_time_ns);
  FillTotals(s.copies_all, m->mutable_host_copies_all());
  m->set_host_copies_memory_kind_known(s.copies_kind_known);
  FillTotals(s.copies_pageable, m->mutable_host_copies_pageable());
  for (const Stream& st : s.streams) {
    pb::Stream* e = m->add_streams();
    e->set_host(st.host);
    e->set_rank(st.rank);
    e->set_pid(st.pid);
    for (const auto& [id, d] : st.devices) {
      pb::Device* device = e->add_devices();
      device->set_id(id);
      device->set_span_ns(d.span_ns);
      device->set_union_ns(d.union_ns);
      device->set_late_records(d.late_records);
      device->set_bucket_width_ns(d.width_ns);
      device->mutable_busy()->Add(d.busy.begin(), d.busy.end());
    }
    for (const auto& [id, info] : st.device_info) {
      pb::DeviceInfo* i = e->add_device_info();
      i->set_id(id);
      info.SerializeToString(i->mutable_info());
    }
  }
  return m->SerializeAsString();
}

void ProtoMerge(std::string_view bytes, pb::GpuMetricsState* m, State* s) {
  if (!m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) std::abort();
  s->rows_seen += m->rows_seen();
  s->evicted += m->evicted_correlations();
  AddArray(m->activity(), &s->activity);
  AddArray(m->memory_ops(), &s->memory_ops);
  AddArray(m->precision(), &s->precision);
  for (const pb::NamedTotals& k : m->kernels()) {
    Totals& t = s->kernels[k.name()];
    t.count += k.count();
    t.time_ns += k.time_ns();
    t.bytes += k.bytes();
  }
  for (const pb::AnnotationGpu& a : m->annotations()) {
    AnnotationGpu& t = s->annotations[a.name()];
    t.gpu_time_ns += a.gpu_time_ns();
    t.activities += a.activities();
    t.inferred_time_ns += a.inferred_time_ns();
    t.inferred_activities += a.inferred_activities();
  }
  const pb::LogHistogram& saved = m->launch_latency();
  if (saved.count() != 0) {
    if (saved.index_gaps_size() != saved.counts_size()) std::abort();
    Histogram& h = s->latency;
    h.min = h.count == 0 ? saved.min() : std::min(h.min, saved.min());
    h.max = h.count == 0 ? saved.max() : std::max(h.max, saved.max());
    h.count += saved.count();
    h.total += saved.total();
    std::size_t index = 0;
    for (int n = 0; n < saved.counts_size(); ++n) {
      index += saved.index_gaps(n);
      if (index >= h.counts.size()) h.counts.resize(index + 1, 0);
      h.counts[index] += saved.counts(n);
    }
  }
  const pb::LaunchTotals& l = m->launches();
  s->launch_kernels += l.kernels();
  s->launch_kernel_time_ns += l.kernel_time_ns();
  s->tiny_kernels += l.tiny_kernels();
  s->tiny_kernel_time_ns += l.tiny_kernel_time_ns();
  s->tiny_launch_time_ns += l.tiny_launch_time_ns();
  AddTotals(m->host_copies_all(), &s->copies_all);
  s->copies_kind_known += m->host_copies_memory_kind_known();
  AddTotals(m->host_copies_pageable(), &s->copies_pageable);
  for (const pb::Stream& e : m->streams()) {
    Stream& st = s->streams.emplace_back();
    st.host = e.host();
    st.rank = e.rank();
    st.pid = e.pid();
    for (const pb::Device& d : e.devices()) {
      Device& device = st.devices[d.id()];
      device.span_ns = d.span_ns();
      device.union_ns = d.union_ns();
      device.late_records = d.late_records();
      device.width_ns = d.bucket_width_ns();
      device.busy.assign(d.busy().begin(), d.busy().end());
    }
    for (const pb::DeviceInfo& i : e.device_info()) {
      if (!st.device_info[i.id()].ParseFromString(i.info())) std::abort();
    }
  }
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Samples {
  std::vector<double> us;
  std::uint64_t allocations = 0;  // per operation, of the last run
};

void Row(const char* what, const char* codec, const Samples& s, double baseline) {
  std::vector<double> v = s.us;
  std::sort(v.begin(), v.end());
  std::printf("| %s | %s | %.1f | %.1f | %.1f | %.2f | %llu |\n", what, codec, Median(v), v.front(), v.back(),
              Median(v) / baseline, static_cast<unsigned long long>(s.allocations));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  const int runs = quick ? 5 : 21, ops = quick ? 200 : 2'000;
  std::printf("GpuMetrics' partial state; %d runs of %d operations per case, interleaved; thread CPU time\n", runs,
              ops);
  std::printf("| state | codec | bytes | vs shipped |\n|---|---|---:|---:|\n");
  struct Shape {
    const char* name;
    int streams;
  };
  const Shape shapes[] = {{"one stream (555 k events)", 1}, {"merged, 8 streams", 8}};
  std::vector<std::pair<std::string, Samples>> timings;  // 4 cases per shape
  for (const Shape& shape : shapes) {
    const State state = MakeState(shape.streams);
    pb::GpuMetricsState message;
    const std::string hand = HandEncode(state), proto = ProtoEncode(state, &message);
    State from_hand, from_proto;
    HandMerge(hand, &from_hand);
    ProtoMerge(proto, &message, &from_proto);
    if (!SameState(state, from_hand) || !SameState(state, from_proto)) {
      std::fprintf(stderr, "a codec did not give back the state\n");
      return 1;
    }
    std::printf("| %s | shipped | %zu | 1.00 |\n| %s | protobuf-lite | %zu | %.2f |\n", shape.name, hand.size(),
                shape.name, proto.size(), static_cast<double>(proto.size()) / static_cast<double>(hand.size()));

    Samples samples[4];  // hand encode, proto encode, hand decode+merge, proto decode+merge
    std::uint64_t sink = 0;
    for (int r = 0; r <= runs; ++r) {  // run 0 warms up
      for (int c = 0; c < 4; ++c) {
        const std::uint64_t allocations = g_allocations;
        const double start = ThreadCpuSeconds();
        for (int i = 0; i < ops; ++i) {
          switch (c) {
            case 0:
              sink += HandEncode(state).size();
              break;
            case 1:
              sink += ProtoEncode(state, &message).size();
              break;
            case 2: {
              State merged;
              HandMerge(hand, &merged);
              sink += merged.kernels.size();
              break;
            }
            case 3: {
              State merged;
              ProtoMerge(proto, &message, &merged);
              sink += merged.kernels.size();
              break;
            }
          }
        }
        const double us = (ThreadCpuSeconds() - start) * 1e6 / ops;
        if (r > 0) {
          samples[c].us.push_back(us);
          samples[c].allocations = (g_allocations - allocations) / static_cast<std::uint64_t>(ops);
        }
      }
    }
    if (sink == 0) return 1;
    for (Samples& one : samples) timings.emplace_back(shape.name, std::move(one));
  }
  std::printf(
      "\n| state | operation | codec | us per op: median | min | max | vs shipped | allocations per op |\n"
      "|---|---|---|---:|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < timings.size(); i += 4) {
    const double encode = Median(timings[i].second.us), decode = Median(timings[i + 2].second.us);
    std::string what = timings[i].first + " | encode";
    Row(what.c_str(), "shipped", timings[i].second, encode);
    Row(what.c_str(), "protobuf-lite", timings[i + 1].second, encode);
    what = timings[i].first + " | decode+merge";
    Row(what.c_str(), "shipped", timings[i + 2].second, decode);
    Row(what.c_str(), "protobuf-lite", timings[i + 3].second, decode);
  }
  return 0;
}

#include "analysis/summary/cpu_metrics.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "analysis/job/stream_order.h"

namespace smprof::analysis {

namespace {

constexpr std::string_view kUtilization = ".utilization";

// "cpu.utilization" -> -1 (the machine), "cpu7.utilization" -> 7, else -2.
int CoreOf(std::string_view name) {
  if (name.size() <= kUtilization.size() + 3 || name.substr(0, 3) != "cpu" ||
      name.substr(name.size() - kUtilization.size()) != kUtilization) {
    return name == "cpu.utilization" ? -1 : -2;
  }
  const std::string_view digits = name.substr(3, name.size() - 3 - kUtilization.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -2;
  }
  return std::atoi(std::string(digits).c_str());
}

double Mean(double value_x_ns, std::int64_t ns) { return ns > 0 ? value_x_ns / static_cast<double>(ns) : 0.0; }

}  // namespace

void CpuMetrics::BeginStream(const ProcessStream& stream) {
  streams_.push_back(std::make_unique<StreamCpu>());
  stream_ = streams_.back().get();
  stream_->host = stream.host;
  stream_->rank = stream.rank;
  stream_->pid = stream.pid;
  stream_->weighted_percent = std::make_unique<BucketSeries>(origin_ns_, max_buckets_);
  stream_->weight_ns = std::make_unique<BucketSeries>(origin_ns_, max_buckets_);
}

void CpuMetrics::BeginFile(const TraceFileEntry& file) {
  file_start_ns_ = file.header.start().monotonic_ns();
  last_ts_.clear();
}

bool CpuMetrics::AddFrame(const TraceFileEntry& file, const internal::FrameRows& frame, WallSpan* span,
                          std::string* error) {
  if (!frame.counters_status.ok()) {
    *error = frame.counters_status.message();
    return false;
  }
  for (const auto& row : frame.counters) {
    span->Extend(row.ts_ns + file.wall_offset_ns, row.ts_ns + file.wall_offset_ns);
    const int core = CoreOf(row.name);
    if (core == -2) continue;
    auto [last, inserted] = last_ts_.try_emplace(std::string(row.name), file_start_ns_);
    const std::int64_t interval = row.ts_ns - last->second;
    last->second = row.ts_ns;
    if (interval <= 0) continue;
    const double weighted = row.value * static_cast<double>(interval);
    Weighted& target = core == -1 ? stream_->machine : stream_->cores[core];
    target.value_x_ns += weighted;
    target.ns += interval;
    if (core == -1) {
      ++stream_->samples;
      stream_->weighted_percent->Add(row.ts_ns + file.wall_offset_ns, weighted);
      stream_->weight_ns->Add(row.ts_ns + file.wall_offset_ns, static_cast<double>(interval));
    }
  }
  return true;
}

double CpuMetrics::stream_utilization_percent() const {
  return stream_->samples ? Mean(stream_->machine.value_x_ns, stream_->machine.ns) : -1.0;
}

std::int64_t CpuMetrics::min_bucket_width() const {
  std::int64_t width = kMinBucketNs;
  for (const StreamCpu* s : HostSources())
    width = std::max({width, s->weighted_percent->width_ns(), s->weight_ns->width_ns()});
  return width;
}

void CpuMetrics::Save(PartialEncoder& out) const {
  out.Uint(streams_.size());
  for (const auto& s : streams_) {
    out.String(s->host);
    out.Int(s->rank);
    out.Int(s->pid);
    out.Uint(s->samples);
    out.Double(s->machine.value_x_ns);
    out.Int(s->machine.ns);
    out.Uint(s->cores.size());
    for (const auto& [core, w] : s->cores) {
      out.Int(core);
      out.Double(w.value_x_ns);
      out.Int(w.ns);
    }
    s->weighted_percent->Save(out);
    s->weight_ns->Save(out);
  }
}

void CpuMetrics::MergeFrom(PartialDecoder& in) {
  for (std::size_t n = in.Count(); n > 0; --n) {
    auto s = std::make_unique<StreamCpu>();
    s->host = in.String();
    s->rank = static_cast<std::int32_t>(in.Int());
    s->pid = in.Int();
    s->samples = in.Uint();
    s->machine.value_x_ns = in.Double();
    s->machine.ns = in.Int();
    for (std::size_t cores = in.Count(); cores > 0; --cores) {
      Weighted& w = s->cores[static_cast<int>(in.Int())];
      w.value_x_ns = in.Double();
      w.ns = in.Int();
    }
    s->weighted_percent = std::make_unique<BucketSeries>(origin_ns_, max_buckets_);
    s->weighted_percent->Restore(in);
    s->weight_ns = std::make_unique<BucketSeries>(origin_ns_, max_buckets_);
    s->weight_ns->Restore(in);
    streams_.push_back(std::move(s));
  }
  stream_ = nullptr;
}

void CpuMetrics::ReorderStreams(const std::vector<std::size_t>& order) { Reorder(streams_, order); }

std::vector<const CpuMetrics::StreamCpu*> CpuMetrics::HostSources() const {
  std::map<std::string, const StreamCpu*> by_host;
  for (const auto& s : streams_) {
    if (s->samples == 0 && s->cores.empty()) continue;
    const StreamCpu*& best = by_host[s->host];
    if (best == nullptr || s->samples > best->samples) best = s.get();
  }
  std::vector<const StreamCpu*> out;
  for (const auto& [host, s] : by_host) out.push_back(s);
  return out;
}

void CpuMetrics::WriteCpu(JsonWriter& out) const {
  const auto sources = HostSources();
  out.BeginObject();
  out.Field("reason",
            sources.empty() ? "no CPU utilization samples recorded (cpu collector off or run too short)" : "");
  out.Key("hosts").BeginArray();
  for (const StreamCpu* s : sources) {
    std::int64_t active = 0;
    for (const auto& [core, w] : s->cores) active += static_cast<std::int64_t>(w.value_x_ns / 100.0);
    out.BeginObject()
        .Field("host", s->host)
        .Field("rank", s->rank)
        .Field("pid", s->pid)
        .Field("samples", s->samples)
        .Field("utilization_percent", Mean(s->machine.value_x_ns, s->machine.ns))
        .Field("active_ns", active);
    out.Key("cores").BeginArray();
    for (const auto& [core, w] : s->cores) {
      out.BeginObject()
          .Field("core", core)
          .Field("active_ns", static_cast<std::int64_t>(w.value_x_ns / 100.0))
          .Field("utilization_percent", Mean(w.value_x_ns, w.ns))
          .EndObject();
    }
    out.EndArray().EndObject();
  }
  out.EndArray().EndObject();
}

void CpuMetrics::WriteTimeline(std::int64_t width_ns, int buckets, JsonWriter& out) const {
  out.BeginArray();
  for (const StreamCpu* s : HostSources()) {
    const auto weighted = s->weighted_percent->Rebin(width_ns, buckets);
    const auto weights = s->weight_ns->Rebin(width_ns, buckets);
    out.BeginObject().Field("host", s->host).Key("utilization_percent").BeginArray();
    for (int i = 0; i < buckets; ++i) {
      if (weights[i] > 0) {
        out.Double(weighted[i] / weights[i]);
      } else {
        out.Null();
      }
    }
    out.EndArray().EndObject();
  }
  out.EndArray();
}

}  // namespace smprof::analysis

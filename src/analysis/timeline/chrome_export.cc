// The job's timeline as a Chrome Trace Event Format file (JSON, optionally
// gzipped), which ui.perfetto.dev and chrome://tracing open. Streaming:
// events are written as they come, so memory does not grow with the trace.
// docs/EXPORT.md describes the processes, tracks, ids and timestamps.
#include <charconv>
#include <memory>
#include <vector>

#include "analysis/base/json_string.h"
#include "analysis/timeline/slice_args.h"
#include "analysis/timeline/timeline_export.h"
#include "smprof/trace.pb.h"

namespace smprof::analysis {

namespace {

constexpr std::uint32_t kDriverDomain = 2;  // ApiCallRow::domain: 1 runtime, 2 driver

// Trace Event Format: "X" complete events for slices, "C" counters, "s"/"f"
// flow events bound to the enclosing slices, "M" metadata for names and
// order. Timestamps are microseconds since the job's start, with the
// nanoseconds as three fractional digits (exact, unlike a double of
// microseconds since the epoch).
class ChromeWriter : public TimelineWriter {
 public:
  explicit ChromeWriter(ExportOutput* out) : out_(out) {}

  void OnStart(const TimelineJob& job) override {
    origin_ = job.start_wall_ns;
    event_ = "{\"displayTimeUnit\":\"ns\",";
    if (job.ranks.size() == 1) {
      // Kineto's rank and world size, first in the file: HTA finds a file's
      // rank with the regex "rank":\s+(\d+), so the space matters.
      event_ += "\"distributedInfo\": {\"rank\": ";
      AppendInt(job.ranks[0]);
      event_ += ", \"world_size\": ";
      AppendInt(job.world_size);
      event_ += "},";
    }
    event_ += "\"traceEvents\":[";
    out_->Write(event_);
  }

  // Every segment comes after the prologue's events.
  void BeginSegment(const TimelineJob& job, std::uint32_t) override {
    origin_ = job.start_wall_ns;
    first_ = false;
  }

  void Finish() override {
    event_.clear();
    event_ += "\n],\"otherData\":{\"exporter\":\"smprof\",\"job_start_wall_ns\":";
    AppendInt(origin_);
    event_ += "}}\n";
    out_->Write(event_);
  }

  void OnProcess(const TimelineProcess& p) override {
    Metadata(p.id, 0, "process_name", p.name);
    Metadata(p.id, 0, "process_sort_index", p.sort_index);
  }

  void OnTrack(const TimelineTrack& t) override {
    if (t.kind == TrackKind::kCounter) return;  // a counter's track is named by its events
    Metadata(t.process, t.tid, "thread_name", t.name);
    Metadata(t.process, t.tid, "thread_sort_index", t.sort_index);
  }

  void OnSlice(const TimelineSlice& s) override {
    BeginEvent('X', s.track->process, s.track->tid, s.start_wall_ns);
    event_ += ",\"dur\":";
    AppendMicros(s.dur_ns);
    event_ += ",\"cat\":\"";
    event_ += Category(s);
    event_ += "\",\"name\":";
    AppendString(s.name);
    args_.clear();
    CollectSliceArgs(s, &args_);
    if (!args_.empty()) {
      event_ += ",\"args\":{";
      for (std::size_t i = 0; i < args_.size(); ++i) {
        if (i) event_ += ',';
        AppendString(KinetoArgKey(args_[i].key));
        event_ += ':';
        if (args_[i].is_string) {
          AppendString(args_[i].string_value);
        } else {
          AppendInt(args_[i].int_value);
        }
      }
      event_ += '}';
    }
    if (s.chain_role != ChainRole::kNone) ChainFlow(s);
    EndEvent();
  }

  void OnCounter(const TimelineTrack& t, std::int64_t wall_ns, double value) override {
    BeginEvent('C', t.process, 0, wall_ns);
    event_ += ",\"name\":";
    AppendString(t.name);
    event_ += ",\"args\":{\"value\":";
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    event_.append(buf, ec == std::errc() ? end - buf : 0);
    event_ += "}";
    EndEvent();
  }

  void OnFlow(std::uint64_t id, const TimelineTrack& launch, std::int64_t launch_wall_ns, const TimelineTrack& work,
              std::int64_t work_wall_ns) override {
    FlowEvent('s', id, launch, launch_wall_ns);
    FlowEvent('f', id, work, work_wall_ns);
  }

 private:
  // A collective instance's flow across rank processes, on the slice itself
  // (the trace event format's flow v2: bind_id, flow_out, flow_in): begun by
  // the first to arrive, stepped through by the others, ended by the last.
  // The id as hex text: JSON numbers past 2^53 lose digits in JavaScript viewers.
  void ChainFlow(const TimelineSlice& s) {
    char id[17];
    const auto [end, ec] = std::to_chars(id, id + sizeof id, s.flow_id, 16);
    event_ += ",\"bind_id\":\"";
    event_.append(id, ec == std::errc() ? end - id : 0);
    event_ += '"';
    if (s.chain_role != ChainRole::kEnd) event_ += ",\"flow_out\":true";
    if (s.chain_role != ChainRole::kBegin) event_ += ",\"flow_in\":true";
  }

  // Kineto's categories (what torch.profiler writes), which HTA and other
  // Kineto tools select events by.
  static std::string_view Category(const TimelineSlice& s) {
    switch (s.track->kind) {
      case TrackKind::kThread:
        return s.collective != nullptr ? "collective" : "user_annotation";
      case TrackKind::kCudaApi:
        return s.api != nullptr && s.api->domain == kDriverDomain ? "cuda_driver" : "cuda_runtime";
      case TrackKind::kNvtx:
        return "nvtx";
      case TrackKind::kGpuStream:
        return GpuCategory(s.gpu);
      case TrackKind::kCuptiOverhead:
        return "cupti_overhead";
      case TrackKind::kCounter:
        break;
    }
    return "counter";
  }

  static std::string_view GpuCategory(const internal::GpuActivityRow* row) {
    switch (row == nullptr ? 0 : row->kind) {
      case trace::GPU_KIND_KERNEL:
        return "kernel";
      case trace::GPU_KIND_MEMCPY:
        return "gpu_memcpy";
      case trace::GPU_KIND_MEMSET:
        return "gpu_memset";
      case trace::GPU_KIND_SYNC:
        return "cuda_sync";
      default:
        return "gpu";
    }
  }

  // Kineto's name for the launch/GPU work link, which HTA joins them on.
  static std::string_view KinetoArgKey(std::string_view key) { return key == "correlation_id" ? "correlation" : key; }

  void FlowEvent(char phase, std::uint64_t id, const TimelineTrack& track, std::int64_t wall_ns) {
    BeginEvent(phase, track.process, track.tid, wall_ns);
    event_ += ",\"cat\":\"launch\",\"name\":\"launch\",\"id\":";
    AppendInt(static_cast<std::int64_t>(id));
    if (phase == 'f') event_ += ",\"bp\":\"e\"";
    EndEvent();
  }

  template <typename Value>
  void Metadata(std::uint32_t pid, std::uint64_t tid, std::string_view name, const Value& value) {
    event_.clear();
    event_ += first_ ? "\n" : ",\n";
    first_ = false;
    event_ += "{\"ph\":\"M\",\"pid\":";
    AppendInt(pid);
    event_ += ",\"tid\":";
    AppendInt(static_cast<std::int64_t>(tid));
    event_ += ",\"name\":\"";
    event_ += name;
    event_ += "\",\"args\":{";
    if constexpr (std::is_integral_v<Value>) {
      event_ += "\"sort_index\":";
      AppendInt(value);
    } else {
      event_ += "\"name\":";
      AppendString(value);
    }
    event_ += '}';
    EndEvent();
  }

  void BeginEvent(char phase, std::uint32_t pid, std::uint64_t tid, std::int64_t wall_ns) {
    event_.clear();
    event_ += first_ ? "\n" : ",\n";
    first_ = false;
    event_ += "{\"ph\":\"";
    event_ += phase;
    event_ += "\",\"pid\":";
    AppendInt(pid);
    event_ += ",\"tid\":";
    AppendInt(static_cast<std::int64_t>(tid));
    event_ += ",\"ts\":";
    AppendMicros(wall_ns - origin_);
  }

  void EndEvent() {
    event_ += '}';
    out_->Write(event_);
  }

  void AppendInt(std::int64_t v) {
    char buf[24];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    event_.append(buf, end - buf);
  }

  // ns as microseconds with three fractional digits.
  void AppendMicros(std::int64_t ns) {
    if (ns < 0) {
      event_ += '-';
      ns = -ns;
    }
    AppendInt(ns / 1000);
    char frac[5] = {'.', static_cast<char>('0' + ns % 1000 / 100), static_cast<char>('0' + ns % 100 / 10),
                    static_cast<char>('0' + ns % 10), 0};
    event_ += frac;
  }

  void AppendString(std::string_view s) { AppendJsonString(s, &event_); }

  ExportOutput* out_;
  std::int64_t origin_ = 0;
  bool first_ = true;
  std::string event_;  // the event being written, reused
  std::vector<SliceArg> args_;
};

}  // namespace

std::unique_ptr<TimelineWriter> NewChromeWriter(ExportOutput* out) { return std::make_unique<ChromeWriter>(out); }

}  // namespace smprof::analysis

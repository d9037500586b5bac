#include "analysis/summary/summary_builder.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

#include "analysis/job/stream_codec.h"
#include "analysis/job/stream_order.h"
#include "analysis/summary/stats_json.h"

namespace smprof::analysis {

namespace {

// The footer's GpuCollectionReport counts, summed into `total`.
void AddGpuCollection(const trace::GpuCollectionReport& r, trace::GpuCollectionReport* total) {
  total->set_incomplete_records(total->incomplete_records() + r.incomplete_records());
  total->set_zero_timestamp_records(total->zero_timestamp_records() + r.zero_timestamp_records());
  total->set_invalid_records(total->invalid_records() + r.invalid_records());
  total->set_unknown_kind_records(total->unknown_kind_records() + r.unknown_kind_records());
  total->set_unreadable_buffers(total->unreadable_buffers() + r.unreadable_buffers());
  total->set_truncated_buffers(total->truncated_buffers() + r.truncated_buffers());
  total->set_foreign_timebase_records(total->foreign_timebase_records() + r.foreign_timebase_records());
  total->set_marker_overflow(total->marker_overflow() + r.marker_overflow());
  total->set_marker_unmatched_end(total->marker_unmatched_end() + r.marker_unmatched_end());
  total->set_buffers_not_returned(total->buffers_not_returned() + r.buffers_not_returned());
  total->set_foreign_buffers(total->foreign_buffers() + r.foreign_buffers());
}

void SaveStrings(const std::vector<std::string>& strings, PartialEncoder& out) {
  out.Uint(strings.size());
  for (const std::string& s : strings) out.String(s);
}

void MergeStrings(PartialDecoder& in, std::vector<std::string>* strings) {
  for (std::size_t n = in.Count(); n > 0; --n) strings->push_back(in.String());
}

}  // namespace

SummaryBuilder::SummaryBuilder(const SummaryOptions& options, std::int64_t origin_ns)
    : options_(options),
      annotations_(options_),
      gpu_(options_, origin_ns),
      gpu_idle_(options_),
      cpu_(origin_ns, options_.max_buckets),
      step_profile_(options_),
      origin_ns_(origin_ns) {}

void SummaryBuilder::BeginStream(const ProcessStream& stream) {
  processes_.emplace_back();
  process_ = &processes_.back();
  process_->stream = stream;
  process_->clock_offset_ns = stream.files.front().wall_offset_ns;
  stream_drops_ = {};
  footer_drops_ = {};
  annotations_.BeginStream(stream);
  gpu_.BeginStream(stream);
  gpu_idle_.BeginStream(stream);
  cpu_.BeginStream(stream);
  step_profile_.BeginStream(stream);
  collectives_.BeginStream(stream);
  current_file_ = nullptr;
}

void SummaryBuilder::OnFrame(const TraceFileEntry& file, const trace::Frame& frame) {
  frame_rows_.Decode(frame);
  OnFrameRows(file, frame_rows_);
}

void SummaryBuilder::OnFrameRows(const TraceFileEntry& file, const internal::FrameRows& frame) {
  if (current_file_ != &file) {
    current_file_ = &file;
    frame_index_ = 0;
    process_->span.Extend(file.start_wall_ns(), file.start_wall_ns());
    cpu_.BeginFile(file);
  }
  std::string error;
  if (!annotations_.AddFrame(file, frame, &process_->span, &error) ||
      !cpu_.AddFrame(file, frame, &process_->span, &error) || !gpu_.AddFrame(file, frame, &process_->span, &error) ||
      !collectives_.AddFrame(file, frame, &error)) {
    process_->frame_warnings.push_back(file.path + ": frame " + std::to_string(frame_index_) +
                                       " skipped in part: " + error);
  }
  collectives_.AddCommunicationLaunches(gpu_.TakeCommunicationLaunches());
  step_profile_.AddFrame(frame.annotations, frame.counters, file.wall_offset_ns);
  gpu_idle_.AddFrame(file, frame);
  stream_drops_.annotations = std::max(stream_drops_.annotations, frame.dropped_total);
  stream_drops_.gpu = std::max(stream_drops_.gpu, frame.gpu_dropped_total);
  ++frame_index_;
}

void SummaryBuilder::EndFile(const FileReadResult& result) {
  const TraceFileEntry& file = *result.file;
  process_->span.Extend(file.start_wall_ns(), file.start_wall_ns());
  if (result.has_footer) {
    const auto& f = result.footer;
    const std::int64_t stop = f.stop().realtime_ns() + process_->stream.clock.correction_ns;
    if (f.stop().monotonic_ns() != 0 || f.stop().realtime_ns() != 0) process_->span.Extend(stop, stop);
    footer_drops_.annotations += f.annotations_dropped();
    footer_drops_.gpu += f.gpu_records_dropped();
    footer_drops_.cupti += f.cupti_records_dropped();
    footer_drops_.open_ranges += f.open_ranges_at_stop();
    AddGpuCollection(f.gpu_collection(), &footer_drops_.gpu_collection);
    if (!f.gpu_collection().foreign_client().empty()) ++processes_with_foreign_client_;
    footer_drops_.lost_to_write_errors += f.annotations_lost_to_write_errors();
    footer_drops_.refused_open_limit += f.annotations_refused_open_limit();
    footer_drops_.names_cut += f.annotation_names_cut();
    footer_drops_.names_refused += f.annotation_names_refused();
    collectives_.AddFooter(f);
  }
  if (!result.has_footer) {
    process_->end.Clear();
    process_->end.set_how("no_footer");
  } else if (result.footer.has_end()) {
    process_->end = result.footer.end();
  } else {
    process_->end.Clear();
    process_->end.set_how("unknown");
  }
  process_->files.push_back({result.frames, result.has_footer && result.problem.empty(), result.problem});
  if (!result.problem.empty()) process_->read_warnings.push_back(ReadProblemWarning(result));
}

void SummaryBuilder::EndStream() {
  gpu_.EndStream(process_->span);
  gpu_idle_.EndStream();
  collectives_.EndStream();
  process_->annotations = annotations_.stream_annotations();
  process_->steps = annotations_.stream_steps();
  process_->gpu_active_ns = gpu_.stream_active_ns();
  process_->cpu_utilization_percent = cpu_.stream_utilization_percent();
  // Frames carry the session's running totals; footers count their own
  // file (rotation), so a closed session's total is the footers' sum.
  drops_.annotations += std::max(stream_drops_.annotations, footer_drops_.annotations);
  drops_.gpu += std::max(stream_drops_.gpu, footer_drops_.gpu);
  drops_.cupti += footer_drops_.cupti;
  drops_.open_ranges += footer_drops_.open_ranges;
  AddGpuCollection(footer_drops_.gpu_collection, &drops_.gpu_collection);
  drops_.lost_to_write_errors += footer_drops_.lost_to_write_errors;
  drops_.refused_open_limit += footer_drops_.refused_open_limit;
  drops_.names_cut += footer_drops_.names_cut;
  drops_.names_refused += footer_drops_.names_refused;
  process_ = nullptr;
  current_file_ = nullptr;
}

void SummaryBuilder::Save(PartialEncoder& out) const {
  if (process_ != nullptr) throw std::logic_error("SummaryBuilder::Save: inside a stream");
  out.Uint(processes_.size());
  for (const ProcessSummary& p : processes_) {
    SaveStream(p.stream, out);
    out.Int(p.span.start_ns);
    out.Int(p.span.end_ns);
    out.Int(p.clock_offset_ns);
    out.Uint(p.annotations);
    out.Int(p.gpu_active_ns);
    out.Double(p.cpu_utilization_percent);
    p.steps.Save(out);
    out.Uint(p.files.size());
    for (const FileRead& f : p.files) {
      out.Uint(f.frames);
      out.Bool(f.complete);
      out.String(f.problem);
    }
    SaveStrings(p.read_warnings, out);
    SaveStrings(p.frame_warnings, out);
    out.Message(p.end);
  }
  out.Uint(drops_.annotations);
  out.Uint(drops_.open_ranges);
  out.Uint(drops_.gpu);
  out.Uint(drops_.cupti);
  out.Message(drops_.gpu_collection);
  out.Uint(drops_.lost_to_write_errors);
  out.Uint(drops_.refused_open_limit);
  out.Uint(drops_.names_cut);
  out.Uint(drops_.names_refused);
  out.Uint(processes_with_foreign_client_);
  annotations_.Save(out);
  gpu_.Save(out);
  gpu_idle_.Save(out);
  cpu_.Save(out);
  step_profile_.Save(out);
  collectives_.Save(out);
}

void SummaryBuilder::MergeFrom(PartialDecoder& in) {
  if (process_ != nullptr) throw std::logic_error("SummaryBuilder::MergeFrom: inside a stream");
  for (std::size_t n = in.Count(); n > 0; --n) {
    ProcessSummary& p = processes_.emplace_back();
    p.stream = RestoreStream(in);
    p.span.start_ns = in.Int();
    p.span.end_ns = in.Int();
    p.clock_offset_ns = in.Int();
    p.annotations = in.Uint();
    p.gpu_active_ns = in.Int();
    p.cpu_utilization_percent = in.Double();
    p.steps.MergeFrom(in);
    p.files.resize(in.Count());
    if (p.files.size() != p.stream.files.size()) {
      throw std::invalid_argument("partial summary damaged: a stream's files and their reads differ in number");
    }
    for (FileRead& f : p.files) {
      f.frames = in.Uint();
      f.complete = in.Bool();
      f.problem = in.String();
    }
    MergeStrings(in, &p.read_warnings);
    MergeStrings(in, &p.frame_warnings);
    in.Message(&p.end);
  }
  drops_.annotations += in.Uint();
  drops_.open_ranges += in.Uint();
  drops_.gpu += in.Uint();
  drops_.cupti += in.Uint();
  trace::GpuCollectionReport gpu_collection;
  in.Message(&gpu_collection);
  AddGpuCollection(gpu_collection, &drops_.gpu_collection);
  drops_.lost_to_write_errors += in.Uint();
  drops_.refused_open_limit += in.Uint();
  drops_.names_cut += in.Uint();
  drops_.names_refused += in.Uint();
  processes_with_foreign_client_ += in.Uint();
  annotations_.MergeFrom(in);
  gpu_.MergeFrom(in);
  gpu_idle_.MergeFrom(in);
  cpu_.MergeFrom(in);
  step_profile_.MergeFrom(in);
  collectives_.MergeFrom(in);
}

void SummaryBuilder::SortStreams() {
  std::vector<std::size_t> order(processes_.size());
  std::iota(order.begin(), order.end(), 0);
  const auto key = [&](std::size_t i) { return StreamKey(processes_[i].stream); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (key(order[i - 1]) == key(order[i])) {
      const ProcessStream& s = processes_[order[i]].stream;
      throw std::invalid_argument("the partial summaries overlap: " + s.host + " rank " + std::to_string(s.rank) +
                                  " pid " + std::to_string(s.pid) + " session " + std::to_string(s.session_index) +
                                  " is in more than one");
    }
  }
  Reorder(processes_, order);
  annotations_.ReorderStreams(order);
  gpu_.ReorderStreams(order);
  gpu_idle_.ReorderStreams(order);
  cpu_.ReorderStreams(order);
  step_profile_.ReorderStreams(order);
  collectives_.ReorderStreams(order);
}

std::string SummaryBuilder::GpuReason() const {
  if (gpu_.rows() > 0) return "";
  for (const ProcessSummary& p : processes_) {
    for (const auto& c : p.stream.files.front().header.collectors()) {
      if (c.name() == "cuda" && !c.active()) return "no GPU activity recorded: " + c.reason();
    }
  }
  return "no GPU activity recorded in the trace";
}

void SummaryBuilder::WriteJob(JsonWriter& out, const WallSpan& job_span) const {
  std::set<std::string> jobs, hosts;
  std::set<std::int32_t> ranks;
  std::int32_t world_size = 0;
  for (const ProcessSummary& p : processes_) {
    const auto& h = p.stream.files.front().header;
    jobs.insert(h.job());
    hosts.insert(h.host());
    ranks.insert(h.rank());
    world_size = std::max(world_size, h.world_size());
  }
  out.Key("job").BeginObject();
  out.Key("jobs").BeginArray();
  for (const auto& j : jobs) out.String(j);
  out.EndArray().Key("hosts").BeginArray();
  for (const auto& h : hosts) out.String(h);
  out.EndArray().Key("ranks").BeginArray();
  for (const auto r : ranks) out.Int(r);
  out.EndArray();
  out.Field("world_size", world_size);
  out.Field("start_wall_ns", job_span.empty() ? 0 : job_span.start_ns);
  out.Field("end_wall_ns", job_span.empty() ? 0 : job_span.end_ns);
  out.Field("span_ns", job_span.length());
  out.Key("files").BeginArray();
  for (const ProcessSummary& p : processes_) {
    for (std::size_t i = 0; i < p.files.size(); ++i) {
      const TraceFileEntry& file = p.stream.files[i];
      const FileRead& f = p.files[i];
      const auto& h = file.header;
      out.BeginObject()
          .Field("path", file.path)
          .Field("host", h.host())
          .Field("rank", h.rank())
          .Field("pid", static_cast<std::int64_t>(h.pid()))
          .Field("session_index", h.session_index())
          .Field("file_index", h.file_index())
          .Field("bytes", file.bytes)
          .Field("frames", f.frames)
          .Field("complete", f.complete)
          .Field("problem", f.problem)
          .EndObject();
    }
  }
  out.EndArray();
  out.Key("processes").BeginArray();
  for (const ProcessSummary& p : processes_) {
    const auto& h = p.stream.files.front().header;
    out.BeginObject()
        .Field("host", h.host())
        .Field("rank", h.rank())
        .Field("local_rank", h.local_rank())
        .Field("pid", static_cast<std::int64_t>(h.pid()))
        .Field("session_index", h.session_index())
        .Field("forked_child", h.forked_child())
        .Field("worker_of_pid", p.stream.worker_of_pid)
        .Key("argv")
        .BeginArray();
    for (const auto& arg : h.argv()) out.String(arg);
    out.EndArray()
        .Field("library_version", h.library_version())
        .Field("files", static_cast<std::uint64_t>(p.stream.files.size()))
        .Field("start_wall_ns", p.span.empty() ? 0 : p.span.start_ns)
        .Field("end_wall_ns", p.span.empty() ? 0 : p.span.end_ns)
        .Field("span_ns", p.span.length())
        .Field("clock_offset_ns", p.clock_offset_ns)
        .Field("clock_correction_ns", p.stream.clock.correction_ns)
        .Field("clock_correction_uncertainty_ns", p.stream.clock.uncertainty_ns)
        .Field("clock_alignment_problem", p.stream.clock.problem)
        .EndObject();
  }
  out.EndArray();
  out.Key("devices");
  gpu_.WriteDevices(out);
  out.EndObject();
}

void SummaryBuilder::WriteRanks(JsonWriter& out) const {
  out.Key("ranks").BeginArray();
  for (const ProcessSummary& p : processes_) {
    const std::int64_t span = p.span.length();
    out.BeginObject()
        .Field("host", p.stream.host)
        .Field("rank", p.stream.rank)
        .Field("pid", p.stream.pid)
        .Field("worker_of_pid", p.stream.worker_of_pid)
        .Field("span_ns", span)
        .Field("annotations", p.annotations)
        .Field("gpu_active_ns", p.gpu_active_ns)
        .Field("gpu_active_percent", span > 0 ? 100.0 * p.gpu_active_ns / span : 0.0)
        .Key("cpu_utilization_percent");
    if (p.cpu_utilization_percent < 0) {
      out.Null();
    } else {
      out.Double(p.cpu_utilization_percent);
    }
    out.Key("steps");
    WriteStats(p.steps, out);
    out.Key("end").BeginObject().Field("how", p.end.how()).Key("exit_code");
    if (p.end.exit_code_known()) {
      out.Int(p.end.exit_code());
    } else {
      out.Null();
    }
    out.Field("signal", p.end.signal())
        .Field("exception_type", p.end.exception_type())
        .Field("exception_message", p.end.exception_message())
        .EndObject();
    out.EndObject();
  }
  out.EndArray();
}

std::string SummaryBuilder::Write(const std::vector<std::string>& listing_warnings) const {
  WallSpan job_span;
  for (const ProcessSummary& p : processes_) {
    if (!p.span.empty()) job_span.Extend(p.span.start_ns, p.span.end_ns);
  }
  JsonWriter out;
  out.BeginObject();
  out.Field("schema_version", 1);
  out.Key("options")
      .BeginObject()
      .Field("step_pattern", options_.step_pattern)
      .Field("data_wait_pattern", options_.data_wait_pattern)
      .Field("top_k", options_.top_k)
      .Field("max_buckets", options_.max_buckets)
      .Field("reorder_window_ns", options_.reorder_window_ns)
      .Field("max_profiled_steps", options_.max_profiled_steps)
      .EndObject();
  WriteJob(out, job_span);

  out.Key("warnings").BeginArray();
  for (const auto& w : listing_warnings) out.String(w);
  for (const ProcessSummary& p : processes_) {
    for (const auto& w : p.read_warnings) out.String(w);
  }
  for (const ProcessSummary& p : processes_) {
    for (const auto& w : p.frame_warnings) out.String(w);
  }
  for (const auto& w : gpu_.Warnings()) out.String(w);
  for (const ProcessSummary& p : processes_) {
    for (const auto& c : p.stream.files.front().header.collectors()) {
      // "disabled by <Key>" is the user's choice, not a problem to warn of;
      // `collectors` below still lists it.
      if (!c.active() && c.reason().rfind("disabled by ", 0) != 0) {
        out.String(p.stream.host + " rank " + std::to_string(p.stream.rank) + " pid " + std::to_string(p.stream.pid) +
                   ": collector " + c.name() + " off: " + c.reason());
      }
    }
  }
  out.EndArray();

  out.Key("collectors").BeginArray();
  for (const ProcessSummary& p : processes_) {
    for (const auto& c : p.stream.files.front().header.collectors()) {
      out.BeginObject()
          .Field("host", p.stream.host)
          .Field("rank", p.stream.rank)
          .Field("pid", p.stream.pid)
          .Field("name", c.name())
          .Field("active", c.active())
          .Field("reason", c.reason())
          .EndObject();
    }
  }
  out.EndArray();

  out.Key("drops")
      .BeginObject()
      .Field("annotations_dropped", drops_.annotations)
      .Field("open_ranges_at_stop", drops_.open_ranges)
      .Field("annotations_lost_to_write_errors", drops_.lost_to_write_errors)
      .Field("annotations_refused_open_limit", drops_.refused_open_limit)
      .Field("annotation_names_cut", drops_.names_cut)
      .Field("annotation_names_refused", drops_.names_refused)
      .Field("gpu_records_dropped", drops_.gpu)
      .Field("cupti_records_dropped", drops_.cupti)
      .Field("late_gpu_records", gpu_.late_records())
      .Field("unmatched_correlations", gpu_.evicted_correlations())
      .Field("kernels_before_launch", gpu_.kernels_before_launch())
      .Field("graph_activities_unlinked", gpu_.graph_activities_unlinked())
      .Field("gpu_records_incomplete", drops_.gpu_collection.incomplete_records())
      .Field("gpu_records_zero_timestamp", drops_.gpu_collection.zero_timestamp_records())
      .Field("gpu_records_invalid", drops_.gpu_collection.invalid_records())
      .Field("gpu_records_unknown_kind", drops_.gpu_collection.unknown_kind_records())
      .Field("gpu_buffers_unreadable", drops_.gpu_collection.unreadable_buffers())
      .Field("gpu_buffers_truncated", drops_.gpu_collection.truncated_buffers())
      .Field("gpu_records_foreign_timebase", drops_.gpu_collection.foreign_timebase_records())
      .Field("gpu_markers_unpaired",
             drops_.gpu_collection.marker_overflow() + drops_.gpu_collection.marker_unmatched_end())
      .Field("gpu_buffers_not_returned", drops_.gpu_collection.buffers_not_returned())
      .Field("gpu_foreign_buffers", drops_.gpu_collection.foreign_buffers())
      .Field("processes_with_foreign_cupti_client", processes_with_foreign_client_)
      .EndObject();

  WriteRanks(out);
  out.Key("steps");
  annotations_.WriteSteps(options_.step_pattern, out);
  out.Key("annotations");
  annotations_.WriteAnnotations(out);
  out.Key("gpu").BeginObject();
  gpu_.WriteGpuFields(GpuReason(), out);
  out.Key("idle");
  gpu_idle_.WriteIdle(out);
  out.Key("overlap");
  gpu_idle_.WriteOverlap(out);
  out.EndObject();
  out.Key("cpu");
  cpu_.WriteCpu(out);
  out.Key("step_profile");
  step_profile_.Write(out);
  out.Key("collectives");
  collectives_.Write(out);

  const std::int64_t grid_span = job_span.empty() ? 0 : job_span.end_ns - origin_ns_;
  const std::int64_t width =
      std::max({BucketWidthFor(grid_span, options_.max_buckets), gpu_.min_bucket_width(), cpu_.min_bucket_width()});
  const int buckets = static_cast<int>((grid_span + width - 1) / width);
  out.Key("timeline").BeginObject();
  out.Field("start_wall_ns", origin_ns_);
  out.Field("bucket_ns", width);
  out.Field("buckets", buckets);
  gpu_.WriteTimeline(width, buckets, out);
  out.Key("cpu_per_node");
  cpu_.WriteTimeline(width, buckets, out);
  out.EndObject();

  out.EndObject();
  return out.text();
}

std::string SummarizeJob(const std::vector<std::string>& paths, const SummaryOptions& options,
                         const ProgressCallback& progress) {
  JobReader reader(paths);
  const std::vector<std::string> listing_warnings = reader.warnings();
  SummaryBuilder builder(options, reader.origin_ns());
  reader.Read(builder, progress);
  return builder.Write(listing_warnings);
}

}  // namespace smprof::analysis

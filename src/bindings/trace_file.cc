#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings/gpu_frame_dict.h"
#include "bindings/module_parts.h"
#include "bindings/text.h"
#include "trace/collective_codec.h"
#include "trace/file_format.h"
#include "trace/frame_codec.h"
#include "trace/frame_rows.h"
#include "trace/gpu_codec.h"
#include "trace/trace_reader.h"

namespace py = pybind11;

namespace smppy {

namespace {

using smprof::internal::TraceReader;

py::dict Anchor(const smprof::trace::ClockAnchor& anchor) {
  py::dict out;
  out["monotonic_ns"] = anchor.monotonic_ns();
  out["realtime_ns"] = anchor.realtime_ns();
  return out;
}

py::dict HeaderDict(const smprof::trace::FileHeader& h) {
  py::dict out;
  out["format_version"] = h.format_version();
  out["library_version"] = Text(h.library_version());
  out["host"] = Text(h.host());
  out["rank"] = h.rank();
  out["local_rank"] = h.local_rank();
  out["world_size"] = h.world_size();
  out["job"] = Text(h.job());
  out["rank_source"] = Text(h.rank_source());
  out["pid"] = h.pid();
  out["parent_pid"] = h.parent_pid();
  py::list argv;
  for (const std::string& arg : h.argv()) argv.append(Text(arg));
  out["argv"] = argv;
  py::dict config;
  for (const auto& [key, value] : h.config()) config[Text(key)] = Text(value);
  out["config"] = config;
  out["start"] = Anchor(h.start());
  out["session_index"] = h.session_index();
  py::list collectors;
  for (const auto& c : h.collectors()) {
    py::dict collector;
    collector["name"] = Text(c.name());
    collector["active"] = c.active();
    collector["reason"] = Text(c.reason());
    collectors.append(collector);
  }
  out["collectors"] = collectors;
  out["forked_child"] = h.forked_child();
  out["parent_trace"] = Text(h.parent_trace());
  py::list perf_events;
  for (const auto& e : h.perf_events()) {
    py::dict event;
    event["name"] = Text(e.name());
    event["track"] = Text(e.track());
    event["unit"] = Text(e.unit());
    event["active"] = e.active();
    event["reason"] = Text(e.reason());
    event["cpus"] = e.cpus();
    event["per_cpu_reason"] = Text(e.per_cpu_reason());
    perf_events.append(event);
  }
  out["perf_events"] = perf_events;
  out["perf_per_cpu_reason"] = Text(h.perf_per_cpu_reason());
  out["cupti_version"] = h.cupti_version();
  out["cuda_driver_version"] = h.cuda_driver_version();
  out["gpu_timebase"] = Text(h.gpu_timebase());
  out["cupti_library"] = Text(h.cupti_library());
  out["file_index"] = h.file_index();
  out["previous_file"] = Text(h.previous_file());
  return out;
}

py::list ClockAlignments(const smprof::trace::Footer& f) {
  py::list rounds;
  for (const auto& a : f.clock_alignments()) {
    py::dict round;
    round["phase"] = Text(a.phase());
    round["reference_rank"] = a.reference_rank();
    round["reference_host"] = Text(a.reference_host());
    round["reference_clock_offset_ns"] = a.reference_clock_offset_ns();
    py::list samples;
    for (const auto& s : a.samples()) {
      py::dict sample;
      sample["local_send_ns"] = s.local_send_ns();
      sample["reference_receive_ns"] = s.reference_receive_ns();
      sample["reference_send_ns"] = s.reference_send_ns();
      sample["local_receive_ns"] = s.local_receive_ns();
      samples.append(sample);
    }
    round["samples"] = samples;
    round["problem"] = Text(a.problem());
    rounds.append(round);
  }
  return rounds;
}

py::dict FooterDict(const smprof::trace::Footer& f) {
  py::dict out;
  out["stop"] = Anchor(f.stop());
  out["annotations_written"] = f.annotations_written();
  out["annotations_dropped"] = f.annotations_dropped();
  out["annotations_refused_open_limit"] = f.annotations_refused_open_limit();
  out["annotation_names_cut"] = f.annotation_names_cut();
  out["annotation_names_refused"] = f.annotation_names_refused();
  out["frames_written"] = f.frames_written();
  out["open_ranges_at_stop"] = f.open_ranges_at_stop();
  out["counter_samples_written"] = f.counter_samples_written();
  out["gpu_records_written"] = f.gpu_records_written();
  out["gpu_records_dropped"] = f.gpu_records_dropped();
  out["cupti_records_dropped"] = f.cupti_records_dropped();
  out["collectives_written"] = f.collectives_written();
  out["collectives_dropped"] = f.collectives_dropped();
  out["next_file"] = Text(f.next_file());
  out["frames_lost_to_write_errors"] = f.frames_lost_to_write_errors();
  out["annotations_lost_to_write_errors"] = f.annotations_lost_to_write_errors();
  out["last_write_error"] = Text(f.last_write_error());
  out["clock_alignments"] = ClockAlignments(f);
  if (f.has_end()) {
    py::dict end;
    end["how"] = Text(f.end().how());
    end["exit_code"] = f.end().exit_code_known() ? py::object(py::int_(f.end().exit_code())) : py::object(py::none());
    end["signal"] = f.end().signal();
    end["exception_type"] = Text(f.end().exception_type());
    end["exception_message"] = Text(f.end().exception_message());
    out["end"] = end;
  } else {
    out["end"] = py::none();
  }
  const auto& g = f.gpu_collection();
  py::dict gpu;
  gpu["incomplete_records"] = g.incomplete_records();
  gpu["zero_timestamp_records"] = g.zero_timestamp_records();
  gpu["invalid_records"] = g.invalid_records();
  gpu["unknown_kind_records"] = g.unknown_kind_records();
  gpu["unreadable_buffers"] = g.unreadable_buffers();
  gpu["truncated_buffers"] = g.truncated_buffers();
  gpu["foreign_timebase_records"] = g.foreign_timebase_records();
  gpu["marker_overflow"] = g.marker_overflow();
  gpu["marker_unmatched_end"] = g.marker_unmatched_end();
  gpu["buffers_not_returned"] = g.buffers_not_returned();
  gpu["foreign_buffers"] = g.foreign_buffers();
  gpu["contexts_synchronized"] = g.contexts_synchronized();
  gpu["synchronize_failure"] = g.synchronize_failure();
  gpu["synchronize_timed_out"] = g.synchronize_timed_out();
  gpu["synchronize_skipped"] = g.synchronize_skipped();
  gpu["foreign_client"] = g.foreign_client();
  out["gpu_collection"] = f.has_gpu_collection() ? py::object(gpu) : py::object(py::none());
  return out;
}

// The frame's collective calls, one list per column.
py::dict CollectivesDict(const smprof::trace::Frame& frame) {
  std::vector<smprof::internal::CollectiveRow> rows;
  if (smprof::Status s = smprof::internal::DecodeCollectives(frame, &rows); !s.ok()) {
    throw std::runtime_error(s.message());
  }
  const std::size_t n = rows.size();
  py::list start(n), call_dur(n), op(n), group(n), group_size(n), group_rank(n), sequence(n), bytes(n), dtype(n),
      async_op(n), tid(n), wait_start(n), wait_dur(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = rows[i];
    start[i] = py::int_(r.start_ns);
    call_dur[i] = py::int_(r.call_dur_ns);
    op[i] = Text(r.op);
    group[i] = Text(r.group);
    group_size[i] = py::int_(r.group_size);
    group_rank[i] = py::int_(r.group_rank);
    sequence[i] = py::int_(r.sequence);
    bytes[i] = py::int_(r.bytes);
    dtype[i] = Text(r.dtype);
    async_op[i] = py::bool_(r.async_op);
    tid[i] = py::int_(r.tid);
    wait_start[i] = py::int_(r.wait_offset_ns != 0 ? r.start_ns + r.wait_offset_ns : 0);
    wait_dur[i] = py::int_(r.wait_dur_ns);
  }
  py::dict out;
  out["start_ns"] = start;
  out["call_dur_ns"] = call_dur;
  out["op"] = op;
  out["group"] = group;
  out["group_size"] = group_size;
  out["group_rank"] = group_rank;
  out["sequence"] = sequence;
  out["bytes"] = bytes;
  out["dtype"] = dtype;
  out["async_op"] = async_op;
  out["tid"] = tid;
  out["wait_start_ns"] = wait_start;  // 0: no Work.wait() recorded
  out["wait_dur_ns"] = wait_dur;
  return out;
}

// Columns of one frame as Python lists.
py::dict FrameDict(const smprof::trace::Frame& frame) {
  std::vector<smprof::internal::AnnotationRow> rows;
  if (smprof::Status s = smprof::internal::DecodeAnnotations(frame, &rows); !s.ok()) {
    throw std::runtime_error(s.message());
  }
  const std::size_t n = rows.size();
  py::list start(n), dur(n), name(n), tid(n), depth(n);
  for (std::size_t i = 0; i < n; ++i) {
    start[i] = py::int_(rows[i].start_ns);
    dur[i] = py::int_(rows[i].dur_ns);
    name[i] = Text(rows[i].name);
    tid[i] = py::int_(rows[i].tid);
    depth[i] = py::int_(rows[i].depth);
  }
  py::dict annotations;
  annotations["start_ns"] = start;
  annotations["dur_ns"] = dur;
  annotations["name"] = name;
  annotations["tid"] = tid;
  annotations["depth"] = depth;
  py::dict threads;
  for (const auto& thread : frame.threads()) threads[py::int_(thread.tid())] = Text(thread.name());

  std::vector<smprof::internal::CounterRow> samples;
  if (smprof::Status s = smprof::internal::DecodeCounters(frame, &samples); !s.ok()) {
    throw std::runtime_error(s.message());
  }
  const std::size_t m = samples.size();
  py::list counter_ts(m), counter_value(m), counter_name(m), counter_unit(m);
  for (std::size_t i = 0; i < m; ++i) {
    counter_ts[i] = py::int_(samples[i].ts_ns);
    counter_value[i] = py::float_(samples[i].value);
    counter_name[i] = Text(samples[i].name);
    counter_unit[i] = Text(samples[i].unit);
  }
  py::dict counters;
  counters["ts_ns"] = counter_ts;
  counters["value"] = counter_value;
  counters["name"] = counter_name;
  counters["unit"] = counter_unit;
  py::dict out;
  out["sequence"] = frame.sequence();
  out["dropped_total"] = frame.dropped_total();
  out["annotations"] = annotations;
  out["threads"] = threads;
  out["counters"] = counters;
  out["collectives"] = CollectivesDict(frame);
  out["collectives_dropped_total"] = frame.collectives_dropped_total();
  AddGpuTables(frame, &out);
  return out;
}

// What `smprof top` reads of a frame (smppy/analysis/live.py): its annotations
// (start_ns, dur_ns, name), its counters (ts_ns, value, name), and its GPU
// work (kernels, copies, sets) as the union of their intervals (gpu_start_ns,
// gpu_end_ns): a fraction of FrameDict's objects for a frame of many kernels.
py::dict LiveFrameDict(const smprof::internal::FrameRows& frame) {
  for (const smprof::Status* s : {&frame.annotations_status, &frame.counters_status, &frame.gpu_status}) {
    if (!s->ok()) throw std::runtime_error(s->message());
  }
  const auto& rows = frame.annotations;
  py::list start(rows.size()), dur(rows.size()), name(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    start[i] = py::int_(rows[i].start_ns);
    dur[i] = py::int_(rows[i].dur_ns);
    name[i] = Text(rows[i].name);
  }
  const auto& samples = frame.counters;
  py::list counter_ts(samples.size()), counter_value(samples.size()), counter_name(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    counter_ts[i] = py::int_(samples[i].ts_ns);
    counter_value[i] = py::float_(samples[i].value);
    counter_name[i] = Text(samples[i].name);
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (const auto& a : frame.gpu) {
    if (a.kind == smprof::trace::GPU_KIND_KERNEL || a.kind == smprof::trace::GPU_KIND_MEMCPY ||
        a.kind == smprof::trace::GPU_KIND_MEMSET) {
      spans.emplace_back(a.start_ns, a.start_ns + a.dur_ns);
    }
  }
  std::sort(spans.begin(), spans.end());
  py::list gpu_start, gpu_end;
  for (std::size_t i = 0; i < spans.size();) {
    auto [lo, hi] = spans[i];
    for (++i; i < spans.size() && spans[i].first <= hi; ++i) hi = std::max(hi, spans[i].second);
    gpu_start.append(py::int_(lo));
    gpu_end.append(py::int_(hi));
  }
  py::dict annotations, counters, out;
  annotations["start_ns"] = start;
  annotations["dur_ns"] = dur;
  annotations["name"] = name;
  counters["ts_ns"] = counter_ts;
  counters["value"] = counter_value;
  counters["name"] = counter_name;
  out["annotations"] = annotations;
  out["counters"] = counters;
  out["gpu_start_ns"] = gpu_start;
  out["gpu_end_ns"] = gpu_end;
  return out;
}

class TraceFile {
 public:
  TraceFile(const std::string& path, bool follow) {
    if (smprof::Status s = TraceReader::Open(path, &reader_); !s.ok()) throw py::value_error(s.message());
    reader_->set_follow(follow);
  }
  py::dict header() const { return HeaderDict(reader_->header()); }
  // The next frame as a dict, or None when reading has ended. A frame whose
  // checksum is right but whose columns contradict each other is skipped, as
  // the C++ analyses skip it; problem() names the first such frame.
  py::object next_frame() {
    smprof::trace::Frame frame;
    return NextDict(
        &frame, [](const smprof::trace::Frame& f) { return f.sequence(); }, FrameDict);
  }
  // The same, as LiveFrameDict (what `smprof top` reads), by the fast decoder.
  py::object next_live_frame() {
    return NextDict(
        &rows_, [](const smprof::internal::FrameRows& f) { return f.sequence; }, LiveFrameDict);
  }
  py::object footer() const { return reader_->has_footer() ? py::object(FooterDict(reader_->footer())) : py::none(); }
  // The reader's problem and a frame that did not decode, whichever there are.
  py::object problem() const {
    const std::string& read = reader_->problem();
    if (read.empty() && decode_problem_.empty()) return py::none();
    return Text(read.empty() ? decode_problem_ : decode_problem_.empty() ? read : decode_problem_ + "; " + read);
  }
  std::uint64_t problem_offset() const { return reader_->problem_offset(); }
  bool waiting() const { return reader_->waiting(); }

 private:
  // The next frame read into `frame` and made a dict by `to_dict`; a frame
  // that does not decode is skipped and noted (problem()).
  template <typename Frame, typename Sequence, typename ToDict>
  py::object NextDict(Frame* frame, const Sequence& sequence, const ToDict& to_dict) {
    while (reader_->NextFrame(frame)) {
      try {
        return to_dict(*frame);
      } catch (const std::runtime_error& e) {
        if (decode_problem_.empty()) {
          decode_problem_ =
              "corrupt: frame " + std::to_string(sequence(*frame)) + " does not decode (" + e.what() + "); skipped";
        }
      }
    }
    return py::none();
  }

  std::unique_ptr<TraceReader> reader_;
  smprof::internal::FrameRows rows_;  // next_live_frame's: points into the reader's buffer
  std::string decode_problem_;
};

}  // namespace

void BindTraceFile(py::module_& m) {
  // bytes first: pybind11's str argument would take bytes too.
  m.def(
      "has_trace_magic",
      [](const py::bytes& start) {
        constexpr std::size_t kMagicSize = sizeof(smprof::trace_format::kMagic) - 1;  // without the version
        const std::string_view bytes(start);
        return bytes.size() >= kMagicSize &&
               bytes.compare(0, kMagicSize, smprof::trace_format::kMagic, kMagicSize) == 0;
      },
      py::arg("start"), "True if these bytes (a file's first 16 or more) start like an smprof trace.");
  m.def("has_trace_magic", &smprof::internal::HasTraceMagic, py::arg("path"),
        "True if the file starts like an smprof trace (its magic bytes), whatever its name.");
  py::class_<TraceFile>(m, "TraceFile", "One rank file, read frame by frame.")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("follow") = false,
           "follow: the file is still being written; next_frame() returns None at its end (or at a chunk not "
           "yet whole) with `waiting` True, and a later call goes on from there.")
      .def_property_readonly("header", &TraceFile::header)
      .def("next_frame", &TraceFile::next_frame)
      .def("next_live_frame", &TraceFile::next_live_frame,
           "The next frame as smprof top reads it: annotations (start_ns, dur_ns, name), counters (ts_ns, "
           "value, name), and the union of its GPU work's intervals (gpu_start_ns, gpu_end_ns); None at the end.")
      .def_property_readonly("footer", &TraceFile::footer, "The footer, once reading reached it; else None.")
      .def_property_readonly("problem", &TraceFile::problem, "Why reading stopped early, or None.")
      .def_property_readonly("problem_offset", &TraceFile::problem_offset)
      .def_property_readonly("waiting", &TraceFile::waiting,
                             "Following: reading reached what is written so far (call next_frame() again later).");
}

}  // namespace smppy

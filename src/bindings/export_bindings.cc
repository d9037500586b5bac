#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/job/job_reader.h"
#include "analysis/timeline/collective_chains.h"
#include "analysis/timeline/step_window.h"
#include "analysis/timeline/timeline_export.h"
#include "bindings/job_stream.h"
#include "bindings/module_parts.h"

namespace py = pybind11;

namespace smppy {

namespace {

using smprof::analysis::TimelineFormat;
using smprof::analysis::TimelineOptions;
using smprof::analysis::TimelinePlan;
using smprof::analysis::TimelineStats;

TimelineFormat FormatNamed(const std::string& format) {
  if (format == "chrome") return TimelineFormat::kChrome;
  if (format == "perfetto") return TimelineFormat::kPerfetto;
  throw py::value_error("format must be one of: chrome, perfetto (got '" + format + "')");
}

// (first, last) step numbers of the window, as Python passes them.
using Steps = std::optional<std::pair<std::int64_t, std::int64_t>>;

// Raised (a ValueError) when `steps` names no step of the selected ranks, for
// smppy.export to say where it looked.
struct NoStepError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

TimelineOptions OptionsFrom(const std::vector<int>& ranks, std::optional<std::int64_t> start_wall_ns,
                            std::optional<std::int64_t> end_wall_ns, int gpu_utilization_max_buckets,
                            const Steps& steps = std::nullopt, const std::string& step_pattern = "") {
  TimelineOptions options;
  options.ranks = ranks;
  if (start_wall_ns) options.window_start_wall_ns = *start_wall_ns;
  if (end_wall_ns) options.window_end_wall_ns = *end_wall_ns;
  options.gpu_utilization_max_buckets = gpu_utilization_max_buckets;
  if (steps) options.steps = smprof::analysis::StepRange{steps->first, steps->second};
  if (!step_pattern.empty()) options.step_pattern = step_pattern;
  return options;
}

void ThrowIfFailed(const smprof::Status& status, bool no_step = false) {
  if (status.ok()) return;
  if (no_step) throw NoStepError(status.message());
  if (status.code() == smprof::StatusCode::kInvalidArgument) throw py::value_error(status.message());
  throw std::runtime_error(status.message());
}

py::dict StatsDict(const TimelineStats& stats) {
  py::dict out;
  out["job_start_wall_ns"] = stats.job_start_wall_ns;
  out["files"] = stats.files;
  out["processes"] = stats.processes;
  out["slices"] = stats.slices;
  out["counter_samples"] = stats.counter_samples;
  out["flows"] = stats.flows;
  out["warnings"] = stats.warnings;
  return out;
}

py::dict ExportTimeline(const std::vector<std::string>& files, const std::string& path, const std::string& format,
                        bool gzip, const std::vector<int>& ranks, std::optional<std::int64_t> start_wall_ns,
                        std::optional<std::int64_t> end_wall_ns, int gpu_utilization_max_buckets, const Steps& steps,
                        const std::string& step_pattern) {
  const TimelineFormat timeline_format = FormatNamed(format);
  TimelineOptions options =
      OptionsFrom(ranks, start_wall_ns, end_wall_ns, gpu_utilization_max_buckets, steps, step_pattern);
  options.files = files;
  TimelineStats stats;
  std::uint64_t file_bytes = 0;
  smprof::Status status;
  {
    py::gil_scoped_release release;
    status = smprof::analysis::ExportTimeline(timeline_format, options, path, gzip, &stats, &file_bytes);
  }
  ThrowIfFailed(status, stats.no_step);
  py::dict out = StatsDict(stats);
  out["path"] = path;
  out["format"] = format;
  out["file_bytes"] = file_bytes;
  return out;
}

std::vector<smprof::analysis::ProcessStream> StreamsOf(const std::vector<JobStream>& job_streams) {
  std::vector<smprof::analysis::ProcessStream> streams;
  for (const JobStream& s : job_streams) streams.push_back(s.stream);
  return streams;
}

// The trace bytes of each rank process of the export, in export order.
std::vector<std::uint64_t> TimelineGroupBytes(const std::vector<JobStream>& job_streams,
                                              const std::vector<int>& ranks) {
  const auto streams = StreamsOf(job_streams);
  std::vector<std::uint64_t> bytes;
  for (const auto& group : smprof::analysis::PlanTimeline(streams, ranks).groups) bytes.push_back(group.bytes);
  return bytes;
}

// The window of the export of `streams`: [start_wall_ns, end_wall_ns]
// narrowed to `steps` among the selected ranks (None: unbounded), found once
// for all of export_timeline_part's workers.
std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>> TimelineWindow(
    const std::vector<JobStream>& job_streams, const std::vector<int>& ranks, std::optional<std::int64_t> start_wall_ns,
    std::optional<std::int64_t> end_wall_ns, const Steps& steps, const std::string& step_pattern) {
  TimelineOptions options = OptionsFrom(ranks, start_wall_ns, end_wall_ns, 1, steps, step_pattern);
  const auto streams = StreamsOf(job_streams);
  bool no_step = false;
  smprof::Status status;
  {
    py::gil_scoped_release release;
    const TimelinePlan plan = smprof::analysis::PlanTimeline(streams, ranks);
    status = smprof::analysis::ApplyStepWindow(plan, &options, &no_step);
  }
  ThrowIfFailed(status, no_step);
  const TimelineOptions unbounded;
  auto bound = [](std::int64_t value, std::int64_t none) {
    return value == none ? std::nullopt : std::optional(value);
  };
  return {bound(options.window_start_wall_ns, unbounded.window_start_wall_ns),
          bound(options.window_end_wall_ns, unbounded.window_end_wall_ns)};
}

py::bytes TimelineCollectiveChains(const std::vector<JobStream>& job_streams, const std::vector<int>& ranks,
                                   std::optional<std::int64_t> start_wall_ns, std::optional<std::int64_t> end_wall_ns) {
  const TimelineOptions options = OptionsFrom(ranks, start_wall_ns, end_wall_ns, 1);
  const auto streams = StreamsOf(job_streams);
  std::string bytes;
  {
    py::gil_scoped_release release;
    const TimelinePlan plan = smprof::analysis::PlanTimeline(streams, ranks);
    bytes = smprof::analysis::CollectiveChains::Read(plan, options).Serialize();
  }
  return py::bytes(bytes);
}

py::dict ExportTimelinePart(const std::vector<JobStream>& job_streams, std::size_t first_group, std::size_t end_group,
                            const std::string& part_path, const std::string& format, bool gzip,
                            const std::vector<int>& ranks, std::optional<std::int64_t> start_wall_ns,
                            std::optional<std::int64_t> end_wall_ns, int gpu_utilization_max_buckets,
                            std::optional<py::bytes> collective_chains) {
  const TimelineFormat timeline_format = FormatNamed(format);
  TimelineOptions options = OptionsFrom(ranks, start_wall_ns, end_wall_ns, gpu_utilization_max_buckets);
  if (collective_chains) {
    options.collective_chains = std::make_shared<const smprof::analysis::CollectiveChains>(
        smprof::analysis::CollectiveChains::Parse(std::string(*collective_chains)));
  }
  const auto streams = StreamsOf(job_streams);
  TimelineStats stats;
  smprof::Status status;
  {
    py::gil_scoped_release release;
    const TimelinePlan plan = smprof::analysis::PlanTimeline(streams, ranks);
    status = smprof::analysis::WriteTimelinePart(timeline_format, plan, first_group, end_group, options, part_path,
                                                 gzip, &stats);
  }
  ThrowIfFailed(status);
  return StatsDict(stats);
}

py::dict AssembleTimeline(const std::vector<JobStream>& job_streams, const std::vector<std::string>& parts,
                          const std::string& path, const std::string& format, bool gzip,
                          const std::vector<int>& ranks) {
  const TimelineFormat timeline_format = FormatNamed(format);
  const auto streams = StreamsOf(job_streams);
  TimelineStats stats;
  std::uint64_t file_bytes = 0;
  smprof::Status status;
  {
    py::gil_scoped_release release;
    const TimelinePlan plan = smprof::analysis::PlanTimeline(streams, ranks);
    status = smprof::analysis::AssembleTimeline(timeline_format, plan, parts, path, gzip, &stats, &file_bytes);
  }
  ThrowIfFailed(status);
  py::dict out = StatsDict(stats);
  out["file_bytes"] = file_bytes;
  return out;
}

// The earliest session start among `files` on the job's corrected clock (the
// timeline's origin), 0 without a readable file.
std::int64_t JobStartWallNs(const std::vector<std::string>& files) {
  py::gil_scoped_release release;
  const smprof::analysis::JobReader job(files);
  std::optional<std::int64_t> start;
  for (const auto& stream : job.streams()) {
    for (const auto& file : stream.files) start = std::min(start.value_or(file.start_wall_ns()), file.start_wall_ns());
  }
  return start.value_or(0);
}

}  // namespace

void BindExport(py::module_& m) {
  py::register_exception<NoStepError>(m, "NoStepError", PyExc_ValueError);
  m.def("export_timeline", &ExportTimeline, py::arg("files"), py::arg("path"), py::arg("format"),
        py::arg("gzip") = false, py::arg("ranks") = std::vector<int>{}, py::arg("start_wall_ns") = std::nullopt,
        py::arg("end_wall_ns") = std::nullopt, py::arg("gpu_utilization_max_buckets") = 10'000,
        py::arg("steps") = std::nullopt, py::arg("step_pattern") = "",
        "Writes the timeline of the rank `files` to `path` as a Chrome JSON or Perfetto trace; "
        "returns what went in (counts, warnings, file size). `steps` (first, last) narrows the window to "
        "those steps of the selected ranks (`step_pattern`, default the summary's); NoStepError if none ran.");
  m.def("timeline_window", &TimelineWindow, py::arg("streams"), py::arg("ranks") = std::vector<int>{},
        py::arg("start_wall_ns") = std::nullopt, py::arg("end_wall_ns") = std::nullopt, py::arg("steps") = std::nullopt,
        py::arg("step_pattern") = "",
        "The (start_wall_ns, end_wall_ns) window of the timeline of `streams` (job_streams): the bounds given, "
        "narrowed to `steps` (first, last) of the selected ranks; None where unbounded. NoStepError if no "
        "selected rank ran such a step.");
  m.def("timeline_group_bytes", &TimelineGroupBytes, py::arg("streams"), py::arg("ranks") = std::vector<int>{},
        "The trace bytes of each rank process the timeline of `streams` (job_streams) shows, in export order.");
  m.def("export_timeline_part", &ExportTimelinePart, py::arg("streams"), py::arg("first_group"), py::arg("end_group"),
        py::arg("part_path"), py::arg("format"), py::arg("gzip") = false, py::arg("ranks") = std::vector<int>{},
        py::arg("start_wall_ns") = std::nullopt, py::arg("end_wall_ns") = std::nullopt,
        py::arg("gpu_utilization_max_buckets") = 10'000, py::arg("collective_chains") = std::nullopt,
        "Writes the rank processes [first_group, end_group) of the timeline of `streams` (every stream of the "
        "job) to `part_path` (and `part_path`.machine) for assemble_timeline; returns what went in. "
        "`collective_chains`: timeline_collective_chains' bytes, for a Chrome export's collective flows.");
  m.def("timeline_collective_chains", &TimelineCollectiveChains, py::arg("streams"),
        py::arg("ranks") = std::vector<int>{}, py::arg("start_wall_ns") = std::nullopt,
        py::arg("end_wall_ns") = std::nullopt,
        "Each collective instance's first and last arriving rank process in the timeline of `streams` "
        "(job_streams) inside the window, as bytes for export_timeline_part: what a one-process Chrome export "
        "finds itself.");
  m.def("assemble_timeline", &AssembleTimeline, py::arg("streams"), py::arg("parts"), py::arg("path"),
        py::arg("format"), py::arg("gzip") = false, py::arg("ranks") = std::vector<int>{},
        "Writes the timeline of `streams` to `path` from `parts` (export_timeline_part's, every rank process in "
        "order): the bytes export_timeline writes. Returns the processes, machine counter samples, file size.");
  m.def("job_start_wall_ns", &JobStartWallNs, py::arg("files"),
        "The earliest session start among the rank `files`, on the job's corrected clock (wall ns).");
}

}  // namespace smppy

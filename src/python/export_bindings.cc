#include "python/export_bindings.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analysis/chrome_export.h"
#include "analysis/job_reader.h"
#include "analysis/perfetto_export.h"

namespace py = pybind11;

namespace smppy {

namespace {

using smprof::analysis::TimelineOptions;
using smprof::analysis::TimelineStats;

py::dict ExportTimeline(const std::vector<std::string>& files, const std::string& path, const std::string& format,
                        bool gzip, const std::vector<int>& ranks, std::optional<std::int64_t> start_wall_ns,
                        std::optional<std::int64_t> end_wall_ns, int gpu_utilization_max_buckets) {
  if (format != "chrome" && format != "perfetto") {
    throw py::value_error("format must be one of: chrome, perfetto (got '" + format + "')");
  }
  TimelineOptions options;
  options.files = files;
  options.ranks = ranks;
  if (start_wall_ns) options.window_start_wall_ns = *start_wall_ns;
  if (end_wall_ns) options.window_end_wall_ns = *end_wall_ns;
  options.gpu_utilization_max_buckets = gpu_utilization_max_buckets;
  TimelineStats stats;
  std::uint64_t file_bytes = 0;
  smprof::Status status;
  {
    py::gil_scoped_release release;
    status = format == "chrome" ? ExportChromeTrace(options, path, gzip, &stats, &file_bytes)
                                : ExportPerfettoTrace(options, path, gzip, &stats, &file_bytes);
  }
  if (!status.ok()) {
    if (status.code() == smprof::StatusCode::kInvalidArgument) throw py::value_error(status.message());
    throw std::runtime_error(status.message());
  }
  py::dict out;
  out["path"] = path;
  out["format"] = format;
  out["file_bytes"] = file_bytes;
  out["job_start_wall_ns"] = stats.job_start_wall_ns;
  out["files"] = stats.files;
  out["processes"] = stats.processes;
  out["slices"] = stats.slices;
  out["counter_samples"] = stats.counter_samples;
  out["flows"] = stats.flows;
  out["warnings"] = stats.warnings;
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
  m.def("export_timeline", &ExportTimeline, py::arg("files"), py::arg("path"), py::arg("format"),
        py::arg("gzip") = false, py::arg("ranks") = std::vector<int>{}, py::arg("start_wall_ns") = std::nullopt,
        py::arg("end_wall_ns") = std::nullopt, py::arg("gpu_utilization_max_buckets") = 10'000,
        "Writes the timeline of the rank `files` to `path` as a Chrome JSON or Perfetto trace; "
        "returns what went in (counts, warnings, file size).");
  m.def("job_start_wall_ns", &JobStartWallNs, py::arg("files"),
        "The earliest session start among the rank `files`, on the job's corrected clock (wall ns).");
}

}  // namespace smppy

#include "python/analysis_bindings.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analysis/job_summary.h"
#include "analysis/job_tables.h"
#include "python/text.h"

namespace py = pybind11;

namespace smppy {

namespace {

using smprof::analysis::SummaryOptions;

py::bytes Summarize(const std::vector<std::string>& paths, const std::string& step_pattern,
                    const std::string& data_wait_pattern, int top_k, int max_buckets, std::int64_t reorder_window_ns,
                    const py::object& progress) {
  SummaryOptions options;
  if (!step_pattern.empty()) options.step_pattern = step_pattern;
  if (!data_wait_pattern.empty()) options.data_wait_pattern = data_wait_pattern;
  try {
    std::regex check(options.data_wait_pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw py::value_error("data_wait_pattern: not a valid regular expression (" + std::string(e.what()) +
                          "): " + options.data_wait_pattern);
  }
  if (top_k < 0) throw py::value_error("top_k: must be >= 0, got " + std::to_string(top_k));
  if (max_buckets < 1) throw py::value_error("max_buckets: must be >= 1, got " + std::to_string(max_buckets));
  if (reorder_window_ns < 0) throw py::value_error("reorder_window_ns: must be >= 0");
  options.top_k = top_k;
  options.max_buckets = max_buckets;
  options.reorder_window_ns = reorder_window_ns;
  smprof::analysis::ProgressCallback report;
  if (!progress.is_none()) {
    report = [&progress](std::uint64_t done, std::uint64_t total) {
      py::gil_scoped_acquire gil;
      progress(done, total);
    };
  }
  std::string json;
  try {
    py::gil_scoped_release release;
    json = smprof::analysis::SummarizeJob(paths, options, report);
  } catch (const std::regex_error& e) {
    throw py::value_error("step_pattern: not a valid regular expression (" + std::string(e.what()) +
                          "): " + options.step_pattern);
  }
  return py::bytes(json);
}

py::list ToList(const smprof::analysis::Column& column) {
  using Type = smprof::analysis::Column::Type;
  switch (column.type) {
    case Type::kInt:
      return py::cast(column.ints);
    case Type::kDouble:
      return py::cast(column.doubles);
    case Type::kString: {
      py::list out(column.strings.size());
      for (std::size_t i = 0; i < column.strings.size(); ++i) {
        out[i] = Text(column.strings[i]);
      }
      return out;
    }
  }
  return py::list();
}

py::tuple ReadTables(const std::vector<std::string>& paths, const std::string& step_pattern,
                     const std::set<std::string>& tables_wanted) {
  const std::string pattern = step_pattern.empty() ? smprof::analysis::kDefaultStepPattern : step_pattern;
  smprof::analysis::JobTables tables;
  std::vector<std::string> warnings;
  try {
    py::gil_scoped_release release;
    tables = smprof::analysis::ReadJobTables(paths, pattern, tables_wanted, &warnings);
  } catch (const std::regex_error& e) {
    throw py::value_error("step_pattern: not a valid regular expression (" + std::string(e.what()) + "): " + pattern);
  }
  py::dict out;
  for (const auto& [name, table] : tables) {
    py::dict columns;
    for (const auto& column : table.columns()) columns[py::str(column.name)] = ToList(column);
    out[py::str(name)] = columns;
  }
  return py::make_tuple(out, warnings);
}

}  // namespace

void BindAnalysis(py::module_& m) {
  m.def("summarize", &Summarize, py::arg("paths"), py::arg("step_pattern") = "", py::arg("data_wait_pattern") = "",
        py::arg("top_k") = 15, py::arg("max_buckets") = 200,
        py::arg("reorder_window_ns") = SummaryOptions().reorder_window_ns, py::arg("progress") = py::none(),
        "The job summary of the trace files under `paths` as JSON text (docs/ANALYSIS.md); "
        "progress(done_bytes, total_bytes) is called after each frame and each file.");
  m.def("read_tables", &ReadTables, py::arg("paths"), py::arg("step_pattern") = "",
        py::arg("tables") = std::set<std::string>(),
        "(tables, warnings): every event under `paths` as column lists by table name (only those in "
        "`tables`, when given) "
        "(docs/ANALYSIS.md), and the damaged files' warnings.");
  m.attr("DEFAULT_STEP_PATTERN") = smprof::analysis::kDefaultStepPattern;
  m.attr("DEFAULT_DATA_WAIT_PATTERN") = smprof::analysis::kDefaultDataWaitPattern;
}

}  // namespace smppy

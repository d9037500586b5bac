#include "python/analysis_bindings.h"

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analysis/job_reader.h"
#include "analysis/job_summary.h"
#include "analysis/job_tables.h"
#include "python/text.h"

namespace py = pybind11;

namespace smppy {

namespace {

using smprof::analysis::SummaryOptions;

py::bytes Summarize(const std::vector<std::string>& paths, const std::string& step_pattern, int top_k, int max_buckets,
                    std::int64_t reorder_window_ns, const py::object& progress) {
  SummaryOptions options;
  if (!step_pattern.empty()) options.step_pattern = step_pattern;
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

const char* TypeName(smprof::analysis::Column::Type type) {
  using Type = smprof::analysis::Column::Type;
  switch (type) {
    case Type::kInt:
      return "int64";
    case Type::kDouble:
      return "float64";
    case Type::kString:
      return "string";
  }
  return "";
}

py::dict TableSchema() {
  py::dict out;
  for (const auto& [name, table] : smprof::analysis::EmptyJobTables()) {
    py::list columns;
    for (const auto& column : table.columns()) columns.append(py::make_tuple(column.name, TypeName(column.type)));
    out[py::str(name)] = columns;
  }
  return out;
}

// A batch's columns: numbers as NumPy arrays (one copy, no Python objects), strings as lists.
py::dict BatchColumns(const smprof::analysis::ColumnTable& table) {
  using Type = smprof::analysis::Column::Type;
  py::dict columns;
  for (const auto& column : table.columns()) {
    py::object values;
    if (column.type == Type::kInt) {
      values = py::array_t<std::int64_t>(column.ints.size(), column.ints.data());
    } else if (column.type == Type::kDouble) {
      values = py::array_t<double>(column.doubles.size(), column.doubles.data());
    } else {
      values = ToList(column);
    }
    columns[py::str(column.name)] = values;
  }
  return columns;
}

py::dict StreamDict(const smprof::analysis::ProcessStream& stream) {
  py::dict out;
  out["host"] = Text(stream.host);
  out["rank"] = stream.rank;
  out["pid"] = stream.pid;
  out["session_index"] = stream.session_index;
  py::list files;
  for (const auto& file : stream.files) files.append(file.path);
  out["files"] = files;
  return out;
}

std::vector<std::string> ReadTableBatches(const std::vector<std::string>& paths, const std::string& step_pattern,
                                          const std::set<std::string>& tables_wanted, std::size_t batch_rows,
                                          const py::function& on_batch, const py::function& on_stream_end) {
  const std::string pattern = step_pattern.empty() ? smprof::analysis::kDefaultStepPattern : step_pattern;
  if (batch_rows == 0) throw py::value_error("batch_rows: must be >= 1");
  const auto batch = [&on_batch](const std::string& table, const smprof::analysis::ProcessStream& stream,
                                 const smprof::analysis::ColumnTable& rows) {
    py::gil_scoped_acquire gil;
    on_batch(table, StreamDict(stream), BatchColumns(rows));
  };
  const auto stream_end = [&on_stream_end](const smprof::analysis::ProcessStream& stream) {
    py::gil_scoped_acquire gil;
    on_stream_end(StreamDict(stream));
  };
  std::vector<std::string> warnings;
  try {
    py::gil_scoped_release release;
    smprof::analysis::ReadJobTableBatches(paths, pattern, tables_wanted, batch_rows, batch, stream_end, &warnings);
  } catch (const std::regex_error& e) {
    throw py::value_error("step_pattern: not a valid regular expression (" + std::string(e.what()) + "): " + pattern);
  }
  return warnings;
}

py::tuple JobStreams(const std::vector<std::string>& paths) {
  py::list streams;
  std::vector<std::string> warnings;
  {
    py::gil_scoped_release release;
    const smprof::analysis::JobReader reader(paths);
    py::gil_scoped_acquire gil;
    for (const auto& stream : reader.streams()) streams.append(StreamDict(stream));
    warnings = reader.warnings();
  }
  return py::make_tuple(streams, warnings);
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
  m.def("summarize", &Summarize, py::arg("paths"), py::arg("step_pattern") = "", py::arg("top_k") = 15,
        py::arg("max_buckets") = 200, py::arg("reorder_window_ns") = SummaryOptions().reorder_window_ns,
        py::arg("progress") = py::none(),
        "The job summary of the trace files under `paths` as JSON text (docs/ANALYSIS.md); "
        "progress(done_bytes, total_bytes) is called after each frame and each file.");
  m.def("read_tables", &ReadTables, py::arg("paths"), py::arg("step_pattern") = "",
        py::arg("tables") = std::set<std::string>(),
        "(tables, warnings): every event under `paths` as column lists by table name (only those in "
        "`tables`, when given) "
        "(docs/ANALYSIS.md), and the damaged files' warnings.");
  m.def("table_schema", &TableSchema,
        "{table: [(column, 'int64' | 'float64' | 'string')]}: the columns of read_tables, in order.");
  m.def("read_table_batches", &ReadTableBatches, py::arg("paths"), py::arg("step_pattern") = "",
        py::arg("tables") = std::set<std::string>(), py::arg("batch_rows") = 65536, py::arg("on_batch"),
        py::arg("on_stream_end"),
        "The rows of read_tables streamed in batches: on_batch(table, stream, columns) with at most "
        "`batch_rows` rows of one process stream (numbers as NumPy arrays, strings as lists), "
        "on_stream_end(stream) after a stream's last batch; returns the damaged files' warnings.");
  m.def("job_streams", &JobStreams, py::arg("paths"),
        "(streams, warnings): the job's process streams, each {host, rank, pid, session_index, files} "
        "(files in reading order), in reading order; only the headers are read.");
  m.attr("DEFAULT_STEP_PATTERN") = smprof::analysis::kDefaultStepPattern;
}

}  // namespace smppy

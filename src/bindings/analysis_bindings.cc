#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/job/job_reader.h"
#include "analysis/summary/partial_summary.h"
#include "analysis/summary/summary_builder.h"
#include "analysis/tables/job_tables.h"
#include "bindings/job_stream.h"
#include "bindings/module_parts.h"
#include "bindings/text.h"
#include "trace/trace_reader.h"

namespace py = pybind11;

namespace smppy {

namespace {

using smprof::analysis::SummaryOptions;

SummaryOptions OptionsFrom(const std::string& step_pattern, const std::string& data_wait_pattern, int top_k,
                           int max_buckets, std::int64_t reorder_window_ns, std::int64_t max_profiled_steps) {
  SummaryOptions options;
  if (!step_pattern.empty()) options.step_pattern = step_pattern;
  if (!data_wait_pattern.empty()) options.data_wait_pattern = data_wait_pattern;
  options.top_k = top_k;
  options.max_profiled_steps = max_profiled_steps;
  options.max_buckets = max_buckets;
  options.reorder_window_ns = reorder_window_ns;
  if (const smprof::Status status = options.Validate(); !status.ok()) throw py::value_error(status.message());
  return options;
}

smprof::analysis::ProgressCallback ProgressFrom(const py::object& progress) {
  if (progress.is_none()) return nullptr;
  return [progress](std::uint64_t done, std::uint64_t total) {
    py::gil_scoped_acquire gil;
    progress(done, total);
  };
}

// Runs `summarize` without the GIL; a bad step pattern becomes ValueError.
template <typename Summarize>
std::string WithoutGil(const SummaryOptions& options, Summarize summarize) {
  try {
    py::gil_scoped_release release;
    return summarize();
  } catch (const std::regex_error& e) {
    throw py::value_error("step_pattern: not a valid regular expression (" + std::string(e.what()) +
                          "): " + options.step_pattern);
  }
}

py::bytes Summarize(const std::vector<std::string>& paths, const std::string& step_pattern,
                    const std::string& data_wait_pattern, int top_k, int max_buckets, std::int64_t reorder_window_ns,
                    std::int64_t max_profiled_steps, const py::object& progress) {
  const SummaryOptions options =
      OptionsFrom(step_pattern, data_wait_pattern, top_k, max_buckets, reorder_window_ns, max_profiled_steps);
  const auto report = ProgressFrom(progress);
  return py::bytes(WithoutGil(options, [&] { return smprof::analysis::SummarizeJob(paths, options, report); }));
}

// (streams, warnings) of JobReader(source), read without the GIL.
template <typename Source>
py::tuple ReadJobStreams(const Source& source) {
  std::vector<JobStream> streams;
  std::vector<std::string> warnings;
  {
    py::gil_scoped_release release;
    const smprof::analysis::JobReader reader(source);
    for (const auto& stream : reader.streams()) streams.push_back({stream, reader.origin_ns()});
    warnings = reader.warnings();
  }
  return py::make_tuple(streams, warnings);
}

py::tuple JobStreams(const std::vector<std::string>& paths) { return ReadJobStreams(paths); }

// The streams of files known by their ends (TraceFileEnds): (name, bytes, start, tail) each.
py::tuple JobStreamsFromEnds(const std::vector<std::tuple<std::string, std::uint64_t, py::bytes, py::bytes>>& files) {
  std::vector<smprof::analysis::TraceFileEnds> ends;
  for (const auto& [name, bytes, start, tail] : files) ends.push_back({name, bytes, start, tail});
  return ReadJobStreams(ends);
}

// A copy of `s` whose files are named and read as `files` says: (name, local copy) each, in order.
JobStream WithFiles(const JobStream& s, const std::vector<std::pair<std::string, std::string>>& files) {
  if (files.size() != s.stream.files.size()) {
    throw py::value_error("files: " + std::to_string(files.size()) + " given for a stream of " +
                          std::to_string(s.stream.files.size()));
  }
  JobStream out = s;
  for (std::size_t i = 0; i < files.size(); ++i) {
    out.stream.files[i].path = files[i].first;
    out.stream.files[i].local_copy = files[i].second;
  }
  return out;
}

py::bytes PartialSummary(const std::vector<JobStream>& job_streams, const std::string& step_pattern,
                         const std::string& data_wait_pattern, int top_k, int max_buckets,
                         std::int64_t reorder_window_ns, std::int64_t max_profiled_steps, const py::object& progress) {
  const SummaryOptions options =
      OptionsFrom(step_pattern, data_wait_pattern, top_k, max_buckets, reorder_window_ns, max_profiled_steps);
  std::vector<smprof::analysis::ProcessStream> streams;
  std::int64_t origin_ns = job_streams.empty() ? 0 : job_streams.front().origin_ns;
  for (const JobStream& s : job_streams) {
    if (s.origin_ns != origin_ns) throw py::value_error("streams: not all of one job (their origins differ)");
    streams.push_back(s.stream);
  }
  const auto report = ProgressFrom(progress);
  return py::bytes(
      WithoutGil(options, [&] { return smprof::analysis::SummarizeStreams(streams, origin_ns, options, report); }));
}

py::bytes MergePartialSummaries(const std::vector<std::string>& partials) {
  std::string merged;
  {
    py::gil_scoped_release release;
    merged = smprof::analysis::MergePartials(std::vector<std::string_view>(partials.begin(), partials.end()));
  }
  return py::bytes(merged);
}

py::bytes SummaryFromPartial(const std::string& partial, const std::vector<std::string>& warnings) {
  std::string json;
  {
    py::gil_scoped_release release;
    json = smprof::analysis::SummaryFromPartial(partial, warnings);
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

// Hands `read`'s batches to the Python callbacks; `read(pattern, batch, stream_end, warnings)` runs
// without the GIL.
template <typename Read>
std::vector<std::string> TableBatches(const std::string& step_pattern, std::size_t batch_rows,
                                      const py::function& on_batch, const py::function& on_stream_end, Read read) {
  const std::string pattern = step_pattern.empty() ? smprof::analysis::kDefaultStepPattern : step_pattern;
  if (batch_rows == 0) throw py::value_error("batch_rows: must be >= 1");
  const smprof::analysis::TableBatchSink batch = [&on_batch](const std::string& table,
                                                             const smprof::analysis::ProcessStream& stream,
                                                             const smprof::analysis::ColumnTable& rows) {
    py::gil_scoped_acquire gil;
    on_batch(table, StreamDict(stream), BatchColumns(rows));
  };
  const smprof::analysis::StreamEndSink stream_end = [&on_stream_end](const smprof::analysis::ProcessStream& stream) {
    py::gil_scoped_acquire gil;
    on_stream_end(StreamDict(stream));
  };
  std::vector<std::string> warnings;
  try {
    py::gil_scoped_release release;
    read(pattern, batch, stream_end, &warnings);
  } catch (const std::regex_error& e) {
    throw py::value_error("step_pattern: not a valid regular expression (" + std::string(e.what()) + "): " + pattern);
  }
  return warnings;
}

std::vector<std::string> ReadTableBatches(const std::vector<std::string>& paths, const std::string& step_pattern,
                                          const std::set<std::string>& tables_wanted, std::size_t batch_rows,
                                          const py::function& on_batch, const py::function& on_stream_end) {
  return TableBatches(step_pattern, batch_rows, on_batch, on_stream_end,
                      [&](const std::string& pattern, const auto& batch, const auto& stream_end, auto* warnings) {
                        smprof::analysis::ReadJobTableBatches(paths, pattern, tables_wanted, batch_rows, batch,
                                                              stream_end, warnings);
                      });
}

std::vector<std::string> ReadStreamTableBatches(const std::vector<JobStream>& job_streams,
                                                const std::string& step_pattern,
                                                const std::set<std::string>& tables_wanted, std::size_t batch_rows,
                                                const py::function& on_batch, const py::function& on_stream_end) {
  std::vector<smprof::analysis::ProcessStream> streams;
  for (const JobStream& s : job_streams) streams.push_back(s.stream);
  return TableBatches(step_pattern, batch_rows, on_batch, on_stream_end,
                      [&](const std::string& pattern, const auto& batch, const auto& stream_end, auto* warnings) {
                        smprof::analysis::ReadStreamTableBatches(streams, pattern, tables_wanted, batch_rows, batch,
                                                                 stream_end, warnings);
                      });
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
        py::arg("reorder_window_ns") = SummaryOptions().reorder_window_ns,
        py::arg("max_profiled_steps") = SummaryOptions().max_profiled_steps, py::arg("progress") = py::none(),
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
        py::arg("tables") = std::set<std::string>(), py::arg("batch_rows") = 65536, py::kw_only(), py::arg("on_batch"),
        py::arg("on_stream_end"),
        "The rows of read_tables streamed in batches: on_batch(table, stream, columns) with at most "
        "`batch_rows` rows of one process stream (numbers as NumPy arrays, strings as lists), "
        "on_stream_end(stream) after a stream's last batch; returns the damaged files' warnings.");
  py::class_<JobStream>(m, "ProcessStream",
                        "One process stream of a job (its files, as smprof groups them), for partial_summary; "
                        "pickles to bytes.")
      .def_property_readonly("host", [](const JobStream& s) { return Text(s.stream.host); })
      .def_property_readonly("rank", [](const JobStream& s) { return s.stream.rank; })
      .def_property_readonly("pid", [](const JobStream& s) { return s.stream.pid; })
      .def_property_readonly("session_index", [](const JobStream& s) { return s.stream.session_index; })
      .def_property_readonly("worker_of_pid", [](const JobStream& s) { return s.stream.worker_of_pid; })
      .def_property_readonly("origin_ns", [](const JobStream& s) { return s.origin_ns; })
      .def_property_readonly("files",
                             [](const JobStream& s) {
                               std::vector<std::string> paths;
                               for (const auto& file : s.stream.files) paths.push_back(file.path);
                               return paths;
                             })
      .def_property_readonly("local_copies",
                             [](const JobStream& s) {
                               std::vector<std::string> paths;
                               for (const auto& file : s.stream.files) paths.push_back(file.local_copy);
                               return paths;
                             })
      .def("with_files", &WithFiles, py::arg("files"),
           "A copy whose files are named and read as `files` says: a (name, local copy) pair for each file, "
           "in order; the summary names a file by its name and reads it from its local copy.")
      .def_property_readonly("bytes",
                             [](const JobStream& s) {
                               std::uint64_t total = 0;
                               for (const auto& file : s.stream.files) total += file.bytes;
                               return total;
                             })
      .def(py::pickle(
          [](const JobStream& s) {
            std::vector<std::string> local_copies;
            for (const auto& file : s.stream.files) local_copies.push_back(file.local_copy);
            return py::make_tuple(py::bytes(smprof::analysis::EncodeStream(s.stream, s.origin_ns)), local_copies);
          },
          [](const py::tuple& state) {
            JobStream s;
            s.stream = smprof::analysis::DecodeStream(state[0].cast<std::string>(), &s.origin_ns);
            const auto local_copies = state[1].cast<std::vector<std::string>>();
            if (local_copies.size() != s.stream.files.size()) throw py::value_error("a damaged ProcessStream pickle");
            for (std::size_t i = 0; i < local_copies.size(); ++i) s.stream.files[i].local_copy = local_copies[i];
            return s;
          }));
  m.def("read_stream_table_batches", &ReadStreamTableBatches, py::arg("streams"), py::arg("step_pattern") = "",
        py::arg("tables") = std::set<std::string>(), py::arg("batch_rows") = 65536, py::kw_only(), py::arg("on_batch"),
        py::arg("on_stream_end"),
        "read_table_batches for some process streams of a job (ProcessStream, from job_streams): what a "
        "worker process of a parallel Parquet export reads.");
  m.def("job_streams", &JobStreams, py::arg("paths"),
        "(streams, warnings): the trace files under `paths` grouped into process streams (ProcessStream), in "
        "reading order, and the files skipped (unreadable headers); only the headers are read.");
  m.def("job_streams_from_ends", &JobStreamsFromEnds, py::arg("files"),
        "job_streams for files known by some of their bytes, without reading them: (name, size, start, tail) "
        "each, `start` from the first byte through the header chunk (header_chunk_end), `tail` the last bytes "
        "(with the footer, for the clock alignment). The streams name their files by these names.");
  m.def(
      "header_chunk_end",
      [](const py::bytes& start) { return smprof::internal::HeaderChunkEnd(std::string_view(start)); },
      py::arg("start"),
      "The bytes from a trace file's start through its header chunk, from its first bytes (at least 16); "
      "0 if they do not start like a trace.");
  m.def(
      "footer_in_tail",
      [](const py::bytes& start, const py::bytes& tail) {
        smprof::trace::Footer footer;
        return smprof::internal::FooterFromTail("", std::string_view(start), std::string_view(tail), &footer);
      },
      py::arg("start"), py::arg("tail"),
      "True if `tail`, the last bytes of the trace file that `start` begins (through its header chunk), "
      "ends with the file's footer.");
  m.def("partial_summary", &PartialSummary, py::arg("streams"), py::arg("step_pattern") = "",
        py::arg("data_wait_pattern") = "", py::arg("top_k") = 15, py::arg("max_buckets") = 200,
        py::arg("reorder_window_ns") = SummaryOptions().reorder_window_ns,
        py::arg("max_profiled_steps") = SummaryOptions().max_profiled_steps, py::arg("progress") = py::none(),
        "The partial summary (bytes) of some process streams of one job.");
  m.def("merge_partial_summaries", &MergePartialSummaries, py::arg("partials"),
        "One partial summary (bytes) holding every stream of `partials`.");
  m.def("summary_from_partial", &SummaryFromPartial, py::arg("partial"), py::arg("warnings"),
        "The job summary of a partial as JSON text; `warnings`: job_streams' warnings.");
  m.attr("DEFAULT_STEP_PATTERN") = smprof::analysis::kDefaultStepPattern;
  m.attr("DEFAULT_DATA_WAIT_PATTERN") = smprof::analysis::kDefaultDataWaitPattern;
  m.attr("DEFAULT_MAX_PROFILED_STEPS") = SummaryOptions().max_profiled_steps;
}

}  // namespace smppy

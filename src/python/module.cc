// _smppy: the private extension behind the smppy package. Sessions and
// configuration here (pybind11); annotations in annotate_type.cc; trace
// reading in trace_file.cc.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/resolved_config.h"
#include "python/analysis_bindings.h"
#include "python/annotate_type.h"
#include "python/closed_files.h"
#include "python/export_bindings.h"
#include "python/raw_trace_writer.h"
#include "python/trace_file.h"
#include "smprof/smprof.h"

namespace py = pybind11;

namespace {

smprof::Config ToConfig(const std::map<std::string, std::string>& values) {
  smprof::Config config;
  config.values = values;
  return config;
}

// A bad configuration raises ValueError. Anything else (a call in the wrong
// state, a trace file that cannot be written) returns its message, for the
// Python layer to warn: the training job must go on.
std::optional<std::string> Check(const smprof::Status& status) {
  switch (status.code()) {
    case smprof::StatusCode::kOk:
      return std::nullopt;
    case smprof::StatusCode::kInvalidArgument:
      throw py::value_error(status.message());
    default:
      return status.message();
  }
}

}  // namespace

PYBIND11_MODULE(_smppy, m) {
  m.doc() = "Private extension of smppy; use the smppy package.";
  m.def("version", &smprof::Version);
  m.def("config_keys", &smprof::ConfigKeys, "The documented config keys.");
  m.def("config_env_name", &smprof::internal::EnvNameFor, "The environment variable of a config key.");
  m.def(
      "validate_config",
      [](const std::map<std::string, std::string>& values) { Check(smprof::ValidateConfig(ToConfig(values))); },
      "Raises ValueError naming the key and its valid values.");
  // Writing the header and joining the drain thread need no Python objects.
  m.def(
      "start",
      [](const std::map<std::string, std::string>& values) {
        smprof::Status status;
        {
          py::gil_scoped_release release;
          status = smprof::Start(ToConfig(values));
        }
        return Check(status);
      },
      "Starts a session; returns None, or a message if one is already running.");
  m.def(
      "stop",
      [] {
        smprof::Status status;
        {
          py::gil_scoped_release release;
          status = smprof::Stop();
        }
        return Check(status);
      },
      "Stops the session; returns None, or a message if none is running.");
  m.def("is_profiling", &smprof::IsProfiling);
  m.def("last_session_stats", [] {
    const smprof::SessionStats stats = smprof::LastSessionStats();
    py::dict out;
    out["path"] = stats.path;
    out["annotations_written"] = stats.annotations_written;
    out["annotations_dropped"] = stats.annotations_dropped;
    out["frames_written"] = stats.frames_written;
    out["bytes_written"] = stats.bytes_written;
    return out;
  });
  smppy::BindTraceFile(m);
  smppy::BindAnalysis(m);
  smppy::BindRawTraceWriter(m);
  smppy::BindExport(m);
  smppy::BindClosedFiles(m);
  if (smppy::AddAnnotationApi(m.ptr()) < 0) throw py::error_already_set();
}

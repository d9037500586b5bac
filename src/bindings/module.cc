// _smppy: the private extension behind the smppy package. Sessions and
// configuration here (pybind11); annotations in annotate_type.cc; trace
// reading in trace_file.cc.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "bindings/module_parts.h"
#include "bindings/text.h"
#include "runtime/collective_records.h"
#include "runtime/resolved_config.h"
#include "session/session_end.h"
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
// Messages may quote paths with any bytes: they are decoded like trace text.
py::object Check(const smprof::Status& status) {
  switch (status.code()) {
    case smprof::StatusCode::kOk:
      return py::none();
    case smprof::StatusCode::kInvalidArgument:
      PyErr_SetObject(PyExc_ValueError, smppy::Text(status.message()).ptr());
      throw py::error_already_set();
    default:
      return smppy::Text(status.message());
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
      [](const std::string& no_gpu_wait) {
        smprof::Status status;
        {
          py::gil_scoped_release release;
          status = no_gpu_wait.empty() ? smprof::Stop() : smprof::StopWithoutGpuWait(no_gpu_wait);
        }
        return Check(status);
      },
      py::arg("no_gpu_wait") = "",
      "Stops the session; returns None, or a message if none is running. With no_gpu_wait (why), it does not "
      "wait for the GPU work still queued.");
  m.def(
      "stop_at_end",
      [](const std::string& how, std::optional<int> exit_code, const py::bytes& exception_type,
         const py::bytes& exception_message) {
        smprof::internal::SessionEnd end;
        end.how = how;
        end.exit_code = exit_code;
        end.exception_type = exception_type;
        end.exception_message = exception_message;
        smprof::Status status;
        {
          py::gil_scoped_release release;
          status = smprof::internal::StopAtEnd(end);
        }
        return Check(status);
      },
      py::arg("how"), py::arg("exit_code") = py::none(), py::arg("exception_type") = py::bytes(),
      py::arg("exception_message") = py::bytes(),
      "Stops the session as the process ends (how: exit, exception, os_exit), without waiting for the GPU; the "
      "footer says how (trace.proto SessionEnd). Returns None, or a message if none is running.");
  m.def(
      "resolve_config",
      [](const std::map<std::string, std::string>& values) {
        smprof::internal::ResolvedConfig resolved;
        Check(smprof::internal::ResolveConfig(ToConfig(values), smprof::internal::ProcessEnv(), &resolved));
        py::dict effective;
        for (const auto& [key, value] : resolved.effective) effective[smppy::Text(key)] = smppy::Text(value);
        return effective;
      },
      "Every key's effective value as libsmprof resolves it (config, else environment, else default); raises "
      "ValueError naming a bad key or value.");
  m.def("is_profiling", &smprof::IsProfiling);
  m.def(
      "record_clock_alignment",
      [](const std::string& phase, std::int32_t reference_rank, const std::string& reference_host,
         std::int64_t reference_clock_offset_ns,
         const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>>& samples,
         const std::string& problem) {
        smprof::ClockAlignment alignment{phase, reference_rank, reference_host, reference_clock_offset_ns, {}, problem};
        for (const auto& [t0, t1, t2, t3] : samples) alignment.samples.push_back(smprof::ClockSample{t0, t1, t2, t3});
        return Check(smprof::RecordClockAlignment(alignment));
      },
      "Adds one clock-alignment round (samples: (t0, t1, t2, t3) monotonic ns) to the running session; returns "
      "None, or a message.");
  m.def(
      "record_collective",
      [](std::string op, std::string group, std::uint32_t group_size, std::uint32_t group_rank, std::uint64_t sequence,
         std::uint64_t bytes, std::string dtype, bool async_op, std::int64_t start_ns, std::int64_t end_ns,
         std::int64_t wait_start_ns, std::int64_t wait_end_ns, std::uint32_t tid) {
        smprof::internal::CollectiveRecord r;
        r.start_ns = start_ns;
        r.call_dur_ns = end_ns - start_ns;
        r.tid = tid != 0 ? tid : static_cast<std::uint32_t>(syscall(SYS_gettid));
        r.wait_start_ns = wait_start_ns;
        r.wait_dur_ns = wait_end_ns - wait_start_ns;
        r.op = std::move(op);
        r.group = std::move(group);
        r.group_size = group_size;
        r.group_rank = group_rank;
        r.sequence = sequence;
        r.bytes = bytes;
        r.dtype = std::move(dtype);
        r.async_op = async_op;
        return smprof::internal::RecordCollective(std::move(r));
      },
      py::arg("op"), py::arg("group"), py::arg("group_size"), py::arg("group_rank"), py::arg("sequence"),
      py::arg("bytes"), py::arg("dtype"), py::arg("async_op"), py::arg("start_ns"), py::arg("end_ns"),
      py::arg("wait_start_ns") = 0, py::arg("wait_end_ns") = 0, py::arg("tid") = 0,
      "Records one collective call (start_ns, end_ns: time.monotonic_ns() around the call; wait_start_ns, "
      "wait_end_ns: around its Work.wait(), 0 if none; tid: the calling thread's native id, 0 for this thread) "
      "into the running session (trace.proto Collectives); False when none is recording.");
  m.def("clock_offset_ns", &smprof::ClockOffsetNs, "CLOCK_REALTIME - CLOCK_MONOTONIC as the trace's anchors read it.");
  m.def("last_session_stats", [] {
    const smprof::SessionStats stats = smprof::LastSessionStats();
    py::dict out;
    // A path: decoded like os.fsdecode, so that it opens the file whatever its bytes.
    PyObject* path = PyUnicode_DecodeFSDefaultAndSize(stats.path.data(), static_cast<Py_ssize_t>(stats.path.size()));
    if (path == nullptr) throw py::error_already_set();
    out["path"] = py::reinterpret_steal<py::str>(path);
    out["annotations_written"] = stats.annotations_written;
    out["annotations_dropped"] = stats.annotations_dropped;
    out["frames_written"] = stats.frames_written;
    out["bytes_written"] = stats.bytes_written;
    return out;
  });
  smppy::BindTraceFile(m);
  smppy::BindAnalysis(m);
  smppy::BindExport(m);
  smppy::BindClosedFiles(m);
  if (smppy::AddAnnotationApi(m.ptr()) < 0) throw py::error_already_set();
}

#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>

#include "bindings/module_parts.h"
#include "session/closed_file_queue.h"

namespace py = pybind11;

namespace smppy {

void BindClosedFiles(py::module_& m) {
  using smprof::internal::ClosedFileQueue;
  m.def(
      "watch_closed_files", [](bool on) { ClosedFileQueue::Get().Watch(on); }, py::arg("on"),
      "Start (or stop) queueing the paths of trace files as they are closed (rotated or stopped).");
  m.def(
      "next_closed_file",
      [](double timeout_s) -> std::optional<std::string> {
        const double ms = std::fmax(0.0, std::fmin(timeout_s * 1000.0, 86400000.0));
        py::gil_scoped_release release;  // training threads keep running while this waits
        return ClosedFileQueue::Get().Next(static_cast<std::uint32_t>(ms));
      },
      py::arg("timeout_s"), "The oldest closed file not yet returned, or None after timeout_s seconds.");
  m.def(
      "closed_files_overflow", [] { return ClosedFileQueue::Get().TakeOverflow(); },
      "Closed files not queued because nobody read the queue (since the last call).");
}

}  // namespace smppy

#include "testing/raw_trace_writer.h"

#include <memory>
#include <string>

#include "smprof/trace.pb.h"
#include "trace/file_format.h"
#include "trace/trace_writer.h"

namespace py = pybind11;

namespace smprof_testing {

namespace {

using smprof::internal::TraceWriter;

void ThrowIfError(const smprof::Status& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

// Parses `payload` as `Message` (so a file never holds bytes that are not
// the message its tag names) and appends it under `tag`.
template <typename Message>
void AppendParsed(TraceWriter* writer, std::string_view tag, const py::bytes& payload, const char* what) {
  Message message;
  const std::string bytes = payload;
  if (!message.ParseFromString(bytes)) throw py::value_error(std::string("not a serialized ") + what);
  ThrowIfError(writer->Append(tag, message));
}

}  // namespace

void BindRawTraceWriter(py::module_& m) {
  py::class_<TraceWriter>(m, "RawTraceWriter",
                          "Writes a trace file from serialized FileHeader, Frame and Footer messages.")
      .def(py::init([](const std::string& path, int compression_level) {
             std::unique_ptr<TraceWriter> writer;
             ThrowIfError(TraceWriter::Create(path, compression_level, &writer));
             return writer;
           }),
           py::arg("path"), py::arg("compression_level") = 3)
      .def(
          "header",
          [](TraceWriter& w, const py::bytes& b) {
            AppendParsed<smprof::trace::FileHeader>(&w, smprof::trace_format::kHeaderTag, b, "FileHeader");
          },
          py::arg("payload"))
      .def(
          "frame",
          [](TraceWriter& w, const py::bytes& b) {
            AppendParsed<smprof::trace::Frame>(&w, smprof::trace_format::kFrameTag, b, "Frame");
          },
          py::arg("payload"))
      .def(
          "footer",
          [](TraceWriter& w, const py::bytes& b) {
            AppendParsed<smprof::trace::Footer>(&w, smprof::trace_format::kFooterTag, b, "Footer");
          },
          py::arg("payload"))
      .def("close", [](TraceWriter& w) { ThrowIfError(w.Close()); })
      .def_property_readonly("bytes_written", &TraceWriter::bytes_written);
}

}  // namespace smprof_testing

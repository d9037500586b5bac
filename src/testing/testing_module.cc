// _smprof_testing: the test-only extension that tests/python and bench/ write
// synthetic traces with (bench/synthetic_trace.py). Built into the build tree
// with -DSMPROF_BUILD_TESTING_MODULE=ON (scripts/test.sh, scripts/dev_python.sh)
// and never installed, so the wheel users get carries none of it. It links the
// trace writer itself, hidden, and exports PyInit__smprof_testing alone: it
// shares no C++ object with _smppy, only the files it writes.
#include <pybind11/pybind11.h>

#include "testing/raw_trace_writer.h"

PYBIND11_MODULE(_smprof_testing, m) {
  m.doc() = "smprof's test-only extension: writes synthetic trace files with libsmprof's TraceWriter.";
  smprof_testing::BindRawTraceWriter(m);
}

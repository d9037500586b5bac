// Text from a trace as a Python str. Names are bytes in the trace (a C/C++
// caller may pass any): each invalid UTF-8 sequence becomes U+FFFD, as
// bytes.decode("utf-8", errors="replace") does, so reading never raises.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>

namespace smppy {

inline pybind11::str Text(std::string_view text) {
  PyObject* decoded = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (decoded == nullptr) throw pybind11::error_already_set();
  return pybind11::reinterpret_steal<pybind11::str>(decoded);
}

}  // namespace smppy

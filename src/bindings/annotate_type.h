// The annotation half of _smppy, written against the CPython API directly:
// `with smppy.annotate("x"):` must cost little more than a `with` of an empty
// Python class, which pybind11's call machinery would not allow.
#pragma once

#include <Python.h>

namespace smppy {

// Adds `annotate`, `annotation_begin`, `annotation_end` and `_set_decorator`
// to `module`; returns 0 on success, -1 with a Python error set.
int AddAnnotationApi(PyObject* module);

}  // namespace smppy

#include <Python.h>

#include <cstddef>
#include <string_view>

#include "bindings/module_parts.h"
#include "runtime/annotation_correlation.h"
#include "runtime/recorder.h"
#include "smprof/annotate.h"

namespace smppy {

namespace {

using smprof::NameId;
using smprof::internal::ThreadState;

// Returns the id of the str `name`, interning its UTF-8 form; false with a
// Python error set. A name with lone surrogates ('\udcff', as os.fsdecode
// makes of undecodable bytes) has no UTF-8 form: it is recorded with them
// escaped (the text \udcff), so that the same code runs whether or not it is
// profiled.
bool InternStr(PyObject* name, NameId* id) {
  Py_ssize_t size = 0;
  if (const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size)) {
    *id = smprof::InternName(std::string_view(utf8, static_cast<std::size_t>(size)));
    return true;
  }
  if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return false;
  PyErr_Clear();
  PyObject* escaped = PyUnicode_AsEncodedString(name, "utf-8", "backslashreplace");
  if (escaped == nullptr) return false;
  *id = smprof::InternName(
      std::string_view(PyBytes_AS_STRING(escaped), static_cast<std::size_t>(PyBytes_GET_SIZE(escaped))));
  Py_DECREF(escaped);
  return true;
}

// Name ids by str, in a dict: a hit costs one lookup of the str's cached
// hash, no encoding. Guarded by the GIL: every caller holds it.
class NameCache {
 public:
  // `name` is a str (or subclass, which is not cached). False with a Python
  // error set.
  bool Lookup(PyObject* name, NameId* id) {
    const bool cacheable = PyUnicode_CheckExact(name) && ids_ != nullptr;
    if (cacheable) {
      if (PyObject* cached = PyDict_GetItemWithError(ids_, name)) {
        *id = static_cast<NameId>(PyLong_AsUnsignedLong(cached));
        return true;
      }
      if (PyErr_Occurred()) return false;
    }
    if (!InternStr(name, id)) return false;
    if (cacheable && PyDict_GET_SIZE(ids_) < kMaxCached) {
      PyObject* value = PyLong_FromUnsignedLong(*id);
      const bool stored = value != nullptr && PyDict_SetItem(ids_, name, value) == 0;
      Py_XDECREF(value);
      if (!stored) PyErr_Clear();  // the id is right; only the cache missed
    }
    return true;
  }

 private:
  static constexpr Py_ssize_t kMaxCached = 1 << 16;
  PyObject* ids_ = PyDict_New();  // str -> int; null (no cache) if out of memory
};

NameCache& Names() {
  static auto* cache = new NameCache();
  return *cache;
}

PyObject* g_decorator = nullptr;  // smppy._annotations.decorate(func, name)
// smppy._tf_function_check.check(name), called on each recorded enter once
// registered (smppy.keras registers it); nullptr: no check, no cost.
PyObject* g_enter_check = nullptr;

struct AnnotateObject {
  PyObject_HEAD PyObject* name;  // str, or None until used as a decorator
  ThreadState* thread;           // set while entered and recording
  std::int64_t start_ns;
  NameId name_id;
  std::uint16_t depth;
  bool correlated;  // pushed as the CUDA external correlation id
};

PyObject* Decorate(PyObject* func, PyObject* name) {
  if (g_decorator == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "smppy is not initialised (import smppy, not _smppy)");
    return nullptr;
  }
  return PyObject_CallFunctionObjArgs(g_decorator, func, name, nullptr);
}

// A new annotate object named `name`, or, for a callable, what the bare
// decorator @smppy.annotate returns.
PyObject* NewAnnotate(PyTypeObject* type, PyObject* name) {
  if (name != Py_None && !PyUnicode_Check(name)) {
    // Bare decorator: @smppy.annotate on a function.
    if (PyCallable_Check(name)) return Decorate(name, Py_None);
    PyErr_Format(PyExc_TypeError, "annotate() takes a str name, not %.100s", Py_TYPE(name)->tp_name);
    return nullptr;
  }
  auto* self = reinterpret_cast<AnnotateObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(name);
  self->name = name;
  self->thread = nullptr;
  return reinterpret_cast<PyObject*>(self);
}

PyObject* AnnotateNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* name = Py_None;
  static const char* keywords[] = {"name", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:annotate", const_cast<char**>(keywords), &name)) {
    return nullptr;
  }
  return NewAnnotate(type, name);
}

// `annotate(...)` without an argument tuple or PyArg parsing: the one call
// every `with smppy.annotate("x")` makes.
PyObject* AnnotateVectorcall(PyObject* type, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkwargs = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (nargs + nkwargs > 1 ||
      (nkwargs == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "name") != 0)) {
    PyErr_SetString(PyExc_TypeError, "annotate() takes one optional argument, name");
    return nullptr;
  }
  return NewAnnotate(reinterpret_cast<PyTypeObject*>(type), nargs + nkwargs == 1 ? args[0] : Py_None);
}

void AnnotateDealloc(PyObject* object) {
  auto* self = reinterpret_cast<AnnotateObject*>(object);
  Py_XDECREF(self->name);
  Py_TYPE(object)->tp_free(object);
}

PyObject* AnnotateEnter(PyObject* object, PyObject*) {
  auto* self = reinterpret_cast<AnnotateObject*>(object);
  if (smprof::internal::g_recording.load(std::memory_order_relaxed) && self->thread == nullptr) {
    if (self->name == Py_None) {
      PyErr_SetString(PyExc_TypeError, "annotate() used as a context manager needs a name");
      return nullptr;
    }
    if (g_enter_check != nullptr) {
      PyObject* checked = PyObject_CallOneArg(g_enter_check, self->name);
      if (checked == nullptr) return nullptr;  // its warning raised as an error (-W error)
      Py_DECREF(checked);
    }
    if (!Names().Lookup(self->name, &self->name_id)) return nullptr;
    self->thread = smprof::internal::EnterScope(self->name_id, &self->depth, &self->correlated);
    self->start_ns = smprof::internal::NowNs();
  }
  Py_INCREF(object);
  return object;
}

PyObject* AnnotateExit(PyObject* object, PyObject* const*, Py_ssize_t) {
  auto* self = reinterpret_cast<AnnotateObject*>(object);
  if (ThreadState* thread = self->thread) {
    self->thread = nullptr;
    // A scope closed on another thread than it opened on is not recorded:
    // thread buffers have one writer each.
    if (thread == smprof::internal::Recorder::Current()) {
      smprof::internal::ExitScope(thread, self->name_id, self->start_ns, smprof::internal::NowNs(), self->depth,
                                  self->correlated);
      Py_RETURN_FALSE;
    }
    if (self->correlated) smprof::internal::AbandonCorrelatedScope();
    if (PyErr_WarnEx(PyExc_RuntimeWarning,
                     "smppy.annotate: a scope exited on another thread than it entered on is not recorded", 1) < 0) {
      return nullptr;
    }
  }
  Py_RETURN_FALSE;
}

PyObject* AnnotateCall(PyObject* object, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<AnnotateObject*>(object);
  PyObject* func = nullptr;
  if (kwargs != nullptr || !PyArg_UnpackTuple(args, "annotate", 1, 1, &func) || !PyCallable_Check(func)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "annotate(...) decorates one callable");
    return nullptr;
  }
  return Decorate(func, self->name);
}

PyObject* AnnotateGetName(PyObject* object, void*) {
  PyObject* name = reinterpret_cast<AnnotateObject*>(object)->name;
  Py_INCREF(name);
  return name;
}

PyMethodDef kAnnotateMethods[] = {
    {"__enter__", AnnotateEnter, METH_NOARGS, "Opens the range (when profiling)."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(AnnotateExit)), METH_FASTCALL,
     "Closes the range, also when the block raised."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kAnnotateGetSet[] = {
    {"name", AnnotateGetName, nullptr, "The range's name (None until a bare decorator names it).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject MakeAnnotateType() {
  PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "smppy.annotate";
  type.tp_basicsize = sizeof(AnnotateObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT;
  type.tp_doc =
      "annotate(name=None)\n\n"
      "Records a named time range on the current thread.\n\n"
      "As a context manager::\n\n"
      "    with smppy.annotate(\"forward\"):\n"
      "        loss = model(x)\n\n"
      "As a decorator (the name defaults to the function's qualified name)::\n\n"
      "    @smppy.annotate\n"
      "    def train_step(batch): ...\n\n"
      "    @smppy.annotate(\"step\")\n"
      "    def train_step(batch): ...\n\n"
      "Ranges nest, close when the block raises, and cost one flag check when\n"
      "profiling is off. A range must exit on the thread it entered on.\n"
      "A name with lone surrogates ('\\udcff') is recorded with them escaped.";
  type.tp_new = AnnotateNew;
  type.tp_vectorcall = AnnotateVectorcall;
  type.tp_dealloc = AnnotateDealloc;
  type.tp_call = AnnotateCall;
  type.tp_methods = kAnnotateMethods;
  type.tp_getset = kAnnotateGetSet;
  return type;
}

PyTypeObject g_annotate_type = MakeAnnotateType();

PyObject* AnnotationBegin(PyObject*, PyObject* name) {
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "annotation_begin() takes a str name, not %.100s", Py_TYPE(name)->tp_name);
    return nullptr;
  }
  if (!smprof::internal::g_recording.load(std::memory_order_relaxed)) return PyLong_FromLong(0);
  NameId id = 0;
  if (!Names().Lookup(name, &id)) return nullptr;
  return PyLong_FromUnsignedLongLong(smprof::AnnotationBegin(id));
}

PyObject* WarnEnd(PyObject* handle, const char* what) {
  if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "annotation_end(%R): %s", handle, what) < 0) return nullptr;
  Py_RETURN_NONE;
}

// What annotation_end() and _annotation_end_as() tell the caller about an end.
PyObject* ReportEnd(PyObject* handle, smprof::EndResult result) {
  switch (result) {
    case smprof::EndResult::kUnknownHandle:
      return WarnEnd(handle, "unknown handle, or already ended; ignored");
    case smprof::EndResult::kOutOfOrder:
      return WarnEnd(handle, "ended before ranges opened after it; it is recorded, the inner ranges stay open");
    case smprof::EndResult::kOk:
    case smprof::EndResult::kNotProfiling:
      break;
  }
  Py_RETURN_NONE;
}

// The handle's value in *value; false with a TypeError set, or with *value 0 (never a handle) when it is
// negative or wider than 64 bits.
bool HandleValue(PyObject* handle, unsigned long long* value) {
  if (!PyLong_Check(handle)) {
    PyErr_Format(PyExc_TypeError, "annotation_end() takes the int handle that annotation_begin() returned, not %.100s",
                 Py_TYPE(handle)->tp_name);
    return false;
  }
  *value = PyLong_AsUnsignedLongLong(handle);
  if (*value == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return false;
    PyErr_Clear();
    *value = 0;
    return false;
  }
  return true;
}

PyObject* AnnotationEnd(PyObject*, PyObject* handle) {
  unsigned long long value = 0;
  if (!HandleValue(handle, &value)) {
    return PyErr_Occurred() ? nullptr : WarnEnd(handle, "unknown handle, or already ended; ignored");
  }
  return ReportEnd(handle, smprof::AnnotationEnd(value));
}

PyObject* AnnotationEndAs(PyObject*, PyObject* args) {
  PyObject* handle = nullptr;
  PyObject* name = nullptr;
  if (!PyArg_ParseTuple(args, "OU:_annotation_end_as", &handle, &name)) return nullptr;
  unsigned long long value = 0;
  if (!HandleValue(handle, &value)) {
    return PyErr_Occurred() ? nullptr : WarnEnd(handle, "unknown handle, or already ended; ignored");
  }
  if (value == 0) Py_RETURN_NONE;  // opened while profiling was off
  NameId id = 0;
  if (!Names().Lookup(name, &id)) return nullptr;
  return ReportEnd(handle, smprof::AnnotationEnd(value, id));
}

PyObject* SetDecorator(PyObject*, PyObject* decorator) {
  Py_INCREF(decorator);
  Py_XSETREF(g_decorator, decorator);
  Py_RETURN_NONE;
}

PyObject* SetEnterCheck(PyObject*, PyObject* check) {
  if (check != Py_None && !PyCallable_Check(check)) {
    PyErr_SetString(PyExc_TypeError, "_set_enter_check takes a callable or None");
    return nullptr;
  }
  if (check == Py_None) {
    Py_CLEAR(g_enter_check);
  } else {
    Py_INCREF(check);
    Py_XSETREF(g_enter_check, check);
  }
  Py_RETURN_NONE;
}

PyMethodDef kFunctions[] = {
    {"annotation_begin", AnnotationBegin, METH_O,
     "annotation_begin(name) -> int\n\n"
     "Opens a range named ``name`` and returns its handle.\n\n"
     "End it with annotation_end(), on any thread. Returns 0 (a handle that\n"
     "annotation_end() accepts and ignores) when profiling is off."},
    {"annotation_end", AnnotationEnd, METH_O,
     "annotation_end(handle) -> None\n\n"
     "Closes the range opened by annotation_begin().\n\n"
     "Misuse never corrupts the trace; it warns (RuntimeWarning): a handle\n"
     "ended twice or unknown is ignored, and a range ended while ranges opened\n"
     "after it are still open is recorded, its inner ranges staying open.\n"
     "A handle that is not an int is a TypeError."},
    {"_annotation_end_as", AnnotationEndAs, METH_VARARGS,
     "_annotation_end_as(handle, name) -> None\n\n"
     "Closes the range as annotation_end() does, recorded under ``name``."},
    {"_set_decorator", SetDecorator, METH_O, "Registers the Python helper that wraps decorated functions."},
    {"_set_enter_check", SetEnterCheck, METH_O, "Registers a callable run with the name of each recorded enter."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int AddAnnotationApi(PyObject* module) {
  if (PyType_Ready(&g_annotate_type) < 0) return -1;
  Py_INCREF(&g_annotate_type);
  if (PyModule_AddObject(module, "annotate", reinterpret_cast<PyObject*>(&g_annotate_type)) < 0) {
    Py_DECREF(&g_annotate_type);
    return -1;
  }
  return PyModule_AddFunctions(module, kFunctions);
}

}  // namespace smppy

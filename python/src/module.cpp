// The module fastt._C: exception translation, argument conversion helpers,
// the dtype / device / Size types and PyInit__C. New module functions go in
// the g_*_functions tables of ops.cpp / convert.cpp / factory.cpp.
#include <cstring>
#include <new>
#include <string>

#include "binder.h"
#include "common.h"

#include "csrc/allocator.h"
#include "csrc/capture.h"

#include "csrc/ops/elementwise.h"
#include "csrc/ops/factory.h"
#include "csrc/ops/out.h"
#include "csrc/ops/shape.h"
#include "csrc/parallel.h"

namespace fastt {
namespace py {

// ---- Exceptions ----
// fastt.linalg.LinAlgError: a RuntimeError subclass named as torch's
// (torch._C._LinAlgError), made at module init.
static PyObject* g_linalg_error = nullptr;

PyObject* translate_exception() {
  try {
    throw;
  } catch (const PyErrAlreadySet&) {
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const OutOfMemoryError& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const LinAlgError& e) {
    PyErr_SetString(g_linalg_error ? g_linalg_error : PyExc_RuntimeError,
                    e.what());
  } catch (const RuntimeError& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception in fastt");
  }
  return nullptr;
}
int translate_exception_int() {
  translate_exception();
  return -1;
}

// ---- Scalars and ints ----
int try_scalar(PyObject* o, Scalar* out) {
  if (PyFloat_CheckExact(o)) {
    *out = Scalar(PyFloat_AS_DOUBLE(o));
    return 1;
  }
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      PyErr_SetString(PyExc_OverflowError, "int too big to convert");
      throw_py();
    }
    *out = Scalar(int64_t(v));
    return 1;
  }
  if (PyBool_Check(o)) {
    *out = Scalar(o == Py_True);
    return 1;
  }
  if (is_tensor(o)) return 0;
  // NumPy scalars and other number-likes: by category.
  PyTypeObject* tp = Py_TYPE(o);
  // Arrays have number slots too; they are not scalars.
  if (!PyLong_Check(o) && !PyFloat_Check(o) && PySequence_Check(o)) return 0;
  if (PyLong_Check(o) || (tp->tp_as_number && tp->tp_as_number->nb_index &&
                          !PyFloat_Check(o))) {
    const char* name = tp->tp_name;
    if (std::strcmp(name, "numpy.bool") == 0 ||
        std::strcmp(name, "numpy.bool_") == 0) {
      int b = PyObject_IsTrue(o);
      if (b < 0) throw_py();
      *out = Scalar(b != 0);
      return 1;
    }
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) throw_py();
    *out = Scalar(int64_t(v));
    return 1;
  }
  // Python complex (and NumPy's complex128, its subclass) and NumPy's
  // other complex scalars, which convert through __complex__.
  if (PyComplex_Check(o) ||
      std::strncmp(tp->tp_name, "numpy.complex", 13) == 0) {
    Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) throw_py();
    *out = Scalar(Complex128(c.real, c.imag));
    return 1;
  }
  if (PyFloat_Check(o) ||
      (tp->tp_as_number && tp->tp_as_number->nb_float &&
       !PySequence_Check(o) && !PyUnicode_Check(o))) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw_py();
    *out = Scalar(v);
    return 1;
  }
  return 0;
}

Scalar to_scalar(PyObject* o, const char* what) {
  Scalar s;
  if (try_scalar(o, &s)) return s;
  if (is_tensor(o) && unwrap(o).numel() == 1) return unwrap(o).item();
  PyErr_Format(PyExc_TypeError, "%s must be a number, not %s", what,
               Py_TYPE(o)->tp_name);
  throw_py();
}

int64_t to_int(PyObject* o, const char* what) {
  if (FASTT_LIKELY(PyLong_CheckExact(o))) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      PyErr_Format(PyExc_OverflowError, "%s: int too big to convert", what);
      throw_py();
    }
    return v;
  }
  if (PyFloat_Check(o) || PyBool_Check(o) ||
      !(Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_index)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %s", what,
                 Py_TYPE(o)->tp_name);
    throw_py();
  }
  PyObject* idx = PyNumber_Index(o);
  if (!idx) throw_py();
  long long v = PyLong_AsLongLong(idx);
  Py_DECREF(idx);
  if (v == -1 && PyErr_Occurred()) throw_py();
  return v;
}

double to_double(PyObject* o, const char* what) {
  if (PyFloat_CheckExact(o)) return PyFloat_AS_DOUBLE(o);
  Scalar s;
  if (try_scalar(o, &s)) {
    if (s.is_complex()) {  // a real parameter (torch: "must be float")
      PyErr_Format(PyExc_TypeError, "%s must be float, not complex", what);
      throw_py();
    }
    return s.to_double();
  }
  PyErr_Format(PyExc_TypeError, "%s must be a number, not %s", what,
               Py_TYPE(o)->tp_name);
  throw_py();
}

bool to_bool(PyObject* o, const char* what) {
  if (o == Py_True) return true;
  if (o == Py_False) return false;
  int r = PyObject_IsTrue(o);
  if (r < 0) throw_py();
  return r != 0;
}

bool is_dtype(PyObject* o) { return Py_TYPE(o) == &DTypeType; }

DType to_dtype(PyObject* o, DType fallback) {
  if (!o || o == Py_None) return fallback;
  if (Py_TYPE(o) == &DTypeType)
    return reinterpret_cast<DTypeObject*>(o)->dtype;
  if (PyUnicode_Check(o)) {
    DType t;
    const char* s = PyUnicode_AsUTF8(o);
    if (!s) throw_py();
    if (std::strncmp(s, "fastt.", 6) == 0) s += 6;
    if (dtype_from_name(s, &t)) return t;
  }
  // Python's own types, as NumPy and torch accept them in places.
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return default_dtype();
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int64;
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  PyErr_Format(PyExc_TypeError, "expected a fastt.dtype, got %R", o);
  throw_py();
}

Device to_device(PyObject* o, Device fallback) {
  if (!o || o == Py_None) return fallback;
  if (Py_TYPE(o) == &DeviceType)
    return reinterpret_cast<DeviceObject*>(o)->device;
  if (PyUnicode_Check(o)) {
    const char* s = PyUnicode_AsUTF8(o);
    if (!s) throw_py();
    return Device(std::string(s));
  }
  if (PyLong_Check(o)) return Device(DeviceType::CUDA, int(to_int(o, "device")));
  PyErr_Format(PyExc_TypeError, "expected a fastt.device or str, got %s",
               Py_TYPE(o)->tp_name);
  throw_py();
}

const Tensor& to_tensor(PyObject* o, const char* what) {
  if (FASTT_LIKELY(is_tensor(o))) return unwrap(o);
  PyErr_Format(PyExc_TypeError, "%s must be a Tensor, not %s", what,
               Py_TYPE(o)->tp_name);
  throw_py();
}

Tensor to_tensor_like(PyObject* o, const char* what) {
  if (is_tensor(o)) return unwrap(o);
  Scalar s;
  if (try_scalar(o, &s)) {
    Tensor t = Tensor::empty({}, s.natural_dtype());
    t.fill_(s);
    return t;
  }
  if (PyList_Check(o) || PyTuple_Check(o) || PyObject_CheckBuffer(o))
    return tensor_from_data(o, nullptr, nullptr, false);
  PyErr_Format(PyExc_TypeError, "%s must be a Tensor or a number, not %s",
               what, Py_TYPE(o)->tp_name);
  throw_py();
}

void parse_ints(PyObject* o, SmallInts* out, const char* what) {
  if (PyTuple_Check(o) || PyList_Check(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (n > kMaxDims) {
      PyErr_Format(PyExc_ValueError, "%s: at most %d dims are supported", what,
                   kMaxDims);
      throw_py();
    }
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i) out->v[i] = to_int(items[i], what);
    out->n = int(n);
    return;
  }
  if (is_tensor(o) && unwrap(o).dim() == 1) {
    const Tensor& t = unwrap(o);
    Tensor c = t.to(kCPU).to(DType::Int64).contiguous();
    capture::host_read("a size given as a tensor");
    FASTT_CHECK(c.numel() <= kMaxDims, ValueError,
                "{}: at most {} dims are supported", what, kMaxDims);
    for (int64_t i = 0; i < c.numel(); ++i)
      out->v[i] = c.data_ptr<int64_t>()[i];
    out->n = int(c.numel());
    return;
  }
  out->v[0] = to_int(o, what);
  out->n = 1;
}

void parse_varargs_ints(PyObject* const* args, Py_ssize_t nargs,
                        SmallInts* out, const char* what) {
  if (nargs == 1 && !PyLong_CheckExact(args[0])) {
    parse_ints(args[0], out, what);
    return;
  }
  if (nargs > kMaxDims) {
    PyErr_Format(PyExc_ValueError, "%s: at most %d dims are supported", what,
                 kMaxDims);
    throw_py();
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) out->v[i] = to_int(args[i], what);
  out->n = int(nargs);
}

// torch's NumPy-style keyword aliases (python_arg_parser's
// numpy_compatibility_arg_names): sum(axis=0, keepdims=True), ...
static const char* numpy_alias(PyObject* key) {
  if (PyUnicode_CompareWithASCIIString(key, "axis") == 0) return "dim";
  if (PyUnicode_CompareWithASCIIString(key, "keepdims") == 0) return "keepdim";
  if (PyUnicode_CompareWithASCIIString(key, "x2") == 0) return "other";
  return nullptr;
}

void parse_args(const Signature& sig, PyObject* const* args, Py_ssize_t nargs,
                PyObject* kwnames, PyObject** out) {
  int nnames = 0, npos = -1;
  while (nnames < 10 && sig.names[nnames]) {
    if (sig.names[nnames][0] == '$' && npos < 0) npos = nnames;
    out[nnames] = nullptr;
    ++nnames;
  }
  if (npos < 0) npos = sig.npos >= 0 ? sig.npos : nnames;
  if (nargs > npos) {
    PyErr_Format(PyExc_TypeError,
                 "%s() takes at most %d positional arguments (%zd given)",
                 sig.fname, npos, nargs);
    throw_py();
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  if (kwnames) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      int found = -1;
      for (int i = 0; i < nnames; ++i) {
        const char* name = sig.names[i];
        if (name[0] == '$') ++name;
        if (PyUnicode_CompareWithASCIIString(key, name) == 0) {
          found = i;
          break;
        }
      }
      if (found < 0) {  // not a name: perhaps one of torch's aliases
        if (const char* alias = numpy_alias(key))
          for (int i = 0; i < nnames; ++i) {
            const char* name = sig.names[i];
            if (name[0] == '$') ++name;
            if (std::strcmp(name, alias) == 0) {
              found = i;
              break;
            }
          }
      }
      if (found < 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s() got an unexpected keyword argument '%U'",
                     sig.fname, key);
        throw_py();
      }
      if (out[found]) {
        PyErr_Format(PyExc_TypeError,
                     "%s() got multiple values for argument '%U'", sig.fname,
                     key);
        throw_py();
      }
      out[found] = args[nargs + k];
    }
  }
  for (int i = 0; i < sig.nreq; ++i) {
    if (!out[i]) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'",
                   sig.fname, sig.names[i]);
      throw_py();
    }
  }
}

PyObject* store_out(PyObject* out, const Tensor& r, const char* name) {
  to_tensor(out, "out");
  fastt::assign_out(unwrap_mut(out), r, name);
  Py_INCREF(out);
  return out;
}

PyObject* call_with_input_kw(MethodFn m, const char* name,
                             PyObject* const* args, PyObject* kwnames) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  Py_ssize_t at = -1;
  for (Py_ssize_t i = 0; i < nkw; ++i)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i),
                                         "input") == 0)
      at = i;
  if (at < 0) {
    PyErr_Format(PyExc_TypeError, "%s() missing required argument 'input'",
                 name);
    return nullptr;
  }
  PyObject* rest[16];
  if (nkw > 16) {
    PyErr_Format(PyExc_TypeError, "%s() got too many keyword arguments",
                 name);
    return nullptr;
  }
  PyObject* names = nkw > 1 ? PyTuple_New(nkw - 1) : nullptr;
  if (nkw > 1 && !names) return nullptr;
  Py_ssize_t k = 0;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    if (i == at) continue;
    rest[k] = args[i];
    PyObject* n = PyTuple_GET_ITEM(kwnames, i);
    Py_INCREF(n);
    PyTuple_SET_ITEM(names, k, n);
    ++k;
  }
  PyObject* r = m(args[at], rest, 0, names);
  Py_XDECREF(names);
  return r;
}

PyObject* call_with_number_input(MethodFn m, const char* name,
                                 PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames) {
  static_cast<void>(name);  // for a debugger: the function being called
  PyObject* input;
  FASTT_PY_BEGIN
  Scalar s;
  if (nargs < 2 || !is_tensor(args[1]) || !try_scalar(args[0], &s))
    return m(args[0], args + 1, nargs - 1, kwnames);
  const Tensor& other = unwrap(args[1]);
  ResultTypeState st;
  st.add(other);
  st.add(s);
  input = wrap(fastt::full({}, s, st.result(), other.device()));
  FASTT_PY_END
  if (!input) return nullptr;
  PyObject* r = m(input, args + 1, nargs - 1, kwnames);
  Py_DECREF(input);
  return r;
}

PyObject* scalar_to_py(const Scalar& s) {
  if (s.is_bool()) return PyBool_FromLong(s.to_bool());
  if (s.is_integral()) return PyLong_FromLongLong(s.to_int());
  if (s.is_complex()) return PyComplex_FromDoubles(s.to_double(), s.imag());
  return PyFloat_FromDouble(s.to_double());
}

// ---- fastt.dtype ----
PyObject* g_dtype_objects[kNumDTypes];

static PyObject* dtype_repr(PyObject* self) {
  return PyUnicode_FromFormat(
      "fastt.%s", dtype_name(reinterpret_cast<DTypeObject*>(self)->dtype));
}
static PyObject* dtype_is_floating(PyObject* self, void*) {
  return PyBool_FromLong(is_floating(reinterpret_cast<DTypeObject*>(self)->dtype));
}
static PyObject* dtype_itemsize(PyObject* self, void*) {
  return PyLong_FromSize_t(itemsize(reinterpret_cast<DTypeObject*>(self)->dtype));
}
static PyObject* dtype_is_signed(PyObject* self, void*) {
  return PyBool_FromLong(is_signed(reinterpret_cast<DTypeObject*>(self)->dtype));
}
static PyObject* dtype_is_complex(PyObject* self, void*) {
  return PyBool_FromLong(is_complex(reinterpret_cast<DTypeObject*>(self)->dtype));
}
static PyObject* dtype_to_real(PyObject* self, PyObject*) {
  return Py_NewRef(g_dtype_objects[int(
      to_real(reinterpret_cast<DTypeObject*>(self)->dtype))]);
}
static PyObject* dtype_to_complex(PyObject* self, PyObject*) {
  const DType t = reinterpret_cast<DTypeObject*>(self)->dtype;
  if (!is_inexact(t) || t == DType::Float16 || t == DType::BFloat16) {
    PyErr_Format(PyExc_RuntimeError, "Unknown Complex ScalarType for %s",
                 torch_type_name(t));
    return nullptr;
  }
  return Py_NewRef(g_dtype_objects[int(to_complex(t))]);
}
static PyObject* dtype_reduce(PyObject* self, PyObject*) {
  return PyUnicode_FromString(
      dtype_name(reinterpret_cast<DTypeObject*>(self)->dtype));
}
static PyGetSetDef g_dtype_getset[] = {
    {"is_floating_point", dtype_is_floating, nullptr, nullptr, nullptr},
    {"itemsize", dtype_itemsize, nullptr, nullptr, nullptr},
    {"is_signed", dtype_is_signed, nullptr, nullptr, nullptr},
    {"is_complex", dtype_is_complex, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};
static PyMethodDef g_dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, nullptr},
    {"to_real", dtype_to_real, METH_NOARGS, nullptr},
    {"to_complex", dtype_to_complex, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};
PyTypeObject DTypeType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt.dtype";
  t.tp_basicsize = sizeof(DTypeObject);
  t.tp_repr = dtype_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_getset = g_dtype_getset;
  t.tp_methods = g_dtype_methods;
  return t;
}();

// ---- fastt.device ----
PyObject* device_object(Device d) {
  auto* o = PyObject_New(DeviceObject, &DeviceType);
  if (!o) return nullptr;
  o->device = d;
  return reinterpret_cast<PyObject*>(o);
}
static PyObject* device_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  FASTT_PY_BEGIN
  static const char* kw[] = {"type", "index", nullptr};
  PyObject* type = nullptr;
  PyObject* index = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", const_cast<char**>(kw),
                                   &type, &index))
    return nullptr;
  if (Py_TYPE(type) == &DeviceType) {
    Py_INCREF(type);
    return type;
  }
  Device d = to_device(type, kCPU);
  if (index != Py_None) {
    int64_t i = to_int(index, "device index");
    FASTT_CHECK(i >= 0, ValueError, "Device index must not be negative");
    FASTT_CHECK(d.is_cuda() || i == 0, ValueError,
                "cpu device index must be 0, got {}", i);
    d.index = int8_t(i);
  }
  return device_object(d);
  FASTT_PY_END
}
static PyObject* device_repr(PyObject* self) {
  Device d = reinterpret_cast<DeviceObject*>(self)->device;
  if (d.is_cpu()) return PyUnicode_FromString("device(type='cpu')");
  return PyUnicode_FromFormat("device(type='cuda', index=%d)", int(d.index));
}
static PyObject* device_str(PyObject* self) {
  Device d = reinterpret_cast<DeviceObject*>(self)->device;
  if (d.is_cpu()) return PyUnicode_FromString("cpu");
  return PyUnicode_FromFormat("cuda:%d", int(d.index));
}
static PyObject* device_type(PyObject* self, void*) {
  return PyUnicode_FromString(
      device_type_name(reinterpret_cast<DeviceObject*>(self)->device.type));
}
static PyObject* device_index(PyObject* self, void*) {
  Device d = reinterpret_cast<DeviceObject*>(self)->device;
  if (d.is_cpu()) Py_RETURN_NONE;
  return PyLong_FromLong(d.index);
}
static PyObject* device_richcompare(PyObject* a, PyObject* b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != &DeviceType)
    Py_RETURN_NOTIMPLEMENTED;
  Device da = reinterpret_cast<DeviceObject*>(a)->device;
  Device db;
  if (Py_TYPE(b) == &DeviceType) {
    db = reinterpret_cast<DeviceObject*>(b)->device;
  } else if (PyUnicode_Check(b)) {
    try {
      db = to_device(b, kCPU);
    } catch (...) {
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  return PyBool_FromLong((da == db) == (op == Py_EQ));
}
static Py_hash_t device_hash(PyObject* self) {
  Device d = reinterpret_cast<DeviceObject*>(self)->device;
  return Py_hash_t(int(d.type) * 256 + d.index + 1);
}
// pickle: fastt.device(str(self)).
static PyObject* device_reduce(PyObject* self, PyObject*) {
  PyObject* s = device_str(self);
  if (!s) return nullptr;
  return Py_BuildValue("(O(N))", reinterpret_cast<PyObject*>(&DeviceType),
                       s);
}
static PyMethodDef g_device_methods[] = {
    {"__reduce__", device_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};
static PyGetSetDef g_device_getset[] = {
    {"type", device_type, nullptr, nullptr, nullptr},
    {"index", device_index, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};
PyTypeObject DeviceType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt.device";
  t.tp_basicsize = sizeof(DeviceObject);
  t.tp_repr = device_repr;
  t.tp_str = device_str;
  t.tp_hash = device_hash;
  t.tp_richcompare = device_richcompare;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_getset = g_device_getset;
  t.tp_methods = g_device_methods;
  t.tp_new = device_new;
  return t;
}();

// ---- fastt.Size: a tuple subclass printing as fastt.Size([2, 3]) ----
PyObject* make_size(IntList sizes) {
  PyObject* t = SizeType.tp_alloc(&SizeType, Py_ssize_t(sizes.size()));
  if (!t) throw_py();
  for (size_t i = 0; i < sizes.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(sizes[i]);
    if (!v) {
      Py_DECREF(t);
      throw_py();
    }
    PyTuple_SET_ITEM(t, Py_ssize_t(i), v);
  }
  return t;
}
static PyObject* size_repr(PyObject* self) {
  PyObject* list = PySequence_List(self);
  if (!list) return nullptr;
  PyObject* r = PyUnicode_FromFormat("fastt.Size(%R)", list);
  Py_DECREF(list);
  return r;
}
static PyObject* size_numel(PyObject* self, PyObject*) {
  long long n = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
    if (v == -1 && PyErr_Occurred()) return nullptr;
    n *= v;
  }
  return PyLong_FromLongLong(n);
}
// Size(iterable of ints): torch rejects anything else.
static PyObject* size_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  PyObject* it = nullptr;
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "Size() takes no keyword arguments");
    return nullptr;
  }
  if (!PyArg_ParseTuple(args, "|O:Size", &it)) return nullptr;
  PyObject* seq = it ? PySequence_Tuple(it) : PyTuple_New(0);
  if (!seq) return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  PyObject* r = SizeType.tp_alloc(&SizeType, n);
  if (!r) {
    Py_DECREF(seq);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyTuple_GET_ITEM(seq, i);
    PyObject* iv = PyLong_Check(v) || is_tensor(v) || PyIndex_Check(v)
                       ? PyNumber_Index(v)
                       : nullptr;
    if (!iv) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "fastt.Size() takes an iterable of 'int' (item %zd is "
                   "'%s')",
                   i, Py_TYPE(v)->tp_name);
      Py_DECREF(seq);
      Py_DECREF(r);
      return nullptr;
    }
    PyTuple_SET_ITEM(r, i, iv);
  }
  Py_DECREF(seq);
  return r;
}
// A tuple result (slice, concatenation) as a Size, like torch.
static PyObject* as_size(PyObject* r) {
  if (!r || !PyTuple_CheckExact(r)) return r;
  Py_ssize_t n = PyTuple_GET_SIZE(r);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!PyLong_Check(PyTuple_GET_ITEM(r, i))) return r;
  PyObject* s = SizeType.tp_alloc(&SizeType, n);
  if (!s) {
    Py_DECREF(r);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyTuple_GET_ITEM(r, i);
    Py_INCREF(v);
    PyTuple_SET_ITEM(s, i, v);
  }
  Py_DECREF(r);
  return s;
}
static PyObject* size_subscript(PyObject* self, PyObject* key) {
  PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
  return PySlice_Check(key) ? as_size(r) : r;
}
static PyObject* size_concat(PyObject* a, PyObject* b) {
  return as_size(PyTuple_Type.tp_as_sequence->sq_concat(a, b));
}
static PyMappingMethods g_size_mapping;
static PySequenceMethods g_size_sequence;

static PyMethodDef g_size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "Product of the sizes."},
    {nullptr, nullptr, 0, nullptr},
};
PyTypeObject SizeType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt.Size";
  t.tp_repr = size_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_TUPLE_SUBCLASS;
  t.tp_methods = g_size_methods;
  t.tp_new = size_new;
  return t;
}();

bool init_types(PyObject* m) {
  SizeType.tp_base = &PyTuple_Type;
  SizeType.tp_basicsize = PyTuple_Type.tp_basicsize;
  SizeType.tp_itemsize = PyTuple_Type.tp_itemsize;
  g_size_mapping = *PyTuple_Type.tp_as_mapping;
  g_size_mapping.mp_subscript = size_subscript;
  SizeType.tp_as_mapping = &g_size_mapping;
  g_size_sequence = *PyTuple_Type.tp_as_sequence;
  g_size_sequence.sq_concat = size_concat;
  SizeType.tp_as_sequence = &g_size_sequence;
  PyTypeObject* types[] = {&TensorType, &DTypeType, &DeviceType, &SizeType};
  const char* names[] = {"Tensor", "dtype", "device", "Size"};
  for (int i = 0; i < 4; ++i) {
    if (PyType_Ready(types[i]) < 0) return false;
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i],
                           reinterpret_cast<PyObject*>(types[i])) < 0)
      return false;
  }
  // NumPy defers `ndarray op tensor` to Tensor's reflected operators.
  PyObject* prio = PyFloat_FromDouble(1000.0);
  if (!prio ||
      PyDict_SetItemString(TensorType.tp_dict, "__array_priority__", prio) < 0)
    return false;
  Py_DECREF(prio);
  PyType_Modified(&TensorType);
  for (int i = 0; i < kNumDTypes; ++i) {
    auto* o = PyObject_New(DTypeObject, &DTypeType);
    if (!o) return false;
    o->dtype = DType(i);
    g_dtype_objects[i] = reinterpret_cast<PyObject*>(o);
    Py_INCREF(o);
    if (PyModule_AddObject(m, dtype_name(DType(i)),
                           reinterpret_cast<PyObject*>(o)) < 0)
      return false;
  }
  return true;
}

// ---- Module ----
static int add_functions(PyObject* m, PyMethodDef* defs) {
  return PyModule_AddFunctions(m, defs);
}

// Methods of the families compiled in separate files join Tensor here.
static bool add_methods(PyMethodDef* defs) {
  PyObject* dict = TensorType.tp_dict;
  for (PyMethodDef* d = defs; d->ml_name; ++d) {
    PyObject* descr;
    if (d->ml_flags & METH_STATIC) {
      PyObject* fn = PyCFunction_NewEx(
          d, reinterpret_cast<PyObject*>(&TensorType), nullptr);
      if (!fn) return false;
      descr = PyStaticMethod_New(fn);
      Py_DECREF(fn);
    } else {
      descr = PyDescr_NewMethod(&TensorType, d);
    }
    if (!descr) return false;
    int rc = PyDict_SetItemString(dict, d->ml_name, descr);
    Py_DECREF(descr);
    if (rc < 0) return false;
  }
  PyType_Modified(&TensorType);
  return true;
}

// The CPU caching allocator's counters (csrc/allocator.h), for tests and
// long-run checks: fastt._C._memory_stats() -> dict.
static PyObject* f_memory_stats(PyObject*, PyObject*) {
  const AllocatorStats st = CachingAllocator::stats();
  return Py_BuildValue(
      "{sLsLsLsLsLsL}", "allocated_bytes", (long long)st.allocated_bytes,
      "peak_allocated_bytes", (long long)st.peak_allocated_bytes,
      "cached_bytes", (long long)st.cached_bytes, "system_allocs",
      (long long)st.system_allocs, "system_frees", (long long)st.system_frees,
      "alloc_requests", (long long)st.alloc_requests);
}
static PyObject* f_reset_peak_memory_stats(PyObject*, PyObject*) {
  CachingAllocator::reset_peak();
  Py_RETURN_NONE;
}
static PyObject* f_empty_cache(PyObject*, PyObject*) {
  CachingAllocator::empty_cache();
  Py_RETURN_NONE;
}
// Composite ops written in Python (python/fastt/_composite.py) join Tensor
// as methods here: fastt._C._add_tensor_method(name, fn). A name Tensor
// already has is refused, as the binder refuses a row bound twice.
static PyObject* f_add_tensor_method(PyObject*, PyObject* args) {
  const char* name;
  PyObject* fn;
  if (!PyArg_ParseTuple(args, "sO:_add_tensor_method", &name, &fn))
    return nullptr;
  // A function, or a descriptor such as a property (Tensor.real).
  if (!PyCallable_Check(fn) && !Py_TYPE(fn)->tp_descr_get) {
    PyErr_Format(PyExc_TypeError,
                 "_add_tensor_method: %s is neither callable nor a descriptor",
                 name);
    return nullptr;
  }
  if (PyDict_GetItemString(TensorType.tp_dict, name)) {
    PyErr_Format(PyExc_ImportError, "fastt: Tensor.%s is bound twice", name);
    return nullptr;
  }
  if (PyDict_SetItemString(TensorType.tp_dict, name, fn) < 0) return nullptr;
  PyType_Modified(&TensorType);
  Py_RETURN_NONE;
}

// Tensor.set_(source) and the last step of the in-place view ops
// (python/fastt/_composite.py): _C._set_(self, source) and
// _C._become_view(self, view, op), view computed from self by the op's
// out-of-place form.
static PyObject* f_set_(PyObject*, PyObject* args) {
  PyObject *self, *src;
  if (!PyArg_ParseTuple(args, "O!O!:set_", &TensorType, &self, &TensorType,
                        &src))
    return nullptr;
  FASTT_PY_BEGIN
  fastt::set_(unwrap_mut(self), unwrap(src));
  Py_INCREF(self);
  return self;
  FASTT_PY_END
}
static PyObject* f_become_view(PyObject*, PyObject* args) {
  PyObject *self, *view;
  const char* op;
  if (!PyArg_ParseTuple(args, "O!O!s:_become_view", &TensorType, &self,
                        &TensorType, &view, &op))
    return nullptr;
  FASTT_PY_BEGIN
  fastt::become_view(unwrap_mut(self), unwrap(view), op);
  Py_INCREF(self);
  return self;
  FASTT_PY_END
}

static PyMethodDef g_memory_functions[] = {
    {"_set_", f_set_, METH_VARARGS,
     "self takes source's storage and geometry (Tensor.set_)."},
    {"_become_view", f_become_view, METH_VARARGS,
     "self takes the geometry and history of a view of itself."},
    {"_add_tensor_method", f_add_tensor_method, METH_VARARGS,
     "Adds a Python function to Tensor as a method (composite ops)."},
    {"_memory_stats", f_memory_stats, METH_NOARGS,
     "The CPU caching allocator's counters."},
    {"_reset_peak_memory_stats", f_reset_peak_memory_stats, METH_NOARGS,
     "Sets the CPU allocator's peak to what is allocated now."},
    {"_empty_cache", f_empty_cache, METH_NOARGS,
     "Returns cached CPU blocks to the system."},
    {nullptr, nullptr, 0, nullptr}};

static PyModuleDef g_module = {
    PyModuleDef_HEAD_INIT, "fastt._C",
    "fastt's C extension: the Tensor type and the op bindings.", -1,
    nullptr, nullptr, nullptr, nullptr, nullptr,
};

}  // namespace py
}  // namespace fastt

// The CUDA runtime bindings (python/src/cuda.cpp; built with or without
// CUDA, so fastt.cuda always imports).
namespace fastt {
namespace py {
extern PyMethodDef g_cuda_functions[];
extern PyMethodDef g_cuda_methods[];
// fastt._C._distributed (python/src/distributed.cpp, pybind11 classes).
bool init_distributed(PyObject* module);
}  // namespace py
}  // namespace fastt

PyMODINIT_FUNC PyInit__C() {
  using namespace fastt::py;
  PyObject* m = PyModule_Create(&g_module);
  if (!m) return nullptr;
  if (!init_types(m) || add_functions(m, g_module_functions) < 0 ||
      add_functions(m, g_convert_functions) < 0 ||
      add_functions(m, g_factory_functions) < 0 ||
      add_functions(m, g_reduce_functions) < 0 ||
      add_functions(m, g_index_functions) < 0 ||
      add_functions(m, g_linalg_functions) < 0 ||
      add_functions(m, g_optim_functions) < 0 ||
      add_functions(m, g_autograd_functions) < 0 ||
      add_functions(m, g_serialize_functions) < 0 ||
      add_functions(m, g_profiler_functions) < 0 ||
      add_functions(m, g_capture_functions) < 0 || !init_capture_type(m) ||
      add_functions(m, g_memory_functions) < 0 ||
      add_functions(m, g_cuda_functions) < 0 || !add_methods(g_cuda_methods) ||
      !add_methods(g_autograd_methods) || !init_autograd_types(m) ||
      !init_generator_type(m) ||
      !add_methods(g_factory_methods) || !add_methods(g_reduce_methods) ||
      !add_methods(g_index_methods) || !add_methods(g_linalg_methods) ||
      !add_bind_rows(m) || !init_distributed(m)) {
    Py_DECREF(m);
    return nullptr;
  }
  g_linalg_error = PyErr_NewExceptionWithDoc(
      "fastt._C._LinAlgError",
      "A linear algebra function failed on its input (singular, not "
      "positive-definite, no convergence): torch.linalg.LinAlgError.",
      PyExc_RuntimeError, nullptr);
  if (!g_linalg_error ||
      PyModule_AddObjectRef(m, "_LinAlgError", g_linalg_error) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
#ifdef FASTT_WITH_CUDNN
  PyModule_AddIntConstant(m, "_cudnn_built", 1);
#else
  PyModule_AddIntConstant(m, "_cudnn_built", 0);
#endif
#ifdef FASTT_WITH_CUDA
  PyModule_AddIntConstant(m, "_cuda_built", 1);
#else
  PyModule_AddIntConstant(m, "_cuda_built", 0);
#endif
  return m;
}

// Data in and out of tensors: fastt.tensor/as_tensor from nested sequences,
// scalars and buffers; tolist(); the buffer protocol (so NumPy views a
// tensor without a copy); numpy()/from_numpy(); DLPack (dlpack.h).
// Foreign memory is wrapped with Storage::wrap and a deleter that releases
// the Python owner under the GIL.
#include <cstring>
#include <vector>

#include "common.h"
#include "csrc/capture.h"
#include "csrc/ops/index.h"
#include "dlpack.h"

namespace fastt {
namespace py {

// ---- Buffer protocol ----
static const char* buffer_format(DType t) {
  switch (t) {
    case DType::Bool: return "?";
    case DType::UInt8: return "B";
    case DType::Int8: return "b";
    case DType::Int16: return "h";
    case DType::Int32: return "i";
    case DType::Int64: return "q";
    case DType::Float16: return "e";
    case DType::Float32: return "f";
    case DType::Float64: return "d";
    case DType::Complex64: return "Zf";
    case DType::Complex128: return "Zd";
    default: return nullptr;
  }
}

int tensor_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  const Tensor& t = unwrap(self);
  const char* fmt = buffer_format(t.dtype());
  if (!fmt) {
    PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s",
                 dtype_name(t.dtype()));
    return -1;
  }
  if (!t.is_cpu()) {
    PyErr_SetString(PyExc_TypeError,
                    "can't convert a CUDA tensor to a buffer; use .cpu() first");
    return -1;
  }
  int nd = int(t.dim());
  auto* shape = static_cast<Py_ssize_t*>(
      PyMem_Malloc(sizeof(Py_ssize_t) * size_t(2 * nd + 1)));
  if (!shape) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t* strides = shape + nd;
  Py_ssize_t isz = Py_ssize_t(t.itemsize());
  for (int d = 0; d < nd; ++d) {
    shape[d] = Py_ssize_t(t.sizes()[d]);
    strides[d] = Py_ssize_t(t.strides()[d]) * isz;
  }
  if (!(flags & PyBUF_STRIDES) && !t.is_contiguous()) {
    PyMem_Free(shape);
    PyErr_SetString(PyExc_BufferError, "tensor is not contiguous");
    return -1;
  }
  capture::host_read("the buffer protocol (NumPy sharing a tensor's memory)");
  view->buf = t.data_ptr();
  view->obj = self;
  Py_INCREF(self);
  view->len = Py_ssize_t(t.nbytes());
  view->readonly = 0;
  view->itemsize = isz;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(fmt) : nullptr;
  view->ndim = nd;
  view->shape = (flags & PyBUF_ND) ? shape : nullptr;
  view->strides = (flags & PyBUF_STRIDES) ? strides : nullptr;
  view->suboffsets = nullptr;
  view->internal = shape;
  return 0;
}

void tensor_releasebuffer(PyObject*, Py_buffer* view) {
  PyMem_Free(view->internal);
}

// ---- Foreign memory ----
struct PyOwner {
  PyObject* obj;     // a reference kept alive while the storage lives
  Py_buffer buffer;  // released first when has_buffer
  bool has_buffer;
};
static void release_py_owner(void* ctx, void*, size_t) {
  auto* owner = static_cast<PyOwner*>(ctx);
  if (Py_IsInitialized()) {
    PyGILState_STATE st = PyGILState_Ensure();
    if (owner->has_buffer) PyBuffer_Release(&owner->buffer);
    Py_XDECREF(owner->obj);
    PyGILState_Release(st);
  }
  delete owner;
}

static bool dtype_from_format(const char* fmt, Py_ssize_t itemsize,
                              DType* out) {
  if (!fmt) fmt = "B";
  while (*fmt == '@' || *fmt == '=' || *fmt == '<' || *fmt == '|') ++fmt;
  if (fmt[0] == 'Z' && fmt[1] != 0 && fmt[2] == 0) {  // complex of f / d
    if (fmt[1] == 'f') return *out = DType::Complex64, itemsize == 8;
    if (fmt[1] == 'd') return *out = DType::Complex128, itemsize == 16;
    return false;
  }
  if (fmt[0] == 0 || fmt[1] != 0) return false;
  switch (fmt[0]) {
    case '?': *out = DType::Bool; return itemsize == 1;
    case 'B': *out = DType::UInt8; return itemsize == 1;
    case 'b': case 'h': case 'i': case 'l': case 'q':
      switch (itemsize) {
        case 1: *out = DType::Int8; return true;
        case 2: *out = DType::Int16; return true;
        case 4: *out = DType::Int32; return true;
        case 8: *out = DType::Int64; return true;
      }
      return false;
    case 'e': *out = DType::Float16; return itemsize == 2;
    case 'f': *out = DType::Float32; return itemsize == 4;
    case 'd': *out = DType::Float64; return itemsize == 8;
  }
  return false;
}

// A tensor sharing the memory of a buffer-protocol object (NumPy array).
static Tensor tensor_from_buffer(PyObject* obj) {
  auto* owner = new PyOwner{nullptr, {}, true};
  if (PyObject_GetBuffer(obj, &owner->buffer, PyBUF_RECORDS) < 0) {
    PyErr_Clear();
    if (PyObject_GetBuffer(obj, &owner->buffer, PyBUF_RECORDS_RO) < 0) {
      delete owner;
      throw_py();
    }
  }
  Py_buffer& b = owner->buffer;
  DType dtype;
  if (!dtype_from_format(b.format, b.itemsize, &dtype)) {
    std::string fmt = b.format ? b.format : "B";
    PyBuffer_Release(&b);
    delete owner;
    throw TypeError(fmt::format(
        "can't convert np.ndarray of type with format '{}'. The only "
        "supported types are: float64, float32, float16, complex64, "
        "complex128, int64, int32, int16, int8, uint8, and bool.",
        fmt));
  }
  if (b.ndim > kMaxDims) {
    PyBuffer_Release(&b);
    delete owner;
    throw ValueError(fmt::format("at most {} dims are supported", kMaxDims));
  }
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int64_t extent = b.itemsize;
  bool empty = false;
  for (int d = 0; d < b.ndim; ++d) {
    sizes[d] = b.shape[d];
    Py_ssize_t st = b.strides ? b.strides[d] : 0;
    if (!b.strides) {
      st = b.itemsize;
      for (int k = d + 1; k < b.ndim; ++k) st *= b.shape[k];
    }
    if (st < 0 || st % b.itemsize != 0) {
      PyBuffer_Release(&b);
      delete owner;
      throw ValueError(
          st < 0 ? "At least one stride in the given numpy array is negative, "
                   "and tensors with negative strides are not currently "
                   "supported. (You can probably work around this by making "
                   "a copy of your array  with array.copy().)"
                 : "given numpy array strides not a multiple of the element "
                   "byte size. Copy the numpy array to reallocate the memory.");
    }
    strides[d] = st / b.itemsize;
    if (sizes[d] == 0) empty = true;
    extent += (sizes[d] - 1) * st;
  }
  owner->obj = nullptr;
  Storage* s = Storage::wrap(b.buf, empty ? 0 : size_t(extent), kCPU,
                             release_py_owner, owner);
  Tensor t;
  try {
    t = Tensor::from_storage(s, {sizes, size_t(b.ndim)},
                             {strides, size_t(b.ndim)}, 0, dtype);
  } catch (...) {
    s->decref();
    throw;
  }
  s->decref();
  return t;
}

static bool is_buffer_source(PyObject* o) {
  return PyObject_CheckBuffer(o) && !PyBytes_Check(o) &&
         !PyByteArray_Check(o) && !PyUnicode_Check(o);
}

// ---- Nested sequences ----
namespace {
enum Cat { kNone = 0, kBool = 1, kInt = 2, kFloat = 3, kComplex = 4 };

struct Inferred {
  int64_t sizes[kMaxDims];
  int ndim = 0;
  int cat = kNone;
  DType buffer_dtype = DType::Bool;  // widest dtype among array leaves
  bool has_buffer_leaf = false;
  int py_cat = kNone;  // widest category among non-NumPy leaves
};

bool is_sequence(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

int leaf_category(PyObject* o) {
  if (PyBool_Check(o)) return kBool;
  if (PyFloat_Check(o)) return kFloat;
  if (PyLong_Check(o)) return kInt;
  if (PyComplex_Check(o)) return kComplex;
  if (is_tensor(o)) {
    const Tensor& t = unwrap(o);
    if (t.numel() != 1)
      throw ValueError(
          "only one element tensors can be converted to Python scalars");
    DType d = t.dtype();
    return d == DType::Bool ? kBool
           : is_complex(d)  ? kComplex
           : is_floating(d) ? kFloat
                            : kInt;
  }
  Scalar s;
  if (try_scalar(o, &s))
    return s.is_bool()       ? kBool
           : s.is_complex()  ? kComplex
           : s.is_floating() ? kFloat
                             : kInt;
  PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'",
               Py_TYPE(o)->tp_name);
  throw_py();
}

void infer_shape(PyObject* o, Inferred* inf) {
  while (is_sequence(o)) {
    if (inf->ndim >= kMaxDims)
      throw ValueError(fmt::format("too many dimensions (max {})", kMaxDims));
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    inf->sizes[inf->ndim++] = n;
    if (n == 0) return;
    o = PySequence_Fast_ITEMS(o)[0];
  }
}

void scan(PyObject* o, int dim, Inferred* inf) {
  if (dim == inf->ndim) {
    if (is_sequence(o))
      throw ValueError(fmt::format("too many dimensions at dim {}", dim));
    int c = leaf_category(o);
    if (c > inf->cat) inf->cat = c;
    if (is_tensor(o) || is_buffer_source(o)) {
      // A 0-d tensor or NumPy scalar counts with its own dtype, as in torch.
      DType d =
          is_tensor(o) ? unwrap(o).dtype() : tensor_from_buffer(o).dtype();
      inf->buffer_dtype = inf->has_buffer_leaf
                              ? promote_types(inf->buffer_dtype, d)
                              : d;
      inf->has_buffer_leaf = true;
    } else if (c > inf->py_cat) {
      inf->py_cat = c;
    }
    return;
  }
  if (!is_sequence(o)) {
    throw ValueError(fmt::format(
        "expected sequence of length {} at dim {} (got {})",
        inf->sizes[dim], dim, Py_TYPE(o)->tp_name));
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  if (n != inf->sizes[dim])
    throw ValueError(fmt::format(
        "expected sequence of length {} at dim {} (got {})", inf->sizes[dim],
        dim, n));
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i) scan(items[i], dim + 1, inf);
}

// Complex data for a real dtype: refused as torch's element unpacking
// does (its imaginary part would be dropped); bool takes either part.
void check_complex_fits(DType dtype) {
  if (is_complex(dtype) || dtype == DType::Bool) return;
  if (is_floating(dtype)) throw TypeError("must be real number, not complex");
  throw TypeError("'complex' object cannot be interpreted as an integer");
}

// A Python int as a float element, through double as torch unpacks it:
// ints beyond int64 are fine there.
bool try_int_as_double(PyObject* o, Scalar* s) {
  if (!PyLong_Check(o) || PyBool_Check(o)) return false;
  double d = PyLong_AsDouble(o);
  if (d == -1.0 && PyErr_Occurred()) throw_py();
  *s = Scalar(d);
  return true;
}

template <class T>
void fill(PyObject* o, int dim, int ndim, T*& out) {
  if (dim == ndim) {
    Scalar s;
    if (!(std::is_same<T, double>::value && try_int_as_double(o, &s)))
      s = is_tensor(o) ? unwrap(o).item() : to_scalar(o, "element");
    *out++ = s.to<T>();
    return;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i) fill(items[i], dim + 1, ndim, out);
}
}  // namespace

Tensor tensor_from_data(PyObject* data, PyObject* dtype_obj,
                        PyObject* device_obj, bool copy) {
  Device device = to_device(device_obj, kCPU);
  bool has_dtype = dtype_obj && dtype_obj != Py_None;
  DType dtype = to_dtype(dtype_obj, DType::Float32);
  Tensor t;
  if (is_tensor(data)) {
    t = unwrap(data);
    if (copy) t = t.clone();
  } else if (is_buffer_source(data)) {
    t = tensor_from_buffer(data);
    if (copy) t = t.clone();
  } else {
    Scalar s;
    const bool to_float = has_dtype && is_floating(dtype);
    if ((to_float && try_int_as_double(data, &s)) || try_scalar(data, &s)) {
      if (s.is_complex() && has_dtype) check_complex_fits(dtype);
      DType d = has_dtype ? dtype : s.natural_dtype();
      t = Tensor::empty({}, d);
      t.fill_(s);
    } else if (is_sequence(data) && PySequence_Fast_GET_SIZE(data) > 0 &&
               !is_tensor(PySequence_Fast_ITEMS(data)[0]) &&
               is_buffer_source(PySequence_Fast_ITEMS(data)[0])) {
      // [ndarray, ndarray, ...] as torch takes it: the arrays' own dtype,
      // stacked (elements of other kinds convert one by one first).
      Py_ssize_t n = PySequence_Fast_GET_SIZE(data);
      std::vector<Tensor> parts;
      parts.reserve(size_t(n));
      for (Py_ssize_t i = 0; i < n; ++i) {
        parts.push_back(tensor_from_data(PySequence_Fast_ITEMS(data)[i],
                                         nullptr, nullptr, false));
        if (!parts[0].sizes().equals(parts.back().sizes()))
          throw ValueError(fmt::format(
              "expected sequence of length {} at dim 1 (got {})",
              parts[0].dim() ? parts[0].sizes()[0] : 0,
              parts.back().dim() ? parts.back().sizes()[0] : 0));
      }
      t = fastt::stack(parts, 0);
    } else if (is_sequence(data)) {
      Inferred inf;
      infer_shape(data, &inf);
      scan(data, 0, &inf);
      if (inf.cat == kComplex && has_dtype) check_complex_fits(dtype);
      // Float data, or any numbers for a float dtype, build in float64;
      // complex data (or any for a complex dtype) in complex128.
      const bool to_complex_dt = has_dtype && is_complex(dtype);
      DType build =
          inf.cat == kComplex || (to_complex_dt && inf.cat != kNone)
              ? DType::Complex128
          : inf.cat == kFloat || (to_float && inf.cat != kNone)
              ? DType::Float64
          : inf.cat == kInt  ? DType::Int64
          : inf.cat == kBool ? DType::Bool
                             : default_dtype();
      DType natural = inf.cat == kComplex ? to_complex(default_dtype())
                      : inf.cat == kFloat ? default_dtype()
                                          : build;
      if (inf.has_buffer_leaf) {
        DType py = inf.py_cat == kComplex ? to_complex(default_dtype())
                   : inf.py_cat == kFloat ? default_dtype()
                   : inf.py_cat == kInt   ? DType::Int64
                                          : DType::Bool;
        natural = inf.py_cat == kNone ? inf.buffer_dtype
                                      : promote_types(inf.buffer_dtype, py);
      }
      capture::host_read("tensor() from Python data (a host write)");
      t = Tensor::empty({inf.sizes, size_t(inf.ndim)}, build);
      visit_dtype(build, [&](auto tag) {
        using T = decltype(tag);
        T* out = static_cast<T*>(t.data_ptr());
        if (t.numel() > 0) fill<T>(data, 0, inf.ndim, out);
      });
      // As torch: nan/inf/out-of-range values for an integer dtype raise
      // (the .to() below would wrap them silently).
      if (has_dtype && is_integral(dtype, false) &&
          (build == DType::Float64 || build == DType::Int64)) {
        const int64_t n = t.numel();
        if (build == DType::Float64) {
          const double* p = static_cast<const double*>(t.data_ptr());
          for (int64_t i = 0; i < n; ++i)
            check_scalar_fits(Scalar(p[i]), dtype, "tensor");
        } else {
          const int64_t* p = static_cast<const int64_t*>(t.data_ptr());
          for (int64_t i = 0; i < n; ++i)
            check_scalar_fits(Scalar(p[i]), dtype, "tensor");
        }
      }
      if (!has_dtype) dtype = natural;
      has_dtype = true;
    } else if (PySequence_Check(data) && !PyUnicode_Check(data) &&
               !PyBytes_Check(data) && !PyByteArray_Check(data)) {
      // range, array.array-less sequences, user sequences: as a list.
      PyObject* list = PySequence_List(data);
      if (!list) throw_py();
      try {
        t = tensor_from_data(list, dtype_obj, device_obj, false);
      } catch (...) {
        Py_DECREF(list);
        throw;
      }
      Py_DECREF(list);
      return t;
    } else {
      // As torch: a str is an invalid element type, anything else has no
      // dtype to infer.
      if (PyUnicode_Check(data))
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'",
                     Py_TYPE(data)->tp_name);
      else
        PyErr_Format(PyExc_RuntimeError, "Could not infer dtype of %s",
                     Py_TYPE(data)->tp_name);
      throw_py();
    }
  }
  if (has_dtype && t.dtype() != dtype) t = t.to(dtype);
  if (t.device() != device) t = t.to(device);
  return t;
}

// ---- tolist ----
template <class T>
static PyObject* to_py(T v) {
  if constexpr (std::is_same<T, bool>::value) return PyBool_FromLong(v);
  else if constexpr (std::is_integral<T>::value)
    return PyLong_FromLongLong(static_cast<long long>(v));
  else if constexpr (std::is_floating_point<T>::value)
    return PyFloat_FromDouble(static_cast<double>(v));
  else if constexpr (kIsComplex<T>)
    return PyComplex_FromDoubles(double(v.re), double(v.im));
  else return PyFloat_FromDouble(static_cast<double>(static_cast<float>(v)));
}

template <class T>
static PyObject* list_rec(const char* data, const Tensor& t, int dim) {
  if (dim == t.dim()) return to_py(*reinterpret_cast<const T*>(data));
  int64_t n = t.sizes()[dim];
  int64_t stride = t.strides()[dim] * int64_t(sizeof(T));
  PyObject* list = PyList_New(Py_ssize_t(n));
  if (!list) throw_py();
  for (int64_t i = 0; i < n; ++i) {
    PyObject* item;
    try {
      item = list_rec<T>(data + i * stride, t, dim + 1);
    } catch (...) {
      Py_DECREF(list);
      throw;
    }
    if (!item) {
      Py_DECREF(list);
      throw_py();
    }
    PyList_SET_ITEM(list, Py_ssize_t(i), item);
  }
  return list;
}

PyObject* tensor_tolist(const Tensor& t0) {
  Tensor t = t0.is_cpu() ? t0 : t0.to(kCPU);
  capture::host_read("tolist()");
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return list_rec<T>(static_cast<const char*>(t.data_ptr()), t, 0);
  });
}

// ---- numpy ----
static PyObject* numpy_attr(const char* name) {
  static PyObject* np = nullptr;
  if (!np) {
    np = PyImport_ImportModule("numpy");
    if (!np) throw_py();
  }
  PyObject* f = PyObject_GetAttrString(np, name);
  if (!f) throw_py();
  return f;
}

PyObject* tensor_numpy(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"numpy", {"$force"}, 0};
  PyObject* a[1];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& t = unwrap(self);
  bool force = a[0] && to_bool(a[0], "force");
  if (!t.is_cpu()) {
    if (!force)
      throw TypeError(
          "can't convert cuda tensor to numpy. Use Tensor.cpu() to copy the "
          "tensor to host memory first.");
    PyObject* cpu = wrap(t.to(kCPU));
    PyObject* r = tensor_numpy(cpu, nullptr, 0, nullptr);
    Py_DECREF(cpu);
    return r;
  }
  // Through a memoryview: NumPy would call __array__ on the tensor itself.
  PyObject* view = PyMemoryView_FromObject(self);
  if (!view) return nullptr;
  PyObject* asarray = numpy_attr("asarray");
  PyObject* r = PyObject_CallOneArg(asarray, view);
  Py_DECREF(asarray);
  Py_DECREF(view);
  return r;
  FASTT_PY_END
}

PyObject* tensor_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"__array__", {"dtype", "$copy"}, 0};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  PyObject* arr = tensor_numpy(self, nullptr, 0, nullptr);
  if (!arr) return nullptr;
  if (a[0] && a[0] != Py_None) {
    PyObject* r = PyObject_CallMethod(arr, "astype", "O", a[0]);
    Py_DECREF(arr);
    return r;
  }
  if (a[1] && a[1] == Py_True) {
    PyObject* r = PyObject_CallMethod(arr, "copy", nullptr);
    Py_DECREF(arr);
    return r;
  }
  return arr;
  FASTT_PY_END
}

static PyObject* f_from_numpy(PyObject*, PyObject* arr) {
  FASTT_PY_BEGIN
  if (!is_buffer_source(arr) || is_tensor(arr)) {
    PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)",
                 Py_TYPE(arr)->tp_name);
    return nullptr;
  }
  return wrap(tensor_from_buffer(arr));
  FASTT_PY_END
}

Tensor pinned_copy(const Tensor& t);  // cuda.cpp
static PyObject* f_tensor(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{
      "tensor", {"data", "$dtype", "$device", "$requires_grad", "$pin_memory"},
      1};
  PyObject* a[5];
  parse_args(sig, args, nargs, kwnames, a);
  Tensor r = tensor_from_data(a[0], a[1], a[2], true);
  if (given(a[4]) && PyObject_IsTrue(a[4])) r = pinned_copy(r);
  if (given(a[3]) && PyObject_IsTrue(a[3])) fastt::requires_grad_(r, true);
  return wrap(std::move(r));
  FASTT_PY_END
}

static bool given_dtype_or_device(PyObject* dtype, PyObject* device) {
  return (dtype && dtype != Py_None) || (device && device != Py_None);
}

static PyObject* f_as_tensor(PyObject*, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"as_tensor", {"data", "dtype", "device"}, 1};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  if (is_tensor(a[0]) && !given_dtype_or_device(a[1], a[2])) {
    Py_INCREF(a[0]);
    return a[0];
  }
  return wrap(tensor_from_data(a[0], a[1], a[2], false));
  FASTT_PY_END
}

// ---- DLPack ----
namespace {
struct DLPackHolder {
  DLManagedTensor managed;
  DLManagedTensorVersioned versioned;
  Tensor tensor;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
};

void dlpack_deleter(DLManagedTensor* m) {
  delete static_cast<DLPackHolder*>(m->manager_ctx);
}

void dlpack_versioned_deleter(DLManagedTensorVersioned* m) {
  delete static_cast<DLPackHolder*>(m->manager_ctx);
}

void dlpack_versioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor_versioned")) return;
  auto* m = static_cast<DLManagedTensorVersioned*>(
      PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  if (!m) {
    PyErr_Clear();
    return;
  }
  if (m->deleter) m->deleter(m);
}

void dlpack_capsule_destructor(PyObject* capsule) {
  // A consumer renames the capsule to "used_dltensor" and owns it then.
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;
  auto* m = static_cast<DLManagedTensor*>(
      PyCapsule_GetPointer(capsule, "dltensor"));
  if (!m) {
    PyErr_Clear();
    return;
  }
  if (m->deleter) m->deleter(m);
}

DLDataType to_dl_dtype(DType t) {
  DLDataType d;
  d.lanes = 1;
  d.bits = uint8_t(itemsize(t) * 8);
  switch (category(t)) {
    case DTypeCategory::Bool: d.code = kDLBool; break;
    case DTypeCategory::Floating:
      d.code = t == DType::BFloat16 ? kDLBfloat : kDLFloat;
      break;
    case DTypeCategory::Complex: d.code = kDLComplex; break;
    default: d.code = t == DType::UInt8 ? kDLUInt : kDLInt;
  }
  return d;
}

bool from_dl_dtype(DLDataType d, DType* out) {
  if (d.lanes != 1) return false;
  switch (d.code) {
    case kDLBool: *out = DType::Bool; return d.bits == 8;
    case kDLUInt: *out = DType::UInt8; return d.bits == 8;
    case kDLInt:
      switch (d.bits) {
        case 8: *out = DType::Int8; return true;
        case 16: *out = DType::Int16; return true;
        case 32: *out = DType::Int32; return true;
        case 64: *out = DType::Int64; return true;
      }
      return false;
    case kDLFloat:
      switch (d.bits) {
        case 16: *out = DType::Float16; return true;
        case 32: *out = DType::Float32; return true;
        case 64: *out = DType::Float64; return true;
      }
      return false;
    case kDLBfloat: *out = DType::BFloat16; return d.bits == 16;
    case kDLComplex:
      switch (d.bits) {
        case 64: *out = DType::Complex64; return true;
        case 128: *out = DType::Complex128; return true;
      }
      return false;
  }
  return false;
}

void release_dlpack(void* ctx, void*, size_t) {
  auto* m = static_cast<DLManagedTensor*>(ctx);
  if (!m->deleter) return;
  // Producers such as NumPy drop Python references in their deleter.
  if (Py_IsInitialized()) {
    PyGILState_STATE st = PyGILState_Ensure();
    m->deleter(m);
    PyGILState_Release(st);
  } else {
    m->deleter(m);
  }
}
}  // namespace



PyObject* tensor_dlpack(PyObject* self, PyObject* const* args,
                        Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{
      "__dlpack__", {"$stream", "$max_version", "$dl_device", "$copy"}, 0};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  auto* h = new DLPackHolder();
  h->tensor = unwrap(self);
  if (a[3] == Py_True) h->tensor = h->tensor.clone();
  const Tensor& t = h->tensor;
  for (int d = 0; d < t.dim(); ++d) {
    h->shape[d] = t.sizes()[d];
    h->strides[d] = t.strides()[d];
  }
  // A consumer asking for DLPack >= 1.0 gets the versioned struct (which
  // carries the writable flag NumPy honours); others get the legacy one.
  bool versioned = false;
  if (given(a[1]) && PyTuple_Check(a[1]) && PyTuple_GET_SIZE(a[1]) >= 1)
    versioned = to_int(PyTuple_GET_ITEM(a[1], 0), "max_version") >= 1;
  DLTensor& dl = versioned ? h->versioned.dl_tensor : h->managed.dl_tensor;
  capture::host_read("DLPack export");
  dl.data = t.data_ptr();
  dl.device.device_type = t.is_cuda() ? kDLCUDA : kDLCPU;
  dl.device.device_id = t.is_cuda() ? t.device().index : 0;
  dl.ndim = int32_t(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = h->shape;
  dl.strides = h->strides;
  dl.byte_offset = 0;
  PyObject* cap;
  if (versioned) {
    h->versioned.version.major = DLPACK_MAJOR_VERSION;
    h->versioned.version.minor = DLPACK_MINOR_VERSION;
    h->versioned.manager_ctx = h;
    h->versioned.deleter = dlpack_versioned_deleter;
    h->versioned.flags = a[3] == Py_True ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
    cap = PyCapsule_New(&h->versioned, "dltensor_versioned",
                        dlpack_versioned_capsule_destructor);
  } else {
    h->managed.manager_ctx = h;
    h->managed.deleter = dlpack_deleter;
    cap = PyCapsule_New(&h->managed, "dltensor", dlpack_capsule_destructor);
  }
  if (!cap) delete h;
  return cap;
  FASTT_PY_END
}

PyObject* tensor_dlpack_device(PyObject* self, PyObject*) {
  const Tensor& t = unwrap(self);
  return Py_BuildValue("(ii)", t.is_cuda() ? int(kDLCUDA) : int(kDLCPU),
                       t.is_cuda() ? int(t.device().index) : 0);
}

static PyObject* f_from_dlpack(PyObject*, PyObject* obj) {
  FASTT_PY_BEGIN
  if (is_tensor(obj)) {
    Py_INCREF(obj);
    return obj;
  }
  PyObject* cap;
  if (PyCapsule_CheckExact(obj)) {
    cap = obj;
    Py_INCREF(cap);
  } else {
    cap = PyObject_CallMethod(obj, "__dlpack__", nullptr);
    if (!cap) throw_py();
  }
  auto* m =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
  if (!m) {
    Py_DECREF(cap);
    throw_py();
  }
  const DLTensor& dl = m->dl_tensor;
  DType dtype;
  if (!from_dl_dtype(dl.dtype, &dtype)) {
    Py_DECREF(cap);
    throw TypeError(fmt::format(
        "from_dlpack: unsupported DLPack dtype (code {}, bits {}, lanes {})",
        int(dl.dtype.code), int(dl.dtype.bits), int(dl.dtype.lanes)));
  }
  Device device;
  if (dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost)
    device = kCPU;
  else if (dl.device.device_type == kDLCUDA)
    device = Device(DeviceType::CUDA, dl.device.device_id);
  else {
    Py_DECREF(cap);
    throw TypeError(fmt::format("from_dlpack: unsupported device type {}",
                                int(dl.device.device_type)));
  }
  if (dl.ndim > kMaxDims) {
    Py_DECREF(cap);
    throw ValueError(fmt::format("at most {} dims are supported", kMaxDims));
  }
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int64_t extent = 1;
  bool empty = false;
  int64_t running = 1;
  for (int d = dl.ndim - 1; d >= 0; --d) {
    sizes[d] = dl.shape[d];
    strides[d] = dl.strides ? dl.strides[d] : running;
    running *= sizes[d];
    if (sizes[d] == 0) empty = true;
    if (strides[d] < 0) {
      Py_DECREF(cap);
      throw ValueError("from_dlpack: negative strides are not supported");
    }
    extent += (sizes[d] - 1) * strides[d];
  }
  size_t isz = itemsize(dtype);
  char* data = static_cast<char*>(dl.data) + dl.byte_offset;
  PyCapsule_SetName(cap, "used_dltensor");
  Py_DECREF(cap);
  Storage* s = Storage::wrap(data, empty ? 0 : size_t(extent) * isz, device,
                             release_dlpack, m);
  Tensor t;
  try {
    t = Tensor::from_storage(s, {sizes, size_t(dl.ndim)},
                             {strides, size_t(dl.ndim)}, 0, dtype);
  } catch (...) {
    s->decref();
    throw;
  }
  s->decref();
  return wrap(std::move(t));
  FASTT_PY_END
}

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}

PyMethodDef g_convert_functions[] = {
    FASTT_KW("tensor", f_tensor),
    FASTT_KW("as_tensor", f_as_tensor),
    {"from_numpy", f_from_numpy, METH_O, nullptr},
    {"from_dlpack", f_from_dlpack, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace py
}  // namespace fastt

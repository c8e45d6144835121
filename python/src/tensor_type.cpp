// fastt._C.Tensor: a hand-written CPython type holding a fastt::Tensor
// inline, with a free list of objects and direct number/mapping slots, so
// `a + b` costs one slot call, one fastt::add and one object from the list.
// Add an operator by adding a slot below; methods live in ops.cpp.
#include <algorithm>
#include <new>

#include "common.h"
#include "csrc/ops/complex.h"
#include "csrc/ops/elementwise.h"

namespace fastt {
namespace py {

// ---- Allocation: a free list of exact-Tensor objects ----
TensorObject* g_free_list[kFreeListMax];
int g_free_count = 0;

PyObject* wrap_slow(Tensor&& t) {
  auto* o = static_cast<TensorObject*>(PyObject_Malloc(sizeof(TensorObject)));
  if (!o) return PyErr_NoMemory();
  PyObject_Init(reinterpret_cast<PyObject*>(o), &TensorType);
  new (&o->t) Tensor(std::move(t));
  o->weakrefs = nullptr;
  return reinterpret_cast<PyObject*>(o);
}

static void tensor_dealloc(PyObject* self) {
  auto* o = reinterpret_cast<TensorObject*>(self);
  if (o->weakrefs) PyObject_ClearWeakRefs(self);
  o->t.~Tensor();
  if (Py_TYPE(self) == &TensorType && g_free_count < kFreeListMax) {
    g_free_list[g_free_count++] = o;
    return;
  }
  Py_TYPE(self)->tp_free(self);
}

// torch's legacy constructors (torch.Tensor, torch.FloatTensor, ...):
// () -> empty; (*sizes) or (Size) -> uninitialised; (tensor) -> an alias,
// which must already have `dtype`; (data) -> a copy of data in `dtype`.
Tensor legacy_new(DType dtype, Device device, PyObject* args,
                  const char* name) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject* first = n ? PyTuple_GET_ITEM(args, 0) : nullptr;
  if (n == 0) return Tensor::empty({0}, dtype, device);
  if (n == 1 && is_tensor(first)) {
    const Tensor& t = unwrap(first);
    FASTT_CHECK(t.dtype() == dtype && t.device() == device, TypeError,
                "{}(): expected a tensor of dtype {} on {} (got {} on {}); "
                "use .to() to convert",
                name, dtype_name(dtype), device.str(), dtype_name(t.dtype()),
                t.device().str());
    return t.alias();
  }
  if (n == 1 && !PyLong_Check(first) && !PyObject_TypeCheck(first, &SizeType)) {
    PyObject* dt = dtype_object(dtype);
    Tensor t;
    try {
      t = tensor_from_data(first, dt, Py_None, true);
    } catch (...) {
      Py_DECREF(dt);
      throw;
    }
    Py_DECREF(dt);
    return device.is_cuda() ? t.to(device) : t;
  }
  SmallInts sizes;
  if (n == 1 && PyObject_TypeCheck(first, &SizeType))
    parse_ints(first, &sizes, name);
  else
    parse_varargs_ints(&PyTuple_GET_ITEM(args, 0), n, &sizes, name);
  return Tensor::empty(sizes.list(), dtype, device);
}

// Tensor(...): the legacy constructor with the default dtype.
static PyObject* tensor_new(PyTypeObject* type, PyObject* args,
                            PyObject* kwargs) {
  FASTT_PY_BEGIN
  Tensor t = legacy_new(default_dtype(), Device(kCPU), args, "Tensor");
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  auto* o = reinterpret_cast<TensorObject*>(self);
  new (&o->t) Tensor(std::move(t));
  o->weakrefs = nullptr;
  return self;
  FASTT_PY_END
}

// ---- Binary operators: tensor op tensor, tensor op number, number op
// tensor (reflected). Anything else returns NotImplemented. ----
// NumPy arrays (buffer objects) take part in operators as tensors that
// share their memory, as torch does; Tensor.__array_priority__ makes NumPy
// defer `ndarray op tensor` to these reflected slots.
static bool is_array_operand(PyObject* o) {
  return PyObject_CheckBuffer(o) && !PyBytes_Check(o) &&
         !PyByteArray_Check(o) && !PyMemoryView_Check(o);
}
static Tensor array_operand(PyObject* o) {
  return tensor_from_data(o, nullptr, nullptr, false);
}

static inline int64_t max_numel(const Tensor& a, const Tensor& b) {
  return std::max(a.numel(), b.numel());
}

#define FASTT_BINARY_SLOT(slot, fn)                                         \
  static PyObject* slot(PyObject* a, PyObject* b) {                        \
    FASTT_PY_BEGIN                                                          \
    Scalar s;                                                               \
    int ka = classify_operand(a, &s);                                       \
    if (ka == kOperandTensor) {                                             \
      const Tensor& ta = unwrap(a);                                         \
      int kb = classify_operand(b, &s);                                     \
      if (kb == kOperandTensor) {                                           \
        const Tensor& tb = unwrap(b);                                       \
        return wrap(maybe_release_gil(max_numel(ta, tb),                    \
                                      [&] { return fastt::fn(ta, tb); }));  \
      }                                                                     \
      if (kb == kOperandScalar)                                             \
        return wrap(maybe_release_gil(ta.numel(),                           \
                                      [&] { return fastt::fn(ta, s); }));   \
      if (!is_array_operand(b)) Py_RETURN_NOTIMPLEMENTED;                   \
      return wrap(fastt::fn(ta, array_operand(b)));                         \
    }                                                                       \
    if (ka == kOperandScalar && is_tensor(b)) {                             \
      const Tensor& tb = unwrap(b);                                         \
      return wrap(maybe_release_gil(tb.numel(),                             \
                                    [&] { return fastt::fn(s, tb); }));     \
    }                                                                       \
    if (is_array_operand(a) && is_tensor(b))                                \
      return wrap(fastt::fn(array_operand(a), unwrap(b)));                  \
    Py_RETURN_NOTIMPLEMENTED;                                               \
    FASTT_PY_END                                                            \
  }

#define FASTT_INPLACE_SLOT(slot, fn)                                        \
  static PyObject* slot(PyObject* a, PyObject* b) {                        \
    FASTT_PY_BEGIN                                                          \
    Scalar s;                                                               \
    if (!is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;                            \
    Tensor& ta = unwrap_mut(a);                                             \
    int kb = classify_operand(b, &s);                                       \
    if (kb == kOperandTensor) {                                             \
      const Tensor& tb = unwrap(b);                                         \
      maybe_release_gil(max_numel(ta, tb),                                  \
                        [&]() -> Tensor& { return fastt::fn(ta, tb); });    \
    } else if (kb == kOperandScalar) {                                      \
      maybe_release_gil(ta.numel(),                                         \
                        [&]() -> Tensor& { return fastt::fn(ta, s); });     \
    } else if (is_array_operand(b)) {                                       \
      fastt::fn(ta, array_operand(b));                                      \
    } else {                                                                \
      Py_RETURN_NOTIMPLEMENTED;                                             \
    }                                                                       \
    Py_INCREF(a);                                                           \
    return a;                                                               \
    FASTT_PY_END                                                            \
  }

FASTT_BINARY_SLOT(nb_add, add)
FASTT_BINARY_SLOT(nb_sub, sub)
FASTT_BINARY_SLOT(nb_mul, mul)
FASTT_BINARY_SLOT(nb_truediv, div)
FASTT_BINARY_SLOT(nb_floordiv, floor_divide)
FASTT_BINARY_SLOT(nb_rem, remainder)
FASTT_BINARY_SLOT(nb_pow2, pow)
FASTT_BINARY_SLOT(nb_and, bitwise_and)
FASTT_BINARY_SLOT(nb_or, bitwise_or)
FASTT_BINARY_SLOT(nb_xor, bitwise_xor)
FASTT_BINARY_SLOT(nb_lshift, bitwise_left_shift)
FASTT_BINARY_SLOT(nb_rshift, bitwise_right_shift)
FASTT_INPLACE_SLOT(nb_iadd, add_)
FASTT_INPLACE_SLOT(nb_isub, sub_)
FASTT_INPLACE_SLOT(nb_imul, mul_)
FASTT_INPLACE_SLOT(nb_itruediv, div_)
FASTT_INPLACE_SLOT(nb_ifloordiv, floor_divide_)
FASTT_INPLACE_SLOT(nb_irem, remainder_)
FASTT_INPLACE_SLOT(nb_ipow2, pow_)
FASTT_INPLACE_SLOT(nb_iand, bitwise_and_)
FASTT_INPLACE_SLOT(nb_ior, bitwise_or_)
FASTT_INPLACE_SLOT(nb_ixor, bitwise_xor_)
FASTT_INPLACE_SLOT(nb_ilshift, bitwise_left_shift_)
FASTT_INPLACE_SLOT(nb_irshift, bitwise_right_shift_)

static PyObject* nb_pow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) {
    PyErr_SetString(PyExc_TypeError,
                    "pow() with a modulus is not supported for tensors");
    return nullptr;
  }
  return nb_pow2(a, b);
}
static PyObject* nb_ipow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) {
    PyErr_SetString(PyExc_TypeError,
                    "pow() with a modulus is not supported for tensors");
    return nullptr;
  }
  return nb_ipow2(a, b);
}

// @ and @= live with the other linalg bindings (linalg.cpp).
PyObject* tensor_matmul(PyObject* a, PyObject* b);
PyObject* tensor_imatmul(PyObject* a, PyObject* b);

#define FASTT_UNARY_SLOT(slot, fn)                                     \
  static PyObject* slot(PyObject* a) {                                 \
    FASTT_PY_BEGIN                                                     \
    const Tensor& t = unwrap(a);                                       \
    return wrap(maybe_release_gil(t.numel(),                           \
                                  [&] { return fastt::fn(t); }));      \
    FASTT_PY_END                                                       \
  }
FASTT_UNARY_SLOT(nb_neg, neg)
FASTT_UNARY_SLOT(nb_abs, abs)
// torch: ~ on a floating tensor is a TypeError, not a missing kernel.
static PyObject* nb_invert(PyObject* a) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(a);
  if (t.is_floating_point()) {
    PyErr_SetString(PyExc_TypeError,
                    "~ (operator.invert) is only implemented on integer and "
                    "Boolean-type tensors");
    return nullptr;
  }
  return wrap(maybe_release_gil(t.numel(),
                                [&] { return fastt::bitwise_not(t); }));
  FASTT_PY_END
}

static PyObject* nb_pos(PyObject* a) {
  Py_INCREF(a);
  return a;
}

static int nb_bool(PyObject* a) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(a);
  if (t.numel() != 1) {
    PyErr_SetString(PyExc_RuntimeError,
                    t.numel() == 0
                        ? "Boolean value of Tensor with no values is ambiguous"
                        : "Boolean value of Tensor with more than one value "
                          "is ambiguous");
    return -1;
  }
  return t.item().to_bool() ? 1 : 0;
  FASTT_PY_END_INT
}

static bool check_one_element(const Tensor& t) {
  if (t.numel() == 1) return true;
  PyErr_SetString(PyExc_ValueError,
                  "only one element tensors can be converted to Python "
                  "scalars");
  return false;
}

static PyObject* nb_int(PyObject* a) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(a);
  if (!check_one_element(t)) return nullptr;
  Scalar s = t.item();
  FASTT_CHECK(!s.is_complex() || s.imag() == 0.0, RuntimeError,
              "value cannot be converted to type int64_t without overflow");
  if (s.is_floating() || s.is_complex())
    return PyLong_FromDouble(s.to_double());
  return PyLong_FromLongLong(s.to_int());
  FASTT_PY_END
}

static PyObject* nb_float(PyObject* a) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(a);
  if (!check_one_element(t)) return nullptr;
  Scalar s = t.item();
  FASTT_CHECK(!s.is_complex() || s.imag() == 0.0, RuntimeError,
              "value cannot be converted to type double without overflow");
  return PyFloat_FromDouble(s.to_double());
  FASTT_PY_END
}

static PyObject* nb_index(PyObject* a) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(a);
  if (t.numel() != 1 || !is_integral(t.dtype(), true)) {
    PyErr_SetString(PyExc_TypeError,
                    "only integer tensors of a single element can be "
                    "converted to an index");
    return nullptr;
  }
  return PyLong_FromLongLong(t.item().to_int());
  FASTT_PY_END
}

static PyNumberMethods g_number_methods = [] {
  PyNumberMethods m{};
  m.nb_add = nb_add;
  m.nb_subtract = nb_sub;
  m.nb_multiply = nb_mul;
  m.nb_remainder = nb_rem;
  m.nb_power = nb_pow;
  m.nb_negative = nb_neg;
  m.nb_positive = nb_pos;
  m.nb_absolute = nb_abs;
  m.nb_bool = nb_bool;
  m.nb_invert = nb_invert;
  m.nb_and = nb_and;
  m.nb_xor = nb_xor;
  m.nb_or = nb_or;
  m.nb_lshift = nb_lshift;
  m.nb_rshift = nb_rshift;
  m.nb_int = nb_int;
  m.nb_float = nb_float;
  m.nb_inplace_add = nb_iadd;
  m.nb_inplace_subtract = nb_isub;
  m.nb_inplace_multiply = nb_imul;
  m.nb_inplace_remainder = nb_irem;
  m.nb_inplace_power = nb_ipow;
  m.nb_inplace_and = nb_iand;
  m.nb_inplace_xor = nb_ixor;
  m.nb_inplace_or = nb_ior;
  m.nb_inplace_lshift = nb_ilshift;
  m.nb_inplace_rshift = nb_irshift;
  m.nb_floor_divide = nb_floordiv;
  m.nb_true_divide = nb_truediv;
  m.nb_inplace_floor_divide = nb_ifloordiv;
  m.nb_inplace_true_divide = nb_itruediv;
  m.nb_index = nb_index;
  m.nb_matrix_multiply = tensor_matmul;
  m.nb_inplace_matrix_multiply = tensor_imatmul;
  return m;
}();

// ---- Comparisons ----
static PyObject* tensor_richcompare(PyObject* a, PyObject* b, int op) {
  FASTT_PY_BEGIN
  // Python swaps operands for reflected comparisons, so `a` is a tensor
  // unless b's type is a Tensor subclass; both cases are handled.
  PyObject* self = a;
  PyObject* other = b;
  if (!is_tensor(a)) {
    std::swap(self, other);
    static const int kSwap[] = {Py_GT, Py_GE, Py_EQ, Py_NE, Py_LT, Py_LE};
    op = kSwap[op];
  }
  const Tensor& t = unwrap(self);
  Scalar s;
  int kind = classify_operand(other, &s);
  Tensor other_t;
  if (kind == kOperandTensor) {
    other_t = unwrap(other);
  } else if (kind == kOperandOther) {
    if (!is_array_operand(other)) Py_RETURN_NOTIMPLEMENTED;
    other_t = array_operand(other);
  }
  bool is_t = other_t.defined();
  Tensor r;
  switch (op) {
#define FASTT_CMP(PYOP, fn)                                          \
  case PYOP:                                                         \
    r = is_t ? fastt::fn(t, other_t) : fastt::fn(t, s);              \
    break;
    FASTT_CMP(Py_LT, lt)
    FASTT_CMP(Py_LE, le)
    FASTT_CMP(Py_EQ, eq)
    FASTT_CMP(Py_NE, ne)
    FASTT_CMP(Py_GT, gt)
    FASTT_CMP(Py_GE, ge)
#undef FASTT_CMP
    default:
      Py_RETURN_NOTIMPLEMENTED;
  }
  return wrap(std::move(r));
  FASTT_PY_END
}

// Identity hash, like torch (tensors are usable as dict keys).
static Py_hash_t tensor_hash(PyObject* self) {
  Py_hash_t h = static_cast<Py_hash_t>(reinterpret_cast<uintptr_t>(self) >> 4);
  return h == -1 ? -2 : h;
}

// ---- Sequence-like behaviour ----
static Py_ssize_t tensor_len(PyObject* self) {
  const Tensor& t = unwrap(self);
  if (t.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return Py_ssize_t(t.size(0));
}

static PyObject* tensor_iter(PyObject* self) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  if (t.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
    return nullptr;
  }
  int64_t n = t.size(0);
  PyObject* list = PyList_New(Py_ssize_t(n));
  if (!list) return nullptr;
  for (int64_t i = 0; i < n; ++i) {
    PyObject* item = wrap(t.select(0, i));
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, Py_ssize_t(i), item);
  }
  PyObject* it = PyObject_GetIter(list);
  Py_DECREF(list);
  return it;
  FASTT_PY_END
}

static PyObject* tensor_repr(PyObject* self) {
  FASTT_PY_BEGIN
  std::string s = unwrap(self).str();
  return PyUnicode_FromStringAndSize(s.data(), Py_ssize_t(s.size()));
  FASTT_PY_END
}

static PyMappingMethods g_mapping_methods = {tensor_len, tensor_getitem,
                                             tensor_setitem};
static PySequenceMethods g_sequence_methods = [] {
  PySequenceMethods m{};
  m.sq_length = tensor_len;
  return m;
}();
static PyBufferProcs g_buffer_procs = {tensor_getbuffer,
                                    tensor_releasebuffer};

// ---- Properties ----
static PyObject* get_shape(PyObject* self, void*) {
  FASTT_PY_BEGIN
  return make_size(unwrap(self).sizes());
  FASTT_PY_END
}
static PyObject* get_dtype(PyObject* self, void*) {
  return dtype_object(unwrap(self).dtype());
}
static PyObject* get_device(PyObject* self, void*) {
  return device_object(unwrap(self).device());
}
static PyObject* get_ndim(PyObject* self, void*) {
  return PyLong_FromLongLong(unwrap(self).dim());
}
static PyObject* get_T(PyObject* self, void*) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  if (t.dim() <= 2) return wrap(t.t());
  SmallInts dims;
  dims.n = int(t.dim());
  for (int i = 0; i < dims.n; ++i) dims.v[i] = dims.n - 1 - i;
  return wrap(t.permute(dims.list()));
  FASTT_PY_END
}
static PyObject* get_mT(PyObject* self, void*) {
  FASTT_PY_BEGIN
  return wrap(unwrap(self).mT());
  FASTT_PY_END
}
// The conjugate transposes: views for the reals, copies (conj_physical,
// recorded) for complex tensors (fastt has no lazy conjugate bit).
static PyObject* get_H(PyObject* self, void*) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  FASTT_CHECK(t.dim() == 2 || t.dim() == 0, RuntimeError,
              "tensor.H is only supported on matrices (2-D tensors). Got "
              "{}-D tensor. For batches of matrices, consider using "
              "tensor.mH", t.dim());
  return wrap(conj_physical(t.t()));
  FASTT_PY_END
}
static PyObject* get_mH(PyObject* self, void*) {
  FASTT_PY_BEGIN
  return wrap(adjoint(unwrap(self)));
  FASTT_PY_END
}
static PyObject* get_is_cuda(PyObject* self, void*) {
  return PyBool_FromLong(unwrap(self).is_cuda());
}
static PyObject* get_is_cpu(PyObject* self, void*) {
  return PyBool_FromLong(unwrap(self).is_cpu());
}
static PyObject* get_itemsize(PyObject* self, void*) {
  return PyLong_FromSize_t(unwrap(self).itemsize());
}
static PyObject* get_nbytes(PyObject* self, void*) {
  return PyLong_FromSize_t(unwrap(self).nbytes());
}
static PyGetSetDef g_getset[] = {
    {"shape", get_shape, nullptr, "The sizes as a fastt.Size.", nullptr},
    {"dtype", get_dtype, nullptr, "The element type.", nullptr},
    {"device", get_device, nullptr, "Where the data lives.", nullptr},
    {"ndim", get_ndim, nullptr, "Number of dimensions.", nullptr},
    {"T", get_T, nullptr, "All dims reversed.", nullptr},
    {"mT", get_mT, nullptr, "Last two dims transposed.", nullptr},
    {"H", get_H, nullptr, "Conjugate transpose of a matrix.", nullptr},
    {"mH", get_mH, nullptr, "Conjugate transpose of the last two dims.",
     nullptr},
    {"requires_grad", get_requires_grad, set_requires_grad,
     "Whether autograd records ops on this tensor.", nullptr},
    {"grad", get_grad, set_grad, "The accumulated gradient (or None).",
     nullptr},
    {"grad_fn", get_grad_fn, nullptr, "The node that made this tensor.",
     nullptr},
    {"is_leaf", get_is_leaf, nullptr, "True unless made by a recorded op.",
     nullptr},
    {"retains_grad", get_retains_grad, nullptr, nullptr, nullptr},
    {"_version", get_version, nullptr, "In-place modification counter.",
     nullptr},
    {"_base", get_base, nullptr, "The tensor a view looks into.", nullptr},
    {"is_cuda", get_is_cuda, nullptr, nullptr, nullptr},
    {"is_cpu", get_is_cpu, nullptr, nullptr, nullptr},
    {"itemsize", get_itemsize, nullptr, nullptr, nullptr},
    {"nbytes", get_nbytes, nullptr, nullptr, nullptr},
    {"data", get_data, set_data, "A new tensor sharing this data.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject TensorType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt.Tensor";
  t.tp_basicsize = sizeof(TensorObject);
  t.tp_dealloc = tensor_dealloc;
  t.tp_repr = tensor_repr;
  t.tp_str = tensor_repr;
  t.tp_as_number = &g_number_methods;
  t.tp_as_sequence = &g_sequence_methods;
  t.tp_as_mapping = &g_mapping_methods;
  t.tp_as_buffer = &g_buffer_procs;
  t.tp_hash = tensor_hash;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t.tp_doc = "A strided n-dimensional array (fastt's torch.Tensor).";
  t.tp_richcompare = tensor_richcompare;
  t.tp_weaklistoffset = offsetof(TensorObject, weakrefs);
  t.tp_iter = tensor_iter;
  t.tp_methods = g_tensor_methods;
  t.tp_getset = g_getset;
  t.tp_new = tensor_new;
  return t;
}();

}  // namespace py
}  // namespace fastt

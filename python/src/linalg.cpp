// Bindings of csrc/ops/linalg.h (matmul, mm, bmm, addmm, baddbmm, dot, mv,
// outer, linear) and the @ / @= operators.
#include "common.h"

#include "csrc/ops/linalg.h"
#ifdef FASTT_WITH_CUDA
#include "kernels/cuda/blas.h"
#endif

namespace fastt {
namespace py {

// The Tensor type's @ and @= slots (tensor_type.cpp installs them).
PyObject* tensor_matmul(PyObject* a, PyObject* b) {
  FASTT_PY_BEGIN
  if (!is_tensor(a) || !is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
  const Tensor& x = unwrap(a);
  const Tensor& y = unwrap(b);
  return wrap(maybe_release_gil(std::max(x.numel(), y.numel()),
                                [&] { return fastt::matmul(x, y); }));
  FASTT_PY_END
}
PyObject* tensor_imatmul(PyObject* a, PyObject* b) {
  FASTT_PY_BEGIN
  if (!is_tensor(a) || !is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
  Tensor r = fastt::matmul(unwrap(a), unwrap(b));
  Tensor& x = unwrap_mut(a);
  FASTT_CHECK(r.sizes().equals(x.sizes()), RuntimeError,
              "matmul_: result shape {} does not match self {}",
              shape_str(r.sizes()), shape_str(x.sizes()));
  x.copy_(r);
  Py_INCREF(a);
  return a;
  FASTT_PY_END
}


#define FASTT_BIND_PAIR(name)                                              \
  static PyObject* m_##name(PyObject* self, PyObject* const* args,        \
                            Py_ssize_t nargs, PyObject* kwnames) {        \
    FASTT_PY_BEGIN                                                         \
    const Tensor& t = to_tensor(self, "input");                            \
    static const Signature sig{#name, {"other", "$out"}, 1};               \
    PyObject* a[2] = {nargs == 1 ? args[0] : nullptr, nullptr};            \
    if (nargs != 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);   \
    const Tensor& o = to_tensor(a[0], "other");                            \
    Tensor r = maybe_release_gil(std::max(t.numel(), o.numel()),           \
                                 [&] { return fastt::name(t, o); });       \
    if (given(a[1])) return store_out(a[1], r, #name);                     \
    return wrap(std::move(r));                                             \
    FASTT_PY_END                                                           \
  }                                                                        \
  FASTT_FN(name)
FASTT_BIND_PAIR(matmul)
FASTT_BIND_PAIR(mm)
FASTT_BIND_PAIR(bmm)
FASTT_BIND_PAIR(dot)
FASTT_BIND_PAIR(mv)
FASTT_BIND_PAIR(outer)

#define FASTT_BIND_ADDMM(name, a1, a2)                                     \
  static PyObject* m_##name(PyObject* self, PyObject* const* args,        \
                            Py_ssize_t nargs, PyObject* kwnames) {        \
    FASTT_PY_BEGIN                                                         \
    const Tensor& t = to_tensor(self, "input");                            \
    static const Signature sig{#name, {a1, a2, "$beta", "$alpha"}, 2};     \
    PyObject* a[4];                                                        \
    parse_args(sig, args, nargs, kwnames, a);                              \
    Scalar beta = given(a[2]) ? to_scalar(a[2], "beta") : Scalar(1);       \
    Scalar alpha = given(a[3]) ? to_scalar(a[3], "alpha") : Scalar(1);     \
    return wrap(fastt::name(t, to_tensor(a[0], a1), to_tensor(a[1], a2),   \
                            beta, alpha));                                 \
    FASTT_PY_END                                                           \
  }                                                                        \
  FASTT_FN(name)
FASTT_BIND_ADDMM(addmm, "mat1", "mat2")
FASTT_BIND_ADDMM(baddbmm, "batch1", "batch2")

static PyObject* f_linear(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"linear", {"input", "weight", "bias"}, 2};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  Tensor bias = given(a[2]) ? to_tensor(a[2], "bias") : Tensor();
  return wrap(fastt::linear(to_tensor(a[0], "input"),
                            to_tensor(a[1], "weight"), bias));
  FASTT_PY_END
}

// fastt.backends.cuda.matmul.allow_tf32 (argument 0) and
// fastt.backends.cudnn.allow_tf32 (1); always False without CUDA.
#ifdef FASTT_WITH_CUDA
static bool& tf32_switch(long which) {
  return which == 1 ? cuda::cudnn_allow_tf32() : cuda::allow_tf32();
}
#endif
// 0: matmul, 1: cudnn; -1 with a Python error set for anything else.
static long tf32_which(PyObject* o) {
  const long w = PyLong_Check(o) ? PyLong_AsLong(o) : -1;
  if (w != 0 && w != 1 && !PyErr_Occurred())
    PyErr_SetString(PyExc_ValueError, "allow_tf32: switch must be 0 or 1");
  return w == 0 || w == 1 ? w : -1;
}
PyObject* get_allow_tf32(PyObject*, PyObject* o) {
  const long which = tf32_which(o);
  if (which < 0) return nullptr;
#ifdef FASTT_WITH_CUDA
  return PyBool_FromLong(tf32_switch(which));
#else
  Py_RETURN_FALSE;
#endif
}
PyObject* set_allow_tf32(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "_set_allow_tf32(which, value)");
    return nullptr;
  }
  const long which = tf32_which(args[0]);
  if (which < 0) return nullptr;
  int b = PyObject_IsTrue(args[1]);
  if (b < 0) return nullptr;
#ifdef FASTT_WITH_CUDA
  tf32_switch(which) = b != 0;
#endif
  Py_RETURN_NONE;
}

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}
#define FASTT_LINALG_OPS(X) \
  X(matmul) X(mm) X(bmm) X(dot) X(mv) X(outer) X(addmm) X(baddbmm)
#define FASTT_M(name) FASTT_KW(#name, m_##name),
#define FASTT_F(name) FASTT_KW(#name, f_##name),

PyMethodDef g_linalg_methods[] = {
    FASTT_LINALG_OPS(FASTT_M) FASTT_KW("ger", m_outer),
    {nullptr, nullptr, 0, nullptr}};
PyMethodDef g_linalg_functions[] = {
    FASTT_LINALG_OPS(FASTT_F) FASTT_KW("ger", f_outer),
    FASTT_KW("linear", f_linear),
    {"_get_allow_tf32", get_allow_tf32, METH_O, nullptr},
    {"_set_allow_tf32",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(set_allow_tf32)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

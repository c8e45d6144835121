// Bindings of csrc/ops/linalg.h (matmul, mm, bmm, addmm, baddbmm, dot, mv,
// outer, linear) and the @ / @= operators.
#include "binder.h"

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


// matmul, mm, ...: (other, *, out=None)
#define FASTT_BIND_PAIR(name)                                             \
  FASTT_BIND(name, 1,                                                     \
             with_out(out,                                                \
                      maybe_release_gil(                                  \
                          std::max(t.numel(), other.numel()),             \
                          [&] { return fastt::name(t, other); }),         \
                      #name),                                             \
             (Tensor, other), (Kw<Out>, out))
FASTT_BIND_PAIR(matmul)
FASTT_BIND_PAIR(mm)
FASTT_BIND_PAIR(bmm)
FASTT_BIND_PAIR(dot)
FASTT_BIND_PAIR(mv)
FASTT_BIND_PAIR(outer)
#undef FASTT_BIND_PAIR

FASTT_BIND(addmm, 2, fastt::addmm(t, mat1, mat2, beta, alpha),
           (Tensor, mat1), (Tensor, mat2), (Kw<ScalarOr<1>>, beta),
           (Kw<ScalarOr<1>>, alpha))
FASTT_BIND(baddbmm, 2, fastt::baddbmm(t, batch1, batch2, beta, alpha),
           (Tensor, batch1), (Tensor, batch2), (Kw<ScalarOr<1>>, beta),
           (Kw<ScalarOr<1>>, alpha))
FASTT_BIND(addmv, 2, fastt::addmv(t, mat, vec, beta, alpha), (Tensor, mat),
           (Tensor, vec), (Kw<ScalarOr<1>>, beta), (Kw<ScalarOr<1>>, alpha))
FASTT_BIND(addr, 2, fastt::addr(t, vec1, vec2, beta, alpha), (Tensor, vec1),
           (Tensor, vec2), (Kw<ScalarOr<1>>, beta), (Kw<ScalarOr<1>>, alpha))
FASTT_BIND(addbmm, 2, fastt::addbmm(t, batch1, batch2, beta, alpha),
           (Tensor, batch1), (Tensor, batch2), (Kw<ScalarOr<1>>, beta),
           (Kw<ScalarOr<1>>, alpha))
FASTT_BIND(vdot, 1, with_out(out, fastt::vdot(t, other), "vdot"),
           (Tensor, other), (Kw<Out>, out))
// The in-place forms: self takes the result, which must have self's shape
// (torch does not broadcast self in place; addbmm_, which resizes self as
// torch's, is python/fastt/_composite.py's).
static Tensor& into_self(Tensor& self, Tensor&& r, const char* op) {
  FASTT_CHECK(r.sizes().equals(self.sizes()), RuntimeError,
              "{}: output with shape {} doesn't match the broadcast shape {}",
              op, shape_str(self.sizes()), shape_str(r.sizes()));
  return self.copy_(r);
}
#define FASTT_BIND_ADD_PRODUCT_(name, a, b)                                 \
  FASTT_BIND_METHOD(name##_, 2,                                             \
                    into_self(tm, fastt::name(t, a, b, beta, alpha),        \
                              #name "_"),                                   \
                    (Tensor, a), (Tensor, b), (Kw<ScalarOr<1>>, beta),      \
                    (Kw<ScalarOr<1>>, alpha))
FASTT_BIND_ADD_PRODUCT_(addmm, mat1, mat2)
FASTT_BIND_ADD_PRODUCT_(baddbmm, batch1, batch2)
FASTT_BIND_ADD_PRODUCT_(addmv, mat, vec)
FASTT_BIND_ADD_PRODUCT_(addr, vec1, vec2)
#undef FASTT_BIND_ADD_PRODUCT_
FASTT_BIND_FUNCTION(linear, 2, fastt::linear(input, weight, bias),
                    (Tensor, input), (Tensor, weight), (OptTensor, bias))

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

#define FASTT_M(name) FASTT_KW(#name, m_##name),
#define FASTT_F(name) FASTT_KW(#name, f_##name),

PyMethodDef g_linalg_methods[] = {
    FASTT_LINALG_OPS(FASTT_M) FASTT_KW("ger", m_outer),
    {nullptr, nullptr, 0, nullptr}};
PyMethodDef g_linalg_functions[] = {
    FASTT_LINALG_OPS(FASTT_F) FASTT_KW("ger", f_outer),
    {"_get_allow_tf32", get_allow_tf32, METH_O, nullptr},
    {"_set_allow_tf32",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(set_allow_tf32)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

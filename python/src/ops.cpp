// Tensor methods and the matching fastt.* functions. The elementwise rows
// (csrc/ops/elementwise.def) are bound from their python column; other
// regular ops are binder rows (binder.h), which register their method and
// function themselves. The irregular rest is written once as a method body
// m_<name>(self, args...), FASTT_FN making the function form (fastt.f(input,
// ...) == input.f(...)), and listed in g_tensor_methods and, when torch has
// the function, g_module_functions.
#include <cstring>

#include "binder.h"
#include "csrc/capture.h"
#include "csrc/dispatch.h"
#include "csrc/generator.h"
#include "csrc/ops/elementwise.h"
#include "csrc/ops/factory.h"
#include "csrc/ops/out.h"
#include "csrc/parallel.h"
#include "kernels/cpu/onednn_conv.h"
#include "kernels/cpu/onednn_matmul.h"
#include "kernels/cpu/cpu_isa.h"

namespace fastt {
namespace py {


static inline Tensor& out_tensor(PyObject* o) {
  return unwrap_mut(const_cast<PyObject*>(o));
}
// out= given as an empty tensor takes the result's shape (torch resizes it
// without a warning, csrc/ops/out.h); other mismatches stay errors of the
// core _out op.
static inline Tensor& out_resized(PyObject* o, IntList shape) {
  return fastt::resize_out(out_tensor(o), shape);
}
static inline Tensor& out_broadcast(PyObject* o, const Tensor& a,
                                    const Tensor& b, const char* op) {
  return fastt::resize_out(out_tensor(o), a, b, op);
}

// ---- Unary elementwise: name(), name_(), name(out=) ----
#define FASTT_BIND_UNARY_OUT(name)                                              \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    if (FASTT_LIKELY(nargs == 0 && !kwnames))                               \
      return wrap(maybe_release_gil(t.numel(),                              \
                                    [&] { return fastt::name(t); }));       \
    static const Signature sig{#name, {"$out"}, 0};                         \
    PyObject* a[1];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    if (given(a[0])) {                                                      \
      to_tensor(a[0], "out");                                               \
      maybe_release_gil(t.numel(), [&]() -> Tensor& {                       \
        return fastt::name##_out(out_resized(a[0], t.sizes()), t);          \
      });                                                                   \
      return return_self(a[0]);                                             \
    }                                                                       \
    return wrap(fastt::name(t));                                            \
    FASTT_PY_END                                                            \
  }

// PyPlain rows: no out= (torch's isnan, isinf, isfinite).
#define FASTT_BIND_UNARY_PLAIN(name)                                        \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    if (FASTT_UNLIKELY(nargs != 0 || kwnames)) {                            \
      static const Signature sig{#name, {}, 0};                             \
      PyObject* none[1];                                                    \
      parse_args(sig, args, nargs, kwnames, none);                          \
    }                                                                       \
    return wrap(maybe_release_gil(t.numel(),                                \
                                  [&] { return fastt::name(t); }));         \
    FASTT_PY_END                                                            \
  }
#define FASTT_BIND_UNARY_INPLACE(name)                                     \
  FASTT_METHOD(name##_) {                                                   \
    FASTT_PY_BEGIN                                                          \
    to_tensor(self, "input");                                               \
    Tensor& t = unwrap_mut(self);                                           \
    maybe_release_gil(t.numel(),                                            \
                      [&]() -> Tensor& { return fastt::name##_(t); });      \
    return return_self(self);                                               \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name##_)

// ---- Binary elementwise: name(other, *, out=), name_(other) ----
// number_ok: `other` may be a Python number (false: torch's ops with no
// Scalar overload, the python kinds ending in T, raise TypeError).
[[noreturn]] static void throw_other_not_tensor(const char* op, PyObject* o) {
  throw TypeError(fmt::format(
      "{}(): argument 'other' (position 1) must be Tensor, not {}", op,
      Py_TYPE(o)->tp_name));
}
// out= with a Python number `s` (null otherwise): the op's (out, tensor,
// Scalar) overload where it has one (pow: torch's Tensor_Scalar_out, with
// its fast paths), else `b`, the number as a tensor. `f` is a generic
// lambda whose return type names the call, so the first form drops out
// where that overload does not exist.
template <class F>
auto out_with_other(F&& f, Tensor& o, const Tensor& t, const Tensor& b,
                    const Scalar* s, int) -> decltype(f(o, t, *s)) {
  return s ? f(o, t, *s) : f(o, t, b);
}
template <class F>
Tensor& out_with_other(F&& f, Tensor& o, const Tensor& t, const Tensor& b,
                       const Scalar*, long) {
  return f(o, t, b);
}
#define FASTT_BIND_BINARY_M(name) FASTT_BIND_BINARY_MX(name, true)
#define FASTT_BIND_BINARY_MX(name, number_ok)                                 \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    static const Signature sig{#name, {"other", "$out"}, 1};                \
    PyObject* a[2] = {nargs == 1 ? args[0] : nullptr, nullptr};             \
    if (nargs != 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);    \
    if (!(number_ok) && !is_tensor(a[0])) throw_other_not_tensor(#name, a[0]); \
    Scalar s;                                                               \
    if (given(a[1])) {                                                      \
      to_tensor(a[1], "out");                                               \
      Tensor b = to_tensor_like(a[0], "other");                             \
      const bool number = !is_tensor(a[0]) && try_scalar(a[0], &s);         \
      Tensor& o = out_broadcast(a[1], t, b, #name);                         \
      maybe_release_gil(t.numel(), [&]() -> Tensor& {                       \
        return out_with_other(                                              \
            [](Tensor& r, const Tensor& x, const auto& y)                    \
                -> decltype(fastt::name##_out(r, x, y)) {                    \
              return fastt::name##_out(r, x, y);                             \
            },                                                              \
            o, t, b, number ? &s : nullptr, 0);                             \
      });                                                                   \
      return return_self(a[1]);                                             \
    }                                                                       \
    if (is_tensor(a[0])) {                                                  \
      const Tensor& b = unwrap(a[0]);                                       \
      return wrap(maybe_release_gil(std::max(t.numel(), b.numel()),         \
                                    [&] { return fastt::name(t, b); }));    \
    }                                                                       \
    s = to_scalar(a[0], "other");                                           \
    return wrap(maybe_release_gil(t.numel(),                                \
                                  [&] { return fastt::name(t, s); }));      \
    FASTT_PY_END                                                            \
  }

#define FASTT_BIND_BINARY_INPLACE(name) FASTT_BIND_BINARY_INPLACE_X(name, true)
#define FASTT_BIND_BINARY_INPLACE_X(name, number_ok)                       \
  FASTT_METHOD(name##_) {                                                   \
    FASTT_PY_BEGIN                                                          \
    to_tensor(self, "input");                                               \
    Tensor& t = unwrap_mut(self);                                           \
    static const Signature sig{#name "_", {"other"}, 1};                    \
    PyObject* a[1] = {nargs == 1 ? args[0] : nullptr};                      \
    if (nargs != 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);    \
    if (!(number_ok) && !is_tensor(a[0]))                                   \
      throw_other_not_tensor(#name "_", a[0]);                              \
    if (is_tensor(a[0])) {                                                  \
      const Tensor& b = unwrap(a[0]);                                       \
      maybe_release_gil(t.numel(),                                          \
                        [&]() -> Tensor& { return fastt::name##_(t, b); }); \
    } else {                                                                \
      Scalar s = to_scalar(a[0], "other");                                  \
      maybe_release_gil(t.numel(),                                          \
                        [&]() -> Tensor& { return fastt::name##_(t, s); }); \
    }                                                                       \
    return return_self(self);                                               \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name##_)

// The rows of csrc/ops/elementwise.def, bound by their python column.
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  FASTT_EW_BIND_##python(FASTT_EW_ARITY_##kind, name)
#define FASTT_EW_ARITY_Unary UNARY
#define FASTT_EW_ARITY_UnaryKernel UNARY
#define FASTT_EW_ARITY_Binary BINARY
#define FASTT_EW_ARITY_BinaryKernel BINARY
#define FASTT_EW_ARITY_UnaryHand UNARY
#define FASTT_EW_ARITY_BinaryAlpha BINARY
#define FASTT_EW_BIND_PyAll(arity, name) FASTT_EW_BIND_ALL(arity, name, FASTT_FN)
#define FASTT_EW_BIND_PyAllNum(arity, name) \
  FASTT_EW_BIND_ALL(arity, name, FASTT_FN_NUMBER_INPUT)
#define FASTT_EW_BIND_ALL(arity, name, fn) \
  FASTT_EW_BIND_NOINPLACE(arity, name, fn) FASTT_EW_BIND_INPLACE_##arity(name)
#define FASTT_EW_BIND_PyNoInplace(arity, name) \
  FASTT_EW_BIND_NOINPLACE(arity, name, FASTT_FN)
#define FASTT_EW_BIND_NOINPLACE(arity, name, fn) \
  FASTT_EW_BIND_METHOD_##arity(name) fn(name)
#define FASTT_EW_BIND_PyPlain(arity, name) FASTT_BIND_UNARY_PLAIN(name) FASTT_FN(name)
// Tensor-only `other` (binary rows): PyAllT and PyNoInplaceT.
#define FASTT_EW_BIND_PyAllT(arity, name)                            \
  FASTT_BIND_BINARY_MX(name, false)                                  \
  FASTT_FN(name) FASTT_BIND_BINARY_INPLACE_X(name, false)
#define FASTT_EW_BIND_PyNoInplaceT(arity, name) \
  FASTT_BIND_BINARY_MX(name, false) FASTT_FN(name)
#define FASTT_EW_BIND_PyHand(arity, name)
#define FASTT_EW_BIND_METHOD_UNARY(name) FASTT_BIND_UNARY_OUT(name)
#define FASTT_EW_BIND_METHOD_BINARY(name) FASTT_BIND_BINARY_M(name)
#define FASTT_EW_BIND_INPLACE_UNARY(name) FASTT_BIND_UNARY_INPLACE(name)
#define FASTT_EW_BIND_INPLACE_BINARY(name) FASTT_BIND_BINARY_INPLACE(name)
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
// floor_divide (the div_floor row's function) is bound like a PyAllNum row.
FASTT_BIND_BINARY_M(floor_divide)
FASTT_FN_NUMBER_INPUT(floor_divide)
FASTT_BIND_BINARY_INPLACE(floor_divide)

// heaviside(values): a tensor only, no Python number (torch).
FASTT_BIND(heaviside, 1,
           with_out(out, fastt::heaviside(t, values), "heaviside"),
           (Tensor, values), (Kw<Out>, out))
FASTT_BIND_METHOD(heaviside_, 1, fastt::heaviside_(tm, values),
                  (Tensor, values))

// ---- add / sub with alpha ----
#define FASTT_BIND_ALPHA(name)                                              \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    static const Signature sig{#name, {"other", "$alpha", "$out"}, 1};      \
    PyObject* a[3] = {nargs == 1 ? args[0] : nullptr, nullptr, nullptr};    \
    if (nargs != 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);    \
    Scalar alpha = given(a[1]) ? to_scalar(a[1], "alpha") : Scalar(1);      \
    if (given(a[2])) {                                                      \
      to_tensor(a[2], "out");                                               \
      Tensor b = to_tensor_like(a[0], "other");                             \
      maybe_release_gil(t.numel(), [&]() -> Tensor& {                       \
        return fastt::name##_out(out_broadcast(a[2], t, b, #name), t, b,    \
                                 alpha);                                    \
      });                                                                   \
      return return_self(a[2]);                                             \
    }                                                                       \
    if (is_tensor(a[0])) {                                                  \
      const Tensor& b = unwrap(a[0]);                                       \
      return wrap(maybe_release_gil(std::max(t.numel(), b.numel()), [&] {   \
        return fastt::name(t, b, alpha);                                    \
      }));                                                                  \
    }                                                                       \
    Scalar s = to_scalar(a[0], "other");                                    \
    return wrap(maybe_release_gil(t.numel(),                                \
                                  [&] { return fastt::name(t, s, alpha); })); \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_METHOD(name##_) {                                                   \
    FASTT_PY_BEGIN                                                          \
    to_tensor(self, "input");                                               \
    Tensor& t = unwrap_mut(self);                                           \
    static const Signature sig{#name "_", {"other", "$alpha"}, 1};          \
    PyObject* a[2] = {nargs == 1 ? args[0] : nullptr, nullptr};             \
    if (nargs != 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);    \
    Scalar alpha = given(a[1]) ? to_scalar(a[1], "alpha") : Scalar(1);      \
    if (is_tensor(a[0])) {                                                  \
      const Tensor& b = unwrap(a[0]);                                       \
      maybe_release_gil(t.numel(), [&]() -> Tensor& {                       \
        return fastt::name##_(t, b, alpha);                                 \
      });                                                                   \
    } else {                                                                \
      Scalar s = to_scalar(a[0], "other");                                  \
      maybe_release_gil(t.numel(), [&]() -> Tensor& {                       \
        return fastt::name##_(t, s, alpha);                                 \
      });                                                                   \
    }                                                                       \
    return return_self(self);                                               \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN_NUMBER_INPUT(name)                                               \
  FASTT_FN(name##_)
FASTT_BIND_ALPHA(add)
FASTT_BIND_ALPHA(sub)

// ---- div with rounding_mode ----
static const char* rounding_mode(PyObject* o) {
  if (!given(o)) return nullptr;
  const char* s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : nullptr;
  if (!s) {
    PyErr_SetString(PyExc_TypeError, "rounding_mode must be None or a str");
    throw_py();
  }
  return s;
}
FASTT_METHOD(div) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"div", {"other", "$rounding_mode", "$out"}, 1};
  PyObject* a[3] = {nargs == 1 ? args[0] : nullptr, nullptr, nullptr};
  if (nargs != 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);
  const char* mode = rounding_mode(a[1]);
  if (given(a[2])) {
    to_tensor(a[2], "out");
    Tensor b = to_tensor_like(a[0], "other");
    return store_out(a[2], mode ? fastt::div(t, b, mode) : fastt::div(t, b),
                     "div");
  }
  if (is_tensor(a[0])) {
    const Tensor& b = unwrap(a[0]);
    return wrap(maybe_release_gil(std::max(t.numel(), b.numel()), [&] {
      return mode ? fastt::div(t, b, mode) : fastt::div(t, b);
    }));
  }
  Scalar s = to_scalar(a[0], "other");
  return wrap(maybe_release_gil(t.numel(), [&] {
    return mode ? fastt::div(t, s, mode) : fastt::div(t, s);
  }));
  FASTT_PY_END
}
FASTT_METHOD(div_) {
  FASTT_PY_BEGIN
  to_tensor(self, "input");
  Tensor& t = unwrap_mut(self);
  static const Signature sig{"div_", {"other", "$rounding_mode"}, 1};
  PyObject* a[2] = {nargs == 1 ? args[0] : nullptr, nullptr};
  if (nargs != 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);
  const char* mode = rounding_mode(a[1]);
  if (mode) {
    Tensor b = to_tensor_like(a[0], "other");
    t.copy_(fastt::div(t, b, mode));
    t.bump_version();
  } else if (is_tensor(a[0])) {
    fastt::div_(t, unwrap(a[0]));
  } else {
    fastt::div_(t, to_scalar(a[0], "other"));
  }
  return return_self(self);
  FASTT_PY_END
}
FASTT_FN_NUMBER_INPUT(div)
FASTT_FN(div_)

// ---- gelu, leaky_relu ----
FASTT_BIND(gelu, 0,
           fastt::gelu(t, approximate ? approximate : "none"),
           (Kw<OptStr>, approximate))
FASTT_METHOD(leaky_relu) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"leaky_relu", {"negative_slope", "inplace"}, 0};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  double slope = given(a[0]) ? to_double(a[0], "negative_slope") : 0.01;
  if (given(a[1]) && to_bool(a[1], "inplace")) {
    fastt::leaky_relu_(unwrap_mut(self), slope);
    return return_self(self);
  }
  return wrap(fastt::leaky_relu(t, slope));
  FASTT_PY_END
}
FASTT_FN(leaky_relu)

// ---- where / clamp / lerp / addcmul / addcdiv / masked_fill ----
static Tensor where3(const Tensor& cond, PyObject* x, PyObject* y) {
  Scalar sx, sy;
  bool tx = is_tensor(x), ty = is_tensor(y);
  if (!tx) sx = to_scalar(x, "input");
  if (!ty) sy = to_scalar(y, "other");
  if (tx && ty) return fastt::where(cond, unwrap(x), unwrap(y));
  if (tx) return fastt::where(cond, unwrap(x), sy);
  if (ty) return fastt::where(cond, sx, unwrap(y));
  return fastt::where(cond, sx, sy);
}
// Tensor.where(condition, other) == fastt.where(condition, self, other).
FASTT_BIND_METHOD(where, 2, other.visit([&](const auto& y) {
                    return fastt::where(condition, t, y);
                  }),
                  (Tensor, condition), (TensorOrScalar, other))
static PyObject* f_where(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"where", {"condition", "input", "other"}, 1};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& cond = to_tensor(a[0], "condition");
  if (!a[1] && !a[2]) {
    // torch: where(condition) == nonzero(condition, as_tuple=True).
    PyObject* meth = PyObject_GetAttrString(a[0], "nonzero");
    if (!meth) return nullptr;
    PyObject* empty = PyTuple_New(0);
    PyObject* kw = Py_BuildValue("{s:O}", "as_tuple", Py_True);
    PyObject* r = empty && kw ? PyObject_Call(meth, empty, kw) : nullptr;
    Py_XDECREF(kw);
    Py_XDECREF(empty);
    Py_DECREF(meth);
    return r;
  }
  if (!a[1] || !a[2]) {
    PyErr_SetString(PyExc_TypeError, "where() expects input and other");
    return nullptr;
  }
  return wrap(where3(cond, a[1], a[2]));
  FASTT_PY_END
}

// A clamp bound beside a tensor bound. A Python number there (torch
// rejects it beside a dimensioned tensor) is a wrapped number: a 0-d
// tensor of the dtype that input, the other bound and the number promote
// to, so it never widens the result.
static Tensor bound_tensor(const Tensor& input, PyObject* bound,
                           PyObject* other, const char* what) {
  Scalar s;
  if (is_tensor(bound) || !try_scalar(bound, &s))
    return to_tensor_like(bound, what);
  ResultTypeState st;
  st.add(input);
  if (given(other) && is_tensor(other)) st.add(unwrap(other));
  st.add(s);
  return fastt::full({}, s, st.result(), input.device());
}

static PyObject* clamp_impl(PyObject* self, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames,
                            const char* name, bool inplace) {
  to_tensor(self, "input");
  static const Signature sig{"clamp", {"min", "max", "$out"}, 0};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  if (inplace && a[2])
    throw TypeError(fmt::format("{}() got an unexpected keyword argument "
                                "'out'", name));
  bool has_min = given(a[0]), has_max = given(a[1]);
  FASTT_CHECK(has_min || has_max, RuntimeError,
              "{}: At least one of 'min' or 'max' must not be None", name);
  Tensor& t = unwrap_mut(self);
  const bool tmin = has_min && is_tensor(a[0]);
  const bool tmax = has_max && is_tensor(a[1]);
  // torch: beside a number bound, a 0-d tensor bound is a number too (its
  // clamp(Tensor, Scalar?, Scalar?) overload takes it), so it does not
  // take part in the dtype promotion.
  const bool as_numbers = has_min && has_max && tmin != tmax &&
                          unwrap(tmin ? a[0] : a[1]).dim() == 0;
  if ((tmin || tmax) && !as_numbers) {
    Tensor lo = has_min ? bound_tensor(t, a[0], a[1], "min") : Tensor();
    Tensor hi = has_max ? bound_tensor(t, a[1], a[0], "max") : Tensor();
    if (inplace) {
      fastt::clamp_(t, lo, hi);
      return return_self(self);
    }
    if (given(a[2])) return store_out(a[2], fastt::clamp(t, lo, hi), name);
    return wrap(fastt::clamp(t, lo, hi));
  }
  Scalar lo, hi;
  if (has_min) lo = tmin ? unwrap(a[0]).item() : to_scalar(a[0], "min");
  if (has_max) hi = tmax ? unwrap(a[1]).item() : to_scalar(a[1], "max");
  if (inplace) {
    fastt::clamp_(t, has_min ? &lo : nullptr, has_max ? &hi : nullptr);
    return return_self(self);
  }
  Tensor r = fastt::clamp(t, has_min ? &lo : nullptr, has_max ? &hi : nullptr);
  if (given(a[2])) return store_out(a[2], r, name);
  return wrap(std::move(r));
}
FASTT_METHOD(clamp) {
  FASTT_PY_BEGIN
  return clamp_impl(self, args, nargs, kwnames, "clamp", false);
  FASTT_PY_END
}
FASTT_METHOD(clamp_) {
  FASTT_PY_BEGIN
  return clamp_impl(self, args, nargs, kwnames, "clamp_", true);
  FASTT_PY_END
}
FASTT_FN(clamp)
FASTT_FN(clamp_)
// clamp_min/clamp_max: a number or a tensor bound (broadcast to input).
FASTT_BIND(clamp_min, 1,
           min.tensor ? fastt::clamp(t, *min.tensor, Tensor())
                      : fastt::clamp_min(t, min.scalar),
           (TensorOrScalar, min))
FASTT_BIND(clamp_max, 1,
           max.tensor ? fastt::clamp(t, Tensor(), *max.tensor)
                      : fastt::clamp_max(t, max.scalar),
           (TensorOrScalar, max))
FASTT_BIND(clamp_min_, 1,
                  min.tensor ? fastt::clamp_(tm, *min.tensor, Tensor())
                             : fastt::clamp_min_(tm, min.scalar),
                  (TensorOrScalar, min))
FASTT_BIND(clamp_max_, 1,
                  max.tensor ? fastt::clamp_(tm, Tensor(), *max.tensor)
                             : fastt::clamp_max_(tm, max.scalar),
                  (TensorOrScalar, max))

FASTT_BIND(lerp, 2, weight.visit([&](const auto& w) {
             return fastt::lerp(t, end, w);
           }),
           (Tensor, end), (TensorOrScalar, weight))
FASTT_BIND_METHOD(lerp_, 2, weight.visit([&](const auto& w) -> Tensor& {
                    return fastt::lerp_(tm, end, w);
                  }),
                  (Tensor, end), (TensorOrScalar, weight))

#define FASTT_BIND_ADDC(name)                                               \
  FASTT_BIND(name, 2, fastt::name(t, tensor1, tensor2, value),              \
             (Tensor, tensor1), (Tensor, tensor2), (Kw<ScalarOr<1>>, value))  \
  FASTT_BIND_METHOD(name##_, 2, fastt::name##_(tm, tensor1, tensor2, value), \
                    (Tensor, tensor1), (Tensor, tensor2),                   \
                    (Kw<ScalarOr<1>>, value))
FASTT_BIND_ADDC(addcmul)
FASTT_BIND_ADDC(addcdiv)
#undef FASTT_BIND_ADDC

FASTT_BIND(masked_fill, 2, value.visit([&](const auto& v) {
             return fastt::masked_fill(t, mask, v);
           }),
           (Tensor, mask), (TensorOrScalar, value))
FASTT_BIND_METHOD(masked_fill_, 2, fastt::masked_fill_(tm, mask, value),
                  (Tensor, mask), (Scalar, value))

// ---- Views ----
FASTT_METHOD(view) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  if (nargs == 1 && !kwnames && Py_TYPE(args[0]) == &DTypeType)
    return wrap(t.view_dtype(reinterpret_cast<DTypeObject*>(args[0])->dtype));
  if (kwnames) {
    static const Signature sig{"view", {"size"}, 1};
    PyObject* a[1];
    parse_args(sig, args, nargs, kwnames, a);
    SmallInts s;
    parse_ints(a[0], &s, "view");
    return wrap(t.view(s.list()));
  }
  SmallInts s;
  parse_varargs_ints(args, nargs, &s, "view");
  return wrap(t.view(s.list()));
  FASTT_PY_END
}
FASTT_METHOD(reshape) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  SmallInts s;
  if (kwnames) {
    static const Signature sig{"reshape", {"shape"}, 1};
    PyObject* a[1];
    parse_args(sig, args, nargs, kwnames, a);
    parse_ints(a[0], &s, "reshape");
  } else {
    parse_varargs_ints(args, nargs, &s, "reshape");
  }
  return wrap(maybe_release_gil(t.numel(), [&] { return t.reshape(s.list()); }));
  FASTT_PY_END
}
FASTT_FN(reshape)
FASTT_METHOD(view_as) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  if (nargs != 1) throw TypeError("view_as() takes exactly one argument");
  return wrap(t.view(to_tensor(args[0], "other").sizes()));
  FASTT_PY_END
}
FASTT_METHOD(reshape_as) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  if (nargs != 1) throw TypeError("reshape_as() takes exactly one argument");
  return wrap(t.reshape(to_tensor(args[0], "other").sizes()));
  FASTT_PY_END
}
FASTT_METHOD(expand) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  SmallInts s;
  parse_varargs_ints(args, nargs, &s, "expand");
  return wrap(t.expand(s.list()));
  FASTT_PY_END
}
FASTT_METHOD(expand_as) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  if (nargs != 1) throw TypeError("expand_as() takes exactly one argument");
  return wrap(t.expand_as(to_tensor(args[0], "other")));
  FASTT_PY_END
}
FASTT_METHOD(permute) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  SmallInts s;
  if (kwnames) {
    static const Signature sig{"permute", {"dims"}, 1};
    PyObject* a[1];
    parse_args(sig, args, nargs, kwnames, a);
    parse_ints(a[0], &s, "permute");
  } else {
    parse_varargs_ints(args, nargs, &s, "permute");
  }
  return wrap(t.permute(s.list()));
  FASTT_PY_END
}
FASTT_FN(permute)
FASTT_BIND(transpose, 2, t.transpose(dim0, dim1), (Int, dim0), (Int, dim1))
FASTT_METHOD(t) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  FASTT_CHECK(t.dim() <= 2, RuntimeError,
              "t() expects a tensor with <= 2 dimensions, but self is {}D",
              t.dim());
  return wrap(t.t());
  FASTT_PY_END
}
FASTT_FN(t)
FASTT_BIND(squeeze, 0, dim.given ? t.squeeze(IntList(dim)) : t.squeeze(),
           (OptInts, dim))
FASTT_BIND(unsqueeze, 1, t.unsqueeze(dim), (Int, dim))
FASTT_BIND(flatten, 0, t.flatten(start_dim, end_dim), (IntOr<0>, start_dim),
           (IntOr<-1>, end_dim))
FASTT_BIND(unflatten, 2, t.unflatten(dim, sizes), (Int, dim), (Ints, sizes))
namespace rd {
// narrow's start: an int, or a 0-d integer tensor (torch's narrow.Tensor).
struct NarrowStart {
  static constexpr const char* kStub = "Union[_int, Tensor]";
  static int64_t read(PyObject* o, const char* n) {
    if (!is_tensor(o)) return to_int(o, n);
    const fastt::Tensor& s = unwrap(o);
    FASTT_CHECK(s.dim() == 0 && is_integral(s.dtype(), false), RuntimeError,
                "narrow(): start must be an 0-dim integral Tensor.");
    return s.item().to_int();
  }
};
}  // namespace rd
FASTT_BIND(narrow, 3, t.narrow(dim, start, length), (Int, dim),
           (NarrowStart, start), (Int, length))
FASTT_BIND(select, 2, t.select(dim, index), (Int, dim), (Int, index))
// storage_offset: an explicit -1 must not become the core's "keep the
// current offset" sentinel (torch raises).
static int64_t storage_offset_arg(std::optional<int64_t> o) {
  FASTT_CHECK(!o || *o >= 0, RuntimeError,
              "as_strided: invalid storage offset {}", *o);
  return o.value_or(-1);
}
FASTT_BIND(as_strided, 2,
           t.as_strided(size, stride, storage_offset_arg(storage_offset)),
           (Ints, size), (Ints, stride), (OptInt, storage_offset))
FASTT_BIND(diagonal, 0, t.diagonal(offset, dim1, dim2), (IntOr<0>, offset),
           (IntOr<0>, dim1), (IntOr<1>, dim2))
FASTT_BIND_METHOD(unfold, 3, t.unfold(dimension, size, step), (Int, dimension),
                  (Int, size), (Int, step))

// ---- Copies and conversions ----
FASTT_METHOD(contiguous) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  if (t.is_contiguous()) return return_self(self);
  return wrap(maybe_release_gil(t.numel(), [&] { return t.contiguous(); }));
  FASTT_PY_END
}
FASTT_METHOD(clone) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  return wrap(maybe_release_gil(t.numel(), [&] { return t.clone(); }));
  FASTT_PY_END
}
FASTT_FN(clone)
FASTT_METHOD(detach) {
  FASTT_PY_BEGIN
  return wrap(to_tensor(self, "input").alias());
  FASTT_PY_END
}
FASTT_FN(detach)
FASTT_BIND_METHOD(copy_, 1,
                  maybe_release_gil(tm.numel(),
                                    [&]() -> Tensor& {
                                      return tm.copy_(src, non_blocking);
                                    }),
                  (TensorLike, src), (BoolOr<false>, non_blocking))
FASTT_BIND(fill_, 1,
           maybe_release_gil(tm.numel(),
                             [&]() -> Tensor& { return tm.fill_(value); }),
           (Scalar, value))
FASTT_METHOD(zero_) {
  FASTT_PY_BEGIN
  to_tensor(self, "input");
  Tensor& t = unwrap_mut(self);
  maybe_release_gil(t.numel(), [&]() -> Tensor& { return t.zero_(); });
  return return_self(self);
  FASTT_PY_END
}
FASTT_FN(zero_)

static PyObject* convert(PyObject* self, const Tensor& t, DType dtype,
                         Device device, bool copy,
                         bool non_blocking = false) {
  if (!copy && t.dtype() == dtype && t.device() == device)
    return return_self(self);
  Tensor r = maybe_release_gil(t.numel(), [&] {
    Tensor x = t;
    if (x.device() != device) x = x.to(device, false, non_blocking);
    if (x.dtype() != dtype) x = x.to(dtype);
    else if (copy && x.is_same(t)) x = x.clone();
    return x;
  });
  return wrap(std::move(r));
}
// to(dtype) / to(device, dtype) / to(other) / to(device=, dtype=, copy=)
FASTT_METHOD(to) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{
      "to", {"a0", "a1", "$dtype", "$device", "$copy", "$non_blocking"}, 0};
  PyObject* a[6];
  parse_args(sig, args, nargs, kwnames, a);
  DType dtype = t.dtype();
  Device device = t.device();
  for (int i = 0; i < 2; ++i) {
    if (!given(a[i])) continue;
    if (is_dtype(a[i])) dtype = to_dtype(a[i], dtype);
    else if (is_tensor(a[i])) {
      dtype = unwrap(a[i]).dtype();
      device = unwrap(a[i]).device();
    } else device = to_device(a[i], device);
  }
  dtype = to_dtype(a[2], dtype);
  device = to_device(a[3], device);
  bool copy = given(a[4]) && to_bool(a[4], "copy");
  const bool nb = given(a[5]) && to_bool(a[5], "non_blocking");
  return convert(self, t, dtype, device, copy, nb);
  FASTT_PY_END
}
#define FASTT_BIND_CAST(name, DT)                                   \
  FASTT_METHOD(name) {                                              \
    FASTT_PY_BEGIN                                                  \
    const Tensor& t = to_tensor(self, "input");                     \
    return convert(self, t, DType::DT, t.device(), false);          \
    FASTT_PY_END                                                    \
  }
FASTT_BIND_CAST(float_, Float32)
FASTT_BIND_CAST(double_, Float64)
FASTT_BIND_CAST(half_, Float16)
FASTT_BIND_CAST(bfloat16_, BFloat16)
FASTT_BIND_CAST(int_, Int32)
FASTT_BIND_CAST(long_, Int64)
FASTT_BIND_CAST(short_, Int16)
FASTT_BIND_CAST(char_, Int8)
FASTT_BIND_CAST(byte_, UInt8)
FASTT_BIND_CAST(bool_, Bool)
FASTT_BIND_CAST(cfloat_, Complex64)
FASTT_BIND_CAST(cdouble_, Complex128)
FASTT_METHOD(type_as) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  if (nargs != 1) throw TypeError("type_as() takes exactly one argument");
  const Tensor& o = to_tensor(args[0], "other");
  return convert(self, t, o.dtype(), t.device(), false);
  FASTT_PY_END
}
FASTT_METHOD(cpu) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  return convert(self, t, t.dtype(), kCPU, false);
  FASTT_PY_END
}
FASTT_METHOD(cuda) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"cuda", {"device", "non_blocking"}, 0};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  Device d(DeviceType::CUDA, 0);
  if (given(a[0])) d = to_device(a[0], d);
  const bool nb = given(a[1]) && to_bool(a[1], "non_blocking");
  return convert(self, t, t.dtype(), d, false, nb);
  FASTT_PY_END
}

// ---- Queries ----
FASTT_METHOD(size) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"size", {"dim"}, 0};
  PyObject* a[1] = {nargs == 1 ? args[0] : nullptr};
  if (nargs > 1 || kwnames) parse_args(sig, args, nargs, kwnames, a);
  if (!given(a[0])) return make_size(t.sizes());
  return PyLong_FromLongLong(t.size(to_int(a[0], "dim")));
  FASTT_PY_END
}
FASTT_METHOD(stride) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"stride", {"dim"}, 0};
  PyObject* a[1];
  parse_args(sig, args, nargs, kwnames, a);
  if (given(a[0])) return PyLong_FromLongLong(t.stride(to_int(a[0], "dim")));
  PyObject* r = PyTuple_New(Py_ssize_t(t.dim()));
  if (!r) return nullptr;
  for (int64_t i = 0; i < t.dim(); ++i)
    PyTuple_SET_ITEM(r, Py_ssize_t(i), PyLong_FromLongLong(t.strides()[i]));
  return r;
  FASTT_PY_END
}
static PyObject* m_dim(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(unwrap(self).dim());
}
static PyObject* m_numel(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(unwrap(self).numel());
}
static PyObject* f_numel(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  return PyLong_FromLongLong(to_tensor(o, "input").numel());
  FASTT_PY_END
}
static PyObject* m_element_size(PyObject* self, PyObject*) {
  return PyLong_FromSize_t(unwrap(self).itemsize());
}
static PyObject* m_is_contiguous(PyObject* self, PyObject* const*, Py_ssize_t,
                                 PyObject*) {
  return PyBool_FromLong(unwrap(self).is_contiguous());
}
static PyObject* m_is_floating_point(PyObject* self, PyObject*) {
  return PyBool_FromLong(unwrap(self).is_floating_point());
}
static PyObject* f_is_floating_point(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  return PyBool_FromLong(to_tensor(o, "input").is_floating_point());
  FASTT_PY_END
}
static PyObject* m_data_ptr(PyObject* self, PyObject*) {
  return PyLong_FromVoidPtr(unwrap(self).data_ptr());
}
static PyObject* m_storage_offset(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(unwrap(self).storage_offset());
}
static PyObject* m_item(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  if (t.numel() != 1) {
    PyErr_Format(PyExc_RuntimeError,
                 "a Tensor with %lld elements cannot be converted to Scalar",
                 static_cast<long long>(t.numel()));
    return nullptr;
  }
  return scalar_to_py(t.item());
  FASTT_PY_END
}
static PyObject* m_tolist(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  return tensor_tolist(unwrap(self));
  FASTT_PY_END
}
// torch: a 0-d tensor formats as its value; others as object does.
static PyObject* m_format(PyObject* self, PyObject* spec) {
  FASTT_PY_BEGIN
  if (unwrap(self).dim() == 0) {
    PyObject* v = scalar_to_py(unwrap(self).item());
    if (!v) return nullptr;
    PyObject* r = PyObject_Format(v, spec);
    Py_DECREF(v);
    return r;
  }
  if (!PyUnicode_Check(spec) || PyUnicode_GetLength(spec) != 0) {
    PyErr_SetString(PyExc_TypeError,
                    "unsupported format string passed to Tensor.__format__");
    return nullptr;
  }
  return PyObject_Str(self);
  FASTT_PY_END
}
// The legacy type names, in DType order.
static const char* const kTypeNames[] = {
    "BoolTensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor",
    "LongTensor", "HalfTensor", "BFloat16Tensor", "FloatTensor",
    "DoubleTensor", "ComplexFloatTensor", "ComplexDoubleTensor"};
static const DType kTypeDTypes[] = {
    DType::Bool,      DType::UInt8,      DType::Int8,    DType::Int16,
    DType::Int32,     DType::Int64,      DType::Float16, DType::BFloat16,
    DType::Float32,   DType::Float64,    DType::Complex64,
    DType::Complex128};
static_assert(kNumDTypes == 12, "update the type() names");

// "torch.FloatTensor", "fastt.cuda.LongTensor", "FloatTensor", ...: the
// dtype, and whether the name is a CUDA one.
static DType dtype_of_type_name(const std::string& full, bool* cuda) {
  std::string s = full;
  for (const char* prefix : {"torch.", "fastt."})
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::strlen(prefix));
  *cuda = s.rfind("cuda.", 0) == 0;
  if (*cuda) s = s.substr(5);
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == kTypeNames[i]) return kTypeDTypes[i];
  throw ValueError(fmt::format("invalid type: '{}'", full));
}

// type() -> "fastt.FloatTensor"; type(dtype), type(fastt.LongTensor) or
// type("torch.LongTensor") -> the tensor converted (self when it is
// already that type).
static PyObject* m_type(PyObject* self, PyObject* const* args,
                        Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  static const Signature sig{"type", {"dtype", "non_blocking"}, 0};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  if (!a[0] || a[0] == Py_None) {
    const char* n = "Tensor";
    for (int i = 0; i < kNumDTypes; ++i)
      if (kTypeDTypes[i] == t.dtype()) n = kTypeNames[i];
    return PyUnicode_FromFormat("fastt.%s%s", t.is_cuda() ? "cuda." : "", n);
  }
  DType d;
  bool cuda = t.is_cuda();
  if (PyUnicode_Check(a[0])) {
    d = dtype_of_type_name(PyUnicode_AsUTF8(a[0]), &cuda);
  } else if (PyType_Check(a[0]) && PyObject_HasAttrString(a[0], "dtype")) {
    // a legacy type class (fastt.FloatTensor, fastt.cuda.LongTensor)
    PyObject* dt = PyObject_GetAttrString(a[0], "dtype");
    PyObject* is_cuda = PyObject_GetAttrString(a[0], "is_cuda");
    if (!dt || !is_cuda) {
      Py_XDECREF(dt);
      Py_XDECREF(is_cuda);
      return nullptr;
    }
    d = to_dtype(dt, t.dtype());
    cuda = PyObject_IsTrue(is_cuda) == 1;
    Py_DECREF(dt);
    Py_DECREF(is_cuda);
  } else {
    d = to_dtype(a[0], t.dtype());
  }
  if (d == t.dtype() && cuda == t.is_cuda()) {
    Py_INCREF(self);
    return self;
  }
  Tensor r = t.to(d);
  if (cuda != t.is_cuda())
    r = r.to(cuda ? Device(DeviceType::CUDA, 0) : Device(kCPU));
  return wrap(std::move(r));
  FASTT_PY_END
}
// copy.copy shares the data (as torch's does); copy.deepcopy clones.
static PyObject* m_copy(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  return wrap(unwrap(self).alias());
  FASTT_PY_END
}
static PyObject* m_deepcopy(PyObject* self, PyObject* memo) {
  FASTT_PY_BEGIN
  PyObject* r = wrap(unwrap(self).clone());
  if (r && memo && PyDict_Check(memo)) {
    PyObject* key = PyLong_FromVoidPtr(self);
    if (!key || PyDict_SetItem(memo, key, r) < 0) {
      Py_XDECREF(key);
      Py_DECREF(r);
      return nullptr;
    }
    Py_DECREF(key);
  }
  return r;
  FASTT_PY_END
}
// pickle: _rebuild_tensor(bytes of the contiguous CPU data, dtype, shape,
// device).
static PyObject* m_reduce_ex(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  Tensor c = t.to(kCPU).contiguous();
  capture::host_read("pickling a tensor");
  PyObject* data = PyBytes_FromStringAndSize(
      static_cast<const char*>(c.data_ptr()), Py_ssize_t(c.nbytes()));
  if (!data) return nullptr;
  PyObject* shape = make_size(t.sizes());
  PyObject* dev = device_object(t.device());
  PyObject* mod = PyImport_ImportModule("fastt._C");
  PyObject* fn = mod ? PyObject_GetAttrString(mod, "_rebuild_tensor") : nullptr;
  Py_XDECREF(mod);
  if (!fn) {
    Py_DECREF(data);
    Py_DECREF(shape);
    Py_DECREF(dev);
    return nullptr;
  }
  return Py_BuildValue("(N(NNNN))", fn, data, dtype_object(t.dtype()), shape,
                       dev);
  FASTT_PY_END
}
static PyObject* f_rebuild_tensor(PyObject*, PyObject* const* args,
                                  Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  if (nargs != 4 || !PyBytes_Check(args[0]))
    throw TypeError("_rebuild_tensor(bytes, dtype, shape, device)");
  SmallInts shape;
  parse_ints(args[2], &shape, "shape");
  capture::host_read("unpickling a tensor (a host write)");
  Tensor t = Tensor::empty(shape.list(), to_dtype(args[1], DType::Float32));
  FASTT_CHECK(size_t(PyBytes_GET_SIZE(args[0])) == t.nbytes(), ValueError,
              "_rebuild_tensor: {} bytes for a tensor of {} bytes",
              PyBytes_GET_SIZE(args[0]), t.nbytes());
  if (t.nbytes())
    std::memcpy(t.data_ptr(), PyBytes_AS_STRING(args[0]), t.nbytes());
  Device d = to_device(args[3], kCPU);
  if (d != t.device()) t = t.to(d);
  return wrap(std::move(t));
  FASTT_PY_END
}

// ---- Module-level utilities ----
static PyObject* f_is_tensor(PyObject*, PyObject* o) {
  return PyBool_FromLong(is_tensor(o));
}
static PyObject* f_get_default_dtype(PyObject*, PyObject*) {
  return dtype_object(default_dtype());
}
static PyObject* f_set_default_dtype(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  DType t = to_dtype(o, default_dtype());
  FASTT_CHECK(t == DType::Float32 || t == DType::Float64, TypeError,
              "only floating-point types are supported as the default type");
  set_default_dtype(t);
  Py_RETURN_NONE;
  FASTT_PY_END
}
static PyObject* f_set_num_threads(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  fastt::set_num_threads(int(to_int(o, "set_num_threads")));
  Py_RETURN_NONE;
  FASTT_PY_END
}
static PyObject* f_set_flush_denormal(PyObject*, PyObject* o) {
  const int on = PyObject_IsTrue(o);
  if (on < 0) return nullptr;
  return PyBool_FromLong(fastt::set_flush_denormal(on == 1));
}
static PyObject* f_get_num_threads(PyObject*, PyObject*) {
  return PyLong_FromLong(fastt::get_num_threads());
}
static PyObject* f_parallel_info(PyObject*, PyObject*) {
  const fastt::ParallelInfo i = fastt::parallel_info();
  return Py_BuildValue("{s:i,s:i,s:s,s:i,s:i}", "openmp", i.openmp_version,
                       "num_threads", i.num_threads, "blas_config",
                       i.blas_config, "blas_parallel", i.blas_parallel,
                       "blas_num_threads", i.blas_num_threads);
}
// The vector math level in use (fastt.backends.cpu.get_cpu_capability()),
// what the CPU has, and why a FASTT_CPU_ISA value was not taken.
// "built": the levels the kernel families were compiled for.
static PyObject* f_cpu_isa(PyObject*, PyObject*) {
  namespace I = fastt::cpu_isa;
  PyObject* built = PyList_New(0);
  if (!built) return nullptr;
  for (int l = I::kNone; l <= I::kAvx512; ++l) {
    if (!((I::built_mask() >> l) & 1)) continue;
    PyObject* s = PyUnicode_FromString(I::name(l));
    if (!s || PyList_Append(built, s) < 0) {
      Py_XDECREF(s);
      Py_DECREF(built);
      return nullptr;
    }
    Py_DECREF(s);
  }
  return Py_BuildValue("{s:s,s:s,s:s,s:N}", "in_use", I::name(I::level()),
                       "supported", I::name(I::supported()), "warning",
                       I::warning(), "built", built);
}
// The non-temporal store threshold of the elementwise kernels
// (kernels/cpu/loop.h): (bytes, runs written so far, last-level cache
// bytes); an argument sets the threshold first (0: never), for tests and
// benchmarks.
static PyObject* f_stream_stores(PyObject*, PyObject* args) {
  long long set = -1;
  if (!PyArg_ParseTuple(args, "|L", &set)) return nullptr;
  namespace I = fastt::cpu_isa;
  if (set == 0) I::g_stream_store_bytes = INT64_MAX;
  else if (set > 0) I::g_stream_store_bytes = int64_t(set);
  return Py_BuildValue(
      "(LLL)", static_cast<long long>(I::g_stream_store_bytes),
      static_cast<long long>(
          __atomic_load_n(&I::g_stream_store_runs, __ATOMIC_RELAXED)),
      static_cast<long long>(I::llc_bytes()));
}
// fastt.backends.mkldnn: oneDNN built in, the switch, whether the bf16
// matmul path can run here, and how many products it has run.
static PyObject* f_mkldnn(PyObject*, PyObject* args) {
  int set = -1;
  if (!PyArg_ParseTuple(args, "|i", &set)) return nullptr;
  if (set >= 0) fastt::set_onednn_enabled(set != 0);
  return Py_BuildValue("(OOOL)",
                       fastt::onednn_conv_built() ? Py_True : Py_False,
                       fastt::onednn_enabled() ? Py_True : Py_False,
                       fastt::onednn_bf16_available() ? Py_True : Py_False,
                       static_cast<long long>(
                           fastt::onednn_bf16_matmul_calls()));
}
static PyObject* f_manual_seed(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  // torch accepts any seed in [-2^63, 2^64); negatives wrap to uint64.
  uint64_t seed = PyLong_Check(o) ? PyLong_AsUnsignedLongLong(o) : 0;
  if (!PyLong_Check(o) || (seed == uint64_t(-1) && PyErr_Occurred())) {
    PyErr_Clear();
    seed = uint64_t(to_int(o, "seed"));  // negatives; errors for bad types
  }
  fastt::manual_seed(seed);
  Py_RETURN_NONE;
  FASTT_PY_END
}
static PyObject* f_initial_seed(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  return PyLong_FromUnsignedLongLong(fastt::initial_seed());
  FASTT_PY_END
}
// The default generator's state as bytes (fastt.get_rng_state wraps it in
// a uint8 tensor, as torch's).
static PyObject* f_get_rng_state(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  std::vector<uint8_t> b = fastt::default_generator().get_state();
  return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(b.data()),
                                   Py_ssize_t(b.size()));
  FASTT_PY_END
}
static PyObject* f_set_rng_state(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  char* data = nullptr;
  Py_ssize_t n = 0;
  if (PyBytes_AsStringAndSize(o, &data, &n) < 0) throw_py();
  fastt::default_generator().set_state(reinterpret_cast<const uint8_t*>(data),
                                       size_t(n));
  Py_RETURN_NONE;
  FASTT_PY_END
}
static PyObject* f_seed(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  return PyLong_FromUnsignedLongLong(fastt::seed());
  FASTT_PY_END
}
static PyObject* f_promote_types(PyObject*, PyObject* const* args,
                                 Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  if (nargs != 2) throw TypeError("promote_types() takes 2 arguments");
  return dtype_object(
      promote_types(to_dtype(args[0], DType::Bool), to_dtype(args[1], DType::Bool)));
  FASTT_PY_END
}
static PyObject* f_can_cast(PyObject*, PyObject* const* args,
                            Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  if (nargs != 2) throw TypeError("can_cast() takes 2 arguments");
  return PyBool_FromLong(fastt::can_cast(to_dtype(args[0], DType::Bool),
                                         to_dtype(args[1], DType::Bool)));
  FASTT_PY_END
}
static PyObject* f_result_type(PyObject*, PyObject* const* args,
                               Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  if (nargs != 2) throw TypeError("result_type() takes 2 arguments");
  ResultTypeState st;
  for (int i = 0; i < 2; ++i) {
    if (is_tensor(args[i])) st.add(unwrap(args[i]));
    else st.add(to_scalar(args[i], "result_type"));
  }
  return dtype_object(st.result());
  FASTT_PY_END
}

// fastt._C._ew_rows(): the elementwise rows (csrc/ops/elementwise.def) as
// (name, kind, rule, grad, python, cpu dtypes, cuda dtypes), the dtypes read
// from the dispatch table, for the tests' coverage checks.
static PyObject* dtypes_registered(Op op, ::fastt::DeviceType dev) {
  PyObject* l = PyList_New(0);
  if (!l) return nullptr;
  for (int t = 0; t < kNumDTypes; ++t) {
    if (!registered_kernel(op, dev, DType(t))) continue;
    PyObject* d = dtype_object(DType(t));  // a new reference
    if (PyList_Append(l, d) < 0) {
      Py_DECREF(d);
      Py_DECREF(l);
      return nullptr;
    }
    Py_DECREF(d);
  }
  return l;
}
static PyObject* f_ew_rows(PyObject*, PyObject*) {
  PyObject* rows = PyList_New(0);
  if (!rows) return nullptr;
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python)          \
  {                                                                        \
    PyObject* cpu = dtypes_registered(Op::name, ::fastt::DeviceType::CPU);          \
    PyObject* cu = cpu ? dtypes_registered(Op::name, ::fastt::DeviceType::CUDA)     \
                       : nullptr;                                          \
    PyObject* row = cu ? Py_BuildValue("(sssssNN)", #name, #kind, #rule,   \
                                       #grad, #python, cpu, cu)            \
                       : nullptr;                                          \
    if (!row || PyList_Append(rows, row) < 0) {                            \
      Py_XDECREF(row);                                                     \
      Py_DECREF(rows);                                                     \
      return nullptr;                                                      \
    }                                                                      \
    Py_DECREF(row);                                                        \
  }
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
  return rows;
}

#define FASTT_KW(name, fn, doc) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, doc}
#define FASTT_NOARGS(name, fn, doc) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_NOARGS, doc}
#define FASTT_O(name, fn, doc) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_O, doc}
#define FASTT_FAST(name, fn, doc) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL, doc}

#define FASTT_METHOD_ENTRY(name) FASTT_KW(#name, m_##name, nullptr),
#define FASTT_METHOD_ENTRY2(name) \
  FASTT_KW(#name, m_##name, nullptr), FASTT_KW(#name "_", m_##name##_, nullptr),
#define FASTT_FN_ENTRY(name) FASTT_KW(#name, f_##name, nullptr),
#define FASTT_FN_ENTRY2(name) \
  FASTT_KW(#name, f_##name, nullptr), FASTT_KW(#name "_", f_##name##_, nullptr),

// The rows' entries: the method (and function), plus the in-place form.
#define FASTT_EW_ENTRIES_PyAll(entry, name) entry##2(name)
#define FASTT_EW_ENTRIES_PyAllNum(entry, name) entry##2(name)
#define FASTT_EW_ENTRIES_PyNoInplace(entry, name) entry(name)
#define FASTT_EW_ENTRIES_PyAllT(entry, name) entry##2(name)
#define FASTT_EW_ENTRIES_PyNoInplaceT(entry, name) entry(name)
#define FASTT_EW_ENTRIES_PyPlain(entry, name) entry(name)
#define FASTT_EW_ENTRIES_PyHand(entry, name)

PyMethodDef g_tensor_methods[] = {
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  FASTT_EW_ENTRIES_##python(FASTT_METHOD_ENTRY, name)
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
    FASTT_METHOD_ENTRY2(floor_divide)
    FASTT_METHOD_ENTRY2(add) FASTT_METHOD_ENTRY2(sub) FASTT_METHOD_ENTRY2(div)
    FASTT_KW("subtract", m_sub, nullptr),
    FASTT_KW("multiply", m_mul, nullptr),
    FASTT_KW("divide", m_div, nullptr),
    FASTT_KW("true_divide", m_div, nullptr),
    FASTT_KW("negative", m_neg, nullptr),
    FASTT_KW("absolute", m_abs, nullptr),
    FASTT_KW("greater", m_gt, nullptr),
    FASTT_KW("less", m_lt, nullptr),
    FASTT_KW("greater_equal", m_ge, nullptr),
    FASTT_KW("less_equal", m_le, nullptr),
    FASTT_KW("not_equal", m_ne, nullptr),
    FASTT_KW("clip", m_clamp, nullptr),
    FASTT_KW("clip_", m_clamp_, nullptr),
    FASTT_METHOD_ENTRY(clamp) FASTT_METHOD_ENTRY(clamp_)
    FASTT_METHOD_ENTRY(view) FASTT_METHOD_ENTRY(reshape)
    FASTT_METHOD_ENTRY(view_as) FASTT_METHOD_ENTRY(reshape_as)
    FASTT_METHOD_ENTRY(expand) FASTT_METHOD_ENTRY(expand_as)
    FASTT_METHOD_ENTRY(permute)
    FASTT_KW("swapaxes", m_transpose, nullptr),
    FASTT_KW("swapdims", m_transpose, nullptr),
    FASTT_METHOD_ENTRY(t)
    FASTT_METHOD_ENTRY(contiguous) FASTT_METHOD_ENTRY(clone)
    FASTT_METHOD_ENTRY(detach)
    FASTT_METHOD_ENTRY(zero_)
    FASTT_METHOD_ENTRY(to)
    FASTT_KW("float", m_float_, nullptr),
    FASTT_KW("double", m_double_, nullptr),
    FASTT_KW("half", m_half_, nullptr),
    FASTT_KW("bfloat16", m_bfloat16_, nullptr),
    FASTT_KW("int", m_int_, nullptr),
    FASTT_KW("long", m_long_, nullptr),
    FASTT_KW("short", m_short_, nullptr),
    FASTT_KW("char", m_char_, nullptr),
    FASTT_KW("byte", m_byte_, nullptr),
    FASTT_KW("bool", m_bool_, nullptr),
    FASTT_KW("cfloat", m_cfloat_, nullptr),
    FASTT_KW("cdouble", m_cdouble_, nullptr),
    FASTT_METHOD_ENTRY(type_as) FASTT_METHOD_ENTRY(cpu) FASTT_METHOD_ENTRY(cuda)
    FASTT_METHOD_ENTRY(size) FASTT_METHOD_ENTRY(stride)
    FASTT_NOARGS("dim", m_dim, nullptr),
    FASTT_NOARGS("ndimension", m_dim, nullptr),
    FASTT_NOARGS("numel", m_numel, nullptr),
    FASTT_NOARGS("nelement", m_numel, nullptr),
    FASTT_NOARGS("element_size", m_element_size, nullptr),
    FASTT_KW("is_contiguous", m_is_contiguous, nullptr),
    FASTT_NOARGS("is_floating_point", m_is_floating_point, nullptr),
    FASTT_NOARGS("data_ptr", m_data_ptr, nullptr),
    FASTT_NOARGS("storage_offset", m_storage_offset, nullptr),
    FASTT_NOARGS("item", m_item, nullptr),
    FASTT_NOARGS("tolist", m_tolist, nullptr),
    FASTT_O("__format__", m_format, nullptr),
    FASTT_NOARGS("__copy__", m_copy, nullptr),
    FASTT_O("__deepcopy__", m_deepcopy, nullptr),
    FASTT_O("__reduce_ex__", m_reduce_ex, nullptr),
    FASTT_KW("type", m_type, nullptr),
    FASTT_KW("numpy", tensor_numpy, nullptr),
    FASTT_KW("__array__", tensor_array, nullptr),
    FASTT_KW("__dlpack__", tensor_dlpack, nullptr),
    FASTT_NOARGS("__dlpack_device__", tensor_dlpack_device, nullptr),
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef g_module_functions[] = {
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  FASTT_EW_ENTRIES_##python(FASTT_FN_ENTRY, name)
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
    FASTT_FN_ENTRY2(floor_divide)
    FASTT_FN_ENTRY(add) FASTT_FN_ENTRY(sub) FASTT_FN_ENTRY(div)
    FASTT_KW("subtract", f_sub, nullptr),
    FASTT_KW("multiply", f_mul, nullptr),
    FASTT_KW("divide", f_div, nullptr),
    FASTT_KW("true_divide", f_div, nullptr),
    FASTT_KW("negative", f_neg, nullptr),
    FASTT_KW("absolute", f_abs, nullptr),
    FASTT_KW("greater", f_gt, nullptr),
    FASTT_KW("less", f_lt, nullptr),
    FASTT_KW("greater_equal", f_ge, nullptr),
    FASTT_KW("less_equal", f_le, nullptr),
    FASTT_KW("not_equal", f_ne, nullptr),
    FASTT_KW("clip", f_clamp, nullptr),
    FASTT_FN_ENTRY(leaky_relu) FASTT_FN_ENTRY(where)
    FASTT_FN_ENTRY(clamp) FASTT_FN_ENTRY(clamp_)
    FASTT_FN_ENTRY(reshape) FASTT_FN_ENTRY(permute)
    FASTT_KW("swapaxes", f_transpose, nullptr),
    FASTT_FN_ENTRY(t)
    FASTT_FN_ENTRY(clone) FASTT_FN_ENTRY(detach)
    FASTT_FN_ENTRY(zero_)
    FASTT_O("numel", f_numel, nullptr),
    FASTT_O("is_floating_point", f_is_floating_point, nullptr),
    FASTT_O("is_tensor", f_is_tensor, nullptr),
    FASTT_FAST("_rebuild_tensor", f_rebuild_tensor, nullptr),
    FASTT_NOARGS("get_default_dtype", f_get_default_dtype, nullptr),
    FASTT_O("set_default_dtype", f_set_default_dtype, nullptr),
    FASTT_O("set_num_threads", f_set_num_threads, nullptr),
    FASTT_O("set_flush_denormal", f_set_flush_denormal, nullptr),
    FASTT_NOARGS("get_num_threads", f_get_num_threads, nullptr),
    FASTT_NOARGS("_parallel_info", f_parallel_info, nullptr),
    FASTT_NOARGS("_cpu_isa", f_cpu_isa, nullptr),
    {"_stream_stores", f_stream_stores, METH_VARARGS, nullptr},
    {"_mkldnn", f_mkldnn, METH_VARARGS, nullptr},
    FASTT_O("manual_seed", f_manual_seed, nullptr),
    FASTT_NOARGS("initial_seed", f_initial_seed, nullptr),
    FASTT_NOARGS("_get_rng_state", f_get_rng_state, nullptr),
    FASTT_O("_set_rng_state", f_set_rng_state, nullptr),
    FASTT_NOARGS("seed", f_seed, nullptr),
    FASTT_FAST("promote_types", f_promote_types, nullptr),
    FASTT_FAST("can_cast", f_can_cast, nullptr),
    FASTT_FAST("result_type", f_result_type, nullptr),
    FASTT_NOARGS("_ew_rows", f_ew_rows, nullptr),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace py
}  // namespace fastt

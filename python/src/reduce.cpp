// Bindings of csrc/ops/reduce.h: sum/mean/prod/amax/amin/max/min/argmax/
// argmin/var/std/norm/all/any/logsumexp/cumsum/cumprod/softmax, as methods
// and fastt.* functions with torch's dim/keepdim/dtype keywords.
// (values, indices) results are fastt.return_types structseqs like torch's.
#include "common.h"

#include "csrc/ops/elementwise.h"
#include "csrc/ops/reduce.h"

namespace fastt {
namespace py {


static std::optional<DType> opt_dtype(PyObject* o) {
  if (!given(o)) return std::nullopt;
  return to_dtype(o, DType::Float32);
}
static bool opt_bool(PyObject* o, bool fallback) {
  return given(o) ? to_bool(o, "keepdim") : fallback;
}

// (values, indices) named tuples.
static PyTypeObject* g_values_indices = nullptr;
static PyObject* pair_result(std::pair<Tensor, Tensor>&& p) {
  if (!g_values_indices) {
    static PyStructSequence_Field fields[] = {
        {"values", nullptr}, {"indices", nullptr}, {nullptr, nullptr}};
    static PyStructSequence_Desc desc = {"fastt.return_types.values_indices",
                                         nullptr, fields, 2};
    g_values_indices = PyStructSequence_NewType(&desc);
    if (!g_values_indices) throw_py();
  }
  PyObject* r = PyStructSequence_New(g_values_indices);
  if (!r) throw_py();
  PyObject* a = wrap(std::move(p.first));
  PyObject* b = wrap(std::move(p.second));
  PyStructSequence_SET_ITEM(r, 0, a);
  PyStructSequence_SET_ITEM(r, 1, b);
  if (!a || !b) {
    Py_DECREF(r);
    throw_py();
  }
  return r;
}
static PyObject* tuple_result(std::pair<Tensor, Tensor>&& p) {
  PyObject* a = wrap(std::move(p.first));
  PyObject* b = wrap(std::move(p.second));
  if (!a || !b) {
    Py_XDECREF(a);
    Py_XDECREF(b);
    throw_py();
  }
  return PyTuple_Pack(2, a, b);
}

// A result, or written into out= when given.
static PyObject* result_or_out(PyObject* out, Tensor&& r, const char* name) {
  if (given(out)) return store_out(out, r, name);
  return wrap(std::move(r));
}

// sum / mean: (dim=None, keepdim=False, *, dtype=None, out=None)
#define FASTT_BIND_DIMS_DTYPE(name)                                         \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    if (FASTT_LIKELY(nargs == 0 && !kwnames))                               \
      return wrap(maybe_release_gil(t.numel(),                              \
                                    [&] { return fastt::name(t); }));       \
    static const Signature sig{#name,                                       \
                               {"dim", "keepdim", "$dtype", "out"}, 0};     \
    PyObject* a[4];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    auto dtype = opt_dtype(a[2]);                                           \
    bool keepdim = opt_bool(a[1], false);                                   \
    if (!given(a[0])) {                                                     \
      if (!keepdim) return result_or_out(a[3], fastt::name(t, dtype), #name); \
      return result_or_out(a[3], fastt::name(t, IntList(), true, dtype),    \
                           #name);                                          \
    }                                                                       \
    SmallInts dims;                                                         \
    parse_ints(a[0], &dims, #name);                                         \
    return result_or_out(a[3], maybe_release_gil(t.numel(), [&] {           \
      return fastt::name(t, dims.list(), keepdim, dtype);                   \
    }), #name);                                                             \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)
FASTT_BIND_DIMS_DTYPE(sum)
FASTT_BIND_DIMS_DTYPE(mean)

FASTT_METHOD(prod) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"prod", {"dim", "keepdim", "$dtype", "out"}, 0};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  auto dtype = opt_dtype(a[2]);
  if (!given(a[0])) return result_or_out(a[3], fastt::prod(t, dtype), "prod");
  return result_or_out(a[3],
                       fastt::prod(t, to_int(a[0], "dim"),
                                   opt_bool(a[1], false), dtype),
                       "prod");
  FASTT_PY_END
}
FASTT_FN(prod)

// amax / amin / all / any: (dim=(), keepdim=False, *, out=None)
#define FASTT_BIND_DIMS(name, whole)                                        \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    static const Signature sig{#name, {"dim", "keepdim", "$out"}, 0};       \
    PyObject* a[3];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    bool keepdim = opt_bool(a[1], false);                                   \
    SmallInts dims;                                                         \
    if (given(a[0])) parse_ints(a[0], &dims, #name);                        \
    else if (whole && !keepdim)                                             \
      return result_or_out(a[2], fastt::name(t), #name);                    \
    return result_or_out(a[2], maybe_release_gil(t.numel(), [&] {           \
      return fastt::name(t, dims.list(), keepdim);                          \
    }), #name);                                                             \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)
FASTT_BIND_DIMS(amax, false)
FASTT_BIND_DIMS(amin, false)
FASTT_BIND_DIMS(all, true)
FASTT_BIND_DIMS(any, true)

FASTT_METHOD(logsumexp) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"logsumexp", {"dim", "keepdim"}, 1};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  SmallInts dims;
  parse_ints(a[0], &dims, "logsumexp");
  return wrap(fastt::logsumexp(t, dims.list(), opt_bool(a[1], false)));
  FASTT_PY_END
}
FASTT_FN(logsumexp)

// max() / max(dim, keepdim) -> (values, indices) / max(other) -> maximum.
#define FASTT_BIND_MAXMIN(name, elementwise)                                \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    if (nargs == 0 && !kwnames) return wrap(fastt::name(t));                \
    static const Signature sig{#name, {"dim", "keepdim"}, 0};               \
    PyObject* a[2];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    if (a[0] && is_tensor(a[0]))                                            \
      return wrap(fastt::elementwise(t, unwrap(a[0])));                     \
    if (!given(a[0])) return wrap(fastt::name(t));                          \
    return pair_result(                                                     \
        fastt::name(t, to_int(a[0], "dim"), opt_bool(a[1], false)));        \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)
FASTT_BIND_MAXMIN(max, maximum)
FASTT_BIND_MAXMIN(min, minimum)

#define FASTT_BIND_ARG(name)                                                \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    static const Signature sig{#name, {"dim", "keepdim"}, 0};               \
    PyObject* a[2];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    std::optional<int64_t> dim;                                             \
    if (given(a[0])) dim = to_int(a[0], "dim");                             \
    return wrap(fastt::name(t, dim, opt_bool(a[1], false)));                \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)
FASTT_BIND_ARG(argmax)
FASTT_BIND_ARG(argmin)

// var / std (dim=None, unbiased=True, keepdim=False, *, correction=None)
static void parse_var(PyObject* const* args, Py_ssize_t nargs,
                      PyObject* kwnames, const char* name, SmallInts* dims,
                      double* correction, bool* keepdim) {
  static const Signature sig{"var", {"dim", "unbiased", "keepdim",
                                     "$correction"}, 0};
  PyObject* a[4];
  // var(True) is var(unbiased=True), as in torch.
  if (nargs >= 1 && PyBool_Check(args[0])) {
    static const Signature sig2{"var", {"unbiased", "keepdim"}, 0};
    PyObject* b[2];
    parse_args(sig2, args, nargs, kwnames, b);
    *correction = given(b[0]) && !to_bool(b[0], "unbiased") ? 0 : 1;
    *keepdim = opt_bool(b[1], false);
    return;
  }
  parse_args(sig, args, nargs, kwnames, a);
  if (given(a[0])) parse_ints(a[0], dims, name);
  *correction = 1;
  if (given(a[1]) && !to_bool(a[1], "unbiased")) *correction = 0;
  if (given(a[3])) *correction = to_double(a[3], "correction");
  *keepdim = opt_bool(a[2], false);
}
#define FASTT_BIND_VAR(name, wrapres)                                       \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    SmallInts dims;                                                         \
    double correction;                                                      \
    bool keepdim;                                                           \
    parse_var(args, nargs, kwnames, #name, &dims, &correction, &keepdim);   \
    return wrapres(fastt::name(t, dims.list(), correction, keepdim));       \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)
static PyObject* wrap_t(Tensor&& t) { return wrap(std::move(t)); }
FASTT_BIND_VAR(var, wrap_t)
FASTT_BIND_VAR(std, wrap_t)
FASTT_BIND_VAR(var_mean, tuple_result)
FASTT_BIND_VAR(std_mean, tuple_result)

FASTT_METHOD(norm) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"norm", {"p", "dim", "keepdim", "$dtype"}, 0};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  double p = 2;
  if (given(a[0])) {
    if (PyUnicode_Check(a[0])) {
      const char* s = PyUnicode_AsUTF8(a[0]);
      FASTT_CHECK(s && std::string(s) == "fro", ValueError,
                  "norm: unsupported p '{}'", s ? s : "");
    } else {
      p = to_double(a[0], "p");
    }
  }
  SmallInts dims;
  if (given(a[1])) parse_ints(a[1], &dims, "norm");
  return wrap(fastt::norm(t, p, dims.list(), opt_bool(a[2], false),
                          opt_dtype(a[3])));
  FASTT_PY_END
}
FASTT_FN(norm)

#define FASTT_BIND_DIM_DTYPE(name)                                          \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    static const Signature sig{#name, {"dim", "$dtype"}, 1};                \
    PyObject* a[2];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    return wrap(maybe_release_gil(t.numel(), [&] {                          \
      return fastt::name(t, to_int(a[0], "dim"), opt_dtype(a[1]));          \
    }));                                                                    \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)
FASTT_BIND_DIM_DTYPE(cumsum)
FASTT_BIND_DIM_DTYPE(cumprod)
FASTT_BIND_DIM_DTYPE(softmax)
FASTT_BIND_DIM_DTYPE(log_softmax)

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}
#define FASTT_REDUCE_OPS(X)                                                 \
  X(sum) X(mean) X(prod) X(amax) X(amin) X(all) X(any) X(logsumexp) X(max) \
  X(min) X(argmax) X(argmin) X(var) X(std) X(var_mean) X(std_mean) X(norm) \
  X(cumsum) X(cumprod) X(softmax) X(log_softmax)
#define FASTT_M(name) FASTT_KW(#name, m_##name),
#define FASTT_F(name) FASTT_KW(#name, f_##name),

PyMethodDef g_reduce_methods[] = {
    FASTT_REDUCE_OPS(FASTT_M){nullptr, nullptr, 0, nullptr}};
PyMethodDef g_reduce_functions[] = {
    FASTT_REDUCE_OPS(FASTT_F){nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

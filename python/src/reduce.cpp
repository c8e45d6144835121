// Bindings of csrc/ops/reduce.h: sum/mean/prod/amax/amin/max/min/argmax/
// argmin/var/std/norm/all/any/logsumexp/cumsum/cumprod/softmax, as methods
// and fastt.* functions with torch's dim/keepdim/dtype keywords.
// (values, indices) results are fastt.return_types structseqs like torch's.
#include "binder.h"

#include "csrc/ops/lapack.h"

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

static PyObject* pair_result(std::pair<Tensor, Tensor>&& p) {
  return values_indices(std::move(p.first), std::move(p.second));
}
static PyObject* tuple_result(std::pair<Tensor, Tensor>&& p) {
  return tuple_of(std::move(p.first), std::move(p.second));
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

FASTT_BIND(prod, 0,
           with_out(out, dim ? fastt::prod(t, *dim, keepdim, dtype)
                             : fastt::prod(t, dtype), "prod"),
           (OptInt, dim), (BoolOr<false>, keepdim), (Kw<OptDtype>, dtype),
           (Kw<Out>, out))

// amax / amin / all / any: (dim=(), keepdim=False, *, out=None). all and
// any without dim reduce everything; with dim=() they reduce nothing (torch:
// each element's truth, in all's dtype: a reduction over a new size-1 dim),
// where amax/amin reduce every dim.
#define FASTT_BIND_DIMS(name, whole)                                        \
  FASTT_BIND(name, 0,                                                       \
             with_out(out,                                                  \
                      whole && !dim.given && !keepdim ? fastt::name(t)      \
                      : whole && dim.given && dim.n == 0                    \
                          ? fastt::name(t.unsqueeze(0), {0}, false)         \
                      : maybe_release_gil(t.numel(), [&] {                  \
                          return fastt::name(t, dim, keepdim);              \
                        }),                                                 \
                      #name),                                               \
             (OptInts, dim), (BoolOr<false>, keepdim), (Kw<Out>, out))
FASTT_BIND_DIMS(amax, false)
FASTT_BIND_DIMS(amin, false)
FASTT_BIND_DIMS(all, true)
FASTT_BIND_DIMS(any, true)

FASTT_BIND(logsumexp, 1, fastt::logsumexp(t, dim, keepdim), (Ints, dim),
           (BoolOr<false>, keepdim))

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

FASTT_BIND(argmax, 0, fastt::argmax(t, dim, keepdim), (OptInt, dim),
           (BoolOr<false>, keepdim))
FASTT_BIND(argmin, 0, fastt::argmin(t, dim, keepdim), (OptInt, dim),
           (BoolOr<false>, keepdim))

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

namespace rd {
// norm's p: a number, "fro" (the 2-norm of the flattened dims) or "nuc"
// (the nuclear norm of two dims); 2 when not given or None.
struct NormP {
  double p = 2;
  bool nuclear = false;
};
struct NormOrder {
  static constexpr const char* kStub = "Union[Number, str, None]";
  static NormP read(PyObject* o, const char* n) {
    if (!given(o)) return {};
    if (!PyUnicode_Check(o)) return {to_double(o, n), false};
    const char* s = PyUnicode_AsUTF8(o);
    const std::string p = s ? s : "";
    FASTT_CHECK(p == "fro" || p == "nuc", ValueError,
                "norm: unsupported p '{}'", p);
    return {2, p == "nuc"};
  }
};
}  // namespace rd
FASTT_BIND(norm, 0,
           p.nuclear ? fastt::nuclear_norm(t, dim, keepdim, dtype)
                     : fastt::norm(t, p.p, dim, keepdim, dtype),
           (NormOrder, p), (OptInts, dim), (BoolOr<false>, keepdim),
           (Kw<OptDtype>, dtype))

FASTT_BIND_FUNCTION(_cum_extreme_index, 3,
                    fastt::cum_extreme_index(input, dim, is_max),
                    (Tensor, input), (Int, dim), (BoolOr<true>, is_max))
FASTT_BIND_FUNCTION(_cum_extreme, 3, fastt::cum_extreme(input, dim, is_max),
                    (Tensor, input), (Int, dim), (BoolOr<true>, is_max))

#define FASTT_BIND_DIM_DTYPE(name)                                          \
  FASTT_BIND(name, 1, maybe_release_gil(t.numel(), [&] {                    \
               return fastt::name(t, dim, dtype);                           \
             }),                                                            \
             (Int, dim), (Kw<OptDtype>, dtype))
FASTT_BIND_DIM_DTYPE(cumsum)
FASTT_BIND_DIM_DTYPE(cumprod)
FASTT_BIND_DIM_DTYPE(softmax)
FASTT_BIND_DIM_DTYPE(log_softmax)

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}
#define FASTT_REDUCE_OPS(X) \
  X(sum) X(mean) X(max) X(min) X(var) X(std) X(var_mean) X(std_mean)
#define FASTT_M(name) FASTT_KW(#name, m_##name),
#define FASTT_F(name) FASTT_KW(#name, f_##name),

PyMethodDef g_reduce_methods[] = {
    FASTT_REDUCE_OPS(FASTT_M){nullptr, nullptr, 0, nullptr}};
PyMethodDef g_reduce_functions[] = {
    FASTT_REDUCE_OPS(FASTT_F){nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

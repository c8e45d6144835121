// Bindings of normalization, softmax backward, losses (csrc/ops/nn.h):
// fastt.layer_norm / fastt.rms_norm return the output like torch; the
// underscore functions return every output (None where undefined) for the
// autograd formulas and the tests. To add one: a f_<name> and a table row.
#include "common.h"

#include "csrc/ops/nn.h"

namespace fastt {
namespace py {
namespace {

Tensor opt_tensor(PyObject* o, const char* what) {
  return given(o) ? to_tensor(o, what) : Tensor();
}

PyObject* wrap_opt(Tensor&& t) {
  if (!t.defined()) Py_RETURN_NONE;
  return wrap(std::move(t));
}

// A tuple of tensors (None for undefined ones); steals nothing on failure.
template <class... Ts>
PyObject* tensor_tuple(Ts&&... ts) {
  PyObject* items[] = {wrap_opt(std::move(ts))...};
  constexpr Py_ssize_t n = sizeof...(Ts);
  PyObject* tup = PyTuple_New(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!items[i] || !tup) {
      for (Py_ssize_t k = 0; k < n; ++k) Py_XDECREF(items[k]);
      Py_XDECREF(tup);
      throw_py();
    }
  }
  for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(tup, i, items[i]);
  return tup;
}

// 'none' | 'mean' | 'sum' (torch's names); an int (torch's enum) passes.
int64_t reduction_arg(PyObject* o) {
  if (!given(o)) return kReductionMean;
  if (PyUnicode_Check(o)) {
    const char* s = PyUnicode_AsUTF8(o);
    if (!s) throw_py();
    return reduction_from_name(s);
  }
  return to_int(o, "reduction");
}

template <size_t N>
std::array<bool, N> mask_arg(PyObject* o) {
  std::array<bool, N> m;
  m.fill(true);
  if (!given(o)) return m;
  PyObject* seq = PySequence_Fast(o, "output_mask must be a sequence of bools");
  if (!seq) throw_py();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n != Py_ssize_t(N)) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "output_mask must hold %d bools, got %zd",
                 int(N), n);
    throw_py();
  }
  for (size_t i = 0; i < N; ++i) {
    const int r = PyObject_IsTrue(PySequence_Fast_GET_ITEM(seq, i));
    if (r < 0) {
      Py_DECREF(seq);
      throw_py();
    }
    m[i] = r != 0;
  }
  Py_DECREF(seq);
  return m;
}

std::optional<double> opt_double(PyObject* o, const char* what) {
  if (!given(o)) return std::nullopt;
  return to_double(o, what);
}

PyObject* require(PyObject* o, const char* fname, const char* what) {
  if (!o) {
    PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'",
                 fname, what);
    throw_py();
  }
  return o;
}

// ---- normalization ----
PyObject* f_layer_norm_impl(PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames, bool all_outputs) {
  static const Signature sig{
      "layer_norm", {"input", "normalized_shape", "weight", "bias", "eps"},
      2};
  PyObject* a[5];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  SmallInts shape;
  parse_ints(a[1], &shape, "normalized_shape");
  Tensor w = opt_tensor(a[2], "weight"), b = opt_tensor(a[3], "bias");
  const double eps = given(a[4]) ? to_double(a[4], "eps") : 1e-5;
  auto r = maybe_release_gil(x.numel(), [&] {
    return layer_norm(x, shape.list(), w, b, eps);
  });
  if (!all_outputs) return wrap(std::move(std::get<0>(r)));
  return tensor_tuple(std::move(std::get<0>(r)), std::move(std::get<1>(r)),
                      std::move(std::get<2>(r)));
}
PyObject* f_layer_norm(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  return f_layer_norm_impl(args, nargs, kwnames, false);
  FASTT_PY_END
}
PyObject* f__layer_norm(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  FASTT_PY_BEGIN
  return f_layer_norm_impl(args, nargs, kwnames, true);
  FASTT_PY_END
}

PyObject* f__layer_norm_backward(PyObject*, PyObject* const* args,
                                 Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_layer_norm_backward",
                             {"grad_out", "input", "normalized_shape", "mean",
                              "rstd", "weight", "bias", "output_mask"},
                             5};
  PyObject* a[8];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& g = to_tensor(a[0], "grad_out");
  const Tensor& x = to_tensor(a[1], "input");
  SmallInts shape;
  parse_ints(a[2], &shape, "normalized_shape");
  const Tensor& mean = to_tensor(a[3], "mean");
  const Tensor& rstd = to_tensor(a[4], "rstd");
  Tensor w = opt_tensor(a[5], "weight"), b = opt_tensor(a[6], "bias");
  auto mask = mask_arg<3>(a[7]);
  auto r = maybe_release_gil(x.numel(), [&] {
    return layer_norm_backward(g, x, shape.list(), mean, rstd, w, b, mask);
  });
  return tensor_tuple(std::move(std::get<0>(r)), std::move(std::get<1>(r)),
                      std::move(std::get<2>(r)));
  FASTT_PY_END
}

PyObject* f_rms_norm_impl(PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames, bool all_outputs) {
  static const Signature sig{
      "rms_norm", {"input", "normalized_shape", "weight", "eps"}, 2};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  SmallInts shape;
  parse_ints(a[1], &shape, "normalized_shape");
  Tensor w = opt_tensor(a[2], "weight");
  std::optional<double> eps = opt_double(a[3], "eps");
  auto r = maybe_release_gil(
      x.numel(), [&] { return rms_norm(x, shape.list(), w, eps); });
  if (!all_outputs) return wrap(std::move(std::get<0>(r)));
  return tensor_tuple(std::move(std::get<0>(r)), std::move(std::get<1>(r)));
}
PyObject* f_rms_norm(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames) {
  FASTT_PY_BEGIN
  return f_rms_norm_impl(args, nargs, kwnames, false);
  FASTT_PY_END
}
PyObject* f__rms_norm(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                      PyObject* kwnames) {
  FASTT_PY_BEGIN
  return f_rms_norm_impl(args, nargs, kwnames, true);
  FASTT_PY_END
}

PyObject* f__rms_norm_backward(PyObject*, PyObject* const* args,
                               Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{
      "_rms_norm_backward",
      {"grad_out", "input", "normalized_shape", "rstd", "weight",
       "output_mask"},
      4};
  PyObject* a[6];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& g = to_tensor(a[0], "grad_out");
  const Tensor& x = to_tensor(a[1], "input");
  SmallInts shape;
  parse_ints(a[2], &shape, "normalized_shape");
  const Tensor& rstd = to_tensor(a[3], "rstd");
  Tensor w = opt_tensor(a[4], "weight");
  auto mask = mask_arg<2>(a[5]);
  auto r = maybe_release_gil(x.numel(), [&] {
    return rms_norm_backward(g, x, shape.list(), rstd, w, mask);
  });
  return tensor_tuple(std::move(std::get<0>(r)), std::move(std::get<1>(r)));
  FASTT_PY_END
}

// ---- softmax backward ----
template <Tensor (*Fn)(const Tensor&, const Tensor&, int64_t)>
PyObject* softmax_backward_binding(const char* name, PyObject* const* args,
                                   Py_ssize_t nargs, PyObject* kwnames) {
  const Signature sig{name, {"grad_output", "output", "dim"}, 3};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& g = to_tensor(a[0], "grad_output");
  const Tensor& y = to_tensor(a[1], "output");
  const int64_t dim = to_int(a[2], "dim");
  return wrap(maybe_release_gil(y.numel(), [&] { return Fn(g, y, dim); }));
}
PyObject* f__softmax_backward(PyObject*, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  return softmax_backward_binding<softmax_backward>("_softmax_backward", args,
                                                    nargs, kwnames);
  FASTT_PY_END
}
PyObject* f__log_softmax_backward(PyObject*, PyObject* const* args,
                                  Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  return softmax_backward_binding<log_softmax_backward>(
      "_log_softmax_backward", args, nargs, kwnames);
  FASTT_PY_END
}

// ---- losses ----
PyObject* f__cross_entropy(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_cross_entropy",
                             {"input", "target", "weight", "reduction",
                              "ignore_index", "label_smoothing"},
                             2};
  PyObject* a[6];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  const Tensor& t = to_tensor(a[1], "target");
  Tensor w = opt_tensor(a[2], "weight");
  const int64_t red = reduction_arg(a[3]);
  const int64_t ignore = given(a[4]) ? to_int(a[4], "ignore_index") : -100;
  const double ls = given(a[5]) ? to_double(a[5], "label_smoothing") : 0.0;
  auto r = maybe_release_gil(
      x.numel(), [&] { return cross_entropy(x, t, w, red, ignore, ls); });
  return tensor_tuple(std::move(std::get<0>(r)), std::move(std::get<1>(r)));
  FASTT_PY_END
}

PyObject* f__cross_entropy_backward(PyObject*, PyObject* const* args,
                                    Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_cross_entropy_backward",
                             {"grad", "input", "target", "weight", "reduction",
                              "ignore_index", "label_smoothing", "lse"},
                             3};
  PyObject* a[8];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& g = to_tensor(a[0], "grad");
  const Tensor& x = to_tensor(a[1], "input");
  const Tensor& t = to_tensor(a[2], "target");
  Tensor w = opt_tensor(a[3], "weight");
  const int64_t red = reduction_arg(a[4]);
  const int64_t ignore = given(a[5]) ? to_int(a[5], "ignore_index") : -100;
  const double ls = given(a[6]) ? to_double(a[6], "label_smoothing") : 0.0;
  const Tensor& lse =
      to_tensor(require(a[7], "_cross_entropy_backward", "lse"), "lse");
  return wrap(maybe_release_gil(x.numel(), [&] {
    return cross_entropy_backward(g, x, t, w, red, ignore, ls, lse);
  }));
  FASTT_PY_END
}

PyObject* f__nll_loss(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                      PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{
      "_nll_loss",
      {"input", "target", "weight", "reduction", "ignore_index"},
      2};
  PyObject* a[5];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  const Tensor& t = to_tensor(a[1], "target");
  Tensor w = opt_tensor(a[2], "weight");
  const int64_t red = reduction_arg(a[3]);
  const int64_t ignore = given(a[4]) ? to_int(a[4], "ignore_index") : -100;
  auto r = nll_loss(x, t, w, red, ignore);
  return tensor_tuple(std::move(std::get<0>(r)), std::move(std::get<1>(r)));
  FASTT_PY_END
}

PyObject* f__nll_loss_backward(PyObject*, PyObject* const* args,
                               Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_nll_loss_backward",
                             {"grad", "input", "target", "weight", "reduction",
                              "ignore_index", "total_weight"},
                             3};
  PyObject* a[7];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& g = to_tensor(a[0], "grad");
  const Tensor& x = to_tensor(a[1], "input");
  const Tensor& t = to_tensor(a[2], "target");
  Tensor w = opt_tensor(a[3], "weight");
  const int64_t red = reduction_arg(a[4]);
  const int64_t ignore = given(a[5]) ? to_int(a[5], "ignore_index") : -100;
  const Tensor& tw = to_tensor(
      require(a[6], "_nll_loss_backward", "total_weight"), "total_weight");
  return wrap(maybe_release_gil(x.numel(), [&] {
    return nll_loss_backward(g, x, t, w, red, ignore, tw);
  }));
  FASTT_PY_END
}

PyObject* f__embedding_backward(PyObject*, PyObject* const* args,
                                Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{
      "_embedding_backward",
      {"grad", "indices", "num_weights", "padding_idx"},
      3};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& g = to_tensor(a[0], "grad");
  const Tensor& idx = to_tensor(a[1], "indices");
  const int64_t n = to_int(a[2], "num_weights");
  const int64_t pad = given(a[3]) ? to_int(a[3], "padding_idx") : -1;
  return wrap(maybe_release_gil(
      g.numel(), [&] { return embedding_backward(g, idx, n, pad); }));
  FASTT_PY_END
}

}  // namespace

#define FASTT_NN_KW(name)                                             \
  {#name,                                                             \
   reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f_##name)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr},
PyMethodDef g_nn_functions[] = {
    FASTT_NN_KW(layer_norm) FASTT_NN_KW(rms_norm) FASTT_NN_KW(_layer_norm)
    FASTT_NN_KW(_layer_norm_backward) FASTT_NN_KW(_rms_norm)
    FASTT_NN_KW(_rms_norm_backward) FASTT_NN_KW(_softmax_backward)
    FASTT_NN_KW(_log_softmax_backward) FASTT_NN_KW(_cross_entropy)
    FASTT_NN_KW(_cross_entropy_backward) FASTT_NN_KW(_nll_loss)
    FASTT_NN_KW(_nll_loss_backward) FASTT_NN_KW(_embedding_backward)
    {nullptr, nullptr, 0, nullptr}};
#undef FASTT_NN_KW

}  // namespace py
}  // namespace fastt

// Bindings of convolution and pooling (csrc/ops/conv.h) with
// torch.nn.functional's argument names and defaults, plus the backward
// functions as _C._<name>_backward for tests and autograd. Sizes are an int
// or a tuple/list of ints. To add one: a function here and a table row.
#include "common.h"

#include "csrc/ops/conv.h"

namespace fastt {
namespace py {
namespace {

// An int-or-tuple size argument; `fallback` when absent or None.
SmallInts ints_arg(PyObject* o, const char* what, int64_t fallback) {
  SmallInts r;
  if (!given(o)) {
    r.v[0] = fallback;
    r.n = 1;
    return r;
  }
  parse_ints(o, &r, what);
  return r;
}

// The public convolutions take one value or one per spatial dim (torch's
// message); the 2-per-dim form is for the backward functions only.
void check_conv_len(const SmallInts& v, int spatial, const char* name) {
  FASTT_CHECK(v.n == 1 || v.n == spatial, RuntimeError,
              "expected {} to be a single integer value or a list of {} "
              "values to match the convolution dimensions, but got {}={}",
              name, spatial, name, shape_str(v.list()));
}

Tensor optional_tensor(PyObject* o, const char* what) {
  return given(o) ? to_tensor(o, what) : Tensor();
}

int64_t int_arg(PyObject* o, const char* what, int64_t fallback) {
  return given(o) ? to_int(o, what) : fallback;
}

bool bool_arg(PyObject* o, const char* what, bool fallback) {
  return given(o) ? to_bool(o, what) : fallback;
}

// padding: an int, a tuple, or "same" / "valid" (resolved to ints here).
SmallInts padding_arg(PyObject* o, const Tensor& weight, const SmallInts& s,
                      const SmallInts& d, int spatial, const char* op,
                      bool public_api) {
  if (o && PyUnicode_Check(o)) {
    Py_ssize_t n = 0;
    const char* str = PyUnicode_AsUTF8AndSize(o, &n);
    if (!str) throw_py();
    const ConvPadding mode =
        conv_padding_from_string(std::string_view(str, size_t(n)));
    const std::vector<int64_t> pad =
        conv_padding(mode, weight, s.list(), d.list(), spatial, op);
    SmallInts r;
    for (size_t i = 0; i < pad.size(); ++i) r.v[i] = pad[i];
    r.n = int(pad.size());
    return r;
  }
  SmallInts r = ints_arg(o, "padding", 0);
  if (public_api) check_conv_len(r, spatial, "padding");
  return r;
}

PyObject* grads_tuple(std::tuple<Tensor, Tensor, Tensor>&& g) {
  PyObject* items[3];
  Tensor* ts[3] = {&std::get<0>(g), &std::get<1>(g), &std::get<2>(g)};
  for (int i = 0; i < 3; ++i) {
    if (ts[i]->defined()) {
      items[i] = wrap(std::move(*ts[i]));
    } else {
      Py_INCREF(Py_None);
      items[i] = Py_None;
    }
  }
  PyObject* t = PyTuple_Pack(3, items[0], items[1], items[2]);
  for (PyObject* o : items) Py_DECREF(o);
  return t;
}

std::array<bool, 3> mask_arg(PyObject* o) {
  std::array<bool, 3> m = {true, true, true};
  if (!given(o)) return m;
  PyObject* seq =
      PySequence_Fast(o, "output_mask must be a sequence of 3 bools");
  if (!seq) throw_py();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n != 3) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError,
                    "output_mask must be a sequence of 3 bools");
    throw_py();
  }
  for (Py_ssize_t i = 0; i < 3; ++i) {
    const int r = PyObject_IsTrue(PySequence_Fast_GET_ITEM(seq, i));
    if (r < 0) {
      Py_DECREF(seq);
      throw_py();
    }
    m[size_t(i)] = r != 0;
  }
  Py_DECREF(seq);
  return m;
}

// ---- convolutions ----

template <int Spatial>
PyObject* conv_impl(const char* name, PyObject* const* args, Py_ssize_t nargs,
                    PyObject* kwnames) {
  static const Signature sig{
      Spatial == 1 ? "conv1d" : "conv2d",
      {"input", "weight", "bias", "stride", "padding", "dilation", "groups"},
      2};
  PyObject* a[7];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  const Tensor& w = to_tensor(a[1], "weight");
  const Tensor b = optional_tensor(a[2], "bias");
  const SmallInts s = ints_arg(a[3], "stride", 1);
  const SmallInts d = ints_arg(a[5], "dilation", 1);
  check_conv_len(s, Spatial, "stride");
  check_conv_len(d, Spatial, "dilation");
  const SmallInts p = padding_arg(a[4], w, s, d, Spatial, name, true);
  const int64_t groups = int_arg(a[6], "groups", 1);
  return wrap(maybe_release_gil(x.numel() * w.numel(), [&] {
    return Spatial == 1
               ? fastt::conv1d(x, w, b, s.list(), p.list(), d.list(), groups)
               : fastt::conv2d(x, w, b, s.list(), p.list(), d.list(), groups);
  }));
}

PyObject* f_conv1d(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                   PyObject* kwnames) {
  FASTT_PY_BEGIN
  return conv_impl<1>("conv1d", args, nargs, kwnames);
  FASTT_PY_END
}

PyObject* f_conv2d(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                   PyObject* kwnames) {
  FASTT_PY_BEGIN
  return conv_impl<2>("conv2d", args, nargs, kwnames);
  FASTT_PY_END
}

template <int Spatial>
PyObject* conv_backward_impl(const char* name, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames) {
  static const Signature sig{
      name,
      {"grad_output", "input", "weight", "stride", "padding", "dilation",
       "groups", "output_mask"},
      3};
  PyObject* a[8];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& gy = to_tensor(a[0], "grad_output");
  const Tensor& x = to_tensor(a[1], "input");
  const Tensor& w = to_tensor(a[2], "weight");
  const SmallInts s = ints_arg(a[3], "stride", 1);
  const SmallInts d = ints_arg(a[5], "dilation", 1);
  const SmallInts p = padding_arg(a[4], w, s, d, Spatial, name, false);
  const int64_t groups = int_arg(a[6], "groups", 1);
  const std::array<bool, 3> mask = mask_arg(a[7]);
  return grads_tuple(maybe_release_gil(x.numel() * w.numel(), [&] {
    return Spatial == 1 ? fastt::conv1d_backward(gy, x, w, s.list(), p.list(),
                                                 d.list(), groups, mask)
                        : fastt::conv2d_backward(gy, x, w, s.list(), p.list(),
                                                 d.list(), groups, mask);
  }));
}

PyObject* f_conv1d_backward(PyObject*, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  return conv_backward_impl<1>("_conv1d_backward", args, nargs, kwnames);
  FASTT_PY_END
}

PyObject* f_conv2d_backward(PyObject*, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  return conv_backward_impl<2>("_conv2d_backward", args, nargs, kwnames);
  FASTT_PY_END
}

PyObject* f_conv_transpose2d(PyObject*, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"conv_transpose2d",
                             {"input", "weight", "bias", "stride", "padding",
                              "output_padding", "groups", "dilation"},
                             2};
  PyObject* a[8];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  const Tensor& w = to_tensor(a[1], "weight");
  const Tensor b = optional_tensor(a[2], "bias");
  const SmallInts s = ints_arg(a[3], "stride", 1);
  const SmallInts p = ints_arg(a[4], "padding", 0);
  const SmallInts op = ints_arg(a[5], "output_padding", 0);
  const int64_t groups = int_arg(a[6], "groups", 1);
  const SmallInts d = ints_arg(a[7], "dilation", 1);
  return wrap(maybe_release_gil(x.numel() * w.numel(), [&] {
    return fastt::conv_transpose2d(x, w, b, s.list(), p.list(), op.list(),
                                   groups, d.list());
  }));
  FASTT_PY_END
}

PyObject* f_conv_transpose2d_backward(PyObject*, PyObject* const* args,
                                      Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{
      "_conv_transpose2d_backward",
      {"grad_output", "input", "weight", "stride", "padding",
       "output_padding", "groups", "dilation", "output_mask"},
      3};
  PyObject* a[9];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& gy = to_tensor(a[0], "grad_output");
  const Tensor& x = to_tensor(a[1], "input");
  const Tensor& w = to_tensor(a[2], "weight");
  const SmallInts s = ints_arg(a[3], "stride", 1);
  const SmallInts p = ints_arg(a[4], "padding", 0);
  const SmallInts op = ints_arg(a[5], "output_padding", 0);
  const int64_t groups = int_arg(a[6], "groups", 1);
  const SmallInts d = ints_arg(a[7], "dilation", 1);
  const std::array<bool, 3> mask = mask_arg(a[8]);
  return grads_tuple(maybe_release_gil(x.numel() * w.numel(), [&] {
    return fastt::conv_transpose2d_backward(gy, x, w, s.list(), p.list(),
                                            op.list(), groups, d.list(),
                                            mask);
  }));
  FASTT_PY_END
}

// ---- pooling ----

// stride=None (or an empty list) means stride = kernel_size.
SmallInts stride_arg(PyObject* o) {
  SmallInts r;
  if (given(o)) parse_ints(o, &r, "stride");
  return r;
}

PyObject* pair(Tensor&& a, Tensor&& b) {
  PyObject* x = wrap(std::move(a));
  PyObject* y = wrap(std::move(b));
  PyObject* t = PyTuple_Pack(2, x, y);
  Py_DECREF(x);
  Py_DECREF(y);
  return t;
}

PyObject* max_pool_impl(bool always_indices, PyObject* const* args,
                        Py_ssize_t nargs, PyObject* kwnames) {
  static const Signature sig{"max_pool2d",
                             {"input", "kernel_size", "stride", "padding",
                              "dilation", "ceil_mode", "return_indices"},
                             2};
  PyObject* a[7];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  SmallInts k;
  parse_ints(a[1], &k, "kernel_size");
  const SmallInts s = stride_arg(a[2]);
  const SmallInts p = ints_arg(a[3], "padding", 0);
  const SmallInts d = ints_arg(a[4], "dilation", 1);
  const bool ceil_mode = bool_arg(a[5], "ceil_mode", false);
  const bool indices =
      always_indices || bool_arg(a[6], "return_indices", false);
  auto r = maybe_release_gil(x.numel(), [&] {
    return fastt::max_pool2d_with_indices(x, k.list(), s.list(), p.list(),
                                          d.list(), ceil_mode);
  });
  if (indices)
    return pair(std::move(std::get<0>(r)), std::move(std::get<1>(r)));
  return wrap(std::move(std::get<0>(r)));
}

PyObject* f_max_pool2d(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  return max_pool_impl(false, args, nargs, kwnames);
  FASTT_PY_END
}

PyObject* f_max_pool2d_with_indices(PyObject*, PyObject* const* args,
                                    Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  return max_pool_impl(true, args, nargs, kwnames);
  FASTT_PY_END
}

PyObject* f_max_pool2d_backward(PyObject*, PyObject* const* args,
                                Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_max_pool2d_backward",
                             {"grad_output", "input", "indices"}, 3};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& gy = to_tensor(a[0], "grad_output");
  const Tensor& x = to_tensor(a[1], "input");
  const Tensor& idx = to_tensor(a[2], "indices");
  return wrap(maybe_release_gil(
      x.numel(), [&] { return fastt::max_pool2d_backward(gy, x, idx); }));
  FASTT_PY_END
}

struct AvgArgs {
  SmallInts k, s, p;
  bool ceil_mode, count_include_pad;
  std::optional<int64_t> divisor;
};

// kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override from a[0..5].
AvgArgs avg_args(PyObject** a) {
  AvgArgs r;
  parse_ints(a[0], &r.k, "kernel_size");
  r.s = stride_arg(a[1]);
  r.p = ints_arg(a[2], "padding", 0);
  r.ceil_mode = bool_arg(a[3], "ceil_mode", false);
  r.count_include_pad = bool_arg(a[4], "count_include_pad", true);
  if (given(a[5])) r.divisor = to_int(a[5], "divisor_override");
  return r;
}

PyObject* f_avg_pool2d(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"avg_pool2d",
                             {"input", "kernel_size", "stride", "padding",
                              "ceil_mode", "count_include_pad",
                              "divisor_override"},
                             2};
  PyObject* a[7];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  const AvgArgs v = avg_args(a + 1);
  return wrap(maybe_release_gil(x.numel(), [&] {
    return fastt::avg_pool2d(x, v.k.list(), v.s.list(), v.p.list(),
                             v.ceil_mode, v.count_include_pad, v.divisor);
  }));
  FASTT_PY_END
}

PyObject* f_avg_pool2d_backward(PyObject*, PyObject* const* args,
                                Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_avg_pool2d_backward",
                             {"grad_output", "input", "kernel_size", "stride",
                              "padding", "ceil_mode", "count_include_pad",
                              "divisor_override"},
                             3};
  PyObject* a[8];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& gy = to_tensor(a[0], "grad_output");
  const Tensor& x = to_tensor(a[1], "input");
  const AvgArgs v = avg_args(a + 2);
  return wrap(maybe_release_gil(x.numel(), [&] {
    return fastt::avg_pool2d_backward(gy, x, v.k.list(), v.s.list(),
                                      v.p.list(), v.ceil_mode,
                                      v.count_include_pad, v.divisor);
  }));
  FASTT_PY_END
}

PyObject* f_adaptive_avg_pool2d(PyObject*, PyObject* const* args,
                                Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"adaptive_avg_pool2d",
                             {"input", "output_size"}, 2};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& x = to_tensor(a[0], "input");
  // An int, or a tuple whose None entries keep the input's size (-1).
  SmallInts os;
  PyObject* o = a[1];
  if (PyTuple_Check(o) || PyList_Check(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    FASTT_CHECK(n <= kMaxDims, ValueError,
                "adaptive_avg_pool2d: output_size must be 2");
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = PySequence_Fast_ITEMS(o)[i];
      os.v[i] = item == Py_None ? -1 : to_int(item, "output_size");
    }
    os.n = int(n);
  } else {
    parse_ints(o, &os, "output_size");
  }
  return wrap(maybe_release_gil(
      x.numel(), [&] { return fastt::adaptive_avg_pool2d(x, os.list()); }));
  FASTT_PY_END
}

PyObject* f_adaptive_avg_pool2d_backward(PyObject*, PyObject* const* args,
                                         Py_ssize_t nargs,
                                         PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_adaptive_avg_pool2d_backward",
                             {"grad_output", "input"}, 2};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  const Tensor& gy = to_tensor(a[0], "grad_output");
  const Tensor& x = to_tensor(a[1], "input");
  return wrap(maybe_release_gil(x.numel(), [&] {
    return fastt::adaptive_avg_pool2d_backward(gy, x);
  }));
  FASTT_PY_END
}

}  // namespace

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}

PyMethodDef g_conv_functions[] = {
    FASTT_KW("conv1d", f_conv1d),
    FASTT_KW("conv2d", f_conv2d),
    FASTT_KW("conv_transpose2d", f_conv_transpose2d),
    FASTT_KW("max_pool2d", f_max_pool2d),
    FASTT_KW("max_pool2d_with_indices", f_max_pool2d_with_indices),
    FASTT_KW("avg_pool2d", f_avg_pool2d),
    FASTT_KW("adaptive_avg_pool2d", f_adaptive_avg_pool2d),
    FASTT_KW("_conv1d_backward", f_conv1d_backward),
    FASTT_KW("_conv2d_backward", f_conv2d_backward),
    FASTT_KW("_conv_transpose2d_backward", f_conv_transpose2d_backward),
    FASTT_KW("_max_pool2d_backward", f_max_pool2d_backward),
    FASTT_KW("_avg_pool2d_backward", f_avg_pool2d_backward),
    FASTT_KW("_adaptive_avg_pool2d_backward", f_adaptive_avg_pool2d_backward),
    {nullptr, nullptr, 0, nullptr}};

#undef FASTT_KW

}  // namespace py
}  // namespace fastt

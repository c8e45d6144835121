// Bindings of convolution and pooling (csrc/ops/conv.h) with
// torch.nn.functional's argument names and defaults, plus the backward
// functions as _C._<name>_backward for tests and autograd: binder rows
// (binder.h). Sizes are an int or a tuple/list of ints.
#include "binder.h"

#include "csrc/ops/conv.h"

namespace fastt {
namespace py {
namespace rd {

// padding: an int, a tuple, or "same" / "valid" (resolved by conv_pads).
struct Padding {
  static constexpr const char* kStub = "Union[_Ints, str]";
  struct Value {
    IntsValue ints;
    const char* mode = nullptr;  // "same" / "valid", or nullptr for ints
    Py_ssize_t mode_len = 0;
  };
  static Value read(PyObject* o, const char* n) {
    Value v;
    if (o && PyUnicode_Check(o)) {
      v.mode = PyUnicode_AsUTF8AndSize(o, &v.mode_len);
      if (!v.mode) throw_py();
    } else {
      v.ints = IntsOr<0>::read(o, n);
    }
    return v;
  }
};

// adaptive pooling's output_size: an int, or a tuple whose None entries
// keep the input's size (-1).
struct OutputSize {
  static constexpr const char* kStub = "Union[_int, Sequence[Optional[_int]]]";
  static IntsValue read(PyObject* o, const char* n) {
    IntsValue v;
    v.given = true;
    if (!PyTuple_Check(o) && !PyList_Check(o)) {
      parse_ints(o, &v, n);
      check(v);
      return v;
    }
    const Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
    FASTT_CHECK(len <= kMaxDims, ValueError,
                "adaptive_avg_pool2d: output_size must be 2");
    for (Py_ssize_t i = 0; i < len; ++i) {
      PyObject* item = PySequence_Fast_ITEMS(o)[i];
      v.v[i] = item == Py_None ? -1 : to_int(item, n);
      FASTT_CHECK(item == Py_None || v.v[i] >= 0, RuntimeError,
                  "adaptive_avg_pool2d(): elements of output_size must be "
                  "greater than or equal to 0 but received {}",
                  v.v[i]);
    }
    v.n = int(len);
    return v;
  }
  // An int given as such (-1 stands for None only inside a tuple).
  static void check(const IntsValue& v) {
    for (int i = 0; i < v.n; ++i)
      FASTT_CHECK(v.v[i] >= 0, RuntimeError,
                  "adaptive_avg_pool2d(): elements of output_size must be "
                  "greater than or equal to 0 but received {}",
                  v.v[i]);
  }
};

}  // namespace rd
using rd::OutputSize;
using rd::Padding;

namespace {

// The public convolutions take one value or one per spatial dim (torch's
// message); the 2-per-dim padding form is for the backward functions only.
void check_conv_len(const SmallInts& v, int spatial, const char* name) {
  FASTT_CHECK(v.n == 1 || v.n == spatial, RuntimeError,
              "expected {} to be a single integer value or a list of {} "
              "values to match the convolution dimensions, but got {}={}",
              name, spatial, name, shape_str(v.list()));
}

// The explicit pads of a padding argument ("same" / "valid" resolved).
SmallInts conv_pads(const Padding::Value& p, const Tensor& weight,
                    const SmallInts& s, const SmallInts& d, int spatial,
                    const char* op, bool public_api) {
  if (!p.mode) {
    if (public_api) check_conv_len(p.ints, spatial, "padding");
    return p.ints;
  }
  const ConvPadding mode =
      conv_padding_from_string(std::string_view(p.mode, size_t(p.mode_len)));
  const std::vector<int64_t> pad =
      conv_padding(mode, weight, s.list(), d.list(), spatial, op);
  SmallInts r;
  for (size_t i = 0; i < pad.size(); ++i) r.v[i] = pad[i];
  r.n = int(pad.size());
  return r;
}

template <int Spatial>
Tensor conv(const char* op, const Tensor& x, const Tensor& w, const Tensor& b,
            const IntsValue& s, const Padding::Value& padding,
            const IntsValue& d, int64_t groups) {
  check_conv_len(s, Spatial, "stride");
  check_conv_len(d, Spatial, "dilation");
  const SmallInts p = conv_pads(padding, w, s, d, Spatial, op, true);
  return maybe_release_gil(x.numel() * w.numel(), [&] {
    return Spatial == 1
               ? fastt::conv1d(x, w, b, s.list(), p.list(), d.list(), groups)
               : fastt::conv2d(x, w, b, s.list(), p.list(), d.list(), groups);
  });
}

template <int Spatial>
std::tuple<Tensor, Tensor, Tensor> conv_backward(
    const char* op, const Tensor& gy, const Tensor& x, const Tensor& w,
    const IntsValue& s, const Padding::Value& padding, const IntsValue& d,
    int64_t groups, std::array<bool, 3> mask) {
  const SmallInts p = conv_pads(padding, w, s, d, Spatial, op, false);
  return maybe_release_gil(x.numel() * w.numel(), [&] {
    return Spatial == 1 ? fastt::conv1d_backward(gy, x, w, s.list(), p.list(),
                                                 d.list(), groups, mask)
                        : fastt::conv2d_backward(gy, x, w, s.list(), p.list(),
                                                 d.list(), groups, mask);
  });
}

// max_pool2d's result: the values, or (values, indices).
PyObject* max_pool(std::tuple<Tensor, Tensor>&& r, bool indices) {
  if (indices) return tuple_of(std::move(std::get<0>(r)),
                               std::move(std::get<1>(r)));
  return wrap(std::move(std::get<0>(r)));
}

}  // namespace

// ---- convolutions ----
// stride=None (or an empty list) in pooling means stride = kernel_size.
#define FASTT_CONV_ARGS                                                     \
  (Tensor, input), (Tensor, weight), (OptTensor, bias), (IntsOr<1>, stride), \
      (Padding, padding), (IntsOr<1>, dilation), (IntOr<1>, groups)
#define FASTT_BIND_CONV(n)                                                  \
  FASTT_BIND_FUNCTION(conv##n##d, 2,                                        \
                      conv<n>("conv" #n "d", input, weight, bias, stride,   \
                              padding, dilation, groups),                   \
                      FASTT_CONV_ARGS)                                      \
  FASTT_BIND_FUNCTION(_conv##n##d_backward, 3,                              \
                      conv_backward<n>("_conv" #n "d_backward", grad_output, \
                                       input, weight, stride, padding,      \
                                       dilation, groups, output_mask),      \
                      (Tensor, grad_output), (Tensor, input),               \
                      (Tensor, weight), (IntsOr<1>, stride),                \
                      (Padding, padding), (IntsOr<1>, dilation),            \
                      (IntOr<1>, groups), (Mask<3>, output_mask))
FASTT_BIND_CONV(1)
FASTT_BIND_CONV(2)
#undef FASTT_BIND_CONV
#undef FASTT_CONV_ARGS

FASTT_BIND_FUNCTION(conv_transpose2d, 2,
                    maybe_release_gil(input.numel() * weight.numel(), [&] {
                      return fastt::conv_transpose2d(
                          input, weight, bias, stride, padding,
                          output_padding, groups, dilation);
                    }),
                    (Tensor, input), (Tensor, weight), (OptTensor, bias),
                    (IntsOr<1>, stride), (IntsOr<0>, padding),
                    (IntsOr<0>, output_padding), (IntOr<1>, groups),
                    (IntsOr<1>, dilation))
FASTT_BIND_FUNCTION(_conv_transpose2d_backward, 3,
                    maybe_release_gil(input.numel() * weight.numel(), [&] {
                      return fastt::conv_transpose2d_backward(
                          grad_output, input, weight, stride, padding,
                          output_padding, groups, dilation, output_mask);
                    }),
                    (Tensor, grad_output), (Tensor, input), (Tensor, weight),
                    (IntsOr<1>, stride), (IntsOr<0>, padding),
                    (IntsOr<0>, output_padding), (IntOr<1>, groups),
                    (IntsOr<1>, dilation), (Mask<3>, output_mask))

// ---- pooling ----
#define FASTT_MAX_POOL_CALL                                                 \
  maybe_release_gil(input.numel(), [&] {                                    \
    return fastt::max_pool2d_with_indices(input, kernel_size, stride,       \
                                          padding, dilation, ceil_mode);    \
  })
#define FASTT_MAX_POOL_ARGS                                                 \
  (Tensor, input), (Ints, kernel_size), (OptInts, stride),                  \
      (IntsOr<0>, padding), (IntsOr<1>, dilation),                          \
      (BoolOr<false>, ceil_mode), (BoolOr<false>, return_indices)
FASTT_BIND_FUNCTION(max_pool2d, 2, max_pool(FASTT_MAX_POOL_CALL, return_indices),
                    FASTT_MAX_POOL_ARGS)
FASTT_BIND_FUNCTION(max_pool2d_with_indices, 2, FASTT_MAX_POOL_CALL,
                    FASTT_MAX_POOL_ARGS)
#undef FASTT_MAX_POOL_ARGS
#undef FASTT_MAX_POOL_CALL
FASTT_BIND_FUNCTION(_max_pool2d_backward, 3,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::max_pool2d_backward(grad_output, input,
                                                        indices);
                    }),
                    (Tensor, grad_output), (Tensor, input), (Tensor, indices))

#define FASTT_AVG_POOL_ARGS                                                  \
  (Ints, kernel_size), (OptInts, stride), (IntsOr<0>, padding),              \
      (BoolOr<false>, ceil_mode), (BoolOr<true>, count_include_pad),         \
      (OptInt, divisor_override)
FASTT_BIND_FUNCTION(avg_pool2d, 2,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::avg_pool2d(input, kernel_size, stride,
                                               padding, ceil_mode,
                                               count_include_pad,
                                               divisor_override);
                    }),
                    (Tensor, input), FASTT_AVG_POOL_ARGS)
FASTT_BIND_FUNCTION(_avg_pool2d_backward, 3,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::avg_pool2d_backward(
                          grad_output, input, kernel_size, stride, padding,
                          ceil_mode, count_include_pad, divisor_override);
                    }),
                    (Tensor, grad_output), (Tensor, input),
                    FASTT_AVG_POOL_ARGS)
#undef FASTT_AVG_POOL_ARGS

FASTT_BIND_FUNCTION(adaptive_avg_pool2d, 2,
                    ([&] {
                      // torch's F reads output_size against the input's
                      // last two dims first: under 3 dims, ValueError.
                      FASTT_CHECK(input.dim() >= 3, ValueError,
                                  "adaptive_avg_pool2d(): Input dimension "
                                  "should be at least 3, but got {}",
                                  input.dim());
                      return maybe_release_gil(input.numel(), [&] {
                        return fastt::adaptive_avg_pool2d(input,
                                                          output_size);
                      });
                    }()),
                    (Tensor, input), (OutputSize, output_size))
FASTT_BIND_FUNCTION(_adaptive_avg_pool2d_backward, 2,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::adaptive_avg_pool2d_backward(grad_output,
                                                                 input);
                    }),
                    (Tensor, grad_output), (Tensor, input))

}  // namespace py
}  // namespace fastt

// Bindings of normalization, softmax backward, losses (csrc/ops/nn.h):
// fastt.layer_norm / fastt.rms_norm return the output like torch; the
// underscore functions return every output (None where undefined) for the
// autograd formulas and the tests. To add one: a row (binder.h).
#include "binder.h"

#include "csrc/ops/nn.h"
#include "csrc/ops/rnn.h"

namespace fastt {
namespace py {
namespace rd {

// 'none' | 'mean' | 'sum' (torch's names); an int (torch's enum) passes.
struct Reduction {
  static constexpr const char* kStub = "Union[str, _int]";
  static int64_t read(PyObject* o, const char*) {
    if (!given(o)) return kReductionMean;
    if (PyUnicode_Check(o)) {
      const char* s = PyUnicode_AsUTF8(o);
      if (!s) throw_py();
      return reduction_from_name(s);
    }
    return to_int(o, "reduction");
  }
};


}  // namespace rd
namespace {

// ---- normalization ----
FASTT_BIND_FUNCTION(layer_norm, 2, maybe_release_gil(input.numel(), [&] {
                      return std::get<0>(fastt::layer_norm(
                          input, normalized_shape, weight, bias, eps));
                    }),
                    (Tensor, input), (Ints, normalized_shape),
                    (OptTensor, weight), (OptTensor, bias),
                    (DoubleOr<Eps5>, eps))
FASTT_BIND_FUNCTION(_layer_norm, 2, maybe_release_gil(input.numel(), [&] {
                      return fastt::layer_norm(input, normalized_shape,
                                               weight, bias, eps);
                    }),
                    (Tensor, input), (Ints, normalized_shape),
                    (OptTensor, weight), (OptTensor, bias),
                    (DoubleOr<Eps5>, eps))
FASTT_BIND_FUNCTION(_layer_norm_backward, 5,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::layer_norm_backward(
                          grad_out, input, normalized_shape, mean, rstd,
                          weight, bias, output_mask);
                    }),
                    (Tensor, grad_out), (Tensor, input),
                    (Ints, normalized_shape), (Tensor, mean), (Tensor, rstd),
                    (OptTensor, weight), (OptTensor, bias),
                    (Mask<3>, output_mask))
FASTT_BIND_FUNCTION(rms_norm, 2, maybe_release_gil(input.numel(), [&] {
                      return std::get<0>(fastt::rms_norm(
                          input, normalized_shape, weight, eps));
                    }),
                    (Tensor, input), (Ints, normalized_shape),
                    (OptTensor, weight), (OptDouble, eps))
FASTT_BIND_FUNCTION(_rms_norm, 2, maybe_release_gil(input.numel(), [&] {
                      return fastt::rms_norm(input, normalized_shape, weight,
                                             eps);
                    }),
                    (Tensor, input), (Ints, normalized_shape),
                    (OptTensor, weight), (OptDouble, eps))
FASTT_BIND_FUNCTION(_rms_norm_backward, 4,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::rms_norm_backward(grad_out, input,
                                                      normalized_shape, rstd,
                                                      weight, output_mask);
                    }),
                    (Tensor, grad_out), (Tensor, input),
                    (Ints, normalized_shape), (Tensor, rstd),
                    (OptTensor, weight), (Mask<2>, output_mask))

// ---- softmax backward ----
#define FASTT_BIND_SOFTMAX_BACKWARD(name)                                   \
  FASTT_BIND_FUNCTION(_##name, 3, maybe_release_gil(output.numel(), [&] {   \
                        return fastt::name(grad_output, output, dim);       \
                      }),                                                   \
                      (Tensor, grad_output), (Tensor, output), (Int, dim))
FASTT_BIND_SOFTMAX_BACKWARD(softmax_backward)
FASTT_BIND_SOFTMAX_BACKWARD(log_softmax_backward)
#undef FASTT_BIND_SOFTMAX_BACKWARD

// ---- fused attention (CPU) ----
FASTT_BIND_FUNCTION(_flash_attention, 3,
                    maybe_release_gil(query.numel() + key.numel(), [&] {
                      return fastt::flash_attention(query, key, value,
                                                    attn_mask, scale,
                                                    is_causal);
                    }),
                    (Tensor, query), (Tensor, key), (Tensor, value),
                    (OptTensor, attn_mask), (DoubleOr<One>, scale),
                    (BoolOr<false>, is_causal))
FASTT_BIND_FUNCTION(_flash_attention_backward, 7,
                    maybe_release_gil(query.numel() + key.numel(), [&] {
                      return fastt::flash_attention_backward(
                          grad_out, query, key, value, attn_mask, out, lse,
                          scale, is_causal);
                    }),
                    (Tensor, grad_out), (Tensor, query), (Tensor, key),
                    (Tensor, value), (OptTensor, attn_mask), (Tensor, out),
                    (Tensor, lse), (DoubleOr<One>, scale),
                    (BoolOr<false>, is_causal))

// ---- losses ----
FASTT_BIND_FUNCTION(_cross_entropy, 2, maybe_release_gil(input.numel(), [&] {
                      return fastt::cross_entropy(input, target, weight,
                                                  reduction, ignore_index,
                                                  label_smoothing);
                    }),
                    (Tensor, input), (Tensor, target), (OptTensor, weight),
                    (Reduction, reduction), (IntOr<-100>, ignore_index),
                    (DoubleOr<Zero>, label_smoothing))
FASTT_BIND_FUNCTION(_cross_entropy_backward, 3,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::cross_entropy_backward(
                          grad, input, target, weight, reduction,
                          ignore_index, label_smoothing, lse);
                    }),
                    (Tensor, grad), (Tensor, input), (Tensor, target),
                    (OptTensor, weight), (Reduction, reduction),
                    (IntOr<-100>, ignore_index),
                    (DoubleOr<Zero>, label_smoothing),
                    (Required<rd::Tensor>, lse))
FASTT_BIND_FUNCTION(_nll_loss, 2,
                    fastt::nll_loss(input, target, weight, reduction,
                                    ignore_index),
                    (Tensor, input), (Tensor, target), (OptTensor, weight),
                    (Reduction, reduction), (IntOr<-100>, ignore_index))
FASTT_BIND_FUNCTION(_nll_loss_backward, 3,
                    maybe_release_gil(input.numel(), [&] {
                      return fastt::nll_loss_backward(grad, input, target,
                                                      weight, reduction,
                                                      ignore_index,
                                                      total_weight);
                    }),
                    (Tensor, grad), (Tensor, input), (Tensor, target),
                    (OptTensor, weight), (Reduction, reduction),
                    (IntOr<-100>, ignore_index),
                    (Required<rd::Tensor>, total_weight))
FASTT_BIND_FUNCTION(_embedding_backward, 3,
                    maybe_release_gil(grad.numel(), [&] {
                      return fastt::embedding_backward(grad, indices,
                                                       num_weights,
                                                       padding_idx);
                    }),
                    (Tensor, grad), (Tensor, indices), (Int, num_weights),
                    (IntOr<-1>, padding_idx))

// _rnn_layer(mode, gi, h0, c0, w_hh, b_hh, w_hr, batch_sizes, reverse) ->
// (out, h_n, c_n): one recurrent layer and direction (csrc/ops/rnn.h);
// fastt.nn's RNN, LSTM and GRU compose layers and directions from it.
FASTT_BIND_FUNCTION(_rnn_layer, 9, maybe_release_gil(gi.numel(), [&] {
                      return fastt::rnn_layer(mode, gi, h0, c0, w_hh, b_hh,
                                              w_hr, batch_sizes, reverse);
                    }),
                    (Int, mode), (Tensor, gi), (Tensor, h0), (OptTensor, c0),
                    (Tensor, w_hh), (OptTensor, b_hh), (OptTensor, w_hr),
                    (Ints, batch_sizes), (BoolOr<false>, reverse))

}  // namespace

}  // namespace py
}  // namespace fastt

// Fused neural-net ops: layer/RMS norm, softmax backward, cross-entropy,
// NLL and embedding backward, each as a plain forward and a plain backward
// function (autograd calls the backward ones; nothing here records).
// Kernels: kernels/cpu/norm.cpp, loss.cpp, softmax.cpp. To add one: a row in
// ops.def, a kernel there, an entry point here.
#pragma once
#include <array>
#include <optional>
#include <tuple>

#include "../tensor.h"

namespace fastt {

// torch's Reduction enum: the values the `reduction` arguments take.
enum Reduction : int64_t { kReductionNone = 0, kReductionMean = 1,
                           kReductionSum = 2 };
// "none" / "mean" / "sum" -> Reduction; ValueError otherwise.
int64_t reduction_from_name(const char* name);

// ---- softmax backward (grad_out and out as softmax/log_softmax gave) ----
// softmax:     grad_in = out * (grad_out - sum(grad_out * out, dim))
// log_softmax: grad_in = grad_out - exp(out) * sum(grad_out, dim)
Tensor softmax_backward(const Tensor& grad_out, const Tensor& out,
                        int64_t dim);
Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& out,
                            int64_t dim);

// ---- layer norm (torch.native_layer_norm) ----
// Normalizes over the trailing dims `normalized_shape`. Returns (out, mean,
// rstd) where mean and rstd have shape x.shape[:axis] + [1] * len(shape)
// and x's dtype. weight/bias may be undefined.
std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x,
                                              IntList normalized_shape,
                                              const Tensor& weight,
                                              const Tensor& bias,
                                              double eps = 1e-5);
// (dx, dweight, dbias); an output is undefined when its mask bit is off or
// (dweight, dbias) when weight / bias is undefined.
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(
    const Tensor& grad_out, const Tensor& x, IntList normalized_shape,
    const Tensor& mean, const Tensor& rstd, const Tensor& weight,
    const Tensor& bias, std::array<bool, 3> mask);

// ---- RMS norm (torch.nn.functional.rms_norm) ----
// out = x * rsqrt(mean(x^2) + eps) * weight; eps defaults to the dtype's
// machine epsilon. Returns (out, rstd); rstd is float32 for 16-bit inputs.
std::tuple<Tensor, Tensor> rms_norm(const Tensor& x, IntList normalized_shape,
                                    const Tensor& weight,
                                    std::optional<double> eps = std::nullopt);
std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_out,
                                             const Tensor& x,
                                             IntList normalized_shape,
                                             const Tensor& rstd,
                                             const Tensor& weight,
                                             std::array<bool, 2> mask);

// ---- fused attention (csrc/ops/attention.cpp; CPU only) ----
// softmax(q k^T * scale + mask) v without the [L, S] matrix, as torch's
// _scaled_dot_product_flash_attention_for_cpu: q [N, H, L, E], k
// [N, Hk, S, E], v [N, Hk, S, Ev] (H a multiple of Hk: grouped-query
// attention), float32 or float64; mask undefined or an additive float mask
// of q's dtype broadcastable to [N, H, L, S]; causal: key j <= query i.
// Returns (out [N, H, L, Ev], lse [N, H, L]); a row whose keys are all
// masked gives 0 (and lse -inf). Differentiable in q, k and v.
std::tuple<Tensor, Tensor> flash_attention(const Tensor& q, const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& mask, double scale,
                                           bool causal);
// (dq, dk, dv) from the forward's inputs, out and lse.
std::tuple<Tensor, Tensor, Tensor> flash_attention_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
    const Tensor& mask, const Tensor& out, const Tensor& lse, double scale,
    bool causal);

// ---- losses with class-index targets ----
// logits [N, C], [C] (target 0-d) or [N, C, d1, ...] (target [N, d1, ...]),
// int64 (or uint8) target. Returns (loss, lse): lse is the per-position
// logsumexp (target's shape, float64 so that logits of 1e4 keep their
// softmax exact) that the backward reuses.
std::tuple<Tensor, Tensor> cross_entropy(const Tensor& logits,
                                         const Tensor& target,
                                         const Tensor& weight,
                                         int64_t reduction = kReductionMean,
                                         int64_t ignore_index = -100,
                                         double label_smoothing = 0.0);
Tensor cross_entropy_backward(const Tensor& grad_loss, const Tensor& logits,
                              const Tensor& target, const Tensor& weight,
                              int64_t reduction, int64_t ignore_index,
                              double label_smoothing, const Tensor& lse);

// input holds log-probabilities, same layouts as cross_entropy. Returns
// (loss, total_weight): the sum of the target weights of non-ignored
// positions (0 for reduction none), a 0-d tensor of input's dtype.
std::tuple<Tensor, Tensor> nll_loss(const Tensor& input, const Tensor& target,
                                    const Tensor& weight,
                                    int64_t reduction = kReductionMean,
                                    int64_t ignore_index = -100);
Tensor nll_loss_backward(const Tensor& grad_loss, const Tensor& input,
                         const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight);

// ---- embedding ----
// Dense gradient of embedding(indices, weight[num_weights, D]) given grad
// [*indices.shape, D]: rows of equal indices accumulate, the padding_idx row
// (negative: none) stays zero.
Tensor embedding_backward(const Tensor& grad, const Tensor& indices,
                          int64_t num_weights, int64_t padding_idx = -1);

// ---- Argument layouts shared with the kernels ----
// The norm and loss rows pass in[0] = an array of tensors in this order
// (undefined: absent input or unwanted output); see the rows in ops.def.
namespace nn_args {
enum LayerNorm { kLnX, kLnWeight, kLnBias, kLnOut, kLnMean, kLnRstd, kLnN };
enum LayerNormBackward {
  kLnbGrad, kLnbX, kLnbMean, kLnbRstd, kLnbWeight,
  kLnbDx, kLnbDweight, kLnbDbias, kLnbN
};
enum RmsNorm { kRmsX, kRmsWeight, kRmsOut, kRmsRstd, kRmsN };
enum RmsNormBackward {
  kRmsbGrad, kRmsbX, kRmsbRstd, kRmsbWeight, kRmsbDx, kRmsbDweight, kRmsbN
};
// Loss forward: aux = lse (cross_entropy) or total_weight (nll_loss).
enum Loss { kLossInput, kLossTarget, kLossWeight, kLossOut, kLossAux, kLossN };
// Loss backward: aux as forward; out = the gradient of input.
enum LossBackward {
  kLbGrad, kLbInput, kLbTarget, kLbWeight, kLbAux, kLbOut, kLbN
};
// Flash attention (csrc/ops/attention.cpp; kernels/cpu/attention.cpp's
// FaFwdSlot and FaBwdSlot).
enum FlashAttention { kFaQ, kFaK, kFaV, kFaMask, kFaOut, kFaLse, kFaFwdN };
enum FlashAttentionBackward {
  kFbGrad, kFbQ, kFbK, kFbV, kFbMask, kFbOut, kFbLse, kFbDq, kFbDk, kFbDv,
  kFbN
};
// args.dims of the loss rows.
enum LossDims { kDimN, kDimC, kDimInner, kDimReduction, kDimIgnore, kDimCount };
}  // namespace nn_args

}  // namespace fastt

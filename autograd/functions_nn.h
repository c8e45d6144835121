// Recording functions of the nn ops (csrc/ops/conv.h, csrc/ops/nn.h); see
// formulas_nn.cpp. Each runs the op with grad mode off and records one node
// whose formula calls the op's fused backward function.
#pragma once
#include <vector>
#include <optional>
#include <tuple>

#include "autograd/functions.h"

namespace fastt {
namespace autograd {

enum class ConvKind : int64_t { Conv1d = 1, Conv2d = 2, Transpose2d = 3 };
Tensor conv(ConvKind kind, const Tensor& x, const Tensor& w, const Tensor& b,
            IntList stride, IntList padding, IntList dilation, int64_t groups,
            IntList output_padding, Compute compute);
std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x,
                                      FnRef<std::tuple<Tensor, Tensor>()> f);
Tensor avg_pool2d(const Tensor& x, IntList kernel, IntList stride,
                  IntList padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor, Compute compute);
Tensor adaptive_avg_pool2d(const Tensor& x, Compute compute);
std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x,
                                              IntList normalized_shape,
                                              const Tensor& w,
                                              const Tensor& b, double eps);
std::tuple<Tensor, Tensor> rms_norm(const Tensor& x, IntList normalized_shape,
                                    const Tensor& w,
                                    std::optional<double> eps);
std::tuple<Tensor, Tensor> cross_entropy(const Tensor& logits,
                                         const Tensor& target,
                                         const Tensor& weight,
                                         int64_t reduction,
                                         int64_t ignore_index,
                                         double label_smoothing);
std::tuple<Tensor, Tensor> flash_attention(const Tensor& q, const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& mask, double scale,
                                           bool causal);
// One recurrent layer and direction (csrc/ops/rnn.h): one node, its
// backward through time in formula RnnLayer.
std::vector<Tensor> rnn_layer(int64_t mode, const Tensor& gi, const Tensor& h0,
                              const Tensor& c0, const Tensor& w_hh,
                              const Tensor& b_hh, const Tensor& w_hr,
                              IntList batch_sizes, bool reverse);
std::tuple<Tensor, Tensor> nll_loss(const Tensor& input, const Tensor& target,
                                    const Tensor& weight, int64_t reduction,
                                    int64_t ignore_index);

}  // namespace autograd
}  // namespace fastt

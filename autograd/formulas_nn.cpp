// Recording and backward formulas of the nn ops: convolution, pooling,
// layer/RMS norm and the fused losses. Their formulas call the ops' fused
// backward kernels (csrc/ops/conv.h, csrc/ops/nn.h), which do not record:
// a second derivative through them raises instead of being silently wrong.
#include "autograd/functions_nn.h"

#include "autograd/formulas.h"
#include "autograd/node.h"
#include "csrc/ops.h"
#include "csrc/ops/conv.h"
#include "csrc/ops/nn.h"
#include "csrc/ops/rnn.h"

namespace fastt {
namespace autograd {
namespace {

template <class F>
auto no_grad(F&& f) {
  GradModeGuard guard(false);
  return f();
}

// ints layout for window ops: [n, values...] per list, in order.
void push_list(std::vector<int64_t>& v, IntList l) {
  v.push_back(int64_t(l.size()));
  v.insert(v.end(), l.begin(), l.end());
}
IntList list_at(const std::vector<int64_t>& v, size_t& pos) {
  const size_t n = size_t(v[pos]);
  IntList l(v.data() + pos + 1, n);
  pos += n + 1;
  return l;
}

void no_double_backward(const Node& n) {
  if (grad_enabled())
    throw NotImplementedError(fmt::format(
        "{}: double backward (create_graph=True) through this fused op is "
        "not supported",
        grad_fn_name(n.fn)));
}

}  // namespace

Tensor conv(ConvKind kind, const Tensor& x, const Tensor& w, const Tensor& b,
            IntList stride, IntList padding, IntList dilation, int64_t groups,
            IntList output_padding, Compute compute) {
  Tensor out = no_grad(compute);
  NodeRef n = make_node(GradFn::Convolution, {&x, &w, &b});
  n->save(0, x);
  n->save(1, w);
  n->i0 = int64_t(kind);
  n->i1 = groups;
  push_list(n->ints, stride);
  push_list(n->ints, padding);
  push_list(n->ints, dilation);
  push_list(n->ints, output_padding);
  set_history(out, n.get());
  return out;
}

std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x,
                                      FnRef<std::tuple<Tensor, Tensor>()> f) {
  auto r = no_grad(f);
  NodeRef n = make_node(GradFn::MaxPool2d, {&x});
  n->save(0, x);
  n->save(1, std::get<1>(r));  // indices: no history
  set_history(std::get<0>(r), n.get());
  return r;
}

Tensor avg_pool2d(const Tensor& x, IntList kernel, IntList stride,
                  IntList padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor, Compute compute) {
  Tensor out = no_grad(compute);
  NodeRef n = make_node(GradFn::AvgPool2d, {&x});
  n->save(0, x);
  push_list(n->ints, kernel);
  push_list(n->ints, stride);
  push_list(n->ints, padding);
  n->i0 = ceil_mode;
  n->i1 = count_include_pad;
  n->i2 = divisor ? *divisor : 0;
  n->f0 = divisor.has_value();
  set_history(out, n.get());
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& x, Compute compute) {
  Tensor out = no_grad(compute);
  NodeRef n = make_node(GradFn::AdaptiveAvgPool2d, {&x});
  n->save(0, x);
  set_history(out, n.get());
  return out;
}

std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x,
                                              IntList normalized_shape,
                                              const Tensor& w,
                                              const Tensor& b, double eps) {
  auto r = no_grad(
      [&] { return fastt::layer_norm(x, normalized_shape, w, b, eps); });
  NodeRef n = make_node(GradFn::LayerNorm, {&x, &w, &b});
  n->save(0, x);
  n->save(1, std::get<1>(r));  // mean and rstd: no history
  n->save(2, std::get<2>(r));
  n->save(3, w);
  n->save(4, b);
  n->set_shape0(normalized_shape);
  set_history(std::get<0>(r), n.get());
  return r;
}

// Saves the weights and the forward's per-step buffers; the outputs are
// {out, h_n, c_n}. For tanh / relu the per-step h is out itself (saved as
// the node's output 0).
std::vector<Tensor> rnn_layer(int64_t mode, const Tensor& gi, const Tensor& h0,
                              const Tensor& c0, const Tensor& w_hh,
                              const Tensor& b_hh, const Tensor& w_hr,
                              IntList batch_sizes, bool reverse) {
  rnn_detail::Saved sv;
  std::vector<Tensor> r;
  {
    GradModeGuard guard(false);
    r = rnn_detail::forward(mode, gi, h0, c0, w_hh, b_hh, w_hr, batch_sizes,
                            reverse, &sv);
  }
  NodeRef n = make_node(GradFn::RnnLayer, {&gi, &h0, &c0, &w_hh, &b_hh,
                                           &w_hr});
  n->i0 = mode;
  n->i1 = reverse;
  n->ints.assign(batch_sizes.begin(), batch_sizes.end());
  set_history(r[0], n.get(), 0);
  set_history(r[1], n.get(), 1);
  if (r[2].defined()) set_history(r[2], n.get(), 2);
  n->num_outputs = 3;
  n->save(0, h0);
  n->save(1, w_hh);
  n->save(2, w_hr);
  const bool ws_is_out = sv.ws.defined() && sv.ws.impl() == r[0].impl();
  n->save(3, sv.ws, ws_is_out, 0);
  n->save(4, sv.h_prev);
  n->save(5, sv.c_prev);
  n->save(6, sv.h_raw);
  return r;
}

std::tuple<Tensor, Tensor> rms_norm(const Tensor& x, IntList normalized_shape,
                                    const Tensor& w,
                                    std::optional<double> eps) {
  auto r = no_grad([&] { return fastt::rms_norm(x, normalized_shape, w, eps); });
  NodeRef n = make_node(GradFn::RmsNorm, {&x, &w});
  n->save(0, x);
  n->save(1, std::get<1>(r));
  n->save(2, w);
  n->set_shape0(normalized_shape);
  set_history(std::get<0>(r), n.get());
  return r;
}

std::tuple<Tensor, Tensor> cross_entropy(const Tensor& logits,
                                         const Tensor& target,
                                         const Tensor& weight,
                                         int64_t reduction,
                                         int64_t ignore_index,
                                         double label_smoothing) {
  auto r = no_grad([&] {
    return fastt::cross_entropy(logits, target, weight, reduction,
                                ignore_index, label_smoothing);
  });
  NodeRef n = make_node(GradFn::CrossEntropy, {&logits});
  n->save(0, logits);
  n->save(1, target);
  n->save(2, weight);
  n->save(3, std::get<1>(r));  // per-row logsumexp
  n->i0 = reduction;
  n->i1 = ignore_index;
  n->f0 = label_smoothing;
  set_history(std::get<0>(r), n.get());
  return r;
}

std::tuple<Tensor, Tensor> flash_attention(const Tensor& q, const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& mask, double scale,
                                           bool causal) {
  auto r = no_grad(
      [&] { return fastt::flash_attention(q, k, v, mask, scale, causal); });
  NodeRef n = make_node(GradFn::FlashAttention, {&q, &k, &v});
  n->save(0, q);
  n->save(1, k);
  n->save(2, v);
  n->save(3, mask);
  n->save(4, std::get<0>(r), true);  // the node's own output
  n->save(5, std::get<1>(r));  // per-row logsumexp
  n->f0 = scale;
  n->i0 = causal;
  set_history(std::get<0>(r), n.get());
  return r;
}

std::tuple<Tensor, Tensor> nll_loss(const Tensor& input, const Tensor& target,
                                    const Tensor& weight, int64_t reduction,
                                    int64_t ignore_index) {
  auto r = no_grad([&] {
    return fastt::nll_loss(input, target, weight, reduction, ignore_index);
  });
  NodeRef n = make_node(GradFn::NllLoss, {&input});
  n->save(0, input);
  n->save(1, target);
  n->save(2, weight);
  n->save(3, std::get<1>(r));  // total weight
  n->i0 = reduction;
  n->i1 = ignore_index;
  set_history(std::get<0>(r), n.get());
  return r;
}

// ====================================================== formulas ====
FASTT_FORMULA(Convolution) {
  const Tensor& g = go[0];
  no_double_backward(n);
  Tensor x = n.unpack(0), w = n.unpack(1);
  size_t pos = 0;
  IntList stride = list_at(n.ints, pos), padding = list_at(n.ints, pos);
  IntList dilation = list_at(n.ints, pos), outpad = list_at(n.ints, pos);
  const std::array<bool, 3> mask = {n.needs(0), n.needs(1), n.needs(2)};
  std::tuple<Tensor, Tensor, Tensor> r;
  switch (ConvKind(n.i0)) {
    case ConvKind::Conv1d:
      r = conv1d_backward(g, x, w, stride, padding, dilation, n.i1, mask);
      break;
    case ConvKind::Conv2d:
      r = conv2d_backward(g, x, w, stride, padding, dilation, n.i1, mask);
      break;
    case ConvKind::Transpose2d:
      r = conv_transpose2d_backward(g, x, w, stride, padding, outpad,
                                    n.i1, dilation, mask);
      break;
  }
  gi[0] = std::get<0>(r);
  gi[1] = std::get<1>(r);
  gi[2] = std::get<2>(r);
}
FASTT_FORMULA(MaxPool2d) {
  const Tensor& g = go[0];
  no_double_backward(n);
  gi[0] = max_pool2d_backward(g, n.unpack(0), n.unpack(1));
}
FASTT_FORMULA(AvgPool2d) {
  const Tensor& g = go[0];
  no_double_backward(n);
  size_t pos = 0;
  IntList kernel = list_at(n.ints, pos), stride = list_at(n.ints, pos);
  IntList padding = list_at(n.ints, pos);
  std::optional<int64_t> divisor;
  if (n.f0 != 0) divisor = n.i2;
  gi[0] = avg_pool2d_backward(g, n.unpack(0), kernel, stride, padding,
                              n.i0 != 0, n.i1 != 0, divisor);
}
FASTT_FORMULA(AdaptiveAvgPool2d) {
  const Tensor& g = go[0];
  no_double_backward(n);
  gi[0] = adaptive_avg_pool2d_backward(g, n.unpack(0));
}
FASTT_FORMULA(LayerNorm) {
  const Tensor& g = go[0];
  no_double_backward(n);
  auto r = layer_norm_backward(g, n.unpack(0), n.shape0(), n.unpack(1),
                               n.unpack(2), n.unpack(3), n.unpack(4),
                               {n.needs(0), n.needs(1), n.needs(2)});
  gi[0] = std::get<0>(r);
  gi[1] = std::get<1>(r);
  gi[2] = std::get<2>(r);
}
FASTT_FORMULA(RnnLayer) {
  no_double_backward(n);
  rnn_detail::Saved sv{n.unpack(3), n.unpack(4), n.unpack(5), n.unpack(6)};
  const bool needs[6] = {n.needs(0), n.needs(1), n.needs(2),
                         n.needs(3), n.needs(4), n.needs(5)};
  std::vector<Tensor> g = rnn_detail::backward(
      n.i0, go[0], go[1], n.num_outputs > 2 ? go[2] : Tensor(), n.unpack(0),
      n.unpack(1), n.unpack(2), sv, IntList(n.ints.data(), n.ints.size()),
      n.i1 != 0, needs);
  for (int k = 0; k < 6; ++k) gi[k] = std::move(g[size_t(k)]);
}
FASTT_FORMULA(RmsNorm) {
  const Tensor& g = go[0];
  no_double_backward(n);
  auto r = rms_norm_backward(g, n.unpack(0), n.shape0(), n.unpack(1),
                             n.unpack(2), {n.needs(0), n.needs(1)});
  gi[0] = std::get<0>(r);
  gi[1] = std::get<1>(r);
}
FASTT_FORMULA(CrossEntropy) {
  const Tensor& g = go[0];
  no_double_backward(n);
  gi[0] = cross_entropy_backward(g, n.unpack(0), n.unpack(1), n.unpack(2),
                                 n.i0, n.i1, n.f0, n.unpack(3));
}
FASTT_FORMULA(FlashAttention) {
  no_double_backward(n);
  auto r = flash_attention_backward(go[0], n.unpack(0), n.unpack(1),
                                    n.unpack(2), n.unpack(3), n.unpack(4),
                                    n.unpack(5), n.f0, n.i0 != 0);
  gi[0] = std::get<0>(r);
  gi[1] = std::get<1>(r);
  gi[2] = std::get<2>(r);
}
FASTT_FORMULA(NllLoss) {
  const Tensor& g = go[0];
  no_double_backward(n);
  gi[0] = nll_loss_backward(g, n.unpack(0), n.unpack(1), n.unpack(2),
                            n.i0, n.i1, n.unpack(3));
}

}  // namespace autograd
}  // namespace fastt

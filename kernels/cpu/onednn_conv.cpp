// float32 CPU convolution through oneDNN (libdnnl-dev, what torch's CPU
// convolutions use): forward, input gradient and weight gradient as
// csrc/ops/conv.h's hooks (g_cpu_conv_hooks), the same shape as the cuDNN
// ones. fastt's tensors stay NCHW / OIHW; each primitive takes the blocked
// layouts oneDNN picks (format `any`: the JIT AVX2/AVX-512 direct kernels)
// and reorders around them, since on plain NCHW oneDNN falls back to its
// own im2col GEMM, no faster than fastt's. Primitives are built once per
// geometry and cached. Small convolutions keep fastt's im2col path, where
// oneDNN's reorders and setup cost more than the work (kMinMacs), and
// so do input gradients of very few channels.
#include "kernels/cpu/onednn_conv.h"

#if defined(FASTT_HAS_DNNL)
#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "csrc/ops/conv.h"
#include "csrc/tensor.h"

namespace fastt {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
constexpr auto f32 = dnnl::memory::data_type::f32;

// Multiply-adds below which fastt's im2col + GEMM is faster (forward, 3x3,
// one thread: 295K MACs (1x16x8x8 -> 32) 13.0 us in oneDNN with its
// reorders against 10.9 us; 1.2M (4x16x8x8) 26.8 against 48.3 us).
constexpr int64_t kMinMacs = int64_t(1) << 19;
// Input channels per group below which oneDNN's backward-data kernel is
// slower than col2im (512x1x8x8 -> 16, 3x3: 1.6 against 0.5 ms).
constexpr int64_t kMinInputGradChannels = 8;

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

enum class Kind { Forward, InputGrad, WeightGrad };

using Key = std::tuple<int, bool, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t>;

Key key_of(Kind k, bool bias, const ConvDesc& d) {
  return Key(int(k), bias, d.N, d.C, d.H, d.W, d.O, d.G, d.kh, d.kw, d.oh,
             d.ow, d.stride[0], d.stride[1], d.pad[0], d.pad[1], d.dil[0],
             d.dil[1]);
}

// One cached convolution: the primitive, and the user-layout descriptors
// with the reorders into and out of the primitive's layouts.
struct Prim {
  dnnl::primitive prim;
  memory::desc src, wei, dst, bia;  // the primitive's (blocked) layouts
  memory::desc usrc, uwei, udst;    // fastt's NCHW / OIHW (GOIHW)
};

struct Dims {
  memory::dims src, wei, dst, bia, strides, dil, pad_l, pad_r;
  tag wtag;
};

Dims dims_of(const ConvDesc& d) {
  Dims r;
  r.src = {d.N, d.C, d.H, d.W};
  r.dst = {d.N, d.O, d.oh, d.ow};
  r.bia = {d.O};
  if (d.G > 1) {
    r.wei = {d.G, d.O / d.G, d.C / d.G, d.kh, d.kw};
    r.wtag = tag::goihw;
  } else {
    r.wei = {d.O, d.C, d.kh, d.kw};
    r.wtag = tag::oihw;
  }
  r.strides = {d.stride[0], d.stride[1]};
  r.dil = {d.dil[0] - 1, d.dil[1] - 1};  // oneDNN: 0 = no dilation
  // The bottom/right pads make the output size come out as fastt's.
  const int64_t ekh = d.dil[0] * (d.kh - 1) + 1;
  const int64_t ekw = d.dil[1] * (d.kw - 1) + 1;
  r.pad_l = {d.pad[0], d.pad[1]};
  r.pad_r = {(d.oh - 1) * d.stride[0] + ekh - d.H - d.pad[0],
             (d.ow - 1) * d.stride[1] + ekw - d.W - d.pad[1]};
  return r;
}

#if DNNL_VERSION_MAJOR >= 3
dnnl::convolution_forward::primitive_desc fwd_pd(const Dims& r, bool bias) {
  memory::desc s(r.src, f32, tag::any), w(r.wei, f32, tag::any),
      b(r.bia, f32, tag::x), y(r.dst, f32, tag::any);
  using PD = dnnl::convolution_forward::primitive_desc;
  if (bias)
    return PD(eng(), dnnl::prop_kind::forward_training,
              dnnl::algorithm::convolution_direct, s, w, b, y, r.strides,
              r.dil, r.pad_l, r.pad_r);
  return PD(eng(), dnnl::prop_kind::forward_training,
            dnnl::algorithm::convolution_direct, s, w, y, r.strides, r.dil,
            r.pad_l, r.pad_r);
}
#else
dnnl::convolution_forward::primitive_desc fwd_pd(const Dims& r, bool bias) {
  memory::desc s(r.src, f32, tag::any), w(r.wei, f32, tag::any),
      b(r.bia, f32, tag::x), y(r.dst, f32, tag::any);
  if (bias)
    return {{dnnl::prop_kind::forward_training,
             dnnl::algorithm::convolution_direct, s, w, b, y, r.strides,
             r.dil, r.pad_l, r.pad_r},
            eng()};
  return {{dnnl::prop_kind::forward_training,
           dnnl::algorithm::convolution_direct, s, w, y, r.strides, r.dil,
           r.pad_l, r.pad_r},
          eng()};
}
#endif

// A backward primitive (data or weights) of the forward `hint`.
template <class P>
typename P::primitive_desc bwd_pd(
    const Dims& r, const memory::desc& s, const memory::desc& w,
    const memory::desc& y,
    const dnnl::convolution_forward::primitive_desc& hint) {
#if DNNL_VERSION_MAJOR >= 3
  return typename P::primitive_desc(eng(),
                                    dnnl::algorithm::convolution_direct, s,
                                    w, y, r.strides, r.dil, r.pad_l, r.pad_r,
                                    hint);
#else
  return typename P::primitive_desc(
      typename P::desc(dnnl::algorithm::convolution_direct, s, w, y,
                       r.strides, r.dil, r.pad_l, r.pad_r),
      eng(), hint);
#endif
}

Prim build(Kind k, bool bias, const ConvDesc& d) {
  const Dims r = dims_of(d);
  Prim p;
  p.usrc = memory::desc(r.src, f32, tag::nchw);
  p.uwei = memory::desc(r.wei, f32, r.wtag);
  p.udst = memory::desc(r.dst, f32, tag::nchw);
  const auto fpd = fwd_pd(r, bias && k == Kind::Forward);
  memory::desc s(r.src, f32, tag::any), w(r.wei, f32, tag::any),
      y(r.dst, f32, tag::any);
  if (k == Kind::Forward) {
    p.prim = dnnl::convolution_forward(fpd);
    p.src = fpd.src_desc();
    p.wei = fpd.weights_desc();
    p.dst = fpd.dst_desc();
    p.bia = memory::desc(r.bia, f32, tag::x);
  } else if (k == Kind::InputGrad) {
    const auto pd =
        bwd_pd<dnnl::convolution_backward_data>(r, s, w, y, fpd);
    p.prim = dnnl::convolution_backward_data(pd);
    p.src = pd.diff_src_desc();
    p.wei = pd.weights_desc();
    p.dst = pd.diff_dst_desc();
  } else {
    const auto pd =
        bwd_pd<dnnl::convolution_backward_weights>(r, s, w, y, fpd);
    p.prim = dnnl::convolution_backward_weights(pd);
    p.src = pd.src_desc();
    p.wei = pd.diff_weights_desc();
    p.dst = pd.diff_dst_desc();
  }
  return p;
}

std::mutex g_mu;
std::map<Key, std::shared_ptr<const Prim>> g_cache;

std::shared_ptr<const Prim> get(Kind k, bool bias, const ConvDesc& d) {
  const Key key = key_of(k, bias, d);
  {
    std::lock_guard<std::mutex> l(g_mu);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) return it->second;
  }
  auto p = std::make_shared<const Prim>(build(k, bias, d));
  std::lock_guard<std::mutex> l(g_mu);
  if (g_cache.size() > 256) g_cache.clear();  // a bound on shapes held
  return g_cache.emplace(key, std::move(p)).first->second;
}

std::atomic<bool> g_enabled{true};

bool eligible(const Tensor& a, const Tensor& b, const ConvDesc& d) {
  if (!g_enabled.load(std::memory_order_relaxed) || !a.is_cpu() || a.dtype() != DType::Float32 ||
      b.dtype() != DType::Float32)
    return false;
  const int64_t macs = d.N * d.O * d.oh * d.ow * (d.C / d.G) * d.kh * d.kw;
  return macs >= kMinMacs;
}

// `t` in the user layout, or a reordered copy in the primitive's layout.
memory in_layout(const memory::desc& user, const memory::desc& want,
                 const Tensor& t, dnnl::stream& s) {
  memory u(user, eng(), const_cast<void*>(t.data_ptr()));
  if (user == want) return u;
  memory m(want, eng());
  dnnl::reorder(u, m).execute(s, u, m);
  return m;
}

// The primitive's output memory: `t` itself when the layouts agree.
memory out_layout(const memory::desc& user, const memory::desc& want,
                  Tensor& t) {
  if (user == want) return memory(user, eng(), t.data_ptr());
  return memory(want, eng());
}

void copy_out(memory& m, const memory::desc& user, Tensor& t,
              dnnl::stream& s) {
  if (m.get_data_handle() == t.data_ptr()) return;
  memory u(user, eng(), t.data_ptr());
  dnnl::reorder(m, u).execute(s, m, u);
}

bool forward(const Tensor& x, const Tensor& w, const Tensor* bias,
             const ConvDesc& d, Tensor& y) {
  if (!eligible(x, w, d)) return false;
  const Tensor xc = x.contiguous(), wc = w.contiguous();
  const Tensor bc = bias ? bias->contiguous() : Tensor();
  const auto p = get(Kind::Forward, bias != nullptr, d);
  dnnl::stream s(eng());
  memory xm = in_layout(p->usrc, p->src, xc, s);
  memory wm = in_layout(p->uwei, p->wei, wc, s);
  memory ym = out_layout(p->udst, p->dst, y);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}};
  if (bias)
    args.insert({DNNL_ARG_BIAS,
                 memory(p->bia, eng(), const_cast<void*>(bc.data_ptr()))});
  p->prim.execute(s, args);
  copy_out(ym, p->udst, y, s);
  s.wait();
  return true;
}

bool input_grad(const Tensor& gy, const Tensor& w, const Tensor* bias,
                const ConvDesc& d, Tensor& gx) {
  // conv_transpose2d's forward adds a bias on the input side: not here
  if (bias || d.C / d.G < kMinInputGradChannels || !eligible(gy, w, d))
    return false;
  const Tensor gyc = gy.contiguous(), wc = w.contiguous();
  const auto p = get(Kind::InputGrad, false, d);
  dnnl::stream s(eng());
  memory gym = in_layout(p->udst, p->dst, gyc, s);
  memory wm = in_layout(p->uwei, p->wei, wc, s);
  memory gxm = out_layout(p->usrc, p->src, gx);
  p->prim.execute(s, {{DNNL_ARG_DIFF_DST, gym},
                      {DNNL_ARG_WEIGHTS, wm},
                      {DNNL_ARG_DIFF_SRC, gxm}});
  copy_out(gxm, p->usrc, gx, s);
  s.wait();
  return true;
}

bool weight_grad(const Tensor& gy, const Tensor& x, const ConvDesc& d,
                 Tensor& gw) {
  if (!eligible(x, gy, d)) return false;
  const Tensor gyc = gy.contiguous(), xc = x.contiguous();
  const auto p = get(Kind::WeightGrad, false, d);
  dnnl::stream s(eng());
  memory xm = in_layout(p->usrc, p->src, xc, s);
  memory gym = in_layout(p->udst, p->dst, gyc, s);
  memory gwm = out_layout(p->uwei, p->wei, gw);
  p->prim.execute(s, {{DNNL_ARG_SRC, xm},
                      {DNNL_ARG_DIFF_DST, gym},
                      {DNNL_ARG_DIFF_WEIGHTS, gwm}});
  copy_out(gwm, p->uwei, gw, s);
  s.wait();
  return true;
}

}  // namespace

void register_onednn_conv() {
  g_cpu_conv_hooks.forward = &forward;
  g_cpu_conv_hooks.input_grad = &input_grad;
  g_cpu_conv_hooks.weight_grad = &weight_grad;
}
bool onednn_conv_built() { return true; }
void set_onednn_enabled(bool on) { g_enabled.store(on); }
bool onednn_enabled() { return g_enabled.load(); }

}  // namespace fastt

#else  // !FASTT_HAS_DNNL

namespace fastt {
void register_onednn_conv() {}
bool onednn_conv_built() { return false; }
void set_onednn_enabled(bool) {}
bool onednn_enabled() { return false; }
}  // namespace fastt

#endif

// Convolution and pooling entry points (csrc/ops/conv.h). Convolutions
// validate like torch, then run im2col -> Op::gemm (-> col2im) over chunks
// of the batch; the three products (forward, input grad, weight grad) are
// written once on a Geom and reused by conv_transpose2d, whose forward is
// conv2d's input grad. Pools validate and make one kernel call. To add a
// pool: a kernel in kernels/cpu/conv.cpp, a row in ops.def, an entry here.
#include "csrc/autocast.h"
#include "conv.h"

#include "autograd/functions_nn.h"
#include "csrc/autograd.h"

#include <algorithm>
#include <functional>
#include <string>

#include "../capture.h"
#include "../dispatch.h"
#include "complex.h"
#include "elementwise.h"
#include "index.h"
#include "reduce.h"

namespace fastt {

// Null until a CUDA build with cuDNN registers them (kernels/cuda/
// cudnn_conv.cpp); CPU tensors never ask.
ConvHooks g_conv_hooks = {nullptr, nullptr, nullptr};
ConvHooks g_cpu_conv_hooks = {nullptr, nullptr, nullptr};

namespace {

// Column buffers hold at most this many elements (2 MB of float, so they
// mostly stay in cache between im2col and the product); bigger batches run
// in chunks of whole samples (torch goes one sample at a time; chunks keep
// small images in few products).
constexpr int64_t kColsBudget = int64_t(1) << 19;
// On a GPU there is no cache to stay in and every chunk costs launches, so
// chunks are bigger (64 MB of float).
constexpr int64_t kColsBudgetCuda = int64_t(1) << 24;
// Output planes at least this big get one product per sample; smaller ones
// are multiplied for the whole chunk at once ([O, CK] @ [CK, n*L]) and
// transposed back, which saves many tiny BLAS calls.
constexpr int64_t kPerSampleL = 256;

std::string list_str(IntList v) {
  return fmt::format("[{}]", fmt::join(v.begin(), v.end(), ", "));
}

[[noreturn]] FASTT_NOINLINE void throw_not_implemented(const char* name,
                                                       const Tensor& t) {
  throw NotImplementedError(
      fmt::format("\"{}\" not implemented for '{}' on device '{}'", name,
                  dtype_name(t.dtype()), t.device().str()));
}

// A call of a convolution library's hook (not a kernel of the table) that a
// captured step must make again on replay: a host step over the call's
// tensors (csrc/capture.h), which `call` gets in the order given.
void replayed(std::vector<Tensor> tensors,
              std::function<bool(Tensor* t)> call) {
  capture::host_step(std::move(tensors), [call](Tensor* t) {
    FASTT_CHECK(call(t), RuntimeError,
                "compiled step: the convolution library declined a call it "
                "took when the step was captured");
  });
}
// replayed() for the forward and input-gradient hooks: (input, weight,
// bias or undefined, output).
template <class Hook>
void replayed_with_bias(Hook f, std::vector<Tensor> tensors,
                        const ConvDesc& d) {
  replayed(std::move(tensors), [f, d](Tensor* t) {
    return f(t[0], t[1], t[2].defined() ? &t[2] : nullptr, d, t[3]);
  });
}

// The kernel of `op` for t's device and dtype; the error names the user's
// op rather than the internal one.
KernelFn kernel_for(Op op, const Tensor& t, const char* name) {
  KernelFn fn = g_dispatch[int(op)][int(t.device().type)][int(t.dtype())];
  if (FASTT_UNLIKELY(fn == nullptr)) throw_not_implemented(name, t);
  if (FASTT_UNLIKELY(g_dispatch_hooked))
    return hooked_kernel(op, t.device().type, t.dtype());
  return fn;
}

void check_defined(const char* op, const Tensor& t, const char* name) {
  FASTT_CHECK(t.defined(), ValueError,
              "{}: got an undefined tensor for argument '{}'", op, name);
}

void check_same(const char* op, const Tensor& x, const Tensor& t,
                const char* what) {
  FASTT_CHECK(x.device() == t.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, x.device().str(), t.device().str());
  FASTT_CHECK(x.dtype() == t.dtype(), RuntimeError,
              "{}: Input type ({}) and {} type ({}) should be the same", op,
              dtype_name(x.dtype()), what, dtype_name(t.dtype()));
}

// "a x b" (2-D) or "b" (1-D) for size messages.
std::string spatial_str(int spatial, int64_t h, int64_t w) {
  return spatial == 1 ? fmt::format("{}", w) : fmt::format("{} x {}", h, w);
}

// A convolution's size argument for `spatial` dims as 2-D values: one
// value or one per dim. 1-D convolutions get `unit` for the H dim.
void conv_arg(IntList v, int spatial, const char* name, int64_t unit,
              int64_t out[2]) {
  FASTT_CHECK(v.size() == 1 || v.size() == size_t(spatial), RuntimeError,
              "expected {} to be a single integer value or a list of {} "
              "values to match the convolution dimensions, but got {}={}",
              name, spatial, name, list_str(v));
  out[0] = spatial == 1 ? unit : v[0];
  out[1] = v[v.size() - 1];
}

// The geometry of one convolution as the kernels see it: the windowed side
// x [N, C, H, W] (conv input, or conv_transpose output), the other side
// y [N, O, oh, ow] and weight [O, C/G, kh, kw].
struct Geom {
  int64_t N, C, H, W, O, G, kh, kw, oh, ow;
  int64_t win[kNumWindowParams];
  int64_t cols_budget = kColsBudget;
  int64_t Cg() const { return C / G; }
  int64_t Og() const { return O / G; }
  int64_t kk() const { return kh * kw; }
  int64_t CK() const { return C * kh * kw; }
  int64_t L() const { return oh * ow; }
  IntList window() const { return {win, size_t(kNumWindowParams)}; }
  // Samples per chunk so the column buffer stays within budget.
  int64_t chunk() const {
    const int64_t per = std::max<int64_t>(1, CK() * L());
    return std::max<int64_t>(1, std::min(N, cols_budget / per));
  }
};

struct ConvParams {
  int64_t stride[2], pad0[2], pad1[2], dil[2];
};

// stride / padding / dilation with torch's checks; padding may also give
// the before and after pads separately (2 * spatial values).
ConvParams conv_params(int spatial, IntList stride, IntList padding,
                       IntList dilation) {
  ConvParams p;
  conv_arg(stride, spatial, "stride", 1, p.stride);
  conv_arg(dilation, spatial, "dilation", 1, p.dil);
  if (padding.size() == size_t(2 * spatial) && spatial > 1) {
    p.pad0[0] = padding[0], p.pad0[1] = padding[1];
    p.pad1[0] = padding[2], p.pad1[1] = padding[3];
  } else if (padding.size() == 2 && spatial == 1) {
    p.pad0[0] = p.pad1[0] = 0;
    p.pad0[1] = padding[0], p.pad1[1] = padding[1];
  } else {
    conv_arg(padding, spatial, "padding", 0, p.pad0);
    p.pad1[0] = p.pad0[0], p.pad1[1] = p.pad0[1];
  }
  for (int d = 0; d < 2; ++d) {
    FASTT_CHECK(p.stride[d] > 0, RuntimeError,
                "non-positive stride is not supported");
    FASTT_CHECK(p.pad0[d] >= 0 && p.pad1[d] >= 0, RuntimeError,
                "negative padding is not supported");
    FASTT_CHECK(p.dil[d] > 0, RuntimeError,
                "non-positive dilation is not supported");
  }
  return p;
}

void fill_window(Geom& g, const ConvParams& p) {
  int64_t* w = g.win;
  w[kWinKernelH] = g.kh, w[kWinKernelW] = g.kw;
  w[kWinStrideH] = p.stride[0], w[kWinStrideW] = p.stride[1];
  w[kWinPadH] = p.pad0[0], w[kWinPadW] = p.pad0[1];
  w[kWinDilationH] = p.dil[0], w[kWinDilationW] = p.dil[1];
  w[kWinOutH] = g.oh, w[kWinOutW] = g.ow;
  w[kWinCountPad] = 0, w[kWinDivisor] = 0;
}

// Batched 4-D views of a convolution's operands (1-D convs get H = 1).
struct Operands {
  Tensor x, w;
  bool batched;
};

Operands as_4d(const char* op, int spatial, const Tensor& x,
               const Tensor& weight) {
  check_defined(op, x, "input");
  check_defined(op, weight, "weight");
  const int64_t nd = x.dim();
  FASTT_CHECK(nd == spatial + 1 || nd == spatial + 2, RuntimeError,
              "Expected {}D (unbatched) or {}D (batched) input to {}, but "
              "got input of size: {}",
              spatial + 1, spatial + 2, op, list_str(x.sizes()));
  FASTT_CHECK(weight.dim() == spatial + 2, RuntimeError,
              "{}: expected weight to be {}-dimensional, but got weight of "
              "size {}",
              op, spatial + 2, list_str(weight.sizes()));
  check_same(op, x, weight, "weight");
  Operands r;
  r.batched = nd == spatial + 2;
  r.x = r.batched ? x : x.unsqueeze(0);
  r.w = weight;
  if (spatial == 1) {
    r.x = r.x.unsqueeze(2);
    r.w = r.w.unsqueeze(2);
  }
  return r;
}

void check_bias(const char* op, const Tensor& x, const Tensor& weight,
                const Tensor& bias, int64_t channels) {
  if (!bias.defined()) return;
  FASTT_CHECK(bias.dim() == 1 && bias.sizes()[0] == channels, RuntimeError,
              "Given weight of size {}, expected bias to be 1-dimensional "
              "with {} elements, but got bias of size {} instead",
              list_str(weight.sizes()), channels, list_str(bias.sizes()));
  check_same(op, x, bias, "bias");
}

void check_groups(int64_t groups, const Tensor& weight) {
  FASTT_CHECK(groups > 0, RuntimeError, "non-positive groups is not supported");
  const int64_t w0 = weight.sizes()[0];
  FASTT_CHECK(w0 >= groups, RuntimeError,
              "Given groups={}, expected weight to be at least {} at "
              "dimension 0, but got weight of size {} instead",
              groups, groups, list_str(weight.sizes()));
  FASTT_CHECK(w0 % groups == 0, RuntimeError,
              "Given groups={}, expected weight to be divisible by {} at "
              "dimension 0, but got weight of size {} instead",
              groups, groups, list_str(weight.sizes()));
}

// conv{1,2}d: checks (torch's order) and geometry. `x`, `weight` are the
// user's tensors, o their 4-D forms.
Geom conv_geom(const char* op, int spatial, const Operands& o,
               const Tensor& x, const Tensor& weight, IntList stride,
               IntList padding, IntList dilation, int64_t groups) {
  const ConvParams p = conv_params(spatial, stride, padding, dilation);
  check_groups(groups, weight);
  Geom g;
  g.N = o.x.sizes()[0], g.C = o.x.sizes()[1];
  g.H = o.x.sizes()[2], g.W = o.x.sizes()[3];
  g.O = o.w.sizes()[0], g.G = groups;
  g.kh = o.w.sizes()[2], g.kw = o.w.sizes()[3];
  // An empty kernel would give a well-formed output of bias values.
  FASTT_CHECK(g.kh > 0 && g.kw > 0, RuntimeError,
              "{}: kernel size should be greater than zero, but got "
              "kernel_height: {} kernel_width: {}",
              op, g.kh, g.kw);
  FASTT_CHECK(g.C == o.w.sizes()[1] * groups, RuntimeError,
              "Given groups={}, weight of size {}, expected input{} to have "
              "{} channels, but got {} channels instead",
              groups, list_str(weight.sizes()), list_str(x.sizes()),
              o.w.sizes()[1] * groups, g.C);
  const int64_t ph = g.H + p.pad0[0] + p.pad1[0];
  const int64_t pw = g.W + p.pad0[1] + p.pad1[1];
  const int64_t ekh = p.dil[0] * (g.kh - 1) + 1;
  const int64_t ekw = p.dil[1] * (g.kw - 1) + 1;
  FASTT_CHECK(ph >= ekh && pw >= ekw, RuntimeError,
              "Calculated padded input size per channel: ({}). Kernel size: "
              "({}). Kernel size can't be greater than actual input size",
              spatial_str(spatial, ph, pw), spatial_str(spatial, ekh, ekw));
  g.oh = (ph - ekh) / p.stride[0] + 1;
  g.ow = (pw - ekw) / p.stride[1] + 1;
  if (x.device().is_cuda()) g.cols_budget = kColsBudgetCuda;
  fill_window(g, p);
  return g;
}

// ---- the three products ----

// The geometry as the cuDNN hooks take it.
ConvDesc conv_desc(const Geom& g) {
  const int64_t* w = g.win;
  return {g.N,
          g.C,
          g.H,
          g.W,
          g.O,
          g.G,
          g.kh,
          g.kw,
          g.oh,
          g.ow,
          {w[kWinStrideH], w[kWinStrideW]},
          {w[kWinPadH], w[kWinPadW]},
          {w[kWinDilationH], w[kWinDilationW]}};
}

void run_gemm(Tensor& out, const Tensor& a, const Tensor& b,
              const Tensor* addend, bool accumulate, int flags) {
  KernelFn fn = lookup_kernel(Op::gemm, out.device().type, out.dtype());
  KernelArgs args;
  args.out = &out;
  args.out2 = nullptr;
  args.in[0] = &a;
  args.in[1] = &b;
  args.in[2] = addend;
  args.in[3] = nullptr;
  args.f0 = 1.0;
  args.f1 = accumulate ? 1.0 : 0.0;
  args.i0 = 1;
  args.i1 = accumulate ? 1 : 0;
  args.i2 = flags;
  fn(args);
}

// cols (viewed [n, C*kh*kw, L], last stride 1) = im2col(x chunk).
void im2col(KernelFn fn, const Tensor& x, const Tensor& cols, const Geom& g) {
  KernelArgs args;
  args.in[0] = &x;
  args.out = const_cast<Tensor*>(&cols);
  args.out2 = nullptr;
  args.dims = g.window();
  fn(args);
}

// Op::conv_rows: out [A, B, L] = in [B, A, h, w] with the first two dims
// swapped, plus bias[B] when given; with no `in`, out += bias in place.
void conv_rows(Tensor& out, const Tensor* in, const Tensor* bias) {
  KernelFn fn = lookup_kernel(Op::conv_rows, out.device().type, out.dtype());
  if (out.numel() == 0) return;
  KernelArgs args;
  args.out = &out;
  args.out2 = nullptr;
  args.in[0] = in;
  args.in[1] = bias;
  fn(args);
}

// The rows of `y` chunk [n, O, oh, ow] as a dense [O, n*L] matrix.
Tensor transposed_rows(const Tensor& y, const Geom& g) {
  const int64_t n = y.sizes()[0];
  if (n == 1 && y.is_contiguous()) return y.view({g.O, g.L()});
  Tensor t = Tensor::empty({g.O, n, g.L()}, y.dtype(), y.device());
  conv_rows(t, &y, nullptr);
  return t.view({g.O, n * g.L()});
}

// y [N, O, oh, ow] = conv(x, weight) + bias.
// A CPU 16-bit conv computed in float32 and rounded once (torch's result:
// its GEMM adds the bias before the one rounding).
static bool wide_16bit(const Tensor& t) {
  return t.is_cpu() &&
         (t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16);
}

Tensor conv_forward(const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Geom& g, const char* name) {
  if (wide_16bit(x)) {
    const DType f = DType::Float32;
    return conv_forward(x.to(f), weight.to(f),
                        bias.defined() ? bias.to(f) : Tensor(), g, name)
        .to(x.dtype());
  }
  KernelFn im2col_fn = kernel_for(Op::im2col, x, name);
  Tensor y = Tensor::empty({g.N, g.O, g.oh, g.ow}, x.dtype(), x.device());
  if (y.numel() == 0) return y;
  {
    const ConvHooks& h = x.device().is_cuda() ? g_conv_hooks : g_cpu_conv_hooks;
    capture::Suspend whole;  // replayed as a whole (replayed() below)
    if (h.forward && h.forward(x, weight, bias.defined() ? &bias : nullptr,
                               conv_desc(g), y)) {
      whole.release();
      if (FASTT_UNLIKELY(g_capturing))
        replayed_with_bias(h.forward, {x, weight, bias, y}, conv_desc(g));
      return y;
    }
  }
  const int64_t G = g.G, Og = g.Og(), CKg = g.Cg() * g.kk(), L = g.L();
  const Tensor w = weight.contiguous().view({G, Og, CKg});
  const int64_t* win = g.win;
  const bool pointwise = g.kk() == 1 && win[kWinStrideH] == 1 &&
                         win[kWinStrideW] == 1 && win[kWinPadH] == 0 &&
                         win[kWinPadW] == 0 && g.oh == g.H && g.ow == g.W &&
                         x.is_contiguous();
  const int64_t chunk = pointwise ? g.N : g.chunk();
  const bool per_sample = pointwise || L >= kPerSampleL || chunk == 1;
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const Tensor* bp = b.defined() ? &b : nullptr;
  Tensor cols;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.N - n0);
    const Tensor xc = x.narrow(0, n0, nb);
    Tensor yc = y.narrow(0, n0, nb).view({nb, g.O, L});
    if (per_sample) {
      // y[n] (G, Og, L) = w (G, Og, CKg) @ cols[n] (G, CKg, L)
      if (pointwise) {
        cols = xc.view({nb, G, CKg, L});
      } else {
        if (!cols.defined() || cols.sizes()[0] != nb)
          cols = Tensor::empty({nb, g.CK(), L}, x.dtype(), x.device());
        im2col(im2col_fn, xc, cols, g);
      }
      Tensor yv = yc.view({nb, G, Og, L});
      run_gemm(yv, w.expand({nb, G, Og, CKg}), cols.view({nb, G, CKg, L}),
               nullptr, false, 0);
      if (bp) conv_rows(yc, nullptr, bp);
    } else {
      // One product over the chunk: (G, Og, nb*L) = w @ (G, CKg, nb*L),
      // then reordered to [nb, O, L] with the bias added.
      if (!cols.defined() || cols.sizes()[1] != nb)
        cols = Tensor::empty({g.CK(), nb, L}, x.dtype(), x.device());
      im2col(im2col_fn, xc, cols.permute({1, 0, 2}), g);
      Tensor tmp = Tensor::empty({G, Og, nb * L}, x.dtype(), x.device());
      run_gemm(tmp, w, cols.view({G, CKg, nb * L}), nullptr, false, 0);
      const Tensor t4 = tmp.view({g.O, nb, g.oh, g.ow});
      conv_rows(yc, &t4, bp);
    }
  }
  return y;
}

// x-side [N, C, H, W] = col2im(weight^T @ gy) (+ bias[c]): conv's input
// gradient and conv_transpose's forward.
Tensor conv_input_grad(const Tensor& gy, const Tensor& weight,
                       const Tensor& bias, const Geom& g, const char* name) {
  // 16-bit on the CPU: the column GEMM and col2im's sums in float32, one
  // rounding at the end (torch's result; rounding the columns first is off
  // by several 16-bit ulps)
  if (wide_16bit(gy)) {
    const DType f = DType::Float32;
    return conv_input_grad(gy.to(f), weight.to(f),
                           bias.defined() ? bias.to(f) : Tensor(), g, name)
        .to(gy.dtype());
  }
  KernelFn col2im_fn = kernel_for(Op::col2im, gy, name);
  Tensor gx = Tensor::empty({g.N, g.C, g.H, g.W}, gy.dtype(), gy.device());
  if (gx.numel() == 0) return gx;
  {
    const ConvHooks& h =
        gy.device().is_cuda() ? g_conv_hooks : g_cpu_conv_hooks;
    capture::Suspend whole;  // replayed as a whole (replayed() below)
    if (h.input_grad &&
        h.input_grad(gy, weight, bias.defined() ? &bias : nullptr,
                     conv_desc(g), gx)) {
      whole.release();
      if (FASTT_UNLIKELY(g_capturing))
        replayed_with_bias(h.input_grad, {gy, weight, bias, gx},
                           conv_desc(g));
      return gx;
    }
  }
  const int64_t G = g.G, Og = g.Og(), CKg = g.Cg() * g.kk(), L = g.L();
  const Tensor w = weight.contiguous().view({G, Og, CKg});
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const int64_t chunk = g.chunk();
  const bool per_sample = L >= kPerSampleL || chunk == 1;
  const Tensor gyd = per_sample ? gy.contiguous() : gy;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.N - n0);
    Tensor cols, cols_view;  // cols_view: [nb, CK, L]
    if (per_sample) {
      // cols[n] (G, CKg, L) = w^T (G, CKg, Og) @ gy[n] (G, Og, L)
      cols = Tensor::empty({nb, G, CKg, L}, gy.dtype(), gy.device());
      const Tensor gv = gyd.narrow(0, n0, nb).view({nb, G, Og, L});
      run_gemm(cols, w.expand({nb, G, Og, CKg}), gv, nullptr, false, 1);
      cols_view = cols.view({nb, g.CK(), L});
    } else {
      cols = Tensor::empty({G, CKg, nb * L}, gy.dtype(), gy.device());
      const Tensor gyt = transposed_rows(gy.narrow(0, n0, nb), g);
      run_gemm(cols, w, gyt.view({G, Og, nb * L}), nullptr, false, 1);
      cols_view = cols.view({g.CK(), nb, L}).permute({1, 0, 2});
    }
    Tensor gxc = gx.narrow(0, n0, nb);
    KernelArgs args;
    args.in[0] = &cols_view;
    args.in[1] = b.defined() ? &b : nullptr;
    args.out = &gxc;
    args.out2 = nullptr;
    args.dims = g.window();
    col2im_fn(args);
  }
  return gx;
}

// weight-shaped [O, C/G, kh, kw] = sum over the batch of gy[n] @ cols[n]^T.
Tensor conv_weight_grad(const Tensor& gy, const Tensor& x, const Geom& g,
                        const char* name) {
  KernelFn im2col_fn = kernel_for(Op::im2col, x, name);
  Tensor gw =
      Tensor::empty({g.O, g.Cg(), g.kh, g.kw}, x.dtype(), x.device());
  if (gw.numel() == 0) return gw;
  if (g.N == 0) return gw.zero_();
  {
    const ConvHooks& h = x.device().is_cuda() ? g_conv_hooks : g_cpu_conv_hooks;
    capture::Suspend whole;  // replayed as a whole (replayed() below)
    if (h.weight_grad && h.weight_grad(gy, x, conv_desc(g), gw)) {
      whole.release();
      if (FASTT_UNLIKELY(g_capturing))
        replayed({gy, x, gw},
                 [f = h.weight_grad, d = conv_desc(g)](Tensor* t) {
                   return f(t[0], t[1], d, t[2]);
                 });
      return gw;
    }
  }
  const int64_t G = g.G, Og = g.Og(), CKg = g.Cg() * g.kk(), L = g.L();
  Tensor gw3 = gw.view({G, Og, CKg});
  const int64_t chunk = g.chunk();
  Tensor cols;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.N - n0);
    if (!cols.defined() || cols.sizes()[1] != nb)
      cols = Tensor::empty({g.CK(), nb, L}, x.dtype(), x.device());
    im2col(im2col_fn, x.narrow(0, n0, nb), cols.permute({1, 0, 2}), g);
    const Tensor gyt = transposed_rows(gy.narrow(0, n0, nb), g);
    // (G, Og, CKg) (+)= gy^T (G, Og, nb*L) @ cols (G, CKg, nb*L)^T
    run_gemm(gw3, gyt.view({G, Og, nb * L}), cols.view({G, CKg, nb * L}),
             nullptr, n0 > 0, 2);
  }
  return gw;
}

Tensor bias_grad(const Tensor& gy) { return sum(gy, {0, 2, 3}); }

// grad_out must match the forward's output exactly.
void check_grad_out(const char* op, const Tensor& grad_out, const Tensor& x,
                    IntList expected) {
  check_defined(op, grad_out, "grad_output");
  check_same(op, x, grad_out, "grad_output");
  FASTT_CHECK(grad_out.sizes().equals(expected), RuntimeError,
              "{}: expected grad_output of size {}, but got {}", op,
              list_str(expected), list_str(grad_out.sizes()));
}

// The user-facing shape of a 4-D result: drop the batch (unbatched input)
// and the H dim (1-D convolution).
Tensor from_4d(const Tensor& t, int spatial, bool batched) {
  Tensor r = spatial == 1 ? t.squeeze(2) : t;
  return batched ? r : r.squeeze(0);
}
Tensor conv_nd(const char* op, int spatial, const Tensor& x,
               const Tensor& weight, const Tensor& bias, IntList stride,
               IntList padding, IntList dilation, int64_t groups) {
  const Operands o = as_4d(op, spatial, x, weight);
  const Geom g = conv_geom(op, spatial, o, x, weight, stride, padding,
                           dilation, groups);
  check_bias(op, x, weight, bias, g.O);
  return from_4d(conv_forward(o.x, o.w, bias, g, op), spatial, o.batched);
}

std::tuple<Tensor, Tensor, Tensor> conv_nd_backward(
    const char* op, int spatial, const Tensor& grad_out, const Tensor& x,
    const Tensor& weight, IntList stride, IntList padding, IntList dilation,
    int64_t groups, std::array<bool, 3> mask) {
  const Operands o = as_4d(op, spatial, x, weight);
  const Geom g = conv_geom(op, spatial, o, x, weight, stride, padding,
                           dilation, groups);
  std::vector<int64_t> expected = {g.N, g.O, g.oh, g.ow};
  if (spatial == 1) expected.erase(expected.begin() + 2);
  if (!o.batched) expected.erase(expected.begin());
  check_grad_out(op, grad_out, x, expected);
  Tensor gy = grad_out;
  if (!o.batched) gy = gy.unsqueeze(0);
  if (spatial == 1) gy = gy.unsqueeze(2);
  Tensor gi, gw, gb;
  if (mask[0])
    gi = from_4d(conv_input_grad(gy, o.w, Tensor(), g, op), spatial,
                 o.batched);
  if (mask[1]) {
    gw = conv_weight_grad(gy, o.x, g, op);
    if (spatial == 1) gw = gw.squeeze(2);
  }
  if (mask[2]) gb = bias_grad(gy);
  return {gi, gw, gb};
}

// conv_transpose2d: the geometry with x-side = the output.
Geom transpose_geom(const char* op, const Tensor& x4, const Tensor& x,
                    const Tensor& weight, IntList stride, IntList padding,
                    IntList output_padding, int64_t groups,
                    IntList dilation) {
  FASTT_CHECK(padding.size() == 1 || padding.size() == 2, RuntimeError,
              "expected padding to be a single integer value or a list of 2 "
              "values to match the convolution dimensions, but got "
              "padding={}",
              list_str(padding));
  const ConvParams p = conv_params(2, stride, padding, dilation);
  int64_t opad[2];
  conv_arg(output_padding, 2, "output_padding", 0, opad);
  FASTT_CHECK(opad[0] >= 0 && opad[1] >= 0, RuntimeError,
              "negative output_padding is not supported");
  check_groups(groups, weight);
  const int64_t cin = x4.sizes()[1];
  FASTT_CHECK(cin == weight.sizes()[0], RuntimeError,
              "Given transposed=1, weight of size {}, expected input{} to "
              "have {} channels, but got {} channels instead",
              list_str(weight.sizes()), list_str(x.sizes()),
              weight.sizes()[0], cin);
  FASTT_CHECK((opad[0] < p.stride[0] || opad[0] < p.dil[0]) &&
                  (opad[1] < p.stride[1] || opad[1] < p.dil[1]),
              RuntimeError,
              "output padding must be smaller than either stride or "
              "dilation, but got output_padding_height: {} "
              "output_padding_width: {} stride_height: {} stride_width: {} "
              "dilation_height: {} dilation_width: {}",
              opad[0], opad[1], p.stride[0], p.stride[1], p.dil[0], p.dil[1]);
  Geom g;
  g.N = x4.sizes()[0];
  g.O = cin, g.G = groups;
  g.C = weight.sizes()[1] * groups;
  g.kh = weight.sizes()[2], g.kw = weight.sizes()[3];
  FASTT_CHECK(g.kh > 0 && g.kw > 0, RuntimeError,
              "conv_transpose2d: kernel size should be greater than zero, "
              "but got kernel_height: {} kernel_width: {}",
              g.kh, g.kw);
  g.oh = x4.sizes()[2], g.ow = x4.sizes()[3];
  g.H = (g.oh - 1) * p.stride[0] - 2 * p.pad0[0] + p.dil[0] * (g.kh - 1) +
        opad[0] + 1;
  g.W = (g.ow - 1) * p.stride[1] - 2 * p.pad0[1] + p.dil[1] * (g.kw - 1) +
        opad[1] + 1;
  FASTT_CHECK(g.H > 0 && g.W > 0, RuntimeError,
              "Given input size per channel: ({} x {}). Calculated output "
              "size per channel: ({} x {}). Output size is too small",
              g.oh, g.ow, g.H, g.W);
  if (x.device().is_cuda()) g.cols_budget = kColsBudgetCuda;
  fill_window(g, p);
  return g;
}

// ---- pooling helpers ----

// A pool's size argument: one value or two.
void pool_arg(IntList v, const char* op, const char* name, int64_t out[2]) {
  FASTT_CHECK(v.size() == 1 || v.size() == 2, RuntimeError,
              "{}: {} must either be a single int, or a tuple of two ints",
              op, name);
  out[0] = v[0];
  out[1] = v[v.size() - 1];
}

// torch's pooling_output_shape.
int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride,
                      int64_t dil, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 +
                      (ceil_mode ? stride - 1 : 0);
  int64_t q = num / stride;
  if ((num % stride != 0) && ((num < 0) != (stride < 0))) --q;  // floor
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

const Tensor& check_pool_input(const char* op, const Tensor& x) {
  check_defined(op, x, "input");
  const int64_t nd = x.dim();
  bool ok = nd == 3 || nd == 4;
  for (int64_t d = nd - 3; ok && d < nd; ++d) ok = x.sizes()[d] != 0;
  FASTT_CHECK(ok, RuntimeError,
              "{}: Expected 3D or 4D (batch mode) tensor with optional 0 dim "
              "batch size for input, but got:{}",
              op, list_str(x.sizes()));
  return x;
}

struct Pool {
  Geom g;  // N, C, H, W of the input; oh, ow; win
  Tensor x4;
  bool batched;
};

// max_pool2d / avg_pool2d validation and window (avg: dilation {1}).
Pool pool_geom(const char* op, const Tensor& x, IntList kernel_size,
               IntList stride, IntList padding, IntList dilation,
               bool ceil_mode) {
  check_pool_input(op, x);
  int64_t k[2], s[2], p[2], d[2];
  pool_arg(kernel_size, op, "kernel_size", k);
  if (stride.empty()) {
    s[0] = k[0], s[1] = k[1];
  } else {
    FASTT_CHECK(stride.size() == 1 || stride.size() == 2, RuntimeError,
                "{}: stride must either be omitted, a single int, or a tuple "
                "of two ints",
                op);
    pool_arg(stride, op, "stride", s);
  }
  pool_arg(padding, op, "padding", p);
  pool_arg(dilation, op, "dilation", d);
  FASTT_CHECK(k[0] > 0 && k[1] > 0, RuntimeError,
              "kernel size should be greater than zero, but got kH: {} kW: {}",
              k[0], k[1]);
  FASTT_CHECK(s[0] > 0 && s[1] > 0, RuntimeError,
              "stride should be greater than zero, but got dH: {} dW: {}",
              s[0], s[1]);
  FASTT_CHECK(d[0] > 0 && d[1] > 0, RuntimeError,
              "dilation should be greater than zero, but got dilationH: {} "
              "dilationW: {}",
              d[0], d[1]);
  for (int i = 0; i < 2; ++i)
    FASTT_CHECK(p[i] >= 0 && p[i] <= ((k[i] - 1) * d[i] + 1) / 2,
                RuntimeError,
                "pad should be at most half of effective kernel size, but "
                "got pad={}, kernel_size={} and dilation={}",
                p[i], k[i], d[i]);
  Pool r;
  r.batched = x.dim() == 4;
  r.x4 = r.batched ? x : x.unsqueeze(0);
  Geom& g = r.g;
  g.N = r.x4.sizes()[0], g.C = r.x4.sizes()[1];
  g.H = r.x4.sizes()[2], g.W = r.x4.sizes()[3];
  g.O = g.C, g.G = 1, g.kh = k[0], g.kw = k[1];
  g.oh = pool_out_size(g.H, k[0], p[0], s[0], d[0], ceil_mode);
  g.ow = pool_out_size(g.W, k[1], p[1], s[1], d[1], ceil_mode);
  FASTT_CHECK(g.oh >= 1 && g.ow >= 1, RuntimeError,
              "Given input size: ({}x{}x{}). Calculated output size: "
              "({}x{}x{}). Output size is too small",
              g.C, g.H, g.W, g.C, g.oh, g.ow);
  ConvParams cp;
  cp.stride[0] = s[0], cp.stride[1] = s[1];
  cp.pad0[0] = p[0], cp.pad0[1] = p[1];
  cp.dil[0] = d[0], cp.dil[1] = d[1];
  fill_window(g, cp);
  return r;
}

std::vector<int64_t> pool_out_shape(const Pool& p) {
  std::vector<int64_t> s = {p.g.N, p.g.C, p.g.oh, p.g.ow};
  if (!p.batched) s.erase(s.begin());
  return s;
}

// One pool kernel call: in0 = src, out = dst (4-D), window = win.
void run_pool(KernelFn fn, const Tensor& src, const Tensor* in1, Tensor& dst,
              Tensor* dst2, IntList win) {
  if (dst.numel() == 0) return;
  KernelArgs args;
  args.in[0] = &src;
  args.in[1] = in1;
  args.out = &dst;
  args.out2 = dst2;
  args.dims = win;
  fn(args);
}

// grad_out of a pool as a dense 4-D tensor, checked against the forward's
// output shape.
Tensor pool_grad_out(const char* op, const Tensor& grad_out, const Tensor& x,
                     const Pool& p) {
  check_grad_out(op, grad_out, x, pool_out_shape(p));
  Tensor g = grad_out.contiguous();
  return p.batched ? g : g.unsqueeze(0);
}

// A complex convolution as four real ones of the parts (as torch composes
// it; each is recorded by autograd, so is its gradient): re = f(xr, wr,
// br) - f(xi, wi), im = f(xr, wi, bi) + f(xi, wr). f(x, w, bias) is the
// real convolution with every other argument bound.
bool complex_conv(const Tensor& x, const Tensor& w) {
  return (x.defined() && is_complex(x.dtype())) ||
         (w.defined() && is_complex(w.dtype()));
}

template <class F>
Tensor conv_of_parts(const char* op, const Tensor& x, const Tensor& w,
                     const Tensor& bias, F&& f) {
  check_defined(op, x, "input");
  check_defined(op, w, "weight");
  check_same(op, x, w, "weight");
  if (bias.defined()) check_same(op, x, bias, "bias");
  const Tensor none;
  const Tensor xr = real_part(x), xi = imag_part(x);
  const Tensor wr = real_part(w), wi = imag_part(w);
  const Tensor br = bias.defined() ? real_part(bias) : none;
  const Tensor bi = bias.defined() ? imag_part(bias) : none;
  Tensor re = sub(f(xr, wr, br), f(xi, wi, none));
  Tensor im = add(f(xr, wi, bi), f(xi, wr, none));
  return view_as_complex(stack({re, im}, -1));
}

}  // namespace

// ---- convolutions ----

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride, IntList padding, IntList dilation,
              int64_t groups) {
  FASTT_AUTOCAST(Lower, x, conv1d(C(x), C(weight), C(bias), stride, padding, dilation, groups));
  if (FASTT_UNLIKELY(complex_conv(x, weight)))
    return conv_of_parts(
        "conv1d", x, weight, bias,
        [&](const Tensor& a, const Tensor& w, const Tensor& b) {
          return conv1d(a, w, b, stride, padding, dilation, groups);
        });
  if (autograd::should_record(x, weight, bias))
    return autograd::conv(autograd::ConvKind::Conv1d, x, weight, bias, stride,
                          padding, dilation, groups, {}, [&] {
                            return conv1d(x, weight, bias, stride, padding,
                                          dilation, groups);
                          });
  return conv_nd("conv1d", 1, x, weight, bias, stride, padding, dilation,
                 groups);
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride, IntList padding, IntList dilation,
              int64_t groups) {
  FASTT_AUTOCAST(Lower, x, conv2d(C(x), C(weight), C(bias), stride, padding, dilation, groups));
  if (FASTT_UNLIKELY(complex_conv(x, weight)))
    return conv_of_parts(
        "conv2d", x, weight, bias,
        [&](const Tensor& a, const Tensor& w, const Tensor& b) {
          return conv2d(a, w, b, stride, padding, dilation, groups);
        });
  if (autograd::should_record(x, weight, bias))
    return autograd::conv(autograd::ConvKind::Conv2d, x, weight, bias, stride,
                          padding, dilation, groups, {}, [&] {
                            return conv2d(x, weight, bias, stride, padding,
                                          dilation, groups);
                          });
  return conv_nd("conv2d", 2, x, weight, bias, stride, padding, dilation,
                 groups);
}

ConvPadding conv_padding_from_string(std::string_view padding) {
  if (padding == "valid") return ConvPadding::Valid;
  FASTT_CHECK(padding == "same", RuntimeError,
              "Invalid padding string: '{}'", std::string(padding));
  return ConvPadding::Same;
}

std::vector<int64_t> conv_padding(ConvPadding padding, const Tensor& weight,
                                  IntList stride, IntList dilation,
                                  int spatial, const char* op) {
  if (padding == ConvPadding::Valid) return {0};
  check_defined(op, weight, "weight");
  FASTT_CHECK(weight.dim() == spatial + 2, RuntimeError,
              "{}: expected weight to be {}-dimensional, but got weight of "
              "size {}",
              op, spatial + 2, list_str(weight.sizes()));
  for (int64_t s : stride)
    FASTT_CHECK(s == 1, RuntimeError,
                "padding='same' is not supported for strided convolutions");
  int64_t dil[2];
  conv_arg(dilation, spatial, "dilation", 1, dil);
  std::vector<int64_t> lo(static_cast<size_t>(spatial)),
      hi(static_cast<size_t>(spatial));
  bool symmetric = true;
  for (int d = 0; d < spatial; ++d) {
    const int64_t total = dil[2 - spatial + d] * (weight.sizes()[2 + d] - 1);
    lo[size_t(d)] = total / 2;
    hi[size_t(d)] = total - total / 2;
    symmetric = symmetric && lo[size_t(d)] == hi[size_t(d)];
  }
  if (!symmetric) lo.insert(lo.end(), hi.begin(), hi.end());
  return lo;
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride, ConvPadding padding, IntList dilation,
              int64_t groups) {
  const std::vector<int64_t> pad =
      conv_padding(padding, weight, stride, dilation, 1, "conv1d");
  return conv1d(x, weight, bias, stride, pad, dilation, groups);
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride, ConvPadding padding, IntList dilation,
              int64_t groups) {
  const std::vector<int64_t> pad =
      conv_padding(padding, weight, stride, dilation, 2, "conv2d");
  return conv2d(x, weight, bias, stride, pad, dilation, groups);
}

std::tuple<Tensor, Tensor, Tensor> conv1d_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight,
    IntList stride, IntList padding, IntList dilation, int64_t groups,
    std::array<bool, 3> output_mask) {
  return conv_nd_backward("conv1d_backward", 1, grad_out, x, weight, stride,
                          padding, dilation, groups, output_mask);
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight,
    IntList stride, IntList padding, IntList dilation, int64_t groups,
    std::array<bool, 3> output_mask) {
  return conv_nd_backward("conv2d_backward", 2, grad_out, x, weight, stride,
                          padding, dilation, groups, output_mask);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight,
                        const Tensor& bias, IntList stride, IntList padding,
                        IntList output_padding, int64_t groups,
                        IntList dilation) {
  FASTT_AUTOCAST(Lower, x, conv_transpose2d(C(x), C(weight), C(bias), stride, padding, output_padding, groups, dilation));
  if (FASTT_UNLIKELY(complex_conv(x, weight)))
    return conv_of_parts(
        "conv_transpose2d", x, weight, bias,
        [&](const Tensor& a, const Tensor& w, const Tensor& b) {
          return conv_transpose2d(a, w, b, stride, padding, output_padding,
                                  groups, dilation);
        });
  if (autograd::should_record(x, weight, bias))
    return autograd::conv(autograd::ConvKind::Transpose2d, x, weight, bias,
                          stride, padding, dilation, groups, output_padding,
                          [&] {
                            return conv_transpose2d(x, weight, bias, stride,
                                                    padding, output_padding,
                                                    groups, dilation);
                          });
  const char* op = "conv_transpose2d";
  const Operands o = as_4d(op, 2, x, weight);
  const Geom g = transpose_geom(op, o.x, x, weight, stride, padding,
                                output_padding, groups, dilation);
  check_bias(op, x, weight, bias, g.C);
  return from_4d(conv_input_grad(o.x, o.w, bias, g, op), 2, o.batched);
}

std::tuple<Tensor, Tensor, Tensor> conv_transpose2d_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight,
    IntList stride, IntList padding, IntList output_padding, int64_t groups,
    IntList dilation, std::array<bool, 3> output_mask) {
  const char* op = "conv_transpose2d_backward";
  const Operands o = as_4d(op, 2, x, weight);
  const Geom g = transpose_geom(op, o.x, x, weight, stride, padding,
                                output_padding, groups, dilation);
  std::vector<int64_t> expected = {g.N, g.C, g.H, g.W};
  if (!o.batched) expected.erase(expected.begin());
  check_grad_out(op, grad_out, x, expected);
  const Tensor gy = o.batched ? grad_out : grad_out.unsqueeze(0);
  Tensor gi, gw, gb;
  // The input side of a transposed conv is the output side of a conv.
  if (output_mask[0])
    gi = from_4d(conv_forward(gy, o.w, Tensor(), g, op), 2, o.batched);
  if (output_mask[1]) gw = conv_weight_grad(o.x, gy, g, op);
  if (output_mask[2]) gb = bias_grad(gy);
  return {gi, gw, gb};
}

// ---- pooling ----

std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& x, IntList kernel_size, IntList stride, IntList padding,
    IntList dilation, bool ceil_mode) {
  if (autograd::should_record(x))
    return autograd::max_pool2d(x, [&] {
      return max_pool2d_with_indices(x, kernel_size, stride, padding,
                                     dilation, ceil_mode);
    });
  const char* op = "max_pool2d";
  const Pool p =
      pool_geom(op, x, kernel_size, stride, padding, dilation, ceil_mode);
  KernelFn fn = kernel_for(Op::max_pool2d, x, op);
  const Geom& g = p.g;
  Tensor out = Tensor::empty({g.N, g.C, g.oh, g.ow}, x.dtype(), x.device());
  Tensor idx = Tensor::empty({g.N, g.C, g.oh, g.ow}, DType::Int64, x.device());
  run_pool(fn, p.x4, nullptr, out, &idx, g.window());
  if (!p.batched) return {out.squeeze(0), idx.squeeze(0)};
  return {out, idx};
}

Tensor max_pool2d(const Tensor& x, IntList kernel_size, IntList stride,
                  IntList padding, IntList dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(x, kernel_size, stride, padding,
                                             dilation, ceil_mode));
}

Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& x,
                           const Tensor& indices) {
  const char* op = "max_pool2d_backward";
  check_pool_input(op, x);
  check_defined(op, grad_out, "grad_output");
  check_defined(op, indices, "indices");
  check_same(op, x, grad_out, "grad_output");
  FASTT_CHECK(indices.dtype() == DType::Int64, RuntimeError,
              "{}: expected indices of dtype int64, but got {}", op,
              dtype_name(indices.dtype()));
  FASTT_CHECK(indices.device() == x.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, x.device().str(), indices.device().str());
  const int64_t nd = x.dim();
  FASTT_CHECK(grad_out.dim() == nd && grad_out.sizes()[0] == x.sizes()[0] &&
                  (nd == 3 || grad_out.sizes()[1] == x.sizes()[1]),
              RuntimeError,
              "{}: grad_output of size {} does not match input of size {}",
              op, list_str(grad_out.sizes()), list_str(x.sizes()));
  FASTT_CHECK(indices.sizes().equals(grad_out.sizes()), RuntimeError,
              "{}: expected indices of size {}, but got {}", op,
              list_str(grad_out.sizes()), list_str(indices.sizes()));
  KernelFn fn = kernel_for(Op::max_pool2d_backward, x, op);
  Tensor go = grad_out.contiguous(), ix = indices.contiguous();
  if (nd == 3) {
    go = go.unsqueeze(0);
    ix = ix.unsqueeze(0);
  }
  const Tensor x4 = nd == 3 ? x.unsqueeze(0) : x;
  Tensor gi = Tensor::empty(x4.sizes(), x.dtype(), x.device());
  run_pool(fn, go, &ix, gi, nullptr, IntList());
  return nd == 3 ? gi.squeeze(0) : gi;
}

namespace {
Pool avg_pool_geom(const char* op, const Tensor& x, IntList kernel_size,
                   IntList stride, IntList padding, bool ceil_mode,
                   bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
  FASTT_CHECK(!divisor_override || *divisor_override != 0, RuntimeError,
              "divisor must be not zero");
  Pool p = pool_geom(op, x, kernel_size, stride, padding, {1}, ceil_mode);
  p.g.win[kWinCountPad] = count_include_pad ? 1 : 0;
  p.g.win[kWinDivisor] = divisor_override ? *divisor_override : 0;
  return p;
}
}  // namespace

Tensor avg_pool2d(const Tensor& x, IntList kernel_size, IntList stride,
                  IntList padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  if (autograd::should_record(x))
    return autograd::avg_pool2d(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override, [&] {
          return avg_pool2d(x, kernel_size, stride, padding, ceil_mode,
                            count_include_pad, divisor_override);
        });
  const char* op = "avg_pool2d";
  const Pool p = avg_pool_geom(op, x, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override);
  KernelFn fn = kernel_for(Op::avg_pool2d, x, op);
  const Geom& g = p.g;
  Tensor out = Tensor::empty({g.N, g.C, g.oh, g.ow}, x.dtype(), x.device());
  run_pool(fn, p.x4, nullptr, out, nullptr, g.window());
  return p.batched ? out : out.squeeze(0);
}

Tensor avg_pool2d_backward(const Tensor& grad_out, const Tensor& x,
                           IntList kernel_size, IntList stride,
                           IntList padding, bool ceil_mode,
                           bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  const Pool p = avg_pool_geom(op, x, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override);
  KernelFn fn = kernel_for(Op::avg_pool2d_backward, x, op);
  const Tensor go = pool_grad_out(op, grad_out, x, p);
  Tensor gi = Tensor::empty(p.x4.sizes(), x.dtype(), x.device());
  run_pool(fn, go, nullptr, gi, nullptr, p.g.window());
  return p.batched ? gi : gi.squeeze(0);
}

Tensor adaptive_avg_pool2d(const Tensor& x, IntList output_size) {
  if (autograd::should_record(x))
    return autograd::adaptive_avg_pool2d(
        x, [&] { return adaptive_avg_pool2d(x, output_size); });
  const char* op = "adaptive_avg_pool2d";
  check_defined(op, x, "input");
  FASTT_CHECK(output_size.size() == 1 || output_size.size() == 2,
              RuntimeError, "adaptive_avg_pool2d: output_size must be 2");
  const int64_t nd = x.dim();
  FASTT_CHECK(nd == 3 || nd == 4, RuntimeError,
              "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}",
              list_str(x.sizes()));
  for (int64_t d = 1; d < nd; ++d)
    FASTT_CHECK(x.sizes()[d] != 0, RuntimeError,
                "adaptive_avg_pool2d(): Expected input to have non-zero size "
                "for non-batch dimensions, but input has sizes {} with "
                "dimension {} being empty",
                list_str(x.sizes()), d);
  int64_t os[2] = {output_size[0], output_size[output_size.size() - 1]};
  for (int i = 0; i < 2; ++i) {
    if (os[i] == -1) os[i] = x.sizes()[nd - 2 + i];  // torch's None
    FASTT_CHECK(os[i] >= 0, RuntimeError,
                "adaptive_avg_pool2d: elements of output_size must be "
                "greater than or equal to 0 but received {}",
                os[i]);
  }
  KernelFn fn = kernel_for(Op::adaptive_avg_pool2d, x, op);
  const Tensor x4 = nd == 3 ? x.unsqueeze(0) : x;
  Tensor out = Tensor::empty({x4.sizes()[0], x4.sizes()[1], os[0], os[1]},
                             x.dtype(), x.device());
  run_pool(fn, x4, nullptr, out, nullptr, IntList());
  return nd == 3 ? out.squeeze(0) : out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_out, const Tensor& x) {
  const char* op = "adaptive_avg_pool2d_backward";
  check_defined(op, x, "input");
  check_defined(op, grad_out, "grad_output");
  const int64_t nd = x.dim();
  FASTT_CHECK(nd == 3 || nd == 4, RuntimeError,
              "{}: Expected 3D or 4D tensor, but got {}", op,
              list_str(x.sizes()));
  check_same(op, x, grad_out, "grad_output");
  FASTT_CHECK(grad_out.dim() == nd && grad_out.sizes()[0] == x.sizes()[0] &&
                  (nd == 3 || grad_out.sizes()[1] == x.sizes()[1]),
              RuntimeError,
              "{}: grad_output of size {} does not match input of size {}",
              op, list_str(grad_out.sizes()), list_str(x.sizes()));
  KernelFn fn = kernel_for(Op::adaptive_avg_pool2d_backward, x, op);
  Tensor go = grad_out.contiguous();
  if (nd == 3) go = go.unsqueeze(0);
  const Tensor x4 = nd == 3 ? x.unsqueeze(0) : x;
  Tensor gi = Tensor::empty(x4.sizes(), x.dtype(), x.device());
  // An empty output grid makes every input gradient zero.
  if (go.numel() == 0) return nd == 3 ? gi.zero_().squeeze(0) : gi.zero_();
  run_pool(fn, go, nullptr, gi, nullptr, IntList());
  return nd == 3 ? gi.squeeze(0) : gi;
}

}  // namespace fastt

// CUDA kernels for the fused optimizer steps (Op::sgd_step, adam_step,
// rmsprop_step, adagrad_step, adadelta_step, adamax_step, nadam_step,
// radam_step, asgd_step, rprop_step), reading the OptimKernelArgs the op layer
// fills (csrc/ops/optim.h). A group's tensors go into a chunk table passed
// by value as the kernel's parameters (pointers of every list, sizes, per-
// tensor scalars, and a block -> (tensor, chunk) map), so a group is ONE
// launch; only a group that overflows the table takes several. Each block
// updates one chunk of one tensor. To add an algorithm: an element functor
// (*Elem), a Kernel struct that picks its flags, a line in the registration.
//
// The element math is kernels/cpu/optim.cpp's, operation by operation, in
// the same order: rnd<T>() rounds to storage where the CPU does (torch
// materialising a tensor), fused multiply-adds exactly at the CPU's madd()
// (its FMA build, the one x86 CPUs with AVX2 run), and every other product,
// sum, quotient and root through the _rn intrinsics so nvcc can neither
// contract them into FMAs nor approximate them under fast-math.
#include <cmath>

#include "csrc/ops/optim.h"
#include "kernels/cuda/loop.cuh"
#include "kernels/cuda/rn.cuh"

namespace fastt {
namespace cuda {
namespace {

// ---- Chunk table ----
constexpr int kThreads = 512;        // per block
constexpr int64_t kChunk = 65536;    // elements per block (128 per thread)
constexpr int kMaxBlocks = 320;      // blocks per launch
// The table plus a functor's hyperparameters must fit the kernel-parameter
// limit: 4 KB classically, 32764 bytes since CUDA 12.1 on Volta and newer
// (this build targets sm_90, and a CUDA 12.1+ runtime needs a driver that
// has it). 8.5 KB holds 100+ tensors for Adam with three scalars per
// tensor (an AdamW step over a model's ~100 parameters is one launch;
// tests/python/test_cuda_host_path.py) while keeping the per-launch copy
// small.
#if CUDART_VERSION >= 12010
constexpr size_t kParamBytes = 8704;
#else
constexpr size_t kParamBytes = 4096;
#endif
constexpr size_t kBodyBytes = 256;  // room left for the element functor

// Tensors per launch for D lists (params, grads, states...): what fits
// after the block map, at 8*D (pointers) + 8 (numel) + 24 (scalars) bytes.
template <int D>
constexpr int max_tensors() {
  return int((kParamBytes - kBodyBytes - 16 - kMaxBlocks * 5) /
             (8 * D + 32));
}

template <int D>
struct ChunkTable {
  static constexpr int kTensors = max_tensors<D>();
  static_assert(kTensors <= 256, "tensor slots are indexed by uint8_t");
  void* ptr[D][kTensors];
  int64_t numel[kTensors];
  double scalar[3][kTensors];  // per tensor: step sizes, bias corrections
  int chunk[kMaxBlocks];       // chunk index within its tensor
  uint8_t tensor[kMaxBlocks];  // slot of the block's tensor
};

// One block per chunk; the block's threads stride over the chunk. Body is
// an element functor: body(ptrs, k, scalar0, scalar1, scalar2) updates
// element k.
template <int D, class Body>
__global__ void __launch_bounds__(kThreads)
    multi_tensor_kernel(ChunkTable<D> tab, Body body) {
  using T = typename Body::T;
  const int slot = tab.tensor[blockIdx.x];
  T* ptr[D];
#pragma unroll
  for (int d = 0; d < D; ++d) ptr[d] = static_cast<T*>(tab.ptr[d][slot]);
  const int64_t begin = int64_t(tab.chunk[blockIdx.x]) * kChunk;
  const int64_t n = tab.numel[slot];
  const int64_t end = n - begin < kChunk ? n : begin + kChunk;
  const double s0 = tab.scalar[0][slot], s1 = tab.scalar[1][slot];
  const double s2 = tab.scalar[2][slot];
  for (int64_t k = begin + threadIdx.x; k < end; k += kThreads)
    body(ptr, k, s0, s1, s2);
}

template <int D, class Body>
void launch_table(const ChunkTable<D>& tab, int blocks, const Body& body,
                  const char* what) {
  static_assert(sizeof(ChunkTable<D>) + sizeof(Body) <= kParamBytes,
                "optimizer kernel parameters exceed the limit");
  multi_tensor_kernel<D, Body>
      <<<blocks, kThreads, 0, current_stream()>>>(tab, body);
  FASTT_CUDA_CHECK_LAUNCH(what);
}

// Packs the n tensors of lists[0..D) (each a list of n dense tensors of
// Body::T, all on one device) into tables and launches each one when full
// and the last. scalars(i, out) fills tensor i's three per-tensor scalars
// (zero unless set).
template <int D, class Body, class Scalars>
void run_lists(const OptimKernelArgs& a, const Tensor* const* lists,
               const Body& body, Scalars&& scalars, const char* what) {
  if (a.n == 0) return;
  // Launch on the parameters' device, and leave the caller's current
  // device as it was (like every other op).
  DeviceGuard guard(a.params[0].device().index);
  ChunkTable<D> tab;
  constexpr int kTensors = ChunkTable<D>::kTensors;
  int slot = 0, blocks = 0;
  for (int64_t i = 0; i < a.n; ++i) {
    const int64_t numel = a.params[i].numel();
    if (numel == 0) continue;
    for (int d = 0; d < D; ++d) tab.ptr[d][slot] = lists[d][i].data_ptr();
    tab.numel[slot] = numel;
    double s[3] = {0, 0, 0};
    scalars(i, s);
    for (int j = 0; j < 3; ++j) tab.scalar[j][slot] = s[j];
    const int64_t chunks = (numel + kChunk - 1) / kChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      tab.tensor[blocks] = uint8_t(slot);
      tab.chunk[blocks] = int(c);
      ++blocks;
      const bool last = c == chunks - 1;
      if (blocks == kMaxBlocks || (last && slot + 1 == kTensors)) {
        launch_table(tab, blocks, body, what);
        blocks = 0;
        if (last) {
          slot = -1;  // the next tensor starts the fresh table
        } else {      // this tensor's other chunks go on in slot 0
          for (int d = 0; d < D; ++d) tab.ptr[d][0] = tab.ptr[d][slot];
          tab.numel[0] = numel;
          for (int j = 0; j < 3; ++j) tab.scalar[j][0] = s[j];
          slot = 0;
        }
      }
    }
    ++slot;
  }
  if (blocks > 0) launch_table(tab, blocks, body, what);
}

// ---- Element math (device; rn.cuh for the rounded-once ops) ----
// The CPU's madd<true>: a * b + c rounded once.
__device__ __forceinline__ float madd(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
__device__ __forceinline__ double madd(double a, double b, double c) {
  return __fma_rn(a, b, c);
}

// Rounds to the storage type where torch materialises a tensor (identity
// for float and double).
template <class T>
__device__ __forceinline__ opmath_t<T> rnd(opmath_t<T> x) {
  if constexpr (std::is_same<T, opmath_t<T>>::value) return x;
  else return static_cast<opmath_t<T>>(static_cast<T>(x));
}

// torch's lerp: the formula depends on |weight| < 0.5 (decided on host).
template <class M>
__device__ __forceinline__ M lerp(M self, M end, M weight,
                                  M one_minus_weight, bool small) {
  const M diff = sub_rn(end, self);
  return small ? madd(weight, diff, self) : madd(-one_minus_weight, diff, end);
}

// ---- Host-side scalars, as kernels/cpu/optim.cpp computes them ----
// The `alpha` of torch's add(x, alpha=...): the 16-bit floats round it to
// the storage type first (duplicated from the CPU file's alpha_of).
template <class T>
opmath_t<T> alpha_of(double x) {
  return static_cast<opmath_t<T>>(
      static_cast<T>(static_cast<opmath_t<T>>(x)));
}

// ---- SGD ----  lists: params, grads[, momentum buffers]
// MOM: 0 no momentum, 1 first step (buf = grad), 2 buf update.
template <class T_, bool WD, int MOM>
struct SgdElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, wd, mom, mom_alpha, damp1, neg_lr;
  bool nesterov;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k, double,
                                             double, double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    const M pk = M(p[k]);
    M gk = sign * M(g[k]);  // exact: sign is +-1
    if (WD) gk = rnd<T>(madd(pk, wd, gk));
    if constexpr (MOM == 1) {
      T* buf = ptr[2];
      buf[k] = T(gk);
      const M bk = rnd<T>(gk);
      gk = nesterov ? rnd<T>(madd(bk, mom_alpha, gk)) : bk;
    } else if constexpr (MOM == 2) {
      T* buf = ptr[2];
      M bk = rnd<T>(mul_rn(M(buf[k]), mom));
      bk = rnd<T>(madd(gk, damp1, bk));
      buf[k] = T(bk);
      gk = nesterov ? rnd<T>(madd(bk, mom_alpha, gk)) : bk;
    }
    p[k] = T(madd(gk, neg_lr, pk));
  }
};

template <class T, bool WD, int MOM>
void sgd_launch(const OptimKernelArgs& a) {
  SgdElem<T, WD, MOM> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.wd = alpha_of<T>(a.weight_decay);
  e.mom = M(a.momentum);
  e.mom_alpha = alpha_of<T>(a.momentum);
  e.damp1 = alpha_of<T>(1.0 - a.dampening);
  e.neg_lr = alpha_of<T>(-a.lr);
  e.nesterov = a.nesterov;
  auto none = [](int64_t, double*) {};
  if constexpr (MOM == 0) {
    const Tensor* const lists[2] = {a.params, a.grads};
    run_lists<2>(a, lists, e, none, "sgd_step");
  } else {
    const Tensor* const lists[3] = {a.params, a.grads, a.state[0]};
    run_lists<3>(a, lists, e, none, "sgd_step");
  }
}

template <class T>
struct SgdKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    using Fn = void (*)(const OptimKernelArgs&);
    static constexpr Fn table[2][3] = {
        {sgd_launch<T, false, 0>, sgd_launch<T, false, 1>,
         sgd_launch<T, false, 2>},
        {sgd_launch<T, true, 0>, sgd_launch<T, true, 1>,
         sgd_launch<T, true, 2>}};
    const int mom = a.momentum == 0 ? 0 : (a.first_step ? 1 : 2);
    table[a.weight_decay != 0][mom](a);
  }
};

// ---- Adam / AdamW ----  lists: params, grads, exp_avg, exp_avg_sq
// [, max_exp_avg_sq]. WD: 0 none, 1 L2 (into the gradient), 2 decoupled.
// Per-tensor scalars: -lr / bias_correction1, sqrt(bias_correction2).
template <class T_, int WD, bool AMS>
struct AdamElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, eps, w1, one_minus_w1, beta2, w2, wd, decay;
  bool small;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k,
                                             double s0, double s1,
                                             double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    T* m = ptr[2];
    T* v = ptr[3];
    const M neg_step_size = M(s0), bc2_sqrt = M(s1);
    M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD == 2) pk = rnd<T>(mul_rn(pk, decay));
    if (WD == 1) gk = rnd<T>(madd(pk, wd, gk));
    const M mk = rnd<T>(lerp(M(m[k]), gk, w1, one_minus_w1, small));
    M vk = rnd<T>(mul_rn(M(v[k]), beta2));
    vk = rnd<T>(madd(mul_rn(w2, gk), gk, vk));  // addcmul(g, g, value=1-b2)
    m[k] = T(mk);
    v[k] = T(vk);
    M vd = vk;
    if constexpr (AMS) {
      T* vmax = ptr[4];
      const M old = M(vmax[k]);
      vd = (old > vk || old != old) ? old : vk;  // torch.maximum: NaN wins
      vmax[k] = T(vd);
    }
    M denom = rnd<T>(sqrt_rn(vd));
    denom = rnd<T>(div_rn(denom, bc2_sqrt));
    denom = rnd<T>(add_rn(denom, eps));
    p[k] = T(add_rn(pk, div_rn(mul_rn(neg_step_size, mk), denom)));
  }
};

template <class T, int WD, bool AMS>
void adam_launch(const OptimKernelArgs& a) {
  AdamElem<T, WD, AMS> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.eps = M(a.eps);
  e.w1 = M(1 - a.beta1);
  e.one_minus_w1 = M(1) - e.w1;
  e.small = std::abs(e.w1) < M(0.5);
  e.beta2 = M(a.beta2);
  e.w2 = M(1 - a.beta2);
  e.wd = alpha_of<T>(a.weight_decay);
  e.decay = M(1 - a.lr * a.weight_decay);
  // torch's Python arithmetic in double; tensors usually share a step
  // count, so pow() runs once per distinct count.
  double last = -1, step_size = 0, bc2_sqrt = 0;
  auto scalars = [&](int64_t i, double* s) {
    const double step = a.steps[i];
    if (step != last) {
      last = step;
      step_size = a.lr / (1 - std::pow(a.beta1, step));
      bc2_sqrt = std::pow(1 - std::pow(a.beta2, step), 0.5);
    }
    s[0] = -step_size;
    s[1] = bc2_sqrt;
  };
  if constexpr (AMS) {
    const Tensor* const lists[5] = {a.params, a.grads, a.state[0], a.state[1],
                                    a.state[2]};
    run_lists<5>(a, lists, e, scalars, "adam_step");
  } else {
    const Tensor* const lists[4] = {a.params, a.grads, a.state[0],
                                    a.state[1]};
    run_lists<4>(a, lists, e, scalars, "adam_step");
  }
}

template <class T>
struct AdamKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    using Fn = void (*)(const OptimKernelArgs&);
    static constexpr Fn table[3][2] = {
        {adam_launch<T, 0, false>, adam_launch<T, 0, true>},
        {adam_launch<T, 1, false>, adam_launch<T, 1, true>},
        {adam_launch<T, 2, false>, adam_launch<T, 2, true>}};
    const int wd = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);
    table[wd][a.amsgrad](a);
  }
};

// ---- RMSprop ----  lists: params, grads, square_avg[, grad_avg]
// [, momentum buffer] (only the lists in use, in that order).
template <class T_, bool WD, bool CENTERED, bool MOM>
struct RmspropElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, wd, alpha, w, one_minus_w, eps, mom, neg_lr, neg_lr_alpha;
  bool small;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k, double,
                                             double, double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    T* sq = ptr[2];
    const M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd(pk, wd, gk));
    M s = rnd<T>(mul_rn(M(sq[k]), alpha));
    s = rnd<T>(madd(mul_rn(w, gk), gk, s));
    sq[k] = T(s);
    if constexpr (CENTERED) {
      T* gavg = ptr[3];
      const M ga = rnd<T>(lerp(M(gavg[k]), gk, w, one_minus_w, small));
      gavg[k] = T(ga);
      s = rnd<T>(madd(-ga, ga, s));  // addcmul(value=-1)
    }
    M avg = rnd<T>(sqrt_rn(s));
    avg = rnd<T>(add_rn(avg, eps));
    if constexpr (MOM) {
      T* buf = ptr[CENTERED ? 4 : 3];
      M bk = rnd<T>(mul_rn(M(buf[k]), mom));
      bk = rnd<T>(add_rn(bk, div_rn(gk, avg)));  // addcdiv(value=1)
      buf[k] = T(bk);
      p[k] = T(madd(bk, neg_lr_alpha, pk));
    } else {
      p[k] = T(add_rn(pk, div_rn(mul_rn(neg_lr, gk), avg)));
    }
  }
};

template <class T, bool WD, bool C, bool MOM>
void rmsprop_launch(const OptimKernelArgs& a) {
  RmspropElem<T, WD, C, MOM> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.wd = alpha_of<T>(a.weight_decay);
  e.alpha = M(a.alpha);
  e.w = M(1 - a.alpha);
  e.one_minus_w = M(1) - e.w;
  e.small = std::abs(e.w) < M(0.5);
  e.eps = M(a.eps);
  e.mom = M(a.momentum);
  e.neg_lr = M(-a.lr);
  e.neg_lr_alpha = alpha_of<T>(-a.lr);
  auto none = [](int64_t, double*) {};
  constexpr int D = 3 + int(C) + int(MOM);
  const Tensor* lists[5] = {a.params, a.grads, a.state[0], nullptr, nullptr};
  int d = 3;
  if (C) lists[d++] = a.state[1];
  if (MOM) lists[d++] = a.state[2];
  run_lists<D>(a, lists, e, none, "rmsprop_step");
}

template <class T>
struct RmspropKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    using Fn = void (*)(const OptimKernelArgs&);
#define FASTT_RMS(WD, C) \
  { rmsprop_launch<T, WD, C, false>, rmsprop_launch<T, WD, C, true> }
    static constexpr Fn table[2][2][2] = {
        {FASTT_RMS(false, false), FASTT_RMS(false, true)},
        {FASTT_RMS(true, false), FASTT_RMS(true, true)}};
#undef FASTT_RMS
    table[a.weight_decay != 0][a.centered][a.momentum > 0](a);
  }
};

// ---- Adagrad ----  lists: params, grads, sum. Per-tensor scalar: the
// negated decayed learning rate.
template <class T_, bool WD>
struct AdagradElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, wd, eps;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k,
                                             double s0, double,
                                             double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    T* sum = ptr[2];
    const M neg_clr = M(s0);
    const M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd(pk, wd, gk));
    const M s = rnd<T>(madd(gk, gk, M(sum[k])));  // addcmul(value=1)
    sum[k] = T(s);
    M std_ = rnd<T>(sqrt_rn(s));
    std_ = rnd<T>(add_rn(std_, eps));
    p[k] = T(add_rn(pk, div_rn(mul_rn(neg_clr, gk), std_)));
  }
};

template <class T, bool WD>
void adagrad_launch(const OptimKernelArgs& a) {
  AdagradElem<T, WD> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.wd = alpha_of<T>(a.weight_decay);
  e.eps = M(a.eps);
  auto scalars = [&](int64_t i, double* s) {
    s[0] = -(a.lr / (1 + (a.steps[i] - 1) * a.lr_decay));
  };
  const Tensor* const lists[3] = {a.params, a.grads, a.state[0]};
  run_lists<3>(a, lists, e, scalars, "adagrad_step");
}

template <class T>
struct AdagradKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    if (a.weight_decay != 0) adagrad_launch<T, true>(a);
    else adagrad_launch<T, false>(a);
  }
};

// The op layer's per-tensor scalars (OptimKernelArgs::aux) as the table's.
inline auto aux_scalars(const OptimKernelArgs& a) {
  return [&a](int64_t i, double* s) {
    for (int j = 0; j < kOptimAux; ++j) s[j] = a.aux[kOptimAux * i + j];
  };
}

// ---- Adadelta ----  lists: params, grads, square_avg, acc_delta
template <class T_, bool WD>
struct AdadeltaElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, wd, rho, w, eps, neg_lr;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k, double,
                                             double, double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    T* sq = ptr[2];
    T* acc = ptr[3];
    const M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd(pk, wd, gk));
    M s = rnd<T>(mul_rn(M(sq[k]), rho));
    s = rnd<T>(madd(mul_rn(w, gk), gk, s));
    sq[k] = T(s);
    const M std_ = rnd<T>(sqrt_rn(rnd<T>(add_rn(s, eps))));
    M delta = rnd<T>(sqrt_rn(rnd<T>(add_rn(M(acc[k]), eps))));
    delta = rnd<T>(div_rn(delta, std_));
    delta = rnd<T>(mul_rn(delta, gk));
    M ad = rnd<T>(mul_rn(M(acc[k]), rho));
    ad = rnd<T>(madd(mul_rn(w, delta), delta, ad));
    acc[k] = T(ad);
    p[k] = T(madd(delta, neg_lr, pk));
  }
};

template <class T, bool WD>
void adadelta_launch(const OptimKernelArgs& a) {
  AdadeltaElem<T, WD> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.wd = alpha_of<T>(a.weight_decay);
  e.rho = M(a.rho);
  e.w = M(1 - a.rho);
  e.eps = alpha_of<T>(a.eps);  // torch rounds add()'s scalar
  e.neg_lr = alpha_of<T>(-a.lr);
  auto none = [](int64_t, double*) {};
  const Tensor* const lists[4] = {a.params, a.grads, a.state[0], a.state[1]};
  run_lists<4>(a, lists, e, none, "adadelta_step");
}

template <class T>
struct AdadeltaKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    if (a.weight_decay != 0) adadelta_launch<T, true>(a);
    else adadelta_launch<T, false>(a);
  }
};

// ---- Adamax ----  lists: params, grads, exp_avg, exp_inf. Scalar:
// -lr / bias_correction.
template <class T_, bool WD>
struct AdamaxElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, wd, eps, w1, one_minus_w1, beta2;
  bool small;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k,
                                             double s0, double,
                                             double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    T* m = ptr[2];
    T* inf = ptr[3];
    const M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd(pk, wd, gk));
    const M mk = rnd<T>(lerp(M(m[k]), gk, w1, one_minus_w1, small));
    m[k] = T(mk);
    const M x = rnd<T>(mul_rn(M(inf[k]), beta2));
    const M y = rnd<T>(add_rn(gk < M(0) ? -gk : gk, eps));
    const M u = (x > y || x != x) ? x : y;  // torch.maximum: NaN wins
    inf[k] = T(u);
    p[k] = T(add_rn(pk, div_rn(mul_rn(M(s0), mk), u)));
  }
};

template <class T, bool WD>
void adamax_launch(const OptimKernelArgs& a) {
  AdamaxElem<T, WD> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.wd = alpha_of<T>(a.weight_decay);
  e.eps = alpha_of<T>(a.eps);  // torch rounds add()'s scalar
  e.w1 = M(1 - a.beta1);
  e.one_minus_w1 = M(1) - e.w1;
  e.small = std::abs(e.w1) < M(0.5);
  e.beta2 = M(a.beta2);
  const Tensor* const lists[4] = {a.params, a.grads, a.state[0], a.state[1]};
  run_lists<4>(a, lists, e, aux_scalars(a), "adamax_step");
}

template <class T>
struct AdamaxKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    if (a.weight_decay != 0) adamax_launch<T, true>(a);
    else adamax_launch<T, false>(a);
  }
};

// ---- NAdam / RAdam shared moments ----
// WD: 0 none, 1 L2, 2 decoupled. Updates exp_avg (ptr[2]) and exp_avg_sq
// (ptr[3]); returns them through mk / vk and the decayed parameter and
// gradient through pk / gk.
template <class T, int WD, class M, class P>
__device__ __forceinline__ void adam_moments(const P& ptr, int64_t k, M sign,
                                             M wd, M decay, M w1,
                                             M one_minus_w1, bool small,
                                             M beta2, M w2, M& pk, M& gk,
                                             M& mk, M& vk) {
  T* p = ptr[0];
  const T* g = ptr[1];
  T* m = ptr[2];
  T* v = ptr[3];
  pk = M(p[k]);
  gk = sign * M(g[k]);
  if (WD == 2) pk = rnd<T>(mul_rn(pk, decay));
  if (WD == 1) gk = rnd<T>(madd(pk, wd, gk));
  mk = rnd<T>(lerp(M(m[k]), gk, w1, one_minus_w1, small));
  vk = rnd<T>(mul_rn(M(v[k]), beta2));
  vk = rnd<T>(madd(mul_rn(w2, gk), gk, vk));
  m[k] = T(mk);
  v[k] = T(vk);
}

// ---- NAdam ----  lists: params, grads, exp_avg, exp_avg_sq. Scalars:
// bias_correction2, the gradient's and exp_avg's coefficients.
template <class T_, int WD>
struct NadamElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, eps, w1, one_minus_w1, beta2, w2, wd, decay;
  bool small;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k,
                                             double s0, double s1,
                                             double s2) const {
    M pk, gk, mk, vk;
    adam_moments<T, WD>(ptr, k, sign, wd, decay, w1, one_minus_w1, small,
                        beta2, w2, pk, gk, mk, vk);
    M denom = rnd<T>(div_rn(vk, M(s0)));
    denom = rnd<T>(sqrt_rn(denom));
    denom = rnd<T>(add_rn(denom, eps));
    pk = rnd<T>(add_rn(pk, div_rn(mul_rn(M(s1), gk), denom)));
    T* p = ptr[0];
    p[k] = T(add_rn(pk, div_rn(mul_rn(M(s2), mk), denom)));
  }
};

// ---- RAdam ----  lists: params, grads, exp_avg, exp_avg_sq. Scalars:
// bias_correction1, rect (0: the unrectified update), sqrt(bc2).
template <class T_, int WD>
struct RadamElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, eps, w1, one_minus_w1, beta2, w2, wd, decay, lr;
  bool small;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k,
                                             double s0, double s1,
                                             double s2) const {
    M pk, gk, mk, vk;
    adam_moments<T, WD>(ptr, k, sign, wd, decay, w1, one_minus_w1, small,
                        beta2, w2, pk, gk, mk, vk);
    M x = rnd<T>(div_rn(mk, M(s0)));
    x = rnd<T>(mul_rn(x, lr));
    if (s1 > 0) {
      M r = rnd<T>(sqrt_rn(vk));
      r = rnd<T>(add_rn(r, eps));
      M ad = rnd<T>(div_rn(M(1), r));
      ad = rnd<T>(mul_rn(ad, M(s2)));
      x = rnd<T>(mul_rn(x, ad));
      x = rnd<T>(mul_rn(x, M(s1)));
    }
    T* p = ptr[0];
    p[k] = T(sub_rn(pk, x));
  }
};

template <template <class, int> class Elem, class T, int WD>
void adam_family_launch(const OptimKernelArgs& a, const char* what) {
  Elem<T, WD> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.eps = alpha_of<T>(a.eps);  // torch rounds add()'s scalar
  e.w1 = M(1 - a.beta1);
  e.one_minus_w1 = M(1) - e.w1;
  e.small = std::abs(e.w1) < M(0.5);
  e.beta2 = M(a.beta2);
  e.w2 = M(1 - a.beta2);
  e.wd = alpha_of<T>(a.weight_decay);
  e.decay = M(1 - a.lr * a.weight_decay);
  if constexpr (std::is_same<Elem<T, WD>, RadamElem<T, WD>>::value)
    e.lr = M(a.lr);
  const Tensor* const lists[4] = {a.params, a.grads, a.state[0], a.state[1]};
  run_lists<4>(a, lists, e, aux_scalars(a), what);
}

template <class T>
struct NadamKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    const int wd = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);
    if (wd == 0) adam_family_launch<NadamElem, T, 0>(a, "nadam_step");
    else if (wd == 1) adam_family_launch<NadamElem, T, 1>(a, "nadam_step");
    else adam_family_launch<NadamElem, T, 2>(a, "nadam_step");
  }
};

template <class T>
struct RadamKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    const int wd = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);
    if (wd == 0) adam_family_launch<RadamElem, T, 0>(a, "radam_step");
    else if (wd == 1) adam_family_launch<RadamElem, T, 1>(a, "radam_step");
    else adam_family_launch<RadamElem, T, 2>(a, "radam_step");
  }
};

// ---- ASGD ----  lists: params, grads, ax. Scalars: eta, mu.
template <class T_, bool WD>
struct AsgdElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, wd;
  double lambd;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k,
                                             double eta, double mu,
                                             double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    T* ax = ptr[2];
    M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd(pk, wd, gk));
    pk = rnd<T>(mul_rn(pk, M(1 - lambd * eta)));  // mul_(1 - lambd * eta)
    // add_(grad, alpha=-eta): the 16-bit floats round alpha to storage
    const M neg_eta = M(T(M(-eta)));
    pk = rnd<T>(madd(gk, neg_eta, pk));
    p[k] = T(pk);
    if (mu != 1) {
      const M axk = M(ax[k]);
      M d = rnd<T>(sub_rn(pk, axk));
      d = rnd<T>(mul_rn(d, M(mu)));
      ax[k] = T(add_rn(axk, d));
    } else {
      ax[k] = T(pk);
    }
  }
};

template <class T, bool WD>
void asgd_launch(const OptimKernelArgs& a) {
  AsgdElem<T, WD> e;
  using M = opmath_t<T>;
  e.sign = a.maximize ? M(-1) : M(1);
  e.wd = alpha_of<T>(a.weight_decay);
  e.lambd = a.lambd;
  const Tensor* const lists[3] = {a.params, a.grads, a.state[0]};
  run_lists<3>(a, lists, e, aux_scalars(a), "asgd_step");
}

template <class T>
struct AsgdKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    if (a.weight_decay != 0) asgd_launch<T, true>(a);
    else asgd_launch<T, false>(a);
  }
};

// ---- Rprop ----  lists: params, grads, prev, step_size
template <class T_>
struct RpropElem {
  using T = T_;
  using M = opmath_t<T>;
  M sign, etaplus, etaminus, lo, hi;
  template <class P>
  __device__ __forceinline__ void operator()(const P& ptr, int64_t k, double,
                                             double, double) const {
    T* p = ptr[0];
    const T* g = ptr[1];
    T* prev = ptr[2];
    T* ss = ptr[3];
    M gk = sign * M(g[k]);
    const M prod = rnd<T>(mul_rn(gk, M(prev[k])));
    const M f = prod > M(0) ? etaplus : (prod < M(0) ? etaminus : M(1));
    M s = rnd<T>(mul_rn(M(ss[k]), f));
    if (!(s != s)) s = s < lo ? lo : (s > hi ? hi : s);  // clamp_
    ss[k] = T(s);
    if (prod < M(0)) gk = M(0);
    const M sg = M(int(gk > M(0)) - int(gk < M(0)));
    p[k] = T(madd(-sg, s, M(p[k])));
    prev[k] = T(gk);
  }
};

template <class T>
struct RpropKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    RpropElem<T> e;
    using M = opmath_t<T>;
    e.sign = a.maximize ? M(-1) : M(1);
    e.etaplus = M(T(M(a.etaplus)));
    e.etaminus = M(T(M(a.etaminus)));
    e.lo = M(T(M(a.step_size_min)));
    e.hi = M(T(M(a.step_size_max)));
    auto none = [](int64_t, double*) {};
    const Tensor* const lists[4] = {a.params, a.grads, a.state[0],
                                    a.state[1]};
    run_lists<4>(a, lists, e, none, "rprop_step");
  }
};

}  // namespace

void register_optim_cuda_kernels() {
#define FASTT_KERNELS_optim
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt

// CPU kernels for the fused optimizer steps (Op::sgd_step, adam_step,
// rmsprop_step, adagrad_step, adadelta_step, adamax_step, nadam_step,
// radam_step, asgd_step, rprop_step). Each reads an OptimKernelArgs (address in
// KernelArgs::i0, see csrc/ops/optim.h) and updates every tensor of the
// lists in one call; large totals are split into element chunks across
// threads. To add an algorithm: a *_body loop, its *_fma / *_base builds,
// a Kernel struct picking one from the options, a line in
// register_optim_kernels.
//
// The arithmetic mirrors torch.optim's single-tensor code op by op: scalars
// become the compute type like torch's Scalar arguments, rnd<T>() rounds
// wherever torch materialises a tensor (a no-op for float and double, a
// rounding to storage for the 16-bit floats), and madd<F>() is a fused
// multiply-add exactly where torch's CPU kernels fuse one (add with alpha,
// lerp, addcmul; measured against torch 2.13's AVX2/AVX512 kernels). On
// x86 each loop is built twice: for AVX2+FMA CPUs (where torch fuses) and
// for the baseline ISA without FMA (like torch's DEFAULT kernels); the
// choice is made once at registration. SGD then matches torch bit for bit
// in float32 and float64; the others can differ by an ulp where torch's
// square root (MKL/vectorized, not correctly rounded) differs from IEEE
// sqrt, which is what these loops use.
//
// State lists (state[0..2]) per op:
//   sgd_step      momentum buffers (unused when momentum == 0)
//   adam_step     exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad)
//   rmsprop_step  square_avg, grad_avg (centered), momentum buffer
//   adagrad_step  sum
//   adadelta_step square_avg, acc_delta
//   adamax_step   exp_avg, exp_inf
//   nadam_step    exp_avg, exp_avg_sq (mu_product: the op layer)
//   radam_step    exp_avg, exp_avg_sq
//   asgd_step     ax (eta, mu: the op layer)
//   rprop_step    prev, step_size
// Per-tensor scalars the op layer derives from the step count and scalar
// state arrive in OptimKernelArgs::aux (kOptimAux per tensor).
// No implicit contraction: fused multiply-adds only where madd() asks.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include <algorithm>
#include <cmath>
#include <vector>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "csrc/ops/optim.h"
#include "csrc/thread_state.h"
#include "kernels/cpu/loop.h"

namespace fastt {
namespace {
using namespace cpu;

// Optimizer loops stream 3-5 arrays per element; below this many elements
// in total a second thread costs more than it saves.
constexpr int64_t kOptimGrain = 32768;

// Inlined into the FMA builds too, where std::fma is one instruction (an
// out-of-line copy would call libm's fma).
#define FASTT_ALWAYS_INLINE inline __attribute__((always_inline))

template <class T>
FASTT_ALWAYS_INLINE opmath_t<T> rnd(opmath_t<T> x) {
  return static_cast<opmath_t<T>>(static_cast<T>(x));
}

// The `alpha` of torch's add(x, alpha=...): for the 16-bit floats torch
// rounds it to the storage type first (mul's and lerp's scalars are not).
template <class T>
FASTT_ALWAYS_INLINE opmath_t<T> alpha_of(double x) {
  return static_cast<opmath_t<T>>(static_cast<T>(static_cast<opmath_t<T>>(x)));
}

// a * b + c, rounded once when F (std::fma), twice otherwise.
template <bool F, class M>
FASTT_ALWAYS_INLINE M madd(M a, M b, M c) {
  if constexpr (F) return std::fma(a, b, c);
  else return a * b + c;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define FASTT_OPTIM_X86 1
// The FMA build of a loop (std::fma becomes one instruction).
#define FASTT_OPTIM_FMA_TARGET __attribute__((target("avx2,fma")))
#else
#define FASTT_OPTIM_FMA_TARGET
#endif

template <class T>
inline T* data_of(const Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

// torch's lerp (ATen/native/Lerp.h): the formula depends on |weight| < 0.5.
template <bool F, class M>
FASTT_ALWAYS_INLINE M lerp(M self, M end, M weight, M one_minus_weight,
                           bool small) {
  const M diff = end - self;
  return small ? madd<F>(weight, diff, self)
               : madd<F>(-one_minus_weight, diff, end);
}

// Calls chunk(i, begin, end) over element ranges of tensor i covering every
// tensor; threads split the concatenated elements above the grain.
template <class Chunk>
inline void for_each_chunk(const OptimKernelArgs& a, Chunk&& chunk) {
  const int64_t* off = a.offsets;
  const int64_t total = off[a.n];
  if (total <= kOptimGrain) {
    for (int64_t i = 0; i < a.n; ++i) chunk(i, int64_t(0), off[i + 1] - off[i]);
    return;
  }
  parallel_for(0, total, kOptimGrain, [&](int64_t lo, int64_t hi) {
    // The tensor holding element lo: the last i with off[i] <= lo.
    int64_t i = std::upper_bound(off, off + a.n + 1, lo) - off - 1;
    while (lo < hi) {
      const int64_t end = std::min(hi, off[i + 1]);
      if (end > lo) chunk(i, lo - off[i], end - off[i]);
      lo = end;
      ++i;
    }
  });
}

// Loops that take a square root run in blocks: std::sqrt's errno path
// (GCC keeps it per function whatever the pragma) stops the vectorizer, so
// phase A fills tmp[], sqrt_lanes() takes the roots with vector
// instructions (correctly rounded, like sqrtf) as wide as the vectorizer's
// (AVX in the FMA build, SSE2 otherwise: equal widths keep store-to-load
// forwarding working), and phase B finishes the elements.
constexpr int kBlock = 32;
constexpr int kLanes = 8;  // tmp is processed in multiples of this

#if defined(FASTT_OPTIM_X86)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float v8sf __attribute__((vector_size(32)));
typedef double v4df __attribute__((vector_size(32)));
#if defined(__clang__)
// clang checks a builtin's target features in the function holding it (GCC
// after inlining), so there the AVX loops get FMA-target functions.
FASTT_OPTIM_FMA_TARGET inline void sqrt_avx(float* x, int n) {
  for (int j = 0; j < n; j += 8) {
    v8sf v;
    __builtin_memcpy(&v, x + j, sizeof v);
    v = __builtin_ia32_sqrtps256(v);
    __builtin_memcpy(x + j, &v, sizeof v);
  }
}
FASTT_OPTIM_FMA_TARGET inline void sqrt_avx(double* x, int n) {
  for (int j = 0; j < n; j += 4) {
    v4df v;
    __builtin_memcpy(&v, x + j, sizeof v);
    v = __builtin_ia32_sqrtpd256(v);
    __builtin_memcpy(x + j, &v, sizeof v);
  }
}
#endif
// Only ever inlined into the FMA build (the AVX builtins need it).
template <bool F>
FASTT_ALWAYS_INLINE void sqrt_lanes(float* x, int n) {
  if constexpr (F) {
#if defined(__clang__)
    sqrt_avx(x, n);
#else
    for (int j = 0; j < n; j += 8) {
      v8sf v;
      __builtin_memcpy(&v, x + j, sizeof v);
      v = __builtin_ia32_sqrtps256(v);
      __builtin_memcpy(x + j, &v, sizeof v);
    }
#endif
  } else {
    for (int j = 0; j < n; j += 4)
      _mm_storeu_ps(x + j, _mm_sqrt_ps(_mm_loadu_ps(x + j)));
  }
}
template <bool F>
FASTT_ALWAYS_INLINE void sqrt_lanes(double* x, int n) {
  if constexpr (F) {
#if defined(__clang__)
    sqrt_avx(x, n);
#else
    for (int j = 0; j < n; j += 4) {
      v4df v;
      __builtin_memcpy(&v, x + j, sizeof v);
      v = __builtin_ia32_sqrtpd256(v);
      __builtin_memcpy(x + j, &v, sizeof v);
    }
#endif
  } else {
    for (int j = 0; j < n; j += 2)
      _mm_storeu_pd(x + j, _mm_sqrt_pd(_mm_loadu_pd(x + j)));
  }
}
#pragma GCC diagnostic pop
#else
template <bool F, class M>
FASTT_ALWAYS_INLINE void sqrt_lanes(M* x, int n) {
  for (int j = 0; j < n; ++j) x[j] = std::sqrt(x[j]);
}
#endif

// Runs phase_a(k, j), sqrt of tmp[j], phase_b(k, j) over [b, e), with j
// the element's lane in its block.
template <bool F, class M, class A, class B>
FASTT_ALWAYS_INLINE void blocked(int64_t b, int64_t e, M* tmp, A&& phase_a,
                                 B&& phase_b) {
  int64_t k0 = b;
  for (; k0 + kBlock <= e; k0 += kBlock) {
    for (int j = 0; j < kBlock; ++j) phase_a(k0 + j, j);
    sqrt_lanes<F>(tmp, kBlock);
    for (int j = 0; j < kBlock; ++j) phase_b(k0 + j, j);
  }
  const int rest = int(e - k0);
  if (rest > 0) {
    const int lanes = (rest + kLanes - 1) / kLanes * kLanes;
    for (int j = rest; j < lanes; ++j) tmp[j] = M(0);  // unused lanes
    for (int j = 0; j < rest; ++j) phase_a(k0 + j, j);
    sqrt_lanes<F>(tmp, lanes);
    for (int j = 0; j < rest; ++j) phase_b(k0 + j, j);
  }
}

// blocked() with two roots per element: phase_a fills tmp[j] and
// tmp[kBlock + j] (tmp holds 2 * kBlock).
template <bool F, class M, class A, class B>
FASTT_ALWAYS_INLINE void blocked2(int64_t b, int64_t e, M* tmp, A&& phase_a,
                                  B&& phase_b) {
  int64_t k0 = b;
  for (; k0 + kBlock <= e; k0 += kBlock) {
    for (int j = 0; j < kBlock; ++j) phase_a(k0 + j, j);
    sqrt_lanes<F>(tmp, kBlock);
    sqrt_lanes<F>(tmp + kBlock, kBlock);
    for (int j = 0; j < kBlock; ++j) phase_b(k0 + j, j);
  }
  const int rest = int(e - k0);
  if (rest > 0) {
    const int lanes = (rest + kLanes - 1) / kLanes * kLanes;
    for (int j = rest; j < lanes; ++j) tmp[j] = tmp[kBlock + j] = M(0);
    for (int j = 0; j < rest; ++j) phase_a(k0 + j, j);
    sqrt_lanes<F>(tmp, lanes);
    sqrt_lanes<F>(tmp + kBlock, lanes);
    for (int j = 0; j < rest; ++j) phase_b(k0 + j, j);
  }
}

// ---- SGD ----
// MOM: 0 no momentum, 1 first step (buf = grad), 2 buf update.
template <class T, bool F, bool WD, int MOM>
FASTT_ALWAYS_INLINE void sgd_body(const OptimKernelArgs& a, int64_t i,
                                  int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* buf = MOM ? data_of<T>(a.state[0][i]) : nullptr;
  const M sign = a.maximize ? M(-1) : M(1);
  const M wd = alpha_of<T>(a.weight_decay), mom = M(a.momentum);
  const M mom_alpha = alpha_of<T>(a.momentum);
  const M damp1 = alpha_of<T>(1.0 - a.dampening);
  const M neg_lr = alpha_of<T>(-a.lr);
  const bool nesterov = a.nesterov;
  for (int64_t k = b; k < e; ++k) {
    const M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd<F>(pk, wd, gk));  // grad.add(p, alpha=wd)
    if (MOM == 1) {
      buf[k] = T(gk);  // torch: buf = grad.clone()
      const M bk = rnd<T>(gk);
      gk = nesterov ? rnd<T>(madd<F>(bk, mom_alpha, gk)) : bk;
    } else if (MOM == 2) {
      M bk = rnd<T>(M(buf[k]) * mom);
      bk = rnd<T>(madd<F>(gk, damp1, bk));
      buf[k] = T(bk);
      gk = nesterov ? rnd<T>(madd<F>(bk, mom_alpha, gk)) : bk;
    }
    p[k] = T(madd<F>(gk, neg_lr, pk));
  }
}

// ---- Adam / AdamW ----
// WD: 0 none, 1 L2 (added to the gradient), 2 decoupled (AdamW).
template <class T, bool F, int WD, bool AMS>
FASTT_ALWAYS_INLINE void adam_body(const OptimKernelArgs& a, int64_t i,
                                   int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* m = data_of<T>(a.state[0][i]);
  T* v = data_of<T>(a.state[1][i]);
  T* vmax = AMS ? data_of<T>(a.state[2][i]) : nullptr;
  // Bias corrections (AdamKernel::run, in double like torch's Python).
  const M neg_step_size = M(a.scalars[2 * i]);
  const M bc2_sqrt = M(a.scalars[2 * i + 1]);
  const M eps = M(a.eps), sign = a.maximize ? M(-1) : M(1);
  const M w1 = M(1 - a.beta1), one_minus_w1 = M(1) - w1;
  const bool small = std::abs(w1) < M(0.5);
  const M beta2 = M(a.beta2), w2 = M(1 - a.beta2);
  const M wd = alpha_of<T>(a.weight_decay);
  const M decay = M(1 - a.lr * a.weight_decay);
  M tmp[kBlock], pks[kBlock], mks[kBlock];
  blocked<F>(
      b, e, tmp,
      [&](int64_t k, int j) {
        M pk = M(p[k]);
        M gk = sign * M(g[k]);
        if (WD == 2) pk = rnd<T>(pk * decay);
        if (WD == 1) gk = rnd<T>(madd<F>(pk, wd, gk));
        const M mk = rnd<T>(lerp<F>(M(m[k]), gk, w1, one_minus_w1, small));
        M vk = rnd<T>(M(v[k]) * beta2);
        vk = rnd<T>(madd<F>(w2 * gk, gk, vk));  // addcmul(g, g, value=1-b2)
        m[k] = T(mk);
        v[k] = T(vk);
        M vd = vk;
        if (AMS) {
          const M old = M(vmax[k]);
          vd = (old > vk || old != old) ? old : vk;  // torch.maximum: NaN
          vmax[k] = T(vd);
        }
        pks[j] = pk;
        mks[j] = mk;
        tmp[j] = vd;
      },
      [&](int64_t k, int j) {
        M denom = rnd<T>(tmp[j]);  // sqrt
        denom = rnd<T>(denom / bc2_sqrt);
        denom = rnd<T>(denom + eps);
        p[k] = T(pks[j] + neg_step_size * mks[j] / denom);
      });
}

// ---- RMSprop ----
template <class T, bool F, bool WD, bool CENTERED, bool MOM>
FASTT_ALWAYS_INLINE void rmsprop_body(const OptimKernelArgs& a, int64_t i,
                                      int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* sq = data_of<T>(a.state[0][i]);
  T* gavg = CENTERED ? data_of<T>(a.state[1][i]) : nullptr;
  T* buf = MOM ? data_of<T>(a.state[2][i]) : nullptr;
  const M sign = a.maximize ? M(-1) : M(1);
  const M wd = alpha_of<T>(a.weight_decay), alpha = M(a.alpha);
  const M w = M(1 - a.alpha);
  const M one_minus_w = M(1) - w;
  const bool small = std::abs(w) < M(0.5);
  const M eps = M(a.eps), mom = M(a.momentum), neg_lr = M(-a.lr);
  const M neg_lr_alpha = alpha_of<T>(-a.lr);
  M tmp[kBlock], gks[kBlock];
  blocked<F>(
      b, e, tmp,
      [&](int64_t k, int j) {
        const M pk = M(p[k]);
        M gk = sign * M(g[k]);
        if (WD) gk = rnd<T>(madd<F>(pk, wd, gk));
        M s = rnd<T>(M(sq[k]) * alpha);
        s = rnd<T>(madd<F>(w * gk, gk, s));
        sq[k] = T(s);
        if (CENTERED) {
          const M ga = rnd<T>(lerp<F>(M(gavg[k]), gk, w, one_minus_w, small));
          gavg[k] = T(ga);
          s = rnd<T>(madd<F>(-ga, ga, s));  // addcmul(value=-1)
        }
        gks[j] = gk;
        tmp[j] = s;
      },
      [&](int64_t k, int j) {
        const M pk = M(p[k]), gk = gks[j];
        M avg = rnd<T>(tmp[j]);  // sqrt
        avg = rnd<T>(avg + eps);
        if (MOM) {
          M bk = rnd<T>(M(buf[k]) * mom);
          bk = rnd<T>(bk + gk / avg);  // addcdiv(value=1)
          buf[k] = T(bk);
          p[k] = T(madd<F>(bk, neg_lr_alpha, pk));
        } else {
          p[k] = T(pk + neg_lr * gk / avg);
        }
      });
}

// ---- Adagrad ----
template <class T, bool F, bool WD>
FASTT_ALWAYS_INLINE void adagrad_body(const OptimKernelArgs& a, int64_t i,
                                      int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* sum = data_of<T>(a.state[0][i]);
  const double clr = a.lr / (1 + (a.steps[i] - 1) * a.lr_decay);
  const M neg_clr = M(-clr), eps = M(a.eps);
  const M wd = alpha_of<T>(a.weight_decay);
  const M sign = a.maximize ? M(-1) : M(1);
  M tmp[kBlock], gks[kBlock];
  blocked<F>(
      b, e, tmp,
      [&](int64_t k, int j) {
        const M pk = M(p[k]);
        M gk = sign * M(g[k]);
        if (WD) gk = rnd<T>(madd<F>(pk, wd, gk));
        const M s = rnd<T>(madd<F>(gk, gk, M(sum[k])));  // addcmul(value=1)
        sum[k] = T(s);
        gks[j] = gk;
        tmp[j] = s;
      },
      [&](int64_t k, int j) {
        M std_ = rnd<T>(tmp[j]);  // sqrt
        std_ = rnd<T>(std_ + eps);
        p[k] = T(M(p[k]) + neg_clr * gks[j] / std_);
      });
}

// ---- Adadelta ----
template <class T, bool F, bool WD>
FASTT_ALWAYS_INLINE void adadelta_body(const OptimKernelArgs& a, int64_t i,
                                       int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* sq = data_of<T>(a.state[0][i]);
  T* acc = data_of<T>(a.state[1][i]);
  const M sign = a.maximize ? M(-1) : M(1);
  const M wd = alpha_of<T>(a.weight_decay), rho = M(a.rho);
  // torch's add(tensor, eps) rounds eps to the 16-bit storage types.
  const M w = M(1 - a.rho), eps = alpha_of<T>(a.eps);
  const M neg_lr = alpha_of<T>(-a.lr);
  M tmp[2 * kBlock], gks[kBlock];
  blocked2<F>(
      b, e, tmp,
      [&](int64_t k, int j) {
        M gk = sign * M(g[k]);
        if (WD) gk = rnd<T>(madd<F>(M(p[k]), wd, gk));
        M s = rnd<T>(M(sq[k]) * rho);
        s = rnd<T>(madd<F>(w * gk, gk, s));  // addcmul(g, g, value=1-rho)
        sq[k] = T(s);
        gks[j] = gk;
        tmp[j] = rnd<T>(s + eps);                     // square_avg.add(eps)
        tmp[kBlock + j] = rnd<T>(M(acc[k]) + eps);    // acc_delta.add(eps)
      },
      [&](int64_t k, int j) {
        const M std_ = rnd<T>(tmp[j]);  // sqrt_
        M delta = rnd<T>(tmp[kBlock + j]);
        delta = rnd<T>(delta / std_);
        delta = rnd<T>(delta * gks[j]);
        M ad = rnd<T>(M(acc[k]) * rho);
        ad = rnd<T>(madd<F>(w * delta, delta, ad));
        acc[k] = T(ad);
        p[k] = T(madd<F>(delta, neg_lr, M(p[k])));  // add_(delta, alpha=-lr)
      });
}

// ---- Adamax ----  aux: -lr / bias_correction
template <class T, bool F, bool WD>
FASTT_ALWAYS_INLINE void adamax_body(const OptimKernelArgs& a, int64_t i,
                                     int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* m = data_of<T>(a.state[0][i]);
  T* inf = data_of<T>(a.state[1][i]);
  const M neg_clr = M(a.aux[kOptimAux * i]);
  const M sign = a.maximize ? M(-1) : M(1);
  const M wd = alpha_of<T>(a.weight_decay), eps = alpha_of<T>(a.eps);
  const M w1 = M(1 - a.beta1), one_minus_w1 = M(1) - w1;
  const bool small = std::abs(w1) < M(0.5);
  const M beta2 = M(a.beta2);
  for (int64_t k = b; k < e; ++k) {
    const M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd<F>(pk, wd, gk));
    const M mk = rnd<T>(lerp<F>(M(m[k]), gk, w1, one_minus_w1, small));
    m[k] = T(mk);
    const M x = rnd<T>(M(inf[k]) * beta2);
    const M y = rnd<T>(std::abs(gk) + eps);  // grad.abs().add_(eps)
    const M u = (x > y || x != x) ? x : y;   // torch.maximum: NaN wins
    inf[k] = T(u);
    p[k] = T(pk + neg_clr * mk / rnd<T>(u));  // addcdiv(value=-clr)
  }
}

// ---- NAdam ----  aux: bias_correction2, grad and exp_avg coefficients.
// WD: 0 none, 1 L2, 2 decoupled.
template <class T, bool F, int WD>
FASTT_ALWAYS_INLINE void nadam_body(const OptimKernelArgs& a, int64_t i,
                                    int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* m = data_of<T>(a.state[0][i]);
  T* v = data_of<T>(a.state[1][i]);
  const double* aux = a.aux + kOptimAux * i;
  const M bc2 = M(aux[0]), c_grad = M(aux[1]), c_avg = M(aux[2]);
  const M eps = alpha_of<T>(a.eps), sign = a.maximize ? M(-1) : M(1);
  const M w1 = M(1 - a.beta1), one_minus_w1 = M(1) - w1;
  const bool small = std::abs(w1) < M(0.5);
  const M beta2 = M(a.beta2), w2 = M(1 - a.beta2);
  const M wd = alpha_of<T>(a.weight_decay);
  const M decay = M(1 - a.lr * a.weight_decay);
  M tmp[kBlock], pks[kBlock], gks[kBlock], mks[kBlock];
  blocked<F>(
      b, e, tmp,
      [&](int64_t k, int j) {
        M pk = M(p[k]);
        M gk = sign * M(g[k]);
        if (WD == 2) pk = rnd<T>(pk * decay);
        if (WD == 1) gk = rnd<T>(madd<F>(pk, wd, gk));
        const M mk = rnd<T>(lerp<F>(M(m[k]), gk, w1, one_minus_w1, small));
        M vk = rnd<T>(M(v[k]) * beta2);
        vk = rnd<T>(madd<F>(w2 * gk, gk, vk));
        m[k] = T(mk);
        v[k] = T(vk);
        pks[j] = pk;
        gks[j] = gk;
        mks[j] = mk;
        tmp[j] = rnd<T>(vk / bc2);  // exp_avg_sq.div(bias_correction2)
      },
      [&](int64_t k, int j) {
        M denom = rnd<T>(tmp[j]);  // sqrt
        denom = rnd<T>(denom + eps);
        const M pk = rnd<T>(pks[j] + c_grad * gks[j] / denom);
        p[k] = T(pk + c_avg * mks[j] / denom);
      });
}

// ---- RAdam ----  aux: bias_correction1, rect (0: unrectified),
// sqrt(bias_correction2). WD: 0 none, 1 L2, 2 decoupled.
template <class T, bool F, int WD>
FASTT_ALWAYS_INLINE void radam_body(const OptimKernelArgs& a, int64_t i,
                                    int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* m = data_of<T>(a.state[0][i]);
  T* v = data_of<T>(a.state[1][i]);
  const double* aux = a.aux + kOptimAux * i;
  const M bc1 = M(aux[0]), rect = M(aux[1]), bc2_sqrt = M(aux[2]);
  const bool rectified = aux[1] > 0;
  const M lr = M(a.lr), eps = alpha_of<T>(a.eps);
  const M sign = a.maximize ? M(-1) : M(1);
  const M w1 = M(1 - a.beta1), one_minus_w1 = M(1) - w1;
  const bool small = std::abs(w1) < M(0.5);
  const M beta2 = M(a.beta2), w2 = M(1 - a.beta2);
  const M wd = alpha_of<T>(a.weight_decay);
  const M decay = M(1 - a.lr * a.weight_decay);
  // The moments; returns (p, exp_avg / bc1 * lr) and leaves exp_avg_sq.
  auto moments = [&](int64_t k, M& pk, M& vk) {
    pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD == 2) pk = rnd<T>(pk * decay);
    if (WD == 1) gk = rnd<T>(madd<F>(pk, wd, gk));
    const M mk = rnd<T>(lerp<F>(M(m[k]), gk, w1, one_minus_w1, small));
    vk = rnd<T>(M(v[k]) * beta2);
    vk = rnd<T>(madd<F>(w2 * gk, gk, vk));
    m[k] = T(mk);
    v[k] = T(vk);
    const M bce = rnd<T>(mk / bc1);  // exp_avg / bias_correction1
    return rnd<T>(bce * lr);
  };
  if (!rectified) {
    for (int64_t k = b; k < e; ++k) {
      M pk, vk;
      const M x = moments(k, pk, vk);
      p[k] = T(pk - x);  // add_(x, alpha=-1)
    }
    return;
  }
  M tmp[kBlock], pks[kBlock], xs[kBlock];
  blocked<F>(
      b, e, tmp,
      [&](int64_t k, int j) {
        M pk, vk;
        xs[j] = moments(k, pk, vk);
        pks[j] = pk;
        tmp[j] = vk;
      },
      [&](int64_t k, int j) {
        M s = rnd<T>(tmp[j]);  // exp_avg_sq.sqrt()
        s = rnd<T>(s + eps);
        M ad = rnd<T>(M(1) / s);  // bc2 ** 0.5 / s: reciprocal() * scalar
        ad = rnd<T>(ad * bc2_sqrt);
        M x = rnd<T>(xs[j] * ad);
        x = rnd<T>(x * rect);
        p[k] = T(pks[j] - x);
      });
}

// ---- ASGD ----  aux: eta, mu (before this step's update)
template <class T, bool F, bool WD>
FASTT_ALWAYS_INLINE void asgd_body(const OptimKernelArgs& a, int64_t i,
                                   int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* ax = data_of<T>(a.state[0][i]);
  const double eta = a.aux[kOptimAux * i], mu_d = a.aux[kOptimAux * i + 1];
  const M decay = M(1 - a.lambd * eta), neg_eta = alpha_of<T>(-eta);
  const M mu = M(mu_d);
  const bool average = mu_d != 1;
  const M sign = a.maximize ? M(-1) : M(1);
  const M wd = alpha_of<T>(a.weight_decay);
  for (int64_t k = b; k < e; ++k) {
    M pk = M(p[k]);
    M gk = sign * M(g[k]);
    if (WD) gk = rnd<T>(madd<F>(pk, wd, gk));
    pk = rnd<T>(pk * decay);                 // mul_(1 - lambd * eta)
    pk = rnd<T>(madd<F>(gk, neg_eta, pk));   // add_(grad, alpha=-eta)
    p[k] = T(pk);
    if (average) {
      const M axk = M(ax[k]);
      M d = rnd<T>(pk - axk);  // param.sub(ax).mul_(mu)
      d = rnd<T>(d * mu);
      ax[k] = T(axk + d);
    } else {
      ax[k] = T(pk);
    }
  }
}

// ---- Rprop ----  state: prev, step_size
template <class T, bool F>
FASTT_ALWAYS_INLINE void rprop_body(const OptimKernelArgs& a, int64_t i,
                                    int64_t b, int64_t e) {
  using M = opmath_t<T>;
  T* p = data_of<T>(a.params[i]);
  const T* g = data_of<T>(a.grads[i]);
  T* prev = data_of<T>(a.state[0][i]);
  T* ss = data_of<T>(a.state[1][i]);
  const M sign = a.maximize ? M(-1) : M(1);
  // The factors as stored in torch's sign tensor, the bounds as clamp's
  // scalars (both in the tensor's dtype).
  const M etaplus = M(T(M(a.etaplus))), etaminus = M(T(M(a.etaminus)));
  const M lo = M(T(M(a.step_size_min))), hi = M(T(M(a.step_size_max)));
  for (int64_t k = b; k < e; ++k) {
    M gk = sign * M(g[k]);
    const M prod = rnd<T>(gk * M(prev[k]));  // grad.mul(prev).sign()
    const M f = prod > 0 ? etaplus : (prod < 0 ? etaminus : M(1));
    M s = rnd<T>(M(ss[k]) * f);
    if (!(s != s)) s = std::min(std::max(s, lo), hi);  // clamp_: NaN stays
    ss[k] = T(s);
    if (prod < 0) gk = M(0);
    const M sg = M(int(gk > 0) - int(gk < 0));  // sign(): NaN gives 0
    p[k] = T(madd<F>(-sg, s, M(p[k])));  // addcmul(sign, step_size, value=-1)
    prev[k] = T(gk);
  }
}

// ---- The FMA and baseline builds of each loop, and their dispatch ----
using ChunkFn = void (*)(const OptimKernelArgs&, int64_t, int64_t, int64_t);

template <class T, bool WD, int MOM>
FASTT_OPTIM_FMA_TARGET void sgd_fma(const OptimKernelArgs& a, int64_t i,
                                    int64_t b, int64_t e) {
  sgd_body<T, true, WD, MOM>(a, i, b, e);
}
template <class T, bool WD, int MOM>
void sgd_base(const OptimKernelArgs& a, int64_t i, int64_t b, int64_t e) {
  sgd_body<T, false, WD, MOM>(a, i, b, e);
}
template <class T, int WD, bool AMS>
FASTT_OPTIM_FMA_TARGET void adam_fma(const OptimKernelArgs& a, int64_t i,
                                     int64_t b, int64_t e) {
  adam_body<T, true, WD, AMS>(a, i, b, e);
}
template <class T, int WD, bool AMS>
void adam_base(const OptimKernelArgs& a, int64_t i, int64_t b, int64_t e) {
  adam_body<T, false, WD, AMS>(a, i, b, e);
}
template <class T, bool WD, bool C, bool MOM>
FASTT_OPTIM_FMA_TARGET void rmsprop_fma(const OptimKernelArgs& a, int64_t i,
                                        int64_t b, int64_t e) {
  rmsprop_body<T, true, WD, C, MOM>(a, i, b, e);
}
template <class T, bool WD, bool C, bool MOM>
void rmsprop_base(const OptimKernelArgs& a, int64_t i, int64_t b,
                  int64_t e) {
  rmsprop_body<T, false, WD, C, MOM>(a, i, b, e);
}
template <class T, bool WD>
FASTT_OPTIM_FMA_TARGET void adagrad_fma(const OptimKernelArgs& a, int64_t i,
                                        int64_t b, int64_t e) {
  adagrad_body<T, true, WD>(a, i, b, e);
}
template <class T, bool WD>
void adagrad_base(const OptimKernelArgs& a, int64_t i, int64_t b,
                  int64_t e) {
  adagrad_body<T, false, WD>(a, i, b, e);
}

// The new loops' builds: NAME##_fma / NAME##_base over template flags.
#define FASTT_OPTIM_BUILDS(NAME, TPARAMS, TARGS)                         \
  template <class T, TPARAMS>                                              \
  FASTT_OPTIM_FMA_TARGET void NAME##_fma(const OptimKernelArgs& a,         \
                                         int64_t i, int64_t b, int64_t e) { \
    NAME##_body<T, true, TARGS>(a, i, b, e);                               \
  }                                                                        \
  template <class T, TPARAMS>                                              \
  void NAME##_base(const OptimKernelArgs& a, int64_t i, int64_t b,         \
                   int64_t e) {                                            \
    NAME##_body<T, false, TARGS>(a, i, b, e);                              \
  }
FASTT_OPTIM_BUILDS(adadelta, bool WD, WD)
FASTT_OPTIM_BUILDS(adamax, bool WD, WD)
FASTT_OPTIM_BUILDS(nadam, int WD, WD)
FASTT_OPTIM_BUILDS(radam, int WD, WD)
FASTT_OPTIM_BUILDS(asgd, bool WD, WD)
#undef FASTT_OPTIM_BUILDS
template <class T>
FASTT_OPTIM_FMA_TARGET void rprop_fma(const OptimKernelArgs& a, int64_t i,
                                      int64_t b, int64_t e) {
  rprop_body<T, true>(a, i, b, e);
}
template <class T>
void rprop_base(const OptimKernelArgs& a, int64_t i, int64_t b, int64_t e) {
  rprop_body<T, false>(a, i, b, e);
}

// Picks fn<flags...> for runtime flags: the builds are indexed by
// [fma][option][option]...
template <class T>
struct SgdKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    static constexpr ChunkFn table[2][2][3] = {
        {{sgd_base<T, false, 0>, sgd_base<T, false, 1>, sgd_base<T, false, 2>},
         {sgd_base<T, true, 0>, sgd_base<T, true, 1>, sgd_base<T, true, 2>}},
        {{sgd_fma<T, false, 0>, sgd_fma<T, false, 1>, sgd_fma<T, false, 2>},
         {sgd_fma<T, true, 0>, sgd_fma<T, true, 1>, sgd_fma<T, true, 2>}}};
    const int mom = a.momentum == 0 ? 0 : (a.first_step ? 1 : 2);
    const ChunkFn fn = table[optim_fma_enabled()][a.weight_decay != 0][mom];
    for_each_chunk(a, [&](int64_t i, int64_t b, int64_t e) { fn(a, i, b, e); });
  }
};

// Per-tensor Adam scalars, reused per thread; one buffer for every dtype
// and level, in csrc/thread_state.h (a thread_local here would be one per
// instantiation and per instruction-set level, and the module's whole TLS
// block counts against glibc's static TLS surplus).
std::vector<double>& adam_scalars() { return thread_state().adam_scalars; }

template <class T>
struct AdamKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    static constexpr ChunkFn table[2][3][2] = {
        {{adam_base<T, 0, false>, adam_base<T, 0, true>},
         {adam_base<T, 1, false>, adam_base<T, 1, true>},
         {adam_base<T, 2, false>, adam_base<T, 2, true>}},
        {{adam_fma<T, 0, false>, adam_fma<T, 0, true>},
         {adam_fma<T, 1, false>, adam_fma<T, 1, true>},
         {adam_fma<T, 2, false>, adam_fma<T, 2, true>}}};
    const int wd = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);
    const ChunkFn fn = table[optim_fma_enabled()][wd][a.amsgrad];
    // -lr / bias_correction1 and sqrt(bias_correction2) per tensor, with
    // torch's Python arithmetic; tensors usually share a step count, so the
    // pow() calls are made once per distinct count.
    std::vector<double>& scalars = adam_scalars();
    scalars.resize(size_t(2 * a.n));
    double last = -1, step_size = 0, bc2_sqrt = 0;
    for (int64_t i = 0; i < a.n; ++i) {
      const double step = a.steps[i];
      if (step != last) {
        last = step;
        step_size = a.lr / (1 - std::pow(a.beta1, step));
        bc2_sqrt = std::pow(1 - std::pow(a.beta2, step), 0.5);
      }
      scalars[size_t(2 * i)] = -step_size;
      scalars[size_t(2 * i + 1)] = bc2_sqrt;
    }
    OptimKernelArgs args = a;
    args.scalars = scalars.data();
    for_each_chunk(args, [&](int64_t i, int64_t b, int64_t e) {
      fn(args, i, b, e);
    });
  }
};

template <class T>
struct RmspropKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
#define FASTT_RMS(B, WD, C)                               \
  {B<T, WD, C, false>, B<T, WD, C, true>}
    static constexpr ChunkFn table[2][2][2][2] = {
        {{FASTT_RMS(rmsprop_base, false, false),
          FASTT_RMS(rmsprop_base, false, true)},
         {FASTT_RMS(rmsprop_base, true, false),
          FASTT_RMS(rmsprop_base, true, true)}},
        {{FASTT_RMS(rmsprop_fma, false, false),
          FASTT_RMS(rmsprop_fma, false, true)},
         {FASTT_RMS(rmsprop_fma, true, false),
          FASTT_RMS(rmsprop_fma, true, true)}}};
#undef FASTT_RMS
    const ChunkFn fn = table[optim_fma_enabled()][a.weight_decay != 0][a.centered]
                            [a.momentum > 0];
    for_each_chunk(a, [&](int64_t i, int64_t b, int64_t e) { fn(a, i, b, e); });
  }
};

template <class T>
struct AdagradKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    static constexpr ChunkFn table[2][2] = {
        {adagrad_base<T, false>, adagrad_base<T, true>},
        {adagrad_fma<T, false>, adagrad_fma<T, true>}};
    const ChunkFn fn = table[optim_fma_enabled()][a.weight_decay != 0];
    for_each_chunk(a, [&](int64_t i, int64_t b, int64_t e) { fn(a, i, b, e); });
  }
};

// Adadelta, Adamax and ASGD: [fma][weight_decay != 0].
#define FASTT_OPTIM_WD_KERNEL(KERNEL, NAME)                               \
  template <class T>                                                      \
  struct KERNEL {                                                         \
    static void run(KernelArgs& ka) {                                     \
      const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);   \
      static constexpr ChunkFn table[2][2] = {                            \
          {NAME##_base<T, false>, NAME##_base<T, true>},                  \
          {NAME##_fma<T, false>, NAME##_fma<T, true>}};                   \
      const ChunkFn fn = table[optim_fma_enabled()][a.weight_decay != 0];           \
      for_each_chunk(a,                                                   \
                     [&](int64_t i, int64_t b, int64_t e) { fn(a, i, b, e); }); \
    }                                                                     \
  };
FASTT_OPTIM_WD_KERNEL(AdadeltaKernel, adadelta)
FASTT_OPTIM_WD_KERNEL(AdamaxKernel, adamax)
FASTT_OPTIM_WD_KERNEL(AsgdKernel, asgd)
#undef FASTT_OPTIM_WD_KERNEL

// NAdam and RAdam: [fma][0 none, 1 L2, 2 decoupled weight decay].
#define FASTT_OPTIM_WD3_KERNEL(KERNEL, NAME)                              \
  template <class T>                                                      \
  struct KERNEL {                                                         \
    static void run(KernelArgs& ka) {                                     \
      const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);   \
      static constexpr ChunkFn table[2][3] = {                            \
          {NAME##_base<T, 0>, NAME##_base<T, 1>, NAME##_base<T, 2>},      \
          {NAME##_fma<T, 0>, NAME##_fma<T, 1>, NAME##_fma<T, 2>}};        \
      const int wd = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);     \
      const ChunkFn fn = table[optim_fma_enabled()][wd];                            \
      for_each_chunk(a,                                                   \
                     [&](int64_t i, int64_t b, int64_t e) { fn(a, i, b, e); }); \
    }                                                                     \
  };
FASTT_OPTIM_WD3_KERNEL(NadamKernel, nadam)
FASTT_OPTIM_WD3_KERNEL(RadamKernel, radam)
#undef FASTT_OPTIM_WD3_KERNEL

template <class T>
struct RpropKernel {
  static void run(KernelArgs& ka) {
    const auto& a = *reinterpret_cast<const OptimKernelArgs*>(ka.i0);
    const ChunkFn fn = optim_fma_enabled() ? rprop_fma<T> : rprop_base<T>;
    for_each_chunk(a, [&](int64_t i, int64_t b, int64_t e) { fn(a, i, b, e); });
  }
};

}  // namespace

void register_optim_kernels() {
#define FASTT_KERNELS_optim
#include "kernels/kernels.def"
}

}  // namespace fastt

// CUDA fused losses with class-index targets (cross-entropy, NLL, forward
// and backward) and the dense embedding backward: the CPU's
// kernels/cpu/loss.cpp, same nn_args layouts (csrc/ops/nn.h). Inputs are
// dense [N, C, inner], positions p = n * inner + j. Reductions over
// positions are deterministic (per-position values, fixed-shape block
// sums in double, then one block); no float atomics.
//
// Targets are not range-checked on the host for CUDA tensors (that would
// need a device sync; see check_targets in csrc/ops/nn.cpp). A target
// outside [0, C) that is not ignore_index never indexes memory here: the
// kernels report it through the device error slot (device_error.h; an
// IndexError "Target 7 is out of bounds." at the next synchronization)
// and give its position loss, weight and gradient 0. Embedding backward
// reports an index outside [0, V) the same way.
#include <cmath>

#include <cub/device/device_radix_sort.cuh>

#include "csrc/ops/nn.h"
#include "kernels/cuda/device_error.cuh"
#include "kernels/cuda/rows.cuh"
#include "kernels/nn_geom.h"

namespace fastt {
namespace cuda {
namespace {
using namespace nn_args;
using namespace nn_geom;

Device this_device() { return Device(DeviceType::CUDA, current_device()); }

// ---- reduction states and warp / block reductions ----
template <class A>
struct Max {  // NaN-propagating, like the CPU's max + NaN flag
  A m;
  static __device__ Max identity() { return {A(-INFINITY)}; }
  static __device__ Max merge(Max a, Max b) {
    return {(a.m > b.m || a.m != a.m) ? a.m : b.m};
  }
  __device__ Max shfl_xor(int o) const {
    return {__shfl_xor_sync(kFull, m, o)};
  }
  __device__ Max shfl0() const { return {__shfl_sync(kFull, m, 0)}; }
};

// ---- deterministic sums of (loss, weight) pairs over positions ----
// v(p) -> Sum2<double>. Stage 1 (only for many positions): block b sums
// the fixed range [b * chunk, (b + 1) * chunk) into part[2b..2b+1]. Stage
// 2: one block sums what is left and hands the total to fin(loss, weight).
// The split depends on the count only, so results are reproducible.
constexpr int kSumThreads = 512;
constexpr int64_t kSumChunk = 8192;

struct PartsView {  // the stage-1 partials as a value functor
  const double* part;
  __device__ Sum2<double> operator()(int64_t b) const {
    return {part[2 * b], part[2 * b + 1]};
  }
};

template <class V>
__global__ void __launch_bounds__(kSumThreads)
    sum_chunks_kernel(V v, int64_t n, double* part) {
  __shared__ Sum2<double> smem[32];
  const int64_t b = blockIdx.x;
  const int64_t end = (b + 1) * kSumChunk < n ? (b + 1) * kSumChunk : n;
  Sum2<double> s = Sum2<double>::identity();
  for (int64_t p = b * kSumChunk + threadIdx.x; p < end; p += blockDim.x)
    s = Sum2<double>::merge(s, v(p));
  s = block_reduce(s, smem);
  if (threadIdx.x == 0) {
    part[2 * b] = s.a;
    part[2 * b + 1] = s.b;
  }
}

template <class V, class F>
__global__ void __launch_bounds__(kSumThreads)
    sum_final_kernel(V v, int64_t n, F fin) {
  __shared__ Sum2<double> smem[32];
  Sum2<double> s = Sum2<double>::identity();
  for (int64_t p = threadIdx.x; p < n; p += blockDim.x)
    s = Sum2<double>::merge(s, v(p));
  s = block_reduce(s, smem);
  if (threadIdx.x == 0) fin(s.a, s.b);
}

template <class V, class F>
void sum_positions(const V& v, int64_t n, const F& fin, const char* what) {
  cudaStream_t stream = current_stream();
  if (n <= 4 * kSumChunk) {
    sum_final_kernel<<<1, kSumThreads, 0, stream>>>(v, n, fin);
    FASTT_CUDA_CHECK_LAUNCH(what);
    return;
  }
  const int64_t blocks = (n + kSumChunk - 1) / kSumChunk;
  Tensor scratch = Tensor::empty({2 * blocks}, DType::Float64, this_device());
  double* part = static_cast<double*>(scratch.data_ptr());
  sum_chunks_kernel<<<unsigned(blocks), kSumThreads, 0, stream>>>(v, n, part);
  FASTT_CUDA_CHECK_LAUNCH(what);
  sum_final_kernel<<<1, kSumThreads, 0, stream>>>(PartsView{part}, blocks,
                                                   fin);
  FASTT_CUDA_CHECK_LAUNCH(what);
}

// Sum of the C class weights in opmath (one block; the smoothing term's W).
template <class T, class A>
__global__ void class_weight_sum_kernel(const T* w, int64_t C, A* out) {
  __shared__ Sum2<A> smem[32];
  Sum2<A> s = Sum2<A>::identity();
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) s.a += A(w[c]);
  s = block_reduce(s, smem);
  if (threadIdx.x == 0) *out = s.a;
}

// W for the smoothing term: C unweighted, else summed on the device into
// scratch (read by the kernels through wsum_dev).
template <class T>
const opmath_t<T>* device_weight_sum(const T* w, int64_t C, Tensor& scratch,
                                     const char* what) {
  using A = opmath_t<T>;
  if (!w) return nullptr;
  scratch = Tensor::empty({2}, dtype_of<A>, this_device());
  A* p = static_cast<A*>(scratch.data_ptr());
  class_weight_sum_kernel<<<1, 256, 0, current_stream()>>>(w, C, p);
  FASTT_CUDA_CHECK_LAUNCH(what);
  return p;
}

// ---- cross-entropy forward ----
// m = max_c x_c, s = log sum_c exp(x_c - m), sx = sum_c w_c (x_c - m):
//   loss = (1 - ls) wt (s - (x_t - m)) + ls / C (W s - sx)
// exactly the CPU's formula (two passes over a position's logits).
template <class T>
struct CeFwd {
  using A = opmath_t<T>;
  const T* x;
  const int64_t* tgt;
  const T* w;
  T* loss;        // [P] for reduction none
  double* lse;    // [P]
  double* part;   // [2P] (loss, weight) otherwise
  int64_t C, inner, ignore;
  A ls, wsum;
  const A* wsum_dev;  // overrides wsum when set
  DeviceError* err;   // bad targets are reported here,
  uint64_t op;        // naming this op (op_cookie)
  bool smooth, none;

  // Position p (its classes at base + c * stride) from its statistics.
  __device__ void finish(int64_t p, int64_t base, int64_t stride, A m,
                         A sumexp, A sx) const {
    const A s = dlog(sumexp);
    lse[p] = double(m) + double(s);
    const int64_t t = tgt[p];
    A l = 0, wt = 0;
    if (t != ignore) {
      if (FASTT_UNLIKELY(t < 0 || t >= C)) {
        report_device_error(err, kDeviceErrorTarget, op, t, C, -1);
      } else {
        wt = w ? A(w[t]) : A(1);
        l = (A(1) - ls) * wt * (s - (A(x[base + t * stride]) - m));
        if (smooth) {
          const A W = wsum_dev ? *wsum_dev : wsum;
          l += ls / A(C) * (W * s - sx);
        }
      }
    }
    if (none) {
      loss[p] = T(l);
    } else {
      part[2 * p] = double(l);
      part[2 * p + 1] = double(wt);
    }
  }
  __device__ A wc(int64_t c) const { return w ? A(w[c]) : A(1); }
};

// inner == 1, C <= kWarpRowMax: a warp per position.
template <class T>
__global__ void ce_warp_kernel(CeFwd<T> p, int64_t P) {
  using A = opmath_t<T>;
  const int lane = threadIdx.x & 31;
  const int64_t C = p.C;
  const int64_t step = int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
       r < P; r += step) {
    const T* xr = p.x + r * C;
    Max<A> m = Max<A>::identity();
    for (int64_t c = lane; c < C; c += 32)
      m = Max<A>::merge(m, Max<A>{A(xr[c])});
    m = warp_reduce(m);
    Sum2<A> s = Sum2<A>::identity();
    for (int64_t c = lane; c < C; c += 32) {
      const A d = A(xr[c]) - m.m;
      s.a += dexp(d);
      if (p.smooth) s.b += p.wc(c) * d;
    }
    s = warp_reduce(s);
    if (lane == 0) p.finish(r, r * C, 1, m.m, s.a, s.b);
  }
}

// inner == 1, long rows: a block per position.
template <class T>
__global__ void __launch_bounds__(1024)
    ce_block_kernel(CeFwd<T> p, int64_t P) {
  using A = opmath_t<T>;
  __shared__ Max<A> smem_m[32];
  __shared__ Sum2<A> smem_s[32];
  const int64_t C = p.C;
  for (int64_t r = blockIdx.x; r < P; r += gridDim.x) {
    const T* xr = p.x + r * C;
    Max<A> m = Max<A>::identity();
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
      m = Max<A>::merge(m, Max<A>{A(xr[c])});
    m = block_reduce(m, smem_m);
    Sum2<A> s = Sum2<A>::identity();
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const A d = A(xr[c]) - m.m;
      s.a += dexp(d);
      if (p.smooth) s.b += p.wc(c) * d;
    }
    s = block_reduce(s, smem_s);
    if (threadIdx.x == 0) p.finish(r, r * C, 1, m.m, s.a, s.b);
  }
}

// inner > 1: a thread per position; adjacent threads read adjacent j, so
// each class's loads coalesce.
template <class T>
__global__ void ce_thread_kernel(CeFwd<T> p, int64_t P) {
  using A = opmath_t<T>;
  const int64_t C = p.C, inner = p.inner;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < P;
       q += step) {
    const int64_t n = q / inner;
    const int64_t base = n * C * inner + (q - n * inner);
    A m = A(-INFINITY);
    for (int64_t c = 0; c < C; ++c) {
      const A v = A(p.x[base + c * inner]);
      m = (v > m || v != v) ? v : m;
    }
    A se = 0, sx = 0;
    for (int64_t c = 0; c < C; ++c) {
      const A d = A(p.x[base + c * inner]) - m;
      se += dexp(d);
      sx += p.wc(c) * d;
    }
    p.finish(q, base, inner, m, se, sx);
  }
}

template <class T>
struct CeLossView {  // per-position (loss, weight) from the forward
  const double* part;
  __device__ Sum2<double> operator()(int64_t p) const {
    return {part[2 * p], part[2 * p + 1]};
  }
};

template <class T>
struct LossFinish {  // loss[0] = mean or sum; total_weight when asked
  T* loss;
  T* total_weight;
  bool mean;
  __device__ void operator()(double l, double w) const {
    *loss = T(mean ? l / w : l);
    if (total_weight) *total_weight = T(w);
  }
};

template <class T>
struct CrossEntropyKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const char* what = "cross_entropy";
    const Tensor* t = a.in[0];
    const LossShape sh(a);
    const int64_t P = sh.n * sh.inner;
    const bool none = sh.reduction == kReductionNone;
    CeFwd<T> p;
    p.x = cptr<T>(t[kLossInput]);
    p.tgt = cptr<int64_t>(t[kLossTarget]);
    p.w = cptr<T>(t[kLossWeight]);
    p.loss = mptr<T>(t[kLossOut]);
    p.lse = mptr<double>(t[kLossAux]);
    p.C = sh.classes;
    p.inner = sh.inner;
    p.ignore = sh.ignore;
    p.ls = A(a.f0);
    p.smooth = a.f0 > 0;
    p.none = none;
    p.wsum = A(sh.classes);
    p.err = device_error_slot();
    p.op = op_cookie(what);
    Tensor wscratch, part;
    p.wsum_dev = p.smooth ? device_weight_sum(p.w, p.C, wscratch, what)
                          : nullptr;
    p.part = nullptr;
    if (!none && P > 0) {
      part = Tensor::empty({2 * P}, DType::Float64, this_device());
      p.part = static_cast<double*>(part.data_ptr());
    }
    cudaStream_t stream = current_stream();
    if (P > 0) {
      if (sh.inner == 1 && sh.classes <= kWarpRowMax) {
        ce_warp_kernel<<<grid_for(P, 8), 256, 0, stream>>>(p, P);
      } else if (sh.inner == 1) {
        const int threads = sh.classes >= 16384 ? 1024 : 256;
        ce_block_kernel<<<grid_for(P, 1), threads, 0, stream>>>(p, P);
      } else {
        ce_thread_kernel<<<grid_for(P, 256), 256, 0, stream>>>(p, P);
      }
      FASTT_CUDA_CHECK_LAUNCH(what);
    }
    if (!none)
      sum_positions(CeLossView<T>{p.part}, P,
                    LossFinish<T>{p.loss, nullptr,
                                  sh.reduction == kReductionMean},
                    what);
  }
};

// ---- cross-entropy backward: one elementwise kernel over the logits ----
// d loss / d x_c = g (softmax_c k1 - k2 w_c) - [c == t] g (1 - ls) wt,
// k1 = (1 - ls) wt + k2 W, k2 = ls / C; g = the incoming gradient (divided
// by the target weight sum for mean); softmax from the saved float64 lse
// split into hi + lo (as the CPU does, for logits of 1e4).
template <class T>
struct CeBwd {
  using A = opmath_t<T>;
  const T* gin;
  const T* x;
  const int64_t* tgt;
  const T* w;
  const double* lse;
  T* dx;
  int64_t C, inner, ignore;
  A ls, k2, wsum;
  const A* wsum_dev;   // overrides wsum when set
  const A* gscale_dev; // mean: gin[0] / sum of target weights
  DeviceError* err;
  uint64_t op;
  bool none;
};

template <class T>
__global__ void ce_backward_kernel(CeBwd<T> p, int64_t total) {
  using A = opmath_t<T>;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const int64_t CI = p.C * p.inner;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t n = e / CI;
    const int64_t rem = e - n * CI;
    const int64_t c = rem / p.inner;
    const int64_t q = n * p.inner + (rem - c * p.inner);
    const int64_t t = p.tgt[q];
    if (t == p.ignore) {
      p.dx[e] = T(0);
      continue;
    }
    if (FASTT_UNLIKELY(t < 0 || t >= p.C)) {
      if (c == 0)  // once per position
        report_device_error(p.err, kDeviceErrorTarget, p.op, t, p.C, -1);
      p.dx[e] = T(0);
      continue;
    }
    const A g = p.none ? A(p.gin[q]) : p.gscale_dev ? *p.gscale_dev
                                                    : A(p.gin[0]);
    const A wt = p.w ? A(p.w[t]) : A(1);
    const A W = p.wsum_dev ? *p.wsum_dev : p.wsum;
    const A k1g = g * ((A(1) - p.ls) * wt + p.k2 * W);
    const A k2g = g * p.k2;
    const A hi = A(p.lse[q]);
    const A lo = A(p.lse[q] - double(hi));
    const A wc = p.w ? A(p.w[c]) : A(1);
    A v = dexp((A(p.x[e]) - hi) - lo) * k1g - k2g * wc;
    if (c == t) v -= g * (A(1) - p.ls) * wt;
    p.dx[e] = T(v);
  }
}

// Target weight of each kept position, for the mean's denominator (a bad
// target counts 0; ce_backward_kernel reports it).
template <class T>
struct TargetWeightView {
  const int64_t* tgt;
  const T* w;
  int64_t C, ignore;
  __device__ Sum2<double> operator()(int64_t p) const {
    const int64_t t = tgt[p];
    if (t == ignore || t < 0 || t >= C) return {0.0, 0.0};
    return {w ? double(opmath_t<T>(w[t])) : 1.0, 0.0};
  }
};

// gscale = double(gin[0]) / sum of target weights (as the CPU rounds it).
template <class T>
struct GradScaleFinish {
  const T* gin;
  opmath_t<T>* out;
  __device__ void operator()(double wsum, double) const {
    *out = opmath_t<T>(double(opmath_t<T>(gin[0])) / wsum);
  }
};

template <class T>
struct CrossEntropyBackwardKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const char* what = "cross_entropy_backward";
    const Tensor* t = a.in[0];
    const LossShape sh(a);
    const int64_t P = sh.n * sh.inner, total = P * sh.classes;
    CeBwd<T> p;
    p.gin = cptr<T>(t[kLbGrad]);
    p.x = cptr<T>(t[kLbInput]);
    p.tgt = cptr<int64_t>(t[kLbTarget]);
    p.w = cptr<T>(t[kLbWeight]);
    p.lse = cptr<double>(t[kLbAux]);
    p.dx = mptr<T>(t[kLbOut]);
    p.C = sh.classes;
    p.inner = sh.inner;
    p.ignore = sh.ignore;
    p.ls = A(a.f0);
    p.k2 = p.ls / A(sh.classes);
    p.wsum = A(sh.classes);
    p.none = sh.reduction == kReductionNone;
    p.err = device_error_slot();
    p.op = op_cookie(what);
    if (total == 0) return;
    // Scratch: [W, gscale] in opmath.
    Tensor scratch = Tensor::empty({2}, dtype_of<A>, this_device());
    A* s = static_cast<A*>(scratch.data_ptr());
    cudaStream_t stream = current_stream();
    p.wsum_dev = nullptr;
    if (p.w && a.f0 > 0) {
      class_weight_sum_kernel<<<1, 256, 0, stream>>>(p.w, p.C, s);
      FASTT_CUDA_CHECK_LAUNCH(what);
      p.wsum_dev = s;
    }
    p.gscale_dev = nullptr;
    if (sh.reduction == kReductionMean) {
      sum_positions(TargetWeightView<T>{p.tgt, p.w, p.C, p.ignore}, P,
                    GradScaleFinish<T>{p.gin, s + 1}, what);
      p.gscale_dev = s + 1;
    }
    ce_backward_kernel<<<grid_for(total, 256), 256, 0, stream>>>(p, total);
    FASTT_CUDA_CHECK_LAUNCH(what);
  }
};

// ---- NLL (input holds log-probabilities) ----
template <class T>
struct NllView {  // (loss, weight) of position p, read once per position
  const T* x;
  const int64_t* tgt;
  const T* w;
  int64_t C, inner, ignore;
  DeviceError* err;
  uint64_t op;
  __device__ Sum2<double> operator()(int64_t p) const {
    using A = opmath_t<T>;
    const int64_t t = tgt[p];
    if (t == ignore) return {0.0, 0.0};
    if (FASTT_UNLIKELY(t < 0 || t >= C)) {
      report_device_error(err, kDeviceErrorTarget, op, t, C, -1);
      return {0.0, 0.0};
    }
    const int64_t n = p / inner, j = p - n * inner;
    const A wt = w ? A(w[t]) : A(1);
    const A l = -wt * A(x[(n * C + t) * inner + j]);
    return {double(l), double(wt)};
  }
};

template <class T>
__global__ void nll_none_kernel(NllView<T> v, int64_t P, T* loss) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < P;
       p += step)
    loss[p] = T(opmath_t<T>(v(p).a));
}

template <class T>
struct NllLossKernel {
  static void run(KernelArgs& a) {
    const char* what = "nll_loss";
    const Tensor* t = a.in[0];
    const LossShape sh(a);
    const int64_t P = sh.n * sh.inner;
    const NllView<T> v{cptr<T>(t[kLossInput]), cptr<int64_t>(t[kLossTarget]),
                       cptr<T>(t[kLossWeight]), sh.classes, sh.inner,
                       sh.ignore, device_error_slot(), op_cookie(what)};
    T* loss = mptr<T>(t[kLossOut]);
    T* total_weight = mptr<T>(t[kLossAux]);
    cudaStream_t stream = current_stream();
    if (sh.reduction == kReductionNone) {
      // total_weight is 0 for reduction none (all-zero bits in every
      // float dtype).
      FASTT_CUDA_CHECK(
          cudaMemsetAsync(total_weight, 0, sizeof(T), stream), what);
      if (P > 0) {
        nll_none_kernel<<<grid_for(P, 256), 256, 0, stream>>>(v, P, loss);
        FASTT_CUDA_CHECK_LAUNCH(what);
      }
      return;
    }
    sum_positions(v, P,
                  LossFinish<T>{loss, total_weight,
                                sh.reduction == kReductionMean},
                  what);
  }
};

// d loss / d input[n, t, j] = -wt * g (g / total_weight under mean), zero
// elsewhere (and for a bad target, reported): a memset, then one thread
// per position.
template <class T>
__global__ void nll_backward_kernel(const T* gin, const int64_t* tgt,
                                    const T* w, const T* total_weight, T* dx,
                                    int64_t P, int64_t C, int64_t inner,
                                    int64_t ignore, int64_t reduction,
                                    DeviceError* err, uint64_t op) {
  using A = opmath_t<T>;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < P;
       p += step) {
    const int64_t t = tgt[p];
    if (t == ignore) continue;
    const int64_t n = p / inner, j = p - n * inner;
    if (FASTT_UNLIKELY(t < 0 || t >= C)) {
      report_device_error(err, kDeviceErrorTarget, op, t, C, -1);
      continue;
    }
    A g;
    if (reduction == kReductionNone) {
      g = A(gin[p]);
    } else {
      g = A(gin[0]);
      if (reduction == kReductionMean) g = g / A(*total_weight);
    }
    const A wt = w ? A(w[t]) : A(1);
    dx[(n * C + t) * inner + j] = T(-wt * g);
  }
}

template <class T>
struct NllLossBackwardKernel {
  static void run(KernelArgs& a) {
    const char* what = "nll_loss_backward";
    const Tensor* t = a.in[0];
    const LossShape sh(a);
    const int64_t P = sh.n * sh.inner;
    T* dx = mptr<T>(t[kLbOut]);
    const int64_t total = P * sh.classes;
    if (total == 0) return;
    cudaStream_t stream = current_stream();
    FASTT_CUDA_CHECK(
        cudaMemsetAsync(dx, 0, size_t(total) * sizeof(T), stream), what);
    nll_backward_kernel<<<grid_for(P, 256), 256, 0, stream>>>(
        cptr<T>(t[kLbGrad]), cptr<int64_t>(t[kLbTarget]),
        cptr<T>(t[kLbWeight]), cptr<T>(t[kLbAux]), dx, P, sh.classes,
        sh.inner, sh.ignore, sh.reduction, device_error_slot(),
        op_cookie(what));
    FASTT_CUDA_CHECK_LAUNCH(what);
  }
};

// ---- embedding backward ----
// out [V, D]: row v = sum of the grad rows whose index is v, in position
// order (a stable radix sort of (index, position) pairs, then a block per
// output row finds its run by binary search), accumulated in opmath: the
// CPU's order, deterministic. Indices outside [0, V) match no row and are
// reported (the smallest or largest, from the sorted keys).
__global__ void iota_kernel(int64_t* v, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    v[i] = i;
}

__device__ __forceinline__ int64_t lower_bound(const int64_t* k, int64_t n,
                                               int64_t v) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (k[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

template <class T>
__global__ void embedding_rows_kernel(const T* g, const int64_t* keys,
                                      const int64_t* order, T* out, int64_t P,
                                      int64_t V, int64_t D, int64_t pad,
                                      DeviceError* err, uint64_t op) {
  using A = opmath_t<T>;
  __shared__ int64_t range[2];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const int64_t bad = keys[0] < 0 ? keys[0] : keys[P - 1];
    if (FASTT_UNLIKELY(bad < 0 || bad >= V))
      report_device_error(err, kDeviceErrorIndex, op, bad, V, 0);
  }
  for (int64_t v = blockIdx.x; v < V; v += gridDim.x) {
    if (threadIdx.x == 0) {
      range[0] = lower_bound(keys, P, v);
      range[1] = lower_bound(keys, P, v + 1);
    }
    __syncthreads();
    const int64_t b = range[0], e = v == pad ? range[0] : range[1];
    T* o = out + v * D;
    for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
      A acc = 0;
      for (int64_t k = b; k < e; ++k) acc += A(g[order[k] * D + d]);
      o[d] = T(acc);
    }
    __syncthreads();  // range is rewritten for the next row
  }
}

template <class T>
struct EmbeddingBackwardKernel {
  static void run(KernelArgs& a) {
    const char* what = "embedding_backward";
    const Tensor& grad = *a.in[0];
    const Tensor& index = *a.in[1];
    T* out = static_cast<T*>(a.out->data_ptr());
    const int64_t V = a.out->size(0), D = a.out->size(1);
    const int64_t P = index.numel();
    if (V * D == 0) return;
    cudaStream_t stream = current_stream();
    if (P == 0) {
      FASTT_CUDA_CHECK(
          cudaMemsetAsync(out, 0, size_t(V * D) * sizeof(T), stream), what);
      return;
    }
    const Device dev = this_device();
    Tensor pairs = Tensor::empty({3 * P}, DType::Int64, dev);
    int64_t* keys = static_cast<int64_t*>(pairs.data_ptr());
    int64_t* pos = keys + P;
    int64_t* order = pos + P;
    iota_kernel<<<grid_for(P, 256), 256, 0, stream>>>(pos, P);
    FASTT_CUDA_CHECK_LAUNCH(what);
    const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
    size_t bytes = 0;
    FASTT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
                         nullptr, bytes, idx, keys, pos, order, P, 0, 64,
                         stream),
                     what);
    Tensor temp = Tensor::empty({int64_t(bytes) + 1}, DType::UInt8, dev);
    FASTT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
                         temp.data_ptr(), bytes, idx, keys, pos, order, P, 0,
                         64, stream),
                     what);
    const int threads = D >= 256 ? 256 : D > 64 ? 128 : 32;
    embedding_rows_kernel<<<grid_for(V, 1), threads, 0, stream>>>(
        static_cast<const T*>(grad.data_ptr()), keys, order, out, P, V, D,
        a.i0, device_error_slot(), op_cookie(what));
    FASTT_CUDA_CHECK_LAUNCH(what);
  }
};

}  // namespace

void register_loss_cuda_kernels() {
#define FASTT_KERNELS_loss
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt

// CUDA softmax / log_softmax along dim i0 of a dense input seen as
// [outer, n, inner], and their backward kernels: the CPU's
// kernels/cpu/softmax.cpp, same KernelArgs. A row's statistics come from
// one pass (online max + rescaled sum of exp), a second pass writes it.
#include <cmath>

#include "kernels/cuda/rows.cuh"
#include "kernels/reduce_geom.h"

namespace fastt {
namespace cuda {
namespace {

// ---- reduction states (merge is exactly commutative; lane 0's result is
// broadcast anyway so every lane of a row sees bit-identical values) ----

// Online max and sum of exp(x - max). NaN sticks in m (the CPU makes a
// NaN row all NaN); a +inf makes s NaN (the CPU's exp(inf - inf)); -inf
// elements add nothing, so an all -inf row keeps m = -inf, s = 0 and its
// outputs come out NaN like the CPU's.
template <class A>
struct MaxSum {
  A m, s;
  static __device__ MaxSum identity() { return {A(-INFINITY), A(0)}; }
  __device__ void add(A v) {
    if (v > m) {
      s = v == A(INFINITY) ? A(NAN) : s * dexp(m - v) + A(1);
      m = v;
    } else if (v != v) {
      m = v;
    } else if (v > A(-INFINITY)) {
      s += dexp(v - m);
    }
  }
  static __device__ MaxSum merge(MaxSum a, MaxSum b) {
    const A m = (a.m > b.m || a.m != a.m) ? a.m : b.m;
    if (m == A(-INFINITY)) return {m, A(0)};
    const A sa = a.m == A(-INFINITY) ? A(0) : a.s * dexp(a.m - m);
    const A sb = b.m == A(-INFINITY) ? A(0) : b.s * dexp(b.m - m);
    return {m, sa + sb};
  }
  __device__ MaxSum shfl_xor(int o) const {
    return {__shfl_xor_sync(kFull, m, o), __shfl_xor_sync(kFull, s, o)};
  }
  __device__ MaxSum shfl0() const {
    return {__shfl_sync(kFull, m, 0), __shfl_sync(kFull, s, 0)};
  }
};

// ---- the row policies: accumulate(state, offset) over a row, finish()
// once, then emit(state, offset) for every element ----
template <class T, bool Log>
struct SoftmaxFwd {
  using A = opmath_t<T>;
  using S = MaxSum<A>;
  const T* x;
  T* y;
  __device__ void accumulate(S& s, int64_t i) const { s.add(A(x[i])); }
  // s becomes log(sum) (log form) or 1 / sum.
  __device__ void finish(S& s) const {
    s.s = Log ? dlog(s.s) : A(1) / s.s;
  }
  __device__ void emit(const S& s, int64_t i) const {
    const A d = A(x[i]) - s.m;
    y[i] = Log ? T(d - s.s) : T(dexp(d) * s.s);
  }
};

// softmax:     grad_in = y * (g - sum(g * y))
// log_softmax: grad_in = g - exp(y) * sum(g)
template <class T, bool Log>
struct SoftmaxBwd {
  using A = opmath_t<T>;
  using S = Sum<A>;
  const T* g;
  const T* y;
  T* o;
  __device__ void accumulate(S& s, int64_t i) const {
    s.s += Log ? A(g[i]) : A(g[i]) * A(y[i]);
  }
  __device__ void finish(S&) const {}
  __device__ void emit(const S& s, int64_t i) const {
    o[i] = Log ? T(A(g[i]) - dexp(A(y[i])) * s.s)
               : T(A(y[i]) * (A(g[i]) - s.s));
  }
};

// Dim innermost, n <= kWarpRowMax: a warp per row (grid-stride over rows).
template <class P>
__global__ void warp_rows_kernel(P p, int64_t rows, int64_t n) {
  using S = typename P::S;
  const int lane = threadIdx.x & 31;
  const int64_t step = int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
       r < rows; r += step) {
    const int64_t base = r * n;
    S s = S::identity();
    for (int64_t i = lane; i < n; i += 32) p.accumulate(s, base + i);
    s = warp_reduce(s);
    p.finish(s);
    for (int64_t i = lane; i < n; i += 32) p.emit(s, base + i);
  }
}

// Dim innermost, long rows: a block per row (up to 1024 threads; the
// bound keeps the register count launchable at that size).
template <class P>
__global__ void __launch_bounds__(1024)
    block_rows_kernel(P p, int64_t rows, int64_t n) {
  using S = typename P::S;
  __shared__ S smem[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = r * n;
    S s = S::identity();
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      p.accumulate(s, base + i);
    s = block_reduce(s, smem);
    p.finish(s);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) p.emit(s, base + i);
  }
}

// Dim not innermost: the `cols` = outer * inner columns of stride `inner`
// are spread over threadIdx.x (adjacent columns are adjacent in memory, so
// loads coalesce), threadIdx.y splits a column's n elements; the y partial
// states merge in shared memory in a fixed order.
constexpr int kColThreads = 256;
template <class P>
__global__ void columns_kernel(P p, int64_t cols, int64_t n, int64_t inner) {
  using S = typename P::S;
  __shared__ S smem[kColThreads];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx = blockDim.x, by = blockDim.y;
  for (int64_t c0 = int64_t(blockIdx.x) * bx; c0 < cols;
       c0 += int64_t(gridDim.x) * bx) {
    const int64_t c = c0 + tx;
    const bool active = c < cols;
    int64_t base = 0;
    if (active) {
      const int64_t o = c / inner;
      base = o * n * inner + (c - o * inner);
    }
    S s = S::identity();
    if (active)
      for (int64_t i = ty; i < n; i += by) p.accumulate(s, base + i * inner);
    smem[ty * bx + tx] = s;
    __syncthreads();
    if (ty == 0) {
      S t = smem[tx];
      for (int k = 1; k < by; ++k) t = S::merge(t, smem[k * bx + tx]);
      smem[tx] = t;
    }
    __syncthreads();
    s = smem[tx];
    p.finish(s);
    if (active)
      for (int64_t i = ty; i < n; i += by) p.emit(s, base + i * inner);
    __syncthreads();  // smem is reused by the next group of columns
  }
}

inline int pow2_at_most(int64_t v, int cap) {
  int p = 1;
  while (p * 2 <= cap && p * 2 <= v) p *= 2;
  return p;
}

using reduce_geom::split_dims;  // kernels/reduce_geom.h

template <class P>
void launch_rows(const P& p, int64_t outer, int64_t n, int64_t inner,
                 const char* what) {
  if (outer * n * inner == 0) return;
  cudaStream_t stream = current_stream();
  if (inner == 1 && n <= kWarpRowMax) {
    constexpr int kThreads = 256;  // 8 rows per block
    warp_rows_kernel<<<grid_for(outer, kThreads / 32), kThreads, 0, stream>>>(
        p, outer, n);
  } else if (inner == 1) {
    const int threads = n >= 16384 ? 1024 : 256;
    block_rows_kernel<<<grid_for(outer, 1), threads, 0, stream>>>(p, outer,
                                                                   n);
  } else {
    const int64_t cols = outer * inner;
    const int bx = pow2_at_most(cols, 32);
    const int by = pow2_at_most(n, kColThreads / bx);
    columns_kernel<<<grid_for(cols, bx), dim3(bx, by), 0, stream>>>(
        p, cols, n, inner);
  }
  FASTT_CUDA_CHECK_LAUNCH(what);
}

template <class T, bool Log>
struct SoftmaxK {
  static void run(KernelArgs& a) {
    const Tensor& in = *a.in[0];
    int64_t outer, n, inner;
    split_dims(in, a.i0, &outer, &n, &inner);
    const SoftmaxFwd<T, Log> p{static_cast<const T*>(in.data_ptr()),
                               static_cast<T*>(a.out->data_ptr())};
    launch_rows(p, outer, n, inner, Log ? "log_softmax" : "softmax");
  }
};
template <class T>
using SoftmaxKernel = SoftmaxK<T, false>;
template <class T>
using LogSoftmaxKernel = SoftmaxK<T, true>;

// in[0] = grad_out, in[1] = the forward's output, out = grad_in; dense.
template <class T, bool Log>
struct SoftmaxBackwardK {
  static void run(KernelArgs& a) {
    const Tensor& g = *a.in[0];
    int64_t outer, n, inner;
    split_dims(g, a.i0, &outer, &n, &inner);
    const SoftmaxBwd<T, Log> p{static_cast<const T*>(g.data_ptr()),
                               static_cast<const T*>(a.in[1]->data_ptr()),
                               static_cast<T*>(a.out->data_ptr())};
    launch_rows(p, outer, n, inner,
                Log ? "log_softmax_backward" : "softmax_backward");
  }
};
template <class T>
using SoftmaxBackwardKernel = SoftmaxBackwardK<T, false>;
template <class T>
using LogSoftmaxBackwardKernel = SoftmaxBackwardK<T, true>;

}  // namespace

void register_softmax_cuda_kernels() {
#define FASTT_KERNELS_softmax
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt

// Shared by the reduce*.cu files: the CUDA reduction driver (launch
// shapes, the one strided kernel template and its second pass) and the
// device-only functors. Geometry and the functors the CPU shares live in
// kernels/reduce_geom.h; add a functor there (or here if its CUDA math must
// differ), its kernel struct in the .cu file of its group.
#pragma once
#include <cstring>
#include <limits>
#include <type_traits>

#include "csrc/tensor.h"
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"
#include "kernels/reduce_geom.h"

namespace fastt {
namespace cuda {
namespace reduce_cuda {

// ------------------------------------------------------------ geometry --
// As on the CPU (kernels/reduce_geom.h). Strided inputs are handled in the
// kernel: no copy to contiguous first.
using Geom = reduce_geom::ReduceGeom;
inline Geom build_geom(const Tensor& in, IntList dims, bool ordered) {
  Geom g;
  reduce_geom::build_geom(in, dims, ordered, g);
  return g;
}

// Element offset of linear index i over n dims (slowest first).
__device__ __forceinline__ int64_t dims_offset(const int64_t* size,
                                               const int64_t* stride, int n,
                                               int64_t i) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; --d) {
    off += (i % size[d]) * stride[d];
    i /= size[d];
  }
  return off;
}
__device__ __forceinline__ int64_t kept_offset(const Geom& g, int64_t o) {
  return dims_offset(g.ksize, g.kstride, g.nk, o);
}
__device__ __forceinline__ int64_t reduced_offset(const Geom& g, int64_t r) {
  return dims_offset(g.rsize, g.rstride, g.nr, r);
}

// ------------------------------------------------------------ helpers --
template <class T>
using M = opmath_t<T>;

// Accumulator of float sums/means/norms/moments: float for the 16-bit
// floats and float32 (like torch's CUDA acc_type), double for float64.
// Complex numbers: complex64 and complex128 (the parts' accumulators).
template <class T>
struct FaccOf {
  using type = std::conditional_t<std::is_same<T, double>::value, double,
                                  float>;
};
template <class T>
struct FaccOf<Complex<T>> {
  using type = Complex<T>;
};
template <class T>
using facc_t = typename FaccOf<T>::type;
// sum/prod/cumsum/cumprod: integers and bool give int64 and accumulate in
// it (wrapping); floats keep their dtype and accumulate in facc_t.
template <class T>
using sum_out_t = std::conditional_t<std::is_integral<T>::value, int64_t, T>;
template <class T>
using sum_acc_t =
    std::conditional_t<std::is_integral<T>::value, int64_t, facc_t<T>>;

// wrap_add/wrap_mul, lowest/highest and the functors SumR, ProdR,
// ExtremeR, ArgR (with ValIdx), LogSumExpR and NormExtremeR, shared with
// the CPU.
using namespace reduce_ops;

// Math in the accumulator's precision.
__device__ __forceinline__ float dsqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double dsqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float dpow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double dpow(double x, double y) {
  return pow(x, y);
}
__device__ __forceinline__ float dabs(float x) { return fabsf(x); }
__device__ __forceinline__ double dabs(double x) { return fabs(x); }

// Warp shuffle of any trivially copyable state, 32 bits at a time.
template <class S>
__device__ __forceinline__ S shfl_down(const S& v, int delta) {
  constexpr int W = int((sizeof(S) + 3) / 4);
  unsigned w[W] = {};
  memcpy(w, &v, sizeof(S));
#pragma unroll
  for (int k = 0; k < W; ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], delta);
  S r;
  memcpy(&r, w, sizeof(S));
  return r;
}
template <class S>
__device__ __forceinline__ S shfl_up(const S& v, int delta) {
  constexpr int W = int((sizeof(S) + 3) / 4);
  unsigned w[W] = {};
  memcpy(w, &v, sizeof(S));
#pragma unroll
  for (int k = 0; k < W; ++k) w[k] = __shfl_up_sync(0xffffffffu, w[k], delta);
  S r;
  memcpy(&r, w, sizeof(S));
  return r;
}

template <class S, class R>
__device__ __forceinline__ S warp_combine(const R& r, S s) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s = r.combine(s, shfl_down(s, off));
  return s;
}

// The launch's dynamic shared memory as an array of S (every kernel here
// takes its shared memory this way; the launch sizes it).
template <class S>
__device__ __forceinline__ S* shared_states() {
  extern __shared__ __align__(16) unsigned char smem[];
  return reinterpret_cast<S*>(smem);
}

// Combines the states of the threads that share an output. Row mode: the
// threadIdx.x of a row (blockDim.x a multiple of 32) by warp shuffles, then
// one warp over the per-warp results in shared memory. Column mode: the
// threadIdx.y of a column (blockDim.y a power of two) by a tree in shared
// memory. The result is valid in the thread with lane index 0. Every thread
// of the block must call it (it synchronizes).
template <class S, class R>
__device__ __forceinline__ S block_combine(const R& r, S s, S* sh, bool row) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx = blockDim.x, by = blockDim.y;
  if (row) {
    s = warp_combine(r, s);
    const int wpr = bx >> 5;  // warps per row
    if (wpr > 1) {
      if ((tx & 31) == 0) sh[ty * wpr + (tx >> 5)] = s;
      __syncthreads();
      if (tx < 32) {
        s = tx < wpr ? sh[ty * wpr + tx] : r.init();
        s = warp_combine(r, s);
      }
      __syncthreads();  // sh is reused by the caller's next round
    }
    return s;
  }
  if (by > 1) {
    sh[ty * bx + tx] = s;
    __syncthreads();
    for (int h = by >> 1; h > 0; h >>= 1) {
      if (ty < h) sh[ty * bx + tx] = r.combine(sh[ty * bx + tx],
                                               sh[(ty + h) * bx + tx]);
      __syncthreads();
    }
    if (ty == 0) s = sh[tx];
    __syncthreads();
  }
  return s;
}

// ------------------------------------------------------------- kernels --
// Launch shape. Row mode: threadIdx.x walks the reduced range of the
// output threadIdx.y (coalesced when the reduced dim is the dense one).
// Column mode: threadIdx.x walks consecutive outputs (coalesced when a kept
// dim is the dense one; also used when each output reduces few elements)
// and threadIdx.y splits the reduced range. gridDim.x strides over groups
// of outputs; gridDim.y > 1 splits the reduced range across blocks, whose
// partial states a second kernel combines in a fixed order (deterministic:
// no atomics).
struct Shape {
  bool row;
  int bx, by;
  int64_t groups;  // ceil(n_out / outputs per block)
  int gx, gy;
};

template <class T, class R, class W>
__global__ void reduce_kernel(const T* __restrict__ x, Geom g, R r, W w,
                              bool row, int64_t groups,
                              typename R::state* partial) {
  using S = typename R::state;
  S* sh = shared_states<S>();
  const int per_block = row ? blockDim.y : blockDim.x;
  const int lanes = row ? blockDim.x : blockDim.y;
  const int lane_in = row ? threadIdx.x : threadIdx.y;
  const int out_in = row ? threadIdx.y : threadIdx.x;
  const int64_t ls = int64_t(gridDim.y) * lanes;
  const int64_t n = g.n_red;
  for (int64_t grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int64_t o = grp * per_block + out_in;
    S s = r.init();
    if (o < g.n_out) {
      const T* base = x + kept_offset(g, o);
      int64_t i = int64_t(blockIdx.y) * lanes + lane_in;
      if (g.nr == 1) {
        const int64_t st = g.rstride[0];
        // Four loads in flight before the dependent steps.
        for (; i + 3 * ls < n; i += 4 * ls) {
          const M<T> v0 = static_cast<M<T>>(base[i * st]);
          const M<T> v1 = static_cast<M<T>>(base[(i + ls) * st]);
          const M<T> v2 = static_cast<M<T>>(base[(i + 2 * ls) * st]);
          const M<T> v3 = static_cast<M<T>>(base[(i + 3 * ls) * st]);
          s = r.step(s, v0, i);
          s = r.step(s, v1, i + ls);
          s = r.step(s, v2, i + 2 * ls);
          s = r.step(s, v3, i + 3 * ls);
        }
        for (; i < n; i += ls)
          s = r.step(s, static_cast<M<T>>(base[i * st]), i);
      } else {
        for (; i < n; i += ls)
          s = r.step(s, static_cast<M<T>>(base[reduced_offset(g, i)]), i);
      }
    }
    s = block_combine(r, s, sh, row);
    if (o < g.n_out && lane_in == 0) {
      if (gridDim.y == 1)
        w(o, s);
      else
        partial[o * gridDim.y + blockIdx.y] = s;
    }
  }
}

constexpr int kFinishBlock = 128;

// Second pass: one block per output combines its `parts` partial states.
template <class R, class W>
__global__ void finish_kernel(const typename R::state* __restrict__ partial,
                              int64_t n_out, int parts, R r, W w) {
  using S = typename R::state;
  S* sh = shared_states<S>();  // kFinishBlock / 32 states
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    S s = r.init();
    for (int j = threadIdx.x; j < parts; j += blockDim.x)
      s = r.combine(s, partial[o * parts + j]);
    s = block_combine(r, s, sh, true);
    if (threadIdx.x == 0) w(o, s);
  }
}

inline int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

inline Shape choose_shape(const Geom& g) {
  const int64_t N = g.n_out, R = g.n_red;
  const int sm = sm_count(current_device());
  bool row = true;
  if (g.nk > 0 && R > 1) {  // the CPU's test for its column path
    int64_t min_rs = g.rstride[0];
    for (int d = 1; d < g.nr; ++d)
      min_rs = g.rstride[d] < min_rs ? g.rstride[d] : min_rs;
    row = !(g.kstride[g.nk - 1] < min_rs);
  }
  if (R < 32) row = false;  // short rows: a thread (or a few) per output
  Shape s;
  s.row = row;
  if (row) {
    s.bx = int(std::min<int64_t>(pow2_at_least(R), kBlock));
    s.by = kBlock / s.bx;
  } else {
    s.bx = int(std::min<int64_t>(pow2_at_least(N), 32));
    s.by = int(std::min<int64_t>(pow2_at_least(R), kBlock / s.bx));
  }
  const int per_block = row ? s.by : s.bx;
  const int lanes = row ? s.bx : s.by;
  s.groups = (N + per_block - 1) / per_block;
  s.gx = int(std::min<int64_t>(s.groups, int64_t(sm) * 32));
  // Few outputs, long rows: split each row across blocks until the GPU is
  // covered, keeping at least ~32 elements per thread.
  s.gy = 1;
  const int64_t target = int64_t(sm) * 4;
  const int64_t per_lane = (R + lanes - 1) / lanes;
  if (s.groups < target && per_lane >= 64) {
    int64_t gy = std::min(target / s.groups, (per_lane + 31) / 32);
    s.gy = int(std::max<int64_t>(1, std::min<int64_t>(gy, 65535)));
  }
  return s;
}

// Runs reduction `r` over `in` (dims empty = all) and calls w(o, state)
// on the device once per output element o (row-major over the kept dims).
// `ordered`: ops that report indices need the reduced dims in logical order.
template <class T, class R, class W>
void reduce(const Tensor& in, IntList dims, const R& r, const W& w,
            bool ordered, const char* what) {
  using S = typename R::state;
  const Geom g = build_geom(in, dims, ordered);
  if (g.n_out == 0) return;
  const Shape s = choose_shape(g);
  cudaStream_t stream = current_stream();
  const T* x = static_cast<const T*>(in.data_ptr());
  const size_t smem = size_t(s.bx) * s.by * sizeof(S);
  const dim3 block(unsigned(s.bx), unsigned(s.by));
  if (s.gy == 1) {
    reduce_kernel<T, R, W><<<dim3(unsigned(s.gx), 1), block, smem, stream>>>(
        x, g, r, w, s.row, s.groups, nullptr);
    FASTT_CUDA_CHECK_LAUNCH(what);
    return;
  }
  // Partial states: stream-ordered scratch from the caching allocator.
  Tensor scratch = Tensor::empty(
      IntList{int64_t(g.n_out * s.gy * int64_t(sizeof(S)))}, DType::UInt8,
      Device(DeviceType::CUDA, current_device()));
  S* partial = static_cast<S*>(scratch.data_ptr());
  reduce_kernel<T, R, W><<<dim3(unsigned(s.gx), unsigned(s.gy)), block, smem,
                           stream>>>(x, g, r, w, s.row, s.groups, partial);
  FASTT_CUDA_CHECK_LAUNCH(what);
  const int fx = int(std::min<int64_t>(g.n_out, 65535));
  finish_kernel<R, W><<<fx, kFinishBlock, kFinishBlock / 32 * sizeof(S),
                        stream>>>(partial, g.n_out, s.gy, r, w);
  FASTT_CUDA_CHECK_LAUNCH(what);
}

// ------------------------------------------------------------ functors --
// Each: state, init(), step(state, value, reduced index), combine(a, b).
// combine must be associative and commutative up to rounding: threads see
// interleaved, not contiguous, parts of a row. The ones shared with the
// CPU are in kernels/reduce_geom.h; these differ in accumulator or math.

// all/any; the state is an int so warp shuffles move whole words.
template <bool IsAll>
struct LogicalOp {
  using state = int;
  __device__ int init() const { return IsAll ? 1 : 0; }
  template <class X>
  __device__ int step(int s, X x, int64_t) const {
    return IsAll ? (s && x != X(0)) : (s || x != X(0));
  }
  __device__ int combine(int a, int b) const {
    return IsAll ? (a && b) : (a || b);
  }
};

// var/std: Welford's update, merged with Chan's formula; the count is
// exact (int64) whatever the accumulator.
template <class A>
struct WelfordState {
  A mean, m2;
  int64_t n;
};
template <class A>
struct WelfordOp {
  using state = WelfordState<A>;
  __device__ state init() const { return {A(0), A(0), 0}; }
  template <class X>
  __device__ state step(state s, X x, int64_t) const {
    const A v = A(x);
    s.n += 1;
    const A delta = v - s.mean;
    s.mean += delta / A(s.n);
    s.m2 += delta * (v - s.mean);
    return s;
  }
  __device__ state combine(state a, state b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const A delta = b.mean - a.mean;
    const A nf = A(n);
    return {a.mean + delta * (A(b.n) / nf),
            a.m2 + b.m2 + delta * delta * (A(a.n) * (A(b.n) / nf)), n};
  }
};

// Vector norms: sums of |x|^p (the inf norms: reduce_ops::NormExtremeR).
template <class A, int Kind>  // 0: count nonzero, 1: |x|, 2: x^2, 3: |x|^p
struct NormSumOp {
  using state = A;
  A p;
  __device__ A init() const { return A(0); }
  template <class X>
  __device__ A step(A s, X x, int64_t) const {
    const A v = A(x);
    if constexpr (Kind == 0) return s + (v != A(0) ? A(1) : A(0));
    else if constexpr (Kind == 1) return s + dabs(v);
    else if constexpr (Kind == 2) return s + v * v;
    else return s + dpow(dabs(v), p);
  }
  __device__ A combine(A a, A b) const { return a + b; }
  __device__ A finish(A s) const {
    if constexpr (Kind == 0 || Kind == 1) return s;
    else if constexpr (Kind == 2) return dsqrt(s);
    else return dpow(s, A(1) / p);
  }
};
// ------------------------------------------------------------- writers --
// Writers store one output from a final state: out[o] = T(project(state)).
template <class O, class S>
struct CastW {
  O* out;
  __device__ void operator()(int64_t o, S s) const {
    if constexpr (std::is_same<O, bool>::value) out[o] = s != S(0);
    else out[o] = static_cast<O>(s);
  }
};

template <class T>
T* out_ptr(const Tensor* t) {
  return static_cast<T*>(t->data_ptr());
}

// Registration of the other reduce files (reduce.cu's entry calls them).
void register_reduce_extreme_cuda_kernels();
void register_reduce_stats_cuda_kernels();

}  // namespace reduce_cuda
}  // namespace cuda
}  // namespace fastt

// Row-wise reduction helpers shared by the softmax, norm and loss kernels:
// reduction states with a warp shuffle, warp- and block-wide reductions
// that hand every thread the result, and device math overloads.
// A state S provides identity(), merge(a, b), shfl_xor(o) and shfl0().
#pragma once
#include <cmath>

#include "kernels/cuda/loop.cuh"

namespace fastt {
namespace cuda {

constexpr unsigned kFull = 0xffffffffu;
// Rows up to this length go warp per row, longer ones block per row.
constexpr int64_t kWarpRowMax = 1024;

__device__ __forceinline__ float dexp(float x) { return expf(x); }
__device__ __forceinline__ double dexp(double x) { return exp(x); }
__device__ __forceinline__ float dlog(float x) { return logf(x); }
__device__ __forceinline__ double dlog(double x) { return log(x); }
__device__ __forceinline__ float drsqrt(float x) { return 1.0f / sqrtf(x); }
__device__ __forceinline__ double drsqrt(double x) { return 1.0 / sqrt(x); }

template <class A>
struct Sum {
  A s;
  static __device__ Sum identity() { return {A(0)}; }
  static __device__ Sum merge(Sum a, Sum b) { return {a.s + b.s}; }
  __device__ Sum shfl_xor(int o) const {
    return {__shfl_xor_sync(kFull, s, o)};
  }
  __device__ Sum shfl0() const { return {__shfl_sync(kFull, s, 0)}; }
};

template <class A>
struct Sum2 {
  A a, b;
  static __device__ Sum2 identity() { return {A(0), A(0)}; }
  static __device__ Sum2 merge(Sum2 x, Sum2 y) {
    return {x.a + y.a, x.b + y.b};
  }
  __device__ Sum2 shfl_xor(int o) const {
    return {__shfl_xor_sync(kFull, a, o), __shfl_xor_sync(kFull, b, o)};
  }
  __device__ Sum2 shfl0() const {
    return {__shfl_sync(kFull, a, 0), __shfl_sync(kFull, b, 0)};
  }
};

// Butterfly over a full warp; lane 0's value is broadcast so every lane
// sees bit-identical results.
template <class S>
__device__ __forceinline__ S warp_reduce(S s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s = S::merge(s, s.shfl_xor(o));
  return s.shfl0();
}

// Whole-block reduction (1-d block, a multiple of 32 threads); every
// thread gets the result. smem holds 32 states and may be reused by the
// block's next row once this returns.
template <class S>
__device__ S block_reduce(S s, S* smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nwarps = int(blockDim.x) >> 5;
  s = warp_reduce(s);
  if (lane == 0) smem[warp] = s;
  __syncthreads();
  if (warp == 0) {
    S t = lane < nwarps ? smem[lane] : S::identity();
    t = warp_reduce(t);
    if (lane == 0) smem[0] = t;
  }
  __syncthreads();
  s = smem[0];
  __syncthreads();
  return s;
}

}  // namespace cuda
}  // namespace fastt

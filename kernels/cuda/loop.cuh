// CUDA elementwise machinery: the same KernelArgs loop description the CPU
// uses, passed by value to a grid-stride kernel; dense loops index directly,
// strided ones decompose the linear index (dim 0 fastest).
#pragma once
#include "csrc/dispatch.h"
#include "kernels/cuda/cuda_check.h"

namespace fastt {
namespace cuda {

// The subset of KernelArgs a device kernel needs (no host-only members).
struct DeviceLoop {
  int ndim;
  int64_t numel;
  char* data[kMaxOperands];
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];
};

inline DeviceLoop to_device_loop(const KernelArgs& a) {
  DeviceLoop d;
  d.ndim = a.ndim;
  d.numel = a.numel;
  for (int k = 0; k < kMaxOperands; ++k) d.data[k] = a.data[k];
  for (int i = 0; i < a.ndim; ++i) {
    d.sizes[i] = a.sizes[i];
    for (int k = 0; k < a.nops; ++k) d.strides[k][i] = a.strides[k][i];
  }
  return d;
}

template <int N>
__device__ __forceinline__ void offsets(const DeviceLoop& l, int64_t i,
                                        int64_t* off) {
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = 0; d < l.ndim; ++d) {
    int64_t idx = i % l.sizes[d];
    i /= l.sizes[d];
    for (int k = 0; k < N; ++k) off[k] += idx * l.strides[k][d];
  }
}

template <class O, class I, class F>
__global__ void unary_kernel(DeviceLoop l, F f) {
  int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < l.numel;
       i += stride) {
    int64_t off[2];
    offsets<2>(l, i, off);
    *reinterpret_cast<O*>(l.data[0] + off[0]) = static_cast<O>(
        f(static_cast<opmath_t<I>>(*reinterpret_cast<const I*>(l.data[1] + off[1]))));
  }
}

inline int grid_for(int64_t n, int block) {
  int64_t g = (n + block - 1) / block;
  return int(g > 65535 * 8 ? 65535 * 8 : (g < 1 ? 1 : g));
}

template <class O, class I, class F>
void launch_unary(const KernelArgs& a, F f, const char* what) {
  if (a.numel == 0) return;
  constexpr int kBlock = 256;
  unary_kernel<O, I, F><<<grid_for(a.numel, kBlock), kBlock>>>(
      to_device_loop(a), f);
  FASTT_CUDA_CHECK_LAUNCH(what);
}

}  // namespace cuda
}  // namespace fastt

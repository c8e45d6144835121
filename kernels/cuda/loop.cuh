// CUDA elementwise machinery: the same KernelArgs loop description the CPU
// uses, turned into one of two kernels on the current stream.
//  - dense: every operand contiguous (or a broadcast scalar); each thread
//    handles kVec consecutive elements with 16-byte vector loads/stores when
//    the pointers allow it, a grid-stride loop over the rest;
//  - strided: the linear index is decomposed over the loop's dims (dim 0
//    fastest), in 32-bit arithmetic when the loop is small enough.
// Scalar operands (a Python number the op layer put in KernelArgs's
// scalar_buf, host memory) travel by value inside the kernel parameters.
// The element math is a functor from kernels/functors.h, shared with the
// CPU loops: f(opmath_t<I>...) -> opmath.
#pragma once
#include <cstring>
#include <type_traits>
#include <utility>

#include <cuda/std/tuple>

#include "csrc/dispatch.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/dtype_sets.h"
#include "kernels/cuda/runtime.h"

namespace fastt {
namespace cuda {

constexpr int kBlock = 256;

// Operands of a loop as device code sees them.
struct DeviceOperands {
  char* data[kMaxOperands];
  // Operand k is a scalar held in scalar[k] when bit k is set.
  alignas(16) char scalar[kMaxOperands][16];
  uint32_t scalar_mask;
};

struct DenseLoop {
  int64_t numel;
  DeviceOperands ops;
};

template <class Index>
struct StridedLoop {
  int ndim;
  Index numel;
  DeviceOperands ops;
  Index sizes[kMaxDims];
  Index strides[kMaxOperands][kMaxDims];  // bytes
};

// True when operand k's data points into a.scalar_buf (host memory).
inline bool is_host_scalar(const KernelArgs& a, int k) {
  const char* p = a.data[k];
  const char* b = &a.scalar_buf[0][0];
  return p >= b && p < b + sizeof(a.scalar_buf);
}

// A 1-d loop whose tensors are dense and whose other operands are host
// scalars (the op layer's tensor-op-number fast path) runs dense.
template <class O, class... I>
inline bool dense_with_scalars(const KernelArgs& a) {
  if (a.ndim != 1) return false;
  const int64_t size[] = {int64_t(sizeof(O)), int64_t(sizeof(I))...};
  for (int k = 0; k < a.nops; ++k)
    if (a.strides[k][0] != size[k] && !is_host_scalar(a, k)) return false;
  return true;
}

inline DeviceOperands to_device_operands(const KernelArgs& a) {
  DeviceOperands o;
  o.scalar_mask = 0;
  for (int k = 0; k < a.nops; ++k) {
    if (is_host_scalar(a, k)) {
      std::memcpy(o.scalar[k], a.data[k], 16);
      o.scalar_mask |= 1u << k;
      o.data[k] = nullptr;
    } else {
      o.data[k] = a.data[k];
    }
  }
  return o;
}

template <class T>
__device__ __forceinline__ opmath_t<T> load_operand(const DeviceOperands& o,
                                                    int k, int64_t off) {
  if (o.scalar_mask & (1u << k))
    return static_cast<opmath_t<T>>(*reinterpret_cast<const T*>(o.scalar[k]));
  return static_cast<opmath_t<T>>(
      *reinterpret_cast<const T*>(o.data[k] + off));
}

// A dense loop's operand k is either contiguous (element i at i*sizeof) or
// a scalar (stride 0); both are covered by load_operand with off = i*size.
template <class O, class... I, class F, size_t... K>
__device__ __forceinline__ void apply_dense(const DenseLoop& l, F& f,
                                            int64_t i,
                                            std::index_sequence<K...>) {
  reinterpret_cast<O*>(l.ops.data[0])[i] = static_cast<O>(
      f(load_operand<I>(l.ops, int(K) + 1, i * int64_t(sizeof(I)))...));
}

// Vector width: 16 bytes over the widest operand type.
template <class... T>
constexpr size_t max_size() {
  size_t m = 1;
  ((m = sizeof(T) > m ? sizeof(T) : m), ...);
  return m;
}

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Every operand dense and 16-byte aligned, no scalars: one vector load per
// operand per thread.
template <int N, class O, class... I, class F, size_t... K>
__device__ __forceinline__ void apply_vec(const DenseLoop& l, F& f, int64_t v,
                                          std::index_sequence<K...>) {
  Pack<O, N> out;
  const ::cuda::std::tuple<Pack<I, N>...> in(
      reinterpret_cast<const Pack<I, N>*>(l.ops.data[K + 1])[v]...);
#pragma unroll
  for (int j = 0; j < N; ++j)
    out.v[j] = static_cast<O>(
        f(static_cast<opmath_t<I>>(::cuda::std::get<K>(in).v[j])...));
  reinterpret_cast<Pack<O, N>*>(l.ops.data[0])[v] = out;
}

template <int N, bool kVector, class F, class O, class... I>
__global__ void dense_kernel(DenseLoop l, F f) {
  using Seq = std::index_sequence_for<I...>;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (kVector) {
    const int64_t nvec = l.numel / N;
    for (int64_t v = tid; v < nvec; v += stride)
      apply_vec<N, O, I...>(l, f, v, Seq{});
    // Tail: the last numel % N elements, one per thread.
    for (int64_t i = nvec * N + tid; i < l.numel; i += stride)
      apply_dense<O, I...>(l, f, i, Seq{});
  } else {
    for (int64_t i = tid; i < l.numel; i += stride)
      apply_dense<O, I...>(l, f, i, Seq{});
  }
}

template <class Index, int NOps>
__device__ __forceinline__ void strided_offsets(const StridedLoop<Index>& l,
                                                Index i, Index* off) {
#pragma unroll
  for (int k = 0; k < NOps; ++k) off[k] = 0;
  for (int d = 0; d < l.ndim; ++d) {
    const Index size = l.sizes[d];
    const Index idx = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < NOps; ++k) off[k] += idx * l.strides[k][d];
  }
}

template <class Index, class O, class... I, class F, size_t... K>
__device__ __forceinline__ void apply_strided(const StridedLoop<Index>& l,
                                              F& f, Index i,
                                              std::index_sequence<K...>) {
  Index off[sizeof...(I) + 1];
  strided_offsets<Index, sizeof...(I) + 1>(l, i, off);
  *reinterpret_cast<O*>(l.ops.data[0] + off[0]) = static_cast<O>(
      f(load_operand<I>(l.ops, int(K) + 1, int64_t(off[K + 1]))...));
}

template <class Index, class F, class O, class... I>
__global__ void strided_kernel(StridedLoop<Index> l, F f) {
  using Seq = std::index_sequence_for<I...>;
  const Index stride = Index(blockDim.x) * gridDim.x;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < l.numel;
       i += stride)
    apply_strided<Index, O, I...>(l, f, i, Seq{});
}

template <class Index>
StridedLoop<Index> to_strided_loop(const KernelArgs& a) {
  StridedLoop<Index> l;
  l.ndim = a.ndim;
  l.numel = Index(a.numel);
  l.ops = to_device_operands(a);
  for (int d = 0; d < a.ndim; ++d) {
    l.sizes[d] = Index(a.sizes[d]);
    for (int k = 0; k < a.nops; ++k) l.strides[k][d] = Index(a.strides[k][d]);
  }
  return l;
}

// Largest byte offset any operand reaches (for the 32-bit index choice).
// The grid-stride counter also passes numel by up to the launch's thread
// count before the loop test sees it: that sum must not overflow either.
inline bool fits_int32(const KernelArgs& a, int64_t threads) {
  if (a.numel + threads >= (int64_t(1) << 31)) return false;
  for (int k = 0; k < a.nops; ++k) {
    int64_t span = 0;
    for (int d = 0; d < a.ndim; ++d) {
      int64_t s = a.strides[k][d];
      span += (a.sizes[d] - 1) * (s < 0 ? -s : s);
    }
    if (span >= (int64_t(1) << 31)) return false;
  }
  return true;
}

// out[O] = f(in[I]...) over the loop in `a`, on the current stream.
// `what` names the op in launch errors.
template <class O, class... I, class F>
void launch_elementwise(const KernelArgs& a, F f, const char* what) {
  static_assert(sizeof...(I) + 1 <= kMaxOperands, "too many operands");
  if (a.numel == 0) return;
  cudaStream_t stream = current_stream();
  if (a.contiguous || dense_with_scalars<O, I...>(a)) {
    DenseLoop l;
    l.numel = a.numel;
    l.ops = to_device_operands(a);
    constexpr int N = int(16 / max_size<O, I...>()) < 1
                          ? 1
                          : int(16 / max_size<O, I...>());
    bool vec = N > 1 && l.ops.scalar_mask == 0 && a.numel >= N;
    for (int k = 0; k < a.nops && vec; ++k)
      vec = (reinterpret_cast<uintptr_t>(a.data[k]) % 16) == 0;
    if (vec) {
      const int64_t work = (a.numel + N - 1) / N;
      dense_kernel<N, true, F, O, I...>
          <<<grid_for(work, kBlock), kBlock, 0, stream>>>(l, f);
    } else {
      dense_kernel<1, false, F, O, I...>
          <<<grid_for(a.numel, kBlock), kBlock, 0, stream>>>(l, f);
    }
  } else {
    const int grid = grid_for(a.numel, kBlock);
    if (fits_int32(a, int64_t(grid) * kBlock))
      strided_kernel<int32_t, F, O, I...><<<grid, kBlock, 0, stream>>>(
          to_strided_loop<int32_t>(a), f);
    else
      strided_kernel<int64_t, F, O, I...><<<grid, kBlock, 0, stream>>>(
          to_strided_loop<int64_t>(a), f);
  }
  FASTT_CUDA_CHECK_LAUNCH(what);
}

// Registers Kernel<T>::run for every T in the set on the CUDA column and
// marks the op's other CUDA dtypes unsupported (kernels/dtype_sets.h).
template <template <class> class Kernel, class... Ts>
void register_only(Op op, Types<Ts...> set) {
  register_only_on<DeviceType::CUDA, Kernel>(op, set);
}

}  // namespace cuda
}  // namespace fastt

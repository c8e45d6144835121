// CUDA factory and random kernels (layouts as kernels/cpu/factory.cpp):
// arange, linspace, eye, and the Philox-driven uniform, normal, randint,
// randperm, bernoulli. Random element at loop position pos reads Philox
// block offset + pos / K, slot pos % K, exactly like the CPU, so the same
// seed gives the same numbers on both backends: bit-identical for uniform,
// randint, randperm and bernoulli; normal differs only by the ulps of the
// device's log/sin/cos. Float math that must round like the CPU uses the
// _rn intrinsics, which nvcc never fuses into an fma.
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cuda/device_error.cuh"
#include "kernels/cuda/graph.h"
#include "kernels/cuda/loop.cuh"
#include "kernels/cuda/rn.cuh"
#include "kernels/factory_common.h"
#include "kernels/philox.h"

namespace fastt {
namespace cuda {
namespace {
using namespace factory;

// ---------------------------------------------------------- factories --
template <class T, class Acc>
__global__ void arange_kernel(T* o, int64_t n, Acc start, Acc step) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    o[i] = static_cast<T>(add_rn(start, mul_rn(step, Acc(i))));
}

// out (contiguous) = start + step * i. Integers: i0 start, i1 step;
// floats: f0 start, f1 step.
template <class T>
struct ArangeK {
  static void run(KernelArgs& a) {
    using Acc = arange_acc_t<T>;
    const int64_t n = a.out->numel();
    if (n == 0) return;
    Acc start, step;
    if constexpr (std::is_integral<T>::value) {
      start = a.i0;
      step = a.i1;
    } else {
      start = Acc(a.f0);
      step = Acc(a.f1);
    }
    arange_kernel<T, Acc>
        <<<grid_for(n, kBlock), kBlock, 0, current_stream()>>>(
            static_cast<T*>(a.out->data_ptr()), n, start, step);
    FASTT_CUDA_CHECK_LAUNCH("arange");
  }
};

// A value rounded to T when T is a 16-bit float computed in float (torch's
// Half/BFloat16 arithmetic rounds every operation); else unchanged.
template <class T, class M>
__host__ __device__ inline M round_to(M v) {
  if constexpr (!std::is_integral<T>::value && !std::is_same<T, M>::value)
    return M(static_cast<T>(v));
  else
    return v;
}

// torch's symmetric linspace (see the CPU kernel): the first half counts
// up from start, the second down from end. M is double for integer T.
template <class T, class M>
__global__ void linspace_kernel(T* o, int64_t steps, M start, M end,
                                M step) {
  const int64_t halfway = steps / 2;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < steps;
       i += stride)
    o[i] = static_cast<T>(
        i < halfway
            ? add_rn(start, round_to<T>(mul_rn(step, round_to<T>(M(i)))))
            : sub_rn(end, round_to<T>(mul_rn(
                              step, round_to<T>(M(steps - i - 1))))));
}

// f0/f1 start/end (i0/i1 for integer dtypes), numel = steps >= 2. The
// parameters are computed on the host exactly as the CPU kernel does.
template <class T>
struct LinspaceK {
  static void run(KernelArgs& a) {
    T* o = static_cast<T*>(a.out->data_ptr());
    const int64_t steps = a.out->numel();
    const int grid = grid_for(steps, kBlock);
    cudaStream_t stream = current_stream();
    if constexpr (std::is_integral<T>::value) {
      const T start = static_cast<T>(a.i0), end = static_cast<T>(a.i1);
      const double step = (double(end) - double(start)) / double(steps - 1);
      linspace_kernel<T, double><<<grid, kBlock, 0, stream>>>(
          o, steps, double(start), double(end), step);
    } else {
      using M = opmath_t<T>;
      const M start = M(static_cast<T>(a.f0)), end = M(static_cast<T>(a.f1));
      const M step = round_to<T>(round_to<T>(end - start) /
                                 round_to<T>(M(steps - 1)));
      linspace_kernel<T, M><<<grid, kBlock, 0, stream>>>(o, steps, start,
                                                         end, step);
    }
    FASTT_CUDA_CHECK_LAUNCH("linspace");
  }
};

template <class T>
__global__ void eye_diag_kernel(T* o, int64_t k, int64_t m) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < k;
       i += stride)
    o[i * m + i] = static_cast<T>(1);
}

// out (contiguous n x m): zero bits everywhere, ones on the diagonal.
template <class T>
struct EyeK {
  static void run(KernelArgs& a) {
    T* o = static_cast<T*>(a.out->data_ptr());
    const int64_t n = a.out->size(0), m = a.out->size(1);
    cudaStream_t stream = current_stream();
    FASTT_CUDA_CHECK(
        cudaMemsetAsync(o, 0, size_t(n * m) * sizeof(T), stream), "eye");
    const int64_t k = n < m ? n : m;
    if (k == 0) return;
    eye_diag_kernel<T><<<grid_for(k, kBlock), kBlock, 0, stream>>>(o, k, m);
    FASTT_CUDA_CHECK_LAUNCH("eye");
  }
};

// ------------------------------------------------------------- random --
// The op's loop (KernelArgs Loop fields, dim 0 fastest): position pos is
// the same linear index the CPU's counter_loop walks.
struct RandLoop {
  int ndim;
  int64_t numel;
  char* data[2];
  int64_t sizes[kMaxDims];
  int64_t strides[2][kMaxDims];  // bytes
};

RandLoop to_rand_loop(const KernelArgs& a) {
  RandLoop l;
  l.ndim = a.ndim;
  l.numel = a.numel;
  for (int k = 0; k < 2; ++k) l.data[k] = k < a.nops ? a.data[k] : nullptr;
  for (int d = 0; d < a.ndim; ++d) {
    l.sizes[d] = a.sizes[d];
    for (int k = 0; k < 2; ++k)
      l.strides[k][d] = k < a.nops ? a.strides[k][d] : 0;
  }
  return l;
}

// Byte offsets of position pos in operands 0 and 1.
__device__ __forceinline__ void loop_offsets(const RandLoop& l, int64_t pos,
                                             int64_t* o0, int64_t* o1) {
  int64_t a = 0, b = 0;
  for (int d = 0; d < l.ndim; ++d) {
    const int64_t i = pos % l.sizes[d];
    pos /= l.sizes[d];
    a += i * l.strides[0][d];
    b += i * l.strides[1][d];
  }
  *o0 = a;
  *o1 = b;
}

// One thread per Philox block: K consecutive positions from one draw.
template <class V, int K, class Gen, class Elem>
__global__ void counter_kernel(RandLoop l, uint64_t seed, uint64_t offset,
                               Gen gen, Elem elem) {
  const int64_t nblk = (l.numel + K - 1) / K;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < nblk;
       b += stride) {
    V vals[K];
    gen(philox::block(seed, offset + uint64_t(b)), vals);
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const int64_t pos = b * K + j;
      if (pos >= l.numel) break;
      int64_t o0, o1;
      loop_offsets(l, pos, &o0, &o1);
      elem(vals[j], l.data[0] + o0, l.data[1] + o1);
    }
  }
}

template <class V, int K, class Gen, class Elem>
void launch_counter(const KernelArgs& a, Gen gen, Elem elem,
                    const char* what) {
  if (a.numel == 0) return;
  // The (seed, offset) pair is a kernel argument: a replayed CUDA graph
  // would draw the capture's numbers again.
  check_no_random_capture(what);
  const uint64_t seed = arg_u64(a.i0), offset = arg_u64(a.i1);
  const int64_t nblk = (a.numel + K - 1) / K;
  counter_kernel<V, K, Gen, Elem>
      <<<grid_for(nblk, kBlock), kBlock, 0, current_stream()>>>(
          to_rand_loop(a), seed, offset, gen, elem);
  FASTT_CUDA_CHECK_LAUNCH(what);
}

template <class M>
struct UniformGen {
  __device__ void operator()(const philox::Block& b, M* v) const {
    philox::uniform_block<M>(b, v);
  }
};
template <class M>
struct NormalGen {
  __device__ void operator()(const philox::Block& b, M* v) const {
    philox::normal_block<M>(b, v);
  }
};
struct Bits64Gen {
  __device__ void operator()(const philox::Block& b, uint64_t* v) const {
    philox::bits64_block(b, v);
  }
};

template <class T>
struct UniformElem {
  using M = opmath_t<T>;
  M lo, range;
  double to;
  bool clamp;
  T hi;
  __device__ void operator()(M u, char* out, char*) const {
    T v = static_cast<T>(add_rn(lo, mul_rn(u, range)));
    if (clamp && !(static_cast<double>(v) < to)) v = hi;
    *reinterpret_cast<T*>(out) = v;
  }
};

// f0 from, f1 to (from <= to, to - from finite in T).
template <class T>
struct UniformK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    constexpr int K = philox::values_per_block<M>();
    UniformElem<T> e{M(a.f0), M(a.f1 - a.f0), a.f1, a.f1 > a.f0,
                     largest_below<T>(a.f1)};
    launch_counter<M, K>(a, UniformGen<M>{}, e, "uniform_");
  }
};

template <class T>
struct NormalElem {
  using M = opmath_t<T>;
  M mean, std;
  __device__ void operator()(M z, char* out, char*) const {
    *reinterpret_cast<T*>(out) = static_cast<T>(add_rn(mean, mul_rn(std, z)));
  }
};

// f0 mean, f1 std (>= 0).
template <class T>
struct NormalK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    constexpr int K = philox::values_per_block<M>();
    launch_counter<M, K>(a, NormalGen<M>{}, NormalElem<T>{M(a.f0), M(a.f1)},
                         "normal_");
  }
};

template <class T>
struct RandintElem {
  uint64_t low, range;
  __device__ void operator()(uint64_t r, char* out, char*) const {
    const uint64_t u = low + r % range;
    int64_t v;
    memcpy(&v, &u, sizeof(v));
    T o;
    if constexpr (std::is_same<T, bool>::value) o = v != 0;
    else if constexpr (std::is_integral<T>::value) o = static_cast<T>(v);
    else o = static_cast<T>(static_cast<opmath_t<T>>(v));
    *reinterpret_cast<T*>(out) = o;
  }
};

// out = low + r % range; s0 low, i2 range > 0 (uint64 bit pattern).
template <class T>
struct RandintK {
  static void run(KernelArgs& a) {
    RandintElem<T> e{arg_u64(a.s0.to<int64_t>()), arg_u64(a.i2)};
    launch_counter<uint64_t, 2>(a, Bits64Gen{}, e, "random_");
  }
};

// randperm: Fisher-Yates is sequential, so it runs on the host in the
// CPU kernel's randperm_fill (same draws, same swaps) and the result is
// copied to the device. The copy is from pageable memory, which the
// runtime stages before cudaMemcpyAsync returns, so the host buffer may go
// right after.
template <class T>
struct RandpermK {
  static void run(KernelArgs& a) {
    check_no_random_capture("randperm");
    const int64_t n = a.out->numel();
    if (n == 0) return;
    std::vector<T> host(static_cast<size_t>(n));
    randperm_fill(host.data(), n, arg_u64(a.i0), arg_u64(a.i1));
    FASTT_CUDA_CHECK(cudaMemcpyAsync(a.out->data_ptr(), host.data(),
                                     size_t(n) * sizeof(T),
                                     cudaMemcpyHostToDevice, current_stream()),
                     "randperm");
  }
};

template <class T>
struct BernoulliScalarElem {
  double p;
  __device__ void operator()(double u, char* out, char*) const {
    *reinterpret_cast<T*>(out) = static_cast<T>(u < p ? 1 : 0);
  }
};

template <class T, class P>
struct BernoulliTensorElem {
  DeviceError* err;
  uint64_t op;  // op_cookie("bernoulli_")
  __device__ void operator()(double u, char* out, char* pp) const {
    const double prob =
        double(static_cast<opmath_t<P>>(*reinterpret_cast<const P*>(pp)));
    if (!(prob >= 0.0 && prob <= 1.0))
      report_device_error(err, kDeviceErrorProbability, op, 0, 0, -1);
    *reinterpret_cast<T*>(out) = static_cast<T>(u < prob ? 1 : 0);
  }
};

// out = u < p ? 1 : 0 with u a 53-bit uniform; nops == 2: p is operand 1,
// else f0. A p outside [0, 1] in the tensor form is reported through the
// device error slot (device_error.h: raised as RuntimeError by the next
// synchronizing call), so neither form syncs.
template <class T>
struct BernoulliK {
  template <class P>
  static void run_tensor(KernelArgs& a) {
    const BernoulliTensorElem<T, P> e{device_error_slot(),
                                      op_cookie("bernoulli_")};
    launch_counter<double, 2>(a, UniformGen<double>{}, e, "bernoulli_");
  }
  static void run(KernelArgs& a) {
    if (a.nops == 1)
      return launch_counter<double, 2>(a, UniformGen<double>{},
                                       BernoulliScalarElem<T>{a.f0},
                                       "bernoulli_");
    switch (a.dtypes[1]) {
      case DType::Float16: return run_tensor<Half>(a);
      case DType::BFloat16: return run_tensor<BFloat16>(a);
      case DType::Float32: return run_tensor<float>(a);
      default: return run_tensor<double>(a);
    }
  }
};

}  // namespace

void register_factory_cuda_kernels() {
#define FASTT_KERNELS_factory
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt

// Force-included into every kernels/cuda/*.cu compiled as host C++ by the
// CPU emulation build (tests/cuda_emu): CUDA's keywords, built-in
// variables, barriers, warp shuffles, atomics and intrinsics. Each CUDA
// thread of a block is a fiber (emu_runtime.cpp); the threads of a block
// run in a random order between barriers, blocks one after another.
// transform.py has rewritten launches into ::emu::launch and __shared__
// declarations into ::emu::Shared.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__

using std::isfinite;
using std::isinf;
using std::isnan;

// The running thread's coordinates (one launch at a time, under a lock).
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
constexpr int warpSize = 32;

namespace emu {

struct Config {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  int max_threads;  // __launch_bounds__, 0 if none
  Config bound(int n) const {
    Config c = *this;
    c.max_threads = n;
    return c;
  }
};
inline Config cfg(dim3 grid, dim3 block, size_t smem = 0,
                  cudaStream_t stream = nullptr) {
  return Config{grid, block, smem, stream, 0};
}

// Runs body(ctx) as every thread of every block of the grid.
void run_grid(const Config& c, const char* name, void (*body)(void*),
              void* ctx);

// Whether p is null or points into (or one past) emulated device memory.
bool is_device_ptr(const void* p);
// Records a launch error: kernel `name` got a host pointer as argument k.
void host_pointer_arg(const char* name, int k);

template <class T>
bool arg_ok(const T& v) {
  if constexpr (std::is_pointer<T>::value)
    return is_device_ptr(reinterpret_cast<const void*>(v));
  else
    return true;
}

// FASTT_EMU_NULL_KERNELS=1 (or fastt_emu_set_null_kernels): launches are
// validated and counted but run no threads, CUB calls only answer the
// temp-storage query, so timing shows the host path alone.
extern bool g_null_kernels;
// Counts a launch of kernel `name` (a string literal); in null mode also
// checks its configuration (run_grid does otherwise).
void count_launch(const Config& c, const char* name);

// Stream capture (cuda_runtime.h): true while one runs; defer() records
// op when `stream` is the capturing one (and refuses work on the legacy
// default stream, invalidating the capture) instead of the caller running
// it now. False: run it now.
extern std::atomic<bool> g_capture_active;
bool defer(cudaStream_t stream, std::function<void()> op);

template <class F, class Tup>
void run_launch(const Config& c, const char* name, F& f, Tup& args) {
  auto call = [&]() { std::apply(f, args); };
  using Call = decltype(call);
  run_grid(c, name, [](void* p) { (*static_cast<Call*>(p))(); }, &call);
}

template <class F, class... A>
void launch(const Config& c, const char* name, F&& f, A&&... a) {
  count_launch(c, name);
  if (g_null_kernels) return;  // no pointer check: it is emulator cost
  // Kernel parameters are evaluated once, like a real launch; each thread
  // then gets its own copies (the kernel's by-value parameters).
  std::tuple<std::decay_t<A>...> args(std::forward<A>(a)...);
  // A raw pointer argument into host memory would fault on the GPU.
  int k = 0, bad = -1;
  std::apply([&](const auto&... v) {
    ((bad = (bad < 0 && !arg_ok(v)) ? k : bad, ++k), ...);
  }, args);
  if (bad >= 0) return host_pointer_arg(name, bad);
  if (g_capture_active &&
      defer(c.stream, [c, name, fn = std::decay_t<F>(f), args]() mutable {
        run_launch(c, name, fn, args);
      }))
    return;
  run_launch(c, name, f, args);
}

void syncthreads();
// Warp exchange: this lane publishes `n` bytes of `in` and reads lane
// `src`'s into out (src == own lane: its own value).
void shfl(void* out, const void* in, size_t n, int src);
int lane_id();
// Per-block shared memory: poisoned (0xff bytes: NaN / -1) when a block
// starts, as real shared memory holds garbage.
uint64_t block_generation();
void poison(void* p, size_t n);
void* dynamic_smem();

#if defined(__SANITIZE_ADDRESS__)
// ASan build (FASTT_EMU_ASAN): each __shared__ variable is a heap block of
// exactly sizeof(T) (16-aligned, made on first use, never freed), so an
// overrun lands in ASan's redzone rather than in a neighbour.
void* shared_block(size_t n);
template <class T>
struct Shared {
  unsigned char* buf;
  uint64_t gen;
  T& get() {
    if (!buf) buf = static_cast<unsigned char*>(shared_block(sizeof(T)));
    if (gen != block_generation()) {
      poison(buf, sizeof(T));
      gen = block_generation();
    }
    return *reinterpret_cast<T*>(buf);
  }
};
#else
template <class T>
struct Shared {
  alignas(16) unsigned char buf[sizeof(T)];
  uint64_t gen;
  T& get() {
    if (gen != block_generation()) {
      poison(buf, sizeof(buf));
      gen = block_generation();
    }
    return *reinterpret_cast<T*>(buf);
  }
};
#endif

template <class T>
T shfl_value(T v, int src) {
  static_assert(std::is_trivially_copyable<T>::value, "shfl of a class");
  T r;
  shfl(&r, &v, sizeof(T), src);
  return r;
}

}  // namespace emu

inline void __syncthreads() { emu::syncthreads(); }
inline void __syncwarp(unsigned = 0xffffffffu) {
  int dummy = 0;
  (void)emu::shfl_value(dummy, emu::lane_id());
}
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}

template <class T>
T __shfl_sync(unsigned, T v, int src, int width = 32) {
  const int lane = emu::lane_id();
  return emu::shfl_value(v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
  const int lane = emu::lane_id();
  int src = lane ^ mask;
  if (src >= (lane & ~(width - 1)) + width) src = lane;
  return emu::shfl_value(v, src);
}
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  const int lane = emu::lane_id();
  int src = lane + int(delta);
  if (src >= (lane & ~(width - 1)) + width) src = lane;
  return emu::shfl_value(v, src);
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  const int lane = emu::lane_id();
  int src = lane - int(delta);
  if (src < (lane & ~(width - 1))) src = lane;
  return emu::shfl_value(v, src);
}
inline unsigned __ballot_sync(unsigned, int pred) {
  // Every lane publishes its predicate, then reads all 32 (own included).
  unsigned r = 0;
  for (int l = 0; l < 32; ++l)
    if (emu::shfl_value(pred ? 1 : 0, l)) r |= 1u << l;
  return r;
}
inline int __any_sync(unsigned m, int pred) {
  return __ballot_sync(m, pred) != 0;
}
inline int __all_sync(unsigned m, int pred) {
  return __ballot_sync(m, !pred) == 0;
}

// Atomics: fibers switch only at barriers, so plain read-modify-write is
// atomic here.
template <class T, class U>
T atomicAdd(T* p, U v) {
  const T old = *p;
  *p = T(old + T(v));
  return old;
}
template <class T, class U>
T atomicSub(T* p, U v) {
  const T old = *p;
  *p = T(old - T(v));
  return old;
}
template <class T, class U, class W>
T atomicCAS(T* p, U cmp, W val) {
  const T old = *p;
  if (old == T(cmp)) *p = T(val);
  return old;
}
template <class T, class U>
T atomicExch(T* p, U v) {
  const T old = *p;
  *p = T(v);
  return old;
}
template <class T, class U>
T atomicMax(T* p, U v) {
  const T old = *p;
  if (T(v) > old) *p = T(v);
  return old;
}
template <class T, class U>
T atomicMin(T* p, U v) {
  const T old = *p;
  if (T(v) < old) *p = T(v);
  return old;
}

// Intrinsics: IEEE round-to-nearest arithmetic is the host's; the _rn
// forms are never contracted into an fma (the build uses
// -ffp-contract=off).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline double __fma_rn(double a, double b, double c) {
  return std::fma(a, b, c);
}
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanhf(float x) { return std::tanh(x); }
inline float __saturatef(float x) {
  return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __int_as_float(int v) {
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}
inline int __float_as_int(float v) {
  int i;
  std::memcpy(&i, &v, 4);
  return i;
}
inline float __uint_as_float(unsigned v) {
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}
inline unsigned __float_as_uint(float v) {
  unsigned i;
  std::memcpy(&i, &v, 4);
  return i;
}
inline double __longlong_as_double(long long v) {
  double d;
  std::memcpy(&d, &v, 8);
  return d;
}
inline long long __double_as_longlong(double v) {
  long long i;
  std::memcpy(&i, &v, 8);
  return i;
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v ? __builtin_clz(unsigned(v)) : 32; }
inline int __clzll(long long v) {
  return v ? __builtin_clzll((unsigned long long)v) : 64;
}
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __ffsll(long long v) { return __builtin_ffsll(v); }
template <class T>
T __ldg(const T* p) {
  return *p;
}

// CUDA's global min/max overloads for arithmetic types.
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic<A>::value &&
                                   std::is_arithmetic<B>::value>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic<A>::value &&
                                   std::is_arithmetic<B>::value>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(a) < C(b) ? C(b) : C(a);
}

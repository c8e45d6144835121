// Portability macros shared by host code and CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define FASTT_HD __host__ __device__ __forceinline__
#define FASTT_DEVICE_COMPILE 1
#else
#define FASTT_HD inline
#endif

#if defined(__GNUC__)
#define FASTT_LIKELY(x) __builtin_expect(!!(x), 1)
#define FASTT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FASTT_NOINLINE __attribute__((noinline))
#else
#define FASTT_LIKELY(x) (x)
#define FASTT_UNLIKELY(x) (x)
#define FASTT_NOINLINE
#endif

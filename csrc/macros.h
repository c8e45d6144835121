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
// A body shared by many entry points that must stay as flat as if written
// in each (the elementwise entry points).
#define FASTT_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define FASTT_LIKELY(x) (x)
#define FASTT_UNLIKELY(x) (x)
#define FASTT_NOINLINE
#define FASTT_ALWAYS_INLINE inline
#endif

// Flags the hot path tests (the dispatch hook, capture): hidden, since
// libfastt is always linked statically, so a test is one cmpb on a
// rip-relative address.
#if defined(__GNUC__)
#define FASTT_PROFILER_VIS __attribute__((visibility("hidden")))
#else
#define FASTT_PROFILER_VIS
#endif

// Thread-locals of the hot path (grad mode, the current CUDA device and
// stream) use the initial-exec TLS model: one thread-pointer-relative load,
// no __tls_get_addr call. In a dlopen'ed library such variables come out of
// glibc's small static TLS surplus: keep them few and small
// (tests/python/test_static_tls.py).
#if defined(__GNUC__) && !defined(__CUDACC__)
#define FASTT_TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define FASTT_TLS_IE
#endif

// CUDA error checking that names the op (every runtime call and launch).
#pragma once
#include <cuda_runtime.h>

#include "csrc/errors.h"

namespace fastt {
namespace cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what) {
  if (err == cudaErrorMemoryAllocation)
    throw OutOfMemoryError(
        fmt::format("{}: CUDA out of memory ({})", what, cudaGetErrorString(err)));
  throw RuntimeError(fmt::format("{}: CUDA error: {} ({})", what,
                                 cudaGetErrorString(err),
                                 cudaGetErrorName(err)));
}

#define FASTT_CUDA_CHECK(expr, what)                              \
  do {                                                            \
    cudaError_t _err = (expr);                                    \
    if (FASTT_UNLIKELY(_err != cudaSuccess)) {                    \
      (void)cudaGetLastError();                                   \
      ::fastt::cuda::throw_cuda_error(_err, what);                \
    }                                                             \
  } while (0)

// After a launch: reports launch-configuration errors with the op name.
#define FASTT_CUDA_CHECK_LAUNCH(what) \
  FASTT_CUDA_CHECK(cudaGetLastError(), what)

}  // namespace cuda
}  // namespace fastt

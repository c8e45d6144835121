// Thread count for intra-op parallelism (OpenMP's pool when built with it).
#include "parallel.h"

#include <cblas.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define FASTT_HAVE_MXCSR 1
#endif

#include "errors.h"

namespace fastt {

#if defined(_OPENMP)
int get_num_threads() { return omp_get_max_threads(); }
void set_num_threads(int n) {
  FASTT_CHECK(n >= 1, RuntimeError,
              "set_num_threads expects a positive integer, got {}", n);
  omp_set_num_threads(n);
}
bool in_parallel_region() { return omp_in_parallel(); }
#else
int get_num_threads() { return 1; }
void set_num_threads(int n) {
  FASTT_CHECK(n >= 1, RuntimeError,
              "set_num_threads expects a positive integer, got {}", n);
}
bool in_parallel_region() { return false; }
#endif

#if defined(FASTT_HAVE_MXCSR)
namespace {
constexpr unsigned kFlushDenormal = 0x8040;  // MXCSR FTZ (bit 15), DAZ (6)
void set_mxcsr(bool on) {
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? csr | kFlushDenormal : csr & ~kFlushDenormal);
}
}  // namespace

bool set_flush_denormal(bool on) {
  set_mxcsr(on);
#if defined(_OPENMP)
  // The pool's threads run the parallel kernels: each has its own MXCSR.
#pragma omp parallel num_threads(get_num_threads())
  set_mxcsr(on);
#endif
  return true;
}
#else
bool set_flush_denormal(bool on) { return !on; }
#endif

ParallelInfo parallel_info() {
#if defined(_OPENMP)
  const int omp = _OPENMP;
#else
  const int omp = 0;
#endif
  return {omp, get_num_threads(), openblas_get_config(),
          openblas_get_parallel(), openblas_get_num_threads()};
}

}  // namespace fastt

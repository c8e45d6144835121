// Thread count for intra-op parallelism (OpenMP's pool when built with it).
#include "parallel.h"

#include <cblas.h>

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

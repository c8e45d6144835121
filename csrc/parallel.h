// Intra-op parallelism: OpenMP when built with it, one thread otherwise.
// Work below `grain` elements never leaves the calling thread.
#pragma once
#include <algorithm>
#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace fastt {

int get_num_threads();
void set_num_threads(int n);  // n >= 1
bool in_parallel_region();
// Float denormals read and written as zero (torch.set_flush_denormal): on
// the calling thread and the threads of the pool as it is now. False
// where the CPU has no such mode.
bool set_flush_denormal(bool on);

// What runs fastt's threads, for fastt.__config__.parallel_info(): the
// OpenMP version (0 without OpenMP) and the BLAS's build and threading
// (OpenBLAS's openblas_get_parallel: 0 sequential, 1 its own pthread
// pool, 2 OpenMP, i.e. fastt's pool).
struct ParallelInfo {
  int openmp_version;
  int num_threads;
  const char* blas_config;
  int blas_parallel;
  int blas_num_threads;
};
ParallelInfo parallel_info();

template <class F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& f) {
  if (end <= begin) return;
#if defined(_OPENMP)
  int64_t n = end - begin;
  if (n > grain && !in_parallel_region()) {
    int nthreads = int(std::min<int64_t>(get_num_threads(),
                                         (n + grain - 1) / grain));
    if (nthreads > 1) {
#pragma omp parallel num_threads(nthreads)
      {
        int tid = omp_get_thread_num();
        int nt = omp_get_num_threads();
        int64_t chunk = (n + nt - 1) / nt;
        int64_t b = begin + tid * chunk;
        int64_t e = std::min(end, b + chunk);
        if (b < e) f(b, e);
      }
      return;
    }
  }
#endif
  f(begin, end);
}

}  // namespace fastt

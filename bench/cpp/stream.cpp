// This machine's memory bandwidth, STREAM's way (issue 16, item 7): copy,
// scale, add, triad and a read-only sum over float32 arrays far larger
// than the caches, on 1 thread and on N (OpenMP, static split so each
// thread touches the pages it first wrote). Bytes counted as STREAM does:
// each array element read or written once (no write-allocate traffic).
// Prints one JSON object: {"n": ..., "threads": {"1": {"copy": GB/s, ...},
// "N": {...}}}; the best of `reps` runs each.
//   fastt_stream [n_floats (1<<24)] [reps (10)]
// Built by bench/bandwidth.py (python -m bench.bandwidth) when missing.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Result {
  double copy, scale, add, triad, read;
};

Result run(float* a, float* b, float* c, long n, int reps, int threads) {
  omp_set_num_threads(threads);
  const float s = 3.0f;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) a[i] = 1.0f, b[i] = 2.0f, c[i] = 0.0f;
  double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
  volatile float sink = 0;
  for (int r = 0; r < reps; ++r) {
    double t = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) c[i] = a[i];
    best[0] = std::min(best[0], now() - t);
    t = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) b[i] = s * c[i];
    best[1] = std::min(best[1], now() - t);
    t = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) c[i] = a[i] + b[i];
    best[2] = std::min(best[2], now() - t);
    t = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    best[3] = std::min(best[3], now() - t);
    t = now();
    float total = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : total)
    for (long i = 0; i < n; ++i) total += a[i];
    best[4] = std::min(best[4], now() - t);
    sink = sink + total;
  }
  const double f = double(n) * sizeof(float) / 1e9;
  return {2 * f / best[0], 2 * f / best[1], 3 * f / best[2], 3 * f / best[3],
          f / best[4]};
}

void print(const char* key, const Result& r, bool last) {
  std::printf("\"%s\": {\"copy\": %.2f, \"scale\": %.2f, \"add\": %.2f, "
              "\"triad\": %.2f, \"read\": %.2f}%s",
              key, r.copy, r.scale, r.add, r.triad, r.read, last ? "" : ", ");
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1L << 24;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const int cores = omp_get_max_threads();
  auto alloc = [n] {
    return std::unique_ptr<float, decltype(&std::free)>(
        static_cast<float*>(std::aligned_alloc(64, size_t(n) * 4 + 64)),
        &std::free);
  };
  auto a = alloc(), b = alloc(), c = alloc();
  if (!a || !b || !c) {
    std::fprintf(stderr, "fastt_stream: cannot allocate 3 x %ld floats\n", n);
    return 1;
  }
  const Result one = run(a.get(), b.get(), c.get(), n, reps, 1);
  const Result all = run(a.get(), b.get(), c.get(), n, reps, cores);
  std::printf("{\"n\": %ld, \"cores\": %d, \"threads\": {", n, cores);
  print("1", one, false);
  print(std::to_string(cores).c_str(), all, true);
  std::printf("}}\n");
  return 0;
}

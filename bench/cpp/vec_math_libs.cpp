// SLEEF against Google Highway's vectorized math (hwy/contrib/math), the
// two libraries issue 16 names for fastt's vector math, on the functions
// both have: float32, one instruction set per build, an L1-resident range
// (compute-bound), ns per element, medians of interleaved repeats. Not part
// of the build (Highway is not a fastt dependency); the README gives the
// commands, one per instruction set:
//   g++ -O2 -std=c++17 -march=x86-64-v4 bench/cpp/vec_math_libs.cpp -lsleef
//   g++ -O2 -std=c++17 -march=x86-64-v3 bench/cpp/vec_math_libs.cpp -lsleef
// (needs libsleef-dev and libhwy-dev).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
#include <sleef.h>

namespace hn = hwy::HWY_NAMESPACE;

#if defined(__AVX512F__)
#define ISA "avx512"
#define W 16
using VF = __m512;
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
#define SL(f) Sleef_##f##f16_u10avx512f
#elif defined(__AVX2__)
#define ISA "avx2"
#define W 8
using VF = __m256;
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
#define SL(f) Sleef_##f##f8_u10avx2
#else
#error "build with -march=x86-64-v3 or -v4"
#endif

template <auto Fn>
void sleef_range(const float* x, float* o, size_t n) {
  for (size_t i = 0; i + W <= n; i += W) STORE(o + i, Fn(LOAD(x + i)));
}

#define HWY_RANGE(Name)                                       \
  void hwy_##Name(const float* x, float* o, size_t n) {       \
    const hn::ScalableTag<float> d;                           \
    const size_t L = hn::Lanes(d);                            \
    for (size_t i = 0; i + L <= n; i += L)                    \
      hn::StoreU(hn::Name(d, hn::LoadU(d, x + i)), d, o + i); \
  }
HWY_RANGE(Exp)
HWY_RANGE(Log)
HWY_RANGE(Sin)
HWY_RANGE(Tanh)
HWY_RANGE(Atan)
HWY_RANGE(Log1p)

using Range = void (*)(const float*, float*, size_t);

double ns_per_elem(Range f, const std::vector<float>& x,
                   std::vector<float>& o) {
  const int reps = 200;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) f(x.data(), o.data(), x.size());
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() /
         (double(reps) * double(x.size()));
}

int main() {
  const size_t n = 4096;  // 16 KiB in, 16 KiB out: L1-resident
  std::mt19937 g(1);
  struct Case {
    const char* name;
    float lo, hi;
    Range sleef, hwy;
  } cases[] = {
      {"exp", -80, 80, sleef_range<SL(exp)>, hwy_Exp},
      {"log", 1e-3f, 1e3f, sleef_range<SL(log)>, hwy_Log},
      {"sin", -100, 100, sleef_range<SL(sin)>, hwy_Sin},
      {"tanh", -8, 8, sleef_range<SL(tanh)>, hwy_Tanh},
      {"atan", -100, 100, sleef_range<SL(atan)>, hwy_Atan},
      {"log1p", 0, 100, sleef_range<SL(log1p)>, hwy_Log1p},
  };
  std::printf("%-6s %-6s %10s %10s %8s\n", "isa", "fn", "sleef ns", "hwy ns",
              "hwy/sleef");
  for (const Case& c : cases) {
    std::uniform_real_distribution<float> u(c.lo, c.hi);
    std::vector<float> x(n), o(n);
    for (float& v : x) v = u(g);
    std::vector<double> a, b;
    for (int round = 0; round < 15; ++round) {  // interleaved repeats
      a.push_back(ns_per_elem(c.sleef, x, o));
      b.push_back(ns_per_elem(c.hwy, x, o));
    }
    std::nth_element(a.begin(), a.begin() + 7, a.end());
    std::nth_element(b.begin(), b.begin() + 7, b.end());
    std::printf("%-6s %-6s %10.3f %10.3f %8.2f\n", ISA, c.name, a[7], b[7],
                b[7] / a[7]);
  }
}

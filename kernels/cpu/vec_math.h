// Vectorized float32/float64 math over dense ranges, through SLEEF's vector
// functions (the rows of kernels/cpu/vec_math.def). The range functions
// are built once per instruction set (kernels/cpu/isa/vec_math.cpp,
// compiled for SSE2, AVX2+FMA and AVX-512) and one table of them is picked
// when fastt loads: the level of kernels/cpu/cpu_isa.h (the best the CPU
// has, or a lower one FASTT_CPU_ISA names, for tests and benchmarks).
// This header is also included by the per-ISA files: declarations only.
#pragma once
#include <cstdint>

namespace fastt {
namespace vec_math {

enum Unary : int {
#define FASTT_VM1(functor, ...) k##functor,
#define FASTT_VM2(functor, sleef, ulp)
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2
  kUnaryCount
};
enum Binary : int {
#define FASTT_VM1(functor, ...)
#define FASTT_VM2(functor, sleef, ulp) k##functor,
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2
  kBinaryCount
};

template <class T>
using Range1 = void (*)(const T* x, T* out, int64_t n);
template <class T>
using Range2 = void (*)(const T* a, const T* b, T* out, int64_t n);

// One instruction set's range functions, every row and type.
struct Table {
  const char* isa;  // "sse2", "avx2", "avx512"
  Range1<float> f1[kUnaryCount];
  Range1<double> d1[kUnaryCount];
  Range2<float> f2[kBinaryCount];
  Range2<double> d2[kBinaryCount];
};

// The table in use; nullptr where fastt was built without SLEEF (the
// kernels then run their scalar loops).
extern const Table* const g_table;

}  // namespace vec_math
}  // namespace fastt

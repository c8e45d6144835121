// FASTT_VEC_CLONES: AVX2+FMA and AVX-512 clones of a row kernel, one picked
// at load time. Apart from vec_exp.h so that files which only want the
// clones (linalg.cpp's conversions) do not take vec_exp.h's FP pragma:
// functions compiled under other optimize options do not inline into each
// other.
#pragma once

// The build targets baseline x86-64 (SSE2). Row kernels marked
// FASTT_VEC_CLONES also get AVX2+FMA and AVX-512 clones, one picked at load
// time (ifunc): measured on an EPYC, an exp loop runs about 3x faster 8-wide
// than 4-wide and another 1.5-2x faster 16-wide.
// Mark functions that take a whole range of rows, so the indirect call is
// paid once per range, and keep the loops they inline in their body.
// Not under TSan: the dynamic loader runs ifunc resolvers before the TSan
// runtime is initialised, and an instrumented resolver crashes at load.
// Files compiled once per level (FASTT_ISA_LEVEL_BUILD, CMakeLists.txt)
// need no clones: the level's copy is the clone, picked with the rest.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    !defined(__clang__) && !defined(__AVX2__) &&                        \
    !defined(__SANITIZE_THREAD__) && !defined(FASTT_ISA_LEVEL_BUILD)
#define FASTT_VEC_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                               "default")))
#else
#define FASTT_VEC_CLONES
#endif

// The scalar helpers that row loops must inline to vectorize (vec_exp.h):
// in the big kernel files GCC's unit-growth limit otherwise leaves them as
// calls once a file's budget is spent (exp ran 4x slower than torch).
#if defined(__GNUC__)
#define FASTT_VEC_INLINE inline __attribute__((always_inline))
#else
#define FASTT_VEC_INLINE inline
#endif

namespace fastt {
namespace cpu {
// The native vector width of this translation unit's instruction set, in
// bytes: the files compiled once per level (FASTT_ISA_LEVEL_BUILD) see
// their level's; the baseline build SSE2's 16 (and 16 off x86: NEON).
// The one ladder over the ISA macros: the row folds' vector types
// (reduce_spans.h) and the streaming stores' block (loop.h) derive from it.
#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif
}  // namespace cpu
}  // namespace fastt

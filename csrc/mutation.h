// Planted bugs for the mutation check (tests/mutation, scripts/mutation.sh):
// a test of the tests. A mutant is a one-line bug at a named point, e.g.
//   return FASTT_MUTANT(SubFlipSign) ? a + b : a - b;
// In a normal build FASTT_MUTANT(Name) is the constant false (the planted
// branch is dead code the compiler drops; the name is still checked against
// the list below). Only a build configured with -DFASTT_MUTANTS=ON
// (build-mut) makes it live: true at the one point named by the environment
// variable FASTT_MUTANT, read once. To add a mutant: a row here, a hook at
// its point, nothing else (the runner reads this list). Hooks go in .cpp
// files, never in headers: then only the files that include this header
// differ in the mutant build and the rest come from ccache (the runner
// enforces it).
#pragma once
#include "csrc/macros.h"

// X(name, category, where): the runner parses these rows.
#define FASTT_MUTANT_LIST(X)                                                  \
  X(SubFlipSign, sign, "kernels/cpu/binary.cpp SubK: a + alpha*b")          \
  X(BroadcastShapeDrop, broadcast, "csrc/tensor.cpp broadcast_shapes")       \
  X(ScalarFloatKeepsInt, dtype, "csrc/tensor.cpp combine (result_type)")     \
  X(UnarySkipLast, skip_last, "kernels/cpu/unary.cpp dense unary kernels")   \
  X(SumSkipLast, skip_last, "kernels/cpu/reduce.cpp dense float32 sum")      \
  X(VecMathSkipLast, skip_last, "kernels/cpu/unary.cpp SLEEF vector math")   \
  X(IndexNegWrapOffByOne, off_by_one,                                        \
    "kernels/cpu/index.cpp index_select_direct")                             \
  X(IndexRangeOffByOne, off_by_one, "csrc/ops/index.cpp check_index_range")  \
  X(MulGradSwap, gradient, "autograd/formulas_elementwise.cpp Mul: dA = g*a")\
  X(GradMeetOverwrite, gradient, "autograd/engine.cpp accumulate_into")      \
  X(KeepdimFullDrop, shape, "csrc/ops/reduce.cpp resolve_dims")              \
  X(InplaceNoVersionBump, inplace, "csrc/ops/elementwise.cpp elementwise")   \
  X(SliceStepIgnored, view, "csrc/tensor.cpp Tensor::slice stride")          \
  X(SoftmaxNoMaxShift, numerics, "kernels/cpu/softmax.cpp row: no max shift")\
  X(FlashNoRescale, numerics,                                                \
    "kernels/cpu/attention.cpp online softmax: no rescale")

namespace fastt {
namespace mutation {

enum class Id : int {
  None = 0,
#define FASTT_MUTANT_ENUM(name, category, where) name,
  FASTT_MUTANT_LIST(FASTT_MUTANT_ENUM)
#undef FASTT_MUTANT_ENUM
};

// Normal builds: a constant false that still type-checks the name.
FASTT_HD constexpr bool never(Id) { return false; }

}  // namespace mutation
}  // namespace fastt

#if defined(FASTT_MUTANTS) && !defined(__CUDA_ARCH__)
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fastt {
namespace mutation {

// The mutant FASTT_MUTANT names (Id::None when unset or empty); an unknown
// name aborts, so a typo in the runner cannot pass as "caught".
inline Id parse_env() {
  const char* v = std::getenv("FASTT_MUTANT");
  if (!v || !*v) return Id::None;
#define FASTT_MUTANT_MATCH(name, category, where) \
  if (std::strcmp(v, #name) == 0) return Id::name;
  FASTT_MUTANT_LIST(FASTT_MUTANT_MATCH)
#undef FASTT_MUTANT_MATCH
  std::fprintf(stderr, "fastt: FASTT_MUTANT=%s names no mutant\n", v);
  std::abort();
}

inline Id active() {
  static const Id id = parse_env();
  return id;
}

}  // namespace mutation
}  // namespace fastt

#define FASTT_MUTANT(Name) \
  (::fastt::mutation::active() == ::fastt::mutation::Id::Name)
#else
#define FASTT_MUTANT(Name) \
  (::fastt::mutation::never(::fastt::mutation::Id::Name))
#endif

// Binary elementwise kernels: the binary rows of csrc/ops/elementwise.def
// expanded through BinaryAdapter, plus add/sub (alpha). The op layer has already promoted both inputs
// to the compute dtype (the table's dtype column); comparisons and logical
// ops write bool.
#include "csrc/mutation.h"
#include "kernels/cpu/loop.h"
#include "kernels/cpu/vec_activation.h"
#include "kernels/functors.h"

namespace fastt {
namespace {
using namespace cpu;
namespace F = functors;

template <class Fn> struct VecBackward { static constexpr bool kHas = false; };
template <> struct VecBackward<F::GeluBackward> {
  static constexpr bool kHas = true;
  static constexpr BackwardKind kKind = BackwardKind::Gelu;
};
template <> struct VecBackward<F::GeluTanhBackward> {
  static constexpr bool kHas = true;
  static constexpr BackwardKind kKind = BackwardKind::GeluTanh;
};
template <> struct VecBackward<F::SiluBackward> {
  static constexpr bool kHas = true;
  static constexpr BackwardKind kKind = BackwardKind::Silu;
};

// The CPU loop policy for the binary rows of csrc/ops/elementwise.def.
template <Op kOp, class Fn, bool kBoolOut>
struct BinaryAdapter {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      if constexpr (VecBackward<Fn>::kHas && std::is_same<T, float>::value) {
        if (a.contiguous) {
          float* o = reinterpret_cast<float*>(a.data[0]);
          const float* g = reinterpret_cast<const float*>(a.data[1]);
          const float* x = reinterpret_cast<const float*>(a.data[2]);
          parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
            backward_range(VecBackward<Fn>::kKind, g + b, x + b, o + b,
                           e - b);
          });
          return;
        }
      }
      binary_loop<std::conditional_t<kBoolOut, bool, T>, T>(
          a, F::functor_for<Fn, T>{});
    }
  };
};
// add/sub carry alpha (f0 for floats, i0 for integers); alpha == 1 takes
// the plain functor so the common case has no extra multiply.
template <class T>
struct AddK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    if (std::is_floating_point<M>::value ? a.f0 == 1.0 : a.i0 == 1)
      return binary_loop<T, T>(a, F::Add{});
    M alpha = std::is_floating_point<M>::value ? M(a.f0) : M(a.i0);
    binary_loop<T, T>(a, F::AddAlpha<M>{alpha});
  }
};
template <class T>
struct SubK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    M alpha = std::is_floating_point<M>::value ? M(a.f0) : M(a.i0);
    if (FASTT_MUTANT(SubFlipSign)) alpha = M(0) - alpha;
    binary_loop<T, T>(a, F::SubAlpha<M>{alpha});
  }
};

}  // namespace

void register_binary_kernels() {
#define FASTT_EW FASTT_EW_REGISTER_BINARY
#define FASTT_EW_PICK_Same(...) __VA_ARGS__
#define FASTT_EW_PICK_Float(...) __VA_ARGS__
#define FASTT_EW_PICK_Bool(...) __VA_ARGS__
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
}

}  // namespace fastt

// Binary elementwise kernels: the binary rows of csrc/ops/elementwise.def
// expanded through BinaryAdapter, plus add/sub (alpha). The op layer has already promoted both inputs
// to the compute dtype (the table's dtype column); comparisons and logical
// ops write bool.
#include "csrc/mutation.h"
#include "kernels/cpu/loop.h"
#include "kernels/cpu/vec_activation.h"
#include "kernels/cpu/vec_math_call.h"
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

// Functors with a SLEEF vector function (kernels/cpu/vec_math.def).
template <class Fn> struct VecMath2Of { static constexpr int kIdx = -1; };
#define FASTT_VM1(functor, ...)
#define FASTT_VM2(functor, name, ulp)                  \
  template <> struct VecMath2Of<F::functor> {          \
    static constexpr int kIdx = vec_math::k##functor; \
  };
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2

// A one-dim loop whose inputs are each dense or one broadcast value (x ** y,
// x ** 2.5, atan2(y, x)) through the vector math table
// (kernels/cpu/vec_math_call.h stages half types and broadcast values).
template <class T>
bool vec_math2(int idx, const KernelArgs& a) {
  constexpr int64_t z = sizeof(T);
  if (!vec_math::g_table || a.ndim != 1 || a.strides[0][0] != z) return false;
  const int64_t sa = a.strides[1][0], sb = a.strides[2][0];
  if ((sa != z && sa != 0) || (sb != z && sb != 0)) return false;
  T* o = reinterpret_cast<T*>(a.data[0]);
  const T* x = reinterpret_cast<const T*>(a.data[1]);
  const T* y = reinterpret_cast<const T*>(a.data[2]);
  parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
    vec_math::binary_range(idx, sa ? x + b : x, sa == 0, sb ? y + b : y,
                           sb == 0, o + b, e - b);
  });
  return true;
}

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
      if constexpr (VecMath2Of<Fn>::kIdx >= 0 && !kBoolOut &&
                    std::is_floating_point<opmath_t<T>>::value) {
        if (vec_math2<T>(VecMath2Of<Fn>::kIdx, a)) return;
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
    if (F::alpha_is_one<M>(a.f0, a.f1, a.i0))
      return binary_loop<T, T>(a, F::Add{});
    binary_loop<T, T>(a, F::AddAlpha<M>{F::alpha_of<M>(a.f0, a.f1, a.i0)});
  }
};
template <class T>
struct SubK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    M alpha = F::alpha_of<M>(a.f0, a.f1, a.i0);
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

// CUDA binary elementwise kernels: the CPU's binary.cpp registrations, same
// dtypes, same functors. The op layer has already promoted both inputs to
// the compute dtype (the table's dtype column). Comparisons and logical ops
// (bool results) live in compare.cu, to keep each file's compile short.
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"

namespace fastt {
namespace cuda {
namespace {
namespace F = functors;

// The op name rides as a template argument so a launch error names it.
template <Op kOp, class Fn>
struct Same {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      launch_elementwise<T, T, T>(a, Fn{}, op_name(kOp));
    }
  };
};
// add/sub carry alpha (f0 for floats, i0 for integers), as on the CPU;
// add with alpha == 1 takes the plain functor (no extra multiply, and
// bool add stays a logical or).
template <class T>
struct AddK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    constexpr bool kFloat = std::is_floating_point<M>::value;
    if (kFloat ? a.f0 == 1.0 : a.i0 == 1)
      return launch_elementwise<T, T, T>(a, F::Add{}, "add");
    const M alpha = kFloat ? M(a.f0) : M(a.i0);
    launch_elementwise<T, T, T>(a, F::AddAlpha<M>{alpha}, "add");
  }
};
template <class T>
struct SubK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M alpha = std::is_floating_point<M>::value ? M(a.f0) : M(a.i0);
    launch_elementwise<T, T, T>(a, F::SubAlpha<M>{alpha}, "sub");
  }
};

#define FASTT_SAME(op, Fn, types) \
  register_only<Same<Op::op, F::Fn>::K>(Op::op, types{})

}  // namespace

void register_binary_cuda_kernels() {
  register_only<AddK>(Op::add, AllTypes{});
  register_only<SubK>(Op::sub, NumericTypes{});
  FASTT_SAME(mul, Mul, AllTypes);
  FASTT_SAME(div, Div, FloatTypes);
  FASTT_SAME(div_floor, DivFloor, NumericTypes);
  FASTT_SAME(div_trunc, DivTrunc, NumericTypes);
  FASTT_SAME(pow, Pow, AllTypes);
  FASTT_SAME(remainder, Remainder, NumericTypes);
  FASTT_SAME(fmod, Fmod, NumericTypes);
  FASTT_SAME(maximum, Maximum, AllTypes);
  FASTT_SAME(minimum, Minimum, AllTypes);
  FASTT_SAME(atan2, Atan2, FloatTypes);
  FASTT_SAME(relu_backward, ReluBackward, FloatTypes);
  FASTT_SAME(sigmoid_backward, SigmoidBackward, FloatTypes);
  FASTT_SAME(tanh_backward, TanhBackward, FloatTypes);
  FASTT_SAME(silu_backward, SiluBackward, FloatTypes);
  FASTT_SAME(gelu_backward, GeluBackward, FloatTypes);
  FASTT_SAME(gelu_tanh_backward, GeluTanhBackward, FloatTypes);
  FASTT_SAME(bitwise_and, BitwiseAnd, IntBoolTypes);
  FASTT_SAME(bitwise_or, BitwiseOr, IntBoolTypes);
  FASTT_SAME(bitwise_xor, BitwiseXor, IntBoolTypes);
}
#undef FASTT_SAME

}  // namespace cuda
}  // namespace fastt

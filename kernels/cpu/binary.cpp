// Binary elementwise kernels. The op layer has already promoted both inputs
// to the compute dtype (the table's dtype column); comparisons and logical
// ops write bool.
#include "csrc/mutation.h"
#include "kernels/cpu/loop.h"
#include "kernels/functors.h"

namespace fastt {
namespace {
using namespace cpu;
namespace F = functors;

template <class Fn>
struct Same {
  template <class T>
  struct K {
    static void run(KernelArgs& a) { binary_loop<T, T>(a, Fn{}); }
  };
};
template <class Fn>
struct ToBool {
  template <class T>
  struct K {
    static void run(KernelArgs& a) { binary_loop<bool, T>(a, Fn{}); }
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
  register_only<AddK>(Op::add, AllTypes{});
  register_only<SubK>(Op::sub, NumericTypes{});
  register_only<Same<F::Mul>::K>(Op::mul, AllTypes{});
  register_only<Same<F::Div>::K>(Op::div, FloatTypes{});
  register_only<Same<F::DivFloor>::K>(Op::div_floor, NumericTypes{});
  register_only<Same<F::DivTrunc>::K>(Op::div_trunc, NumericTypes{});
  register_only<Same<F::Pow>::K>(Op::pow, AllTypes{});
  register_only<Same<F::Remainder>::K>(Op::remainder, NumericTypes{});
  register_only<Same<F::Fmod>::K>(Op::fmod, NumericTypes{});
  register_only<Same<F::Maximum>::K>(Op::maximum, AllTypes{});
  register_only<Same<F::Minimum>::K>(Op::minimum, AllTypes{});
  register_only<Same<F::Atan2>::K>(Op::atan2, FloatTypes{});
  register_only<Same<F::ReluBackward>::K>(Op::relu_backward, FloatTypes{});
  register_only<Same<F::SigmoidBackward>::K>(Op::sigmoid_backward,
                                             FloatTypes{});
  register_only<Same<F::TanhBackward>::K>(Op::tanh_backward, FloatTypes{});
  register_only<Same<F::SiluBackward>::K>(Op::silu_backward, FloatTypes{});
  register_only<Same<F::GeluBackward>::K>(Op::gelu_backward, FloatTypes{});
  register_only<Same<F::GeluTanhBackward>::K>(Op::gelu_tanh_backward,
                                              FloatTypes{});
  register_only<ToBool<F::Eq>::K>(Op::eq, AllTypes{});
  register_only<ToBool<F::Ne>::K>(Op::ne, AllTypes{});
  register_only<ToBool<F::Lt>::K>(Op::lt, AllTypes{});
  register_only<ToBool<F::Le>::K>(Op::le, AllTypes{});
  register_only<ToBool<F::Gt>::K>(Op::gt, AllTypes{});
  register_only<ToBool<F::Ge>::K>(Op::ge, AllTypes{});
  register_only<ToBool<F::LogicalAnd>::K>(Op::logical_and, AllTypes{});
  register_only<ToBool<F::LogicalOr>::K>(Op::logical_or, AllTypes{});
  register_only<ToBool<F::LogicalXor>::K>(Op::logical_xor, AllTypes{});
  register_only<Same<F::BitwiseAnd>::K>(Op::bitwise_and, IntBoolTypes{});
  register_only<Same<F::BitwiseOr>::K>(Op::bitwise_or, IntBoolTypes{});
  register_only<Same<F::BitwiseXor>::K>(Op::bitwise_xor, IntBoolTypes{});
}

}  // namespace fastt

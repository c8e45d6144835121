// Unary elementwise kernels: one registration line per op, math in
// kernels/functors.h. Float-only ops see integer inputs already promoted
// by the op layer (csrc/ops/elementwise.cpp).
#include "kernels/cpu/vec_exp.h"  // first: it sets the file's FP options

#include "csrc/mutation.h"
#include "kernels/cpu/loop.h"
#include "kernels/functors.h"

namespace fastt {
namespace {
using namespace cpu;
namespace F = functors;

// float32 exp, sigmoid and silu over dense ranges: std::exp is an opaque
// libm call that keeps the loop scalar; vec_exp is plain arithmetic, so the
// loop vectorizes (AVX2/AVX-512 clones picked at load time). About 1 ulp.
enum class ExpKind { Exp, Sigmoid, Silu };
template <ExpKind K>
FASTT_VEC_CLONES void exp_range(const float* x, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if constexpr (K == ExpKind::Exp) {
      o[i] = vec_exp(v);
    } else if constexpr (K == ExpKind::Sigmoid) {
      o[i] = 1.0f / (1.0f + vec_exp(-v));
    } else {
      o[i] = v / (1.0f + vec_exp(-v));
    }
  }
}
template <ExpKind K, class Fn>
struct ExpLike {
  template <class T>
  struct K_ {
    static void run(KernelArgs& a) {
      if constexpr (std::is_same<T, float>::value) {
        if (a.contiguous) {
          float* o = reinterpret_cast<float*>(a.data[0]);
          const float* x = reinterpret_cast<const float*>(a.data[1]);
          parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
            exp_range<K>(x + b, o + b, e - b);
          });
          return;
        }
      }
      unary_loop<T, T>(a, Fn{});
    }
  };
};

template <class Fn>
struct Same {  // out dtype == in dtype
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      if (FASTT_MUTANT(UnarySkipLast) && a.contiguous) --a.numel;
      unary_loop<T, T>(a, Fn{});
    }
  };
};
template <class Fn>
struct ToBool {
  template <class T>
  struct K {
    static void run(KernelArgs& a) { unary_loop<bool, T>(a, Fn{}); }
  };
};
template <class T>
struct LeakyReluK {
  static void run(KernelArgs& a) {
    unary_loop<T, T>(a, F::LeakyRelu{a.f0});
  }
};

}  // namespace

void register_unary_kernels() {
  register_only<Same<F::Neg>::K>(Op::neg, NumericTypes{});  // uint8 wraps
  register_only<Same<F::Abs>::K>(Op::abs, NumericTypes{});
  register_only<ExpLike<ExpKind::Exp, F::Exp>::K_>(Op::exp, FloatTypes{});
  register_only<Same<F::Expm1>::K>(Op::expm1, FloatTypes{});
  register_only<Same<F::Log>::K>(Op::log, FloatTypes{});
  register_only<Same<F::Log1p>::K>(Op::log1p, FloatTypes{});
  register_only<Same<F::Log2>::K>(Op::log2, FloatTypes{});
  register_only<Same<F::Sqrt>::K>(Op::sqrt, FloatTypes{});
  register_only<Same<F::Rsqrt>::K>(Op::rsqrt, FloatTypes{});
  register_only<Same<F::Sin>::K>(Op::sin, FloatTypes{});
  register_only<Same<F::Cos>::K>(Op::cos, FloatTypes{});
  register_only<Same<F::Tanh>::K>(Op::tanh, FloatTypes{});
  register_only<ExpLike<ExpKind::Sigmoid, F::Sigmoid>::K_>(Op::sigmoid,
                                                           FloatTypes{});
  register_only<Same<F::Relu>::K>(Op::relu, NumericTypes{});
  register_only<LeakyReluK>(Op::leaky_relu, FloatTypes{});
  register_only<Same<F::Gelu>::K>(Op::gelu, FloatTypes{});
  register_only<Same<F::GeluTanh>::K>(Op::gelu_tanh, FloatTypes{});
  register_only<ExpLike<ExpKind::Silu, F::Silu>::K_>(Op::silu, FloatTypes{});
  register_only<Same<F::Erf>::K>(Op::erf, FloatTypes{});
  register_only<Same<F::Sign>::K>(Op::sign, AllTypes{});
  register_only<Same<F::Floor>::K>(Op::floor, NumericTypes{});
  register_only<Same<F::Ceil>::K>(Op::ceil, NumericTypes{});
  register_only<Same<F::Round>::K>(Op::round, NumericTypes{});
  register_only<Same<F::Trunc>::K>(Op::trunc, NumericTypes{});
  register_only<Same<F::Reciprocal>::K>(Op::reciprocal, FloatTypes{});
  register_only<Same<F::Square>::K>(Op::square, NumericTypes{});
  register_only<ToBool<F::LogicalNot>::K>(Op::logical_not, AllTypes{});
  register_only<Same<F::BitwiseNot>::K>(Op::bitwise_not, IntBoolTypes{});
}

}  // namespace fastt

// CUDA unary elementwise kernels: the CPU's unary.cpp registrations, same
// dtypes, same functors (kernels/functors.h); float-only ops see integer
// inputs already promoted by the op layer (csrc/ops/elementwise.cpp).
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"

namespace fastt {
namespace cuda {
namespace {
namespace F = functors;

// The op name rides as a template argument so a launch error names it.
template <Op kOp, class Fn>
struct Same {  // out dtype == in dtype
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      launch_elementwise<T, T>(a, Fn{}, op_name(kOp));
    }
  };
};
template <Op kOp, class Fn>
struct ToBool {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      launch_elementwise<bool, T>(a, Fn{}, op_name(kOp));
    }
  };
};
template <class T>
struct LeakyReluK {
  static void run(KernelArgs& a) {
    launch_elementwise<T, T>(a, F::LeakyRelu{a.f0}, "leaky_relu");
  }
};

#define FASTT_SAME(op, Fn, types) \
  register_only<Same<Op::op, F::Fn>::K>(Op::op, types{})

}  // namespace

void register_unary_cuda_kernels() {
  FASTT_SAME(neg, Neg, NumericTypes);  // uint8 wraps
  FASTT_SAME(abs, Abs, NumericTypes);
  FASTT_SAME(exp, Exp, FloatTypes);
  FASTT_SAME(expm1, Expm1, FloatTypes);
  FASTT_SAME(log, Log, FloatTypes);
  FASTT_SAME(log1p, Log1p, FloatTypes);
  FASTT_SAME(log2, Log2, FloatTypes);
  FASTT_SAME(sqrt, Sqrt, FloatTypes);
  FASTT_SAME(rsqrt, Rsqrt, FloatTypes);
  FASTT_SAME(sin, Sin, FloatTypes);
  FASTT_SAME(cos, Cos, FloatTypes);
  FASTT_SAME(tanh, Tanh, FloatTypes);
  FASTT_SAME(sigmoid, Sigmoid, FloatTypes);
  FASTT_SAME(relu, Relu, NumericTypes);
  register_only<LeakyReluK>(Op::leaky_relu, FloatTypes{});
  FASTT_SAME(gelu, Gelu, FloatTypes);
  FASTT_SAME(gelu_tanh, GeluTanh, FloatTypes);
  FASTT_SAME(silu, Silu, FloatTypes);
  FASTT_SAME(erf, Erf, FloatTypes);
  FASTT_SAME(sign, Sign, AllTypes);
  FASTT_SAME(floor, Floor, NumericTypes);
  FASTT_SAME(ceil, Ceil, NumericTypes);
  FASTT_SAME(round, Round, NumericTypes);
  FASTT_SAME(trunc, Trunc, NumericTypes);
  FASTT_SAME(reciprocal, Reciprocal, FloatTypes);
  FASTT_SAME(square, Square, NumericTypes);
  register_only<ToBool<Op::logical_not, F::LogicalNot>::K>(Op::logical_not,
                                                           AllTypes{});
  FASTT_SAME(bitwise_not, BitwiseNot, IntBoolTypes);
}
#undef FASTT_SAME

}  // namespace cuda
}  // namespace fastt

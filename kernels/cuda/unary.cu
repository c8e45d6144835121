// CUDA unary elementwise kernels: the unary rows of csrc/ops/elementwise.def
// (the CPU's list) expanded through this file's loop policy, same functors
// (kernels/functors.h); float-only ops see integer inputs already promoted
// by the op layer (csrc/ops/elementwise.cpp).
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"

namespace fastt {
namespace cuda {
namespace {
namespace F = functors;

// The op name rides as a template argument so a launch error names it.
template <Op kOp, class Fn, bool kBoolOut>
struct UnaryAdapter {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      launch_elementwise<std::conditional_t<kBoolOut, bool, T>, T>(
          a, Fn{}, op_name(kOp));
    }
  };
};
template <class T>
struct LeakyReluK {
  static void run(KernelArgs& a) {
    launch_elementwise<T, T>(a, F::LeakyRelu{a.f0}, "leaky_relu");
  }
};

}  // namespace

void register_unary_cuda_kernels() {
#define FASTT_EW FASTT_EW_REGISTER_UNARY
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
}

}  // namespace cuda
}  // namespace fastt

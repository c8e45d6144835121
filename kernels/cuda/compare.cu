// CUDA comparison and logical binary kernels (bool results): the CPU's
// binary.cpp rows eq..logical_xor, split from binary.cu for compile time.
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"

namespace fastt {
namespace cuda {
namespace {
namespace F = functors;

// Inputs in the promoted compute dtype T, output bool. The op name rides
// as a template argument so a launch error names it.
template <Op kOp, class Fn>
struct ToBool {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      launch_elementwise<bool, T, T>(a, Fn{}, op_name(kOp));
    }
  };
};

#define FASTT_BOOL(op, Fn) \
  register_only<ToBool<Op::op, F::Fn>::K>(Op::op, AllTypes{})

}  // namespace

void register_compare_cuda_kernels() {
  FASTT_BOOL(eq, Eq);
  FASTT_BOOL(ne, Ne);
  FASTT_BOOL(lt, Lt);
  FASTT_BOOL(le, Le);
  FASTT_BOOL(gt, Gt);
  FASTT_BOOL(ge, Ge);
  FASTT_BOOL(logical_and, LogicalAnd);
  FASTT_BOOL(logical_or, LogicalOr);
  FASTT_BOOL(logical_xor, LogicalXor);
}
#undef FASTT_BOOL

}  // namespace cuda
}  // namespace fastt

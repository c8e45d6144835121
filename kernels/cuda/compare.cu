// CUDA comparison and logical binary kernels: the binary rows of
// csrc/ops/elementwise.def with a bool result (rule Bool), split from
// binary.cu for compile time.
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"

namespace fastt {
namespace cuda {
namespace {

// Inputs in the promoted compute dtype T, output bool. The op name rides
// as a template argument so a launch error names it.
template <Op kOp, class Fn, bool kBoolOut>
struct BinaryAdapter {
  static_assert(kBoolOut, "compare.cu holds the bool-result rows");
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      launch_elementwise<bool, T, T>(a, Fn{}, op_name(kOp));
    }
  };
};

}  // namespace

void register_compare_cuda_kernels() {
#define FASTT_EW FASTT_EW_REGISTER_BINARY
#define FASTT_EW_PICK_Same(...)
#define FASTT_EW_PICK_Float(...)
#define FASTT_EW_PICK_Bool(...) __VA_ARGS__
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
}

}  // namespace cuda
}  // namespace fastt

// CUDA binary elementwise kernels: the binary rows of
// csrc/ops/elementwise.def (the CPU's list), same functors. The op layer has already promoted both inputs to
// the compute dtype (the table's dtype column). Comparisons and logical ops
// (bool results) live in compare.cu, to keep each file's compile short.
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"

namespace fastt {
namespace cuda {
namespace {
namespace F = functors;

// The op name rides as a template argument so a launch error names it.
template <Op kOp, class Fn, bool kBoolOut>
struct BinaryAdapter {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      launch_elementwise<std::conditional_t<kBoolOut, bool, T>, T, T>(
          a, F::functor_for<Fn, T>{}, op_name(kOp));
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
    if (F::alpha_is_one<M>(a.f0, a.f1, a.i0))
      return launch_elementwise<T, T, T>(a, F::Add{}, "add");
    const M alpha = F::alpha_of<M>(a.f0, a.f1, a.i0);
    launch_elementwise<T, T, T>(a, F::AddAlpha<M>{alpha}, "add");
  }
};
template <class T>
struct SubK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M alpha = F::alpha_of<M>(a.f0, a.f1, a.i0);
    launch_elementwise<T, T, T>(a, F::SubAlpha<M>{alpha}, "sub");
  }
};

}  // namespace

// The binary rows of csrc/ops/elementwise.def with a non-bool result (the
// bool ones are compare.cu's), and add/sub.
void register_binary_cuda_kernels() {
#define FASTT_EW FASTT_EW_REGISTER_BINARY
#define FASTT_EW_PICK_Same(...) __VA_ARGS__
#define FASTT_EW_PICK_Float(...) __VA_ARGS__
#define FASTT_EW_PICK_Bool(...)
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
}

}  // namespace cuda
}  // namespace fastt

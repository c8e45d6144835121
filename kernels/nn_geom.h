// Shared by the CPU (kernels/cpu/loss.cpp, norm.cpp) and CUDA (kernels/cuda/
// loss.cu, norm.cu) normalization and loss kernels: their arguments as
// nn_args (csrc/ops/nn.h) lays them out, read the same way on both.
#pragma once
#include <cstdint>

#include "csrc/dispatch.h"
#include "csrc/ops/nn.h"
#include "csrc/tensor.h"

namespace fastt {
namespace nn_geom {

// Typed data pointers of an optional tensor (null when undefined).
template <class T>
const T* cptr(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}
template <class T>
T* mptr(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// The class-index losses' [N, C, inner] view and options (nn_args::LossDims).
struct LossShape {
  int64_t n, classes, inner, reduction, ignore;
  explicit LossShape(const KernelArgs& a)
      : n(a.dims[nn_args::kDimN]),
        classes(a.dims[nn_args::kDimC]),
        inner(a.dims[nn_args::kDimInner]),
        reduction(a.dims[nn_args::kDimReduction]),
        ignore(a.dims[nn_args::kDimIgnore]) {}
};

}  // namespace nn_geom
}  // namespace fastt

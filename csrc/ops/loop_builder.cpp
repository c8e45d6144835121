// See loop_builder.h.
#include "loop_builder.h"

namespace fastt {

void store_scalar(KernelArgs& args, int k, const Scalar& s, DType dtype) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T v = s.to<T>();
    std::memcpy(args.scalar_buf[k], &v, sizeof(T));
  });
  args.data[k] = args.scalar_buf[k];
  args.dtypes[k] = dtype;
}

void build_loop(KernelArgs& args, const Tensor* const* tensors, int nops) {
  const Tensor& out = *tensors[0];
  const int ndim = int(out.dim());
  args.nops = nops;
  // Fastest-first: args dim i is tensor dim ndim-1-i.
  for (int i = 0; i < ndim; ++i) args.sizes[i] = out.sizes()[ndim - 1 - i];
  for (int k = 0; k < nops; ++k) {
    const Tensor* t = tensors[k];
    if (!t) {
      for (int i = 0; i < ndim; ++i) args.strides[k][i] = 0;
      continue;
    }
    args.data[k] = static_cast<char*>(t->data_ptr());
    args.dtypes[k] = t->dtype();
    const int tdim = int(t->dim());
    const int64_t isz = int64_t(t->itemsize());
    for (int i = 0; i < ndim; ++i) {
      int j = tdim - 1 - i;  // tensor dim aligned from the right
      args.strides[k][i] =
          (j < 0 || t->sizes()[j] == 1) ? 0 : t->strides()[j] * isz;
    }
  }
  // Drop size-1 dims and merge dims contiguous in every operand.
  int nd = 0;
  for (int i = 0; i < ndim; ++i) {
    if (args.sizes[i] == 1) continue;
    if (nd > 0) {
      bool mergeable = true;
      for (int k = 0; k < nops; ++k)
        if (args.strides[k][i] !=
            args.strides[k][nd - 1] * args.sizes[nd - 1]) {
          mergeable = false;
          break;
        }
      if (mergeable) {
        args.sizes[nd - 1] *= args.sizes[i];
        continue;
      }
    }
    args.sizes[nd] = args.sizes[i];
    for (int k = 0; k < nops; ++k) args.strides[k][nd] = args.strides[k][i];
    ++nd;
  }
  if (nd == 0) {  // 0-d or all ones
    nd = 1;
    args.sizes[0] = 1;
    for (int k = 0; k < nops; ++k) args.strides[k][0] = 0;
  }
  args.ndim = nd;
  int64_t numel = 1;
  for (int i = 0; i < nd; ++i) numel *= args.sizes[i];
  args.numel = numel;
  bool dense = nd == 1;
  for (int k = 0; k < nops && dense; ++k)
    dense = args.strides[k][0] == int64_t(itemsize(args.dtypes[k]));
  args.contiguous = dense;
}

}  // namespace fastt

// Builds the elementwise iteration space of KernelArgs (the Loop family):
// broadcasts every input to the output shape (stride 0 where broadcast),
// reverses to fastest-first order and merges dims that are contiguous in
// every operand. Scalar inputs live in args.scalar_buf with stride 0.
#pragma once
#include "../dispatch.h"

namespace fastt {

// Operand k is a tensor when tensors[k] is non-null; otherwise it is the
// scalar already stored in args.scalar_buf[k] (with dtype dtypes[k]).
// Operand 0 is the output and defines the shape.
void build_loop(KernelArgs& args, const Tensor* const* tensors, int nops);

// The fast path: every operand is contiguous with the output's numel.
inline void build_dense_loop(KernelArgs& args, const Tensor* const* tensors,
                             int nops) {
  args.nops = nops;
  args.ndim = 1;
  args.numel = tensors[0]->numel();
  args.sizes[0] = args.numel;
  args.contiguous = true;
  for (int k = 0; k < nops; ++k) {
    args.data[k] = static_cast<char*>(tensors[k]->data_ptr());
    args.dtypes[k] = tensors[k]->dtype();
    args.strides[k][0] = int64_t(tensors[k]->itemsize());
  }
}

// Stores `s` converted to `dtype` in args.scalar_buf[k].
void store_scalar(KernelArgs& args, int k, const Scalar& s, DType dtype);

// Runs `op` over a built loop: looks up the kernel for the compute dtype on
// the output's device and calls it.
inline void run_loop(Op op, KernelArgs& args, Device device, DType dtype) {
  lookup_kernel(op, device.type, dtype)(args);
}

}  // namespace fastt

// Built when fastt has no CUDA backend: the whole CUDA column of the
// dispatch table is explicitly unsupported, so errors say so.
#include "csrc/dispatch.h"

namespace fastt {

void register_cuda_kernels() {
  for (int op = 0; op < kNumOps; ++op)
    for (int t = 0; t < kNumDTypes; ++t)
      mark_unsupported(Op(op), DeviceType::CUDA, DType(t),
                       Unsupported::Device);
}

}  // namespace fastt

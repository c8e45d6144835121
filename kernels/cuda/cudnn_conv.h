// The cuDNN fast path of the convolutions: fills the ConvHooks that
// csrc/ops/conv.h declares (the core asks them first for CUDA tensors).
// Plain C++ (no CUDA headers), so the core compiles without CUDA.
#pragma once
#include "csrc/ops/conv.h"

namespace fastt {

namespace cuda {
// Sets g_conv_hooks (kernels/cuda/cudnn_conv.cpp; a no-op without
// FASTT_WITH_CUDNN). Called from register_conv_cuda_kernels().
void register_cudnn_conv();
}  // namespace cuda

}  // namespace fastt

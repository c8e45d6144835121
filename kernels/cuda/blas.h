// TF32 switches shared by the CUDA gemm (kernels/cuda/linalg.cu), the
// cuDNN convolutions (cudnn_conv.cpp) and the bindings that expose them
// (fastt.backends.cuda.matmul.allow_tf32, fastt.backends.cudnn.allow_tf32).
#pragma once

namespace fastt {
namespace cuda {

// When true, float32 products may run on TF32 tensor cores (10-bit
// mantissa inputs, float accumulate). Off by default, like torch's
// matmul.allow_tf32. Read on every float32 gemm; set from any thread.
bool& allow_tf32();
// The same for cuDNN convolutions: on by default, like torch's
// torch.backends.cudnn.allow_tf32.
bool& cudnn_allow_tf32();

}  // namespace cuda
}  // namespace fastt

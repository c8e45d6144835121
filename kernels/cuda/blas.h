// cuBLAS settings shared by the CUDA gemm (kernels/cuda/linalg.cu) and
// whoever exposes them (torch.backends.cuda.matmul.allow_tf32's twin).
#pragma once

namespace fastt {
namespace cuda {

// When true, float32 products may run on TF32 tensor cores (10-bit
// mantissa inputs, float accumulate). Off by default, like torch's
// matmul.allow_tf32. Read on every float32 gemm; set from any thread.
bool& allow_tf32();

}  // namespace cuda
}  // namespace fastt

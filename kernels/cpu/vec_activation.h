// float32 activation gradients over dense ranges with vec_exp / vec_erf
// (the functors' libm calls keep their loops scalar): GELU (both forms)
// and SiLU, the transformer and Llama MLPs' backward. Defined in
// vec_activation.cpp, whose FP options (vec_exp.h's) stay in that file:
// binary.cpp's other kernels (fmax, fmin, ...) keep the default ones.
#pragma once
#include <cstdint>

namespace fastt {
namespace cpu {

enum class BackwardKind { Gelu, GeluTanh, Silu };
// o[i] = g[i] * f'(x[i]) for i < n.
void backward_range(BackwardKind kind, const float* g, const float* x,
                    float* o, int64_t n);

}  // namespace cpu
}  // namespace fastt

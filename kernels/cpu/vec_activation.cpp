// The vectorized activation gradients of vec_activation.h.
#include "kernels/cpu/vec_exp.h"  // first: it sets the file's FP options

#include "kernels/cpu/vec_activation.h"

namespace fastt {
namespace cpu {
namespace {

template <BackwardKind K>
FASTT_VEC_CLONES void range(const float* g, const float* x, float* o,
                            int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if constexpr (K == BackwardKind::Gelu) {
      // Phi(x) + x phi(x), one exp for both
      const NormalTail n = vec_normal_tail(v);
      const float cdf = v < 0.0f ? n.h : 1.0f - n.h;
      o[i] = g[i] * (cdf + v * (n.e * 0.39894228040143267794f));
    } else if constexpr (K == BackwardKind::GeluTanh) {
      // s = sigmoid(2u) = (1 + tanh u) / 2: s + 2 x s (1 - s) u'
      const float k = 0.79788456080286535588f, c = 0.044715f;
      const float v2 = v * v;
      const float s = vec_sigmoid(2.0f * k * v * (1.0f + c * v2));
      const float dinner = k * (1.0f + 3.0f * c * v2);
      o[i] = g[i] * (s + 2.0f * v * s * (1.0f - s) * dinner);
    } else {
      const float s = vec_sigmoid(v);
      o[i] = g[i] * s * (1.0f + v * (1.0f - s));
    }
  }
}

}  // namespace

void backward_range(BackwardKind kind, const float* g, const float* x,
                    float* o, int64_t n) {
  switch (kind) {
    case BackwardKind::Gelu: return range<BackwardKind::Gelu>(g, x, o, n);
    case BackwardKind::GeluTanh:
      return range<BackwardKind::GeluTanh>(g, x, o, n);
    case BackwardKind::Silu: return range<BackwardKind::Silu>(g, x, o, n);
  }
}

}  // namespace cpu
}  // namespace fastt

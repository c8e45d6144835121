// Elementwise ops: unary, binary (tensor-tensor, tensor-scalar,
// scalar-tensor), ternary. Each op comes as a function, an in-place `_`
// form and an `_out` form, with PyTorch's promotion and broadcasting.
#pragma once
#include "../tensor.h"

namespace fastt {

// Unary ops whose result has the input's dtype (or bool for logical_not).
#define FASTT_UNARY_SAME_OPS(X) \
  X(neg) X(abs) X(relu) X(sign) X(floor) X(ceil) X(round) X(trunc) \
  X(square) X(logical_not) X(bitwise_not)
// Unary ops that promote integer inputs to the default float dtype.
#define FASTT_UNARY_FLOAT_OPS(X)                                         \
  X(exp) X(expm1) X(log) X(log1p) X(log2) X(sqrt) X(rsqrt) X(sin) X(cos) \
  X(tanh) X(sigmoid) X(silu) X(erf) X(reciprocal)
#define FASTT_UNARY_OPS(X) FASTT_UNARY_SAME_OPS(X) FASTT_UNARY_FLOAT_OPS(X)

#define FASTT_DECLARE_UNARY(name)          \
  Tensor name(const Tensor& a);            \
  Tensor& name##_(Tensor& a);              \
  Tensor& name##_out(Tensor& out, const Tensor& a);
FASTT_UNARY_OPS(FASTT_DECLARE_UNARY)
#undef FASTT_DECLARE_UNARY

// approximate: "none" (erf form) or "tanh".
Tensor gelu(const Tensor& a, const char* approximate = "none");
Tensor& gelu_(Tensor& a, const char* approximate = "none");
Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& a, double negative_slope = 0.01);

// Binary ops with a plain (a, b) signature.
#define FASTT_BINARY_OPS(X)                                              \
  X(mul) X(div) X(floor_divide) X(remainder) X(fmod) X(pow) X(maximum) \
  X(minimum) X(atan2) X(eq) X(ne) X(lt) X(le) X(gt) X(ge) X(logical_and) \
  X(logical_or) X(logical_xor) X(bitwise_and) X(bitwise_or) X(bitwise_xor)

#define FASTT_DECLARE_BINARY(name)                                     \
  Tensor name(const Tensor& a, const Tensor& b);                       \
  Tensor name(const Tensor& a, const Scalar& b);                       \
  Tensor name(const Scalar& a, const Tensor& b);                       \
  Tensor& name##_(Tensor& a, const Tensor& b);                         \
  Tensor& name##_(Tensor& a, const Scalar& b);                         \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b);
FASTT_BINARY_OPS(FASTT_DECLARE_BINARY)
#undef FASTT_DECLARE_BINARY

// add/sub take alpha: a + alpha * b.
#define FASTT_DECLARE_ALPHA(name)                                          \
  Tensor name(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  \
  Tensor name(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);  \
  Tensor name(const Scalar& a, const Tensor& b, const Scalar& alpha = 1);  \
  Tensor& name##_(Tensor& a, const Tensor& b, const Scalar& alpha = 1);    \
  Tensor& name##_(Tensor& a, const Scalar& b, const Scalar& alpha = 1);    \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b,        \
                     const Scalar& alpha = 1);
FASTT_DECLARE_ALPHA(add)
FASTT_DECLARE_ALPHA(sub)
#undef FASTT_DECLARE_ALPHA

// div with rounding_mode nullptr (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, const char* rounding_mode);
Tensor div(const Tensor& a, const Scalar& b, const char* rounding_mode);

// ---- ternary ----
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b);
// Bounds are optional: pass an undefined Tensor / nullptr to omit one.
Tensor clamp(const Tensor& a, const Tensor& min, const Tensor& max);
Tensor clamp(const Tensor& a, const Scalar* min, const Scalar* max);
Tensor clamp(const Tensor& a, const Scalar& min, const Scalar& max);
Tensor& clamp_(Tensor& a, const Scalar* min, const Scalar* max);
Tensor& clamp_(Tensor& a, const Tensor& min, const Tensor& max);
Tensor clamp_min(const Tensor& a, const Scalar& min);
Tensor clamp_max(const Tensor& a, const Scalar& max);
Tensor& clamp_min_(Tensor& a, const Scalar& min);
Tensor& clamp_max_(Tensor& a, const Scalar& max);
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& a, const Tensor& end, const Scalar& weight);
Tensor& lerp_(Tensor& a, const Tensor& end, const Scalar& weight);
Tensor& lerp_(Tensor& a, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2,
               const Scalar& value = 1);
Tensor& addcmul_(Tensor& a, const Tensor& t1, const Tensor& t2,
                 const Scalar& value = 1);
Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2,
               const Scalar& value = 1);
Tensor& addcdiv_(Tensor& a, const Tensor& t1, const Tensor& t2,
                 const Scalar& value = 1);
// masked_fill: where(mask, value, a) broadcast to a's shape.
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value);
Tensor& masked_fill_(Tensor& a, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value);

// Whether a value of dtype `from` may be written to `to` (torch.can_cast).
// Fused activation gradients (autograd's formulas use them): `saved` is the
// op's output for relu/sigmoid/tanh and its input for silu/gelu.
Tensor activation_backward(const char* op, const Tensor& grad,
                           const Tensor& saved,
                           const char* approximate = "none");

bool can_cast(DType from, DType to);

}  // namespace fastt

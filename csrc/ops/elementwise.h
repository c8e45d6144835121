// Elementwise ops: unary, binary (tensor-tensor, tensor-scalar,
// scalar-tensor), ternary. Each op comes as a function, an in-place `_`
// form and an `_out` form, with PyTorch's promotion and broadcasting.
#pragma once
#include "../tensor.h"

namespace fastt {

// The rows of elementwise.def, declared: kind Unary gives name(a),
// name_(a) (rows with an in-place form) and name_out(out, a); kind Binary
// gives the tensor/scalar forms, name_ and name_out; kind BinaryAlpha the
// same with alpha.
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  FASTT_EW_DECLARE_##kind(name, python)
#define FASTT_EW_DECLARE_Unary(name, python)        \
  Tensor name(const Tensor& a);                     \
  FASTT_EW_INPLACE_##python(Tensor& name##_(Tensor& a);) \
  Tensor& name##_out(Tensor& out, const Tensor& a);
#define FASTT_EW_DECLARE_Binary(name, python)                    \
  Tensor name(const Tensor& a, const Tensor& b);                 \
  Tensor name(const Tensor& a, const Scalar& b);                 \
  Tensor name(const Scalar& a, const Tensor& b);                 \
  FASTT_EW_INPLACE_##python(Tensor& name##_(Tensor& a, const Tensor& b); \
                            Tensor& name##_(Tensor& a, const Scalar& b);) \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b);
#define FASTT_EW_DECLARE_UnaryKernel(name, python)
#define FASTT_EW_DECLARE_BinaryKernel(name, python)
#define FASTT_EW_DECLARE_UnaryHand(name, python)
// kind BinaryAlpha (add, sub): a + alpha * b.
#define FASTT_EW_DECLARE_BinaryAlpha(name, python)                         \
  Tensor name(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  \
  Tensor name(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);  \
  Tensor name(const Scalar& a, const Tensor& b, const Scalar& alpha = 1);  \
  Tensor& name##_(Tensor& a, const Tensor& b, const Scalar& alpha = 1);    \
  Tensor& name##_(Tensor& a, const Scalar& b, const Scalar& alpha = 1);    \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b,        \
                     const Scalar& alpha = 1);
// Which python columns have an in-place form (div: PyHand, has one).
#define FASTT_EW_INPLACE_PyAll(...) __VA_ARGS__
#define FASTT_EW_INPLACE_PyAllNum(...) __VA_ARGS__
#define FASTT_EW_INPLACE_PyHand(...) __VA_ARGS__
#define FASTT_EW_INPLACE_PyNoInplace(...)
#define FASTT_EW_INPLACE_PyAllT(...) __VA_ARGS__
#define FASTT_EW_INPLACE_PyNoInplaceT(...)
#define FASTT_EW_INPLACE_PyPlain(...)
#include "elementwise.def"
#undef FASTT_EW

// Binary ops whose entry points are hand-written (same forms as above).
#define FASTT_BINARY_HAND_OPS(X) X(floor_divide) X(pow)
#define FASTT_DECLARE_BINARY(name)                                     \
  Tensor name(const Tensor& a, const Tensor& b);                       \
  Tensor name(const Tensor& a, const Scalar& b);                       \
  Tensor name(const Scalar& a, const Tensor& b);                       \
  Tensor& name##_(Tensor& a, const Tensor& b);                         \
  Tensor& name##_(Tensor& a, const Scalar& b);                         \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b);
FASTT_BINARY_HAND_OPS(FASTT_DECLARE_BINARY)
#undef FASTT_DECLARE_BINARY

// heaviside(input, values): both tensors of one dtype, like torch.
Tensor heaviside(const Tensor& a, const Tensor& values);
Tensor& heaviside_(Tensor& a, const Tensor& values);
Tensor& heaviside_out(Tensor& out, const Tensor& a, const Tensor& values);

// approximate: "none" (erf form) or "tanh".
Tensor gelu(const Tensor& a, const char* approximate = "none");
Tensor& gelu_(Tensor& a, const char* approximate = "none");
Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& a, double negative_slope = 0.01);

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
// nan_to_num's one-pass kernel for a floating `a` (no autograd recording:
// fastt::nan_to_num, csrc/ops/special.cpp, is the entry point).
Tensor nan_to_num_kernel(const Tensor& a, double nan, double posinf,
                         double neginf);
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
// pow(a, number, out=) (torch's Tensor_Scalar_out: the scalar fast paths).
Tensor& pow_out(Tensor& out, const Tensor& a, const Scalar& b);
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

// Dtype sets and registration, shared by both backends: a kernel family
// registers Kernel<T>::run for every T of a set with register_only<Dev>,
// which marks the op's other dtypes on that device unsupported. The
// elementwise rows (csrc/ops/elementwise.def) name these sets.
#pragma once
#include <cstdint>

#include "csrc/dispatch.h"
#include "csrc/dtype.h"
#include "csrc/half.h"

namespace fastt {

template <class... Ts>
struct Types {};
using FloatTypes = Types<Half, BFloat16, float, double>;
using F32F64Types = Types<float, double>;
using IntTypes = Types<uint8_t, int8_t, int16_t, int32_t, int64_t>;
using IntBoolTypes = Types<bool, uint8_t, int8_t, int16_t, int32_t, int64_t>;
using NumericTypes = Types<uint8_t, int8_t, int16_t, int32_t, int64_t, Half,
                           BFloat16, float, double>;
using SignedNumericTypes =
    Types<int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float, double>;
using Int64FloatTypes = Types<int64_t, Half, BFloat16, float, double>;
using AllTypes = Types<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half,
                       BFloat16, float, double>;
using ComplexTypes = Types<Complex64, Complex128>;
// A set with the complex dtypes added: a row's set names the real dtypes
// its kernel takes and, where it takes complex too, WithComplex<set>.
template <class Set>
struct AddComplex;
template <class... Ts>
struct AddComplex<Types<Ts...>> {
  using type = Types<Ts..., Complex64, Complex128>;
};
template <class Set>
using WithComplex = typename AddComplex<Set>::type;
// The sets with complex (Cx) that kernels/kernels.def names (its table
// stays within 80 columns).
using AllCx = WithComplex<AllTypes>;
using NumericCx = WithComplex<NumericTypes>;
using FloatCx = WithComplex<FloatTypes>;
using F32F64Cx = WithComplex<F32F64Types>;

template <DeviceType Dev, template <class> class Kernel, class... Ts>
void register_only_on(Op op, Types<Ts...>) {
  for (int t = 0; t < kNumDTypes; ++t)
    mark_unsupported(op, Dev, DType(t), Unsupported::DType);
  (register_kernel(op, Dev, dtype_of<Ts>, &Kernel<Ts>::run), ...);
}

}  // namespace fastt

// The elementwise rows of one arity, expanded into registrations through
// the including backend's adapters (a loop policy):
//   UnaryAdapter<Op, Functor, bool_result>::K<T>
//   BinaryAdapter<Op, Functor, bool_result>::K<T>
// and its register_only. A backend that splits rows across files defines
// FASTT_EW_PICK_<rule>(...) as __VA_ARGS__ or nothing; by default every rule is kept.
#define FASTT_EW_REGISTER_UNARY(name, kind, functor, dtypes, rule, grad, py) \
  FASTT_EW_REG_UNARY_##kind(name, functor, dtypes, rule)
#define FASTT_EW_REGISTER_BINARY(name, kind, functor, dtypes, rule, grad, py) \
  FASTT_EW_REG_BINARY_##kind(name, functor, dtypes, rule)
#define FASTT_EW_REG_UNARY_Unary(name, functor, dtypes, rule)                \
  register_only<UnaryAdapter<Op::name, functors::functor,                  \
                             FASTT_EW_BOOL_##rule>::K>(Op::name, dtypes{});
#define FASTT_EW_REG_UNARY_UnaryKernel FASTT_EW_REG_UNARY_Unary
#define FASTT_EW_REG_UNARY_UnaryHand(name, kernel, dtypes, rule) \
  register_only<kernel>(Op::name, dtypes{});
#define FASTT_EW_REG_UNARY_Binary(...)
#define FASTT_EW_REG_UNARY_BinaryKernel(...)
#define FASTT_EW_REG_UNARY_BinaryAlpha(...)
#define FASTT_EW_REG_BINARY_Binary(name, functor, dtypes, rule)              \
  FASTT_EW_PICK_##rule(                                                     \
      register_only<BinaryAdapter<Op::name, functors::functor,             \
                                  FASTT_EW_BOOL_##rule>::K>(Op::name,      \
                                                            dtypes{});)
#define FASTT_EW_REG_BINARY_BinaryKernel FASTT_EW_REG_BINARY_Binary
#define FASTT_EW_REG_BINARY_BinaryAlpha(name, kernel, dtypes, rule) \
  FASTT_EW_PICK_##rule(register_only<kernel>(Op::name, dtypes{});)
#define FASTT_EW_REG_BINARY_Unary(...)
#define FASTT_EW_REG_BINARY_UnaryKernel(...)
#define FASTT_EW_REG_BINARY_UnaryHand(...)
#define FASTT_EW_BOOL_Same false
#define FASTT_EW_BOOL_Float false
#define FASTT_EW_BOOL_Bool true

// DType: the element types, expanded from dtype.def, plus PyTorch's type
// promotion rules. dtype_of<T> and FASTT_FOR_EACH_DTYPE map between the two.
#pragma once
#include <cstddef>
#include <cstdint>

#include "complex.h"
#include "half.h"

namespace fastt {

enum class DType : uint8_t {
#define FASTT_DTYPE(name, type, str, cat) name,
#include "dtype.def"
#undef FASTT_DTYPE
};

constexpr int kNumDTypes = 0
#define FASTT_DTYPE(name, type, str, cat) +1
#include "dtype.def"
#undef FASTT_DTYPE
    ;

enum class DTypeCategory : uint8_t { Bool, Integral, Floating, Complex };

constexpr size_t kDTypeSize[kNumDTypes] = {
#define FASTT_DTYPE(name, type, str, cat) sizeof(type),
#include "dtype.def"
#undef FASTT_DTYPE
};
constexpr const char* kDTypeName[kNumDTypes] = {
#define FASTT_DTYPE(name, type, str, cat) str,
#include "dtype.def"
#undef FASTT_DTYPE
};
constexpr DTypeCategory kDTypeCategory[kNumDTypes] = {
#define FASTT_DTYPE(name, type, str, cat) DTypeCategory::cat,
#include "dtype.def"
#undef FASTT_DTYPE
};

constexpr size_t itemsize(DType t) { return kDTypeSize[int(t)]; }
constexpr const char* dtype_name(DType t) { return kDTypeName[int(t)]; }
constexpr DTypeCategory category(DType t) { return kDTypeCategory[int(t)]; }
constexpr bool is_floating(DType t) {
  return category(t) == DTypeCategory::Floating;
}
constexpr bool is_integral(DType t, bool include_bool) {
  return category(t) == DTypeCategory::Integral ||
         (include_bool && t == DType::Bool);
}
constexpr bool is_signed(DType t) {
  return t != DType::Bool && t != DType::UInt8;
}
constexpr bool is_complex(DType t) {
  return category(t) == DTypeCategory::Complex;
}
// Floating or complex: the dtypes gradients flow in and the Float rule
// keeps (integers and bool promote to the default float dtype).
constexpr bool is_inexact(DType t) { return is_floating(t) || is_complex(t); }
// complex64 <-> float32, complex128 <-> float64 (torch's toRealValueType /
// toComplexType); other dtypes map to themselves / have no complex form.
constexpr DType to_real(DType t) {
  return t == DType::Complex64    ? DType::Float32
         : t == DType::Complex128 ? DType::Float64
                                  : t;
}
// float64 -> complex128; every other floating dtype -> complex64 (fastt
// has no complex32, torch's complex form of float16).
constexpr DType to_complex(DType t) {
  return is_complex(t)            ? t
         : t == DType::Float64    ? DType::Complex128
                                  : DType::Complex64;
}

template <class T>
struct DTypeOf;
#define FASTT_DTYPE(name, type, str, cat)           \
  template <>                                       \
  struct DTypeOf<type> {                            \
    static constexpr DType value = DType::name;     \
  };
#include "dtype.def"
#undef FASTT_DTYPE
template <class T>
constexpr DType dtype_of = DTypeOf<T>::value;

// PyTorch's promote_types: the smallest dtype both convert to safely.
DType promote_types(DType a, DType b);
// Parse "float32" / "float" / "int" style names (used by bindings, errors).
bool dtype_from_name(const char* name, DType* out);

// Default floating dtype (torch.get_default_dtype()); float32 or float64.
DType default_dtype();
void set_default_dtype(DType t);

// Calls fn(T{}) with T the C++ type of `t`, e.g.
//   visit_dtype(t, [&](auto tag) { using T = decltype(tag); ... });
template <class F>
inline decltype(auto) visit_dtype(DType t, F&& fn) {
  switch (t) {
#define FASTT_DTYPE(name, type, str, cat) \
  case DType::name:                       \
    return fn(type{});
#include "dtype.def"
#undef FASTT_DTYPE
  }
  return fn(float{});  // unreachable
}

// torch's scalar type name ("Float", "Long", ...), as its errors print it.
const char* torch_type_name(DType t);

}  // namespace fastt

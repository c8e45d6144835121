// Type promotion (torch.promote_types) as a table computed once.
#include "dtype.h"

#include <cstring>

#include "errors.h"

namespace fastt {
namespace {

// Rank within a category; larger wins. Float16 and BFloat16 tie and
// promote to Float32 together; UInt8 with a signed type needs one size up.
constexpr int rank(DType t) {
  switch (t) {
    case DType::Bool: return 0;
    case DType::UInt8: return 1;
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::Int32: return 3;
    case DType::Int64: return 4;
    case DType::Float16: return 1;
    case DType::BFloat16: return 1;
    case DType::Float32: return 2;
    case DType::Float64: return 3;
    case DType::Complex64: return 2;   // its parts' float32
    case DType::Complex128: return 3;  // float64
  }
  return 0;
}

constexpr DType compute_promotion(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  // Complex wins, at the wider of the two precisions (torch: complex64
  // with float64 is complex128, with float16 or an integer complex64).
  if (is_complex(a) || is_complex(b)) {
    const int ra = is_integral(a, false) ? 0 : rank(a);
    const int rb = is_integral(b, false) ? 0 : rank(b);
    return (ra > rb ? ra : rb) >= 3 ? DType::Complex128 : DType::Complex64;
  }
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {
    if (rank(a) == rank(b)) return DType::Float32;  // half vs bfloat16
    return rank(a) > rank(b) ? a : b;
  }
  // Both integral.
  if (a == DType::UInt8 || b == DType::UInt8) {
    DType s = a == DType::UInt8 ? b : a;
    return s == DType::Int8 ? DType::Int16 : s;
  }
  return rank(a) > rank(b) ? a : b;
}

struct PromotionTable {
  DType t[kNumDTypes][kNumDTypes];
  constexpr PromotionTable() : t() {
    for (int i = 0; i < kNumDTypes; ++i)
      for (int j = 0; j < kNumDTypes; ++j)
        t[i][j] = compute_promotion(DType(i), DType(j));
  }
};
constexpr PromotionTable kPromotion;

DType g_default_dtype = DType::Float32;

}  // namespace

DType promote_types(DType a, DType b) { return kPromotion.t[int(a)][int(b)]; }

DType default_dtype() { return g_default_dtype; }

void set_default_dtype(DType t) {
  if (t != DType::Float32 && t != DType::Float64 && t != DType::Float16 &&
      t != DType::BFloat16)
    throw TypeError(fmt::format(
        "set_default_dtype: only floating-point types are supported as the "
        "default type, got {}",
        dtype_name(t)));
  g_default_dtype = t;
}

bool dtype_from_name(const char* name, DType* out) {
  struct Alias {
    const char* name;
    DType t;
  };
  static const Alias aliases[] = {
      {"float", DType::Float32},  {"double", DType::Float64},
      {"half", DType::Float16},   {"int", DType::Int32},
      {"long", DType::Int64},     {"short", DType::Int16},
      {"bool", DType::Bool},      {"cfloat", DType::Complex64},
      {"cdouble", DType::Complex128},
  };
  for (int i = 0; i < kNumDTypes; ++i)
    if (std::strcmp(name, kDTypeName[i]) == 0) return *out = DType(i), true;
  for (const Alias& a : aliases)
    if (std::strcmp(name, a.name) == 0) return *out = a.t, true;
  return false;
}

const char* torch_type_name(DType t) {
  switch (t) {
    case DType::Bool: return "Bool";
    case DType::UInt8: return "Byte";
    case DType::Int8: return "Char";
    case DType::Int16: return "Short";
    case DType::Int32: return "Int";
    case DType::Int64: return "Long";
    case DType::Float16: return "Half";
    case DType::BFloat16: return "BFloat16";
    case DType::Float32: return "Float";
    case DType::Float64: return "Double";
    case DType::Complex64: return "ComplexFloat";
    case DType::Complex128: return "ComplexDouble";
  }
  return "?";
}

}  // namespace fastt

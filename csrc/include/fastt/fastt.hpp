// fastt's header-only C++ frontend: include this one file and link
// fastt::fastt (find_package(fastt)). It gathers the core's op headers and
// adds what makes C++ code read like the Python API: operators on
// fastt::Tensor with tensors and scalars, and stream printing.
//
//   #include <fastt/fastt.hpp>
//   fastt::Tensor x = fastt::randn({4, 3});
//   fastt::Tensor y = fastt::relu(fastt::matmul(x, w) + b);
//   using namespace fastt::indexing;
//   fastt::Tensor z = y.index({Slice(1, None), None});  // y[1:, None]
#pragma once
#include <ostream>

#include "core/ops.h"

namespace fastt {

// ---- arithmetic operators (broadcasting, torch promotion) ----
#define FASTT_FRONTEND_BINARY(sym, fn)                                     \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) {           \
    return fn(a, b);                                                       \
  }                                                                        \
  inline Tensor operator sym(const Tensor& a, const Scalar& b) {           \
    return fn(a, b);                                                       \
  }                                                                        \
  inline Tensor operator sym(const Scalar& a, const Tensor& b) {           \
    return fn(a, b);                                                       \
  }
FASTT_FRONTEND_BINARY(+, add)
FASTT_FRONTEND_BINARY(-, sub)
FASTT_FRONTEND_BINARY(*, mul)
FASTT_FRONTEND_BINARY(/, div)
FASTT_FRONTEND_BINARY(%, remainder)
FASTT_FRONTEND_BINARY(&, bitwise_and)
FASTT_FRONTEND_BINARY(|, bitwise_or)
FASTT_FRONTEND_BINARY(^, bitwise_xor)
FASTT_FRONTEND_BINARY(==, eq)
FASTT_FRONTEND_BINARY(!=, ne)
FASTT_FRONTEND_BINARY(<, lt)
FASTT_FRONTEND_BINARY(<=, le)
FASTT_FRONTEND_BINARY(>, gt)
FASTT_FRONTEND_BINARY(>=, ge)
#undef FASTT_FRONTEND_BINARY

#define FASTT_FRONTEND_INPLACE(sym, fn)                                    \
  inline Tensor& operator sym(Tensor& a, const Tensor& b) {                \
    return fn(a, b);                                                       \
  }                                                                        \
  inline Tensor& operator sym(Tensor& a, const Scalar& b) {                \
    return fn(a, b);                                                       \
  }
FASTT_FRONTEND_INPLACE(+=, add_)
FASTT_FRONTEND_INPLACE(-=, sub_)
FASTT_FRONTEND_INPLACE(*=, mul_)
FASTT_FRONTEND_INPLACE(/=, div_)
#undef FASTT_FRONTEND_INPLACE

inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator~(const Tensor& a) { return bitwise_not(a); }

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << t.str();
}

}  // namespace fastt

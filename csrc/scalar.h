// Scalar: a Python-number-like value (bool, int64, double or a complex of
// doubles) used for tensor-scalar ops, fill values and op parameters such
// as alpha.
#pragma once
#include <cstdint>
#include <type_traits>

#include "dtype.h"

namespace fastt {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };

  Scalar() : kind_(Kind::Int), i_(0) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  template <class T, std::enable_if_t<std::is_integral<T>::value &&
                                          !std::is_same<T, bool>::value,
                                      int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  template <class T,
            std::enable_if_t<std::is_floating_point<T>::value, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}
  Scalar(Half v) : kind_(Kind::Float), d_(float(v)) {}
  Scalar(BFloat16 v) : kind_(Kind::Float), d_(float(v)) {}
  template <class T>
  Scalar(Complex<T> v) : kind_(Kind::Complex), d_(v.re), im_(v.im) {}

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_complex() const { return kind_ == Kind::Complex; }

  // A complex value converts to the real types by its real part (torch's
  // casts), to bool by either part.
  double to_double() const { return holds_double() ? d_ : double(i_); }
  double imag() const { return is_complex() ? im_ : 0.0; }
  int64_t to_int() const {
    return holds_double() ? static_cast<int64_t>(d_) : i_;
  }
  bool to_bool() const {
    return holds_double() ? d_ != 0.0 || imag() != 0.0 : i_ != 0;
  }
  template <class T>
  T to() const {
    if constexpr (std::is_same<T, bool>::value) return to_bool();
    else if constexpr (std::is_integral<T>::value)
      return holds_double() ? static_cast<T>(static_cast<int64_t>(d_))
                            : static_cast<T>(i_);
    else if constexpr (kIsComplex<T>) {
      using V = typename T::value_type;
      return T(static_cast<V>(to_double()), static_cast<V>(imag()));
    } else return static_cast<T>(to_double());
  }
  // The dtype a Python number of this kind takes in type promotion:
  // bool, int64, the default floating dtype or its complex form.
  DType natural_dtype() const;

 private:
  bool holds_double() const {
    return kind_ == Kind::Float || kind_ == Kind::Complex;
  }
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
  double im_ = 0.0;
};

}  // namespace fastt

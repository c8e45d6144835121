// Scalar: a Python-number-like value (bool, int64 or double) used for
// tensor-scalar ops, fill values and op parameters such as alpha.
#pragma once
#include <cstdint>
#include <type_traits>

#include "dtype.h"

namespace fastt {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

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

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Float ? d_ : double(i_); }
  int64_t to_int() const {
    return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_;
  }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0.0 : i_ != 0; }
  template <class T>
  T to() const {
    if constexpr (std::is_same<T, bool>::value) return to_bool();
    else if constexpr (std::is_integral<T>::value)
      return kind_ == Kind::Float ? static_cast<T>(static_cast<int64_t>(d_))
                                  : static_cast<T>(i_);
    else return static_cast<T>(to_double());
  }
  // The dtype a Python number of this kind takes in type promotion:
  // bool, int64, or the default floating dtype.
  DType natural_dtype() const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace fastt

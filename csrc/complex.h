// Complex<T>: complex64 (T = float) and complex128 (T = double) elements,
// laid out as std::complex, C99 and NumPy lay them out (real, imaginary),
// usable from host and device code (FASTT_HD) like Half. Arithmetic is
// torch's: products by the textbook formula, quotients by Smith's
// algorithm (scaled by the divisor's larger part, so |c|^2 cannot
// overflow or underflow), comparisons on both parts.
#pragma once
#include <cmath>
#include <type_traits>

#include "macros.h"

namespace fastt {

// Aligned as T, not 2 * sizeof(T): NumPy arrays and views of float
// storage may place a complex128 at an 8-byte boundary.
template <class T>
struct Complex {
  static_assert(std::is_floating_point<T>::value, "Complex of float/double");
  using value_type = T;
  T re, im;

  FASTT_HD constexpr Complex() : re(0), im(0) {}
  FASTT_HD constexpr Complex(T r, T i) : re(r), im(i) {}
  // From a real number (any arithmetic type, Half, BFloat16): imaginary 0.
  template <class U, std::enable_if_t<std::is_arithmetic<U>::value, int> = 0>
  FASTT_HD constexpr Complex(U r) : re(static_cast<T>(r)), im(0) {}
  template <class U, std::enable_if_t<!std::is_arithmetic<U>::value &&
                                          std::is_convertible<U, float>::value,
                                      int> = 0>
  FASTT_HD Complex(U r) : re(static_cast<T>(static_cast<float>(r))), im(0) {}
  // Between precisions.
  template <class U, std::enable_if_t<!std::is_same<U, T>::value, int> = 0>
  FASTT_HD constexpr explicit Complex(Complex<U> z)
      : re(static_cast<T>(z.re)), im(static_cast<T>(z.im)) {}
  // To a real type: the real part (torch's cast, which warns in Python).
  template <class U, std::enable_if_t<std::is_arithmetic<U>::value, int> = 0>
  FASTT_HD constexpr explicit operator U() const {
    if constexpr (std::is_same<U, bool>::value) return re != 0 || im != 0;
    else return static_cast<U>(re);
  }

  FASTT_HD constexpr T real() const { return re; }
  FASTT_HD constexpr T imag() const { return im; }

  FASTT_HD constexpr Complex operator-() const { return {-re, -im}; }
  FASTT_HD constexpr Complex operator+(Complex b) const {
    return {re + b.re, im + b.im};
  }
  FASTT_HD constexpr Complex operator-(Complex b) const {
    return {re - b.re, im - b.im};
  }
  FASTT_HD constexpr Complex operator*(Complex b) const {
    return {re * b.re - im * b.im, re * b.im + im * b.re};
  }
  FASTT_HD Complex operator/(Complex b) const {
    const T c = b.re, d = b.im;
    if (std::fabs(c) >= std::fabs(d)) {
      if (c == 0 && d == 0) return {re / std::fabs(c), im / std::fabs(d)};
      const T r = d / c, s = T(1) / (c + d * r);
      return {(re + im * r) * s, (im - re * r) * s};
    }
    const T r = c / d, s = T(1) / (d + c * r);
    return {(re * r + im) * s, (im * r - re) * s};
  }
  FASTT_HD Complex& operator+=(Complex b) { return *this = *this + b; }
  FASTT_HD Complex& operator-=(Complex b) { return *this = *this - b; }
  FASTT_HD Complex& operator*=(Complex b) { return *this = *this * b; }
  FASTT_HD Complex& operator/=(Complex b) { return *this = *this / b; }
  FASTT_HD constexpr bool operator==(Complex b) const {
    return re == b.re && im == b.im;
  }
  FASTT_HD constexpr bool operator!=(Complex b) const {
    return !(*this == b);
  }
};

using Complex64 = Complex<float>;
using Complex128 = Complex<double>;

template <class T>
struct IsComplex : std::false_type {};
template <class T>
struct IsComplex<Complex<T>> : std::true_type {};
template <class T>
constexpr bool kIsComplex = IsComplex<T>::value;

// The real type of T's parts: float for Complex64, T itself for a real T.
template <class T>
struct RealPart {
  using type = T;
};
template <class T>
struct RealPart<Complex<T>> {
  using type = T;
};
template <class T>
using RealOf = typename RealPart<T>::type;

template <class T>
FASTT_HD Complex<T> conj(Complex<T> z) { return {z.re, -z.im}; }
// |z| without overflow or underflow of the squares.
template <class T>
FASTT_HD T complex_abs(Complex<T> z) { return std::hypot(z.re, z.im); }
template <class T>
FASTT_HD T complex_arg(Complex<T> z) { return std::atan2(z.im, z.re); }

}  // namespace fastt

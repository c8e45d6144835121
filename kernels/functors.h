// Element math written once, as FASTT_HD functors used by the CPU loops and
// the CUDA kernels alike. Each takes and returns the op-math type (float
// for the 16-bit floats). To add an elementwise op: a functor here and a
// row in csrc/ops/elementwise.def (which registers it on both backends).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "csrc/complex.h"
#include "csrc/complex_math.h"
#include "csrc/half.h"
#include "csrc/macros.h"

namespace fastt {
namespace functors {

template <class T>
constexpr bool is_float_v = std::is_floating_point<T>::value;

// A number parameter in op-math type M (add/sub's alpha, addcmul's value,
// lerp's weight), from KernelArgs: f0 (+ f1 i for the complex types) for
// floating math, i0 for the integers and bool.
template <class M>
FASTT_HD M alpha_of(double f0, double f1, int64_t i0) {
  if constexpr (kIsComplex<M>) {
    using V = typename M::value_type;
    return M(V(f0), V(f1));
  } else if constexpr (is_float_v<M>) {
    return M(f0);
  } else {
    return M(i0);
  }
}
template <class M>
FASTT_HD bool alpha_is_one(double f0, double f1, int64_t i0) {
  if constexpr (kIsComplex<M>) return f0 == 1.0 && f1 == 0.0;
  else if constexpr (is_float_v<M>) return f0 == 1.0;
  else return i0 == 1;
}

// The functor a row's kernel runs for storage type T: Fn::For<T> when Fn
// defines it (an op whose 16-bit form needs the 16-bit bit layout, which
// the opmath float it is handed does not carry), else Fn itself. The CPU
// and CUDA adapters of the elementwise rows both go through it.
template <class Fn, class T, class = void>
struct FunctorFor {
  using type = Fn;
};
template <class Fn, class T>
struct FunctorFor<Fn, T, std::void_t<typename Fn::template For<T>>> {
  using type = typename Fn::template For<T>;
};
template <class Fn, class T>
using functor_for = typename FunctorFor<Fn, T>::type;

// ---- unary ----
struct Neg {
  template <class T> FASTT_HD T operator()(T a) const { return -a; }
};
struct Abs {
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (std::is_unsigned<T>::value) return a;
    else return a < T(0) ? T(-a) : a;
  }
};
struct Exp {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::exp(a); }
};
struct Expm1 {
  template <class T> FASTT_HD T operator()(T a) const {
    return cmath::expm1(a);
  }
};
struct Log {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::log(a); }
};
struct Log1p {
  template <class T> FASTT_HD T operator()(T a) const {
    return cmath::log1p(a);
  }
};
struct Log2 {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::log2(a); }
};
struct Sqrt {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::sqrt(a); }
};
struct Rsqrt {
  template <class T> FASTT_HD T operator()(T a) const {
    return T(1) / cmath::sqrt(a);
  }
};
struct Sin {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::sin(a); }
};
struct Cos {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::cos(a); }
};
struct Tanh {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::tanh(a); }
};
struct Sigmoid {
  template <class T> FASTT_HD T operator()(T a) const {
    return T(1) / (T(1) + cmath::exp(-a));
  }
};
struct Relu {  // NaN propagates, like torch.relu
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (std::is_unsigned<T>::value) return a;  // nvcc #186-D
    else return a < T(0) ? T(0) : a;
  }
};
struct LeakyRelu {
  double slope;
  template <class T> FASTT_HD T operator()(T a) const {
    return a > T(0) ? a : T(a * T(slope));
  }
};
struct Gelu {  // x * Phi(x), Phi from erfc: no cancellation for x << 0
  template <class T> FASTT_HD T operator()(T a) const {
    return a * T(0.5) * std::erfc(-a * T(0.70710678118654752440));
  }
};
struct GeluTanh {  // 0.5 x (1 + tanh u) written as x sigmoid(2u): no
                   // cancellation in the negative tail
  template <class T> FASTT_HD T operator()(T a) const {
    const T k = T(0.79788456080286535588);  // sqrt(2/pi)
    const T u = k * (a + T(0.044715) * a * a * a);
    return a / (T(1) + std::exp(T(-2) * u));
  }
};
// Fused activation gradients: (grad, saved) -> grad_input, one pass.
struct ReluBackward {
  template <class T> FASTT_HD T operator()(T g, T y) const {
    return y > T(0) ? g : T(0);
  }
};
struct SigmoidBackward {
  template <class T> FASTT_HD T operator()(T g, T y) const {
    return g * y * (T(1) - y);
  }
};
struct TanhBackward {
  template <class T> FASTT_HD T operator()(T g, T y) const {
    return g * (T(1) - y * y);
  }
};
struct SiluBackward {
  template <class T> FASTT_HD T operator()(T g, T x) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    return g * s * (T(1) + x * (T(1) - s));
  }
};
struct GeluBackward {  // d/dx x * Phi(x) = Phi(x) + x * phi(x)
  template <class T> FASTT_HD T operator()(T g, T x) const {
    const T cdf = T(0.5) * std::erfc(-x * T(0.70710678118654752440));
    const T pdf = std::exp(T(-0.5) * x * x) * T(0.39894228040143267794);
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBackward {  // with s = sigmoid(2u) = (1 + tanh u) / 2:
                           // s + 2 x s (1 - s) u'
  template <class T> FASTT_HD T operator()(T g, T x) const {
    const T k = T(0.79788456080286535588), c = T(0.044715);
    const T x2 = x * x;
    const T s = T(1) / (T(1) + std::exp(T(-2) * k * x * (T(1) + c * x2)));
    const T dinner = k * (T(1) + T(3) * c * x2);
    return g * (s + T(2) * x * s * (T(1) - s) * dinner);
  }
};
struct Silu {
  template <class T> FASTT_HD T operator()(T a) const {
    return a / (T(1) + cmath::exp(-a));
  }
};
struct Erf {
  template <class T> FASTT_HD T operator()(T a) const { return std::erf(a); }
};
struct Sign {
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (std::is_same<T, bool>::value) return a;
    else if constexpr (std::is_unsigned<T>::value) return T(a > T(0));
    else return T((T(0) < a) - (a < T(0)));
  }
};
// sgn: z / |z| for complex z, each part divided by |z| (hypot), 0 at 0,
// as torch; sign of reals.
struct Sgn {
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (kIsComplex<T>) {
      if (a.re == 0 && a.im == 0) return T();
      const auto r = complex_abs(a);
      return T(a.re / r, a.im / r);
    } else {
      return Sign{}(a);
    }
  }
};
struct Floor {
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (is_float_v<T>) return std::floor(a); else return a;
  }
};
struct Ceil {
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (is_float_v<T>) return std::ceil(a); else return a;
  }
};
struct Round {  // half to even, like torch.round
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (is_float_v<T>) return std::nearbyint(a); else return a;
  }
};
struct Trunc {
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (is_float_v<T>) return std::trunc(a); else return a;
  }
};
struct Reciprocal {
  template <class T> FASTT_HD T operator()(T a) const { return T(1) / a; }
};
struct Square {
  template <class T> FASTT_HD T operator()(T a) const { return a * a; }
};
struct LogicalNot {
  template <class T> FASTT_HD bool operator()(T a) const { return !bool(a); }
};
struct BitwiseNot {
  template <class T> FASTT_HD T operator()(T a) const {
    if constexpr (std::is_same<T, bool>::value) return !a;
    else return T(~a);
  }
};

// ---- unary, float results (integer inputs arrive promoted) ----
struct Exp2 {
  template <class T> FASTT_HD T operator()(T a) const {
    return cmath::exp2(a);
  }
};
struct Log10 {
  template <class T> FASTT_HD T operator()(T a) const {
    return cmath::log10(a);
  }
};
struct Tan {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::tan(a); }
};
struct Asin {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::asin(a); }
};
struct Acos {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::acos(a); }
};
struct Atan {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::atan(a); }
};
struct Sinh {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::sinh(a); }
};
struct Cosh {
  template <class T> FASTT_HD T operator()(T a) const { return cmath::cosh(a); }
};
struct Asinh {
  template <class T> FASTT_HD T operator()(T a) const {
    return cmath::asinh(a);
  }
};
struct Acosh {
  template <class T> FASTT_HD T operator()(T a) const {
    return cmath::acosh(a);
  }
};
struct Atanh {
  template <class T> FASTT_HD T operator()(T a) const {
    return cmath::atanh(a);
  }
};
struct Erfc {
  template <class T> FASTT_HD T operator()(T a) const { return std::erfc(a); }
};
// Inverse error function: CUDA's erfinv on the device; on the host a
// rational first guess (M. Giles, "Approximating the erfinv function")
// refined by Newton steps, on erfc near +-1 where erf(x) - y would cancel:
// float64 is accurate to a few ulp.
template <class T> FASTT_HD T erfinv_host(T y) {
  if (!(y > T(-1) && y < T(1))) {
    if (y == T(1)) return T(INFINITY);
    if (y == T(-1)) return T(-INFINITY);
    return T(NAN);
  }
  const double yd = double(y), ay = yd < 0 ? -yd : yd;
  double w = -std::log((1.0 - ay) * (1.0 + ay)), x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;   p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;  p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;   p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;      p = 1.50140941 + p * w;
    x = p * ay;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;   p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;   p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;       p = 2.83297682 + p * w;
    x = p * ay;
  }
  for (int k = 0; k < 3; ++k) {  // Newton over erf'(x) = 2/sqrt(pi) e^-x^2
    const double d = 1.1283791670955126 * std::exp(-x * x);
    if (ay > 0.5) x += (std::erfc(x) - (1.0 - ay)) / d;  // 1 - ay is exact
    else x -= (std::erf(x) - ay) / d;
  }
  return T(yd < 0 ? -x : x);
}
struct Erfinv {
  template <class T> FASTT_HD T operator()(T a) const {
#ifdef __CUDA_ARCH__
    return erfinv(a);
#else
    return erfinv_host(a);
#endif
  }
};
// lgamma_r on the host: glibc's lgamma writes the global signgam, a data
// race when a parallel loop calls it from several threads.
struct Lgamma {
  template <class T> FASTT_HD T operator()(T a) const {
#ifdef __CUDA_ARCH__
    return std::lgamma(a);
#else
    int sign;
    if constexpr (std::is_same<T, float>::value) return ::lgammaf_r(a, &sign);
    else return T(::lgamma_r(double(a), &sign));
#endif
  }
};
// digamma: reflection below 0, recurrence up to 10, then the asymptotic
// series (error below 1e-16 there); 0 gives -inf and negative integers
// NaN (torch's values).
struct Digamma {
  template <class T> FASTT_HD T operator()(T a) const {
    double x = double(a), r = 0;
    if (x == 0) return T(std::copysign(INFINITY, -x));
    if (x < 0) {
      if (x == std::floor(x)) return T(NAN);
      const double pi = 3.14159265358979323846;
      r = -pi / std::tan(pi * x);  // digamma(1 - x) - pi / tan(pi x)
      x = 1 - x;
    }
    while (x < 10) {
      r -= 1 / x;
      x += 1;
    }
    const double f = 1 / (x * x);  // - sum B2k / (2k x^2k), k = 1..6
    const double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 +
                     f * (1.0 / 240 + f * (-1.0 / 132 +
                     f * (691.0 / 32760))))));
    return T(r + std::log(x) - 0.5 / x + t);
  }
};
// trigamma (polygamma(1, x)), digamma's derivative, the same way.
struct Trigamma {
  template <class T> FASTT_HD T operator()(T a) const {
    double x = double(a), sign = 1, r = 0;
    const double pi = 3.14159265358979323846;
    if (x < 0.5) {  // psi1(x) = -psi1(1 - x) + pi^2 / sin^2(pi x)
      const double s = std::sin(pi * x);
      r = pi * pi / (s * s);
      sign = -1;
      x = 1 - x;
    }
    double acc = 0;
    while (x < 10) {
      acc += 1 / (x * x);
      x += 1;
    }
    const double f = 1 / (x * x);  // 1/x + 1/2x^2 + sum B2k / x^(2k+1)
    const double t = 1 / x + f / 2 + (f / x) * (1.0 / 6 + f * (-1.0 / 30 +
                     f * (1.0 / 42 + f * (-1.0 / 30 + f * (5.0 / 66 +
                     f * (-691.0 / 2730))))));
    return T(r + sign * (acc + t));
  }
};
struct Deg2rad {
  template <class T> FASTT_HD T operator()(T a) const {
    return a * T(0.017453292519943295);
  }
};
struct Rad2deg {
  template <class T> FASTT_HD T operator()(T a) const {
    return a * T(57.295779513082323);
  }
};
struct Frac {
  template <class T> FASTT_HD T operator()(T a) const {
    return a - std::trunc(a);
  }
};
// ---- unary, bool results (any input dtype) ----
// A complex number is NaN or infinite when either part is, finite when
// both are (torch's).
struct IsNan {
  template <class T> FASTT_HD bool operator()(T a) const {
    if constexpr (kIsComplex<T>) return a.re != a.re || a.im != a.im;
    else if constexpr (is_float_v<T>) return a != a;
    else return false;
  }
};
struct IsInf {
  template <class T> FASTT_HD bool operator()(T a) const {
    if constexpr (kIsComplex<T>) return std::isinf(a.re) || std::isinf(a.im);
    else if constexpr (is_float_v<T>) return std::isinf(a);
    else return false;
  }
};
struct IsFinite {
  template <class T> FASTT_HD bool operator()(T a) const {
    if constexpr (kIsComplex<T>)
      return std::isfinite(a.re) && std::isfinite(a.im);
    else if constexpr (is_float_v<T>) return std::isfinite(a);
    else return true;
  }
};
struct IsPosInf {
  template <class T> FASTT_HD bool operator()(T a) const {
    if constexpr (is_float_v<T>) return a > T(0) && std::isinf(a);
    else return false;
  }
};
struct IsNegInf {
  template <class T> FASTT_HD bool operator()(T a) const {
    if constexpr (is_float_v<T>) return a < T(0) && std::isinf(a);
    else return false;
  }
};
struct Signbit {
  template <class T> FASTT_HD bool operator()(T a) const {
    if constexpr (is_float_v<T>) {
#if defined(__CUDA_ARCH__)
      return std::signbit(a);
#else
      // The sign bit read from the bits: GCC 12 dies (internal compiler
      // error) vectorizing __builtin_signbit of a converted bfloat16.
      if constexpr (sizeof(T) == 8) {
        uint64_t u;
        std::memcpy(&u, &a, 8);
        return (u >> 63) != 0;
      } else {
        const float f = static_cast<float>(a);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return (u >> 31) != 0;
      }
#endif
    } else if constexpr (std::is_signed<T>::value) return a < T(0);
    else return false;
  }
};

// ---- binary ----
// alpha is pre-converted to the op-math type by the kernel.
template <class A>
struct AddAlpha {
  A alpha;
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return a + T(alpha) * b;
  }
};
struct Add {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (std::is_same<T, bool>::value) return a || b;
    else return a + b;
  }
};
template <class A>
struct SubAlpha {
  A alpha;
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return a - T(alpha) * b;
  }
};
struct Mul {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (std::is_same<T, bool>::value) return a && b;
    else return a * b;
  }
};
struct Div {  // true division (floats only; ints are promoted first)
  template <class T> FASTT_HD T operator()(T a, T b) const { return a / b; }
};
// min / -1 traps (SIGFPE) on x86 for int32/int64; torch wraps to min, so
// integer division ops route b == -1 through an unsigned negation.
template <class T> FASTT_HD T wrapping_neg(T a) {
  using U = typename std::make_unsigned<T>::type;
  return T(U(0) - U(a));
}
struct DivTrunc {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) return std::trunc(a / b);
    else if constexpr (std::is_signed<T>::value) {
      if (b == T(-1)) return wrapping_neg(a);
      return b == T(0) ? T(0) : T(a / b);  // kernels check b != 0 first
    } else return b == T(0) ? T(0) : T(a / b);
  }
};
struct DivFloor {  // Python's //
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) {
      if (b == T(0)) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
      T floordiv;
      if (div != T(0)) {
        floordiv = std::floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
      } else {
        floordiv = std::copysign(T(0), a / b);
      }
      return floordiv;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed<T>::value) {
        if (b == T(-1)) return wrapping_neg(a);
        T q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
      } else {
        return a / b;
      }
    }
  }
};
struct Remainder {  // Python's %: result has the sign of b
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) {
      T m = std::fmod(a, b);
      if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
      return m;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed<T>::value) {
        if (b == T(-1)) return T(0);
        T m = a % b;
        if (m != 0 && ((b < 0) != (m < 0))) m += b;
        return m;
      } else {
        return a % b;
      }
    }
  }
};
struct Fmod {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) return std::fmod(a, b);
    else if constexpr (std::is_signed<T>::value) {
      return (b == T(0) || b == T(-1)) ? T(0) : T(a % b);
    } else return b == T(0) ? T(0) : T(a % b);
  }
};
struct Pow {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T> || kIsComplex<T>) {
      return cmath::pow(a, b);
    } else if constexpr (std::is_same<T, bool>::value) {
      return a || !b;
    } else {
      // Integer power by squaring; negative exponents follow torch:
      // 1 for base 1, +-1 for base -1, else 0.
      if constexpr (std::is_signed<T>::value) {
        if (b < 0) {
          if (a == 1) return T(1);
          if (a == -1) return (b % 2 == 0) ? T(1) : T(-1);
          return T(0);
        }
      }
      T result = 1;
      T base = a;
      auto e = b;
      while (e) {
        if (e & 1) result = T(result * base);
        base = T(base * base);
        e >>= 1;
      }
      return result;
    }
  }
};
struct Maximum {  // NaN-propagating (selects: see ClampBoth)
  template <class T> FASTT_HD T operator()(T a, T b) const {
    T r = a > b ? a : b;
    if constexpr (is_float_v<T>) {
      r = b != b ? b : r;
      r = a != a ? a : r;
    }
    return r;
  }
};
struct Minimum {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    T r = a < b ? a : b;
    if constexpr (is_float_v<T>) {
      r = b != b ? b : r;
      r = a != a ? a : r;
    }
    return r;
  }
};
struct Fmax {  // NaN-ignoring: the other operand wins over a NaN
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) return std::fmax(a, b);  // fmax(0, -0) = 0
    else return a > b ? a : b;
  }
};
struct Fmin {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) return std::fmin(a, b);
    else return a < b ? a : b;
  }
};
struct Hypot {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return std::hypot(a, b);
  }
};
// log(exp(a) + exp(b)) without overflow; equal infinities stay themselves.
struct Logaddexp {
  // Complex (torch's): the operand with the larger real part leads,
  // max + log1p(exp(min - max)); a NaN part anywhere gives NaN + NaN i;
  // equal infinite real parts give min (-inf) or log(e^min + e^max).
  template <class R> FASTT_HD Complex<R> operator()(Complex<R> a,
                                                    Complex<R> b) const {
    const bool nan_a = a.re != a.re || a.im != a.im;
    const bool nan_b = b.re != b.re || b.im != b.im;
    if (nan_a || nan_b) return {R(NAN), R(NAN)};
    const Complex<R> lo = a.re < b.re ? a : b, hi = a.re < b.re ? b : a;
    if (std::isinf(lo.re) && lo.re == hi.re)
      return lo.re < 0 ? lo : cmath::log(cmath::exp(lo) + cmath::exp(hi));
    return cmath::log1p(cmath::exp(lo - hi)) + hi;
  }
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if (std::isinf(a) && a == b) return a;
    const T m = a > b ? a : b;
    const T d = a > b ? b - a : a - b;
    if (d != d) return a + b;  // a NaN
    return m + std::log1p(std::exp(d));
  }
};
struct Logaddexp2 {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if (std::isinf(a) && a == b) return a;
    const T m = a > b ? a : b;
    const T d = a > b ? b - a : a - b;
    if (d != d) return a + b;
    return m + std::log1p(std::exp2(d)) * T(1.4426950408889634);
  }
};
struct Copysign {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return std::copysign(a, b);
  }
};
struct NextafterStd {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return std::nextafter(a, b);
  }
};
// 16-bit nextafter: a and b arrive as floats (exact 16-bit values); the
// step is one unit of the 16-bit format S's bits (sign-magnitude), from 0
// the smallest subnormal towards b.
template <class S>
struct Nextafter16 {
  FASTT_HD float operator()(float a, float b) const {
    if (a != a || b != b) return a + b;  // NaN
    if (a == b) return b;
    uint16_t bits = S(a).bits;
    if (a == 0.0f) {
      bits = b > 0.0f ? uint16_t(0x0001) : uint16_t(0x8001);
    } else if ((a < b) == (a > 0.0f)) {
      ++bits;  // away from zero
    } else {
      --bits;  // towards zero
    }
    return float(S::from_bits(bits));
  }
};
struct Nextafter : NextafterStd {
  template <class S>
  using For = std::conditional_t<std::is_same<S, Half>::value ||
                                     std::is_same<S, BFloat16>::value,
                                 Nextafter16<S>, NextafterStd>;
};
struct Heaviside {  // the step: values where a == 0
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (std::is_same<T, bool>::value) return a ? true : b;
    else return a == T(0) ? b : T(a > T(0));
  }
};
// Shifts as torch: a count outside [0, bits) gives 0 (left) or the sign
// fill (right); the left shift wraps in the unsigned type.
struct LeftShift {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    using U = typename std::make_unsigned<T>::type;
    constexpr T kBits = T(sizeof(T) * 8);
    if constexpr (std::is_signed<T>::value) {
      if (b < T(0)) return T(0);
    }
    if (b >= kBits) return T(0);
    return T(U(U(a) << b));
  }
};
struct RightShift {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    constexpr T kBits = T(sizeof(T) * 8);
    if constexpr (std::is_signed<T>::value) {
      if (b < T(0) || b >= kBits) return a < T(0) ? T(-1) : T(0);
    } else {
      if (b >= kBits) return T(0);
    }
    return T(a >> b);
  }
};
struct Atan2 {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return std::atan2(a, b);
  }
};
struct Eq {
  template <class T> FASTT_HD bool operator()(T a, T b) const { return a == b; }
};
struct Ne {
  template <class T> FASTT_HD bool operator()(T a, T b) const { return a != b; }
};
struct Lt {
  template <class T> FASTT_HD bool operator()(T a, T b) const { return a < b; }
};
struct Le {
  template <class T> FASTT_HD bool operator()(T a, T b) const { return a <= b; }
};
struct Gt {
  template <class T> FASTT_HD bool operator()(T a, T b) const { return a > b; }
};
struct Ge {
  template <class T> FASTT_HD bool operator()(T a, T b) const { return a >= b; }
};
struct LogicalAnd {
  template <class T> FASTT_HD bool operator()(T a, T b) const {
    return bool(a) && bool(b);
  }
};
struct LogicalOr {
  template <class T> FASTT_HD bool operator()(T a, T b) const {
    return bool(a) || bool(b);
  }
};
struct LogicalXor {
  template <class T> FASTT_HD bool operator()(T a, T b) const {
    return bool(a) != bool(b);
  }
};
struct BitwiseAnd {
  template <class T> FASTT_HD T operator()(T a, T b) const { return T(a & b); }
};
struct BitwiseOr {
  template <class T> FASTT_HD T operator()(T a, T b) const { return T(a | b); }
};
struct BitwiseXor {
  template <class T> FASTT_HD T operator()(T a, T b) const { return T(a ^ b); }
};

// ---- ternary ----
struct Where {
  template <class T> FASTT_HD T operator()(bool c, T a, T b) const {
    return c ? a : b;
  }
};
// torch.clamp: NaN propagates from the input; min is applied before max.
// nan_to_num: NaN, +inf and -inf replaced (the values already converted
// to the compute type, so float16's +inf becomes its largest finite).
template <class M>
struct NanToNum {
  M nan, posinf, neginf;
  template <class T> FASTT_HD T operator()(T x) const {
    // selects, not branches, so the CPU loop vectorizes
    T r = x == T(INFINITY) ? T(posinf) : x;
    r = x == T(-INFINITY) ? T(neginf) : r;
    return x != x ? T(nan) : r;
  }
};

// NaN in x or in a bound propagates (torch: clamp = min(max(x, lo), hi)
// with NaN-propagating max/min); lo > hi gives hi.
// The clamps and NaN-propagating max/min are written as selects, the NaN
// cases last in order of precedence (x's NaN first, as torch): early
// returns kept GCC from vectorizing them (clamp ran 5x torch's time).
struct ClampBoth {
  template <class T> FASTT_HD T operator()(T x, T lo, T hi) const {
    T r = x < lo ? lo : x;
    r = r > hi ? hi : r;
    if constexpr (is_float_v<T>) {
      r = hi != hi ? hi : r;
      r = lo != lo ? lo : r;
      r = x != x ? x : r;
    }
    return r;
  }
};
struct ClampMin {
  template <class T> FASTT_HD T operator()(T x, T lo) const {
    T r = x < lo ? lo : x;
    if constexpr (is_float_v<T>) {
      r = lo != lo ? lo : r;
      r = x != x ? x : r;
    }
    return r;
  }
};
struct ClampMax {
  template <class T> FASTT_HD T operator()(T x, T hi) const {
    T r = x > hi ? hi : x;
    if constexpr (is_float_v<T>) {
      r = hi != hi ? hi : r;
      r = x != x ? x : r;
    }
    return r;
  }
};
struct Lerp {  // torch's two-sided form for accuracy near weight 1
  template <class T> FASTT_HD T operator()(T a, T b, T w) const {
    T diff = b - a;
    return small(w) ? a + w * diff : b - diff * (T(1) - w);
  }
  // |w| < 1/2, as torch picks the form (the modulus for complex w).
  template <class T> FASTT_HD static bool small(T w) {
    if constexpr (kIsComplex<T>) return complex_abs(w) < 0.5;
    else return (w < T(0) ? -w : w) < T(0.5);
  }
};
// A number weight stays in the compute type's opmath (float for 16-bit
// types), as torch's lerp(Scalar): rounding 0.4 to half would move results.
template <class V>
struct LerpScalar {
  V w;
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return Lerp{}(a, b, T(w));
  }
};
template <class V>
struct Addcmul {
  V value;
  template <class T> FASTT_HD T operator()(T a, T b, T c) const {
    return a + T(value) * b * c;
  }
};
template <class V>
struct Addcdiv {
  V value;
  template <class T> FASTT_HD T operator()(T a, T b, T c) const {
    return a + T(value) * b / c;
  }
};

}  // namespace functors
}  // namespace fastt

#include "kernels/functors_special.h"

// Element math written once, as FASTT_HD functors used by the CPU loops and
// the CUDA kernels alike. Each takes and returns the op-math type (float
// for the 16-bit floats). To add an op: a functor here, a row in ops.def,
// a registration line in kernels/cpu/<family>.cpp.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "csrc/half.h"
#include "csrc/macros.h"

namespace fastt {
namespace functors {

template <class T>
constexpr bool is_float_v = std::is_floating_point<T>::value;

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
  template <class T> FASTT_HD T operator()(T a) const { return std::exp(a); }
};
struct Expm1 {
  template <class T> FASTT_HD T operator()(T a) const { return std::expm1(a); }
};
struct Log {
  template <class T> FASTT_HD T operator()(T a) const { return std::log(a); }
};
struct Log1p {
  template <class T> FASTT_HD T operator()(T a) const { return std::log1p(a); }
};
struct Log2 {
  template <class T> FASTT_HD T operator()(T a) const { return std::log2(a); }
};
struct Sqrt {
  template <class T> FASTT_HD T operator()(T a) const { return std::sqrt(a); }
};
struct Rsqrt {
  template <class T> FASTT_HD T operator()(T a) const {
    return T(1) / std::sqrt(a);
  }
};
struct Sin {
  template <class T> FASTT_HD T operator()(T a) const { return std::sin(a); }
};
struct Cos {
  template <class T> FASTT_HD T operator()(T a) const { return std::cos(a); }
};
struct Tanh {
  template <class T> FASTT_HD T operator()(T a) const { return std::tanh(a); }
};
struct Sigmoid {
  template <class T> FASTT_HD T operator()(T a) const {
    return T(1) / (T(1) + std::exp(-a));
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
struct Gelu {  // x * Phi(x)
  template <class T> FASTT_HD T operator()(T a) const {
    return a * T(0.5) * (T(1) + std::erf(a * T(0.70710678118654752440)));
  }
};
struct GeluTanh {
  template <class T> FASTT_HD T operator()(T a) const {
    const T k = T(0.79788456080286535588);  // sqrt(2/pi)
    return T(0.5) * a * (T(1) + std::tanh(k * (a + T(0.044715) * a * a * a)));
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
    const T cdf = T(0.5) * (T(1) + std::erf(x * T(0.70710678118654752440)));
    const T pdf = std::exp(T(-0.5) * x * x) * T(0.39894228040143267794);
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBackward {
  template <class T> FASTT_HD T operator()(T g, T x) const {
    const T k = T(0.79788456080286535588), c = T(0.044715);
    const T x2 = x * x;
    const T t = std::tanh(k * x * (T(1) + c * x2));
    const T dinner = k * (T(1) + T(3) * c * x2);
    return g * (T(0.5) * (T(1) + t) +
                T(0.5) * x * (T(1) - t * t) * dinner);
  }
};
struct Silu {
  template <class T> FASTT_HD T operator()(T a) const {
    return a / (T(1) + std::exp(-a));
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
    if constexpr (is_float_v<T>) {
      return std::pow(a, b);
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
struct Maximum {  // NaN-propagating
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a > b ? a : b;
  }
};
struct Minimum {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (is_float_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? a : b;
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
// NaN in x or in a bound propagates (torch: clamp = min(max(x, lo), hi)
// with NaN-propagating max/min); lo > hi gives hi.
struct ClampBoth {
  template <class T> FASTT_HD T operator()(T x, T lo, T hi) const {
    if constexpr (is_float_v<T>) {
      if (x != x) return x;
      if (lo != lo) return lo;
      if (hi != hi) return hi;
    }
    T r = x < lo ? lo : x;
    return r > hi ? hi : r;
  }
};
struct ClampMin {
  template <class T> FASTT_HD T operator()(T x, T lo) const {
    if constexpr (is_float_v<T>) {
      if (x != x) return x;
      if (lo != lo) return lo;
    }
    return x < lo ? lo : x;
  }
};
struct ClampMax {
  template <class T> FASTT_HD T operator()(T x, T hi) const {
    if constexpr (is_float_v<T>) {
      if (x != x) return x;
      if (hi != hi) return hi;
    }
    return x > hi ? hi : x;
  }
};
struct Lerp {  // torch's two-sided form for accuracy near weight 1
  template <class T> FASTT_HD T operator()(T a, T b, T w) const {
    T diff = b - a;
    const T aw = w < T(0) ? -w : w;  // |w|, as torch picks the form
    return (aw < T(0.5)) ? a + w * diff : b - diff * (T(1) - w);
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

// 16-bit floating types stored as raw bits; arithmetic goes through float.
// Usable from host and device code (FASTT_HD), so kernels share one type.
#pragma once
#include <cstdint>
#include <cstring>

#include "macros.h"

namespace fastt {

namespace detail {
FASTT_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
FASTT_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
}  // namespace detail

// IEEE 754 binary16, round-to-nearest-even on conversion from float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  FASTT_HD Half(float f) : bits(from_float(f)) {}
  FASTT_HD operator float() const { return to_float(bits); }

  static FASTT_HD Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  static FASTT_HD uint16_t from_float(float f) {
    uint32_t x = detail::float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan
      return static_cast<uint16_t>(sign | 0x7c00u |
                                   (abs > 0x7f800000u ? 0x200u : 0u));
    }
    if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);
    if (abs < 0x38800000u) {  // subnormal half (or zero)
      // Add 0.5 (as float) so the FPU does the rounding, then take bits.
      float v = detail::bits_float(abs) + 0.5f;
      return static_cast<uint16_t>(sign | (detail::float_bits(v) - 0x3f000000u));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent and round to even
    return static_cast<uint16_t>(sign | (abs >> 13));
  }
  static FASTT_HD float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return detail::bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      if (mant == 0) return detail::bits_float(sign);
      // subnormal: value = mant * 2^-24
      float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
      return sign ? -v : v;
    }
    return detail::bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

// bfloat16: the top 16 bits of a float32, round-to-nearest-even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  FASTT_HD BFloat16(float f) : bits(from_float(f)) {}
  FASTT_HD operator float() const {
    return detail::bits_float(static_cast<uint32_t>(bits) << 16);
  }
  static FASTT_HD BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  static FASTT_HD uint16_t from_float(float f) {
    return round_bits(detail::float_bits(f));
  }
  // float32 bits -> bfloat16 bits: round to nearest even, NaNs quieted.
  // Branch-free, so the block conversion (kernels/cpu/half_block.h)
  // vectorizes the same rule.
  static FASTT_HD constexpr uint16_t round_bits(uint32_t x) {
    return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u
                                     ? (x >> 16) | 0x40u
                                     : (x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
};

// Type kernels compute in: float for the 16-bit floats, T itself otherwise.
template <class T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <class T>
using opmath_t = typename OpMath<T>::type;

}  // namespace fastt

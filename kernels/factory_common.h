// Host-side pieces of the factory and random kernels that the CPU
// (kernels/cpu/factory.cpp) and CUDA (kernels/cuda/factory.cu) backends
// share, so that both give the same values for the same arguments and seed.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "csrc/half.h"
#include "kernels/philox.h"

namespace fastt {
namespace factory {

template <class T>
constexpr bool is_float16_v =
    std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;

// torch's CPU accumulation type for arange: double for float and double,
// float for the 16-bit floats, int64 for integers.
template <class T>
using arange_acc_t = std::conditional_t<
    std::is_integral<T>::value, int64_t,
    std::conditional_t<is_float16_v<T>, float, double>>;

// A uint64 argument (seed, offset, range) passed in an int64 slot.
inline uint64_t arg_u64(int64_t v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

// The largest T strictly below `to` (uniform's [from, to) guarantee when
// rounding to T lands on `to`).
template <class T>
T largest_below(double to) {
  T t = static_cast<T>(to);
  if (static_cast<double>(t) < to) return t;
  if constexpr (is_float16_v<T>) {
    uint16_t b = t.bits;
    if (b == 0x0000u) b = 0x8001u;                // +0 -> -min subnormal
    else if (b == 0x8000u) b = 0x8001u;           // -0 likewise
    else if (b & 0x8000u) b = uint16_t(b + 1u);   // negative: away from 0
    else b = uint16_t(b - 1u);                    // positive: toward 0
    return T::from_bits(b);
  } else {
    return std::nextafter(t, -std::numeric_limits<T>::infinity());
  }
}

// o[0..n) = a random permutation of 0..n-1 by Fisher-Yates on one thread;
// swap k (k = 0 for the last element) draws word k % 2 of Philox block
// offset + k / 2.
template <class T>
void randperm_fill(T* o, int64_t n, uint64_t seed, uint64_t offset) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral<T>::value) o[i] = static_cast<T>(i);
    else o[i] = static_cast<T>(static_cast<opmath_t<T>>(i));
  }
  uint64_t words[2];
  for (int64_t i = n - 1, k = 0; i > 0; --i, ++k) {
    if ((k & 1) == 0)
      philox::bits64_block(philox::block(seed, offset + uint64_t(k / 2)),
                           words);
    const int64_t j = int64_t(words[k & 1] % uint64_t(i + 1));
    T tmp = o[i];
    o[i] = o[j];
    o[j] = tmp;
  }
}

}  // namespace factory
}  // namespace fastt

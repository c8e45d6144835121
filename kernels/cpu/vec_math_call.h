// Calling the vector math table (kernels/cpu/vec_math.h) on any float
// type: float and double ranges go straight to the table's functions;
// float16 / bfloat16 are staged through float32 blocks on the stack (and a
// broadcast operand of a binary row is splatted into its block once).
// Used by the unary and binary adapters (kernels/cpu/unary.cpp, binary.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/half_block.h"
#include "kernels/cpu/vec_math.h"

namespace fastt {
namespace vec_math {

// Elements per staged block (3 float32 blocks fit in 6 KiB of stack).
constexpr int64_t kStage = 512;

template <class T>
constexpr bool kNative =
    std::is_same<T, float>::value || std::is_same<T, double>::value;
template <class T>
using stage_t = std::conditional_t<kNative<T>, T, float>;

// A block of T into its staging type and back: kernels/cpu/half_block.h
// (float and double ranges never stage).
using cpu::to_float_block;
using cpu::from_float_block;

template <class B>
void call1(int idx, const B* x, B* o, int64_t n) {
  if constexpr (std::is_same<B, double>::value) g_table->d1[idx](x, o, n);
  else g_table->f1[idx](x, o, n);
}
template <class B>
void call2(int idx, const B* x, const B* y, B* o, int64_t n) {
  if constexpr (std::is_same<B, double>::value) g_table->d2[idx](x, y, o, n);
  else g_table->f2[idx](x, y, o, n);
}

// o[0, n) = f(x[0, n)) for unary row idx (g_table set).
template <class T>
void unary_range(int idx, const T* x, T* o, int64_t n) {
  if constexpr (kNative<T>) {
    call1(idx, x, o, n);
  } else {
    float buf[kStage];
    for (int64_t i = 0; i < n; i += kStage) {
      const int64_t m = std::min(kStage, n - i);
      to_float_block(x + i, buf, m);
      call1(idx, buf, buf, m);
      from_float_block(buf, o + i, m);
    }
  }
}

// o[0, n) = f(x, y) for binary row idx; an operand flagged `one` is a
// single value broadcast over the range (g_table set).
template <class T>
void binary_range(int idx, const T* x, bool x_one, const T* y, bool y_one,
                  T* o, int64_t n) {
  using B = stage_t<T>;
  if constexpr (kNative<T>) {
    if (!x_one && !y_one) return call2(idx, x, y, o, n);
  }
  B bx[kStage], by[kStage], bo[kStage];
  if (x_one) std::fill(bx, bx + kStage, static_cast<B>(x[0]));
  if (y_one) std::fill(by, by + kStage, static_cast<B>(y[0]));
  for (int64_t i = 0; i < n; i += kStage) {
    const int64_t m = std::min(kStage, n - i);
    if (!x_one) to_float_block(x + i, bx, m);
    if (!y_one) to_float_block(y + i, by, m);
    call2(idx, bx, by, bo, m);
    from_float_block(bo, o + i, m);
  }
}

}  // namespace vec_math
}  // namespace fastt

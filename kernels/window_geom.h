// Shared by the CPU (kernels/cpu/conv.cpp) and CUDA (kernels/cuda/conv.cu)
// convolution-column and pooling kernels: the window read from
// KernelArgs::dims (WindowParam, csrc/ops/conv.h), a 4-D tensor's planes,
// and avg_pool2d's clipped cell, whose math is the same on both.
#pragma once
#include <cstdint>
#include <type_traits>

#include "csrc/dispatch.h"
#include "csrc/half.h"
#include "csrc/macros.h"
#include "csrc/ops/conv.h"
#include "csrc/tensor.h"

namespace fastt {
namespace window_geom {

struct Window {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, count_pad, divisor;
};

inline Window window_of(const KernelArgs& a) {
  const int64_t* d = a.dims.data();
  return {d[kWinKernelH],   d[kWinKernelW],   d[kWinStrideH], d[kWinStrideW],
          d[kWinPadH],      d[kWinPadW],      d[kWinDilationH],
          d[kWinDilationW], d[kWinOutH],      d[kWinOutW],
          d[kWinCountPad],  d[kWinDivisor]};
}

// A 4-D tensor's sizes and strides (elements).
struct Planes {
  int64_t N, C, H, W;
  int64_t sn, sc, sh, sw;
  // Element offset of plane n * C + c.
  FASTT_HD int64_t offset(int64_t plane) const {
    return (plane / C) * sn + (plane % C) * sc;
  }
};

inline Planes planes_of(const Tensor& t) {
  return {t.sizes()[0],   t.sizes()[1],   t.sizes()[2],   t.sizes()[3],
          t.strides()[0], t.strides()[1], t.strides()[2], t.strides()[3]};
}

// The clipped window of avg_pool2d's output (oy, ox) and its divisor.
struct AvgCell {
  int64_t y0, y1, x0, x1, divisor;
};
FASTT_HD AvgCell avg_cell(const Window& w, int64_t H, int64_t W, int64_t oy,
                          int64_t ox) {
  int64_t y0 = oy * w.sh - w.ph, x0 = ox * w.sw - w.pw;
  int64_t y1 = y0 + w.kh < H + w.ph ? y0 + w.kh : H + w.ph;
  int64_t x1 = x0 + w.kw < W + w.pw ? x0 + w.kw : W + w.pw;
  const int64_t pool = (y1 - y0) * (x1 - x0);
  y0 = y0 > 0 ? y0 : 0;
  x0 = x0 > 0 ? x0 : 0;
  y1 = y1 < H ? y1 : H;
  x1 = x1 < W ? x1 : W;
  const int64_t div = w.divisor     ? w.divisor
                      : w.count_pad ? pool
                                    : (y1 - y0) * (x1 - x0);
  return {y0, y1, x0, x1, div};
}

// avg_pool2d sums in float for the 16-bit floats, int64 for integers (whose
// mean truncates like torch's integer division).
template <class T>
using avg_acc_t =
    std::conditional_t<std::is_integral<T>::value, int64_t, opmath_t<T>>;

}  // namespace window_geom
}  // namespace fastt

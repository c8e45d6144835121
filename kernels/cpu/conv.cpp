// CPU kernels of convolution and pooling: im2col / col2im (the GEMM around
// them lives in csrc/ops/conv.cpp) and the 2-D pools with their backward.
// Tensors are [N, C, H, W]; each kernel runs over the N*C planes, threaded
// above a grain. Arguments: the rows in ops.def and WindowParam in
// csrc/ops/conv.h. The op layer has validated everything: nothing throws.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "csrc/ops/conv.h"
#include "kernels/cpu/loop.h"
#include "kernels/cpu/onednn_conv.h"
#include "kernels/window_geom.h"

// Without no-trapping-math GCC keeps max_pool2d's float selects as
// branches (a comparison could trap). No FP exception flags are read
// here; fastt's build passes the flag (CMakeLists.txt), the pragma is for
// builds that do not (tests/cuda_emu).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NO_TRAPPING_MATH__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace fastt {
namespace {
using namespace cpu;
using namespace window_geom;

// Runs body(plane) over N*C planes, each worth `work` elements.
template <class F>
inline void for_each_plane(int64_t planes, int64_t work, F&& body) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(
                                                              1, work));
  parallel_for(0, planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) body(p);
  });
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Output positions o in [lo, hi) read an in-range input index
// o * stride - pad + offset (in [0, size)).
inline void valid_range(int64_t size, int64_t stride, int64_t pad,
                        int64_t offset, int64_t out, int64_t* lo,
                        int64_t* hi) {
  const int64_t shift = pad - offset;  // i = o * stride - shift
  *lo = shift > 0 ? ceil_div(shift, stride) : 0;
  const int64_t end = size + shift;  // need o * stride < end
  *hi = end > 0 ? std::min(out, ceil_div(end, stride)) : 0;
  if (*lo > *hi) *lo = *hi;
}

// valid_range for every kernel offset t * dil of one dim, computed once per
// kernel call: the divisions in it cost more than a short row's copy.
struct TapRanges {
  static constexpr int64_t kMax = 32;  // taps beyond are computed on use
  int64_t lo[kMax], hi[kMax];
  int64_t size, stride, pad, dil, out;
  TapRanges(int64_t k, int64_t size_, int64_t stride_, int64_t pad_,
            int64_t dil_, int64_t out_)
      : size(size_), stride(stride_), pad(pad_), dil(dil_), out(out_) {
    for (int64_t t = 0; t < std::min(k, kMax); ++t)
      valid_range(size, stride, pad, t * dil, out, &lo[t], &hi[t]);
  }
  void at(int64_t t, int64_t* l, int64_t* h) const {
    if (t < kMax) {
      *l = lo[t];
      *h = hi[t];
    } else {
      valid_range(size, stride, pad, t * dil, out, l, h);
    }
  }
};

template <class T>
inline bool is_nan(T v) {
  if constexpr (std::is_integral<T>::value) return false;
  else return v != v;
}

// take ? a : b by bit masks. GCC keeps a ?: on floats (and often on the
// index beside them) as a branch, which random data mispredicts.
template <class V>
inline V select(bool take, V a, V b) {
  using U = std::conditional_t<sizeof(V) == 8, uint64_t,
            std::conditional_t<sizeof(V) == 4, uint32_t,
            std::conditional_t<sizeof(V) == 2, uint16_t, uint8_t>>>;
  static_assert(sizeof(U) == sizeof(V), "select: unsupported size");
  U ua, ub;
  std::memcpy(&ua, &a, sizeof(V));
  std::memcpy(&ub, &b, sizeof(V));
  const U mask = U(U(0) - U(take));
  const U r = U((ua & mask) | (ub & U(~mask)));
  V out;
  std::memcpy(&out, &r, sizeof(V));
  return out;
}

// ---- im2col: cols[n, (c*kh + i)*kw + j, oy*ow + ox] = x[n, c, iy, ix] ----
template <class T>
struct Im2col {
  static void run(KernelArgs& a) {
    const Planes x = planes_of(*a.in[0]);
    const Window w = window_of(a);
    const Tensor& cols = *a.out;
    const int64_t cn = cols.strides()[0], cr = cols.strides()[1];
    const T* X = static_cast<const T*>(a.in[0]->data_ptr());
    T* Cp = static_cast<T*>(cols.data_ptr());
    const int64_t kk = w.kh * w.kw, L = w.oh * w.ow;
    const TapRanges ry(w.kh, x.H, w.sh, w.ph, w.dh, w.oh);
    const TapRanges rx(w.kw, x.W, w.sw, w.pw, w.dw, w.ow);
    for_each_plane(x.N * x.C, kk * L, [&](int64_t p) {
      const T* xp = X + x.offset(p);
      T* base = Cp + (p / x.C) * cn + (p % x.C) * kk * cr;
      for (int64_t i = 0; i < w.kh; ++i) {
        int64_t ylo, yhi;
        ry.at(i, &ylo, &yhi);
        for (int64_t j = 0; j < w.kw; ++j) {
          T* row = base + (i * w.kw + j) * cr;
          int64_t xlo, xhi;
          rx.at(j, &xlo, &xhi);
          const int64_t ix0 = xlo * w.sw - w.pw + j * w.dw;
          // Rows reading above / below the input are one zero block each
          // (the rows of one tap are contiguous).
          std::fill(row, row + ylo * w.ow, T(0));
          std::fill(row + yhi * w.ow, row + w.oh * w.ow, T(0));
          const int64_t n = xhi - xlo;
          const bool dense = w.sw == 1 && x.sw == 1;
          const int64_t step = w.sw * x.sw;
          for (int64_t oy = ylo; oy < yhi; ++oy) {
            T* r = row + oy * w.ow;
            const int64_t iy = oy * w.sh - w.ph + i * w.dh;
            const T* xr = xp + iy * x.sh + ix0 * x.sw;
            // Plain loops: rows are often a few elements, where library
            // calls cost more than the copy.
            for (int64_t k = 0; k < xlo; ++k) r[k] = T(0);
            T* rm = r + xlo;
            if (dense) {
              for (int64_t k = 0; k < n; ++k) rm[k] = xr[k];
            } else {
              for (int64_t k = 0; k < n; ++k) rm[k] = xr[k * step];
            }
            for (int64_t k = xhi; k < w.ow; ++k) r[k] = T(0);
          }
        }
      }
    });
  }
};

// ---- col2im: out[n, c, iy, ix] = sum of the cols entries that read it ----
// (plus bias[c] when in1, a dense [C] tensor, is given; else in1 is null)
template <class T>
struct Col2im {
  static void run(KernelArgs& a) {
    const Tensor& cols = *a.in[0];
    Tensor& out = *a.out;  // dense
    const Window w = window_of(a);
    const int64_t C = out.sizes()[1], H = out.sizes()[2], W = out.sizes()[3];
    const int64_t cn = cols.strides()[0], cr = cols.strides()[1];
    const T* Cp = static_cast<const T*>(cols.data_ptr());
    T* O = static_cast<T*>(out.data_ptr());
    const T* bias =
        a.in[1] ? static_cast<const T*>(a.in[1]->data_ptr()) : nullptr;
    const int64_t kk = w.kh * w.kw;
    const TapRanges ry(w.kh, H, w.sh, w.ph, w.dh, w.oh);
    const TapRanges rx(w.kw, W, w.sw, w.pw, w.dw, w.ow);
    for_each_plane(out.sizes()[0] * C, kk * w.oh * w.ow, [&](int64_t p) {
      T* op = O + p * H * W;
      std::fill(op, op + H * W, bias ? bias[p % C] : T(0));
      const T* base = Cp + (p / C) * cn + (p % C) * kk * cr;
      for (int64_t i = 0; i < w.kh; ++i) {
        int64_t ylo, yhi;
        ry.at(i, &ylo, &yhi);
        for (int64_t j = 0; j < w.kw; ++j) {
          const T* row = base + (i * w.kw + j) * cr;
          int64_t xlo, xhi;
          rx.at(j, &xlo, &xhi);
          const int64_t ix0 = xlo * w.sw - w.pw + j * w.dw;
          for (int64_t oy = ylo; oy < yhi; ++oy) {
            const int64_t iy = oy * w.sh - w.ph + i * w.dh;
            T* orow = op + iy * W + ix0;
            const T* r = row + oy * w.ow + xlo;
            const int64_t n = xhi - xlo;
            if (w.sw == 1) {
              for (int64_t k = 0; k < n; ++k)
                orow[k] = T(opmath_t<T>(orow[k]) + opmath_t<T>(r[k]));
            } else {
              for (int64_t k = 0; k < n; ++k)
                orow[k * w.sw] =
                    T(opmath_t<T>(orow[k * w.sw]) + opmath_t<T>(r[k]));
            }
          }
        }
      }
    });
  }
};

// ---- conv_rows: the [O, n, L] <-> [n, O, L] reorders around the merged
// products, with the bias added on the way (row by row, so each row is a
// contiguous copy or fill the compiler vectorizes) ----
template <class T>
struct ConvRows {
  static void run(KernelArgs& a) {
    const Tensor& out = *a.out;  // dense [A, B, L]
    const int64_t A = out.sizes()[0], B = out.sizes()[1], L = out.sizes()[2];
    T* O = static_cast<T*>(out.data_ptr());
    const T* bias =
        a.in[1] ? static_cast<const T*>(a.in[1]->data_ptr()) : nullptr;
    const Tensor* in = a.in[0];
    const T* X = in ? static_cast<const T*>(in->data_ptr()) : nullptr;
    // in0 [B, A, h, w]: element strides of each dim.
    int64_t sb = 0, sa = 0, sh = 0, sw = 0, w = L;
    if (in) {
      sb = in->strides()[0], sa = in->strides()[1];
      sh = in->strides()[2], sw = in->strides()[3];
      w = in->sizes()[3];
    }
    const int64_t h = L / std::max<int64_t>(1, w);
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, L));
    parallel_for(0, A * B, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t ia = r / B, ib = r % B;
        T* o = O + r * L;
        if (!X) {  // in place: out += bias
          const opmath_t<T> bv = opmath_t<T>(bias[ib]);
          for (int64_t k = 0; k < L; ++k) o[k] = T(opmath_t<T>(o[k]) + bv);
          continue;
        }
        const T* src = X + ib * sb + ia * sa;
        const opmath_t<T> bv = bias ? opmath_t<T>(bias[ib]) : opmath_t<T>(0);
        for (int64_t y = 0; y < h; ++y) {
          const T* s = src + y * sh;
          T* oy = o + y * w;
          if (!bias && sw == 1) {
            for (int64_t k = 0; k < w; ++k) oy[k] = s[k];
          } else if (sw == 1) {
            for (int64_t k = 0; k < w; ++k) oy[k] = T(opmath_t<T>(s[k]) + bv);
          } else {
            for (int64_t k = 0; k < w; ++k)
              oy[k] = T(opmath_t<T>(s[k * sw]) + bv);
          }
        }
      }
    });
  }
};

// ---- max_pool2d: torch's result (first maximum in row-major window order,
// a NaN wins, the index starts at the first in-range tap) computed tap by
// tap over a block of outputs, so the inner loop runs along a row with no
// dependency between iterations and compiles to selects: a per-window loop
// branches on every comparison, and on real data those mispredict about
// half the time (64x16x8x8, k2: 215 -> 26 us). ----
template <class T>
struct MaxPool {
  static constexpr int64_t kBlock = 64;  // outputs per row block

  static void run(KernelArgs& a) {
    const Planes x = planes_of(*a.in[0]);
    const Window w = window_of(a);
    const T* X = static_cast<const T*>(a.in[0]->data_ptr());
    T* O = static_cast<T*>(a.out->data_ptr());
    int64_t* I = static_cast<int64_t*>(a.out2->data_ptr());
    const int64_t L = w.oh * w.ow;
    const TapRanges rx(w.kw, x.W, w.sw, w.pw, w.dw, w.ow);
    // Tap offsets fit int32 unless a plane has 2^31 elements.
    const bool small = x.H * x.W < (int64_t(1) << 31);
    for_each_plane(x.N * x.C, L * w.kh * w.kw, [&](int64_t p) {
      if (small)
        plane<int32_t>(X + x.offset(p), O + p * L, I + p * L, x, w, rx);
      else
        plane<int64_t>(X + x.offset(p), O + p * L, I + p * L, x, w, rx);
    });
  }

  template <class Tap>
  static void plane(const T* xp, T* op, int64_t* ip, const Planes& x,
                    const Window& w, const TapRanges& rx) {
    using M = opmath_t<T>;
    const M lowest = std::numeric_limits<M>::has_infinity
                         ? -std::numeric_limits<M>::infinity()
                         : std::numeric_limits<M>::lowest();
    // Locals: stores to the int64 index array must not force reloads.
    const int64_t H = x.H, W = x.W, sxh = x.sh, sxw = x.sw;
    const int64_t kh = w.kh, kw = w.kw, sh = w.sh, sw = w.sw, ph = w.ph,
                  pw = w.pw, dh = w.dh, dw = w.dw, oh = w.oh, ow = w.ow;
    // The winner is tracked as its tap's offset i * dh * W + j * dw (int32
    // lanes like the values'); the flat index is formed once at the end.
    M best[kBlock];
    Tap tap[kBlock];
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t ystart = oy * sh - ph;
      int64_t y0 = ystart;
      while (y0 < 0) y0 += dh;  // first in-range row of the window
      for (int64_t b0 = 0; b0 < ow; b0 += kBlock) {
        const int64_t b1 = std::min(ow, b0 + kBlock);
        for (int64_t ox = b0; ox < b1; ++ox) {
          const int64_t xstart = ox * sw - pw;
          int64_t x0 = xstart;
          while (x0 < 0) x0 += dw;
          best[ox - b0] = lowest;
          tap[ox - b0] = Tap((y0 - ystart) * W + (x0 - xstart));
        }
        for (int64_t i = 0; i < kh; ++i) {
          const int64_t iy = ystart + i * dh;
          if (iy < 0 || iy >= H) continue;
          const T* xr = xp + iy * sxh;
          for (int64_t j = 0; j < kw; ++j) {
            int64_t lo, hi;
            rx.at(j, &lo, &hi);
            lo = std::max(lo, b0);
            hi = std::min(hi, b1);
            const int64_t shift = j * dw - pw;  // ix = ox * sw + shift
            const Tap t = Tap(i * dh * W + j * dw);
            for (int64_t ox = lo; ox < hi; ++ox) {
              const M v = M(xr[(ox * sw + shift) * sxw]);
              const bool take = (v > best[ox - b0]) | is_nan(v);
              best[ox - b0] = select(take, v, best[ox - b0]);
              tap[ox - b0] = select(take, t, tap[ox - b0]);
            }
          }
        }
        for (int64_t ox = b0; ox < b1; ++ox) {
          op[oy * ow + ox] = T(best[ox - b0]);
          ip[oy * ow + ox] = ystart * W + ox * sw - pw + tap[ox - b0];
        }
      }
    }
  }
};

// in0 grad_out and in1 indices dense [N, C, oh, ow]; out dense grad_in.
// Indices outside the plane are skipped (they cannot come from forward).
template <class T>
struct MaxPoolBackward {
  static void run(KernelArgs& a) {
    const Tensor& out = *a.out;
    const int64_t planes = out.sizes()[0] * out.sizes()[1];
    const int64_t HW = out.sizes()[2] * out.sizes()[3];
    const int64_t L = a.in[0]->sizes()[2] * a.in[0]->sizes()[3];
    const T* G = static_cast<const T*>(a.in[0]->data_ptr());
    const int64_t* I = static_cast<const int64_t*>(a.in[1]->data_ptr());
    T* O = static_cast<T*>(out.data_ptr());
    for_each_plane(planes, HW + L, [&](int64_t p) {
      T* op = O + p * HW;
      std::fill(op, op + HW, T(0));
      const T* gp = G + p * L;
      const int64_t* ip = I + p * L;
      for (int64_t k = 0; k < L; ++k) {
        const int64_t idx = ip[k];
        if (idx >= 0 && idx < HW)
          op[idx] = T(opmath_t<T>(op[idx]) + opmath_t<T>(gp[k]));
      }
    });
  }
};

template <class T>
struct AvgPool {
  static void run(KernelArgs& a) {
    using A = avg_acc_t<T>;
    const Planes x = planes_of(*a.in[0]);
    const Window w = window_of(a);
    const T* X = static_cast<const T*>(a.in[0]->data_ptr());
    T* O = static_cast<T*>(a.out->data_ptr());
    const int64_t L = w.oh * w.ow;
    for_each_plane(x.N * x.C, L * w.kh * w.kw, [&](int64_t p) {
      const T* xp = X + x.offset(p);
      T* op = O + p * L;
      for (int64_t oy = 0; oy < w.oh; ++oy)
        for (int64_t ox = 0; ox < w.ow; ++ox) {
          const AvgCell c = avg_cell(w, x.H, x.W, oy, ox);
          if (c.y0 >= c.y1 || c.x0 >= c.x1) {
            op[oy * w.ow + ox] = T(0);
            continue;
          }
          A sum = A(0);
          for (int64_t iy = c.y0; iy < c.y1; ++iy)
            for (int64_t ix = c.x0; ix < c.x1; ++ix)
              sum += A(xp[iy * x.sh + ix * x.sw]);
          op[oy * w.ow + ox] = T(sum / A(c.divisor));
        }
    });
  }
};

// in0 grad_out dense [N, C, oh, ow]; out dense grad_in.
template <class T>
struct AvgPoolBackward {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const Tensor& out = *a.out;
    const Window w = window_of(a);
    const int64_t H = out.sizes()[2], W = out.sizes()[3];
    const int64_t L = w.oh * w.ow;
    const T* G = static_cast<const T*>(a.in[0]->data_ptr());
    T* O = static_cast<T*>(out.data_ptr());
    for_each_plane(out.sizes()[0] * out.sizes()[1], L * w.kh * w.kw,
                   [&](int64_t p) {
      T* op = O + p * H * W;
      std::fill(op, op + H * W, T(0));
      const T* gp = G + p * L;
      for (int64_t oy = 0; oy < w.oh; ++oy)
        for (int64_t ox = 0; ox < w.ow; ++ox) {
          const AvgCell c = avg_cell(w, H, W, oy, ox);
          if (c.y0 >= c.y1 || c.x0 >= c.x1) continue;
          const M g = M(gp[oy * w.ow + ox]) / M(c.divisor);
          for (int64_t iy = c.y0; iy < c.y1; ++iy)
            for (int64_t ix = c.x0; ix < c.x1; ++ix)
              op[iy * W + ix] = T(M(op[iy * W + ix]) + g);
        }
    });
  }
};

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
inline int64_t adaptive_start(int64_t o, int64_t out, int64_t in) {
  return (o * in) / out;
}
inline int64_t adaptive_end(int64_t o, int64_t out, int64_t in) {
  return ((o + 1) * in + out - 1) / out;
}

template <class T>
struct AdaptiveAvgPool {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const Planes x = planes_of(*a.in[0]);
    const int64_t OH = a.out->sizes()[2], OW = a.out->sizes()[3];
    const T* X = static_cast<const T*>(a.in[0]->data_ptr());
    T* O = static_cast<T*>(a.out->data_ptr());
    for_each_plane(x.N * x.C, x.H * x.W + OH * OW, [&](int64_t p) {
      const T* xp = X + x.offset(p);
      T* op = O + p * OH * OW;
      for (int64_t oy = 0; oy < OH; ++oy) {
        const int64_t y0 = adaptive_start(oy, OH, x.H);
        const int64_t y1 = adaptive_end(oy, OH, x.H);
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t x0 = adaptive_start(ox, OW, x.W);
          const int64_t x1 = adaptive_end(ox, OW, x.W);
          M sum = M(0);
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix)
              sum += M(xp[iy * x.sh + ix * x.sw]);
          op[oy * OW + ox] = T(sum / M((y1 - y0) * (x1 - x0)));
        }
      }
    });
  }
};

// in0 grad_out dense [N, C, OH, OW]; out dense grad_in.
template <class T>
struct AdaptiveAvgPoolBackward {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const Tensor& out = *a.out;
    const int64_t H = out.sizes()[2], W = out.sizes()[3];
    const int64_t OH = a.in[0]->sizes()[2], OW = a.in[0]->sizes()[3];
    const T* G = static_cast<const T*>(a.in[0]->data_ptr());
    T* O = static_cast<T*>(out.data_ptr());
    for_each_plane(out.sizes()[0] * out.sizes()[1], H * W + OH * OW,
                   [&](int64_t p) {
      T* op = O + p * H * W;
      std::fill(op, op + H * W, T(0));
      const T* gp = G + p * OH * OW;
      for (int64_t oy = 0; oy < OH; ++oy) {
        const int64_t y0 = adaptive_start(oy, OH, H);
        const int64_t y1 = adaptive_end(oy, OH, H);
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t x0 = adaptive_start(ox, OW, W);
          const int64_t x1 = adaptive_end(ox, OW, W);
          const M g = M(gp[oy * OW + ox]) / M((y1 - y0) * (x1 - x0));
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix)
              op[iy * W + ix] = T(M(op[iy * W + ix]) + g);
        }
      }
    });
  }
};

}  // namespace

void register_conv_kernels() {
#define FASTT_KERNELS_conv
#include "kernels/kernels.def"
  register_onednn_conv();  // float32 convolutions through oneDNN
}

}  // namespace fastt

// CUDA kernels of convolution and pooling, mirroring kernels/cpu/conv.cpp
// (same KernelArgs contract, window in KernelArgs::dims as WindowParam):
// im2col / col2im / conv_rows around Op::gemm, and the 2-D pools with their
// backward. One thread per output element, grid-stride, 64-bit indices.
#include <cuda/std/limits>
#include <type_traits>

#include "csrc/ops/conv.h"
#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/loop.cuh"
#include "kernels/window_geom.h"

namespace fastt {
namespace cuda {
namespace {
using namespace window_geom;

#define FASTT_GRID_LOOP(i, n)                                              \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += int64_t(blockDim.x) * gridDim.x)

template <class Kern, class... Args>
void launch(Kern kern, int64_t n, const char* what, Args... args) {
  if (n == 0) return;
  kern<<<grid_for(n, kBlock), kBlock, 0, current_stream()>>>(args...);
  FASTT_CUDA_CHECK_LAUNCH(what);
}

template <class T>
__device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_integral<T>::value) return false;
  else return v != v;
}

// ---- im2col: cols[n, (c*kh + i)*kw + j, oy*ow + ox] = x[n, c, iy, ix] ----
// cols is [N, C*kh*kw, L] with last stride 1 (cn, cr the others).
template <class T>
__global__ void im2col_kernel(const T* X, Planes x, Window w, T* cols,
                              int64_t cn, int64_t cr, int64_t total) {
  const int64_t kk = w.kh * w.kw, L = w.oh * w.ow, CK = x.C * kk;
  FASTT_GRID_LOOP(idx, total) {
    const int64_t l = idx % L, r = (idx / L) % CK, n = idx / (L * CK);
    const int64_t c = r / kk, t = r % kk, i = t / w.kw, j = t % w.kw;
    const int64_t oy = l / w.ow, ox = l % w.ow;
    const int64_t iy = oy * w.sh - w.ph + i * w.dh;
    const int64_t ix = ox * w.sw - w.pw + j * w.dw;
    T v = T(0);
    if (iy >= 0 && iy < x.H && ix >= 0 && ix < x.W)
      v = X[n * x.sn + c * x.sc + iy * x.sh + ix * x.sw];
    cols[n * cn + r * cr + l] = v;
  }
}

template <class T>
struct Im2col {
  static void run(KernelArgs& a) {
    const Planes x = planes_of(*a.in[0]);
    const Window w = window_of(a);
    const Tensor& cols = *a.out;
    const int64_t total = x.N * x.C * w.kh * w.kw * w.oh * w.ow;
    launch(im2col_kernel<T>, total, "im2col",
           static_cast<const T*>(a.in[0]->data_ptr()), x, w,
           static_cast<T*>(cols.data_ptr()), cols.strides()[0],
           cols.strides()[1], total);
  }
};

// ---- col2im: out[n, c, iy, ix] = bias[c] + the cols entries reading it ----
// Gathered per output element (no atomics, deterministic), taps in the
// CPU's (i, j) order, summed in opmath.
template <class T>
__global__ void col2im_kernel(const T* cols, int64_t cn, int64_t cr,
                              const T* bias, T* out, int64_t C, int64_t H,
                              int64_t W, Window w, int64_t total) {
  using M = opmath_t<T>;
  FASTT_GRID_LOOP(idx, total) {
    const int64_t ix = idx % W, iy = (idx / W) % H, c = (idx / (W * H)) % C,
                  n = idx / (W * H * C);
    M sum = bias ? M(bias[c]) : M(0);
    const T* base = cols + n * cn + c * w.kh * w.kw * cr;
    for (int64_t i = 0; i < w.kh; ++i) {
      const int64_t y = iy + w.ph - i * w.dh;  // = oy * sh when read
      if (y < 0) break;                       // decreases with i
      if (y % w.sh != 0) continue;
      const int64_t oy = y / w.sh;
      if (oy >= w.oh) continue;
      for (int64_t j = 0; j < w.kw; ++j) {
        const int64_t xx = ix + w.pw - j * w.dw;
        if (xx < 0) break;
        if (xx % w.sw != 0) continue;
        const int64_t ox = xx / w.sw;
        if (ox >= w.ow) continue;
        sum = M(sum + M(base[(i * w.kw + j) * cr + oy * w.ow + ox]));
      }
    }
    out[idx] = T(sum);
  }
}

template <class T>
struct Col2im {
  static void run(KernelArgs& a) {
    const Tensor& cols = *a.in[0];
    Tensor& out = *a.out;  // dense
    const Window w = window_of(a);
    const int64_t C = out.sizes()[1], H = out.sizes()[2], W = out.sizes()[3];
    const T* bias =
        a.in[1] ? static_cast<const T*>(a.in[1]->data_ptr()) : nullptr;
    launch(col2im_kernel<T>, out.numel(), "col2im",
           static_cast<const T*>(cols.data_ptr()), cols.strides()[0],
           cols.strides()[1], bias, static_cast<T*>(out.data_ptr()), C, H, W,
           w, out.numel());
  }
};

// ---- conv_rows: out [A, B, L] dense = in [B, A, h, w] (+ bias[B]); with
// no in, out += bias in place ----
template <class T>
__global__ void conv_rows_kernel(T* out, const T* in, const T* bias,
                                 int64_t B, int64_t L, int64_t w, int64_t sb,
                                 int64_t sa, int64_t sh, int64_t sw,
                                 int64_t total) {
  using M = opmath_t<T>;
  FASTT_GRID_LOOP(idx, total) {
    const int64_t k = idx % L, r = idx / L, ia = r / B, ib = r % B;
    if (!in) {
      out[idx] = T(M(out[idx]) + M(bias[ib]));
      continue;
    }
    const T v = in[ib * sb + ia * sa + (k / w) * sh + (k % w) * sw];
    out[idx] = bias ? T(M(v) + M(bias[ib])) : v;
  }
}

template <class T>
struct ConvRows {
  static void run(KernelArgs& a) {
    const Tensor& out = *a.out;
    const int64_t B = out.sizes()[1], L = out.sizes()[2];
    const Tensor* in = a.in[0];
    int64_t sb = 0, sa = 0, sh = 0, sw = 0, w = L;
    if (in) {
      sb = in->strides()[0], sa = in->strides()[1];
      sh = in->strides()[2], sw = in->strides()[3];
      w = in->sizes()[3];
    }
    if (w == 0) return;  // L == 0 too: nothing to write
    launch(conv_rows_kernel<T>, out.numel(), "conv_rows",
           static_cast<T*>(out.data_ptr()),
           in ? static_cast<const T*>(in->data_ptr()) : nullptr,
           a.in[1] ? static_cast<const T*>(a.in[1]->data_ptr()) : nullptr, B,
           L, w, sb, sa, sh, sw, out.numel());
  }
};

// ---- max_pool2d: torch's result. The first maximum in row-major window
// order wins, a NaN always takes over (so the last NaN's index is kept, as
// on the CPU), and the index starts at the first in-range tap. ----
template <class T>
__global__ void max_pool_kernel(const T* X, Planes x, Window w, T* out,
                                int64_t* indices, int64_t total) {
  using M = opmath_t<T>;
  const M lowest = ::cuda::std::numeric_limits<M>::has_infinity
                       ? -::cuda::std::numeric_limits<M>::infinity()
                       : ::cuda::std::numeric_limits<M>::lowest();
  FASTT_GRID_LOOP(idx, total) {
    const int64_t ox = idx % w.ow, oy = (idx / w.ow) % w.oh,
                  p = idx / (w.ow * w.oh);
    const T* xp = X + (p / x.C) * x.sn + (p % x.C) * x.sc;
    const int64_t ystart = oy * w.sh - w.ph, xstart = ox * w.sw - w.pw;
    int64_t y0 = ystart, x0 = xstart;
    while (y0 < 0) y0 += w.dh;
    while (x0 < 0) x0 += w.dw;
    M best = lowest;
    int64_t arg = y0 * x.W + x0;
    for (int64_t i = 0; i < w.kh; ++i) {
      const int64_t iy = ystart + i * w.dh;
      if (iy < 0 || iy >= x.H) continue;
      for (int64_t j = 0; j < w.kw; ++j) {
        const int64_t ix = xstart + j * w.dw;
        if (ix < 0 || ix >= x.W) continue;
        const M v = M(xp[iy * x.sh + ix * x.sw]);
        if (v > best || is_nan(v)) {
          best = v;
          arg = iy * x.W + ix;
        }
      }
    }
    out[idx] = T(best);
    indices[idx] = arg;
  }
}

template <class T>
struct MaxPool {
  static void run(KernelArgs& a) {
    const Planes x = planes_of(*a.in[0]);
    const Window w = window_of(a);
    launch(max_pool_kernel<T>, a.out->numel(), "max_pool2d",
           static_cast<const T*>(a.in[0]->data_ptr()), x, w,
           static_cast<T*>(a.out->data_ptr()),
           static_cast<int64_t*>(a.out2->data_ptr()), a.out->numel());
  }
};

// out[i] += v for the 16-bit floats: a compare-and-swap on the aligned
// 32-bit word holding it (works on every architecture; tensors from the
// allocator are at least 4-byte aligned, and sized to whole words even in
// the no-caching mode). Little-endian: the element at the
// lower address is the low half.
template <class T>
__device__ __forceinline__ void atomic_add16(T* addr, float v) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  unsigned int* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t(3));
  const unsigned shift = (a & 2) ? 16u : 0u;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const T cur = T::from_bits(uint16_t((assumed >> shift) & 0xffffu));
    const T next = T(float(cur) + v);
    const unsigned nw = (assumed & ~(0xffffu << shift)) |
                        (unsigned(next.bits) << shift);
    old = atomicCAS(word, assumed, nw);
  } while (assumed != old);
}

template <class T>
__device__ __forceinline__ void atomic_add(T* addr, opmath_t<T> v) {
  if constexpr (std::is_same<T, float>::value ||
                std::is_same<T, double>::value)
    atomicAdd(addr, v);
  else
    atomic_add16(addr, v);
}

// in0 grad_out and in1 indices dense [N, C, oh, ow]; out dense grad_in,
// zeroed first. Windows may overlap, so the scatter adds atomically (the
// order of float additions, hence the last bits, may vary run to run).
template <class T>
__global__ void max_pool_backward_kernel(const T* G, const int64_t* I, T* O,
                                         int64_t L, int64_t HW,
                                         int64_t total) {
  FASTT_GRID_LOOP(idx, total) {
    const int64_t k = I[idx];
    if (k >= 0 && k < HW)
      atomic_add(O + (idx / L) * HW + k, opmath_t<T>(G[idx]));
  }
}

template <class T>
struct MaxPoolBackward {
  static void run(KernelArgs& a) {
    Tensor& out = *a.out;
    const int64_t HW = out.sizes()[2] * out.sizes()[3];
    const int64_t L = a.in[0]->sizes()[2] * a.in[0]->sizes()[3];
    FASTT_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0,
                                     size_t(out.numel()) * sizeof(T),
                                     current_stream()),
                     "max_pool2d_backward");
    if (L == 0) return;
    launch(max_pool_backward_kernel<T>, a.in[0]->numel(),
           "max_pool2d_backward",
           static_cast<const T*>(a.in[0]->data_ptr()),
           static_cast<const int64_t*>(a.in[1]->data_ptr()),
           static_cast<T*>(out.data_ptr()), L, HW, a.in[0]->numel());
  }
};

template <class T>
__global__ void avg_pool_kernel(const T* X, Planes x, Window w, T* out,
                                int64_t total) {
  using A = avg_acc_t<T>;
  FASTT_GRID_LOOP(idx, total) {
    const int64_t ox = idx % w.ow, oy = (idx / w.ow) % w.oh,
                  p = idx / (w.ow * w.oh);
    const AvgCell c = avg_cell(w, x.H, x.W, oy, ox);
    if (c.y0 >= c.y1 || c.x0 >= c.x1) {
      out[idx] = T(0);
      continue;
    }
    const T* xp = X + (p / x.C) * x.sn + (p % x.C) * x.sc;
    A sum = A(0);
    for (int64_t iy = c.y0; iy < c.y1; ++iy)
      for (int64_t ix = c.x0; ix < c.x1; ++ix)
        sum += A(xp[iy * x.sh + ix * x.sw]);
    out[idx] = T(sum / A(c.divisor));
  }
}

template <class T>
struct AvgPool {
  static void run(KernelArgs& a) {
    launch(avg_pool_kernel<T>, a.out->numel(), "avg_pool2d",
           static_cast<const T*>(a.in[0]->data_ptr()), planes_of(*a.in[0]),
           window_of(a), static_cast<T*>(a.out->data_ptr()), a.out->numel());
  }
};

// in0 grad_out dense [N, C, oh, ow]; out dense grad_in. Gathered per input
// element over the outputs whose window covers it (in the CPU's (oy, ox)
// order), so nothing is atomic.
template <class T>
__global__ void avg_pool_backward_kernel(const T* G, T* O, int64_t H,
                                         int64_t W, Window w, int64_t total) {
  using M = opmath_t<T>;
  FASTT_GRID_LOOP(idx, total) {
    const int64_t ix = idx % W, iy = (idx / W) % H, p = idx / (W * H);
    // Windows starting at o * s - pad cover i when i - k < o*s - pad <= i.
    const int64_t ty = iy + w.ph - w.kh, tx = ix + w.pw - w.kw;
    const int64_t oy0 = ty < 0 ? 0 : ty / w.sh + 1;
    const int64_t ox0 = tx < 0 ? 0 : tx / w.sw + 1;
    const int64_t oy1 = min(w.oh - 1, (iy + w.ph) / w.sh);
    const int64_t ox1 = min(w.ow - 1, (ix + w.pw) / w.sw);
    const T* gp = G + p * w.oh * w.ow;
    M sum = M(0);
    for (int64_t oy = oy0; oy <= oy1; ++oy)
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const AvgCell c = avg_cell(w, H, W, oy, ox);
        if (iy < c.y0 || iy >= c.y1 || ix < c.x0 || ix >= c.x1) continue;
        sum += M(gp[oy * w.ow + ox]) / M(c.divisor);
      }
    O[idx] = T(sum);
  }
}

template <class T>
struct AvgPoolBackward {
  static void run(KernelArgs& a) {
    Tensor& out = *a.out;
    launch(avg_pool_backward_kernel<T>, out.numel(), "avg_pool2d_backward",
           static_cast<const T*>(a.in[0]->data_ptr()),
           static_cast<T*>(out.data_ptr()), out.sizes()[2], out.sizes()[3],
           window_of(a), out.numel());
  }
};

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
__device__ __forceinline__ int64_t adaptive_start(int64_t o, int64_t out,
                                                  int64_t in) {
  return (o * in) / out;
}
__device__ __forceinline__ int64_t adaptive_end(int64_t o, int64_t out,
                                                int64_t in) {
  return ((o + 1) * in + out - 1) / out;
}

template <class T>
__global__ void adaptive_avg_kernel(const T* X, Planes x, T* out, int64_t OH,
                                    int64_t OW, int64_t total) {
  using M = opmath_t<T>;
  FASTT_GRID_LOOP(idx, total) {
    const int64_t ox = idx % OW, oy = (idx / OW) % OH, p = idx / (OW * OH);
    const T* xp = X + (p / x.C) * x.sn + (p % x.C) * x.sc;
    const int64_t y0 = adaptive_start(oy, OH, x.H);
    const int64_t y1 = adaptive_end(oy, OH, x.H);
    const int64_t x0 = adaptive_start(ox, OW, x.W);
    const int64_t x1 = adaptive_end(ox, OW, x.W);
    M sum = M(0);
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix) sum += M(xp[iy * x.sh + ix * x.sw]);
    out[idx] = T(sum / M((y1 - y0) * (x1 - x0)));
  }
}

template <class T>
struct AdaptiveAvgPool {
  static void run(KernelArgs& a) {
    const int64_t OH = a.out->sizes()[2], OW = a.out->sizes()[3];
    launch(adaptive_avg_kernel<T>, a.out->numel(), "adaptive_avg_pool2d",
           static_cast<const T*>(a.in[0]->data_ptr()), planes_of(*a.in[0]),
           static_cast<T*>(a.out->data_ptr()), OH, OW, a.out->numel());
  }
};

// The outputs o of an adaptive pool whose window covers input i form one
// run (starts and ends grow with o); o = floor(i * out / in) is in it.
__device__ __forceinline__ void adaptive_cover(int64_t i, int64_t out,
                                               int64_t in, int64_t* lo,
                                               int64_t* hi) {
  const int64_t o = (i * out) / in;
  int64_t a = o, b = o;
  while (a > 0 && adaptive_end(a - 1, out, in) > i) --a;
  while (b + 1 < out && adaptive_start(b + 1, out, in) <= i) ++b;
  *lo = a;
  *hi = b;
}

// in0 grad_out dense [N, C, OH, OW]; out dense grad_in (gathered).
template <class T>
__global__ void adaptive_avg_backward_kernel(const T* G, T* O, int64_t H,
                                             int64_t W, int64_t OH,
                                             int64_t OW, int64_t total) {
  using M = opmath_t<T>;
  FASTT_GRID_LOOP(idx, total) {
    const int64_t ix = idx % W, iy = (idx / W) % H, p = idx / (W * H);
    int64_t oy0, oy1, ox0, ox1;
    adaptive_cover(iy, OH, H, &oy0, &oy1);
    adaptive_cover(ix, OW, W, &ox0, &ox1);
    const T* gp = G + p * OH * OW;
    M sum = M(0);
    for (int64_t oy = oy0; oy <= oy1; ++oy) {
      const int64_t hy =
          adaptive_end(oy, OH, H) - adaptive_start(oy, OH, H);
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const int64_t wx =
            adaptive_end(ox, OW, W) - adaptive_start(ox, OW, W);
        sum += M(gp[oy * OW + ox]) / M(hy * wx);
      }
    }
    O[idx] = T(sum);
  }
}

template <class T>
struct AdaptiveAvgPoolBackward {
  static void run(KernelArgs& a) {
    Tensor& out = *a.out;
    launch(adaptive_avg_backward_kernel<T>, out.numel(),
           "adaptive_avg_pool2d_backward",
           static_cast<const T*>(a.in[0]->data_ptr()),
           static_cast<T*>(out.data_ptr()), out.sizes()[2], out.sizes()[3],
           a.in[0]->sizes()[2], a.in[0]->sizes()[3], out.numel());
  }
};

}  // namespace

void register_conv_cuda_kernels() {
#define FASTT_KERNELS_conv
#include "kernels/kernels.def"
  // conv1d / conv2d / conv_transpose2d ask cuDNN first when it is built in.
  register_cudnn_conv();
}

}  // namespace cuda
}  // namespace fastt

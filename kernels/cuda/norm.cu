// CUDA layer norm and RMS norm, forward and backward, over a dense input
// seen as [rows, cols] (the CPU's kernels/cpu/norm.cpp; argument layouts:
// nn_args in csrc/ops/nn.h). Row statistics: a warp per row up to 1024
// columns, a block per row beyond, in opmath (float for 16-bit types).
// Weight/bias grads: a deterministic two-stage column reduction.
#include <cmath>

#include "csrc/ops/nn.h"
#include "kernels/cuda/rows.cuh"
#include "kernels/nn_geom.h"

namespace fastt {
namespace cuda {
namespace {
using namespace nn_args;
using namespace nn_geom;

// ---- reduction states ----
// Welford (count, mean, M2). merge is not exactly commutative, which is
// why warp_reduce broadcasts lane 0's result.
template <class A>
struct Welford {
  long long n;
  A mean, m2;
  static __device__ Welford identity() { return {0, A(0), A(0)}; }
  __device__ void add(A v) {
    ++n;
    const A d = v - mean;
    mean += d / A(n);
    m2 += d * (v - mean);
  }
  static __device__ Welford merge(Welford a, Welford b) {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const long long n = a.n + b.n;
    const A fb = A(b.n) / A(n);
    const A d = b.mean - a.mean;
    return {n, a.mean + d * fb, a.m2 + b.m2 + d * d * A(a.n) * fb};
  }
  __device__ Welford shfl_xor(int o) const {
    return {__shfl_xor_sync(kFull, n, o), __shfl_xor_sync(kFull, mean, o),
            __shfl_xor_sync(kFull, m2, o)};
  }
  __device__ Welford shfl0() const {
    return {__shfl_sync(kFull, n, 0), __shfl_sync(kFull, mean, 0),
            __shfl_sync(kFull, m2, 0)};
  }
};

// Two plain sums.

// ---- row policies: accumulate(s, r, i) over row r, finish(s, r, leader)
// once (leader: one thread of the row, for per-row outputs), emit(s, r, i)
// per element ----

// y = (x - mean) * rstd * weight + bias; mean and rstd (x's dtype) saved.
template <class T>
struct LayerNormFwd {
  using A = opmath_t<T>;
  using S = Welford<A>;
  const T *x, *w, *b;
  T *y, *mean, *rstd;
  int64_t cols;
  A eps;
  __device__ void accumulate(S& s, int64_t r, int64_t i) const {
    s.add(A(x[r * cols + i]));
  }
  // Turns the state into (mean, rstd) in (mean, m2). Population variance
  // (0 / 0 = NaN for an empty row, like the CPU).
  __device__ void finish(S& s, int64_t r, bool leader) const {
    const A var = s.m2 / A(cols);
    s.m2 = drsqrt(var + eps);
    if (leader) {
      mean[r] = T(s.mean);
      rstd[r] = T(s.m2);
    }
  }
  __device__ void emit(const S& s, int64_t r, int64_t i) const {
    A v = (A(x[r * cols + i]) - s.mean) * s.m2;
    if (w) v *= A(w[i]);
    if (b) v += A(b[i]);
    y[r * cols + i] = T(v);
  }
};

// g = dy * weight, xhat = (x - mean) * rstd:
//   dx = rstd * g + c1 * (x - mean) + c0 with
//   c1 = -rstd^3 * mean(g * (x - mean)), c0 = -rstd * mean(g).
template <class T>
struct LayerNormBwdDx {
  using A = opmath_t<T>;
  using S = Sum2<A>;  // a = sum g, b = sum g * (x - mean)
  const T *dy, *x, *mean, *rstd, *w;
  T* dx;
  int64_t cols;
  __device__ A g(int64_t r, int64_t i) const {
    const A v = A(dy[r * cols + i]);
    return w ? v * A(w[i]) : v;
  }
  __device__ void accumulate(S& s, int64_t r, int64_t i) const {
    const A gv = g(r, i);
    s.a += gv;
    s.b += gv * (A(x[r * cols + i]) - A(mean[r]));
  }
  // (a, b) become (c0, c1).
  __device__ void finish(S& s, int64_t r, bool) const {
    const A inv = cols ? A(1) / A(cols) : A(0);
    const A rs = A(rstd[r]);
    const A c1 = -rs * rs * rs * s.b * inv;
    s.a = -rs * s.a * inv;
    s.b = c1;
  }
  __device__ void emit(const S& s, int64_t r, int64_t i) const {
    dx[r * cols + i] = T(A(rstd[r]) * g(r, i) +
                         s.b * (A(x[r * cols + i]) - A(mean[r])) + s.a);
  }
};

// out = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps) kept in opmath.
template <class T>
struct RmsNormFwd {
  using A = opmath_t<T>;
  using S = Sum2<A>;  // a = sum x^2
  const T *x, *w;
  T* y;
  A* rstd;
  int64_t cols;
  A eps;
  __device__ void accumulate(S& s, int64_t r, int64_t i) const {
    const A v = A(x[r * cols + i]);
    s.a += v * v;
  }
  __device__ void finish(S& s, int64_t r, bool leader) const {
    const A inv = A(1) / A(cols > 1 ? cols : 1);
    s.a = drsqrt(s.a * inv + eps);
    if (leader) rstd[r] = s.a;
  }
  __device__ void emit(const S& s, int64_t r, int64_t i) const {
    const A v = A(x[r * cols + i]) * s.a;
    y[r * cols + i] = T(w ? v * A(w[i]) : v);
  }
};

// dx = rstd * g - x * rstd^3 * mean(g * x), g = dy * weight.
template <class T>
struct RmsNormBwdDx {
  using A = opmath_t<T>;
  using S = Sum2<A>;  // a = sum g * x
  const T *dy, *x;
  const A* rstd;
  const T* w;
  T* dx;
  int64_t cols;
  __device__ A g(int64_t r, int64_t i) const {
    const A v = A(dy[r * cols + i]);
    return w ? v * A(w[i]) : v;
  }
  __device__ void accumulate(S& s, int64_t r, int64_t i) const {
    s.a += g(r, i) * A(x[r * cols + i]);
  }
  __device__ void finish(S& s, int64_t r, bool) const {
    const A inv = cols ? A(1) / A(cols) : A(0);
    const A rs = rstd[r];
    s.a = rs * rs * rs * s.a * inv;
  }
  __device__ void emit(const S& s, int64_t r, int64_t i) const {
    dx[r * cols + i] = T(rstd[r] * g(r, i) - A(x[r * cols + i]) * s.a);
  }
};

template <class P>
__global__ void warp_rows_kernel(P p, int64_t rows, int64_t cols) {
  using S = typename P::S;
  const int lane = threadIdx.x & 31;
  const int64_t step = int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
       r < rows; r += step) {
    S s = S::identity();
    for (int64_t i = lane; i < cols; i += 32) p.accumulate(s, r, i);
    s = warp_reduce(s);
    p.finish(s, r, lane == 0);
    for (int64_t i = lane; i < cols; i += 32) p.emit(s, r, i);
  }
}

template <class P>
__global__ void __launch_bounds__(1024)
    block_rows_kernel(P p, int64_t rows, int64_t cols) {
  using S = typename P::S;
  __shared__ S smem[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    S s = S::identity();
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
      p.accumulate(s, r, i);
    s = block_reduce(s, smem);
    p.finish(s, r, threadIdx.x == 0);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) p.emit(s, r, i);
  }
}

template <class P>
void launch_rows(const P& p, int64_t rows, int64_t cols, const char* what) {
  if (rows == 0) return;
  cudaStream_t stream = current_stream();
  if (cols <= kWarpRowMax) {
    constexpr int kThreads = 256;  // 8 rows per block
    warp_rows_kernel<<<grid_for(rows, kThreads / 32), kThreads, 0, stream>>>(
        p, rows, cols);
  } else {
    const int threads = cols >= 16384 ? 1024 : 256;
    block_rows_kernel<<<grid_for(rows, 1), threads, 0, stream>>>(p, rows,
                                                                  cols);
  }
  FASTT_CUDA_CHECK_LAUNCH(what);
}

// ---- weight / bias grads: column sums over rows ----
// Stage 1: block (32, 8) sums 32 columns over one chunk of rows into
// part[chunk][2][cols] (opmath); stage 2 adds the chunks of each column in
// chunk order. The split depends only on the shape and the GPU's SM count,
// so results are reproducible (no float atomics).
constexpr int kColX = 32, kColY = 8;

// f(r, i) -> Sum2 (the dweight and dbias terms of element (r, i)).
template <class T>
struct LayerNormColTerms {
  using A = opmath_t<T>;
  const T *dy, *x, *mean, *rstd;
  int64_t cols;
  __device__ Sum2<A> operator()(int64_t r, int64_t i) const {
    const A d = A(dy[r * cols + i]);
    return {d * ((A(x[r * cols + i]) - A(mean[r])) * A(rstd[r])), d};
  }
};
template <class T>
struct RmsNormColTerms {
  using A = opmath_t<T>;
  const T *dy, *x;
  const A* rstd;
  int64_t cols;
  __device__ Sum2<A> operator()(int64_t r, int64_t i) const {
    return {A(dy[r * cols + i]) * A(x[r * cols + i]) * rstd[r], A(0)};
  }
};

template <class A, class F>
__global__ void column_partials_kernel(F f, int64_t rows, int64_t cols,
                                       int64_t chunk_rows, A* part) {
  __shared__ Sum2<A> smem[kColY][kColX];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t c = int64_t(blockIdx.x) * kColX + tx;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * chunk_rows;
  const int64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  Sum2<A> s = Sum2<A>::identity();
  if (c < cols)
    for (int64_t r = r0 + ty; r < r1; r += kColY)
      s = Sum2<A>::merge(s, f(r, c));
  smem[ty][tx] = s;
  __syncthreads();
  if (ty == 0 && c < cols) {
    for (int k = 1; k < kColY; ++k) s = Sum2<A>::merge(s, smem[k][tx]);
    part[(chunk * 2) * cols + c] = s.a;
    part[(chunk * 2 + 1) * cols + c] = s.b;
  }
}

template <class T, class A>
__global__ void column_finish_kernel(const A* part, int64_t chunks,
                                     int64_t cols, T* dw, T* db) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += step) {
    A sw = 0, sb = 0;
    for (int64_t k = 0; k < chunks; ++k) {
      sw += part[(k * 2) * cols + c];
      sb += part[(k * 2 + 1) * cols + c];
    }
    if (dw) dw[c] = T(sw);
    if (db) db[c] = T(sb);
  }
}

// dw / db (either may be null) = column sums of f over [rows, cols].
template <class T, class F>
void column_sums(const F& f, int64_t rows, int64_t cols, T* dw, T* db,
                 const char* what) {
  using A = opmath_t<T>;
  if (cols == 0 || (!dw && !db)) return;
  cudaStream_t stream = current_stream();
  const int dev = current_device();
  const int64_t tiles = (cols + kColX - 1) / kColX;
  // About 4 blocks per SM in all, each chunk at least 32 rows, and at most
  // 1024 chunks (the stage-2 loop length).
  int64_t chunks = (int64_t(sm_count(dev)) * 4 + tiles - 1) / tiles;
  const int64_t by_rows = (rows + 31) / 32;
  if (chunks > by_rows) chunks = by_rows;
  if (chunks > 1024) chunks = 1024;
  if (chunks < 1) chunks = 1;
  const int64_t chunk_rows = (rows + chunks - 1) / chunks;
  Tensor scratch = Tensor::empty({chunks * 2 * cols}, dtype_of<A>,
                                 Device(DeviceType::CUDA, dev));
  A* part = static_cast<A*>(scratch.data_ptr());
  column_partials_kernel<A><<<dim3(unsigned(tiles), unsigned(chunks)),
                              dim3(kColX, kColY), 0, stream>>>(
      f, rows, cols, chunk_rows, part);
  FASTT_CUDA_CHECK_LAUNCH(what);
  column_finish_kernel<<<grid_for(cols, 256), 256, 0, stream>>>(
      part, chunks, cols, dw, db);
  FASTT_CUDA_CHECK_LAUNCH(what);
  // scratch goes back to the caching allocator here; its stream-ordered
  // reuse keeps the pending kernels' reads valid.
}

// ---- kernels ----
template <class T>
struct LayerNormKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const LayerNormFwd<T> p{cptr<T>(t[kLnX]),    cptr<T>(t[kLnWeight]),
                            cptr<T>(t[kLnBias]), mptr<T>(t[kLnOut]),
                            mptr<T>(t[kLnMean]), mptr<T>(t[kLnRstd]),
                            a.i1,                A(a.f0)};
    launch_rows(p, a.i0, a.i1, "layer_norm");
  }
};

template <class T>
struct LayerNormBackwardKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const int64_t rows = a.i0, cols = a.i1;
    const T* dy = cptr<T>(t[kLnbGrad]);
    const T* x = cptr<T>(t[kLnbX]);
    const T* mean = cptr<T>(t[kLnbMean]);
    const T* rstd = cptr<T>(t[kLnbRstd]);
    T* dx = mptr<T>(t[kLnbDx]);
    if (dx) {
      const LayerNormBwdDx<T> p{dy, x, mean, rstd, cptr<T>(t[kLnbWeight]),
                                dx, cols};
      launch_rows(p, rows, cols, "layer_norm_backward");
    }
    column_sums<T>(LayerNormColTerms<T>{dy, x, mean, rstd, cols}, rows, cols,
                   mptr<T>(t[kLnbDweight]), mptr<T>(t[kLnbDbias]),
                   "layer_norm_backward");
  }
};

template <class T>
struct RmsNormKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const RmsNormFwd<T> p{cptr<T>(t[kRmsX]), cptr<T>(t[kRmsWeight]),
                          mptr<T>(t[kRmsOut]), mptr<A>(t[kRmsRstd]), a.i1,
                          A(a.f0)};
    launch_rows(p, a.i0, a.i1, "rms_norm");
  }
};

template <class T>
struct RmsNormBackwardKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const int64_t rows = a.i0, cols = a.i1;
    const T* dy = cptr<T>(t[kRmsbGrad]);
    const T* x = cptr<T>(t[kRmsbX]);
    const A* rstd = cptr<A>(t[kRmsbRstd]);
    T* dx = mptr<T>(t[kRmsbDx]);
    if (dx) {
      const RmsNormBwdDx<T> p{dy, x, rstd, cptr<T>(t[kRmsbWeight]), dx, cols};
      launch_rows(p, rows, cols, "rms_norm_backward");
    }
    column_sums<T>(RmsNormColTerms<T>{dy, x, rstd, cols}, rows, cols,
                   mptr<T>(t[kRmsbDweight]), static_cast<T*>(nullptr),
                   "rms_norm_backward");
  }
};

}  // namespace

void register_norm_cuda_kernels() {
#define FASTT_KERNELS_norm
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt

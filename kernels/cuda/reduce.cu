// CUDA reductions and scans, part 1: sum/mean/prod, all/any and
// cumsum/cumprod (the CPU's kernels/cpu/reduce.cpp registrations), plus
// register_reduce_cuda_kernels(), which also registers the other
// reduce_*.cu files. Driver and functors: kernels/cuda/reduce.cuh.
#include "kernels/cuda/reduce.cuh"

namespace fastt {
namespace cuda {
namespace reduce_cuda {
namespace {

// sum/prod: int64 out for integer and bool inputs, the input dtype for
// floats.
template <class T, template <class> class Op>
void sum_like(KernelArgs& a, const char* what) {
  using O = sum_out_t<T>;
  using A = sum_acc_t<T>;
  reduce<T>(*a.in[0], a.dims, Op<A>{}, CastW<O, A>{out_ptr<O>(a.out)}, false,
            what);
}
template <class T>
struct SumK {
  static void run(KernelArgs& a) { sum_like<T, SumR>(a, "sum"); }
};
template <class T>
struct ProdK {
  static void run(KernelArgs& a) { sum_like<T, ProdR>(a, "prod"); }
};

template <class T, class A>
struct MeanW {
  T* out;
  A count;  // reduced elements per output (0 when the input is empty)
  __device__ void operator()(int64_t o, A s) const {
    out[o] = static_cast<T>(s / count);
  }
};
template <class T>
struct MeanK {
  static void run(KernelArgs& a) {
    using A = facc_t<T>;
    const int64_t n = a.out->numel();
    const double count = n ? double(a.in[0]->numel()) / double(n) : 0.0;
    reduce<T>(*a.in[0], a.dims, SumR<A>{},
              MeanW<T, A>{out_ptr<T>(a.out), A(count)}, false, "mean");
  }
};

template <bool IsAll>
struct Logical {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      reduce<T>(*a.in[0], a.dims, LogicalOp<IsAll>{},
                CastW<bool, int>{out_ptr<bool>(a.out)}, false,
                IsAll ? "all" : "any");
    }
  };
};

// ---------------------------------------------------------------- scans --
// cumsum/cumprod along dim i0 of a contiguous input seen as
// [outer, n, inner]; out is contiguous with sum_out_t<T> elements. The
// running value accumulates like the CPU's: int64 (wrapping) for integers,
// double for floats, since a long line's error grows with every step.
template <class T>
using scan_acc_t = std::conditional_t<
    std::is_integral<T>::value, int64_t,
    std::conditional_t<kIsComplex<T>, Complex128, double>>;
template <class A, bool IsSum>
struct ScanOp {
  __device__ A init() const { return IsSum ? A(0) : A(1); }
  __device__ A combine(A a, A b) const {
    return IsSum ? wrap_add(a, b) : wrap_mul(a, b);
  }
};

// A thread per line (inner > 1, or short lines): consecutive threads take
// consecutive columns j, so each step's loads are coalesced.
template <class T, class O, class A, bool IsSum>
__global__ void scan_lines_kernel(const T* __restrict__ x,
                                  O* __restrict__ out, int64_t lines,
                                  int64_t n, int64_t inner) {
  const ScanOp<A, IsSum> op;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < lines;
       t += stride) {
    const int64_t base = (t / inner) * n * inner + t % inner;
    A acc = op.init();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = base + i * inner;
      acc = op.combine(acc, A(static_cast<M<T>>(x[k])));
      out[k] = static_cast<O>(acc);
    }
  }
}

constexpr int kScanItems = 4;                   // consecutive per thread
constexpr int kScanTile = kBlock * kScanItems;  // elements per block step

// Long contiguous lines (inner == 1): a block scans one chunk of a row in
// tiles of kScanTile, carrying the running total between tiles; `carry`
// (when set) holds the combined total of the row's earlier chunks.
template <class T, class O, class A, bool IsSum>
__global__ void scan_rows_kernel(const T* __restrict__ x, O* __restrict__ out,
                                 int64_t rows, int64_t n, int64_t chunk,
                                 int64_t nchunks, const A* __restrict__ carry) {
  A* sh = shared_states<A>();  // kBlock / 32 states
  const ScanOp<A, IsSum> op;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int nw = blockDim.x >> 5;
  for (int64_t u = blockIdx.x; u < rows * nchunks; u += gridDim.x) {
    const int64_t row = u / nchunks;
    const int64_t b = (u % nchunks) * chunk;
    const int64_t e = b + chunk < n ? b + chunk : n;
    const T* xr = x + row * n;
    O* orow = out + row * n;
    A run = carry ? carry[u] : op.init();
    for (int64_t t0 = b; t0 < e; t0 += int64_t(blockDim.x) * kScanItems) {
      const int64_t i0 = t0 + int64_t(tid) * kScanItems;
      A v[kScanItems];
      A acc = op.init();
#pragma unroll
      for (int k = 0; k < kScanItems; ++k) {
        const int64_t i = i0 + k;
        acc = op.combine(acc, i < e ? A(static_cast<M<T>>(xr[i]))
                                    : op.init());
        v[k] = acc;
      }
      // Inclusive scan of the thread totals: within each warp by shuffles,
      // then warp 0 scans the warp totals.
      A incl = acc;
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const A y = shfl_up(incl, off);
        if (lane >= off) incl = op.combine(y, incl);
      }
      if (lane == 31) sh[warp] = incl;
      __syncthreads();
      if (warp == 0) {
        A wt = lane < nw ? sh[lane] : op.init();
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const A y = shfl_up(wt, off);
          if (lane >= off) wt = op.combine(y, wt);
        }
        if (lane < nw) sh[lane] = wt;
      }
      __syncthreads();
      const A up = shfl_up(incl, 1);  // inclusive total of the lane before
      A prefix = run;
      if (warp > 0) prefix = op.combine(prefix, sh[warp - 1]);
      if (lane > 0) prefix = op.combine(prefix, up);
#pragma unroll
      for (int k = 0; k < kScanItems; ++k)
        if (i0 + k < e) orow[i0 + k] = static_cast<O>(op.combine(prefix, v[k]));
      run = op.combine(run, sh[nw - 1]);
      __syncthreads();  // sh is rewritten by the next tile
    }
  }
}

// Chunk totals for the multi-block row scan: one block per (row, chunk).
template <class T, class A, bool IsSum>
__global__ void scan_totals_kernel(const T* __restrict__ x,
                                   A* __restrict__ totals, int64_t rows,
                                   int64_t n, int64_t chunk, int64_t nchunks) {
  A* sh = shared_states<A>();  // kBlock / 32 states
  const ScanOp<A, IsSum> op;
  for (int64_t u = blockIdx.x; u < rows * nchunks; u += gridDim.x) {
    const int64_t row = u / nchunks;
    const int64_t b = (u % nchunks) * chunk;
    const int64_t e = b + chunk < n ? b + chunk : n;
    const T* xr = x + row * n;
    A s = op.init();
    for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x)
      s = op.combine(s, A(static_cast<M<T>>(xr[i])));
    s = block_combine(op, s, sh, true);
    if (threadIdx.x == 0) totals[u] = s;
  }
}

// Turns each row's chunk totals into exclusive prefixes, in chunk order.
template <class A, bool IsSum>
__global__ void scan_carry_kernel(A* __restrict__ totals, int64_t rows,
                                  int64_t nchunks) {
  const ScanOp<A, IsSum> op;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += stride) {
    A run = op.init();
    for (int64_t c = 0; c < nchunks; ++c) {
      const A t = totals[r * nchunks + c];
      totals[r * nchunks + c] = run;
      run = op.combine(run, t);
    }
  }
}

template <class T, bool IsSum>
struct ScanK {
  static void run(KernelArgs& a) {
    using O = sum_out_t<T>;
    using A = scan_acc_t<T>;
    const char* what = IsSum ? "cumsum" : "cumprod";
    const Tensor& in = *a.in[0];  // contiguous (the op layer's run_along)
    const T* x = static_cast<const T*>(in.data_ptr());
    O* o = out_ptr<O>(a.out);
    int64_t outer, n, inner;
    reduce_geom::split_dims(in, a.i0, &outer, &n, &inner);
    if (outer * n * inner == 0) return;
    cudaStream_t stream = current_stream();
    if (inner > 1 || n < 64) {
      const int64_t lines = outer * inner;
      scan_lines_kernel<T, O, A, IsSum>
          <<<grid_for(lines, kBlock), kBlock, 0, stream>>>(x, o, lines, n,
                                                           inner);
      FASTT_CUDA_CHECK_LAUNCH(what);
      return;
    }
    // Rows of n >= 64 contiguous elements. Few long rows: split each into
    // chunks scanned by separate blocks, after a pass that computes every
    // chunk's carry-in (reduce, then scan: deterministic, no atomics).
    const int sm = sm_count(current_device());
    const int64_t rows = outer;
    int64_t nchunks = 1, chunk = n;
    if (rows < int64_t(sm) * 2 && n > 4 * kScanTile) {
      const int64_t want = std::min<int64_t>((n + 4 * kScanTile - 1) /
                                                 (4 * kScanTile),
                                             std::max<int64_t>(
                                                 1, int64_t(sm) * 4 / rows));
      chunk = (n + want - 1) / want;
      chunk = (chunk + kScanTile - 1) / kScanTile * kScanTile;
      nchunks = (n + chunk - 1) / chunk;
    }
    const int64_t units = rows * nchunks;
    const int gx = int(std::min<int64_t>(units, int64_t(sm) * 32));
    const size_t smem = kBlock / 32 * sizeof(A);
    if (nchunks == 1) {
      scan_rows_kernel<T, O, A, IsSum><<<gx, kBlock, smem, stream>>>(
          x, o, rows, n, chunk, 1, nullptr);
      FASTT_CUDA_CHECK_LAUNCH(what);
      return;
    }
    Tensor scratch = Tensor::empty(
        IntList{int64_t(units * int64_t(sizeof(A)))}, DType::UInt8,
        Device(DeviceType::CUDA, current_device()));
    A* carry = static_cast<A*>(scratch.data_ptr());
    scan_totals_kernel<T, A, IsSum><<<gx, kBlock, smem, stream>>>(
        x, carry, rows, n, chunk, nchunks);
    FASTT_CUDA_CHECK_LAUNCH(what);
    scan_carry_kernel<A, IsSum>
        <<<grid_for(rows, kBlock), kBlock, 0, stream>>>(carry, rows, nchunks);
    FASTT_CUDA_CHECK_LAUNCH(what);
    scan_rows_kernel<T, O, A, IsSum><<<gx, kBlock, smem, stream>>>(
        x, o, rows, n, chunk, nchunks, carry);
    FASTT_CUDA_CHECK_LAUNCH(what);
  }
};
template <class T>
using CumsumK = ScanK<T, true>;
template <class T>
using CumprodK = ScanK<T, false>;

// cummax / cummin's indices (the CPU's CumExtremeK rule: ties to the later
// element, a NaN stays once met), a thread per line, consecutive threads
// on consecutive columns so each step's loads are coalesced.
template <class T>
__global__ void cum_extreme_kernel(const T* __restrict__ x,
                                   int64_t* __restrict__ out, int64_t lines,
                                   int64_t n, int64_t inner, bool is_max) {
  using V = M<T>;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < lines;
       t += stride) {
    const int64_t base = (t / inner) * n * inner + t % inner;
    V best = V(0);
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = base + i * inner;
      const V v = static_cast<V>(x[k]);
      const bool take = i == 0 || v != v ||
                        (best == best && (is_max ? v >= best : v <= best));
      if (take) {
        best = v;
        at = i;
      }
      out[k] = at;
    }
  }
}

template <class T>
struct CumExtremeK {
  static void run(KernelArgs& a) {
    const Tensor& in = *a.in[0];  // contiguous (the op layer's)
    int64_t outer, n, inner;
    reduce_geom::split_dims(in, a.i0, &outer, &n, &inner);
    if (outer * n * inner == 0) return;
    const int64_t lines = outer * inner;
    cum_extreme_kernel<T><<<grid_for(lines, kBlock), kBlock, 0,
                            current_stream()>>>(
        static_cast<const T*>(in.data_ptr()), out_ptr<int64_t>(a.out), lines,
        n, inner, a.i1 != 0);
    FASTT_CUDA_CHECK_LAUNCH("cummax");
  }
};

}  // namespace
}  // namespace reduce_cuda

void register_reduce_cuda_kernels() {
  using namespace reduce_cuda;
#define FASTT_KERNELS_reduce
#include "kernels/kernels.def"
  register_reduce_extreme_cuda_kernels();
  register_reduce_stats_cuda_kernels();
}

}  // namespace cuda
}  // namespace fastt

// CUDA kernels of the indexing/shape family, one per CPU kernel of
// kernels/cpu/index.cpp and with the same KernelArgs layouts (read there):
// the shared "index along dims" kernel (+ its direct select form), cat,
// masked_select/nonzero, tril/triu, flip/roll; and int64_min_max (one_hot's
// class range). Index kernels range-check each index themselves and report
// a bad one through the device error slot (device_error.h): no host sync.
#include <cub/device/device_scan.cuh>

#include <climits>
#include <type_traits>

#include "kernels/cuda/device_error.cuh"
#include "kernels/cuda/loop.cuh"
#include "kernels/plan.h"

namespace fastt {
namespace cuda {

void int64_min_max(const Tensor& t, int64_t* lo, int64_t* hi);

namespace {

// Raw words of 1, 2, 4, 8 and 16 bytes: pure copies (cat, flip, roll,
// direct select) move bytes, so they instantiate per width, not per dtype.
template <size_t N>
struct WordOf;
template <> struct WordOf<1> { using type = uint8_t; };
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint64_t; };
// complex128: two 8-byte words (its elements are 8-byte aligned only,
// NumPy's layout, so not uint4)
struct Word16 {
  uint64_t lo, hi;
};
template <> struct WordOf<16> { using type = Word16; };
template <class T>
using word_t = typename WordOf<sizeof(T)>::type;

// A tensor as device code sees it: row-major sizes, element strides.
struct TensorDesc {
  int nd;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
};

TensorDesc describe(const Tensor& t) {
  TensorDesc d;
  d.nd = int(t.dim());
  for (int i = 0; i < d.nd; ++i) {
    d.sizes[i] = t.sizes()[i];
    d.strides[i] = t.strides()[i];
  }
  return d;
}

// Element offset of row-major linear position i.
__device__ __forceinline__ int64_t offset_of(const TensorDesc& d, int64_t i) {
  int64_t off = 0;
  for (int k = d.nd - 1; k >= 0; --k) {
    const int64_t s = d.sizes[k];
    off += (i % s) * d.strides[k];
    i /= s;
  }
  return off;
}

// ------------------------------------------------- one_hot class range --
__global__ void minmax_init_kernel(long long* r) {
  r[0] = LLONG_MAX;
  r[1] = LLONG_MIN;
}

// Block-local min/max in shared memory, then one atomic pair per block.
__global__ void minmax_kernel(const int64_t* base, TensorDesc d, int64_t n,
                              long long* r) {
  __shared__ long long smin[kBlock], smax[kBlock];
  long long lo = LLONG_MAX, hi = LLONG_MIN;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const long long v = base[offset_of(d, i)];
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  smin[threadIdx.x] = lo;
  smax[threadIdx.x] = hi;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      const long long a = smin[threadIdx.x + s], b = smax[threadIdx.x + s];
      if (a < smin[threadIdx.x]) smin[threadIdx.x] = a;
      if (b > smax[threadIdx.x]) smax[threadIdx.x] = b;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicMin(&r[0], smin[0]);
    atomicMax(&r[1], smax[0]);
  }
}

// ------------------------------------------------------ index along dims --
// The CPU's Plan (kernels/cpu/index.cpp), passed by value (~3 KB of the
// 4 KB parameter space): dims fastest first, byte strides; operand 0 dst,
// 1 src, 2.. the K int64 indices; then what a bad index's report names.
constexpr int kMaxPlanOps = kMaxDims + 2;

struct IndexPlan {
  int nd, nops, K;
  int64_t numel;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxPlanOps][kMaxDims];
  char* data[kMaxPlanOps];
  int64_t istride[kMaxDims];  // bytes
  int64_t isize[kMaxDims];    // index k is valid in [-isize, isize)
  int64_t idim[kMaxDims];     // the dim index k addresses (for the message)
  uint64_t op;                // op_cookie of the op's name
  DeviceError* err;           // this device's error slot
};

void plan_add(IndexPlan& p, const Tensor& t) {
  const int k = p.nops++;
  p.data[k] = static_cast<char*>(t.data_ptr());
  const int64_t isz = int64_t(t.itemsize());
  for (int d = 0; d < p.nd; ++d)
    p.strides[k][d] = t.strides()[p.nd - 1 - d] * isz;
}

// Atomic dst += alpha * x with the CPU's per-update rounding: each update
// computes T(M(dst) + alpha * M(x)) once. Only the order of the updates
// differs from the CPU (so float sums with duplicate indices are
// nondeterministic in the last bits, as in torch); integer sums wrap
// modulo 2^bits and are exact in any order.
template <class T>
__device__ __forceinline__ void atomic_accumulate(T* dp, T x,
                                                  opmath_t<T> alpha) {
  if constexpr (std::is_same<T, bool>::value) {
    if (x && alpha) *dp = true;  // every writer stores the same value
  } else if constexpr (std::is_same<T, float>::value) {
    atomicAdd(dp, __fmul_rn(alpha, x));  // _rn: never fused into an fma
  } else if constexpr (std::is_same<T, double>::value) {
    atomicAdd(dp, __dmul_rn(alpha, x));
  } else if constexpr (std::is_same<T, Half>::value ||
                       std::is_same<T, BFloat16>::value) {
    // CAS on the 16-bit word (sm_70+) so the sum rounds once, in float,
    // like the CPU (a native __half atomicAdd would round alpha*x first).
    unsigned short* w = reinterpret_cast<unsigned short*>(dp);
    const float add = __fmul_rn(alpha, float(x));
    unsigned short old = *w, assumed;
    do {
      assumed = old;
      const T next = T(__fadd_rn(float(T::from_bits(assumed)), add));
      old = atomicCAS(w, assumed, next.bits);
    } while (old != assumed);
  } else if constexpr (kIsComplex<T>) {  // each part added once
    const T add = alpha * x;
    atomicAdd(&dp->re, add.re);
    atomicAdd(&dp->im, add.im);
  } else if constexpr (sizeof(T) == 8) {  // int64: wraps like the CPU
    atomicAdd(reinterpret_cast<unsigned long long*>(dp),
              (unsigned long long)alpha * (unsigned long long)x);
  } else if constexpr (sizeof(T) == 4) {  // int32
    atomicAdd(reinterpret_cast<unsigned int*>(dp),
              (unsigned int)alpha * (unsigned int)x);
  } else if constexpr (sizeof(T) == 2) {  // int16
    unsigned short* w = reinterpret_cast<unsigned short*>(dp);
    const unsigned short add =
        (unsigned short)((unsigned int)alpha * (unsigned int)x);
    unsigned short old = *w, assumed;
    do {
      assumed = old;
      old = atomicCAS(w, assumed, (unsigned short)(assumed + add));
    } while (old != assumed);
  } else {  // int8/uint8: CAS on the aligned 32-bit word holding the byte
    // (the word may reach past the tensor's last byte: device allocations
    // are rounded to 4 bytes, in the no-caching mode too)
    const uintptr_t addr = reinterpret_cast<uintptr_t>(dp);
    unsigned int* w = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
    const unsigned int shift = unsigned((addr & 3u) * 8u);
    const unsigned int add =
        ((unsigned int)alpha * (unsigned int)x) & 0xffu;
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      const unsigned int byte = ((assumed >> shift) + add) & 0xffu;
      old = atomicCAS(w, assumed,
                      (assumed & ~(0xffu << shift)) | (byte << shift));
    } while (old != assumed);
  }
}

// Where element i of the plan reads (src) and writes (dst), the index
// offset off = sum_k wrap(idx_k[i]) * istride_k already added to the
// addressed side. An index outside [-isize, isize) (the CPU's rule, wrap
// included) is reported and makes it return false, with *doff = i's own
// dst offset (where a gather writes its 0).
template <bool kScatter>
__device__ __forceinline__ bool index_offsets(const IndexPlan& p, int64_t i,
                                              int64_t* doff, int64_t* soff) {
  int64_t c[kMaxDims];
  for (int d = 0; d < p.nd; ++d) {
    c[d] = i % p.sizes[d];
    i /= p.sizes[d];
  }
  int64_t dst = 0, src = 0, off = 0;
  for (int d = 0; d < p.nd; ++d) {
    dst += c[d] * p.strides[0][d];
    src += c[d] * p.strides[1][d];
  }
  *doff = dst;
  for (int k = 0; k < p.K; ++k) {
    int64_t ioff = 0;
    for (int d = 0; d < p.nd; ++d) ioff += c[d] * p.strides[2 + k][d];
    int64_t v = *reinterpret_cast<const int64_t*>(p.data[2 + k] + ioff);
    const int64_t size = p.isize[k];
    if (FASTT_UNLIKELY(v < -size || v >= size)) {
      report_device_error(p.err, kDeviceErrorIndex, p.op, v, size, p.idim[k]);
      return false;
    }
    if (v < 0) v += size;
    off += v * p.istride[k];
  }
  *doff = kScatter ? dst + off : dst;
  *soff = kScatter ? src : src + off;
  return true;
}

// gather/index_select/index (kScatter false): dst[i] = src[i + off];
// scatter/index_put (true): dst[i + off] = src[i]. A pure copy, so it is
// instantiated per element width W. Scatters race on duplicate indices:
// one of the writes wins, unspecified which (as in torch). A bad index
// leaves a gather's element 0 and skips a scatter's.
template <class W, bool kScatter>
__global__ void index_copy_kernel(IndexPlan p) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.numel; i += stride) {
    int64_t doff, soff;
    if (index_offsets<kScatter>(p, i, &doff, &soff))
      *reinterpret_cast<W*>(p.data[0] + doff) =
          *reinterpret_cast<const W*>(p.data[1] + soff);
    else if (!kScatter)
      *reinterpret_cast<W*>(p.data[0] + doff) = W{};
  }
}

// scatter_add/index_add/index_put(accumulate): dst[i + off] += alpha *
// src[i], atomically (skipped for a bad index).
template <class T>
__global__ void index_accumulate_kernel(IndexPlan p, opmath_t<T> alpha) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.numel; i += stride) {
    int64_t doff, soff;
    if (index_offsets<true>(p, i, &doff, &soff))
      atomic_accumulate<T>(reinterpret_cast<T*>(p.data[0] + doff),
                           *reinterpret_cast<const T*>(p.data[1] + soff),
                           alpha);
  }
}

// Direct form (i1 = -1): out [outer, n, inner] = src [outer, size, inner]
// with the middle dim picked by idx[j * is]. A pure copy, so it runs on
// words W as wide as the row length and alignment allow (16-byte rows of
// an embedding move as uint4). A bad index reports (naming dim and op) and
// leaves its row 0.
struct SelectDirect {
  int64_t total, n, size, inner, is;
  int64_t dim;      // for the error message
  uint64_t op;      // op_cookie of the op's name
};

template <class W>
__global__ void select_direct_kernel(W* out, const W* src,
                                     const int64_t* idx, SelectDirect s,
                                     DeviceError* err) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
       e < s.total; e += stride) {
    const int64_t r = e / s.inner, k = e - r * s.inner;
    const int64_t o = r / s.n, j = r - o * s.n;
    int64_t v = idx[j * s.is];
    if (FASTT_UNLIKELY(v < -s.size || v >= s.size)) {
      if (k == 0)  // once per row
        report_device_error(err, kDeviceErrorIndex, s.op, v, s.size, s.dim);
      out[e] = W{};
      continue;
    }
    if (v < 0) v += s.size;
    out[e] = src[(o * s.size + v) * s.inner + k];
  }
}

template <class W>
void launch_select_direct(char* out, const char* src, const int64_t* idx,
                          SelectDirect s, int64_t rows, int64_t row_bytes) {
  s.inner = row_bytes / int64_t(sizeof(W));
  s.total = rows * s.inner;
  select_direct_kernel<W>
      <<<grid_for(s.total, kBlock), kBlock, 0, current_stream()>>>(
          reinterpret_cast<W*>(out), reinterpret_cast<const W*>(src), idx, s,
          device_error_slot());
  FASTT_CUDA_CHECK_LAUNCH("index_select");
}

// a.dims = [outer, size, inner, index stride, dim, op_cookie].
void select_direct(const KernelArgs& a, int64_t itemsize) {
  const int64_t outer = a.dims[0], inner = a.dims[2];
  SelectDirect s;
  s.size = a.dims[1];
  s.is = a.dims[3];
  s.dim = a.dims[4];
  s.op = uint64_t(a.dims[5]);
  s.n = a.in[1]->numel();
  const int64_t rows = outer * s.n;
  if (rows == 0 || inner == 0) return;
  char* out = static_cast<char*>(a.out->data_ptr());
  const char* src = static_cast<const char*>(a.in[0]->data_ptr());
  const int64_t* idx = static_cast<const int64_t*>(a.in[1]->data_ptr());
  const int64_t row_bytes = inner * itemsize;
  const uintptr_t align = reinterpret_cast<uintptr_t>(out) |
                          reinterpret_cast<uintptr_t>(src) |
                          uintptr_t(row_bytes);
  if (align % 16 == 0)
    launch_select_direct<uint4>(out, src, idx, s, rows, row_bytes);
  else if (align % 8 == 0)
    launch_select_direct<uint64_t>(out, src, idx, s, rows, row_bytes);
  else if (align % 4 == 0)
    launch_select_direct<uint32_t>(out, src, idx, s, rows, row_bytes);
  else if (align % 2 == 0)
    launch_select_direct<uint16_t>(out, src, idx, s, rows, row_bytes);
  else
    launch_select_direct<uint8_t>(out, src, idx, s, rows, row_bytes);
}

// a.dims = [index strides (K), index sizes (K), index dims (K), op_cookie]
// (the last two name a bad index; the CPU kernel ignores them).
template <class T>
struct IndexK {
  static void run(KernelArgs& a) {
    if (a.i1 < 0) return select_direct(a, int64_t(sizeof(T)));
    const Tensor& dst = *a.out;
    if (dst.numel() == 0) return;
    const int K = int(a.i1);
    IndexPlan p;
    p.nd = int(dst.dim());
    p.nops = 0;
    p.K = K;
    p.numel = dst.numel();
    for (int d = 0; d < p.nd; ++d) p.sizes[d] = dst.sizes()[p.nd - 1 - d];
    plan_add(p, dst);
    plan_add(p, *a.in[0]);
    for (int k = 0; k < K; ++k) plan_add(p, a.in[1][k]);
    plan_coalesce(p);
    for (int k = 0; k < K; ++k) {
      p.istride[k] = a.dims[k] * int64_t(sizeof(T));
      p.isize[k] = a.dims[K + k];
      p.idim[k] = a.dims[2 * K + k];
    }
    p.op = uint64_t(a.dims[3 * K]);
    p.err = device_error_slot();
    using W = word_t<T>;
    const int grid = grid_for(p.numel, kBlock);
    cudaStream_t stream = current_stream();
    if (!a.i0) {
      index_copy_kernel<W, false><<<grid, kBlock, 0, stream>>>(p);
    } else if (!a.i2) {
      index_copy_kernel<W, true><<<grid, kBlock, 0, stream>>>(p);
    } else {
      const opmath_t<T> alpha = a.s0.to<opmath_t<T>>();
      index_accumulate_kernel<T><<<grid, kBlock, 0, stream>>>(p, alpha);
    }
    FASTT_CUDA_CHECK_LAUNCH("index");
  }
};

// ------------------------------------------------------------------ cat --
// Up to kCatBatch inputs per launch, blockIdx.y picking the input; each
// input's [outer, chunk] block lands at column off of out's [outer, row].
constexpr int kCatBatch = 64;

struct CatBatch {
  const char* src[kCatBatch];
  int64_t chunk[kCatBatch];  // elements per outer index
  int64_t off[kCatBatch];    // column in out's row
};

template <class W>
__global__ void cat_kernel(W* out, CatBatch b, int64_t outer, int64_t row) {
  const int y = blockIdx.y;
  const W* src = reinterpret_cast<const W*>(b.src[y]);
  const int64_t chunk = b.chunk[y], off = b.off[y];
  const int64_t total = outer * chunk;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const int64_t o = e / chunk, c = e - o * chunk;
    out[o * row + off + c] = src[e];
  }
}

template <class T>
struct CatK {
  static void run(KernelArgs& a) {
    using W = word_t<T>;
    Tensor& out = *a.out;
    if (out.numel() == 0) return;
    const Tensor* ins = a.in[0];
    const int n = int(a.i0);
    const int64_t dim = a.i1;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= out.sizes()[d];
    for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.sizes()[d];
    const int64_t row = out.sizes()[dim] * inner;
    W* base = static_cast<W*>(out.data_ptr());
    cudaStream_t stream = current_stream();
    int64_t col = 0;
    for (int first = 0; first < n; first += kCatBatch) {
      CatBatch b;
      int m = 0;
      int64_t widest = 0;
      for (int i = first; i < n && m < kCatBatch; ++i) {
        const int64_t chunk = ins[i].sizes()[dim] * inner;
        if (chunk == 0) continue;
        b.src[m] = static_cast<const char*>(ins[i].data_ptr());
        b.chunk[m] = chunk;
        b.off[m] = col;
        col += chunk;
        widest = chunk > widest ? chunk : widest;
        ++m;
      }
      if (m == 0) continue;
      const dim3 grid(unsigned(grid_for(outer * widest, kBlock)), unsigned(m));
      cat_kernel<W><<<grid, kBlock, 0, stream>>>(base, b, outer, row);
      FASTT_CUDA_CHECK_LAUNCH("cat");
    }
  }
};

// ------------------------------------- masked_select and nonzero (counts) --
// Both need the result size before they can allocate it: a flag per
// element (row-major), an inclusive scan giving each hit its 1-based output
// slot, then ONE device->host read of the total (the only sync in this
// file besides one_hot's class range) and a fill pass. Being a sync, it
// raises errors the device reported before (device_error.h).

// flags[i] = 1 where mask (bool) is set.
__global__ void mask_flags_kernel(const bool* mask, TensorDesc d, int64_t n,
                                  int64_t* flags) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    flags[i] = mask[offset_of(d, i)] ? 1 : 0;
}

// flags[i] = 1 where the value is nonzero in op math (NaN counts).
template <class T>
__global__ void nonzero_flags_kernel(const T* x, TensorDesc d, int64_t n,
                                     int64_t* flags) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    flags[i] = static_cast<opmath_t<T>>(x[offset_of(d, i)]) !=
                       opmath_t<T>(0)
                   ? 1
                   : 0;
}

// pos = inclusive prefix sum of flags; returns the total (synchronizes the
// stream: the caller must size its output from it).
int64_t scan_count(const int64_t* flags, int64_t* pos, int64_t n,
                   Device dev, const char* what) {
  cudaStream_t stream = current_stream();
  size_t temp_bytes = 0;
  FASTT_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, flags,
                                                 pos, n, stream),
                   what);
  Tensor temp = Tensor::empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
  FASTT_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data_ptr(), temp_bytes,
                                                 flags, pos, n, stream),
                   what);
  int64_t total = 0;
  // Data-dependent output size: read the count back (one sync).
  FASTT_CUDA_CHECK(cudaMemcpyAsync(&total, pos + (n - 1), sizeof(total),
                                   cudaMemcpyDeviceToHost, stream),
                   what);
  FASTT_CUDA_CHECK(cudaStreamSynchronize(stream), what);
  check_device_errors(dev.index);
  return total;
}

template <class W>
__global__ void masked_fill_out_kernel(W* out, const W* x, TensorDesc d,
                                       int64_t n, const int64_t* flags,
                                       const int64_t* pos) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    if (flags[i]) out[pos[i] - 1] = x[offset_of(d, i)];
}

// in[0] = self, in[1] = bool mask, both at the broadcast shape.
template <class T>
struct MaskedSelectK {
  static void run(KernelArgs& a) {
    using W = word_t<T>;
    const Tensor& self = *a.in[0];
    const Tensor& mask = *a.in[1];
    const Device dev = self.device();
    const int64_t n = mask.numel();
    if (n == 0) {
      *a.out = Tensor::empty({0}, self.dtype(), dev);
      return;
    }
    const TensorDesc dm = describe(mask), ds = describe(self);
    Tensor flags = Tensor::empty({n}, DType::Int64, dev);
    Tensor pos = Tensor::empty({n}, DType::Int64, dev);
    int64_t* f = static_cast<int64_t*>(flags.data_ptr());
    int64_t* p = static_cast<int64_t*>(pos.data_ptr());
    cudaStream_t stream = current_stream();
    const int grid = grid_for(n, kBlock);
    mask_flags_kernel<<<grid, kBlock, 0, stream>>>(
        static_cast<const bool*>(mask.data_ptr()), dm, n, f);
    FASTT_CUDA_CHECK_LAUNCH("masked_select");
    const int64_t total = scan_count(f, p, n, dev, "masked_select");
    *a.out = Tensor::empty({total}, self.dtype(), dev);
    if (total == 0) return;
    masked_fill_out_kernel<W><<<grid, kBlock, 0, stream>>>(
        static_cast<W*>(a.out->data_ptr()),
        static_cast<const W*>(self.data_ptr()), ds, n, f, p);
    FASTT_CUDA_CHECK_LAUNCH("masked_select");
  }
};

// out [total, nd] row pos-1 = the coordinates of hit i.
__global__ void nonzero_out_kernel(int64_t* out, TensorDesc d, int64_t n,
                                   const int64_t* flags, const int64_t* pos) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (!flags[i]) continue;
    int64_t* row = out + (pos[i] - 1) * d.nd;
    int64_t rem = i;
    for (int k = d.nd - 1; k >= 0; --k) {
      row[k] = rem % d.sizes[k];
      rem /= d.sizes[k];
    }
  }
}

template <class T>
struct NonzeroK {
  static void run(KernelArgs& a) {
    const Tensor& self = *a.in[0];
    const Device dev = self.device();
    const int64_t nd = self.dim();
    const int64_t n = self.numel();
    if (n == 0) {
      *a.out = Tensor::empty({0, nd}, DType::Int64, dev);
      return;
    }
    const TensorDesc ds = describe(self);
    Tensor flags = Tensor::empty({n}, DType::Int64, dev);
    Tensor pos = Tensor::empty({n}, DType::Int64, dev);
    int64_t* f = static_cast<int64_t*>(flags.data_ptr());
    int64_t* p = static_cast<int64_t*>(pos.data_ptr());
    cudaStream_t stream = current_stream();
    const int grid = grid_for(n, kBlock);
    nonzero_flags_kernel<T><<<grid, kBlock, 0, stream>>>(
        static_cast<const T*>(self.data_ptr()), ds, n, f);
    FASTT_CUDA_CHECK_LAUNCH("nonzero");
    const int64_t total = scan_count(f, p, n, dev, "nonzero");
    *a.out = Tensor::empty({total, nd}, DType::Int64, dev);
    if (total == 0 || nd == 0) return;
    nonzero_out_kernel<<<grid, kBlock, 0, stream>>>(
        static_cast<int64_t*>(a.out->data_ptr()), ds, n, f, p);
    FASTT_CUDA_CHECK_LAUNCH("nonzero");
  }
};

// ----------------------------------------------------------- tril/triu --
// Contiguous [..., R, C] in and out (possibly the same memory: each thread
// reads and writes only its own element). Keeps col - row <= k (tril) or
// >= k (triu).
template <bool kLower, class T>
__global__ void tri_kernel(T* out, const T* in, int64_t n, int64_t R,
                           int64_t C, int64_t k) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += stride) {
    const int64_t rc = e / C;
    const int64_t j = e - rc * C, i = rc % R;
    const bool keep = kLower ? j - i <= k : j - i >= k;
    out[e] = keep ? in[e] : T(0);
  }
}

template <bool kLower>
struct Tri {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      Tensor& out = *a.out;
      const int64_t n = out.numel();
      if (n == 0) return;
      const int64_t R = out.sizes()[out.dim() - 2];
      const int64_t C = out.sizes()[out.dim() - 1];
      tri_kernel<kLower, T>
          <<<grid_for(n, kBlock), kBlock, 0, current_stream()>>>(
              static_cast<T*>(out.data_ptr()),
              static_cast<const T*>(a.in[0]->data_ptr()), n, R, C, a.i0);
      FASTT_CUDA_CHECK_LAUNCH(kLower ? "tril" : "triu");
    }
  };
};

// ----------------------------------------------------------- flip, roll --
// out (contiguous) element at coordinates c reads self at c' with, per
// dim, c'_d = size-1-c_d where flipped, then (c'_d - shift_d) mod size.
struct Remap {
  TensorDesc src;           // self's sizes (= out's) and strides
  int64_t shift[kMaxDims] = {};  // in [0, size)
  uint32_t flip_mask = 0;
};

template <class W>
__global__ void remap_kernel(W* out, const W* in, Remap m, int64_t n) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += stride) {
    int64_t rem = e, off = 0;
    for (int d = m.src.nd - 1; d >= 0; --d) {
      const int64_t size = m.src.sizes[d];
      int64_t c = rem % size;
      rem /= size;
      if ((m.flip_mask >> d) & 1u) c = size - 1 - c;
      const int64_t s = m.shift[d];
      c = c >= s ? c - s : c - s + size;
      off += c * m.src.strides[d];
    }
    out[e] = in[off];
  }
}

template <class T>
void launch_remap(KernelArgs& a, const Remap& m, const char* what) {
  using W = word_t<T>;
  Tensor& out = *a.out;
  const int64_t n = out.numel();
  if (n == 0) return;
  remap_kernel<W><<<grid_for(n, kBlock), kBlock, 0, current_stream()>>>(
      static_cast<W*>(out.data_ptr()),
      static_cast<const W*>(a.in[0]->data_ptr()), m, n);
  FASTT_CUDA_CHECK_LAUNCH(what);
}

// flip: dims lists the flipped dims.
template <class T>
struct FlipK {
  static void run(KernelArgs& a) {
    Remap m;
    m.src = describe(*a.in[0]);
    for (int64_t d : a.dims) m.flip_mask |= 1u << d;
    launch_remap<T>(a, m, "flip");
  }
};

// roll: dims = [d_0..d_{k-1}, s_0..s_{k-1}], shifts in [0, size).
template <class T>
struct RollK {
  static void run(KernelArgs& a) {
    Remap m;
    m.src = describe(*a.in[0]);
    const size_t k = a.dims.size() / 2;
    for (size_t j = 0; j < k; ++j) m.shift[a.dims[j]] = a.dims[k + j];
    launch_remap<T>(a, m, "roll");
  }
};

}  // namespace

// Smallest and largest value of a non-empty int64 tensor on the current
// CUDA device: one reduction and a 16-byte read back (one stream sync, so
// it raises errors the device reported before). one_hot needs them on the
// host: the largest sizes its result when num_classes is -1.
void int64_min_max(const Tensor& t, int64_t* lo, int64_t* hi) {
  const int64_t n = t.numel();
  Tensor r = Tensor::empty({2}, DType::Int64, t.device());
  long long* rp = static_cast<long long*>(r.data_ptr());
  cudaStream_t stream = current_stream();
  minmax_init_kernel<<<1, 1, 0, stream>>>(rp);
  FASTT_CUDA_CHECK_LAUNCH("one_hot");
  minmax_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(
      static_cast<const int64_t*>(t.data_ptr()), describe(t), n, rp);
  FASTT_CUDA_CHECK_LAUNCH("one_hot");
  long long host[2];
  FASTT_CUDA_CHECK(cudaMemcpyAsync(host, rp, sizeof(host),
                                   cudaMemcpyDeviceToHost, stream),
                   "one_hot");
  FASTT_CUDA_CHECK(cudaStreamSynchronize(stream), "one_hot");
  check_device_errors(current_device());
  *lo = int64_t(host[0]);
  *hi = int64_t(host[1]);
}

void register_index_cuda_kernels() {
#define FASTT_KERNELS_index
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt

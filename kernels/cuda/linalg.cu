// CUDA kernel for Op::gemm: out = beta*addend + alpha*(A @ B) over any
// batch dims, with the CPU kernel's contract (kernels/cpu/linalg.cpp).
// Floating and complex dtypes go to cuBLAS when built with it
// (FASTT_WITH_CUBLAS; cgemm/zgemm types for complex) and the operands
// are BLAS-shaped; everything else (integers, odd strides,
// builds without cuBLAS) runs a tiled shared-memory kernel.
#include <climits>
#include <type_traits>

#include "kernels/cuda/blas.h"
#include "kernels/cuda/loop.cuh"
#include "kernels/gemm_geom.h"

#ifdef FASTT_WITH_CUBLAS
#include <cublas_v2.h>

#include "kernels/cuda/handle_pool.h"
#endif

namespace fastt {
namespace cuda {

bool& allow_tf32() {
  static bool on = false;
  return on;
}
bool& cudnn_allow_tf32() {
  static bool on = true;
  return on;
}

namespace {

constexpr int kTile = 16;  // tiled kernel: 16x16 outputs per block
constexpr int kMaxBatchDims = kMaxDims - 2;

// Accumulator of the tiled kernel, as on the CPU: float for the 16-bit
// floats, T for float/double, uint64 for integers (wrapping, no UB).
template <class T>
using acc_t = std::conditional_t<std::is_integral<T>::value, uint64_t,
                                 opmath_t<T>>;

template <class T>
__host__ __device__ __forceinline__ acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral<T>::value)
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  else
    return static_cast<acc_t<T>>(v);
}

// A tile element in shared memory, whose arrays take no constructor
// (Complex zero-initializes): a complex accumulator is staged as a plain
// pair of its parts.
template <class Acc>
struct SmemOf {
  using type = Acc;
};
template <class R>
struct SmemOf<Complex<R>> {
  struct type {
    R re, im;
    __host__ __device__ type& operator=(Complex<R> z) {
      re = z.re;
      im = z.im;
      return *this;
    }
    __host__ __device__ operator Complex<R>() const { return {re, im}; }
  };
};

// One call's geometry as the device sees it (strides in elements). Batch
// item b is decomposed over bsizes (row-major, last batch dim fastest).
template <class T>
struct GemmParams : GemmGeom {
  const T* A;
  const T* B;
  T* C;
  const T* I;  // addend, or null: C itself is the addend
  int64_t batch;
  int nb;
  int64_t bsizes[kMaxBatchDims];
  int64_t bstr[4][kMaxBatchDims];  // A, B, C, addend
  acc_t<T> alpha, beta;
  bool beta_zero;
  bool skip_product;  // alpha == 0 or K == 0: C = beta * addend only
};

template <class T>
GemmParams<T> make_params(const KernelArgs& a) {
  GemmParams<T> p;
  const Tensor& ta = *a.in[0];
  const Tensor& tb = *a.in[1];
  const Tensor& tc = *a.out;
  const Tensor* ti = a.in[2];
  const int nb = int(tc.dim()) - 2;
  static_cast<GemmGeom&>(p) = gemm_geom(a);
  p.nb = nb;
  p.batch = 1;
  for (int d = 0; d < nb; ++d) {
    p.bsizes[d] = tc.sizes()[d];
    p.batch *= p.bsizes[d];
    p.bstr[0][d] = ta.strides()[d];
    p.bstr[1][d] = tb.strides()[d];
    p.bstr[2][d] = tc.strides()[d];
    p.bstr[3][d] = ti ? ti->strides()[d] : 0;
  }
  p.A = static_cast<const T*>(ta.data_ptr());
  p.B = static_cast<const T*>(tb.data_ptr());
  p.C = static_cast<T*>(tc.data_ptr());
  p.I = ti ? static_cast<const T*>(ti->data_ptr()) : nullptr;
  bool alpha_zero;
  if constexpr (std::is_integral<T>::value) {
    p.alpha = to_acc<int64_t>(a.i0);
    p.beta = to_acc<int64_t>(a.i1);
    alpha_zero = a.i0 == 0;
    p.beta_zero = a.i1 == 0;
  } else {
    p.alpha = acc_t<T>(a.f0);
    p.beta = acc_t<T>(a.f1);
    alpha_zero = a.f0 == 0.0;
    p.beta_zero = a.f1 == 0.0;
  }
  p.skip_product = alpha_zero || p.K == 0;
  return p;
}

// Element offsets of batch item b in A, B, C and the addend.
template <class T>
__device__ __forceinline__ void batch_offsets(const GemmParams<T>& p,
                                              int64_t b, int64_t off[4]) {
  off[0] = off[1] = off[2] = off[3] = 0;
  for (int d = p.nb - 1; d >= 0; --d) {
    const int64_t idx = b % p.bsizes[d];
    b /= p.bsizes[d];
#pragma unroll
    for (int k = 0; k < 4; ++k) off[k] += idx * p.bstr[k][d];
  }
}

// The tiled product: block (16, 16) owns a 16x16 tile of C and walks K in
// 16-wide slabs staged through shared memory. Grid x/y/z cover N/M tiles and
// batch items with block-uniform stride loops (the __syncthreads stay
// uniform), so any size fits the grid limits. Any strides are read.
template <class T>
__global__ void tiled_gemm_kernel(GemmParams<T> p) {
  using Acc = acc_t<T>;
  using Smem = typename SmemOf<Acc>::type;
  __shared__ Smem As[kTile][kTile + 1];
  __shared__ Smem Bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t mtiles = (p.M + kTile - 1) / kTile;
  const int64_t ntiles = (p.N + kTile - 1) / kTile;
  for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
    int64_t off[4];
    batch_offsets(p, bz, off);
    const T* A = p.A + off[0];
    const T* B = p.B + off[1];
    T* C = p.C + off[2];
    const T* D = p.I ? p.I + off[3] : C;
    const int64_t sdm = p.I ? p.sim : p.scm, sdn = p.I ? p.sin : p.scn;
    for (int64_t mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
      for (int64_t nt = blockIdx.x; nt < ntiles; nt += gridDim.x) {
        const int64_t m = mt * kTile + ty, n = nt * kTile + tx;
        Acc acc = Acc(0);
        if (!p.skip_product) {
          for (int64_t k0 = 0; k0 < p.K; k0 += kTile) {
            const int64_t ka = k0 + tx, kb = k0 + ty;
            As[ty][tx] = (m < p.M && ka < p.K)
                             ? to_acc(A[m * p.sam + ka * p.sak])
                             : Acc(0);
            Bs[ty][tx] = (kb < p.K && n < p.N)
                             ? to_acc(B[kb * p.sbk + n * p.sbn])
                             : Acc(0);
            __syncthreads();
#pragma unroll
            for (int k = 0; k < kTile; ++k)
              acc += Acc(As[ty][k]) * Acc(Bs[k][tx]);
            __syncthreads();
          }
        }
        if (m < p.M && n < p.N) {
          // BLAS semantics: a skipped product adds nothing (not alpha*0,
          // which is NaN for an infinite alpha), beta == 0 reads nothing.
          Acc v = p.skip_product ? Acc(0) : p.alpha * acc;
          if (!p.beta_zero) v += p.beta * to_acc(D[m * sdm + n * sdn]);
          C[m * p.scm + n * p.scn] = static_cast<T>(v);
        }
      }
    }
  }
}

template <class T>
void launch_tiled(const GemmParams<T>& p) {
  const int64_t mtiles = (p.M + kTile - 1) / kTile;
  const int64_t ntiles = (p.N + kTile - 1) / kTile;
  dim3 grid(unsigned(std::min<int64_t>(ntiles, INT_MAX)),
            unsigned(std::min<int64_t>(mtiles, 65535)),
            unsigned(std::min<int64_t>(p.batch, 65535)));
  tiled_gemm_kernel<T><<<grid, dim3(kTile, kTile), 0, current_stream()>>>(p);
  FASTT_CUDA_CHECK_LAUNCH("gemm");
}

#ifdef FASTT_WITH_CUBLAS

// C = addend for every batch item (cuBLAS then applies beta in place).
template <class T>
__global__ void copy_addend_kernel(GemmParams<T> p, int64_t total) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += step) {
    const int64_t n = i % p.N, m = (i / p.N) % p.M, b = i / (p.N * p.M);
    int64_t off[4];
    batch_offsets(p, b, off);
    p.C[off[2] + m * p.scm + n * p.scn] =
        p.I[off[3] + m * p.sim + n * p.sin];
  }
}

// The A, B and C pointers of every batch item, for cublasGemmBatchedEx:
// ptrs[0, batch) A, [batch, 2 batch) B, [2 batch, 3 batch) C.
template <class T>
__global__ void batch_pointers_kernel(GemmParams<T> p, void** ptrs,
                                      int64_t batch) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < batch;
       b += step) {
    int64_t off[4];
    batch_offsets(p, b, off);
    ptrs[b] = const_cast<T*>(p.A + off[0]);
    ptrs[batch + b] = const_cast<T*>(p.B + off[1]);
    ptrs[2 * batch + b] = p.C + off[2];
  }
}

#define FASTT_CUBLAS_CHECK(expr, what)                                     \
  do {                                                                     \
    cublasStatus_t _st = (expr);                                           \
    if (FASTT_UNLIKELY(_st != CUBLAS_STATUS_SUCCESS))                      \
      throw RuntimeError(fmt::format("{}: cuBLAS error: {}", what,         \
                                     cublasGetStatusString(_st)));         \
  } while (0)

// One handle per (thread, device): cuBLAS handles must not be shared by
// threads running at once. Pooled at thread exit with their workspaces
// (handle_pool.h), so short-lived threads do not leak 32 MB each.
// cublasSetStream resets the handle's workspace, so a workspace is set
// after every stream change; workspaces are kept per stream (a few) so
// work still queued on one stream never shares scratch with another.
constexpr int kStreamSlots = 4;
struct HandleState {
  cublasHandle_t handle;
  cudaStream_t bound;  // stream last given to cublasSetStream
  bool created;
  cudaStream_t ws_stream[kStreamSlots];
  Tensor* ws[kStreamSlots];  // leaked on purpose, like the handle
  int ws_used;
};

// Hopper's cuBLAS kernels want more scratch than older GPUs'.
size_t workspace_bytes(int dev) {
  return device_props(dev).major >= 9 ? (size_t(32) << 20)
                                      : (size_t(4) << 20);
}

cublasHandle_t get_handle() {
  const int dev = current_device();
  // A pooled handle comes as its exited thread left it (bound stream,
  // workspaces).
  HandleState& s = thread_handle_state<HandleState>(dev);
  if (FASTT_UNLIKELY(!s.created)) {
    FASTT_CUBLAS_CHECK(cublasCreate(&s.handle), "gemm (cublasCreate)");
    FASTT_CUBLAS_CHECK(cublasSetMathMode(s.handle, CUBLAS_DEFAULT_MATH),
                       "gemm (cublasSetMathMode)");
    s.created = true;
    s.bound = reinterpret_cast<cudaStream_t>(~uintptr_t(0));
    s.ws_used = 0;
  }
  cudaStream_t stream = current_stream();
  if (s.bound != stream) {
    FASTT_CUBLAS_CHECK(cublasSetStream(s.handle, stream),
                       "gemm (cublasSetStream)");
    s.bound = stream;
    Tensor* ws = nullptr;
    for (int i = 0; i < s.ws_used; ++i)
      if (s.ws_stream[i] == stream) ws = s.ws[i];
    if (!ws && s.ws_used < kStreamSlots) {
      ws = new Tensor(Tensor::empty({int64_t(workspace_bytes(dev))},
                                    DType::UInt8,
                                    Device(DeviceType::CUDA, dev)));
      s.ws_stream[s.ws_used] = stream;
      s.ws[s.ws_used++] = ws;
    }
    // Past the slots: no user workspace (cuBLAS picks kernels without).
    FASTT_CUBLAS_CHECK(
        cublasSetWorkspace(s.handle, ws ? ws->data_ptr() : nullptr,
                           ws ? workspace_bytes(dev) : 0),
        "gemm (cublasSetWorkspace)");
  }
  return s.handle;
}

// How cuBLAS reads a rows x cols row-major operand with strides (sr, sc):
// as is (`trans` false: column-major cols x rows, ld = sr) or through the
// transpose (true: column-major rows x cols, ld = sc). False when neither
// fits (the CPU's blas_view, same rules).
bool blas_view(int64_t rows, int64_t cols, int64_t sr, int64_t sc,
               bool* trans, int64_t* ld) {
  if ((cols == 1 || sc == 1) &&
      (rows == 1 || sr >= std::max<int64_t>(1, cols))) {
    *trans = false;
    *ld = rows == 1 ? std::max<int64_t>(1, cols) : sr;
  } else if ((rows == 1 || sr == 1) &&
             (cols == 1 || sc >= std::max<int64_t>(1, rows))) {
    *trans = true;
    *ld = cols == 1 ? std::max<int64_t>(1, rows) : sc;
  } else {
    return false;
  }
  return *ld <= INT_MAX && rows <= INT_MAX && cols <= INT_MAX;
}

template <class T>
struct CublasType;
template <>
struct CublasType<float> {
  static constexpr cudaDataType_t data = CUDA_R_32F;
  using Scale = float;
};
template <>
struct CublasType<double> {
  static constexpr cudaDataType_t data = CUDA_R_64F;
  using Scale = double;
};
template <>
struct CublasType<Half> {
  static constexpr cudaDataType_t data = CUDA_R_16F;
  using Scale = float;
};
template <>
struct CublasType<BFloat16> {
  static constexpr cudaDataType_t data = CUDA_R_16BF;
  using Scale = float;
};

// complex64/complex128: cuBLAS's cgemm/zgemm types; alpha and beta are
// complex numbers of the element type (Complex's layout is cuComplex's).
template <>
struct CublasType<Complex64> {
  static constexpr cudaDataType_t data = CUDA_C_32F;
  using Scale = Complex64;
};
template <>
struct CublasType<Complex128> {
  static constexpr cudaDataType_t data = CUDA_C_64F;
  using Scale = Complex128;
};

template <class T>
cublasComputeType_t compute_type() {
  if constexpr (std::is_same<RealOf<T>, double>::value)
    return CUBLAS_COMPUTE_64F;
  if constexpr (IsComplex<T>::value) return CUBLAS_COMPUTE_32F;
  if constexpr (std::is_same<T, float>::value)
    return allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  // 16-bit inputs accumulate in float, like torch.
  return CUBLAS_COMPUTE_32F;
}

// One batch dim after merging: its size and the A, B, C strides.
struct BatchDim {
  int64_t size, s[3];
};

// Merges the batch dims that step through all three operands uniformly
// (size-1 dims dropped), innermost last. Returns the count (0: no batch).
template <class T>
int merged_batch(const GemmParams<T>& p, BatchDim* out) {
  int n = 0;
  for (int d = 0; d < p.nb; ++d) {
    if (p.bsizes[d] == 1) continue;
    BatchDim cur{p.bsizes[d], {p.bstr[0][d], p.bstr[1][d], p.bstr[2][d]}};
    if (n > 0) {
      BatchDim& prev = out[n - 1];
      bool merge = true;
      for (int k = 0; k < 3; ++k)
        merge = merge && prev.s[k] == cur.s[k] * cur.size;
      if (merge) {
        prev.size *= cur.size;
        for (int k = 0; k < 3; ++k) prev.s[k] = cur.s[k];
        continue;
      }
    }
    out[n++] = cur;
  }
  return n;
}

// cuBLAS path; false when the layout is not BLAS-shaped (tiled fallback).
// Row-major C = A @ B is column-major C^T = B^T A^T: cuBLAS gets B first,
// m = N, n = M, and each operand's stored layout picks its op.
template <class T>
bool run_cublas(const GemmParams<T>& p) {
  bool ta, tb, tc;
  int64_t lda, ldb, ldc;
  if (!blas_view(p.M, p.K, p.sam, p.sak, &ta, &lda) ||
      !blas_view(p.K, p.N, p.sbk, p.sbn, &tb, &ldb) ||
      !blas_view(p.M, p.N, p.scm, p.scn, &tc, &ldc) || tc)
    return false;
  BatchDim dims[kMaxBatchDims];
  int nd = merged_batch(p, dims);
  if (nd == 0) dims[nd++] = BatchDim{1, {0, 0, 0}};
  cublasHandle_t h = get_handle();
  // With an addend, C first takes its values and cuBLAS applies beta;
  // beta == 0 never reads C.
  if (p.I && !p.beta_zero) {
    const int64_t total = p.batch * p.M * p.N;
    copy_addend_kernel<T><<<grid_for(total, kBlock), kBlock, 0,
                            current_stream()>>>(p, total);
    FASTT_CUDA_CHECK_LAUNCH("gemm");
  }
  using S = typename CublasType<T>::Scale;
  const S alpha = S(p.alpha);
  const S beta = p.beta_zero ? S(0) : S(p.beta);
  const cudaDataType_t dt = CublasType<T>::data;
  const cublasComputeType_t ct = compute_type<T>();
  constexpr int64_t kMaxBatch = 65535;  // a batchCount every cuBLAS takes
  if (nd > 1) {
    // Batch dims that do not merge (attention's q/k/v permuted out of one
    // [L, N, 3E] projection: N and H step by 3E and D): one pointer-array
    // call over all items, the pointers computed on the device, rather
    // than a cuBLAS call (a launch) per outer item.
    const int64_t batch = p.batch;
    Tensor ptrs = Tensor::empty({3 * batch}, DType::Int64,
                                Device(DeviceType::CUDA, current_device()));
    void** dp = static_cast<void**>(ptrs.data_ptr());
    batch_pointers_kernel<T><<<grid_for(batch, kBlock), kBlock, 0,
                               current_stream()>>>(p, dp, batch);
    FASTT_CUDA_CHECK_LAUNCH("gemm");
    for (int64_t b0 = 0; b0 < batch; b0 += kMaxBatch) {
      const int64_t count = std::min(kMaxBatch, batch - b0);
      FASTT_CUBLAS_CHECK(
          cublasGemmBatchedEx(
              h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
              ta ? CUBLAS_OP_T : CUBLAS_OP_N, int(p.N), int(p.M), int(p.K),
              &alpha, dp + batch + b0, dt, int(ldb), dp + b0, dt, int(lda),
              &beta, dp + 2 * batch + b0, dt, int(ldc), int(count), ct,
              CUBLAS_GEMM_DEFAULT),
          "gemm");
    }
    return true;
  }
  // One merged batch dim: a strided batched call, split so batchCount
  // stays within what every cuBLAS version accepts.
  const BatchDim& in = dims[nd - 1];
  for (int64_t b0 = 0; b0 < in.size; b0 += kMaxBatch) {
    const int64_t count = std::min(kMaxBatch, in.size - b0);
    const T* A = p.A + b0 * in.s[0];
    const T* B = p.B + b0 * in.s[1];
    T* C = p.C + b0 * in.s[2];
    FASTT_CUBLAS_CHECK(
        cublasGemmStridedBatchedEx(
            h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
            int(p.N), int(p.M), int(p.K), &alpha, B, dt, int(ldb), in.s[1],
            A, dt, int(lda), in.s[0], &beta, C, dt, int(ldc), in.s[2],
            int(count), ct, CUBLAS_GEMM_DEFAULT),
        "gemm");
  }
  return true;
}

#endif  // FASTT_WITH_CUBLAS

template <class T>
struct Gemm {
  static void run(KernelArgs& a) {
    const GemmParams<T> p = make_params<T>(a);
    if (p.M == 0 || p.N == 0 || p.batch == 0) return;
#ifdef FASTT_WITH_CUBLAS
    if constexpr (!std::is_integral<T>::value) {
      if (!p.skip_product && run_cublas(p)) return;
    }
#endif
    launch_tiled(p);
  }
};

}  // namespace

void register_linalg_cuda_kernels() {
#define FASTT_KERNELS_linalg
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt

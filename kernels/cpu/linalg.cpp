// CPU kernel for Op::gemm: out = beta*addend + alpha*(A @ B) over any batch
// dims. float/double go to OpenBLAS (tiny matrices to a loop), half types
// through float, integers through a blocked loop. New BLAS-backed dtypes
// add a blas_gemm overload and a line in register_linalg_kernels.
//
// Contract (the op layer, csrc/ops/linalg.cpp, guarantees it):
//   out  [..., M, N]  every row dense (last stride 1 or N == 1), no overlap
//   in0  A [..., M, K] (or [..., K, M] read transposed when i2 & 1)
//   in1  B [..., K, N] (or [..., N, K] read transposed when i2 & 2)
//   in2  addend with out's shape (any strides) or nullptr: out is the addend
//   batch dims of A, B, addend equal out's (broadcast ones have stride 0)
//   f0/f1 = alpha/beta for floating dtypes, i0/i1 for integer dtypes.
//   beta == 0 never reads the addend (NaN there does not propagate), and
//   alpha == 0 or K == 0 skips the product (BLAS semantics).
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "csrc/thread_state.h"
#include "kernels/cpu/loop.h"
#include "kernels/gemm_geom.h"
#include "kernels/cpu/onednn_matmul.h"
#include "kernels/cpu/vec_clones.h"

namespace fastt {
namespace {
using namespace cpu;

// Below this many multiply-adds (M*N*K) a plain dot-product loop beats the
// BLAS call, whose fixed cost (~60 ns here) dominates tiny products.
// Measured (throwaway program, float32, one thread, median ns, loop vs
// cblas_sgemm): 2^3 8 vs 58, 4^3 22 vs 63, 5^3 41 vs 77, 6^3 66 vs 84,
// 7^3 100 vs 105, 8^3 154 vs 92; 8x8x4 / 4x8x8 / 16x4x4 / 4x4x16 (256)
// 86/73/84/69 vs 77/70/81/82. Crossover ~ 256-343; float64 alike. (A
// shared 2-core box under load: trust the ratios, not the ns.)
constexpr int64_t kTinyGemmMNK = 256;
// OpenBLAS runs a gemm on one thread below 4 * 65536 multiply-adds
// (interface/gemm.c), so batches of matrices that small are spread over
// our threads instead; bigger ones let OpenBLAS thread each call.
constexpr int64_t kBlasSingleThreadMNK = 4 * 65536;
// gemv and dot thread themselves above ~9216 elements, so those splits stop
// earlier.
constexpr int64_t kBlasVectorSingleThread = 8192;
// Multiply-adds a thread should get before another one is worth starting.
constexpr int64_t kGemmGrain = 1 << 16;
// Columns of the loop kernel's accumulator block (kept on the stack).
constexpr int64_t kColBlock = 64;

// One matrix product's geometry (kernels/gemm_geom.h).
using Geom = GemmGeom;

// Accumulator type of the loop kernel: float for half types, T for float
// and double, uint64 for integers (wrapping arithmetic, no signed UB; the
// low bits equal those of the exact product, as a cast to T keeps).
template <class T>
using acc_t = std::conditional_t<std::is_integral<T>::value, uint64_t,
                                 opmath_t<T>>;

template <class T>
inline acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral<T>::value)
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  else
    return static_cast<acc_t<T>>(v);
}

// C rows [m0, m1) = beta*addend + alpha*(A @ B), any strides. i-k-j order
// with a row block of accumulators so the inner loop runs along B's row.
template <class T>
void loop_gemm(const Geom& g, int64_t m0, int64_t m1, const T* A, const T* B,
               T* C, const T* I, acc_t<T> alpha, acc_t<T> beta,
               bool beta_zero) {
  using Acc = acc_t<T>;
  const T* addend = I ? I : C;
  const int64_t sdm = I ? g.sim : g.scm, sdn = I ? g.sin : g.scn;
  Acc acc[kColBlock] = {};
  for (int64_t n0 = 0; n0 < g.N; n0 += kColBlock) {
    const int64_t nb = std::min(kColBlock, g.N - n0);
    for (int64_t m = m0; m < m1; ++m) {
      for (int64_t j = 0; j < nb; ++j) acc[j] = Acc(0);
      const T* arow = A + m * g.sam;
      for (int64_t k = 0; k < g.K; ++k) {
        const Acc a = to_acc(arow[k * g.sak]);
        const T* brow = B + k * g.sbk + n0 * g.sbn;
        if (g.sbn == 1) {
          for (int64_t j = 0; j < nb; ++j) acc[j] += a * to_acc(brow[j]);
        } else {
          for (int64_t j = 0; j < nb; ++j)
            acc[j] += a * to_acc(brow[j * g.sbn]);
        }
      }
      T* crow = C + m * g.scm + n0 * g.scn;
      const T* drow = addend + m * sdm + n0 * sdn;
      for (int64_t j = 0; j < nb; ++j) {
        Acc v = alpha * acc[j];
        if (!beta_zero) v += beta * to_acc(drow[j * sdn]);
        crow[j * g.scn] = static_cast<T>(v);
      }
    }
  }
}

// The same product in dot form: fastest for tiny matrices (no accumulator
// block to set up) and for a single row times a single column. KF > 0 fixes
// K at compile time so the reduction unrolls (4x4 @ 4x4: ~1100 -> ~400
// instructions); geometry lives in locals so stores to C (which may be
// int64) cannot force reloads.
template <class T, int KF>
void dot_gemm_k(const Geom& g, const T* A, const T* B, T* C, const T* I,
                acc_t<T> alpha, acc_t<T> beta, bool beta_zero) {
  using Acc = acc_t<T>;
  const int64_t M = g.M, N = g.N, K = KF > 0 ? KF : g.K;
  const int64_t sam = g.sam, sak = g.sak, sbk = g.sbk, sbn = g.sbn;
  const int64_t scm = g.scm, scn = g.scn;
  const T* addend = I ? I : C;
  const int64_t sdm = I ? g.sim : scm, sdn = I ? g.sin : scn;
  for (int64_t m = 0; m < M; ++m) {
    const T* a = A + m * sam;
    for (int64_t n = 0; n < N; ++n) {
      const T* b = B + n * sbn;
      Acc acc(0);
      for (int64_t k = 0; k < K; ++k)
        acc += to_acc(a[k * sak]) * to_acc(b[k * sbk]);
      Acc v = alpha * acc;
      if (!beta_zero) v += beta * to_acc(addend[m * sdm + n * sdn]);
      C[m * scm + n * scn] = static_cast<T>(v);
    }
  }
}

template <class T>
void dot_gemm(const Geom& g, const T* A, const T* B, T* C, const T* I,
              acc_t<T> alpha, acc_t<T> beta, bool beta_zero) {
  switch (g.K) {
    case 1: return dot_gemm_k<T, 1>(g, A, B, C, I, alpha, beta, beta_zero);
    case 2: return dot_gemm_k<T, 2>(g, A, B, C, I, alpha, beta, beta_zero);
    case 3: return dot_gemm_k<T, 3>(g, A, B, C, I, alpha, beta, beta_zero);
    case 4: return dot_gemm_k<T, 4>(g, A, B, C, I, alpha, beta, beta_zero);
    default: return dot_gemm_k<T, 0>(g, A, B, C, I, alpha, beta, beta_zero);
  }
}

// C = beta*addend (zero when beta == 0): the product is empty or scaled away.
template <class T>
void scale_only(const Geom& g, T* C, const T* I, acc_t<T> beta,
                bool beta_zero) {
  const T* addend = I ? I : C;
  const int64_t sdm = I ? g.sim : g.scm, sdn = I ? g.sin : g.scn;
  for (int64_t m = 0; m < g.M; ++m)
    for (int64_t n = 0; n < g.N; ++n) {
      T& c = C[m * g.scm + n * g.scn];
      c = beta_zero ? T(0)
                    : static_cast<T>(beta * to_acc(addend[m * sdm + n * sdn]));
    }
}

// C = addend, so BLAS can then apply beta in place.
template <class T>
void copy_addend(const Geom& g, T* C, const T* I) {
  for (int64_t m = 0; m < g.M; ++m) {
    T* crow = C + m * g.scm;
    const T* irow = I + m * g.sim;
    if (g.sin == 1 && g.scn == 1) {
      std::memcpy(crow, irow, size_t(g.N) * sizeof(T));
    } else if (g.sin == 0 && g.scn == 1) {  // one value broadcast along a row
      std::fill(crow, crow + g.N, irow[0]);
    } else {
      for (int64_t n = 0; n < g.N; ++n) crow[n * g.scn] = irow[n * g.sin];
    }
  }
}

// How BLAS sees a rows x cols operand with strides (sr, sc): row-major
// as is (NoTrans) or the row-major transpose (Trans), with its leading
// dimension. False when neither fits (zero strides, overlap, int overflow).
bool blas_view(int64_t rows, int64_t cols, int64_t sr, int64_t sc,
               CBLAS_TRANSPOSE* trans, int* ld) {
  int64_t l;
  if ((cols == 1 || sc == 1) &&
      (rows == 1 || sr >= std::max<int64_t>(1, cols))) {
    *trans = CblasNoTrans;
    l = rows == 1 ? std::max<int64_t>(1, cols) : sr;
  } else if ((rows == 1 || sr == 1) &&
             (cols == 1 || sc >= std::max<int64_t>(1, rows))) {
    *trans = CblasTrans;
    l = cols == 1 ? std::max<int64_t>(1, rows) : sc;
  } else {
    return false;
  }
  if (l > INT_MAX || rows > INT_MAX || cols > INT_MAX) return false;
  *ld = int(l);
  return true;
}

// Thin overloads so the BLAS path is written once for float and double.
inline void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N,
                      int K, float alpha, const float* A, int lda,
                      const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C,
              ldc);
}
inline void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N,
                      int K, double alpha, const double* A, int lda,
                      const double* B, int ldb, double beta, double* C,
                      int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C,
              ldc);
}
inline void blas_gemv(CBLAS_TRANSPOSE t, int rows, int cols, float alpha,
                      const float* A, int lda, const float* x, int incx,
                      float beta, float* y, int incy) {
  cblas_sgemv(CblasRowMajor, t, rows, cols, alpha, A, lda, x, incx, beta, y,
              incy);
}
inline void blas_gemv(CBLAS_TRANSPOSE t, int rows, int cols, double alpha,
                      const double* A, int lda, const double* x, int incx,
                      double beta, double* y, int incy) {
  cblas_dgemv(CblasRowMajor, t, rows, cols, alpha, A, lda, x, incx, beta, y,
              incy);
}
// complex64 / complex128: the same calls through cgemm / zgemm (alpha and
// beta passed by address, as the complex BLAS takes them) and the
// unconjugated dot (a matrix product conjugates nothing).
inline void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N,
                      int K, Complex64 alpha, const Complex64* A, int lda,
                      const Complex64* B, int ldb, Complex64 beta,
                      Complex64* C, int ldc) {
  cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &alpha, A, lda, B, ldb, &beta,
              C, ldc);
}
inline void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N,
                      int K, Complex128 alpha, const Complex128* A, int lda,
                      const Complex128* B, int ldb, Complex128 beta,
                      Complex128* C, int ldc) {
  cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &alpha, A, lda, B, ldb, &beta,
              C, ldc);
}
inline void blas_gemv(CBLAS_TRANSPOSE t, int rows, int cols, Complex64 alpha,
                      const Complex64* A, int lda, const Complex64* x,
                      int incx, Complex64 beta, Complex64* y, int incy) {
  cblas_cgemv(CblasRowMajor, t, rows, cols, &alpha, A, lda, x, incx, &beta, y,
              incy);
}
inline void blas_gemv(CBLAS_TRANSPOSE t, int rows, int cols,
                      Complex128 alpha, const Complex128* A, int lda,
                      const Complex128* x, int incx, Complex128 beta,
                      Complex128* y, int incy) {
  cblas_zgemv(CblasRowMajor, t, rows, cols, &alpha, A, lda, x, incx, &beta, y,
              incy);
}
inline Complex64 blas_dot(int n, const Complex64* x, int incx,
                          const Complex64* y, int incy) {
  Complex64 r;
  cblas_cdotu_sub(n, x, incx, y, incy, &r);
  return r;
}
inline Complex128 blas_dot(int n, const Complex128* x, int incx,
                           const Complex128* y, int incy) {
  Complex128 r;
  cblas_zdotu_sub(n, x, incx, y, incy, &r);
  return r;
}
inline float blas_dot(int n, const float* x, int incx, const float* y,
                      int incy) {
  return cblas_sdot(n, x, incx, y, incy);
}
inline double blas_dot(int n, const double* x, int incx, const double* y,
                       int incy) {
  return cblas_ddot(n, x, incx, y, incy);
}

// OpenBLAS keeps its own thread count (all cores by default); products
// big enough for it to thread follow fastt::set_num_threads instead.
// Checked only there, so small products pay nothing.
void sync_blas_threads() {
  static std::atomic<int> current{-1};
  const int n = get_num_threads();
  if (current.load(std::memory_order_relaxed) != n) {
    openblas_set_num_threads(n);
    current.store(n, std::memory_order_relaxed);
  }
}

// How BLAS reads the three operands of one product (same for every batch).
struct BlasLayout {
  CBLAS_TRANSPOSE ta, tb;
  int lda, ldb, ldc;
  int inca, incb, incc;  // vector strides for the dot / gemv forms
};

bool blas_layout(const Geom& g, BlasLayout* L) {
  CBLAS_TRANSPOSE tc;
  if (!blas_view(g.M, g.K, g.sam, g.sak, &L->ta, &L->lda) ||
      !blas_view(g.K, g.N, g.sbk, g.sbn, &L->tb, &L->ldb) ||
      !blas_view(g.M, g.N, g.scm, g.scn, &tc, &L->ldc) || tc != CblasNoTrans)
    return false;
  // Vector strides: along K for A's row and B's column, along the output.
  const int64_t inca = g.K == 1 ? 1 : g.sak, incb = g.K == 1 ? 1 : g.sbk;
  const int64_t incc = g.M == 1 ? (g.N == 1 ? 1 : g.scn) : g.scm;
  if (inca > INT_MAX || incb > INT_MAX || incc > INT_MAX) return false;
  L->inca = int(inca);
  L->incb = int(incb);
  L->incc = int(incc);
  return true;
}

// C = beta*C + alpha*(A @ B) through BLAS (C already holds the addend).
// One row or one column goes to gemv, both to dot: gemm with M or N of 1
// is several times slower in OpenBLAS (64x64 @ 64x1: gemm 667 ns, gemv
// 176 ns; 1x1024 . 1024: gemm 1367 ns, dot 40 ns).
template <class T>
void blas_product(const Geom& g, const BlasLayout& L, T alpha, const T* A,
                  const T* B, T beta, bool beta_zero, T* C) {
  const int M = int(g.M), N = int(g.N), K = int(g.K);
  if (M == 1 && N == 1) {
    T d = blas_dot(K, A, L.inca, B, L.incb);
    *C = alpha * d + (beta_zero ? T(0) : beta * *C);
    return;
  }
  if (M == 1 || N == 1) {
    // Some BLAS scale y by 0 (keeping NaN) instead of zeroing it.
    if (beta_zero) {
      const int64_t n = M == 1 ? N : M;
      for (int64_t i = 0; i < n; ++i) C[i * L.incc] = T(0);
    }
    if (N == 1) {  // y[M] = A x with x = B's column
      if (L.ta == CblasNoTrans)
        blas_gemv(CblasNoTrans, M, K, alpha, A, L.lda, B, L.incb, beta, C,
                  L.incc);
      else
        blas_gemv(CblasTrans, K, M, alpha, A, L.lda, B, L.incb, beta, C,
                  L.incc);
    } else {  // y[N] = B^T x with x = A's row
      if (L.tb == CblasNoTrans)
        blas_gemv(CblasTrans, K, N, alpha, B, L.ldb, A, L.inca, beta, C,
                  L.incc);
      else
        blas_gemv(CblasNoTrans, N, K, alpha, B, L.ldb, A, L.inca, beta, C,
                  L.incc);
    }
    return;
  }
  blas_gemm(L.ta, L.tb, M, N, K, alpha, A, L.lda, B, L.ldb, beta, C, L.ldc);
}

// The per-call setup shared by every dtype: geometry, batch shape, scalars.
template <class T>
struct GemmCall {
  Geom g;
  int nb = 0;  // batch dims
  int64_t batch = 1;
  const int64_t* bsizes = nullptr;
  const int64_t* bstr[4] = {};  // A, B, C, addend
  const T* A;
  const T* B;
  T* C;
  const T* I;
  acc_t<T> alpha, beta;
  bool beta_zero, alpha_zero;

  explicit GemmCall(const KernelArgs& a) {
    const Tensor& ta = *a.in[0];
    const Tensor& tb = *a.in[1];
    const Tensor& tc = *a.out;
    const Tensor* ti = a.in[2];
    nb = int(tc.dim()) - 2;
    g = gemm_geom(a);
    bsizes = tc.sizes().data();
    for (int d = 0; d < nb; ++d) batch *= bsizes[d];
    bstr[0] = ta.strides().data();
    bstr[1] = tb.strides().data();
    bstr[2] = tc.strides().data();
    bstr[3] = ti ? ti->strides().data() : nullptr;
    A = static_cast<const T*>(ta.data_ptr());
    B = static_cast<const T*>(tb.data_ptr());
    C = static_cast<T*>(tc.data_ptr());
    I = ti ? static_cast<const T*>(ti->data_ptr()) : nullptr;
    if constexpr (std::is_integral<T>::value) {
      alpha = to_acc(a.i0);
      beta = to_acc(a.i1);
      alpha_zero = a.i0 == 0;
      beta_zero = a.i1 == 0;
    } else {
      alpha = acc_t<T>(a.f0);
      beta = acc_t<T>(a.f1);
      alpha_zero = a.f0 == 0.0;
      beta_zero = a.f1 == 0.0;
    }
  }

  // Pointers of batch item b (row-major over the batch dims).
  void at(int64_t b, const T** pa, const T** pb, T** pc, const T** pi) const {
    int64_t oa = 0, ob = 0, oc = 0, oi = 0;
    for (int d = nb - 1; d >= 0; --d) {
      const int64_t idx = b % bsizes[d];
      b /= bsizes[d];
      oa += idx * bstr[0][d];
      ob += idx * bstr[1][d];
      oc += idx * bstr[2][d];
      if (I) oi += idx * bstr[3][d];
    }
    *pa = A + oa;
    *pb = B + ob;
    *pc = C + oc;
    *pi = I ? I + oi : nullptr;
  }

  int64_t mnk() const { return g.M * g.N * g.K; }
};

// Runs one(b) for every batch item, over threads when the items are small
// enough that each runs single-threaded anyway.
template <class T, class One>
void for_each_matrix(const GemmCall<T>& c, bool blas, One&& one) {
  if (c.batch == 1) return one(0);
  const int64_t work = std::max<int64_t>(1, c.mnk());
  const bool vector_form = c.g.M == 1 || c.g.N == 1;
  const int64_t limit = !blas         ? INT64_MAX
                        : vector_form ? kBlasVectorSingleThread
                                      : kBlasSingleThreadMNK;
  if (work <= limit) {
    const int64_t grain = std::max<int64_t>(1, kGemmGrain / work);
    parallel_for(0, c.batch, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) one(b);
    });
  } else {
    for (int64_t b = 0; b < c.batch; ++b) one(b);
  }
}

// The loop kernel over all batches; one big matrix is split by rows.
template <class T>
void run_loop(const GemmCall<T>& c) {
  const Geom& g = c.g;
  if (c.batch == 1 && g.M > 1 && c.mnk() > kGemmGrain) {
    const int64_t grain =
        std::max<int64_t>(1, kGemmGrain / std::max<int64_t>(1, g.N * g.K));
    const T *a, *b, *i;
    T* cc;
    c.at(0, &a, &b, &cc, &i);
    parallel_for(0, g.M, grain, [&](int64_t m0, int64_t m1) {
      loop_gemm<T>(g, m0, m1, a, b, cc, i, c.alpha, c.beta, c.beta_zero);
    });
    return;
  }
  const bool dot_form = c.mnk() <= kTinyGemmMNK || (g.M == 1 && g.N == 1);
  for_each_matrix(c, false, [&](int64_t bi) {
    const T *a, *b, *i;
    T* cc;
    c.at(bi, &a, &b, &cc, &i);
    if (dot_form)
      dot_gemm<T>(g, a, b, cc, i, c.alpha, c.beta, c.beta_zero);
    else
      loop_gemm<T>(g, 0, g.M, a, b, cc, i, c.alpha, c.beta, c.beta_zero);
  });
}

// Handles the cases every dtype treats alike; true when nothing is left.
template <class T>
bool trivial(const GemmCall<T>& c) {
  if (c.g.M == 0 || c.g.N == 0 || c.batch == 0) return true;
  if (c.g.K == 0 || c.alpha_zero) {
    for (int64_t bi = 0; bi < c.batch; ++bi) {
      const T *a, *b, *i;
      T* cc;
      c.at(bi, &a, &b, &cc, &i);
      scale_only<T>(c.g, cc, i, c.beta, c.beta_zero);
    }
    return true;
  }
  return false;
}

// float / double: BLAS unless tiny or the layout is not BLAS-shaped (the
// op layer makes operands BLAS-shaped; the loop is only a safety net).
template <class T>
struct BlasGemm {
  static void run(KernelArgs& args) {
    GemmCall<T> c(args);
    if (trivial(c)) return;
    const Geom& g = c.g;
    BlasLayout L;
    if (c.mnk() <= kTinyGemmMNK || !blas_layout(g, &L)) return run_loop(c);
    if (c.mnk() > kBlasVectorSingleThread) sync_blas_threads();
    // With an addend, C first takes its values and BLAS applies beta.
    const T beta = c.beta_zero ? T(0) : c.beta;
    for_each_matrix(c, true, [&](int64_t bi) {
      const T *a, *b, *i;
      T* cc;
      c.at(bi, &a, &b, &cc, &i);
      if (i && !c.beta_zero) copy_addend<T>(g, cc, i);
      blas_product<T>(g, L, c.alpha, a, b, beta, c.beta_zero, cc);
    });
  }
};

// float16 / bfloat16: tiny ones loop in float; larger ones are converted
// to float32, multiplied by BLAS and rounded back once (like torch's CPU
// path, which also accumulates in float). Debian's OpenBLAS has no bf16
// gemm (sbgemm is a build option it leaves off), so the conversions are
// the whole extra cost over float32: rows with unit stride convert as
// blocks (half_block.h).
template <class T>
FASTT_VEC_CLONES void rows_to_float(const T* src, int64_t rows, int64_t cols,
                                    int64_t srow, int64_t scol, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* s = src + r * srow;
    float* d = dst + r * cols;
    if (scol == 1) {
      to_float_block(s, d, cols);
    } else {
      for (int64_t c = 0; c < cols; ++c) d[c] = float(s[c * scol]);
    }
  }
}
template <class T>
FASTT_VEC_CLONES void rows_from_float(const float* src, int64_t rows,
                                      int64_t cols, T* dst, int64_t drow,
                                      int64_t dcol) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * cols;
    T* d = dst + r * drow;
    if (dcol == 1) {
      from_float_block(s, d, cols);
    } else {
      for (int64_t c = 0; c < cols; ++c) d[c * dcol] = T(s[c]);
    }
  }
}

// The batch dims of A, B and C as one (size-1 dims dropped): false when
// they do not step uniformly through all three, or A or B is broadcast.
template <class T>
bool one_batch_dim(const GemmCall<T>& c, int64_t s[3]) {
  int64_t size = 0;  // 0: no batch dim met yet
  for (int d = c.nb - 1; d >= 0; --d) {
    if (c.bsizes[d] == 1) continue;
    if (size == 0) {
      for (int k = 0; k < 3; ++k) s[k] = c.bstr[k][d];
      size = c.bsizes[d];
      continue;
    }
    for (int k = 0; k < 3; ++k)
      if (c.bstr[k][d] != s[k] * size) return false;
    size *= c.bsizes[d];
  }
  return size > 0 && s[0] != 0 && s[1] != 0;
}

// A bfloat16 batch as one oneDNN call (its brgemm batches the small
// matrices of attention), C = A @ B only, written as bf16 by oneDNN;
// false: take the per-matrix path.
template <class T>
bool bf16_batched(const GemmCall<T>& c) {
  int64_t s[3];
  const Geom& g = c.g;
  if (!c.beta_zero || c.alpha != 1.0f || !one_batch_dim(c, s)) return false;
  return onednn_bf16_matmul({c.batch, g.M, g.N, g.K, c.A, s[0], g.sam, g.sak,
                             c.B, s[1], g.sbk, g.sbn, c.C, true, s[2], g.scm,
                             g.scn});
}

// One bfloat16 product through oneDNN: C = A @ B straight into C as bf16;
// with alpha or an addend D, the float32 product goes to fp and
// alpha * fp + beta * D is rounded once, as the sgemm path does.
template <class T>
bool bf16_one(const GemmCall<T>& c, const T* a, const T* b, T* cc,
              const T* d, int64_t sdm, int64_t sdn, float* fc, float* fp) {
  const Geom& g = c.g;
  const bool plain = c.beta_zero && c.alpha == 1.0f;
  if (!onednn_bf16_matmul({1, g.M, g.N, g.K, a, 0, g.sam, g.sak, b, 0, g.sbk,
                           g.sbn, plain ? static_cast<void*>(cc) : fp, plain,
                           0, plain ? g.scm : g.N, plain ? g.scn : 1}))
    return false;
  if (plain) return true;
  const size_t nc = size_t(g.M * g.N);
  const float alpha = c.alpha, beta = c.beta;
  if (!c.beta_zero) {
    rows_to_float(d, g.M, g.N, sdm, sdn, fc);
    for (size_t e = 0; e < nc; ++e) fc[e] = alpha * fp[e] + beta * fc[e];
  } else {
    for (size_t e = 0; e < nc; ++e) fc[e] = alpha * fp[e];
  }
  rows_from_float(fc, g.M, g.N, cc, g.scm, g.scn);
  return true;
}

template <class T>
struct HalfGemm {
  static void run(KernelArgs& args) {
    GemmCall<T> c(args);
    if (trivial(c)) return;
    const Geom& g = c.g;
    if (c.mnk() <= kTinyGemmMNK || g.M > INT_MAX || g.N > INT_MAX ||
        g.K > INT_MAX)
      return run_loop(c);
    // One buffer per thread, kept between calls: a fresh one costs its
    // zeroing and page faults (about as much as the conversions at 512^2).
    std::vector<float>& buf = thread_state().gemm_buffer;
    if (std::is_same<T, BFloat16>::value && c.batch > 1 && bf16_batched(c))
      return;
    const size_t na = size_t(g.M * g.K), nb = size_t(g.K * g.N),
                 nc = size_t(g.M * g.N);
    if (buf.size() < na + nb + 2 * nc) buf.resize(na + nb + 2 * nc);
    float* const fa = buf.data();
    float* const fb = fa + na;
    float* const fc = fb + nb;
    float* const fp = fc + nc;  // oneDNN's product when C has an addend
    // The packed float operands are dense row-major.
    Geom fg = g;
    fg.sam = g.K, fg.sak = 1, fg.sbk = g.N, fg.sbn = 1, fg.scm = g.N;
    fg.scn = 1;
    BlasLayout L;
    blas_layout(fg, &L);
    if (c.mnk() > kBlasVectorSingleThread) sync_blas_threads();
    for (int64_t bi = 0; bi < c.batch; ++bi) {
      const T *a, *b, *i;
      T* cc;
      c.at(bi, &a, &b, &cc, &i);
      const T* d = i ? i : cc;
      const int64_t sdm = i ? g.sim : g.scm, sdn = i ? g.sin : g.scn;
      if (std::is_same<T, BFloat16>::value && bf16_one(c, a, b, cc, d, sdm,
                                                      sdn, fc, fp))
        continue;
      // A column-major operand (sak > sam, e.g. a transpose) converts
      // along its contiguous dim.
      if (g.sak == 1 || g.sam != 1) {
        rows_to_float(a, g.M, g.K, g.sam, g.sak, fa);
      } else {
        std::vector<float> t(size_t(g.M * g.K));
        rows_to_float(a, g.K, g.M, g.sak, g.sam, t.data());
        for (int64_t m = 0; m < g.M; ++m)
          for (int64_t k = 0; k < g.K; ++k)
            fa[size_t(m * g.K + k)] = t[size_t(k * g.M + m)];
      }
      if (g.sbn == 1 || g.sbk != 1) {
        rows_to_float(b, g.K, g.N, g.sbk, g.sbn, fb);
      } else {
        std::vector<float> t(size_t(g.K * g.N));
        rows_to_float(b, g.N, g.K, g.sbn, g.sbk, t.data());
        for (int64_t k = 0; k < g.K; ++k)
          for (int64_t n = 0; n < g.N; ++n)
            fb[size_t(k * g.N + n)] = t[size_t(n * g.K + k)];
      }
      if (!c.beta_zero) rows_to_float(d, g.M, g.N, sdm, sdn, fc);
      blas_product<float>(fg, L, c.alpha, fa, fb,
                          c.beta_zero ? 0.0f : c.beta, c.beta_zero,
                          fc);
      rows_from_float(fc, g.M, g.N, cc, g.scm, g.scn);
    }
  }
};

// Integers: no BLAS has them; the blocked loop, wrapping like torch.
template <class T>
struct IntGemm {
  static void run(KernelArgs& args) {
    GemmCall<T> c(args);
    if (trivial(c)) return;
    run_loop(c);
  }
};

template <class T>
using GemmKernel = std::conditional_t<
    std::is_integral<T>::value, IntGemm<T>,
    std::conditional_t<std::is_same<opmath_t<T>, T>::value, BlasGemm<T>,
                       HalfGemm<T>>>;

template <class T>
struct Gemm {
  static void run(KernelArgs& a) { GemmKernel<T>::run(a); }
};

}  // namespace

void register_linalg_kernels() {
#define FASTT_KERNELS_linalg
#include "kernels/kernels.def"
}

}  // namespace fastt

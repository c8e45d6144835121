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
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/loop.h"

namespace fastt {
namespace {
using namespace cpu;

// Below this many multiply-adds (M*N*K) the plain loop beats a BLAS call,
// whose fixed cost (argument checks, buffer setup, packing) is ~100-200 ns.
// Measured on this machine (float32, square n: loop vs cblas_sgemm):
// n=4 25 vs 200 ns, n=8 70 vs 290 ns, n=12 190 vs 440 ns, n=16 410 vs 640
// ns, n=20 870 vs 930 ns, n=24 1450 vs 1090 ns. Crossover ~ 20^3.
constexpr int64_t kTinyGemmMNK = 8000;
// OpenBLAS runs a gemm on one thread below 4 * 65536 multiply-adds
// (interface/gemm.c), so batches of matrices that small are spread over
// our threads instead; bigger ones let OpenBLAS thread each call.
constexpr int64_t kBlasSingleThreadMNK = 4 * 65536;
// Multiply-adds a thread should get before another one is worth starting.
constexpr int64_t kGemmGrain = 1 << 16;
// Columns of the loop kernel's accumulator block (kept on the stack).
constexpr int64_t kColBlock = 64;

// One matrix product's geometry; strides in elements.
struct Geom {
  int64_t M, N, K;
  int64_t sam, sak;  // A[m, k]
  int64_t sbk, sbn;  // B[k, n]
  int64_t scm, scn;  // C[m, n]
  int64_t sim, sin;  // addend[m, n]
};

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
  Acc acc[kColBlock];
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
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= std::max<int64_t>(1, cols))) {
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
    const int nd = int(tc.dim());
    nb = nd - 2;
    const int64_t* sa = ta.strides().data() + nb;
    const int64_t* sb = tb.strides().data() + nb;
    const int64_t* sc = tc.strides().data() + nb;
    g.M = tc.sizes()[nb];
    g.N = tc.sizes()[nb + 1];
    g.K = (a.i2 & 1) ? ta.sizes()[nb] : ta.sizes()[nb + 1];
    g.sam = (a.i2 & 1) ? sa[1] : sa[0];
    g.sak = (a.i2 & 1) ? sa[0] : sa[1];
    g.sbk = (a.i2 & 2) ? sb[1] : sb[0];
    g.sbn = (a.i2 & 2) ? sb[0] : sb[1];
    g.scm = sc[0];
    g.scn = sc[1];
    g.sim = ti ? ti->strides()[nb] : 0;
    g.sin = ti ? ti->strides()[nb + 1] : 0;
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
void for_each_matrix(const GemmCall<T>& c, bool may_split, One&& one) {
  if (c.batch == 1) return one(0);
  const int64_t work = std::max<int64_t>(1, c.mnk());
  if (may_split && work <= kBlasSingleThreadMNK) {
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
  for_each_matrix(c, true, [&](int64_t bi) {
    const T *a, *b, *i;
    T* cc;
    c.at(bi, &a, &b, &cc, &i);
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

// float / double: BLAS unless tiny or the layout is not BLAS-shaped.
template <class T>
struct BlasGemm {
  static void run(KernelArgs& args) {
    GemmCall<T> c(args);
    if (trivial(c)) return;
    const Geom& g = c.g;
    CBLAS_TRANSPOSE ta, tb, tc;
    int lda, ldb, ldc;
    const bool blas_ok = c.mnk() > kTinyGemmMNK &&
                         blas_view(g.M, g.K, g.sam, g.sak, &ta, &lda) &&
                         blas_view(g.K, g.N, g.sbk, g.sbn, &tb, &ldb) &&
                         blas_view(g.M, g.N, g.scm, g.scn, &tc, &ldc) &&
                         tc == CblasNoTrans;
    if (!blas_ok) return run_loop(c);
    // With an addend, C first takes its values and BLAS applies beta.
    const T beta = c.beta_zero ? T(0) : c.beta;
    for_each_matrix(c, true, [&](int64_t bi) {
      const T *a, *b, *i;
      T* cc;
      c.at(bi, &a, &b, &cc, &i);
      if (i && !c.beta_zero) copy_addend<T>(g, cc, i);
      blas_gemm(ta, tb, int(g.M), int(g.N), int(g.K), c.alpha, a, lda, b, ldb,
                beta, cc, ldc);
    });
  }
};

// float16 / bfloat16: tiny ones loop in float; larger ones are converted
// to float32, multiplied by sgemm and rounded back once.
template <class T>
struct HalfGemm {
  static void run(KernelArgs& args) {
    GemmCall<T> c(args);
    if (trivial(c)) return;
    const Geom& g = c.g;
    if (c.mnk() <= kTinyGemmMNK || g.M > INT_MAX || g.N > INT_MAX ||
        g.K > INT_MAX)
      return run_loop(c);
    std::vector<float> fa(size_t(g.M * g.K)), fb(size_t(g.K * g.N)),
        fc(size_t(g.M * g.N));
    for (int64_t bi = 0; bi < c.batch; ++bi) {
      const T *a, *b, *i;
      T* cc;
      c.at(bi, &a, &b, &cc, &i);
      for (int64_t m = 0; m < g.M; ++m)
        for (int64_t k = 0; k < g.K; ++k)
          fa[size_t(m * g.K + k)] = float(a[m * g.sam + k * g.sak]);
      for (int64_t k = 0; k < g.K; ++k)
        for (int64_t n = 0; n < g.N; ++n)
          fb[size_t(k * g.N + n)] = float(b[k * g.sbk + n * g.sbn]);
      const T* d = i ? i : cc;
      const int64_t sdm = i ? g.sim : g.scm, sdn = i ? g.sin : g.scn;
      if (!c.beta_zero)
        for (int64_t m = 0; m < g.M; ++m)
          for (int64_t n = 0; n < g.N; ++n)
            fc[size_t(m * g.N + n)] = float(d[m * sdm + n * sdn]);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(g.M),
                  int(g.N), int(g.K), c.alpha, fa.data(), int(g.K), fb.data(),
                  int(g.N), c.beta_zero ? 0.0f : c.beta, fc.data(), int(g.N));
      for (int64_t m = 0; m < g.M; ++m)
        for (int64_t n = 0; n < g.N; ++n)
          cc[m * g.scm + n * g.scn] = T(fc[size_t(m * g.N + n)]);
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
  register_only<Gemm>(Op::gemm, NumericTypes{});
}

}  // namespace fastt

// CPU kernels of the LAPACK-backed factorizations and solves (ops.def's
// "dense factorizations"): each loops over the batch and calls OpenBLAS's
// LAPACK (the Fortran symbols) or cblas_?trsm on one matrix at a time.
// float and double; complex64 and complex128 (LAPACK's c/z routines; the
// inline small LU paths too, not Cholesky's), with real eigenvalues,
// singular values and rcond (RealOf<T>). The op layer
// (csrc/ops/lapack*.cpp) validates shapes and hands these a dense, prepared
// layout. "cm" below means the matrix is stored column-major: a row-major
// [.., c, r] buffer holds an r x c column-major matrix (what LAPACK reads).
// B is the batch, k = min(m, n).
//
//   lu_factor        out  [B, n, m] A cm, overwritten by LU; out2 int32
//                         [B, k] pivots (1-based); in0 int32 [B] info;
//                         i0/i1 = m/n
//   cholesky         out  [B, n, n] A cm (only the triangle named by i0 is
//                         read: 1 'L', 0 'U', in column-major terms); in0
//                         int32 [B] info; i1 = n
//   triangular_solve out  [B, M, N] row-major B, overwritten by X; in0
//                         [B, K, K] row-major triangular A; i0 bit 0 upper,
//                         bit 1 left (A X = B, else X A = B), bit 2 unit
//   geqrf            out  [B, n, m] A cm, overwritten by R and the
//                         reflectors; out2 [B, k] tau; i0/i1 = m/n
//   orgqr            out  [B, c, m] cm reflectors (m x c), overwritten by
//                         Q's first c columns; in0 [B, t] tau; i0 = m,
//                         i1 = c, i2 = t (reflectors used, t <= c <= m)
//   syevd            out  [B, n, n] A cm (triangle i1: 1 'L', 0 'U'),
//                         overwritten by the eigenvectors (columns) when i0;
//                         out2 [B, n] eigenvalues, ascending; in0 int32 [B]
//                         info
//   gesdd            out  [B, n, m] A cm (destroyed); out2 [B, k] S; in0
//                         [B, uc, m] U cm; in1 [B, n, vr] Vt cm; in2 int32
//                         [B] info; i0 = 'N' / 'S' / 'A' (jobz), i1/i2 = m/n
//   sytrf            out  [B, n, n] A cm (triangle i0: 1 'L', 0 'U'),
//                         overwritten by the factor; out2 int32 [B, n]
//                         pivots (LAPACK's); in0 int32 [B] info; i1
//                         Hermitian (complex: hetrf, else L D L^T)
//   sytrs            out  [B, r, n] right-hand sides cm, overwritten by X;
//                         in0 [B, n, n] factor cm; in1 int32 [B, n] pivots;
//                         i0 = 1 'L', 0 'U'; i1 Hermitian (as sytrf)
//   gesv             out  [B, r, n] right-hand sides cm, overwritten by X;
//                         in0 [B, n, n] A cm (overwritten by its LU); in1
//                         int32 [B] info
//   geev             out  [B, n, n] A cm (destroyed); out2 complex [B, n]
//                         eigenvalues; in0 complex [B, n, n] right
//                         eigenvectors cm (when i0); in1 int32 [B] info
//   lstsq            out  [B, r, max(m, n)] right-hand sides cm, overwritten
//                         by X (first n rows); in0 [B, n, m] A cm
//                         (destroyed); in1 int64 [B] rank; in2 [B, k]
//                         singular values (gelsd/gelss); i0 driver (0 gels,
//                         1 gelsy, 2 gelsd, 3 gelss); i1/i2 = m/n; f0 rcond
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "csrc/complex.h"
#include "kernels/cpu/loop.h"

// LAPACK's Fortran interface; character arguments carry their hidden length
// (gfortran's ABI) as the trailing size_t parameters.
using FLen = size_t;
extern "C" {
#define FASTT_LAPACK_BOTH(decl) decl(s, float) decl(d, double)
#define FASTT_LAPACK_COMPLEX(decl) \
  decl(c, fastt::Complex64) decl(z, fastt::Complex128)
// The routines of both the real and the complex dtypes.
#define FASTT_DECL_LU(p, T)                                                  \
  void p##getrf_(const int*, const int*, T*, const int*, int*, int*);        \
  void p##getrs_(const char*, const int*, const int*, const T*, const int*,  \
                 const int*, T*, const int*, int*, FLen);                    \
  void p##potrf_(const char*, const int*, T*, const int*, int*, FLen);
FASTT_LAPACK_BOTH(FASTT_DECL_LU)
FASTT_LAPACK_COMPLEX(FASTT_DECL_LU)
#undef FASTT_DECL_LU
// The same signature for both (R is the real type of T's parts).
#define FASTT_DECL_QR(p, T, q)                                           \
  void p##geqrf_(const int*, const int*, T*, const int*, T*, T*, const int*, \
                 int*);                                                      \
  void p##q##_(const int*, const int*, const int*, T*, const int*, const T*, \
               T*, const int*, int*);                                        \
  void p##gels_(const char*, const int*, const int*, const int*, T*,         \
                const int*, T*, const int*, T*, const int*, int*, FLen);
FASTT_DECL_QR(s, float, orgqr)
FASTT_DECL_QR(d, double, orgqr)
FASTT_DECL_QR(c, fastt::Complex64, ungqr)
FASTT_DECL_QR(z, fastt::Complex128, ungqr)
#undef FASTT_DECL_QR
// The real routines.
#define FASTT_DECL(p, T)                                                     \
  void p##syevd_(const char*, const char*, const int*, T*, const int*, T*,   \
                 T*, const int*, int*, const int*, int*, FLen, FLen);        \
  void p##gesdd_(const char*, const int*, const int*, T*, const int*, T*,    \
                 T*, const int*, T*, const int*, T*, const int*, int*, int*, \
                 FLen);                                                      \
  void p##sytrf_(const char*, const int*, T*, const int*, int*, T*,          \
                 const int*, int*, FLen);                                    \
  void p##sytrs_(const char*, const int*, const int*, const T*, const int*,  \
                 const int*, T*, const int*, int*, FLen);                    \
  void p##gelsy_(const int*, const int*, const int*, T*, const int*, T*,     \
                 const int*, int*, const T*, int*, T*, const int*, int*);    \
  void p##gelsd_(const int*, const int*, const int*, T*, const int*, T*,     \
                 const int*, T*, const T*, int*, T*, const int*, int*,       \
                 int*);                                                      \
  void p##gelss_(const int*, const int*, const int*, T*, const int*, T*,     \
                 const int*, T*, const T*, int*, T*, const int*, int*);      \
  void p##geev_(const char*, const char*, const int*, T*, const int*, T*,    \
                T*, T*, const int*, T*, const int*, T*, const int*, int*,    \
                FLen, FLen);
FASTT_LAPACK_BOTH(FASTT_DECL)
#undef FASTT_DECL
// The complex routines: a real workspace (rwork) beside the complex one.
#define FASTT_DECL_CX(p, T, R)                                               \
  void p##heevd_(const char*, const char*, const int*, T*, const int*, R*,   \
                 T*, const int*, R*, const int*, int*, const int*, int*,     \
                 FLen, FLen);                                                \
  void p##gesdd_(const char*, const int*, const int*, T*, const int*, R*,    \
                 T*, const int*, T*, const int*, T*, const int*, R*, int*,   \
                 int*, FLen);                                                \
  void p##gelsy_(const int*, const int*, const int*, T*, const int*, T*,     \
                 const int*, int*, const R*, int*, T*, const int*, R*,       \
                 int*);                                                      \
  void p##gelsd_(const int*, const int*, const int*, T*, const int*, T*,     \
                 const int*, R*, const R*, int*, T*, const int*, R*, int*,   \
                 int*);                                                      \
  void p##gelss_(const int*, const int*, const int*, T*, const int*, T*,     \
                 const int*, R*, const R*, int*, T*, const int*, R*, int*);  \
  void p##geev_(const char*, const char*, const int*, T*, const int*, T*,    \
                T*, const int*, T*, const int*, T*, const int*, R*, int*,    \
                FLen, FLen);
// LDL of complex symmetric (sy) and Hermitian (he) matrices.
#define FASTT_DECL_LDL(p, T, f)                                              \
  void p##f##trf_(const char*, const int*, T*, const int*, int*, T*,         \
                  const int*, int*, FLen);                                   \
  void p##f##trs_(const char*, const int*, const int*, const T*, const int*, \
                  const int*, T*, const int*, int*, FLen);
FASTT_DECL_LDL(c, fastt::Complex64, sy)
FASTT_DECL_LDL(z, fastt::Complex128, sy)
FASTT_DECL_LDL(c, fastt::Complex64, he)
FASTT_DECL_LDL(z, fastt::Complex128, he)
#undef FASTT_DECL_LDL
FASTT_DECL_CX(c, fastt::Complex64, float)
FASTT_DECL_CX(z, fastt::Complex128, double)
#undef FASTT_DECL_CX
}

namespace fastt {
namespace {
using namespace cpu;

// One overload set per routine, so the kernels below are written once.
#define FASTT_WRAP_LU(p, T)                                                   \
  inline void getrf(int m, int n, T* a, int* piv, int* info) {                \
    const int lda = std::max(1, m);                                           \
    p##getrf_(&m, &n, a, &lda, piv, info);                                    \
  }                                                                           \
  inline void getrs(int n, int r, const T* a, const int* piv, T* b) {        \
    const int ld = std::max(1, n);                                            \
    const char tr = 'N';                                                      \
    int info = 0;                                                             \
    p##getrs_(&tr, &n, &r, a, &ld, piv, b, &ld, &info, 1);                    \
  }                                                                           \
  inline void potrf(char uplo, int n, T* a, int* info) {                      \
    const int lda = std::max(1, n);                                           \
    p##potrf_(&uplo, &n, a, &lda, info, 1);                                   \
  }
FASTT_LAPACK_BOTH(FASTT_WRAP_LU)
FASTT_LAPACK_COMPLEX(FASTT_WRAP_LU)
#undef FASTT_WRAP_LU
#define FASTT_WRAP_QR(p, T, q)                                            \
  inline void geqrf(int m, int n, T* a, T* tau, T* w, int lw, int* info) {    \
    const int lda = std::max(1, m);                                           \
    p##geqrf_(&m, &n, a, &lda, tau, w, &lw, info);                            \
  }                                                                           \
  inline void orgqr(int m, int n, int k, T* a, const T* tau, T* w, int lw,    \
                    int* info) {                                              \
    const int lda = std::max(1, m);                                           \
    p##q##_(&m, &n, &k, a, &lda, tau, w, &lw, info);                          \
  }                                                                           \
  inline void gels(int m, int n, int r, T* a, T* b, int ldb, T* w, int lw,    \
                   int* info) {                                               \
    const int lda = std::max(1, m);                                           \
    const char tr = 'N';                                                      \
    p##gels_(&tr, &m, &n, &r, a, &lda, b, &ldb, w, &lw, info, 1);             \
  }
FASTT_WRAP_QR(s, float, orgqr)
FASTT_WRAP_QR(d, double, orgqr)
FASTT_WRAP_QR(c, Complex64, ungqr)
FASTT_WRAP_QR(z, Complex128, ungqr)
#undef FASTT_WRAP_QR
// One signature for both kinds: rw (R, the real type of T's parts) is the
// complex routines' real workspace, unused by the real ones (rw[0] answers
// a workspace query where the complex routine has one).
#define FASTT_WRAP(p, T)                                                      \
  inline void syevd(char jobz, char uplo, int n, T* a, T* w, T* wk, int lw,   \
                    T*, int, int* iw, int liw, int* info) {                   \
    const int lda = std::max(1, n);                                           \
    p##syevd_(&jobz, &uplo, &n, a, &lda, w, wk, &lw, iw, &liw, info, 1, 1);   \
  }                                                                           \
  inline void gesdd(char jobz, int m, int n, T* a, T* s, T* u, int ldu,       \
                    T* vt, int ldvt, T* w, int lw, T*, int* iw, int* info) {  \
    const int lda = std::max(1, m);                                           \
    p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, w, &lw, iw,      \
              info, 1);                                                       \
  }                                                                           \
  inline void sytrf(char uplo, int n, T* a, int* piv, T* w, int lw,           \
                    int* info, bool) {                                        \
    const int lda = std::max(1, n);                                           \
    p##sytrf_(&uplo, &n, a, &lda, piv, w, &lw, info, 1);                      \
  }                                                                           \
  inline void sytrs(char uplo, int n, int r, const T* a, const int* piv,      \
                    T* b, int* info, bool) {                                  \
    const int ld = std::max(1, n);                                            \
    p##sytrs_(&uplo, &n, &r, a, &ld, piv, b, &ld, info, 1);                   \
  }                                                                           \
  inline void gelsy(int m, int n, int r, T* a, T* b, int ldb, int* jpvt,      \
                    T rcond, int* rank, T* w, int lw, T*, int* info) {        \
    const int lda = std::max(1, m);                                           \
    p##gelsy_(&m, &n, &r, a, &lda, b, &ldb, jpvt, &rcond, rank, w, &lw,       \
              info);                                                          \
  }                                                                           \
  inline void gelsd(int m, int n, int r, T* a, T* b, int ldb, T* s, T rcond,  \
                    int* rank, T* w, int lw, T*, int* iw, int* info) {        \
    const int lda = std::max(1, m);                                           \
    p##gelsd_(&m, &n, &r, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, iw,      \
              info);                                                          \
  }                                                                           \
  inline void gelss(int m, int n, int r, T* a, T* b, int ldb, T* s, T rcond,  \
                    int* rank, T* w, int lw, T*, int* info) {                 \
    const int lda = std::max(1, m);                                           \
    p##gelss_(&m, &n, &r, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, info);   \
  }                                                                           \
  /* the right eigenvectors (jobvr 'V') or none; wr + i wi the values */      \
  inline void geev(char jobvr, int n, T* a, T* wr, T* wi, T* vr, T* w,        \
                   int lw, int* info) {                                       \
    const int lda = std::max(1, n), ldvr = jobvr == 'V' ? lda : 1, one = 1;   \
    const char no = 'N';                                                      \
    p##geev_(&no, &jobvr, &n, a, &lda, wr, wi, nullptr, &one, vr, &ldvr, w,   \
             &lw, info, 1, 1);                                                \
  }
FASTT_LAPACK_BOTH(FASTT_WRAP)
#undef FASTT_WRAP
#define FASTT_WRAP_CX(p, T, R)                                                \
  inline void syevd(char jobz, char uplo, int n, T* a, R* w, T* wk, int lw,   \
                    R* rw, int lrw, int* iw, int liw, int* info) {            \
    const int lda = std::max(1, n);                                           \
    p##heevd_(&jobz, &uplo, &n, a, &lda, w, wk, &lw, rw, &lrw, iw, &liw,      \
              info, 1, 1);                                                    \
  }                                                                           \
  inline void gesdd(char jobz, int m, int n, T* a, R* s, T* u, int ldu,       \
                    T* vt, int ldvt, T* w, int lw, R* rw, int* iw,            \
                    int* info) {                                              \
    const int lda = std::max(1, m);                                           \
    p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, w, &lw, rw, iw,  \
              info, 1);                                                       \
  }                                                                           \
  inline void gelsy(int m, int n, int r, T* a, T* b, int ldb, int* jpvt,      \
                    R rcond, int* rank, T* w, int lw, R* rw, int* info) {     \
    const int lda = std::max(1, m);                                           \
    p##gelsy_(&m, &n, &r, a, &lda, b, &ldb, jpvt, &rcond, rank, w, &lw, rw,   \
              info);                                                          \
  }                                                                           \
  inline void gelsd(int m, int n, int r, T* a, T* b, int ldb, R* s, R rcond,  \
                    int* rank, T* w, int lw, R* rw, int* iw, int* info) {     \
    const int lda = std::max(1, m);                                           \
    p##gelsd_(&m, &n, &r, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, rw, iw,  \
              info);                                                          \
  }                                                                           \
  inline void gelss(int m, int n, int r, T* a, T* b, int ldb, R* s, R rcond,  \
                    int* rank, T* w, int lw, R* rw, int* info) {              \
    const int lda = std::max(1, m);                                           \
    p##gelss_(&m, &n, &r, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, rw,      \
              info);                                                          \
  }                                                                           \
  inline void geev(char jobvr, int n, T* a, T* ev, T* vr, T* w, int lw,       \
                   R* rw, int* info) {                                        \
    const int lda = std::max(1, n), ldvr = jobvr == 'V' ? lda : 1, one = 1;   \
    const char no = 'N';                                                      \
    p##geev_(&no, &jobvr, &n, a, &lda, ev, nullptr, &one, vr, &ldvr, w, &lw,  \
             rw, info, 1, 1);                                                 \
  }
// herm: A = L D L^H (hetrf / hetrs), else the complex symmetric L D L^T.
#define FASTT_WRAP_LDL(p, T)                                                  \
  inline void sytrf(char uplo, int n, T* a, int* piv, T* w, int lw,           \
                    int* info, bool herm) {                                   \
    const int lda = std::max(1, n);                                           \
    (herm ? p##hetrf_ : p##sytrf_)(&uplo, &n, a, &lda, piv, w, &lw, info, 1); \
  }                                                                           \
  inline void sytrs(char uplo, int n, int r, const T* a, const int* piv,      \
                    T* b, int* info, bool herm) {                             \
    const int ld = std::max(1, n);                                            \
    (herm ? p##hetrs_ : p##sytrs_)(&uplo, &n, &r, a, &ld, piv, b, &ld, info,  \
                                   1);                                        \
  }
FASTT_WRAP_LDL(c, Complex64)
FASTT_WRAP_LDL(z, Complex128)
#undef FASTT_WRAP_LDL
FASTT_WRAP_CX(c, Complex64, float)
FASTT_WRAP_CX(z, Complex128, double)
#undef FASTT_WRAP_CX
#undef FASTT_LAPACK_BOTH
#undef FASTT_LAPACK_COMPLEX

inline void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_DIAG d, int M, int N,
                 const float* a, int lda, float* b) {
  cblas_strsm(CblasRowMajor, s, u, CblasNoTrans, d, M, N, 1.0f, a, lda, b,
              std::max(1, N));
}
inline void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_DIAG d, int M, int N,
                 const double* a, int lda, double* b) {
  cblas_dtrsm(CblasRowMajor, s, u, CblasNoTrans, d, M, N, 1.0, a, lda, b,
              std::max(1, N));
}
inline void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_DIAG d, int M, int N,
                 const Complex64* a, int lda, Complex64* b) {
  const Complex64 one(1.0f, 0.0f);
  cblas_ctrsm(CblasRowMajor, s, u, CblasNoTrans, d, M, N, &one, a, lda, b,
              std::max(1, N));
}
inline void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_DIAG d, int M, int N,
                 const Complex128* a, int lda, Complex128* b) {
  const Complex128 one(1.0, 0.0);
  cblas_ztrsm(CblasRowMajor, s, u, CblasNoTrans, d, M, N, &one, a, lda, b,
              std::max(1, N));
}

// Below this size a matrix is factorized inline: LAPACK's call and
// blocking overhead is most of the time for the 3x3 / 4x4 batches of
// graphics and robotics code. The same algorithm as LAPACK's unblocked
// getf2 (partial pivoting, the first largest |a| as pivot, 1-based pivots,
// info = the first zero pivot), so results agree to rounding.
constexpr int kSmallMatrix = 8;

// |v| as the pivot search measures it: LAPACK's i?amax, |re| + |im| for a
// complex entry (icamax's cabs1), so pivots agree with cgetrf's.
template <class T>
FASTT_ALWAYS_INLINE RealOf<T> pivot_abs(T v) {
  if constexpr (kIsComplex<T>) return std::fabs(v.re) + std::fabs(v.im);
  else return std::abs(v);
}

template <class T>
FASTT_ALWAYS_INLINE void small_getrf(int m, int n, T* a, int* piv,
                                     int* info) {
  const int k = std::min(m, n);
  *info = 0;
  for (int j = 0; j < k; ++j) {
    int p = j;
    RealOf<T> best = pivot_abs(a[j * m + j]);
    for (int i = j + 1; i < m; ++i) {
      const RealOf<T> v = pivot_abs(a[j * m + i]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    piv[j] = p + 1;
    if (a[j * m + p] != T(0)) {
      if (p != j)
        for (int c = 0; c < n; ++c) std::swap(a[c * m + j], a[c * m + p]);
      const T inv = T(1) / a[j * m + j];
      for (int i = j + 1; i < m; ++i) a[j * m + i] *= inv;
    } else if (*info == 0) {
      *info = j + 1;  // a zero pivot: recorded, the update still runs
    }
    for (int c = j + 1; c < n; ++c) {
      const T f = a[c * m + j];
      for (int i = j + 1; i < m; ++i) a[c * m + i] -= a[j * m + i] * f;
    }
  }
}

// X = A^-1 B from small_getrf's factor (N x N, a compile-time size so the
// loops unroll) for r right-hand sides, each column-major.
template <int N, class T>
void small_getrs(const T* lu, const int* piv, T* b, int r) {
  T inv_diag[N];
  for (int j = 0; j < N; ++j) inv_diag[j] = T(1) / lu[j * N + j];
  for (int c = 0; c < r; ++c) {
    T x[N];
    T* col = b + c * N;
    for (int i = 0; i < N; ++i) x[i] = col[i];
    for (int i = 0; i < N; ++i) std::swap(x[i], x[piv[i] - 1]);
    for (int j = 0; j < N; ++j)
      for (int i = j + 1; i < N; ++i) x[i] -= lu[j * N + i] * x[j];
    for (int j = N - 1; j >= 0; --j) {
      x[j] *= inv_diag[j];
      for (int i = 0; i < j; ++i) x[i] -= lu[j * N + i] * x[j];
    }
    for (int i = 0; i < N; ++i) col[i] = x[i];
  }
}

// Cholesky of a small column-major N x N matrix from its lower (else upper)
// triangle, in place, LAPACK's potrf rule: info = the order of the first
// leading minor that is not positive (the factor is then partial).
template <int N, class T>
void small_potrf(bool lower, T* a, int* info) {
  // L(i, j), i >= j: column-major (i, j) when lower, (j, i) when upper
  auto at = [&](int i, int j) -> T& {
    return lower ? a[j * N + i] : a[i * N + j];
  };
  *info = 0;
  for (int j = 0; j < N; ++j) {
    T d = at(j, j);
    for (int k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
    if (!(d > T(0))) {  // also NaN
      at(j, j) = d;
      *info = j + 1;
      return;
    }
    const T ljj = std::sqrt(d);
    at(j, j) = ljj;
    const T inv = T(1) / ljj;
    for (int i = j + 1; i < N; ++i) {
      T v = at(i, j);
      for (int k = 0; k < j; ++k) v -= at(i, k) * at(j, k);
      at(i, j) = v * inv;
    }
  }
}

// The square factorization with its size known at compile time.
template <int N, class T>
void small_getrf_n(T* a, int* piv, int* info) {
  small_getrf(N, N, a, piv, info);
}

// Calls F<N>() for the runtime n in [1, kSmallMatrix].
template <class F>
void with_small_size(int n, F&& f) {
  switch (n) {
    case 1: f(std::integral_constant<int, 1>()); break;
    case 2: f(std::integral_constant<int, 2>()); break;
    case 3: f(std::integral_constant<int, 3>()); break;
    case 4: f(std::integral_constant<int, 4>()); break;
    case 5: f(std::integral_constant<int, 5>()); break;
    case 6: f(std::integral_constant<int, 6>()); break;
    case 7: f(std::integral_constant<int, 7>()); break;
    default: f(std::integral_constant<int, 8>()); break;
  }
}

// LAPACK's workspace query answers in the element type (a complex one's
// real part), rounded up: a float reply above 2^24 may have rounded the
// size down.
template <class T>
int lwork_of(T query) {
  const double q = static_cast<double>(query);
  return std::max(1, int(std::ceil(q * (1.0 + 1e-6))));
}

template <class T>
struct LuFactorK {
  static void run(KernelArgs& a) {
    const int m = int(a.i0), n = int(a.i1), k = std::min(m, n);
    T* base = a.out->template data_ptr<T>();
    int* piv = a.out2->template data_ptr<int32_t>();
    int* info = a.in[0]->template data_ptr<int32_t>();
    const int64_t B = a.in[0]->numel();
    if (m == n && n >= 1 && n <= kSmallMatrix) {
      with_small_size(n, [&](auto size) {
        constexpr int N = decltype(size)::value;
        for (int64_t b = 0; b < B; ++b)
          small_getrf_n<N>(base + b * int64_t(N) * N, piv + b * N, info + b);
      });
      return;
    }
    if (std::max(m, n) <= kSmallMatrix) {
      for (int64_t b = 0; b < B; ++b)
        small_getrf(m, n, base + b * int64_t(m) * n, piv + b * k, info + b);
      return;
    }
    for (int64_t b = 0; b < B; ++b)
      getrf(m, n, base + b * int64_t(m) * n, piv + b * k, info + b);
  }
};

template <class T>
struct GesvK {
  static void run(KernelArgs& a) {
    const Tensor& X = *a.out;
    const int n = int(X.sizes()[size_t(X.dim() - 1)]);
    const int r = int(X.sizes()[size_t(X.dim() - 2)]);
    T* x = a.out->template data_ptr<T>();
    T* am = const_cast<Tensor*>(a.in[0])->template data_ptr<T>();
    int* info = const_cast<Tensor*>(a.in[1])->template data_ptr<int32_t>();
    const int64_t B = a.in[1]->numel();
    if (n == 0) return;
    if (n <= kSmallMatrix) {
      with_small_size(n, [&](auto size) {
        constexpr int N = decltype(size)::value;
        int piv[N];
        for (int64_t b = 0; b < B; ++b) {
          T* ab = am + b * int64_t(N) * N;
          small_getrf_n<N>(ab, piv, info + b);
          // singular: X is left as B (LAPACK's gesv computes nothing)
          if (info[b] == 0)
            small_getrs<N>(ab, piv, x + b * int64_t(r) * N, r);
        }
      });
      return;
    }
    std::vector<int> piv(static_cast<size_t>(n));
    for (int64_t b = 0; b < B; ++b) {
      T* ab = am + b * int64_t(n) * n;
      getrf(n, n, ab, piv.data(), info + b);
      if (info[b] == 0) getrs(n, r, ab, piv.data(), x + b * int64_t(r) * n);
    }
  }
};

template <class T>
struct CholeskyK {
  static void run(KernelArgs& a) {
    const int n = int(a.i1);
    T* base = a.out->template data_ptr<T>();
    int* info = a.in[0]->template data_ptr<int32_t>();
    const int64_t B = a.in[0]->numel();
    const char uplo = a.i0 ? 'L' : 'U';
    if constexpr (!kIsComplex<T>) {
      if (n >= 1 && n <= kSmallMatrix) {
        with_small_size(n, [&](auto size) {
          constexpr int N = decltype(size)::value;
          for (int64_t b = 0; b < B; ++b)
            small_potrf<N>(uplo == 'L', base + b * int64_t(N) * N, info + b);
        });
        return;
      }
    }
    for (int64_t b = 0; b < B; ++b)
      potrf(uplo, n, base + b * int64_t(n) * n, info + b);
  }
};

template <class T>
struct TriangularSolveK {
  static void run(KernelArgs& a) {
    Tensor& X = *a.out;
    const Tensor& A = *a.in[0];
    const int64_t nd = X.dim();
    const int M = int(X.sizes()[size_t(nd - 2)]);
    const int N = int(X.sizes()[size_t(nd - 1)]);
    const int K = int(A.sizes()[size_t(nd - 1)]);
    if (int64_t(M) * N == 0) return;
    const int64_t B = X.numel() / (int64_t(M) * N);
    const bool upper = a.i0 & 1, left = a.i0 & 2, unit = a.i0 & 4;
    T* x = X.template data_ptr<T>();
    const T* am = A.template data_ptr<T>();
    for (int64_t b = 0; b < B; ++b)
      trsm(left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower,
           unit ? CblasUnit : CblasNonUnit, M, N, am + b * int64_t(K) * K,
           std::max(1, K), x + b * int64_t(M) * N);
  }
};

template <class T>
struct GeqrfK {
  static void run(KernelArgs& a) {
    const int m = int(a.i0), n = int(a.i1), k = std::min(m, n);
    const int64_t B = k ? a.out2->numel() / k : 0;
    T* base = a.out->template data_ptr<T>();
    T* tau = a.out2->template data_ptr<T>();
    int info = 0;
    T q = 0;
    geqrf(m, n, base, tau, &q, -1, &info);
    std::vector<T> w(size_t(lwork_of(q)));
    for (int64_t b = 0; b < B; ++b)
      geqrf(m, n, base + b * int64_t(m) * n, tau + b * k, w.data(),
            int(w.size()), &info);
  }
};

template <class T>
struct OrgqrK {
  static void run(KernelArgs& a) {
    const int m = int(a.i0), c = int(a.i1), t = int(a.i2);
    const int64_t per = int64_t(m) * c;
    const int64_t B = per ? a.out->numel() / per : 0;
    T* base = a.out->template data_ptr<T>();
    const T* tau = a.in[0]->template data_ptr<T>();
    int info = 0;
    T q = 0;
    orgqr(m, c, t, base, tau, &q, -1, &info);
    std::vector<T> w(size_t(lwork_of(q)));
    for (int64_t b = 0; b < B; ++b)
      orgqr(m, c, t, base + b * per, tau + b * t, w.data(), int(w.size()),
            &info);
  }
};

template <class T>
struct SyevdK {
  static void run(KernelArgs& a) {
    const int n = int(a.out2->sizes()[size_t(a.out2->dim() - 1)]);
    using R = RealOf<T>;  // the eigenvalues are real
    const char jobz = a.i0 ? 'V' : 'N', uplo = a.i1 ? 'L' : 'U';
    T* base = a.out->template data_ptr<T>();
    R* w = a.out2->template data_ptr<R>();
    int* info = a.in[0]->template data_ptr<int32_t>();
    const int64_t B = a.in[0]->numel();
    T q = 0;
    R rq = 0;
    int iq = 0;
    syevd(jobz, uplo, n, base, w, &q, -1, &rq, -1, &iq, -1, info);
    std::vector<T> wk(size_t(lwork_of(q)));
    std::vector<R> rw(size_t(lwork_of(rq)));
    std::vector<int> iw(size_t(std::max(1, iq)));
    for (int64_t b = 0; b < B; ++b)
      syevd(jobz, uplo, n, base + b * int64_t(n) * n, w + b * n, wk.data(),
            int(wk.size()), rw.data(), int(rw.size()), iw.data(),
            int(iw.size()), info + b);
  }
};

template <class T>
struct GesddK {
  static void run(KernelArgs& a) {
    const char jobz = char(a.i0);
    const int m = int(a.i1), n = int(a.i2), k = std::min(m, n);
    const int uc = jobz == 'A' ? m : k, vr = jobz == 'A' ? n : k;
    const bool uv = jobz != 'N';
    const int ldu = uv ? std::max(1, m) : 1, ldvt = uv ? std::max(1, vr) : 1;
    using R = RealOf<T>;  // the singular values are real
    T* base = a.out->template data_ptr<T>();
    R* s = a.out2->template data_ptr<R>();
    T* u = uv ? a.in[0]->template data_ptr<T>() : nullptr;
    T* vt = uv ? a.in[1]->template data_ptr<T>() : nullptr;
    int* info = a.in[2]->template data_ptr<int32_t>();
    const int64_t B = a.in[2]->numel();
    T dummy = 0, q = 0;
    std::vector<int> iw(size_t(std::max(1, 8 * k)));
    // The complex routine's real workspace (LAPACK's documented size).
    const int64_t mx = std::max(m, n), mn = k;
    const int64_t lrw = !kIsComplex<T> ? 1
                        : uv ? std::max(5 * mn * mn + 5 * mn,
                                        2 * mx * mn + 2 * mn * mn + mn)
                             : 7 * mn;
    std::vector<R> rw(size_t(std::max<int64_t>(1, lrw)));
    gesdd(jobz, m, n, base, s, uv ? u : &dummy, ldu, uv ? vt : &dummy, ldvt,
          &q, -1, rw.data(), iw.data(), info);
    std::vector<T> w(size_t(lwork_of(q)));
    for (int64_t b = 0; b < B; ++b)
      gesdd(jobz, m, n, base + b * int64_t(m) * n, s + b * k,
            uv ? u + b * int64_t(m) * uc : &dummy, ldu,
            uv ? vt + b * int64_t(vr) * n : &dummy, ldvt, w.data(),
            int(w.size()), rw.data(), iw.data(), info + b);
  }
};

// Eigenvalues (and right eigenvectors) of a general matrix, complex
// whatever T: a real matrix's conjugate pairs come from LAPACK as (wr, wi)
// and as the real and imaginary parts of a vector in columns j, j + 1.
template <class T>
struct GeevK {
  static void run(KernelArgs& a) {
    using R = RealOf<T>;
    using C = Complex<R>;
    const int n = int(a.out2->sizes()[size_t(a.out2->dim() - 1)]);
    const char jobvr = a.i0 ? 'V' : 'N';
    const int64_t nn = int64_t(n) * n;
    T* base = a.out->template data_ptr<T>();
    C* ev = a.out2->template data_ptr<C>();
    C* vecs = a.i0 ? a.in[0]->template data_ptr<C>() : nullptr;
    int* info = const_cast<Tensor*>(a.in[1])->template data_ptr<int32_t>();
    const int64_t B = a.in[1]->numel();
    T q = 0;
    std::vector<R> rw(size_t(2 * std::max(1, n)));
    std::vector<R> wr(size_t(std::max(1, n))), wi(wr.size());
    std::vector<T> vr(size_t(a.i0 && !kIsComplex<T> ? nn : 1));
    if constexpr (kIsComplex<T>)
      geev(jobvr, n, base, ev, vecs, &q, -1, rw.data(), info);
    else
      geev(jobvr, n, base, wr.data(), wi.data(), vr.data(), &q, -1, info);
    std::vector<T> w(size_t(lwork_of(q)));
    for (int64_t b = 0; b < B; ++b) {
      T* ab = base + b * nn;
      C* eb = ev + b * n;
      C* vb = vecs ? vecs + b * nn : nullptr;
      if constexpr (kIsComplex<T>) {
        geev(jobvr, n, ab, eb, vb, w.data(), int(w.size()), rw.data(),
             info + b);
      } else {
        geev(jobvr, n, ab, wr.data(), wi.data(), vr.data(), w.data(),
             int(w.size()), info + b);
        for (int j = 0; j < n; ++j) eb[j] = C(wr[size_t(j)], wi[size_t(j)]);
        if (!vb) continue;
        for (int j = 0; j < n; ++j) {
          const T* re = vr.data() + int64_t(j) * n;
          if (wi[size_t(j)] == 0 || j + 1 == n) {
            for (int i = 0; i < n; ++i) vb[int64_t(j) * n + i] = C(re[i], 0);
            continue;
          }
          const T* im = re + n;  // the pair (j, j + 1): v and conj(v)
          for (int i = 0; i < n; ++i) {
            vb[int64_t(j) * n + i] = C(re[i], im[i]);
            vb[int64_t(j + 1) * n + i] = C(re[i], -im[i]);
          }
          ++j;
        }
      }
    }
  }
};

template <class T>
struct SytrfK {
  static void run(KernelArgs& a) {
    const int n = int(a.out2->sizes()[size_t(a.out2->dim() - 1)]);
    const char uplo = a.i0 ? 'L' : 'U';
    T* base = a.out->template data_ptr<T>();
    int* piv = a.out2->template data_ptr<int32_t>();
    int* info = a.in[0]->template data_ptr<int32_t>();
    const int64_t B = a.in[0]->numel();
    T q = 0;
    const bool herm = a.i1 != 0;  // complex only: L D L^H
    sytrf(uplo, n, base, piv, &q, -1, info, herm);
    std::vector<T> w(size_t(lwork_of(q)));
    for (int64_t b = 0; b < B; ++b)
      sytrf(uplo, n, base + b * int64_t(n) * n, piv + b * n, w.data(),
            int(w.size()), info + b, herm);
  }
};

template <class T>
struct SytrsK {
  static void run(KernelArgs& a) {
    const Tensor& X = *a.out;
    const int nd = int(X.dim());
    const int r = int(X.sizes()[size_t(nd - 2)]);
    const int n = int(X.sizes()[size_t(nd - 1)]);
    if (int64_t(r) * n == 0) return;
    const int64_t B = X.numel() / (int64_t(r) * n);
    const char uplo = a.i0 ? 'L' : 'U';
    T* x = a.out->template data_ptr<T>();
    const T* f = a.in[0]->template data_ptr<T>();
    const int* piv = a.in[1]->template data_ptr<int32_t>();
    const bool herm = a.i1 != 0;  // complex only: L D L^H
    int info = 0;
    for (int64_t b = 0; b < B; ++b)
      sytrs(uplo, n, r, f + b * int64_t(n) * n, piv + b * n,
            x + b * int64_t(r) * n, &info, herm);
  }
};

template <class T>
struct LstsqK {
  static void run(KernelArgs& a) {
    const int driver = int(a.i0), m = int(a.i1), n = int(a.i2);
    const int k = std::min(m, n), ld = std::max({1, m, n});
    const Tensor& X = *a.out;
    const int r = int(X.sizes()[size_t(X.dim() - 2)]);
    const int64_t B = a.in[1]->numel();
    T* x = a.out->template data_ptr<T>();
    T* am = const_cast<Tensor*>(a.in[0])->template data_ptr<T>();
    int64_t* rank = const_cast<Tensor*>(a.in[1])->template data_ptr<int64_t>();
    using R = RealOf<T>;  // singular values, rcond, real workspace
    R* s = driver >= 2 ? const_cast<Tensor*>(a.in[2])->template data_ptr<R>()
                       : nullptr;
    const R rcond = R(a.f0);
    std::vector<int> jpvt(size_t(std::max(1, n)));
    int info = 0, rk = 0;
    T q = 0;
    R rq = 0;
    int iq = 0;
    std::vector<R> sv(size_t(std::max(1, k)));
    switch (driver) {
      case 0: gels(m, n, r, am, x, ld, &q, -1, &info); break;
      case 1:
        gelsy(m, n, r, am, x, ld, jpvt.data(), rcond, &rk, &q, -1, &rq,
              &info);
        break;
      case 2:
        gelsd(m, n, r, am, x, ld, sv.data(), rcond, &rk, &q, -1, &rq, &iq,
              &info);
        break;
      default:
        gelss(m, n, r, am, x, ld, sv.data(), rcond, &rk, &q, -1, &rq, &info);
    }
    std::vector<T> w(size_t(lwork_of(q)));
    std::vector<int> iw(size_t(std::max(1, iq)));
    // complex: gelsy needs 2n, gelss 5 min(m, n), gelsd what it answered
    std::vector<R> rw(size_t(
        kIsComplex<T> ? std::max({lwork_of(rq), 2 * n, 5 * k}) : 1));
    for (int64_t b = 0; b < B; ++b) {
      T* ab = am + b * int64_t(m) * n;
      T* xb = x + b * int64_t(r) * ld;
      R* sb = s ? s + b * k : sv.data();
      const int lw = int(w.size());
      switch (driver) {
        case 0: gels(m, n, r, ab, xb, ld, w.data(), lw, &info); break;
        case 1:
          std::fill(jpvt.begin(), jpvt.end(), 0);
          gelsy(m, n, r, ab, xb, ld, jpvt.data(), rcond, &rk, w.data(), lw,
                rw.data(), &info);
          break;
        case 2:
          gelsd(m, n, r, ab, xb, ld, sb, rcond, &rk, w.data(), lw, rw.data(),
                iw.data(), &info);
          break;
        default:
          gelss(m, n, r, ab, xb, ld, sb, rcond, &rk, w.data(), lw, rw.data(),
                &info);
      }
      rank[b] = driver == 0 ? k : rk;
    }
  }
};

}  // namespace

void register_lapack_kernels() {
#define FASTT_KERNELS_lapack
#include "kernels/kernels.def"
}

}  // namespace fastt

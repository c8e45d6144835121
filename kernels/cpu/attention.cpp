// Fused scaled-dot-product attention on the CPU (Op::flash_attention and
// its backward; entry points csrc/ops/attention.cpp): FlashAttention-2's
// schedule with BLAS for the tile products. The forward walks a block of
// kBq queries over blocks of kBk keys keeping a running max, sum and
// output (online softmax), so no [L, S] matrix exists; it saves the
// per-row logsumexp. The backward recomputes each tile's probabilities
// from it. Causal attention skips the key blocks above the diagonal;
// grouped-query attention reads kv head h / (H / Hk) (no copies). A row
// with every key masked out gives 0 (as torch's CPU flash kernel), and
// zero gradients.
//
// Layouts (the entry point makes them so): q [N, H, L, E], k [N, Hk, S, E],
// v [N, Hk, S, Ev] with unit stride along E (a row of a BLAS operand) and
// any other strides (attention's heads permuted out of one projection are
// read in place); out [N, H, L, Ev], lse [N, H, L] and the gradients
// dense; the additive mask undefined or a view broadcast to [N, H, L, S].
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "csrc/mutation.h"
#include "csrc/parallel.h"
#include "csrc/tensor.h"
#include "kernels/cpu/loop.h"
#include "kernels/cpu/vec_math_call.h"

namespace fastt {
namespace {
using namespace cpu;

// Tile sizes: a kBq x kBk score tile and its probabilities stay in L1/L2
// (64 x 64 floats = 16 KiB); the products are small enough that OpenBLAS
// runs each on the calling thread.
constexpr int64_t kBq = 64;
constexpr int64_t kBk = 64;

// Where the tensors of one call live (a.in[0] holds them; entry point's
// order, csrc/ops/attention.cpp).
enum FaFwdSlot { kFaQ, kFaK, kFaV, kFaMask, kFaOut, kFaLse, kFaFwdN };
enum FaBwdSlot {
  kFbGrad, kFbQ, kFbK, kFbV, kFbMask, kFbOut, kFbLse, kFbDq, kFbDk, kFbDv,
  kFbN
};

inline void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                 float alpha, const float* A, int64_t lda, const float* B,
                 int64_t ldb, float beta, float* C, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), alpha,
              A, int(lda), B, int(ldb), beta, C, int(ldc));
}
inline void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                 double alpha, const double* A, int64_t lda, const double* B,
                 int64_t ldb, double beta, double* C, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), alpha,
              A, int(lda), B, int(ldb), beta, C, int(ldc));
}

template <class T>
void exp_inplace(T* x, int64_t n) {
  if (vec_math::g_table) return vec_math::unary_range(vec_math::kExp, x, x, n);
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

// The geometry both directions share.
// A [N, H, rows, cols] operand with unit column stride: the matrix of
// (n, h) starts at p + n * sn + h * sh, its rows ld apart.
template <class T>
struct Mat {
  const T* p;
  int64_t sn, sh, ld;
  explicit Mat(const Tensor& t)
      : p(static_cast<const T*>(t.data_ptr())), sn(t.strides()[0]),
        sh(t.strides()[1]), ld(t.strides()[2]) {}
  const T* at(int64_t n, int64_t h) const { return p + n * sn + h * sh; }
};

template <class T>
struct Geo {
  int64_t N, H, L, E, Hk, S, Ev, rep;
  Mat<T> q, k, v;
  const T* mask;  // null: none
  int64_t ms[4];  // its strides over [N, H, L, S]
  T scale;
  bool causal;

  Geo(const Tensor& tq, const Tensor& tk, const Tensor& tv, const Tensor& m,
      double sc, bool cz)
      : q(tq), k(tk), v(tv) {
    N = tq.size(0), H = tq.size(1), L = tq.size(2), E = tq.size(3);
    Hk = tk.size(1), S = tk.size(2), Ev = tv.size(3);
    rep = H / Hk;
    mask = m.defined() ? static_cast<const T*>(m.data_ptr()) : nullptr;
    for (int d = 0; d < 4; ++d) ms[d] = m.defined() ? m.strides()[size_t(d)] : 0;
    scale = T(sc);
    causal = cz;
  }
  // Keys a query block [i0, i0 + bq) sees: all, or j <= i (causal, torch's
  // top-left alignment).
  int64_t key_end(int64_t i0, int64_t bq) const {
    return causal ? std::min(S, i0 + bq) : S;
  }
  // s [bq, bk] (row stride bk) = scale * Q K^T + mask, -inf above the
  // causal diagonal; Q is row i0 of query head (n, h), K row 0 of its kv
  // head.
  void scores(const T* Q, const T* K, int64_t n, int64_t h, int64_t i0,
              int64_t bq, int64_t j0, int64_t bk, T* s) const {
    gemm(false, true, bq, bk, E, scale, Q, q.ld, K + j0 * k.ld, k.ld, T(0),
         s, bk);
    if (mask) {
      for (int64_t r = 0; r < bq; ++r) {
        const T* mr = mask + n * ms[0] + h * ms[1] + (i0 + r) * ms[2] +
                      j0 * ms[3];
        T* sr = s + r * bk;
        for (int64_t c = 0; c < bk; ++c) sr[c] += mr[c * ms[3]];
      }
    }
    if (causal && j0 + bk - 1 > i0) {
      const T ninf = -std::numeric_limits<T>::infinity();
      for (int64_t r = 0; r < bq; ++r)
        for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < bk; ++c)
          s[r * bk + c] = ninf;
    }
  }
};

template <class T>
struct FlashAttentionK {
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const Geo<T> g(t[kFaQ], t[kFaK], t[kFaV], t[kFaMask], a.f0, a.i0 != 0);
    T* out = static_cast<T*>(t[kFaOut].data_ptr());
    T* lse = static_cast<T*>(t[kFaLse].data_ptr());
    const int64_t nqb = (g.L + kBq - 1) / kBq;
    const T ninf = -std::numeric_limits<T>::infinity();
    parallel_for(0, g.N * g.H * nqb, 1, [&](int64_t t0, int64_t t1) {
      std::vector<T> s(size_t(kBq * kBk)), acc(size_t(kBq * g.Ev));
      std::vector<T> m(static_cast<size_t>(kBq)), l(static_cast<size_t>(kBq));
      for (int64_t task = t0; task < t1; ++task) {
        const int64_t nh = task / nqb, i0 = (task % nqb) * kBq;
        const int64_t n = nh / g.H, h = nh % g.H, hk = h / g.rep;
        const int64_t bq = std::min(kBq, g.L - i0);
        const T* Q = g.q.at(n, h) + i0 * g.q.ld;
        const T* K = g.k.at(n, hk);
        const T* V = g.v.at(n, hk);
        std::fill(m.begin(), m.end(), ninf);
        std::fill(l.begin(), l.end(), T(0));
        std::fill(acc.begin(), acc.begin() + bq * g.Ev, T(0));
        const int64_t jend = g.key_end(i0, bq);
        for (int64_t j0 = 0; j0 < jend; j0 += kBk) {
          const int64_t bk = std::min(kBk, jend - j0);
          T* sp = s.data();
          g.scores(Q, K, n, h, i0, bq, j0, bk, sp);
          for (int64_t r = 0; r < bq; ++r) {
            T* sr = sp + r * bk;
            T mx = ninf;
#pragma omp simd reduction(max : mx)
            for (int64_t c = 0; c < bk; ++c) mx = sr[c] > mx ? sr[c] : mx;
            const T mold = m[size_t(r)];
            const T mnew = std::max(mold, mx);
            if (mnew == ninf) {  // every key so far masked: p = 0
              std::fill(sr, sr + bk, ninf);
              continue;
            }
#pragma omp simd
            for (int64_t c = 0; c < bk; ++c) sr[c] -= mnew;
            if (mold != mnew && mold != ninf &&
                !FASTT_MUTANT(FlashNoRescale)) {  // rescale what came before
              const T alpha = std::exp(mold - mnew);
              l[size_t(r)] *= alpha;
              T* ar = acc.data() + r * g.Ev;
#pragma omp simd
              for (int64_t e = 0; e < g.Ev; ++e) ar[e] *= alpha;
            }
            m[size_t(r)] = mnew;
          }
          exp_inplace(sp, bq * bk);
          for (int64_t r = 0; r < bq; ++r) {
            const T* sr = sp + r * bk;
            T sum = 0;
#pragma omp simd reduction(+ : sum)
            for (int64_t c = 0; c < bk; ++c) sum += sr[c];
            l[size_t(r)] += sum;
          }
          gemm(false, false, bq, g.Ev, bk, T(1), sp, bk, V + j0 * g.v.ld,
               g.v.ld, T(1), acc.data(), g.Ev);
        }
        T* O = out + (nh * g.L + i0) * g.Ev;
        T* Ls = lse + nh * g.L + i0;
        for (int64_t r = 0; r < bq; ++r) {
          const T lr = l[size_t(r)];
          const T inv = lr > T(0) ? T(1) / lr : T(0);
          for (int64_t e = 0; e < g.Ev; ++e)
            O[r * g.Ev + e] = acc[size_t(r * g.Ev + e)] * inv;
          Ls[r] = lr > T(0) ? m[size_t(r)] + std::log(lr) : ninf;
        }
      }
    });
  }
};

template <class T>
struct FlashAttentionBackwardK {
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const Geo<T> g(t[kFbQ], t[kFbK], t[kFbV], t[kFbMask], a.f0, a.i0 != 0);
    const T* go = static_cast<const T*>(t[kFbGrad].data_ptr());
    const T* out = static_cast<const T*>(t[kFbOut].data_ptr());
    const T* lse = static_cast<const T*>(t[kFbLse].data_ptr());
    T* dq = static_cast<T*>(t[kFbDq].data_ptr());
    T* dk = static_cast<T*>(t[kFbDk].data_ptr());
    T* dv = static_cast<T*>(t[kFbDv].data_ptr());
    const T ninf = -std::numeric_limits<T>::infinity();
    // One task per kv head: its dK, dV and its query heads' dQ are written
    // by that task alone (no atomics, no reduction afterwards).
    parallel_for(0, g.N * g.Hk, 1, [&](int64_t t0, int64_t t1) {
      std::vector<T> p(size_t(kBq * kBk)), dp(size_t(kBq * kBk)),
          dsum(size_t(g.L));
      for (int64_t task = t0; task < t1; ++task) {
        const int64_t n = task / g.Hk, hk = task % g.Hk;
        const T* K = g.k.at(n, hk);
        const T* V = g.v.at(n, hk);
        T* dK = dk + task * g.S * g.E;
        T* dV = dv + task * g.S * g.Ev;
        std::fill(dK, dK + g.S * g.E, T(0));
        std::fill(dV, dV + g.S * g.Ev, T(0));
        for (int64_t h = hk * g.rep; h < (hk + 1) * g.rep; ++h) {
          const int64_t nh = n * g.H + h;
          const T* Q = g.q.at(n, h);
          const T* dO = go + nh * g.L * g.Ev;
          const T* O = out + nh * g.L * g.Ev;
          const T* Ls = lse + nh * g.L;
          T* dQ = dq + nh * g.L * g.E;
          std::fill(dQ, dQ + g.L * g.E, T(0));
          // D_i = dO_i . O_i, the softmax backward's row term.
          for (int64_t i = 0; i < g.L; ++i) {
            T d = 0;
            for (int64_t e = 0; e < g.Ev; ++e)
              d += dO[i * g.Ev + e] * O[i * g.Ev + e];
            dsum[size_t(i)] = d;
          }
          for (int64_t i0 = 0; i0 < g.L; i0 += kBq) {
            const int64_t bq = std::min(kBq, g.L - i0);
            const int64_t jend = g.key_end(i0, bq);
            for (int64_t j0 = 0; j0 < jend; j0 += kBk) {
              const int64_t bk = std::min(kBk, jend - j0);
              T* pp = p.data();
              g.scores(Q + i0 * g.q.ld, K, n, h, i0, bq, j0, bk, pp);
              for (int64_t r = 0; r < bq; ++r) {
                const T lr = Ls[i0 + r];
                T* pr = pp + r * bk;
                if (lr == ninf) std::fill(pr, pr + bk, ninf);  // p = 0
                else for (int64_t c = 0; c < bk; ++c) pr[c] -= lr;
              }
              exp_inplace(pp, bq * bk);
              // dV_j += P^T dO_i; dP = dO_i V_j^T.
              gemm(true, false, bk, g.Ev, bq, T(1), pp, bk,
                   dO + i0 * g.Ev, g.Ev, T(1), dV + j0 * g.Ev, g.Ev);
              gemm(false, true, bq, bk, g.Ev, T(1), dO + i0 * g.Ev, g.Ev,
                   V + j0 * g.v.ld, g.v.ld, T(0), dp.data(), bk);
              // dS = P * (dP - D), into dp.
              for (int64_t r = 0; r < bq; ++r) {
                const T d = dsum[size_t(i0 + r)];
                const T* pr = pp + r * bk;
                T* dr = dp.data() + r * bk;
                for (int64_t c = 0; c < bk; ++c) dr[c] = pr[c] * (dr[c] - d);
              }
              // dQ_i += scale dS K_j; dK_j += scale dS^T Q_i.
              gemm(false, false, bq, g.E, bk, g.scale, dp.data(), bk,
                   K + j0 * g.k.ld, g.k.ld, T(1), dQ + i0 * g.E, g.E);
              gemm(true, false, bk, g.E, bq, g.scale, dp.data(), bk,
                   Q + i0 * g.q.ld, g.q.ld, T(1), dK + j0 * g.E, g.E);
            }
          }
        }
      }
    });
  }
};

}  // namespace

void register_attention_kernels() {
#define FASTT_KERNELS_attention
#include "kernels/kernels.def"
}

}  // namespace fastt

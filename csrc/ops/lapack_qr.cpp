// QR and Householder reflectors (csrc/ops/lapack.h): geqrf, linalg.qr
// (recorded: autograd/formulas_linalg.cpp), householder_product and ormqr.
// The last two are LAPACK's orgqr (ungqr) when no gradient is wanted; with
// one they apply the reflectors H_i = I - tau_i v_i v_i^H with fastt ops,
// whose own formulas give the gradient (torch's formula is the same product
// rule).
#include <algorithm>
#include <vector>

#include "elementwise.h"
#include "index.h"
#include "lapack.h"
#include "lapack_util.h"
#include "linalg.h"
#include "reduce.h"

#include "autograd/functions_lapack.h"
#include "csrc/autograd.h"

namespace fastt {
using namespace lapack;

namespace {

// The packed factor (column-major work [B, n, m]) and tau [B, k].
std::pair<Tensor, Tensor> geqrf_work(const Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  Tensor work = colmajor_copy(A);
  Tensor tau = empty(with(batch_of(A), k), A.dtype());
  if (work.numel() > 0) {
    KernelArgs args = kernel_args(&work, &tau);
    args.i0 = m;
    args.i1 = n;
    run_kernel(Op::geqrf, A.dtype(), args);
  }
  return {work, tau};
}

// Q's first c columns from c column-major reflector columns [B, c, m]
// (overwritten) and tau [B, t].
Tensor orgqr_from(Tensor refl, const Tensor& tau, int64_t m) {
  const int64_t c = refl.size(-2), t = tau.size(-1);
  Tensor q = refl.contiguous();
  Tensor tc = tau.contiguous();
  if (q.numel() > 0) {
    KernelArgs args = kernel_args(&q, nullptr, &tc);
    args.i0 = m;
    args.i1 = c;
    args.i2 = t;
    run_kernel(Op::orgqr, q.dtype(), args);
  }
  return from_colmajor(q);
}

// v_i [..., m, 1]: zeros above row i, 1 at i, A's column i below.
Tensor reflector(const Tensor& A, int64_t i) {
  const int64_t m = A.size(-2);
  std::vector<int64_t> b = batch_of(A);
  Tensor below = A.narrow(-1, i, 1).narrow(-2, i + 1, m - i - 1);
  return cat({zeros(with(b, i, 1), A.dtype(), A.device()),
              ones(with(b, 1, 1), A.dtype(), A.device()), below},
             -2);
}

// C - tau_i v (v^H C) (left) or C - tau_i (C v) v^H (right); H_i^H (the
// conjugate tau_i) where `adjoint`.
Tensor apply_reflector(const Tensor& C, const Tensor& A, const Tensor& tau,
                       int64_t i, bool left, bool adj = false) {
  Tensor v = reflector(A, i);
  Tensor ti = tau.narrow(-1, i, 1).unsqueeze(-1);
  if (adj) ti = conj_physical(ti);
  Tensor vh = adjoint(v);
  Tensor upd = left ? matmul(v, matmul(vh, C)) : matmul(matmul(C, v), vh);
  return sub(C, mul(ti, upd));
}

void check_reflectors(const char* op, const Tensor& A, const Tensor& tau) {
  require_defined(A, op);
  require_defined(tau, op);
  FASTT_CHECK(A.dim() >= 2, RuntimeError,
              "{}: input must have at least 2 dimensions.", op);
  FASTT_CHECK(tau.dim() == A.dim() - 1, RuntimeError,
              "{}: input.dim() must be greater than tau.dim() by 1", op);
  FASTT_CHECK(A.dtype() == tau.dtype(), RuntimeError,
              "{}: tau dtype {} does not match input dtype {}", op,
              torch_type_name(tau.dtype()), torch_type_name(A.dtype()));
  FASTT_CHECK(A.device() == tau.device(), RuntimeError,
              "{}: Expected input and tau to be on the same device, but "
              "found input on {} and tau on {} instead.",
              op, A.device().str(), tau.device().str());
  FASTT_CHECK(lapack_dtype(A.dtype()), RuntimeError,
              "{}: Expected a floating point or complex tensor as input. "
              "Got {}",
              op, torch_type_name(A.dtype()));
  for (int64_t d = 0; d + 2 < A.dim(); ++d)
    FASTT_CHECK(tau.size(d) == A.size(d), RuntimeError,
                "{}: Expected batch dimensions of tau to be equal to "
                "input.shape[:-2], but got {}",
                op, shape_str(tau.sizes()));
}

}  // namespace

std::tuple<Tensor, Tensor> geqrf(const Tensor& A) {
  check_matrix("geqrf", A, "input");
  auto [work, tau] = geqrf_work(host(A));
  return {back(from_colmajor(work), A.device()), back(tau, A.device())};
}

Tensor householder_product(const Tensor& A, const Tensor& tau) {
  const char* op = "torch.linalg.householder_product";
  check_reflectors(op, A, tau);
  const int64_t m = A.size(-2), n = A.size(-1), t = tau.size(-1);
  FASTT_CHECK(m >= n, RuntimeError,
              "{}: input.shape[-2] must be greater than or equal to "
              "input.shape[-1]",
              op);
  FASTT_CHECK(n >= t, RuntimeError,
              "{}: input.shape[-1] must be greater than or equal to "
              "tau.shape[-1]",
              op);
  if (autograd::should_record(A, tau)) {
    // Q starts as I [m, n], selected over A so that it is A's function
    // (a zero gradient) even when there are no reflectors, as in torch.
    Tensor Q = where(zeros({}, DType::Bool, A.device()), A,
                     eye(m, n, A.dtype(), A.device()));
    for (int64_t i = t - 1; i >= 0; --i)
      Q = apply_reflector(Q, A, tau, i, /*left=*/true);
    return Q;
  }
  return back(orgqr_from(colmajor_copy(A), host(tau), m), A.device());
}

Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& C, bool left,
             bool transpose) {
  const char* op = "torch.ormqr";
  check_reflectors(op, A, tau);
  require_defined(C, op);
  FASTT_CHECK(C.dim() >= 2, RuntimeError,
              "{}: other must have at least 2 dimensions.", op);
  FASTT_CHECK(C.dim() == A.dim(), RuntimeError,
              "{}: input and other must have the same number of dimensions.",
              op);
  const int64_t m = left ? C.size(-2) : C.size(-1), t = tau.size(-1);
  FASTT_CHECK(A.size(-2) == m, RuntimeError,
              "{}: other.shape[{}] must be equal to input.shape[-2]", op,
              left ? -2 : -1);
  FASTT_CHECK(t <= A.size(-1), RuntimeError,
              "{}: tau.shape[-1] must be less than or equal to "
              "input.shape[-1]",
              op);
  FASTT_CHECK(A.dtype() == C.dtype(), RuntimeError,
              "{}: Expected other and input to have the same dtype, but "
              "other has dtype {} and input has dtype {}",
              op, torch_type_name(C.dtype()), torch_type_name(A.dtype()));
  for (int64_t d = 0; d + 2 < A.dim(); ++d)
    FASTT_CHECK(C.size(d) == A.size(d), RuntimeError,
                "{}: Expected batch dimensions of other to be equal to "
                "input.shape[:-2], but got {}",
                op, shape_str(C.sizes()));
  // Q = H_0 H_1 ... H_{t-1}: Q C applies the last first, Q^H C the first
  // (transpose is the conjugate transpose, as torch's).
  const bool last_first = left != transpose;
  Tensor R = C;
  for (int64_t s = 0; s < t; ++s)
    R = apply_reflector(R, A, tau, last_first ? t - 1 - s : s, left,
                        transpose);
  return t == 0 ? C.clone() : R;
}

namespace {
enum class QrMode { Reduced = 0, Complete = 1, R = 2 };

QrMode qr_mode(const char* mode) {
  const std::string m = mode ? mode : "reduced";
  if (m == "reduced") return QrMode::Reduced;
  if (m == "complete") return QrMode::Complete;
  FASTT_CHECK(m == "r", RuntimeError,
              "qr received unrecognized mode '{}' but expected one of "
              "'reduced' (default), 'r', or 'complete'",
              m);
  return QrMode::R;
}

std::tuple<Tensor, Tensor> qr_impl(const Tensor& A, QrMode mode) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto [work, tau] = geqrf_work(host(A));
  Tensor packed = from_colmajor(work);  // [..., m, n]
  Tensor R = triu(mode == QrMode::Complete ? packed
                                           : packed.narrow(-2, 0, k));
  Tensor Q;
  if (mode == QrMode::R) {
    Q = empty({0}, A.dtype());
  } else if (mode == QrMode::Reduced || n >= m) {
    // Q [m, k]: the first k reflector columns (k == m when complete).
    Q = orgqr_from(work.narrow(-2, 0, k), tau, m);
  } else {
    std::vector<int64_t> pad = with(batch_of(A), m - n, m);
    Q = orgqr_from(cat({work, zeros(pad, A.dtype())}, -2), tau, m);
  }
  return {back(Q, A.device()), back(R, A.device())};
}
}  // namespace

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const char* mode) {
  check_matrix("linalg.qr", A, "A");
  const QrMode md = qr_mode(mode);
  if (autograd::should_record(A))
    return autograd::linalg_qr(A, int(md), [&] { return qr_impl(A, md); });
  return qr_impl(A, md);
}

}  // namespace fastt

// Spectral decompositions and what is built on them (csrc/ops/lapack.h):
// linalg.eigh / eigvalsh (syevd; heevd), linalg.eig / eigvals (geev),
// linalg.svd / svdvals (gesdd),
// linalg.pinv and linalg.lstsq (gels / gelsy / gelsd / gelss). Each is
// recorded as one node (autograd/formulas_linalg.cpp) with torch's
// gradient; the forward runs on the host for CUDA operands.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "elementwise.h"
#include "index.h"
#include "lapack.h"
#include "lapack_util.h"
#include "linalg.h"
#include "reduce.h"
#include "shape.h"

#include "autograd/functions_lapack.h"
#include "csrc/autograd.h"
#include "csrc/capture.h"

namespace fastt {
using namespace lapack;

void linalg_check_errors(const Tensor& info, const char* api,
                         LinalgFailure kind) {
  if (FASTT_UNLIKELY(g_capturing))  // a replay checks its factorization too
    capture::host_step({info}, [api, kind](Tensor* t) {
      linalg_check_errors(t[0], api, kind);
    });
  int64_t v = 0;
  const int64_t b = first_failure(info, &v);
  if (b < 0) return;
  const std::string at = batch_prefix(info, b);
  switch (kind) {
    case LinalgFailure::Cholesky:
      throw LinAlgError(fmt::format(
          "{}: {}The factorization could not be completed because the input "
          "is not positive-definite (the leading minor of order {} is not "
          "positive-definite).",
          api, at, v));
    case LinalgFailure::Inverse:
      throw LinAlgError(fmt::format(
          "{}: {}The diagonal element {} is zero, the inversion could not be "
          "completed because the input matrix is singular.",
          api, at, v));
    case LinalgFailure::Solve:
      throw LinAlgError(fmt::format(
          "{}: {}The solver failed because the input matrix is singular.",
          api, at));
    case LinalgFailure::LuFactor:
      throw RuntimeError(fmt::format(
          "{}: {}U[{},{}] is zero and using it on lu_solve would result in a "
          "division by zero. If you still want to perform the factorization, "
          "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
          "pivot)",
          api, at, v, v));
    case LinalgFailure::Eigh:
      throw LinAlgError(fmt::format(
          "{}: {}The algorithm failed to converge because the input matrix "
          "is ill-conditioned or has too many repeated eigenvalues (error "
          "code: {}).",
          api, at, v));
    case LinalgFailure::Svd:
      throw LinAlgError(fmt::format(
          "{}: {}The algorithm failed to converge because the input matrix "
          "is ill-conditioned or has too many repeated singular values "
          "(error code: {}).",
          api, at, v));
    case LinalgFailure::Ldl:
      throw LinAlgError(fmt::format(
          "{}: {}The factorization could not be completed because the input "
          "is singular (D[{},{}] is zero).",
          api, at, v, v));
  }
}

// ---- eigh ----
namespace {
std::tuple<Tensor, Tensor> eigh_impl(const Tensor& A, bool lower,
                                     bool vectors) {
  const int64_t n = A.size(-1);
  Tensor work = colmajor_copy(A);  // column-major A: 'L' is A's lower part
  std::vector<int64_t> batch = batch_of(A);
  Tensor L = empty(with(batch, n), to_real(A.dtype()));
  Tensor info = zeros(batch, DType::Int32);
  if (work.numel() > 0) {
    KernelArgs args = kernel_args(&work, &L, &info);
    args.i0 = vectors;
    args.i1 = lower;
    run_kernel(Op::syevd, A.dtype(), args);
  }
  linalg_check_errors(info, "linalg.eigh", LinalgFailure::Eigh);
  Tensor V = vectors ? back(from_colmajor(work), A.device()) : Tensor();
  return {back(L, A.device()), V};
}

bool uplo_lower(const char* uplo) {
  const std::string u = uplo ? uplo : "L";
  FASTT_CHECK(u == "L" || u == "U" || u == "l" || u == "u", RuntimeError,
              "Expected UPLO argument to be 'L' or 'U', but got {}", u);
  return u == "L" || u == "l";
}
}  // namespace

std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, const char* uplo,
                                       bool eigenvectors) {
  check_square(eigenvectors ? "linalg.eigh" : "linalg.eigvalsh", A, "A");
  const bool lower = uplo_lower(uplo);
  if (autograd::should_record(A))
    return autograd::linalg_eigh(A, eigenvectors,
                                 [&] { return eigh_impl(A, lower, true); });
  return eigh_impl(A, lower, eigenvectors);
}

// ---- eig ----
namespace {
std::tuple<Tensor, Tensor> eig_impl(const Tensor& A, bool vectors) {
  const int64_t n = A.size(-1);
  const DType cdt = to_complex(A.dtype());
  Tensor work = colmajor_copy(A);
  FASTT_CHECK(work.numel() == 0 || all(isfinite(work)).item().to<bool>(),
              RuntimeError,
              "torch.linalg.eig: input tensor should not contain infs or "
              "NaNs.");
  std::vector<int64_t> batch = batch_of(A);
  Tensor L = empty(with(batch, n), cdt);
  Tensor V = vectors ? empty(with(batch, n, n), cdt) : Tensor();
  Tensor info = zeros(batch, DType::Int32);
  if (work.numel() > 0) {
    KernelArgs args = kernel_args(&work, &L, vectors ? &V : nullptr, &info);
    args.i0 = vectors;
    run_kernel(Op::geev, A.dtype(), args);
  }
  linalg_check_errors(info, "linalg.eig", LinalgFailure::Eigh);
  if (!vectors) return {back(L, A.device()), Tensor()};
  return {back(L, A.device()), back(from_colmajor(V), A.device())};
}
}  // namespace

std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A, bool eigenvectors) {
  check_square(eigenvectors ? "linalg.eig" : "linalg.eigvals", A, "A");
  if (autograd::should_record(A))
    return autograd::linalg_eig(A, eigenvectors,
                                [&] { return eig_impl(A, true); });
  return eig_impl(A, eigenvectors);
}

// ---- svd ----
namespace {
std::tuple<Tensor, Tensor, Tensor> svd_impl(const Tensor& A, bool full,
                                            bool uv) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t uc = full ? m : k, vr = full ? n : k;
  std::vector<int64_t> batch = batch_of(A);
  Tensor work = colmajor_copy(A);
  Tensor S = empty(with(batch, k), to_real(A.dtype()));
  Tensor ubuf = uv ? empty(with(batch, uc, m), A.dtype()) : Tensor();
  Tensor vbuf = uv ? empty(with(batch, n, vr), A.dtype()) : Tensor();
  Tensor info = zeros(batch, DType::Int32);
  if (work.numel() > 0) {
    KernelArgs args = kernel_args(&work, &S, &ubuf, &vbuf, &info);
    args.i0 = !uv ? 'N' : full ? 'A' : 'S';
    args.i1 = m;
    args.i2 = n;
    run_kernel(Op::gesdd, A.dtype(), args);
  } else if (uv) {
    // No matrix elements: the full factors are identities (torch's too).
    ubuf.copy_(eye(uc, m, A.dtype()).expand(with(batch, uc, m)));
    vbuf.copy_(eye(n, vr, A.dtype()).expand(with(batch, n, vr)));
  }
  linalg_check_errors(info, "linalg.svd", LinalgFailure::Svd);
  if (!uv) return {Tensor(), back(S, A.device()), Tensor()};
  return {back(from_colmajor(ubuf), A.device()), back(S, A.device()),
          back(from_colmajor(vbuf), A.device())};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A,
                                              bool full_matrices,
                                              bool compute_uv) {
  check_matrix(compute_uv ? "linalg.svd" : "linalg.svdvals", A, "A");
  if (autograd::should_record(A))
    return autograd::linalg_svd(A, full_matrices, compute_uv, [&] {
      return svd_impl(A, full_matrices && compute_uv, true);
    });
  return svd_impl(A, full_matrices, compute_uv);
}

Tensor nuclear_norm(const Tensor& A, IntList dims, bool keepdim,
                    std::optional<DType> dtype) {
  const char* op = "linalg.matrix_norm";
  require_defined(A, op);
  std::vector<int64_t> d(dims.begin(), dims.end());
  if (d.empty())
    for (int64_t i = 0; i < A.dim(); ++i) d.push_back(i);
  FASTT_CHECK(d.size() == 2, RuntimeError, "{}: dim must be a 2-tuple. Got {}",
              op, fmt::join(d, " "));
  for (int64_t& x : d) x = wrap_dim(x, A.dim(), op);
  FASTT_CHECK(d[0] != d[1], RuntimeError,
              "{}: dims must be different. Got ({}, {})", op, d[0], d[1]);
  Tensor a = dtype ? A.to(*dtype) : A;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < a.dim(); ++i)
    if (i != d[0] && i != d[1]) perm.push_back(i);
  perm.push_back(d[0]);
  perm.push_back(d[1]);
  Tensor r = sum(std::get<1>(linalg_svd(a.permute(perm), false, false)), {-1});
  if (keepdim)
    for (int64_t x : {std::min(d[0], d[1]), std::max(d[0], d[1])})
      r = r.unsqueeze(x);
  return r;
}

// ---- pinv ----
namespace {
// The machine epsilon of dtype's parts (float32 for complex64).
double eps_of(DType dtype) {
  return to_real(dtype) == DType::Float32
             ? double(std::numeric_limits<float>::epsilon())
             : std::numeric_limits<double>::epsilon();
}

// max(atol, rtol * largest) per matrix, as [..., 1] (torch's rule: rtol
// defaults to eps * max(m, n), or to 0 where atol > 0 is given).
Tensor pinv_tolerance(const Tensor& largest, const Tensor& atol,
                      const Tensor& rtol, int64_t m, int64_t n) {
  const double eps = eps_of(largest.dtype());
  const double default_rtol = eps * double(std::max(m, n));
  const DType dt = largest.dtype();
  // (a complex tolerance counts by its real part, as torch's)
  auto as_real = [&](const Tensor& t) { return real_part(host(t)).to(dt); };
  Tensor at = atol.defined() ? as_real(atol) : zeros({}, dt);
  Tensor rt;
  if (rtol.defined())
    rt = as_real(rtol);
  else if (atol.defined())
    rt = where(gt(at, Scalar(0)), Scalar(0), Scalar(default_rtol)).to(dt);
  else
    rt = full({}, Scalar(default_rtol), dt);
  return maximum(at.unsqueeze(-1), mul(rt.unsqueeze(-1), largest));
}

Tensor pinv_impl(const Tensor& A, const Tensor& atol, const Tensor& rtol,
                 bool hermitian) {
  const int64_t m = A.size(-2), n = A.size(-1);
  const Tensor a = host(A);
  if (a.numel() == 0)
    return back(zeros(with(batch_of(a), n, m), a.dtype()), A.device());
  if (hermitian) {
    auto [L, V] = eigh_impl(a, true, true);
    Tensor absL = abs(L);
    Tensor tol = pinv_tolerance(amax(absL, {-1}, true), atol, rtol, m, n);
    Tensor inv = where(gt(absL, tol), reciprocal(L), Scalar(0));
    return back(matmul(mul(V, inv.unsqueeze(-2)), adjoint(V)), A.device());
  }
  auto [U, S, Vh] = svd_impl(a, false, true);
  Tensor tol = pinv_tolerance(S.narrow(-1, 0, 1), atol, rtol, m, n);
  Tensor inv = where(gt(S, tol), reciprocal(S), Scalar(0));
  return back(matmul(mul(adjoint(Vh), inv.unsqueeze(-2)), adjoint(U)),
              A.device());
}
}  // namespace

Tensor linalg_pinv(const Tensor& A, const Tensor& atol, const Tensor& rtol,
                   bool hermitian) {
  check_matrix("linalg.pinv", A, "A");
  if (hermitian) check_square("linalg.pinv", A, "A");
  if (autograd::should_record(A))
    return autograd::linalg_pinv(
        A, [&] { return pinv_impl(A, atol, rtol, hermitian); });
  return pinv_impl(A, atol, rtol, hermitian);
}

// ---- lstsq ----
namespace {
// |t|^2, real (the squared residuals of a complex system too).
Tensor abs_square(const Tensor& t) {
  return is_complex(t.dtype()) ? square(abs(t)) : square(t);
}

int lstsq_driver(const char* driver) {
  const std::string d = driver ? driver : "gelsy";
  if (d == "gels") return 0;
  if (d == "gelsy") return 1;
  if (d == "gelsd") return 2;
  FASTT_CHECK(d == "gelss", RuntimeError,
              "torch.linalg.lstsq: parameter `driver` should be one of "
              "(gels, gelsy, gelsd, gelss)");
  return 3;
}

// A [..., m, n], B [..., m, r] on the host (batch dims already equal);
// the results go back to `device`.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq_impl(const Tensor& A,
                                                      const Tensor& B,
                                                      double rcond,
                                                      int driver,
                                                      Device device) {
  const int64_t m = A.size(-2), n = A.size(-1), r = B.size(-1);
  const int64_t k = std::min(m, n), ld = std::max(m, n);
  std::vector<int64_t> batch = batch_of(A);
  const DType dt = A.dtype();
  Tensor aw = colmajor_copy(A);
  Tensor xw = zeros(with(batch, r, ld), dt);
  xw.narrow(-1, 0, m).copy_(host(B).mT());
  Tensor rank = zeros(batch, DType::Int64);
  Tensor sv = driver >= 2 ? zeros(with(batch, k), to_real(dt)) : Tensor();
  if (aw.numel() > 0 && xw.numel() > 0) {
    KernelArgs args = kernel_args(&xw, nullptr, &aw, &rank, &sv);
    args.i0 = driver;
    args.i1 = m;
    args.i2 = n;
    args.f0 = rcond;
    run_kernel(Op::lstsq, dt, args);
  } else if (driver != 0) {
    rank.fill_(Scalar(0));
  }
  Tensor X = from_colmajor(xw).narrow(-2, 0, n);
  // Squared residuals: the rows of Q^T B past n, when every matrix has
  // full column rank (driver gelsy reports none, as in torch).
  Tensor res = empty({0}, to_real(dt));
  bool full_rank = m > n && driver != 1;
  if (full_rank && driver != 0 && rank.numel() > 0)
    full_rank = all(eq(rank, Scalar(n))).item().to<bool>();
  if (full_rank)
    res = sum(abs_square(from_colmajor(xw).narrow(-2, n, m - n)), {-2});
  const Device d = device;
  if (driver == 0) rank = empty({0}, DType::Int64);
  return {back(X.contiguous(), d), back(res, d), back(rank, d),
          sv.defined() ? back(sv, d) : back(empty({0}, to_real(dt)), d)};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(
    const Tensor& A, const Tensor& B, std::optional<double> rcond,
    const char* driver) {
  const char* op = "torch.linalg.lstsq";
  require_defined(A, op);
  require_defined(B, op);
  FASTT_CHECK(A.dim() >= 2, RuntimeError,
              "{}: input must have at least 2 dimensions.", op);
  FASTT_CHECK(B.dim() >= 1, RuntimeError,
              "{}: other must have at least 1 dimension.", op);
  FASTT_CHECK(A.dtype() == B.dtype(), RuntimeError,
              "{}: Expected input and other to have the same dtype, but got "
              "input's dtype {} and other's dtype {}",
              op, torch_type_name(A.dtype()), torch_type_name(B.dtype()));
  FASTT_CHECK(A.device() == B.device(), RuntimeError,
              "{}: Expected input and other to be on the same device, but "
              "found input on {}, other on {} instead.",
              op, A.device().str(), B.device().str());
  check_matrix(op, A, "input");
  const bool vector = B.dim() == A.dim() - 1;
  FASTT_CHECK(vector ? B.size(-1) == A.size(-2) : B.size(-2) == A.size(-2),
              RuntimeError, "{}: input.size(-2) should match other.size({})",
              op, vector ? -1 : -2);
  const int drv = lstsq_driver(driver);
  const int64_t m = A.size(-2), n = A.size(-1);
  const double eps = eps_of(A.dtype());
  const double rc = rcond && *rcond >= 0 ? *rcond : eps * double(std::max(m, n));
  Tensor B2 = vector ? B.unsqueeze(-1) : B;
  std::vector<int64_t> batch =
      broadcast_shapes(IntList(batch_of(A)), IntList(batch_of(B2)));
  Tensor Ab = A.expand(with(batch, m, n));
  Tensor Bb = B2.expand(with(batch, m, B2.size(-1)));
  const Device dev = A.device();
  auto r = autograd::should_record(A, B)
               ? autograd::linalg_lstsq(A, B2, [&] {
                   return lstsq_impl(host(Ab), host(Bb), rc, drv, dev);
                 })
               : lstsq_impl(host(Ab), host(Bb), rc, drv, dev);
  if (vector) {
    std::get<0>(r) = std::get<0>(r).squeeze(-1);
    if (std::get<1>(r).numel() > 0) std::get<1>(r) = std::get<1>(r).squeeze(-1);
  }
  return r;
}

}  // namespace fastt

// Bindings of csrc/ops/lapack.h: the LAPACK-backed primitives, as private
// fastt._C._linalg_* functions that python/fastt/linalg.py wraps into
// torch.linalg's API (named-tuple results, out=, the raising forms).
#include "binder.h"

#include "csrc/ops/lapack.h"

namespace fastt {
namespace py {
namespace {

LinalgFailure failure_kind(const char* kind) {
  static const std::pair<const char*, LinalgFailure> kKinds[] = {
      {"cholesky", LinalgFailure::Cholesky}, {"inverse", LinalgFailure::Inverse},
      {"solve", LinalgFailure::Solve},       {"lu_factor", LinalgFailure::LuFactor},
      {"eigh", LinalgFailure::Eigh},         {"svd", LinalgFailure::Svd},
      {"ldl", LinalgFailure::Ldl}};
  for (const auto& [name, k] : kKinds)
    if (kind && std::string(kind) == name) return k;
  throw ValueError(fmt::format("_linalg_check_errors: unknown kind '{}'",
                               kind ? kind : "None"));
}

}  // namespace

FASTT_BIND_FUNCTION(_linalg_lu_factor_ex, 1, fastt::lu_factor_ex(A, pivot),
                    (Tensor, A), (BoolOr<true>, pivot))
FASTT_BIND_FUNCTION(_lu_unpack, 2,
                    fastt::lu_unpack(LU_data, LU_pivots, unpack_data,
                                     unpack_pivots),
                    (Tensor, LU_data), (Tensor, LU_pivots),
                    (BoolOr<true>, unpack_data), (BoolOr<true>, unpack_pivots))
FASTT_BIND_FUNCTION(_linalg_cholesky_ex, 1, fastt::cholesky_ex(A, upper),
                    (Tensor, A), (BoolOr<false>, upper))
FASTT_BIND_FUNCTION(_linalg_solve_triangular, 3,
                    fastt::solve_triangular(A, B, upper, left, unitriangular),
                    (Tensor, A), (Tensor, B), (BoolOr<false>, upper),
                    (BoolOr<true>, left), (BoolOr<false>, unitriangular))
FASTT_BIND_FUNCTION(_linalg_solve_ex, 2, fastt::linalg_solve_ex(A, B),
                    (Tensor, A), (Tensor, B))
FASTT_BIND_FUNCTION(_linalg_inv_ex, 1, fastt::linalg_inv_ex(A), (Tensor, A))
FASTT_BIND_FUNCTION(_cholesky_solve, 2,
                    fastt::cholesky_solve(input, input2, upper),
                    (Tensor, input), (Tensor, input2), (BoolOr<false>, upper))
FASTT_BIND_FUNCTION(_cholesky_inverse, 1,
                    fastt::cholesky_inverse(input, upper), (Tensor, input),
                    (BoolOr<false>, upper))
FASTT_BIND_FUNCTION(_linalg_ldl_factor_ex, 1,
                    fastt::ldl_factor_ex(A, hermitian), (Tensor, A),
                    (BoolOr<false>, hermitian))
FASTT_BIND_FUNCTION(_linalg_ldl_solve, 3,
                    fastt::ldl_solve(LD, pivots, B, hermitian), (Tensor, LD),
                    (Tensor, pivots), (Tensor, B), (BoolOr<false>, hermitian))
FASTT_BIND_FUNCTION(_geqrf, 1, fastt::geqrf(input), (Tensor, input))
FASTT_BIND_FUNCTION(_householder_product, 2,
                    fastt::householder_product(input, tau), (Tensor, input),
                    (Tensor, tau))
FASTT_BIND_FUNCTION(_ormqr, 3,
                    fastt::ormqr(input, input2, input3, left, transpose),
                    (Tensor, input), (Tensor, input2), (Tensor, input3),
                    (BoolOr<true>, left), (BoolOr<false>, transpose))
FASTT_BIND_FUNCTION(_linalg_qr, 1, fastt::linalg_qr(A, mode ? mode : "reduced"),
                    (Tensor, A), (OptStr, mode))
FASTT_BIND_FUNCTION(_linalg_eigh, 1,
                    fastt::linalg_eigh(A, UPLO ? UPLO : "L", eigenvectors),
                    (Tensor, A), (OptStr, UPLO), (BoolOr<true>, eigenvectors))
FASTT_BIND_FUNCTION(_linalg_eig, 1, fastt::linalg_eig(A, eigenvectors),
                    (Tensor, A), (BoolOr<true>, eigenvectors))
FASTT_BIND_FUNCTION(_linalg_svd, 1,
                    fastt::linalg_svd(A, full_matrices, compute_uv),
                    (Tensor, A), (BoolOr<true>, full_matrices),
                    (BoolOr<true>, compute_uv))
FASTT_BIND_FUNCTION(_linalg_pinv, 1,
                    fastt::linalg_pinv(A, atol, rtol, hermitian), (Tensor, A),
                    (OptTensor, atol), (OptTensor, rtol),
                    (BoolOr<false>, hermitian))
FASTT_BIND_FUNCTION(_linalg_lstsq, 2,
                    fastt::linalg_lstsq(A, B, rcond, driver), (Tensor, A),
                    (Tensor, B), (OptDouble, rcond), (OptStr, driver))
FASTT_BIND_FUNCTION(_linalg_check_errors, 3,
                    (fastt::linalg_check_errors(info, api, failure_kind(kind)),
                     NoneResult{}),
                    (Tensor, info), (Required<OptStr>, api),
                    (Required<OptStr>, kind))

}  // namespace py
}  // namespace fastt

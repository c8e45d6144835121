// Dense factorizations, decompositions and solves over batches of matrices
// [..., m, n], float32/float64: torch.linalg's primitives. CPU through
// LAPACK (kernels/cpu/lapack.cpp); a CUDA tensor is factorized on the host
// and copied back (no cuSOLVER rows yet). The _ex forms never raise for a
// singular or non-positive-definite matrix: they return LAPACK's info per
// matrix, and linalg_check_errors raises torch's LinAlgError from it.
// fastt.linalg composes the rest (solve, inv, det, lu_solve, norms, ...)
// of these, so its gradients come from their formulas
// (autograd/formulas_linalg.cpp). Entry points: lapack.cpp (LU, Cholesky,
// triangular, LDL), lapack_qr.cpp, lapack_spectral.cpp.
#pragma once
#include <optional>
#include <tuple>

#include "../tensor.h"

namespace fastt {

// ---- LU, Cholesky, triangular (lapack.cpp) ----
// LU with partial pivoting, A = P L U: (LU [..., m, n] packed, pivots
// int32 [..., min(m, n)] 1-based row swaps, info int32 [...]).
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A,
                                                bool pivot = true);
// torch.lu_unpack: (P [..., m, m], L [..., m, k], U [..., k, n]); the
// parts not asked for are empty tensors.
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU,
                                             const Tensor& pivots,
                                             bool unpack_data = true,
                                             bool unpack_pivots = true);
// A = L L^T (upper: A = U^T U), reading only that triangle of A: (L or U,
// info int32 [...]).
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false);
// X with A X = B (left) or X A = B, A triangular; batch dims broadcast.
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper,
                        bool left = true, bool unitriangular = false);
// X with A X = B (A [..., n, n], B [..., n, r], batch dims broadcast) and
// info (LU's first zero pivot per matrix; X is then B): LU with partial
// pivoting, inline for n <= 8, LAPACK above. The gradient is torch's
// (gB = A^-T gX, gA = -gB X^T).
std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B);
// (A^-1, info): linalg_solve_ex with the identity for B.
std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor& A);
// A^-1 B for A = L L^T (U^T U when upper), batch dims broadcast
// (torch.cholesky_solve's argument order), and A^-1 itself.
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
Tensor cholesky_inverse(const Tensor& L, bool upper = false);
// A = P L D L^T P^T from A's lower triangle (Bunch-Kaufman, LAPACK's
// compact LD and pivots): (LD, pivots int32 [..., n], info). Not
// differentiable (as in torch).
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A,
                                                 bool hermitian = false);
Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B,
                 bool hermitian = false);

// ---- QR and Householder reflectors (lapack_qr.cpp) ----
// LAPACK's packed QR: (a [..., m, n] with R on and above the diagonal and
// the reflectors below, tau [..., min(m, n)]). Not differentiable.
std::tuple<Tensor, Tensor> geqrf(const Tensor& A);
// The first n columns of H_0 ... H_{t-1} (A [..., m, n], m >= n >= t).
Tensor householder_product(const Tensor& A, const Tensor& tau);
// Q C, Q^T C, C Q or C Q^T for Q = householder_product's full product.
Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& C,
             bool left = true, bool transpose = false);
// mode "reduced" (Q [m, k], R [k, n]), "complete" (Q [m, m], R [m, n]) or
// "r" (Q empty, R [k, n]).
std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A,
                                     const char* mode = "reduced");

// ---- spectral (lapack_spectral.cpp) ----
// Symmetric A from its `uplo` ("L" / "U") triangle: (eigenvalues
// ascending, eigenvectors as columns; undefined when !eigenvectors).
std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A,
                                       const char* uplo = "L",
                                       bool eigenvectors = true);
// General square A: (complex eigenvalues, complex right eigenvectors as
// unit columns, LAPACK's geev; undefined when !eigenvectors).
std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A,
                                      bool eigenvectors = true);
// A = U diag(S) Vh, S descending; U and Vh undefined when !compute_uv.
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A,
                                              bool full_matrices = true,
                                              bool compute_uv = true);
// The sum of the singular values of the matrices over `dims` (two dims;
// all of A's when empty, which must then be two): torch.norm(p='nuc').
Tensor nuclear_norm(const Tensor& A, IntList dims, bool keepdim = false,
                    std::optional<DType> dtype = std::nullopt);
// Moore-Penrose inverse: singular values (|eigenvalues| when hermitian)
// at most max(atol, rtol * largest) count as zero. atol / rtol: undefined
// or tensors broadcasting to A's batch.
Tensor linalg_pinv(const Tensor& A, const Tensor& atol = Tensor(),
                   const Tensor& rtol = Tensor(), bool hermitian = false);
// min ||A X - B||: (solution, residuals, rank, singular_values), torch's
// drivers "gels", "gelsy" (default), "gelsd", "gelss".
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(
    const Tensor& A, const Tensor& B, std::optional<double> rcond = {},
    const char* driver = nullptr);

// What a nonzero LAPACK info means, for torch's error message.
enum class LinalgFailure { Cholesky, Inverse, Solve, LuFactor, Eigh, Svd, Ldl };
// Raises LinAlgError (RuntimeError for LuFactor, as torch) naming `api`
// and the first failing batch element when any info is nonzero.
void linalg_check_errors(const Tensor& info, const char* api,
                         LinalgFailure kind);

}  // namespace fastt

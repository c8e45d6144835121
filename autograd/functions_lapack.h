// Recording of the dense factorizations and decompositions
// (csrc/ops/lapack.h); formulas in autograd/formulas_linalg.cpp. Only
// floating outputs get history: pivots, info and ranks are integers.
// Also the FFT primitives (csrc/ops/fft.h), linear maps like the rest.
#pragma once
#include <tuple>

#include "autograd/functions.h"

namespace fastt {
namespace autograd {

using Tensor2 = std::tuple<Tensor, Tensor>;
using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using Tensor4 = std::tuple<Tensor, Tensor, Tensor, Tensor>;
Tensor3 lu_factor_ex(const Tensor& A, FnRef<Tensor3()> compute);
Tensor2 cholesky_ex(const Tensor& A, bool upper, FnRef<Tensor2()> compute);
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper,
                        bool left, bool unit, Compute compute);
// B undefined: the inverse (no gradient for B).
Tensor2 linalg_solve(const Tensor& A, const Tensor& B,
                     FnRef<Tensor2()> compute);
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper,
                      Compute compute);
Tensor cholesky_inverse(const Tensor& L, bool upper, Compute compute);
// mode: 0 reduced, 1 complete, 2 r.
Tensor2 linalg_qr(const Tensor& A, int mode, FnRef<Tensor2()> compute);
// compute gives both eigenvalues and eigenvectors; eigvalsh returns only
// the values (the vectors stay saved for the formula).
Tensor2 linalg_eigh(const Tensor& A, bool eigenvectors,
                    FnRef<Tensor2()> compute);
// linalg.eig / eigvals: compute gives the complex L and V.
Tensor2 linalg_eig(const Tensor& A, bool eigenvectors,
                   FnRef<Tensor2()> compute);
// compute gives U, S, Vh; svdvals (compute_uv false) returns only S.
Tensor3 linalg_svd(const Tensor& A, bool full_matrices, bool compute_uv,
                   FnRef<Tensor3()> compute);
Tensor linalg_pinv(const Tensor& A, Compute compute);
// B is [..., m, r] (a vector right-hand side already unsqueezed).
Tensor4 linalg_lstsq(const Tensor& A, const Tensor& B,
                     FnRef<Tensor4()> compute);
// The discrete Fourier transforms (csrc/ops/fft.h; dims wrapped): fn is
// FftC2c (i1: forward), FftR2c (i1: onesided) or FftC2r (i1: the last
// dim's output size).
Tensor fft(GradFn fn, const Tensor& x, IntList dims, int64_t normalization,
           int64_t i1, Compute compute);

}  // namespace autograd
}  // namespace fastt

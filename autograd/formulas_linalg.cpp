// Backward formulas of the linear algebra ops: every matmul form, addmm
// (also baddbmm) and linear (recorded in formulas.cpp); the dense
// factorizations lu_factor, cholesky and solve_triangular (recorded here).
#include "autograd/formulas.h"
#include "autograd/functions_lapack.h"
#include "csrc/ops.h"
#include "csrc/ops/lapack.h"

namespace fastt {
namespace autograd {
namespace {

void matmul_backward(const Tensor& g, const Tensor& a, const Tensor& b,
                     bool need_a, bool need_b, Tensor& ga, Tensor& gb) {
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  Tensor A = a1 ? a.unsqueeze(0) : a;
  Tensor B = b1 ? b.unsqueeze(1) : b;
  Tensor G = g;
  if (a1) G = G.unsqueeze(G.dim() - (b1 ? 0 : 1));
  if (b1) G = G.unsqueeze(G.dim());
  if (need_a) {
    Tensor r = sum_to(fastt::matmul(G, adjoint(B)), A.sizes());
    ga = a1 ? r.squeeze(0) : r;
  }
  if (need_b) {
    Tensor r = sum_to(fastt::matmul(adjoint(A), G), B.sizes());
    gb = b1 ? r.squeeze(1) : r;
  }
}

template <class F>
auto no_grad(F&& f) {
  GradModeGuard guard(false);
  return f();
}

Tensor or_zeros(const Tensor& g, const Tensor& like) {
  return g.defined() ? g : fastt::zeros_like(like);
}

// A = Q R with m >= n (R square, its diagonal real as LAPACK's):
// gA = (gQ + Q c) R^-H, M = R gR^H - gQ^H Q, c = M's strict lower
// triangle mirrored (conjugated) upward plus Re(diag(M)) — Q^H dQ is
// skew-Hermitian and dR R^-1 upper triangular with a real diagonal.
Tensor qr_backward_tall(const Tensor& gQ, const Tensor& gR, const Tensor& Q,
                        const Tensor& R) {
  Tensor M = fastt::sub(fastt::matmul(R, adjoint(gR)),
                        fastt::matmul(adjoint(gQ), Q));
  Tensor low = fastt::tril(M, -1);
  Tensor d = fastt::diag_embed(real_part(M.diagonal(0, -2, -1)));
  Tensor c = fastt::add(fastt::add(low, adjoint(low)), d);
  Tensor rhs = fastt::add(gQ, fastt::matmul(Q, c));
  return adjoint(
      fastt::solve_triangular(R, adjoint(rhs), /*upper=*/true));
}

// torch's check that the loss does not depend on the free phase of
// complex eigen / singular vectors: |im| <= 1e-2 (+ 1e-2 |ref|); `what`
// names the backward, `vectors` and `term` complete torch's message.
void check_phase(const Tensor& im, const Tensor& ref, const char* what,
                 const char* vectors, const char* term) {
  Tensor bad = fastt::gt(fastt::abs(fastt::sub(im, ref)),
                         fastt::add(fastt::mul(fastt::abs(ref), Scalar(1e-2)),
                                    Scalar(1e-2)));
  FASTT_CHECK(!fastt::any(bad).item().to<bool>(), RuntimeError,
              "{}: The {} in the complex case are specified up to "
              "multiplication by e^{{i phi}}. The specified loss function "
              "depends on this {}, so it is ill-defined.",
              what, vectors, term);
}

// E_ij = v_j - v_i with ones on the diagonal (divided into the skew
// parts, whose diagonals the formulas replace).
Tensor gaps(const Tensor& v) {
  Tensor E = fastt::sub(v.unsqueeze(-2), v.unsqueeze(-1));
  return fastt::add(E, fastt::eye(v.size(-1), v.dtype(), v.device()));
}

// X with its diagonal replaced by d (zeros when undefined).
Tensor with_diagonal(const Tensor& X, const Tensor& d) {
  Tensor r = fastt::sub(X, fastt::diag_embed(X.diagonal(0, -2, -1)));
  return d.defined() ? fastt::add(r, fastt::diag_embed(d)) : r;
}

// d pinv(A) adjoint (Golub and Pereyra), valid at any rank:
// gA = -P^H gP P^H + (I - A P) gP^H P P^H + P^H P gP^H (I - P A).
Tensor pinv_backward(const Tensor& gP, const Tensor& P, const Tensor& A) {
  Tensor Pt = adjoint(P), gPt = adjoint(gP);
  Tensor t1 = fastt::matmul(fastt::matmul(Pt, gP), Pt);
  Tensor X = fastt::matmul(gPt, fastt::matmul(P, Pt));
  Tensor t2 = fastt::sub(X, fastt::matmul(A, fastt::matmul(P, X)));
  Tensor Y = fastt::matmul(fastt::matmul(Pt, P), gPt);
  Tensor t3 = fastt::sub(Y, fastt::matmul(fastt::matmul(Y, P), A));
  return fastt::sub(fastt::add(t2, t3), t1);
}

}  // namespace

// ---- recording the factorizations and decompositions ----
Tensor3 lu_factor_ex(const Tensor& A, FnRef<Tensor3()> compute) {
  Tensor3 r = no_grad(compute);
  NodeRef n = make_node(GradFn::LuFactor, {&A});
  n->save(0, std::get<0>(r), true);
  n->save(1, std::get<1>(r));
  set_history(std::get<0>(r), n.get());
  return r;
}

Tensor2 cholesky_ex(const Tensor& A, bool upper, FnRef<Tensor2()> compute) {
  Tensor2 r = no_grad(compute);
  NodeRef n = make_node(GradFn::Cholesky, {&A});
  n->save(0, std::get<0>(r), true);
  n->i0 = upper;
  set_history(std::get<0>(r), n.get());
  return r;
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper,
                        bool left, bool unit, Compute compute) {
  Tensor x = no_grad(compute);
  NodeRef n = make_node(GradFn::TriangularSolve, {&A, &B});
  n->save(0, A);
  n->save(1, x, true);
  n->set_shape0(A.sizes());
  n->set_shape1(B.sizes());
  n->i0 = (upper ? 1 : 0) | (left ? 2 : 0) | (unit ? 4 : 0);
  set_history(x, n.get());
  return x;
}

Tensor2 linalg_solve(const Tensor& A, const Tensor& B,
                     FnRef<Tensor2()> compute) {
  Tensor2 r = no_grad(compute);
  NodeRef n = make_node(GradFn::LinalgSolve, {&A, &B});
  n->save(0, A);
  n->save(1, std::get<0>(r), true);
  n->set_shape0(A.sizes());
  if (B.defined()) n->set_shape1(B.sizes());  // else the inverse
  set_history(std::get<0>(r), n.get());
  return r;
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper,
                      Compute compute) {
  Tensor X = no_grad(compute);
  NodeRef n = make_node(GradFn::CholeskySolve, {&B, &L});
  n->save(0, L);
  n->save(1, X, true);
  n->set_shape0(B.sizes());
  n->set_shape1(L.sizes());
  n->i0 = upper;
  set_history(X, n.get());
  return X;
}

Tensor cholesky_inverse(const Tensor& L, bool upper, Compute compute) {
  Tensor Ainv = no_grad(compute);
  NodeRef n = make_node(GradFn::CholeskyInverse, {&L});
  n->save(0, L);
  n->save(1, Ainv, true);
  n->i0 = upper;
  set_history(Ainv, n.get());
  return Ainv;
}

Tensor2 linalg_qr(const Tensor& A, int mode, FnRef<Tensor2()> compute) {
  Tensor2 r = no_grad(compute);
  NodeRef n = make_node(GradFn::LinalgQr, {&A});
  n->num_outputs = 2;
  n->save(0, std::get<0>(r), true, 0);
  n->save(1, std::get<1>(r), true, 1);
  n->i0 = mode;
  if (mode != 2) set_history(std::get<0>(r), n.get(), 0);
  set_history(std::get<1>(r), n.get(), 1);
  return r;
}

namespace {
// eigh and eig: values (and vectors) from compute; the vectors are saved
// either way (the formulas need them), an output only when returned.
Tensor2 record_eigen(GradFn fn, const Tensor& A, bool eigenvectors,
                     FnRef<Tensor2()> compute) {
  Tensor2 r = no_grad(compute);
  NodeRef n = make_node(fn, {&A});
  n->save(0, std::get<0>(r), true, 0);
  n->save(1, std::get<1>(r), eigenvectors, 1);
  set_history(std::get<0>(r), n.get(), 0);
  if (!eigenvectors) return {std::get<0>(r), Tensor()};
  set_history(std::get<1>(r), n.get(), 1);
  return r;
}
}  // namespace

Tensor2 linalg_eigh(const Tensor& A, bool eigenvectors,
                    FnRef<Tensor2()> compute) {
  return record_eigen(GradFn::LinalgEigh, A, eigenvectors, compute);
}

Tensor2 linalg_eig(const Tensor& A, bool eigenvectors,
                   FnRef<Tensor2()> compute) {
  return record_eigen(GradFn::LinalgEig, A, eigenvectors, compute);
}

Tensor3 linalg_svd(const Tensor& A, bool full_matrices, bool compute_uv,
                   FnRef<Tensor3()> compute) {
  Tensor3 r = no_grad(compute);
  NodeRef n = make_node(GradFn::LinalgSvd, {&A});
  n->i0 = full_matrices;
  n->i1 = compute_uv;
  // Outputs U, S, Vh (0, 1, 2); svdvals' only output is S (0).
  n->save(0, std::get<0>(r), compute_uv, 0);
  n->save(1, std::get<1>(r), true, compute_uv ? 1 : 0);
  n->save(2, std::get<2>(r), compute_uv, 2);
  if (!compute_uv) {
    set_history(std::get<1>(r), n.get(), 0);
    return {Tensor(), std::get<1>(r), Tensor()};
  }
  n->num_outputs = 3;
  set_history(std::get<0>(r), n.get(), 0);
  set_history(std::get<1>(r), n.get(), 1);
  set_history(std::get<2>(r), n.get(), 2);
  return r;
}

Tensor linalg_pinv(const Tensor& A, Compute compute) {
  Tensor P = no_grad(compute);
  NodeRef n = make_node(GradFn::LinalgPinv, {&A});
  n->save(0, A);
  n->save(1, P, true);
  set_history(P, n.get());
  return P;
}

Tensor4 linalg_lstsq(const Tensor& A, const Tensor& B,
                     FnRef<Tensor4()> compute) {
  Tensor4 r = no_grad(compute);
  NodeRef n = make_node(GradFn::LinalgLstsq, {&A, &B});
  n->save(0, A);
  n->save(1, B);
  n->set_shape0(A.sizes());
  n->set_shape1(B.sizes());
  Tensor& X = std::get<0>(r);
  set_history(X, n.get());
  // The residuals ||A X - B||^2 per column, recorded through X; when not
  // computed (empty) an output of the node with no gradient, as torch's.
  Tensor& res = std::get<1>(r);
  if (res.numel() > 0) {
    Tensor e = fastt::sub(fastt::matmul(A, X), B);
    e = is_complex(e.dtype()) ? fastt::abs(e) : e;  // |e|^2, real
    res = fastt::sum(fastt::square(e), {-2});
  }
  else
    set_history(res, n.get(), 1);
  return r;
}

Tensor fft(GradFn fn, const Tensor& x, IntList dims, int64_t normalization,
           int64_t i1, Compute compute) {
  Tensor y = no_grad(compute);
  NodeRef n = make_node(fn, {&x});
  n->set_shape1(dims);
  n->i0 = normalization;
  n->i1 = i1;
  n->i2 = x.size(dims[dims.size() - 1]);  // the last transformed size
  set_history(y, n.get());
  return y;
}

// ---- linear algebra ----
FASTT_FORMULA(Matmul) {
  const Tensor& g = go[0];
  Tensor a = n.unpack(0), b = n.unpack(1);
  // (matmul takes one dtype, so no operand is real in a complex product)
  matmul_backward(g, a, b, n.needs(0), n.needs(1), gi[0], gi[1]);
}
FASTT_FORMULA(Addmm) {
  const Tensor& g = go[0];
  Tensor m1 = n.unpack(0), m2 = n.unpack(1);
  if (n.needs(0))
    gi[0] = fit(n.f0 == 1 ? g : fastt::mul(g, Scalar(n.f0)), n.shape0(),
                n.dtypes[0]);
  // (alpha and beta are real here: addmm composes imaginary ones)
  Tensor ga = n.f1 == 1 ? g : fastt::mul(g, Scalar(n.f1));
  if (n.needs(1)) gi[1] = fastt::matmul(ga, adjoint(m2));
  if (n.needs(2)) gi[2] = fastt::matmul(adjoint(m1), ga);
}
FASTT_FORMULA(Linear) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0), w = n.unpack(1);
  const int64_t N = w.sizes()[0];
  if (n.needs(0)) gi[0] = fastt::matmul(g, conj_physical(w));
  Tensor g2 = g.dim() == 2 ? g : g.reshape({-1, N});
  if (n.needs(1)) {
    Tensor x2 = x.dim() == 2 ? x : x.reshape({-1, x.sizes()[size_t(x.dim() - 1)]});
    gi[1] = fastt::mm(g2.t(), conj_physical(x2));
  }
  if (n.needs(2)) gi[2] = sum_to(g2, n.shape0());
}


// ---- discrete Fourier transforms: each formula applies the adjoint of
// the transform (torch's fft_r2c_backward / fft_c2r_backward), with the
// same normalization; dims in a1, normalization in i0 ----
namespace {
// x along `dim` trimmed or zero-padded to n.
Tensor fit_length(const Tensor& x, int64_t dim, int64_t n) {
  const int64_t have = x.size(dim);
  if (have == n) return x;
  if (have > n) return x.narrow(dim, 0, n);
  std::vector<int64_t> shape = x.sizes().vec();
  shape[size_t(dim)] = n - have;
  return fastt::cat({x, fastt::zeros(shape, x.dtype(), x.device())}, dim);
}
}  // namespace

FASTT_FORMULA(FftC2c) {  // the inverse direction, unnormalized alike
  gi[0] = fastt::fft_c2c(go[0], n.shape1(), n.i0, n.i1 == 0);
}
FASTT_FORMULA(FftR2c) {
  // A onesided r2c is a c2c that drops the upper half: that half's
  // gradient is zero; the input was real, so its gradient is the real part.
  const int64_t last = n.a1[n.nd1 - 1];
  Tensor g = n.i1 ? fit_length(go[0], last, n.i2) : go[0];
  gi[0] = real_part(fastt::fft_c2c(g, n.shape1(), n.i0, false));
}
FASTT_FORMULA(FftC2r) {
  // c2r reads each of the bins 1 .. L - (L/2 + 1) for itself and its
  // mirror image: their gradients count twice. Bins past L/2 + 1 of the
  // input were ignored (zero gradient).
  const Tensor& g = go[0];
  const int64_t last = n.a1[n.nd1 - 1];
  Tensor r = fastt::fft_r2c(g, n.shape1(), n.i0, true);
  const int64_t m = r.size(last), twice = n.i1 - m;
  if (twice > 0) {
    Tensor w = fastt::ones({m}, to_real(r.dtype()), r.device());
    w.narrow(0, 1, twice).fill_(Scalar(2));
    std::vector<int64_t> shape(size_t(r.dim()), 1);
    shape[size_t(last)] = m;
    r = fastt::mul(r, w.reshape(shape));
  }
  gi[0] = fit_length(r, last, n.i2);
}

// ---- dense factorizations (the matrix calculus of torch's
// FunctionsManual: Murray, "Differentiation of the Cholesky decomposition";
// the LU case of Walter et al. extended to wide and tall matrices), with
// the conjugate transpose for complex matrices (^T below reads ^H) ----
FASTT_FORMULA(TriangularSolve) {
  // left: A X = B, so gB = A^-T g and gA = -gB X^T; right: X A = B, so
  // gB = g A^-T and gA = -X^T gB; gA keeps A's triangle (without the
  // diagonal when it is taken as ones).
  const Tensor& g = go[0];
  Tensor A = n.unpack(0), X = n.unpack(1);
  const bool upper = n.i0 & 1, left = n.i0 & 2, unit = n.i0 & 4;
  Tensor gB = fastt::solve_triangular(adjoint(A), g, !upper, left, unit);
  if (n.needs(0)) {
    Tensor gA = fastt::neg(left ? fastt::matmul(gB, adjoint(X))
                                : fastt::matmul(adjoint(X), gB));
    gA = upper ? fastt::triu(gA, unit ? 1 : 0) : fastt::tril(gA, unit ? -1 : 0);
    gi[0] = sum_to(gA, n.shape0());
  }
  if (n.needs(1)) gi[1] = sum_to(gB, n.shape1());
}

FASTT_FORMULA(Cholesky) {
  // A = L L^T: gA = L^-T Phi(L^T gL) L^-1, Phi taking the lower triangle
  // with the diagonal halved, symmetrised.
  Tensor R = n.unpack(0);
  const bool upper = n.i0 != 0;
  Tensor L = upper ? adjoint(R) : R;
  Tensor gL = upper ? adjoint(go[0]) : go[0];
  Tensor gA = fastt::tril(fastt::matmul(adjoint(L), gL));
  gA = fastt::mul(fastt::add(gA, adjoint(fastt::tril(gA, -1))), Scalar(0.5));
  gA = fastt::solve_triangular(adjoint(L), gA, /*upper=*/true, /*left=*/true);
  gi[0] = fastt::solve_triangular(L, gA, /*upper=*/false, /*left=*/false);
}

FASTT_FORMULA(LuFactor) {
  // A = P L U with L [m, k] unit lower, U [k, n] upper, k = min(m, n);
  // the packed gradient splits into L's part (strictly below the
  // diagonal) and U's (on and above it).
  const Tensor& g = go[0];
  Tensor LU = n.unpack(0), piv = n.unpack(1);
  auto [P, L, U] = fastt::lu_unpack(LU, piv);
  const int64_t m = LU.size(-2), nn = LU.size(-1), k = std::min(m, nn);
  Tensor gL = g.narrow(-1, 0, k), gU = g.narrow(-2, 0, k);
  Tensor gA;
  if (m == nn) {
    gA = fastt::add(fastt::tril(fastt::matmul(adjoint(L), gL), -1),
                    fastt::triu(fastt::matmul(gU, adjoint(U))));
    gA = fastt::solve_triangular(adjoint(U), gA, false, /*left=*/false);
    gA = fastt::solve_triangular(adjoint(L), gA, true, true, /*unit=*/true);
  } else if (m < nn) {
    Tensor U1 = U.narrow(-1, 0, k);
    gA = fastt::sub(fastt::matmul(adjoint(L), gL),
                    fastt::matmul(fastt::triu(gU), adjoint(U)));
    gA = fastt::solve_triangular(adjoint(U1), fastt::tril(gA, -1), false,
                                 false);
    gA = fastt::cat({fastt::add(gA, fastt::triu(gU.narrow(-1, 0, k))),
                     gU.narrow(-1, k, nn - k)},
                    -1);
    gA = fastt::solve_triangular(adjoint(L), gA, true, true, /*unit=*/true);
  } else {
    Tensor L1 = L.narrow(-2, 0, k);
    gA = fastt::sub(fastt::matmul(gU, adjoint(U)),
                    fastt::matmul(adjoint(L), fastt::tril(gL, -1)));
    gA = fastt::solve_triangular(adjoint(L1), fastt::triu(gA), true, true,
                                 true);
    gA = fastt::cat({fastt::add(gA, fastt::tril(gL.narrow(-2, 0, k), -1)),
                     gL.narrow(-2, k, m - k)},
                    -2);
    gA = fastt::solve_triangular(adjoint(U), gA, false, /*left=*/false);
  }
  gi[0] = fastt::matmul(P, gA);
}

// A = L L^T as a function of all of L (torch's convention: the factor's
// other triangle gets a gradient too): with M = A^-1 G A^-1,
// gL = -(M + M^T) L (upper: -U (M + M^T)).
namespace {
Tensor grad_through_factor(const Tensor& M, const Tensor& L, bool upper) {
  Tensor S = fastt::add(M, adjoint(M));
  return fastt::neg(upper ? fastt::matmul(L, S) : fastt::matmul(S, L));
}
}  // namespace

FASTT_FORMULA(LinalgSolve) {
  // X = A^-1 B: gB = A^-T gX, gA = -gB X^T.
  Tensor A = n.unpack(0), X = n.unpack(1);
  Tensor gB = std::get<0>(fastt::linalg_solve_ex(adjoint(A), go[0]));
  if (n.needs(0))
    gi[0] = sum_to(fastt::neg(fastt::matmul(gB, adjoint(X))), n.shape0());
  if (n.needs(1)) gi[1] = sum_to(gB, n.shape1());
}

FASTT_FORMULA(CholeskySolve) {
  Tensor L = n.unpack(0), X = n.unpack(1);
  const bool upper = n.i0 != 0;
  Tensor gB = fastt::cholesky_solve(go[0], L, upper);
  if (n.needs(0)) gi[0] = sum_to(gB, n.shape0());
  if (n.needs(1))
    gi[1] = sum_to(
        grad_through_factor(fastt::matmul(gB, adjoint(X)), L, upper),
        n.shape1());
}

FASTT_FORMULA(CholeskyInverse) {
  Tensor L = n.unpack(0), Ainv = n.unpack(1);
  Tensor M = fastt::matmul(fastt::matmul(Ainv, go[0]), Ainv);
  gi[0] = grad_through_factor(M, L, n.i0 != 0);
}

FASTT_FORMULA(LinalgQr) {
  FASTT_CHECK(n.i0 != 2, RuntimeError,
              "The derivative of linalg.qr depends on Q, which is not "
              "computed when mode='r'. Please use linalg.qr(A, "
              "mode='reduced') if you are going to differentiate through "
              "linalg.qr.");
  Tensor Q = n.unpack(0), R = n.unpack(1);
  const int64_t m = Q.size(-2), nn = R.size(-1);
  FASTT_CHECK(n.i0 == 0 || m <= nn, RuntimeError,
              "The QR decomposition is not differentiable when "
              "mode='complete' and nrows > ncols.");
  Tensor gQ = or_zeros(go[0], Q), gR = or_zeros(go[1], R);
  if (m >= nn) {
    gi[0] = qr_backward_tall(gQ, gR, Q, R);
    return;
  }
  // A = [X | Y] with X = Q U square and Y = Q V: Y's gradient is Q gV and
  // X's is the square case with gQ + Y gV^H.
  Tensor U = R.narrow(-1, 0, m), V = R.narrow(-1, m, nn - m);
  Tensor gU = gR.narrow(-1, 0, m), gV = gR.narrow(-1, m, nn - m);
  Tensor Y = fastt::matmul(Q, V);
  Tensor gX = qr_backward_tall(fastt::add(gQ, fastt::matmul(Y, adjoint(gV))),
                               gU, Q, U);
  gi[0] = fastt::cat({gX, fastt::matmul(Q, gV)}, -1);
}

FASTT_FORMULA(LinalgEigh) {
  // gA = V (skew(V^H gV) / E + diag(gL)) V^H, E_ij = L_j - L_i (torch's
  // formula: the skew-Hermitian part only, so gA does not depend on the
  // gauge; complex V: the loss must not depend on the vectors' phase).
  Tensor L = n.unpack(0), V = n.unpack(1);
  const Tensor& gL = go[0];
  Tensor gV = n.num_outputs > 1 ? go[1] : Tensor();
  Tensor X;
  if (gV.defined()) {
    Tensor VhgV = fastt::matmul(adjoint(V), gV);
    if (is_complex(V.dtype())) {
      Tensor im = imag_part(VhgV.diagonal(0, -2, -1));
      check_phase(im, fastt::zeros_like(im), "linalg_eigh_backward",
                  "eigenvectors", "quantity");
    }
    Tensor skew = fastt::mul(fastt::sub(VhgV, adjoint(VhgV)), Scalar(0.5));
    X = with_diagonal(fastt::div(skew, gaps(L)), gL);
  } else {  // (gL is real: V's dtype for the matmuls)
    X = fastt::diag_embed(or_zeros(gL, L)).to(V.dtype());
  }
  gi[0] = fastt::matmul(fastt::matmul(V, X), adjoint(V));
}

FASTT_FORMULA(LinalgEig) {
  // torch's linalg_eig_backward: gA = V^-H (diag(gL) + (V^H gV -
  // V^H V diag(Re(diag(V^H gV)))) / conj(E)) V^H, E_ij = L_j - L_i (the
  // vectors are unit columns); its real part for a real A.
  Tensor L = n.unpack(0), V = n.unpack(1);
  const Tensor& gL = go[0];
  Tensor gV = n.num_outputs > 1 ? go[1] : Tensor();
  Tensor Vh = adjoint(V);
  Tensor X;
  if (gV.defined()) {
    Tensor VhgV = fastt::matmul(Vh, gV);
    Tensor d = VhgV.diagonal(0, -2, -1);
    Tensor im = imag_part(d);
    check_phase(im, fastt::zeros_like(im), "linalg_eig_backward",
                "eigenvectors", "quantity");
    VhgV = fastt::sub(
        VhgV, fastt::matmul(Vh, fastt::mul(V, real_part(d).unsqueeze(-2))));
    X = fastt::div(VhgV, gaps(conj_physical(L)));
    if (gL.defined()) X = with_diagonal(X, gL);
  } else {
    X = fastt::diag_embed(or_zeros(gL, L));
  }
  Tensor gA = std::get<0>(
      fastt::linalg_solve_ex(Vh, fastt::matmul(X, Vh)));
  gi[0] = is_complex(n.dtypes[0]) ? gA : real_part(gA).contiguous();
}

FASTT_FORMULA(LinalgSvd) {
  // torch's svd_backward on the reduced factors (full_matrices narrows U
  // and Vh to k = min(m, n) columns / rows, as torch does).
  const bool uv = n.i1 != 0;
  Tensor U = n.unpack(0), S = n.unpack(1), Vh = n.unpack(2);
  Tensor gU = uv ? go[0] : Tensor();
  Tensor gS = uv ? go[1] : go[0];
  Tensor gVh = uv ? go[2] : Tensor();
  const int64_t m = U.size(-2), nn = Vh.size(-1), k = S.size(-1);
  if (n.i0) {
    U = U.narrow(-1, 0, k);
    Vh = Vh.narrow(-2, 0, k);
    if (gU.defined()) gU = gU.narrow(-1, 0, k);
    if (gVh.defined()) gVh = gVh.narrow(-2, 0, k);
  }
  if (!gU.defined() && !gVh.defined()) {
    gi[0] = fastt::matmul(fastt::mul(U, or_zeros(gS, S).unsqueeze(-2)), Vh);
    return;
  }
  const bool cx = is_complex(U.dtype());
  auto skew = [](const Tensor& X) { return fastt::sub(X, adjoint(X)); };
  Tensor UhgU = gU.defined() ? fastt::matmul(adjoint(U), gU) : Tensor();
  Tensor VhgV = gVh.defined() ? fastt::matmul(Vh, adjoint(gVh)) : Tensor();
  if (cx) {  // the phase of (u_i, v_i) is free: Im diag must cancel
    // (torch compares the skewed diagonals: 2 Im, the same tolerance)
    auto im = [&](const Tensor& t) {
      return t.defined()
                 ? fastt::mul(imag_part(t.diagonal(0, -2, -1)), Scalar(2))
                 : fastt::zeros_like(S);
    };
    check_phase(im(UhgU), fastt::neg(im(VhgV)), "svd_backward",
                "singular vectors", "phase term");
  }
  Tensor E = gaps(fastt::square(S));
  Tensor X;
  if (gU.defined()) X = fastt::mul(skew(UhgU), S.unsqueeze(-2));
  if (gVh.defined()) {
    Tensor t = fastt::mul(S.unsqueeze(-1), skew(VhgV));
    X = X.defined() ? fastt::add(X, t) : t;
  }
  X = fastt::div(X, E);
  // The diagonal: gS, and for complex U the phase term i Im(u_i^H gu_i)
  // / s_i (the phase carried by U, V's fixed).
  Tensor diag = gS;
  if (cx) {
    X = with_diagonal(X, Tensor());
    if (gU.defined()) {
      Tensor ph = fastt::div(UhgU.diagonal(0, -2, -1), S);
      ph = fastt::sub(ph, real_part(ph));  // i Im(...) / s
      diag = diag.defined() ? fastt::add(ph, diag) : ph;
    }
  }
  if (diag.defined()) X = fastt::add(X, fastt::diag_embed(diag));
  if (m > k && gU.defined()) {
    Tensor gUS = fastt::div(gU, S.unsqueeze(-2));
    Tensor t =
        fastt::sub(gUS, fastt::matmul(U, fastt::matmul(adjoint(U), gUS)));
    gi[0] = fastt::matmul(fastt::add(fastt::matmul(U, X), t), Vh);
  } else if (nn > k && gVh.defined()) {
    Tensor gVS = fastt::div(gVh, S.unsqueeze(-1));
    Tensor t =
        fastt::sub(gVS, fastt::matmul(fastt::matmul(gVS, adjoint(Vh)), Vh));
    gi[0] = fastt::matmul(U, fastt::add(fastt::matmul(X, Vh), t));
  } else {
    gi[0] = fastt::matmul(fastt::matmul(U, X), Vh);
  }
}

FASTT_FORMULA(LinalgPinv) {
  gi[0] = pinv_backward(go[0], n.unpack(1), n.unpack(0));
}

FASTT_FORMULA(LinalgLstsq) {
  // X = pinv(A) B (torch's gradient, also for rank-deficient A).
  Tensor A = n.unpack(0), B = n.unpack(1);
  const Tensor& gX = go[0];
  Tensor P = fastt::linalg_pinv(A);
  if (n.needs(0))
    gi[0] = sum_to(pinv_backward(fastt::matmul(gX, adjoint(B)), P, A),
                   n.shape0());
  if (n.needs(1)) gi[1] = sum_to(fastt::matmul(adjoint(P), gX), n.shape1());
}

}  // namespace autograd
}  // namespace fastt

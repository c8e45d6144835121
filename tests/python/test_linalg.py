"""fastt.linalg beyond the OpInfo samples (tests/python/test_opinfo.py runs
those): the defining properties of each factorization (A = P L U, Q
orthonormal, A V = V diag(L), reconstruction from the SVD, A A+ A = A),
ill-conditioned and rank-deficient inputs, empty batches, LinAlgError and
the _ex forms' info, finite-difference gradients in float64, the legacy
torch.* names, and NumPy / torch as references."""
import math

import numpy as np
import pytest

import fastt
from fastt import linalg as LA

torch = pytest.importorskip("torch")


def f64(a):
    return fastt.tensor(np.asarray(a, dtype=np.float64))


def npy(t):
    return np.asarray(t.detach())


def rand(*shape, seed=0, dtype=np.float64):
    return fastt.tensor(np.random.default_rng(seed).standard_normal(shape)
                        .astype(dtype))


def spd(n, batch=(), seed=0):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    return f64(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(npy(a) if isinstance(a, fastt.Tensor) else a,
                               npy(b) if isinstance(b, fastt.Tensor) else b,
                               rtol=tol, atol=tol)


BATCHES = [(), (3,), (2, 1)]


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("m,n", [(4, 4), (5, 3), (3, 5), (1, 1)])
def test_lu_reconstructs(batch, m, n):
    A = rand(*batch, m, n, seed=m * 7 + n)
    P, L, U = LA.lu(A)
    close(P @ L @ U, A)
    k = min(m, n)
    assert tuple(L.shape) == batch + (m, k) and tuple(U.shape) == batch + (k, n)
    close(fastt.tril(L, -1) + fastt.eye(m, k, dtype=fastt.float64), L)
    close(fastt.triu(U), U)


@pytest.mark.parametrize("batch", BATCHES)
def test_solve_inv_det_against_numpy(batch):
    A = rand(*batch, 5, 5, seed=1)
    B = rand(*batch, 5, 2, seed=2)
    a, b = npy(A), npy(B)
    close(LA.solve(A, B), np.linalg.solve(a, b))
    close(LA.inv(A) @ A, np.broadcast_to(np.eye(5), batch + (5, 5)))
    close(LA.det(A), np.linalg.det(a))
    sign, logabs = LA.slogdet(A)
    ns, nl = np.linalg.slogdet(a)
    close(sign, ns)
    close(logabs, nl)
    # X A = B (left=False) and a vector right-hand side
    C = rand(*batch, 2, 5, seed=3)
    close(LA.solve(A, C, left=False) @ A, C)
    v = rand(5, seed=4)
    close(A @ LA.solve(A, v).unsqueeze(-1), v.unsqueeze(-1).expand(
        batch + (5, 1)))


def test_singular_raises_and_ex_reports():
    A = f64([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 0\).*singular"):
        LA.inv(A)
    with pytest.raises(RuntimeError, match="singular"):
        LA.solve(A, A)
    inv, info = LA.inv_ex(A)
    assert npy(info).tolist() == [2, 0]
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(A, check_errors=True)
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):
        LA.lu_factor(A)
    assert npy(LA.lu_factor_ex(A).info).tolist() == [2, 0]
    assert issubclass(LA.LinAlgError, RuntimeError)
    # det / slogdet of a singular matrix: 0 and (0, -inf), no error
    assert npy(LA.det(A)).tolist()[0] == 0.0
    s, la = LA.slogdet(A[0])
    assert float(s) == 0.0 and float(la) == -math.inf


def test_cholesky_and_not_positive_definite():
    A = spd(4, (2,))
    L = LA.cholesky(A)
    close(L @ L.mT, A)
    U = LA.cholesky(A, upper=True)
    close(U.mT @ U, A)
    close(fastt.cholesky_solve(rand(2, 4, 3, seed=5), L),
          np.linalg.solve(npy(A), npy(rand(2, 4, 3, seed=5))))
    close(fastt.cholesky_inverse(L), np.linalg.inv(npy(A)))
    bad = f64([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(LA.LinAlgError,
                       match="leading minor of order 2 is not positive"):
        LA.cholesky(bad)
    assert int(LA.cholesky_ex(bad).info) == 2
    # only the lower triangle is read
    A2 = A.clone()
    A2[..., 0, 3] = 1e6
    close(LA.cholesky(A2), L)


@pytest.mark.parametrize("m,n", [(6, 4), (4, 6), (5, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_properties(m, n, mode):
    A = rand(2, m, n, seed=m + n)
    Q, R = LA.qr(A, mode)
    k = min(m, n)
    if mode == "r":
        assert Q.numel() == 0 and tuple(R.shape) == (2, k, n)
        return
    c = m if mode == "complete" else k
    assert tuple(Q.shape) == (2, m, c)
    close(Q.mT @ Q, np.broadcast_to(np.eye(c), (2, c, c)))
    close(Q @ R, A)
    close(fastt.triu(R), R)


def test_eigh_and_svd_properties_on_ill_conditioned_input():
    # singular values spread over 12 orders of magnitude
    rng = np.random.default_rng(7)
    q1, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    q2, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    s = np.logspace(0, -12, 6)
    A = f64(q1 @ np.diag(s) @ q2.T)
    U, S, Vh = LA.svd(A)
    close(S, s, tol=1e-12)
    close(U @ fastt.diag_embed(S) @ Vh, A, tol=1e-12)
    close(LA.svdvals(A), s, tol=1e-12)
    H = A + A.mT
    L, V = LA.eigh(H)
    close(H @ V, V * L.unsqueeze(-2), tol=1e-12)
    close(LA.eigvalsh(H), np.linalg.eigvalsh(npy(H)), tol=1e-12)
    close(LA.eigvalsh(H, UPLO="U"), np.linalg.eigvalsh(npy(H), "U"),
          tol=1e-12)
    assert float(LA.cond(A)) == pytest.approx(1e12, rel=1e-3)
    assert int(LA.matrix_rank(A)) == 6
    assert int(LA.matrix_rank(A, atol=1e-6)) == 3  # 1, 4e-3, 1.6e-5


@pytest.mark.parametrize("m,n,r", [(6, 4, 2), (4, 6, 2), (5, 5, 5)])
def test_pinv_and_lstsq_rank_deficient(m, n, r):
    rng = np.random.default_rng(m * n)
    a = rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
    A = f64(a)
    P = LA.pinv(A)
    close(P, np.linalg.pinv(a), tol=1e-9)
    close(A @ P @ A, A, tol=1e-9)
    close(P @ A @ P, P, tol=1e-9)
    b = rng.standard_normal((m, 3))
    for driver in ("gelsy", "gelsd", "gelss"):
        sol = LA.lstsq(A, f64(b), driver=driver)
        close(sol.solution, np.linalg.lstsq(a, b, rcond=None)[0], tol=1e-8)
        assert int(sol.rank) == r
    assert int(LA.matrix_rank(A)) == r


def test_lstsq_residuals_and_vector_rhs():
    A, b = rand(7, 3, seed=1), rand(7, seed=2)
    r = LA.lstsq(A, b, driver="gelsd")
    x, res, *_ = np.linalg.lstsq(npy(A), npy(b), rcond=None)
    close(r.solution, x)
    close(r.residuals, res)
    assert LA.lstsq(A, b).residuals.numel() == 0  # gelsy computes none


def test_empty_batches_and_matrices():
    for shape in [(0, 3, 3), (2, 0, 0)]:
        A = fastt.zeros(shape, dtype=fastt.float64)
        assert tuple(LA.inv(A).shape) == shape
        assert tuple(LA.det(A).shape) == shape[:-2]
        assert tuple(LA.cholesky(A).shape) == shape
        assert tuple(LA.eigh(A).eigenvectors.shape) == shape
        assert tuple(LA.qr(A).R.shape) == shape
    U, S, Vh = LA.svd(fastt.zeros(3, 0, dtype=fastt.float64))
    close(U, np.eye(3))
    assert tuple(S.shape) == (0,) and tuple(Vh.shape) == (0, 0)
    assert float(LA.det(fastt.zeros(0, 0, dtype=fastt.float64))) == 1.0


def _fd_check(fn, *inputs):
    """fastt's float64 gradient against central differences."""
    assert fastt.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6,
                                    rtol=1e-4)


def _leaf(t):
    return t.detach().clone().requires_grad_()


def test_gradients_against_finite_differences():
    A = _leaf(rand(4, 4, seed=11))
    B = _leaf(rand(4, 2, seed=12))
    S = spd(4, seed=13)
    _fd_check(lambda a, b: LA.solve(a, b), A, B)
    _fd_check(lambda a: LA.inv(a), A)
    _fd_check(lambda a: LA.det(a), A)
    _fd_check(lambda a: LA.slogdet(a)[1], A)
    _fd_check(lambda a: LA.cholesky(a @ a.mT + 4 * fastt.eye(
        4, dtype=fastt.float64)), A)
    _fd_check(lambda a: LA.qr(a), _leaf(rand(5, 3, seed=14)))
    _fd_check(lambda a: LA.qr(a), _leaf(rand(3, 5, seed=15)))
    # gauge-invariant functions of the vectors
    _fd_check(lambda a: LA.eigh(a + a.mT)[0], _leaf(S))
    _fd_check(lambda a: (lambda lv: lv[1] @ lv[1].mT * lv[0].sum())(
        LA.eigh(a + a.mT)), _leaf(S))
    _fd_check(lambda a: (lambda usv: (usv[0] @ usv[2], usv[1]))(
        LA.svd(a, full_matrices=False)), _leaf(rand(5, 3, seed=16)))
    _fd_check(lambda a: LA.pinv(a), _leaf(rand(3, 5, seed=17)))
    _fd_check(lambda a, b: LA.lstsq(a, b, driver="gelsd").solution,
              _leaf(rand(6, 3, seed=18)), _leaf(rand(6, 2, seed=19)))
    _fd_check(lambda a: LA.matrix_exp(a), _leaf(rand(4, 4, seed=20) * 0.5))
    # torch's cholesky_solve gradient also covers the factor's unread
    # triangle (the derivative as a function of a full L): check it
    # through tril, which the forward matches
    _fd_check(lambda a, b: fastt.cholesky_solve(b, fastt.tril(a)), _leaf(
        LA.cholesky(S)), _leaf(rand(4, 2, seed=21)))


def test_gradients_match_torch():
    a = np.random.default_rng(3).standard_normal((3, 5, 4))
    for name, fn in [
            ("svdvals", lambda L, x: L.svdvals(x)),
            ("matrix_norm_nuc", lambda L, x: L.matrix_norm(x, "nuc")),
            ("pinv", lambda L, x: L.pinv(x)),
            ("householder", lambda L, x: L.householder_product(
                x, x[..., 0, :3].tanh())),
            ("lu", lambda L, x: L.lu(x)[2])]:
        fx = _leaf(f64(a))
        tx = torch.tensor(a, requires_grad=True)
        fo = fn(LA, fx)
        to = fn(torch.linalg, tx)
        close(fo, to.detach().numpy(), tol=1e-9)
        g = np.random.default_rng(4).standard_normal(tuple(fo.shape))
        fo.backward(f64(g))
        to.backward(torch.tensor(g))
        close(fx.grad, tx.grad.numpy(), tol=1e-8)


def test_legacy_names_and_methods():
    A = rand(4, 4, seed=30)
    a = torch.tensor(npy(A))
    close(fastt.det(A), torch.det(a).numpy())
    close(A.det(), torch.det(a).numpy())
    close(A.inverse(), torch.inverse(a).numpy())
    close(A.logdet(), torch.logdet(a).numpy())
    close(A.matrix_power(3), torch.matrix_power(a, 3).numpy())
    close(A.matrix_exp(), torch.matrix_exp(a).numpy())
    close(A.pinverse(), torch.pinverse(a).numpy())
    U, S, V = A.svd()
    close(U @ fastt.diag_embed(S) @ V.mT, A)
    Q, R = A.qr()
    close(Q @ R, A)
    LU, piv = A.lu()
    close(fastt.lu_solve(rand(4, 2, seed=31), LU, piv),
          np.linalg.solve(npy(A), npy(rand(4, 2, seed=31))))
    X, M = fastt.triangular_solve(rand(4, 2, seed=32), fastt.triu(A))
    close(fastt.triu(A) @ X, rand(4, 2, seed=32))
    close(M, fastt.triu(A))
    a_, tau = A.geqrf()
    close(a_.orgqr(tau) @ fastt.triu(a_), A)
    close(fastt.norm(A, "nuc"), np.linalg.norm(npy(A), "nuc"))
    assert not A.is_complex() and not fastt.is_complex(A)


def test_svd_lowrank_recovers_a_low_rank_matrix():
    rng = np.random.default_rng(40)
    a = rng.standard_normal((20, 3)) @ rng.standard_normal((3, 15))
    A = f64(a)
    for q in (3, 5):
        U, S, V = fastt.svd_lowrank(A, q=q)
        close(U @ fastt.diag_embed(S) @ V.mT, A, tol=1e-8)
        close(S[:3], np.linalg.svd(a, compute_uv=False)[:3], tol=1e-8)
    U, S, V = fastt.pca_lowrank(A, q=3)
    c = a - a.mean(0)
    close(S, np.linalg.svd(c, compute_uv=False)[:3], tol=1e-8)


def test_multi_dot_order_and_vectors():
    A, B, C = rand(10, 100, seed=1), rand(100, 5, seed=2), rand(5, 50, seed=3)
    close(LA.multi_dot([A, B, C]), npy(A) @ npy(B) @ npy(C))
    v, w = rand(10, seed=4), rand(50, seed=5)
    close(LA.multi_dot([v, A, B, C, w]),
          npy(v) @ npy(A) @ npy(B) @ npy(C) @ npy(w))


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match="linalg.inv: A must be batches "
                       "of square matrices"):
        LA.inv(rand(3, 4))
    with pytest.raises(RuntimeError, match="linalg.cholesky: Expected a "
                       "floating point"):
        LA.cholesky(fastt.ones(2, 2, dtype=fastt.int64))
    with pytest.raises(RuntimeError, match="qr received unrecognized mode"):
        LA.qr(rand(3, 3), mode="full")
    with pytest.raises(RuntimeError, match="driver"):
        LA.lstsq(rand(3, 3), rand(3, 1), driver="gesv")
    with pytest.raises(RuntimeError, match="UPLO"):
        LA.eigh(rand(3, 3), UPLO="X")
    with pytest.raises(RuntimeError, match="not differentiable when "
                       "mode='complete'"):
        Q, R = LA.qr(_leaf(rand(5, 3)), "complete")
        Q.sum().backward()


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 9, 16])
def test_small_matrix_path_matches_lapack(n):
    """n <= 8 is factorized inline (kernels/cpu/lapack.cpp), above by
    LAPACK: both give torch's pivots, factors, solutions and infos."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((50, n, n))
    a[3] = 0.0                     # singular at the first pivot
    a[5, :, -1] = a[5, :, 0]       # singular at the last pivot
    A = f64(a)
    ta = torch.tensor(a)
    LU, piv, info = LA.lu_factor_ex(A)
    tLU, tpiv, tinfo = torch.linalg.lu_factor_ex(ta)
    # matrix 5's last pivot is zero or tiny depending on rounding (the
    # BLAS): its info may be n or 0, and it has no stable values
    ok = np.ones(50, dtype=bool)
    ok[5] = False
    assert int(npy(info)[5]) in (0, n)
    assert npy(piv)[ok].tolist() == tpiv.numpy()[ok].tolist()
    assert npy(info)[ok].tolist() == tinfo.numpy()[ok].tolist()
    assert int(npy(info)[3]) == 1 and n > 0
    ok &= tinfo.numpy() == 0
    close(npy(LU)[ok], tLU.numpy()[ok], tol=1e-9)
    b = rng.standard_normal((50, n, 3))
    X, sinfo = LA.solve_ex(A, f64(b))
    assert npy(sinfo).tolist() == npy(info).tolist()
    close(npy(X)[ok], np.linalg.solve(a[ok], b[ok]), tol=1e-8)
    close(npy(LA.det(A))[ok], np.linalg.det(a)[ok], tol=1e-8)


@pytest.mark.parametrize("n", [1, 3, 4, 8, 9])
@pytest.mark.parametrize("upper", [False, True])
def test_small_cholesky_matches_lapack(n, upper):
    """n <= 8 factorized inline: torch's factor, and its info for a matrix
    that is not positive-definite at each order."""
    rng = np.random.default_rng(n + 10 * upper)
    a = rng.standard_normal((20, n, n))
    a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    for k in range(min(n, 3)):     # matrix k fails at order k + 1
        a[k, k, k] = -1.0
    L, info = LA.cholesky_ex(f64(a), upper=upper)
    tL, tinfo = torch.linalg.cholesky_ex(torch.tensor(a), upper=upper)
    assert npy(info).tolist() == tinfo.numpy().tolist()
    ok = tinfo.numpy() == 0
    close(npy(L)[ok], tL.numpy()[ok], tol=1e-10)


# ---- linalg.eig / eigvals (geev): general, non-symmetric matrices ----
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64,
                                   np.complex128])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_eig_properties(dtype, batch):
    """A V = V diag(L) with unit columns; a real A gets complex results,
    its complex eigenvalues in conjugate pairs; eigvals agrees."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal(batch + (5, 5))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(batch + (5, 5))
    A = fastt.tensor(a.astype(dtype))
    L, V = LA.eig(A)
    cdt = {np.float32: fastt.complex64, np.float64: fastt.complex128,
           np.complex64: fastt.complex64, np.complex128: fastt.complex128}
    assert L.dtype == V.dtype == cdt[dtype]
    assert tuple(L.shape) == batch + (5,) and tuple(V.shape) == batch + (5, 5)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    Ac = A.to(V.dtype)
    close(Ac @ V, V * L.unsqueeze(-2), tol)
    close(LA.vector_norm(V, dim=-2), np.ones(batch + (5,)), tol)
    close(LA.eigvals(A), L, tol)
    want = np.sort_complex(np.linalg.eigvals(a).reshape(-1, 5))
    got = np.sort_complex(npy(L).reshape(-1, 5))
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10)
    if np.dtype(dtype).kind == "f":  # conjugate pairs
        s = np.sort_complex(npy(L).reshape(-1, 5))
        np.testing.assert_allclose(np.sort_complex(s.conj()), s, atol=tol)


def test_eig_edge_cases_and_errors():
    L, V = LA.eig(fastt.zeros(2, 0, 0))
    assert tuple(L.shape) == (2, 0) and tuple(V.shape) == (2, 0, 0)
    assert L.dtype == fastt.complex64
    L, V = LA.eig(f64([[0.0, -1.0], [1.0, 0.0]]))  # a rotation: +-i
    np.testing.assert_allclose(np.sort_complex(npy(L)), [-1j, 1j],
                               atol=1e-15)
    out = (fastt.empty(0, dtype=fastt.complex128),
           fastt.empty(0, dtype=fastt.complex128))
    r = LA.eig(f64(np.diag([3.0, 1.0])), out=out)
    assert r.eigenvalues is out[0] or r[0] is out[0]
    np.testing.assert_allclose(np.sort(npy(out[0]).real), [1.0, 3.0])
    with pytest.raises(RuntimeError, match="should not contain infs or NaN"):
        LA.eig(f64([[1.0, math.nan], [0.0, 1.0]]))
    with pytest.raises(RuntimeError, match="must be batches of square"):
        LA.eig(fastt.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point or "
                                           "complex tensor as input. Got "
                                           "Long"):
        LA.eigvals(fastt.zeros(2, 2, dtype=fastt.int64))


def test_out_refuses_a_dtype_the_result_cannot_be_cast_to():
    rot = f64([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(RuntimeError, match="safely castable from "
                                           "ComplexDouble"):
        LA.eigvals(rot, out=fastt.empty(0, dtype=fastt.float64))
    out = fastt.empty(0, dtype=fastt.complex128)
    LA.eigvals(rot, out=out)
    np.testing.assert_allclose(np.sort_complex(npy(out)), [-1j, 1j],
                               atol=1e-15)


def test_eig_gradients_match_torch():
    """Losses of the eigenvalues and of |V| (which do not see the vectors'
    free phase) against torch, for a real and a complex A."""
    rng = np.random.default_rng(8)
    for a in (rng.standard_normal((4, 4)),
              rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))):
        grads = []
        for m in (fastt, torch):
            A = m.tensor(a).requires_grad_()
            L, V = m.linalg.eig(A)
            # |V|^2 weighted unevenly: the vectors' part of the formula
            # (a weight per column alone sums to a constant: unit columns)
            W = m.arange(1.0, 17.0, dtype=m.float64).reshape(4, 4) ** 2
            loss = (L * L).sum().real + (V.abs() ** 2 * W).sum()
            loss.backward()
            grads.append(np.asarray(A.grad.detach().tolist()))
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)

"""torch's top-level linear algebra names (torch.det, torch.inverse,
torch.qr, torch.svd, torch.lu, torch.cholesky_solve, ...) and their Tensor
methods, over fastt.linalg: each keeps torch's argument order, defaults
and result types (torch.svd returns V, not Vh; torch.qr takes some=)."""
import builtins

import fastt

from . import _C
from . import linalg as L

_result = L._result
_SLOGDET = _result("slogdet", ["sign", "logabsdet"])
_QR = _result("qr", ["Q", "R"])
_SVD = _result("svd", ["U", "S", "V"])
_GEQRF = _result("geqrf", ["a", "tau"])
_LU_UNPACK = _result("lu_unpack", ["P", "L", "U"])
_TRIANGULAR = _result("triangular_solve", ["solution", "cloned_coefficient"])


__all__ = []


def _export(fn, name=None, method=True):
    name = name or fn.__name__
    __all__.append(name)
    setattr(fastt, name, fn)
    if method:
        _C._add_tensor_method(name, fn)
    return fn


def det(input):
    return L.det(input)


def logdet(input):
    """log(det): nan for a negative determinant, -inf for a singular A;
    complex A: log(sign) + log|det| (the principal branch)."""
    sign, labs = L.slogdet(input)
    if sign.dtype.is_complex:
        return sign.log() + labs
    return fastt.where(sign < 0, float("nan"), labs)


def slogdet(input):
    return _SLOGDET(*L.slogdet(input))


def inverse(input, *, out=None):
    return L.inv(input, out=out)


def matrix_power(input, n):
    return L.matrix_power(input, n)


def matrix_exp(input):
    return L.matrix_exp(input)


def pinverse(input, rcond=1e-15):
    return L.pinv(input, rtol=rcond)


def cholesky(input, upper=False, *, out=None):
    L._check_square("cholesky", input)
    R, info = _C._linalg_cholesky_ex(input, upper)
    _C._linalg_check_errors(info, "cholesky", "cholesky")
    return L._out(R, out)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = input, A = input2 input2^T (input2^T input2 when
    upper)."""
    return L._out(_C._cholesky_solve(input, input2, upper), out)


def cholesky_inverse(input, upper=False, *, out=None):
    """A^-1 for A = input input^T (input^T input when upper)."""
    return L._out(_C._cholesky_inverse(input, upper), out)


def lu(A, pivot=True, get_infos=False, out=None):
    """(LU, pivots) or (LU, pivots, infos): torch.lu, raising only when
    get_infos is False and a U[i, i] is zero."""
    LU, piv, info = _C._linalg_lu_factor_ex(A, pivot)
    if not get_infos:
        _C._linalg_check_errors(info, "torch.linalg.lu_factor", "lu_factor")
        return L._out((LU, piv), out)
    return L._out((LU, piv, info), out)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    return L.lu_solve(LU_data, LU_pivots, b, out=out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *,
              out=None):
    return L._out(_LU_UNPACK(*_C._lu_unpack(LU_data, LU_pivots, unpack_data,
                                            unpack_pivots)), out)


def qr(input, some=True, *, out=None):
    return L._out(_QR(*_C._linalg_qr(input,
                                     "reduced" if some else "complete")),
                  out)


def svd(input, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with A = U diag(S) V^H; V, not Vh. Without compute_uv U
    and V are zeros [m, m] and [n, n]."""
    L._check_matrix("svd", input, "input")
    if not compute_uv:
        S = L.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        z = lambda k: fastt.zeros(batch + (k, k), dtype=input.dtype,
                                  device=input.device)
        return L._out(_SVD(z(m), S, z(n)), out)
    U, S, Vh = _C._linalg_svd(input, not some, True)
    return L._out(_SVD(U, S, Vh.mH), out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False,
                     *, out=None):
    """(X with op(A) X = b, a copy of A); op(A) = A^T when transpose."""
    op = "triangular_solve"
    if b.dim() < 2 or A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at "
                           f"least 2 dimensions, but it has {b.dim()} "
                           "dimensions instead" if b.dim() < 2 else
                           "torch.triangular_solve: Expected A to have at "
                           f"least 2 dimensions, but it has {A.dim()} "
                           "dimensions instead")
    M = A.mT if transpose else A
    X = _C._linalg_solve_triangular(M, b, upper != transpose, True,
                                    unitriangular)
    del op
    return L._out(_TRIANGULAR(X, A.clone()), out)


def geqrf(input, *, out=None):
    return L._out(_GEQRF(*_C._geqrf(input)), out)


def orgqr(input, tau):
    return L.householder_product(input, tau)


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    return L._out(_C._ormqr(input, input2, input3, left, transpose), out)


def _approximate_basis(A, q, niter, M):
    """An orthonormal Q [.., m, q] whose span nearly holds A's range
    (Halko, Martinsson and Tropp 2009, algorithm 4.4: a Gaussian sketch
    and niter power iterations, re-orthonormalized each time)."""
    R = fastt.randn(A.shape[-1], q, dtype=A.dtype, device=A.device)

    def times(X):
        return A @ X if M is None else A @ X - M @ X

    def times_t(X):
        return A.mH @ X if M is None else A.mH @ X - M.mH @ X
    Q = L.qr(times(R)).Q
    for _ in range(niter):
        Q = L.qr(times_t(Q)).Q
        Q = L.qr(times(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate rank-q SVD (U, S, V) of A - M by random projection
    (Halko et al. 2009, algorithm 5.1)."""
    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n or n > q:
        # Sketch A^T: B^T = (A - M) Q stays small (q columns).
        Q = _approximate_basis(A.mH, q, niter,
                               None if M is None else M.mH)
        Bt = A @ Q if M is None else A @ Q - M @ Q
        U, S, Vh = L.svd(Bt, full_matrices=False)
        return U, S, Q @ Vh.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = L.svd(B, full_matrices=False)
    return Q @ U, S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal components of A's rows: svd_lowrank of A (centered over
    its rows when center)."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = builtins.min(6, m, n)
    elif not (q >= 0 and q <= builtins.min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not "
                         f"greater than min(m, n)={builtins.min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter=niter)


for _fn in (det, logdet, slogdet, inverse, matrix_power, matrix_exp,
            pinverse, cholesky, cholesky_solve, cholesky_inverse, lu_solve,
            qr, svd, triangular_solve, geqrf, orgqr, ormqr):
    _export(_fn)
def _lu_method(self, pivot=True, get_infos=False):
    return lu(self, pivot, get_infos)


def is_complex(input):
    """Whether input's dtype is complex64 or complex128."""
    return input.dtype.is_complex


_export(lu, method=False)
_C._add_tensor_method("lu", _lu_method)
for _fn in (lu_unpack, svd_lowrank, pca_lowrank, is_complex):
    _export(_fn, method=_fn is is_complex)

"""fastt.linalg: torch.linalg on fastt.

The factorizations and decompositions are C++ ops over LAPACK
(csrc/ops/lapack.h, bound as fastt._C._linalg_*), each recorded with
torch's gradient formula. Everything else here is composed of them and of
fastt's kernels, so its gradient is the composition's: solve, inv, det and
slogdet go through lu_factor; the norms, cond and matrix_rank through
svdvals / eigvalsh; lstsq and pinv carry torch's pseudo-inverse gradient,
valid at any rank. Complex tensors go through LAPACK's c/z routines. The
torch.* legacy names (det, inverse, cholesky, qr, svd, lu, ...) and their
Tensor methods are at the end (_legacy)."""
import builtins
import collections
import math

import fastt

from . import _C
from ._C import _LinAlgError
from ._C import _linalg_cross as cross  # noqa: F401

LinAlgError = _LinAlgError

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det",
    "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "householder_product",
    "inv", "inv_ex",
    "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


def _result(name, fields):
    t = collections.namedtuple(name, fields)
    t.__module__ = "fastt.return_types"
    return t


_QR = _result("linalg_qr", ["Q", "R"])
_EIGH = _result("linalg_eigh", ["eigenvalues", "eigenvectors"])
_EIG = _result("linalg_eig", ["eigenvalues", "eigenvectors"])
_SVD = _result("linalg_svd", ["U", "S", "Vh"])
_SLOGDET = _result("linalg_slogdet", ["sign", "logabsdet"])
_LSTSQ = _result("linalg_lstsq",
                 ["solution", "residuals", "rank", "singular_values"])
_LU = _result("linalg_lu", ["P", "L", "U"])
_LU_FACTOR = _result("linalg_lu_factor", ["LU", "pivots"])
_LU_FACTOR_EX = _result("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_CHOLESKY_EX = _result("linalg_cholesky_ex", ["L", "info"])
_INV_EX = _result("linalg_inv_ex", ["inverse", "info"])
_SOLVE_EX = _result("linalg_solve_ex", ["result", "info"])
_LDL = _result("linalg_ldl_factor", ["LD", "pivots"])
_LDL_EX = _result("linalg_ldl_factor_ex", ["LD", "pivots", "info"])

# torch's scalar type names, as its error messages spell them
_TYPE_NAME = {"bool": "Bool", "uint8": "Byte", "int8": "Char",
              "int16": "Short", "int32": "Int", "int64": "Long",
              "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
              "float64": "Double", "complex64": "ComplexFloat",
              "complex128": "ComplexDouble"}


def _type_name(dtype):
    return _TYPE_NAME[str(dtype).split(".")[-1]]


def _out(result, out):
    """Write result (a tensor or a tuple of them) into out= (torch's
    resizing copy); the result itself when out is None."""
    if out is None:
        return result
    if isinstance(result, fastt.Tensor):
        _copy_into(out, result)
        return out
    if len(out) != len(result):
        raise TypeError(f"out= must be a tuple of {len(result)} tensors")
    for o, r in zip(out, result):
        _copy_into(o, r)
    return type(result)(*out) if hasattr(result, "_fields") else tuple(out)


def _copy_into(o, r):
    if o.dtype != r.dtype and not fastt.can_cast(r.dtype, o.dtype):
        raise RuntimeError(f"Expected out tensor to be safely castable from "
                           f"{_type_name(r.dtype)} dtype to "
                           f"{_type_name(o.dtype)} dtype")
    if tuple(o.shape) != tuple(r.shape):
        o.resize_(tuple(r.shape))
    o.copy_(r)


def _check_float(op, A, name="A"):
    """A float32/float64 or complex tensor (torch's message otherwise)."""
    if not isinstance(A, fastt.Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dtype.is_complex:
        return
    if not A.dtype.is_floating_point or A.dtype in (fastt.float16,
                                                     fastt.bfloat16):
        raise RuntimeError(f"{op}: Expected a floating point or complex "
                           f"tensor as input. Got {_type_name(A.dtype)}")


def _check_matrix(op, A, name="A"):
    _check_float(op, A, name)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at "
                           "least 2 dimensions.")


def _check_square(op, A, name="A"):
    _check_matrix(op, A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square "
                           f"matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _check_same_dtype(op, A, B, an="A", bn="B"):
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected {an} and {bn} to have the same "
                           f"dtype, but found {an} of type "
                           f"{_type_name(A.dtype)} and {bn} of type "
                           f"{_type_name(B.dtype)} instead")


def _check_rhs(op, n, B, left):
    """B's rows (columns when not left) match A's n: torch's message."""
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
            f"{B.shape[-2]}x{B.shape[-1]})")


def _eye_like(A):
    """The identity batched like A; a function of A (zero gradient) when A
    requires grad, as torch's."""
    n = A.shape[-1]
    eye = fastt.eye(n, dtype=A.dtype, device=A.device)
    if A.requires_grad and _C.is_grad_enabled():
        return fastt.where(fastt.zeros((), dtype=fastt.bool), A, eye)
    return eye.expand(tuple(A.shape)).clone()


# ---- LU and what is built on it ----

def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LU with partial pivoting, A = P L U packed: (LU, pivots, info)."""
    _check_matrix("linalg.lu_factor_ex", A)
    LU, piv, info = _C._linalg_lu_factor_ex(A, pivot)
    if check_errors:
        _C._linalg_check_errors(info, "torch.linalg.lu_factor_ex",
                                "lu_factor")
    return _out(_LU_FACTOR_EX(LU, piv, info), out)


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots); raises when a U[i, i] is zero (lu_factor_ex does
    not)."""
    _check_matrix("linalg.lu_factor", A)
    LU, piv, info = _C._linalg_lu_factor_ex(A, pivot)
    _C._linalg_check_errors(info, "torch.linalg.lu_factor", "lu_factor")
    return _out(_LU_FACTOR(LU, piv), out)


def lu(A, *, pivot=True, out=None):
    """A = P L U: (P, L, U); L [.., m, k] unit lower, U [.., k, n]."""
    _check_matrix("linalg.lu", A)
    LU, piv, _ = _C._linalg_lu_factor_ex(A, pivot)
    return _out(_LU(*_C._lu_unpack(LU, piv)), out)


def _perm_apply(LU, pivots, B, transpose):
    """P^T B (or P B when transpose) for the permutation of pivots."""
    P = _C._lu_unpack(LU, pivots, False, True)[0]
    return fastt.matmul(P if transpose else P.mT, B)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (A^H X = B when adjoint; X A = B when not left),
    A = P L U as lu_factor returned it."""
    op = "linalg.lu_solve"
    _check_square(op, LU, "LU")
    if B.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 "
                           "dimensions.")
    _check_same_dtype(op, LU, B, "LU", "B")
    if pivots.dtype != fastt.int32:
        raise RuntimeError(f"{op}: Expected pivots to be integers. Got "
                           f"{_type_name(pivots.dtype)}")
    n = LU.shape[-1]
    _check_rhs(op, n, B, left)
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{op}: Expected LU.shape[:-1] and "
                           "pivots.shape to be the same, but got pivots "
                           f"with shape {tuple(pivots.shape)} instead")
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _out(lu_solve(LU, pivots, B.mH, left=True,
                             adjoint=not adjoint).mH, out)
    L = fastt.tril(LU, -1) + fastt.eye(n, dtype=LU.dtype, device=LU.device)
    U = fastt.triu(LU)
    st = _C._linalg_solve_triangular
    if not adjoint:  # X = U^-1 L^-1 P^T B
        X = _perm_apply(LU, pivots, B, False)
        X = st(L, X, False, True, True)
        X = st(U, X, True)
    else:            # A^H = U^H L^H P^T: X = P L^-H U^-H B
        X = st(U.mH, B, False)
        X = st(L.mH, X, True, True, True)
        X = _perm_apply(LU, pivots, X, True)
    return _out(X, out)


def _as_rhs(op, A, B, left):
    """B as a matrix right-hand side, and whether it was a vector (torch:
    B.ndim == 1, or B.shape == A.shape[:-1])."""
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and
                              tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        B = B.unsqueeze(-1) if left else B.unsqueeze(-2)
    return B, vector


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """X with A X = B (X A = B when not left): (result, info)."""
    op = "linalg.solve"
    _check_square(op, A)
    if not isinstance(B, fastt.Tensor):
        raise TypeError("linalg_solve(): argument 'B' must be Tensor, not "
                        f"{type(B).__name__}")
    _check_same_dtype(op, A, B)
    B2, vector = _as_rhs(op, A, B, left)
    _check_rhs(op, A.shape[-1], B2, left)
    if left:
        X, info = _C._linalg_solve_ex(A, B2)
    else:  # X A = B  <=>  A^T X^T = B^T
        X, info = _C._linalg_solve_ex(A.mT, B2.mT)
        X = X.mT
    if check_errors:
        _C._linalg_check_errors(info, "torch.linalg.solve_ex", "solve")
    if vector:
        X = X.squeeze(-1) if left else X.squeeze(-2)
    return _out(_SOLVE_EX(X, info), out)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (X A = B when not left); LinAlgError if A is
    singular."""
    X, info = solve_ex(A, B, left=left)
    _C._linalg_check_errors(info, "torch.linalg.solve", "solve")
    return _out(X, out)


def inv_ex(A, *, check_errors=False, out=None):
    """(A^-1, info)."""
    _check_square("linalg.inv", A)
    X, info = _C._linalg_inv_ex(A)
    if check_errors:
        _C._linalg_check_errors(info, "linalg.inv_ex", "inverse")
    return _out(_INV_EX(X, info), out)


def inv(A, *, out=None):
    """A^-1; LinAlgError if A is singular."""
    X, info = inv_ex(A)
    _C._linalg_check_errors(info, "linalg.inv", "inverse")
    return _out(X, out)


def _lu_sign_and_diag(op, A):
    _check_square(op, A)
    LU, piv, _ = _C._linalg_lu_factor_ex(A, True)
    n = A.shape[-1]
    swaps = (piv != fastt.arange(1, n + 1, dtype=fastt.int32,
                                 device=A.device)).sum(-1)
    perm_sign = 1 - 2 * (swaps % 2).to(A.dtype)
    return perm_sign, fastt.diagonal(LU, 0, -2, -1)


def det(A, *, out=None):
    """det(A) = sign(P) prod(diag(U)) from A's LU."""
    sign, d = _lu_sign_and_diag("linalg.det", A)
    return _out(sign * d.prod(-1), out)


def slogdet(A, *, out=None):
    """(sign, log|det A|): sign 0 and -inf for a singular A; a complex
    sign is det / |det| (sgn)."""
    sign, d = _lu_sign_and_diag("linalg.slogdet", A)
    s = sign * fastt.sgn(d).prod(-1)
    return _out(_SLOGDET(s, d.abs().log().sum(-1)), out)


# ---- Cholesky, triangular, LDL ----

def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): A = L L^T from A's lower triangle (U^T U, upper)."""
    _check_square("linalg.cholesky", A)
    L, info = _C._linalg_cholesky_ex(A, upper)
    if check_errors:
        _C._linalg_check_errors(info, "linalg.cholesky_ex", "cholesky")
    return _out(_CHOLESKY_EX(L, info), out)


def cholesky(A, *, upper=False, out=None):
    """L with A = L L^T; LinAlgError if A is not positive-definite."""
    _check_square("linalg.cholesky", A)
    L, info = _C._linalg_cholesky_ex(A, upper)
    _C._linalg_check_errors(info, "linalg.cholesky", "cholesky")
    return _out(L, out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False,
                     out=None):
    """X with A X = B (X A = B when not left), A triangular."""
    return _out(_C._linalg_solve_triangular(A, B, upper, left,
                                            unitriangular), out)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """A = P L D L^T P^T (LAPACK's sytrf): (LD, pivots, info)."""
    LD, piv, info = _C._linalg_ldl_factor_ex(A, hermitian)
    if check_errors:
        _C._linalg_check_errors(info, "torch.linalg.ldl_factor_ex", "ldl")
    return _out(_LDL_EX(LD, piv, info), out)


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots); raises where D is singular."""
    LD, piv, info = _C._linalg_ldl_factor_ex(A, hermitian)
    _C._linalg_check_errors(info, "torch.linalg.ldl_factor", "ldl")
    return _out(_LDL(LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from ldl_factor's (LD, pivots)."""
    return _out(_C._linalg_ldl_solve(LD, pivots, B, hermitian), out)


# ---- QR, eigh, SVD ----

def qr(A, mode="reduced", *, out=None):
    """A = Q R: mode 'reduced' (Q [m, k]), 'complete' (Q [m, m]) or 'r'
    (R alone; Q empty)."""
    _check_matrix("linalg.qr", A)
    return _out(_QR(*_C._linalg_qr(A, mode)), out)


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with
    v_i in A's column i below the diagonal (LAPACK's orgqr)."""
    return _out(_C._householder_product(A, tau), out)


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of symmetric A, from its
    UPLO triangle."""
    _check_square("linalg.eigh", A)
    return _out(_EIGH(*_C._linalg_eigh(A, UPLO, True)), out)


def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of symmetric A."""
    _check_square("linalg.eigvalsh", A)
    return _out(_C._linalg_eigh(A, UPLO, False)[0], out)


def eig(A, *, out=None):
    """Eigenvalues and right eigenvectors (unit columns) of a general square
    A, complex whatever A's dtype (LAPACK's geev)."""
    _check_square("linalg.eig", A)
    return _out(_EIG(*_C._linalg_eig(A, True)), out)


def eigvals(A, *, out=None):
    """The (complex) eigenvalues of a general square A."""
    _check_square("linalg.eigvals", A)
    return _out(_C._linalg_eig(A, False)[0], out)


def _no_driver(op, driver):
    if driver is not None:
        raise RuntimeError(f"{op}: keyword argument `driver=` is only "
                           "supported on CUDA inputs with cuSOLVER backend.")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """A = U diag(S) Vh, S descending."""
    _check_matrix("linalg.svd", A)
    _no_driver("torch.linalg.svd", driver)
    return _out(_SVD(*_C._linalg_svd(A, full_matrices, True)), out)


def svdvals(A, *, driver=None, out=None):
    """A's singular values, descending."""
    _check_matrix("linalg.svdvals", A)
    _no_driver("torch.linalg.svdvals", driver)
    return _out(_C._linalg_svd(A, False, False)[1], out)


# ---- pseudo-inverse, least squares, rank ----

def _real(t):
    return t.real if t.dtype.is_complex else t


def _tol_tensor(v, A):
    """A tolerance as a tensor of A's real dtype (float32 for complex64)."""
    if v is None or isinstance(v, fastt.Tensor):
        return v
    dt = A.real.dtype if A.dtype.is_complex else A.dtype
    return fastt.tensor(float(v), dtype=dt, device=A.device)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose inverse; singular values at most max(atol, rtol *
    largest) count as zero (rtol defaults to eps * max(m, n), or 0 when
    atol > 0 is given)."""
    _check_matrix("linalg.pinv", A)
    return _out(_C._linalg_pinv(A, _tol_tensor(atol, A),
                                _tol_tensor(rtol, A), hermitian), out)


def lstsq(A, B, rcond=None, *, driver=None):
    """min ||A X - B||: (solution, residuals, rank, singular_values) with
    torch's drivers and rules for which are computed."""
    if not isinstance(A, fastt.Tensor) or not isinstance(B, fastt.Tensor):
        raise TypeError("linalg_lstsq(): argument 'self' and 'b' must be "
                        "Tensors")
    _check_float("torch.linalg.lstsq", A, "input")
    return _LSTSQ(*_C._linalg_lstsq(A, B, rcond, driver))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None,
                out=None):
    """The number of singular values (|eigenvalues| when hermitian) above
    max(atol, rtol * largest)."""
    _check_matrix("linalg.matrix_rank", A)
    if tol is not None:  # torch's deprecated form: an absolute tolerance
        atol, rtol = tol, 0.0
    m, n = A.shape[-2], A.shape[-1]
    with fastt.no_grad():
        if A.numel() == 0:
            r = fastt.zeros(tuple(A.shape[:-2]), dtype=fastt.int64,
                            device=A.device)
            return _out(r, out)
        S = eigvalsh(A).abs() if hermitian else svdvals(A)
        dt = S.dtype  # real, also for a complex A
        eps = fastt.finfo(dt).eps
        at = _tol_tensor(atol, A)
        at = fastt.zeros((), dtype=dt) if at is None else _real(at).to(dt)
        if rtol is not None:
            rt = _real(_tol_tensor(rtol, A)).to(dt)
        elif atol is not None:
            rt = fastt.where(at > 0, 0.0, eps * builtins.max(m, n)).to(dt)
        else:
            rt = fastt.full((), eps * builtins.max(m, n), dtype=dt)
        big = S.amax(-1, keepdim=True)
        tol_ = fastt.maximum(at.unsqueeze(-1), rt.unsqueeze(-1) * big)
        return _out((S > tol_).sum(-1), out)


# ---- norms and condition numbers ----

def _dim_pair(op, dim, ndim):
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got "
                           f"{', '.join(map(str, (dim,) if isinstance(dim, int) else dim))}")
    d0, d1 = (d % builtins.max(ndim, 1) if -ndim <= d < ndim else None
              for d in dim)
    if d0 is None or d1 is None:
        bad = dim[0] if d0 is None else dim[1]
        raise IndexError(f"Dimension out of range (expected to be in range "
                         f"of [{-ndim}, {ndim - 1}], but got {bad})")
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return d0, d1


def _spectral(A, d0, d1, keepdim, pick):
    """pick(svdvals of the (d0, d1) matrices), with those dims removed or
    kept as 1s."""
    S = svdvals(fastt.movedim(A, (d0, d1), (-2, -1)))
    r = pick(S)
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None,
                out=None):
    """ord 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2 of the matrices over
    dim."""
    op = "linalg.matrix_norm"
    if not A.dtype.is_floating_point:
        _check_float(op, A)
    if A.dtype in (fastt.float16, fastt.bfloat16) and not (
            ord == "fro" or ord in (1, -1, math.inf, -math.inf)):
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got "
                           f"{_type_name(A.dtype)}")
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 "
                           "dimensions.")
    if dtype is not None:
        if fastt.promote_types(A.dtype, dtype) != dtype:
            raise RuntimeError(
                f"{op}: the dtype of the input ({_type_name(A.dtype)}) "
                "should be convertible without narrowing to the specified "
                f"dtype ({_type_name(dtype)})")
        A = A.to(dtype)
    d0, d1 = _dim_pair(op, dim, A.dim())
    if isinstance(ord, str):
        if ord == "fro":
            r = vector_norm(A, 2, (d0, d1), keepdim)
        elif ord == "nuc":
            r = _spectral(A, d0, d1, keepdim, lambda s: s.sum(-1))
        else:
            raise RuntimeError(f"{op}: Order {ord} not supported.")
        return _out(r, out)
    if ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    if abs(ord) == 2:
        if ord > 0 and A.numel() == 0:
            r = fastt.zeros(_reduced_shape(A, (d0, d1), keepdim),
                            dtype=A.dtype, device=A.device)
        else:
            r = _spectral(A, d0, d1, keepdim,
                          lambda s: s.amax(-1) if ord > 0 else s.amin(-1))
        return _out(r, out)
    # 1: max over columns of the column sums; inf: the same of the rows.
    sum_dim, pick_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    s = A.abs().sum(sum_dim, keepdim=True)
    if ord > 0 and s.shape[pick_dim] == 0:
        r = fastt.zeros(tuple(s.shape[:pick_dim]) + (1,) +
                        tuple(s.shape[pick_dim + 1:]), dtype=s.dtype,
                        device=A.device)
    else:
        r = s.amax(pick_dim, keepdim=True) if ord > 0 else \
            s.amin(pick_dim, keepdim=True)
    if not keepdim:
        r = r.squeeze((d0, d1))
    return _out(r, out)


def _reduced_shape(A, dims, keepdim):
    return tuple((1 if keepdim else None) if i in dims else s
                 for i, s in enumerate(A.shape)
                 if keepdim or i not in dims)


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """vector_norm over one dim (or the flattened tensor), matrix_norm over
    two (or a 2-D tensor when ord is given)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None
                                             and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord,
                           (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype, out=out)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of"
                           f" length 1 or 2. Got {list(dim or ())}"
                           if dim is not None else
                           "linalg.norm: If dim is not specified but ord is,"
                           f" the input must be 1D or 2D. Got {A.dim()}D.")
    if dim is None and ord is not None and A.dim() != 1:
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, "
                           f"the input must be 1D or 2D. Got {A.dim()}D.")
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is specified, it must be of "
                           f"length 1 or 2. Got {list(dim)}")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim,
                       dtype=dtype, out=out)


def cond(A, p=None, *, out=None):
    """||A|| ||A^-1|| in the p-norm: the ratio of extreme singular values
    for p None / 2 / -2 (any shape), else square A (inf where singular)."""
    op = "linalg.cond"
    _check_matrix(op, A)
    if p is None or p in (2, -2):
        if A.numel() == 0:
            return _out(fastt.zeros(tuple(A.shape[:-2]), dtype=_real(A).dtype,
                                    device=A.device), out)
        S = svdvals(A)
        big, small = S.narrow(-1, 0, 1), S.narrow(-1, S.shape[-1] - 1, 1)
        r = (big / small if p != -2 else small / big).squeeze(-1)
        return _out(r, out)
    if not (isinstance(p, str) and p in ("fro", "nuc")) and \
            p not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of "
                           f"square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.numel() == 0:
        return _out(fastt.zeros(tuple(A.shape[:-2]), dtype=_real(A).dtype,
                                device=A.device), out)
    Ainv, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(Ainv, p)
    r = fastt.where(info > 0, math.inf, r)
    return _out(r, out)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ord-norm of x's elements over dim (all of them for None or ()),
    as a vector: sum(|x|^ord)^(1/ord); inf/-inf the max/min of |x|; 0 the
    count of non-zeros. dtype: x is cast to it first (no narrowing)."""
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) "
                        f"must be Number, not {type(ord).__name__}")
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        raise RuntimeError("linalg.vector_norm: Expected a floating point "
                           "or complex tensor as input. Got "
                           f"{_type_name(x.dtype)}")
    if dtype is not None:
        if x.dtype.is_complex and not dtype.is_complex:
            raise RuntimeError("linalg.vector_norm: dtype should be complex "
                               "for complex inputs, but got "
                               f"{_type_name(dtype)}")
        if not dtype.is_floating_point and not dtype.is_complex:
            raise RuntimeError("linalg.vector_norm: dtype should be floating"
                               f" point or complex, but got "
                               f"{_type_name(dtype)}")
        if fastt.promote_types(x.dtype, dtype) != dtype:
            raise RuntimeError(
                f"linalg.vector_norm: the dtype of the input "
                f"({_type_name(x.dtype)}) should be convertible without "
                f"narrowing to the specified dtype ({_type_name(dtype)})")
        x = x.to(dtype)
    if dim is None or dim == ():
        dims = tuple(range(x.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if ord < 0 or math.isinf(ord):
        for d in dims:
            if x.ndim and x.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {ord} norm on the"
                    f" dimension {d % x.ndim}because this dimension is empty "
                    "and the operation does not have an identity")
        if x.numel() == 0 and not dims:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on an "
                "empty tensor because the operation does not have an "
                "identity")
    result = fastt.norm(x, ord, dims, keepdim)  # complex: of |x|, real
    return _out(result, out)


# ---- products and constructions ----

def matmul(input, other, *, out=None):
    return fastt.matmul(input, other, out=out)


def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring; n < 0 is inv(A)^-n; n == 0 the identity."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError("linalg_matrix_power(): argument 'n' (position 2) "
                        f"must be int, not {type(n).__name__}")
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square "
                           f"matrices, but they are {tuple(A.shape)}"
                           if A.dim() >= 2 else
                           "linalg.matrix_power: The input tensor A must "
                           "have at least 2 dimensions.")
    if n == 0:
        return _out(_eye_like(A), out)
    if n < 0:
        _check_float("linalg.matrix_power", A)
        A, n = inv(A), -n
    result, base = None, A
    while True:
        if n & 1:
            result = base if result is None else fastt.matmul(result, base)
        n >>= 1
        if not n:
            break
        base = fastt.matmul(base, base)
    return _out(result if result is not A else A.clone(), out)


def multi_dot(tensors, *, out=None):
    """The chain product, multiplied in the cheapest order (the classic
    dynamic program); the first / last may be 1-D (row / column)."""
    op = "multi_dot()"
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"{op}: expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"{op}: the first tensor must be 1D or 2D but "
                           f"got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"{op}: the last tensor must be 1D or 2D but got "
                           f"{last.dim()}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"{op}: tensor {i} must be 2D but got "
                               f"{t.dim()}D")
    dt = first.dtype
    for t in tensors:
        if t.dtype != dt:
            raise RuntimeError(f"{op}: all tensors must have be the same "
                               f"dtype but tensor 0 is {_type_name(dt)} and"
                               f" tensor {tensors.index(t)} "
                               f"{_type_name(t.dtype)}")
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"{op}: tensors {i} and {i + 1} with shapes "
                f"{tuple(mats[i].shape)} and {tuple(mats[i + 1].shape)} "
                "cannot be multiplied")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    # cost[i][j]: cheapest product of mats[i..j]; split[i][j] its split.
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + \
                    dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return fastt.mm(product(i, k), product(k + 1, j))
    r = product(0, n - 1)
    if first.dim() == 1:
        r = r.squeeze(0)
    if last.dim() == 1:
        r = r.squeeze(-1)
    return _out(r, out)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(x * y) over dim, broadcasting (conj(x) for complex)."""
    if x.dtype != y.dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the "
                           f"same dtype, but found x of type "
                           f"{_type_name(x.dtype)} and y of type "
                           f"{_type_name(y.dtype)} instead")
    return _out((x.conj() * y).sum(dim), out)


def vander(x, N=None):
    """[x^0, x^1, ..., x^(N-1)] along a new last dim (N = x.shape[-1])."""
    if x.dtype == fastt.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, "
                           "and integer tensors, but got Bool")
    if x.dim() == 0:  # as torch: one point
        x = x.reshape(1)
    if N is None:
        N = x.shape[-1]
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = fastt.ones(tuple(x.shape) + (1,), dtype=x.dtype, device=x.device)
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (N - 1,))
    return fastt.cat([ones, powers], -1).cumprod(-1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """A's diagonals over the last two dims (a view)."""
    return fastt.diagonal(A, offset, dim1, dim2)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a matrix [prod(shape[:ind]),
    prod(shape[ind:])], reshaped to shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError("Expected a strictly positive integer for 'ind', "
                           f"but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    p, q = math.prod(out_shape), math.prod(in_shape)
    if p != q:
        raise RuntimeError("Expected self to satisfy the requirement "
                           "prod(self.shape[ind:]) == prod(self.shape[:ind])"
                           f", but got {q} != {p}")
    r = inv(A.reshape(p, q)).reshape(in_shape + out_shape)
    return _out(r, out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) == B."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        rest = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(rest + dims)
    x_shape = tuple(A.shape[B.dim():])
    p, q = B.numel(), math.prod(x_shape)
    if p != q:
        raise RuntimeError("Expected self to satisfy the requirement "
                           "prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {q} != "
                           f"{p}")
    r = solve(A.reshape(p, q), B.reshape(p)).reshape(x_shape)
    return _out(r, out)


# Scaling and squaring with the [13/13] Pade approximant (Higham 2005):
# its coefficients and the 1-norm bound below which it is exact to double
# precision (3.7 for single precision's degree 7 would do, 13 serves both).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0,
           670442572800.0, 33522128640.0, 1323241920.0, 40840800.0,
           960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(A):
    """e^A of square matrices (batched), differentiable through the
    matmuls and the solve it is made of."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square "
                           "matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else '?'} by "
                           f"{A.shape[-1] if A.dim() else '?'} matrices")
    if not A.dtype.is_floating_point and not A.dtype.is_complex:
        _check_float("linalg.matrix_exp", A)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    low = A.dtype in (fastt.float16, fastt.bfloat16)
    X = A.float() if low else A
    with fastt.no_grad():
        norm1 = X.abs().sum(-2).amax(-1)
        s = int(builtins.max(0, math.ceil(math.log2(
            builtins.max(norm1.max().item(), 1e-300) / _THETA13))))
    X = X / (2 ** s) if s else X
    b = _PADE13
    eye = fastt.eye(n, dtype=X.dtype, device=X.device)
    X2 = fastt.matmul(X, X)
    X4 = fastt.matmul(X2, X2)
    X6 = fastt.matmul(X4, X2)
    U = fastt.matmul(X, fastt.matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2)
                     + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = fastt.matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2) + \
        b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    R = solve(V - U, V + U)
    for _ in range(s):
        R = fastt.matmul(R, R)
    return R.to(A.dtype) if low else R


from . import _linalg_legacy  # noqa: E402,F401  (torch.* names, methods)

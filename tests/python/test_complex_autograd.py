"""Complex autograd (issue 18): torch's convention -- the gradient of a
real loss L at a complex z is dL/dRe z + i dL/dIm z, so a holomorphic
op's formula multiplies by the conjugate derivative -- for every formula
autograd/engine.cpp's complex_formula admits, checked against torch's
gradients (same inputs, same complex grad_output) and by fastt's
gradcheck, which perturbs real and imaginary parts and seeds complex
outputs with 1 and 1j. Formulas that are still real-only refuse a complex
input or result with NotImplementedError instead of dropping the
imaginary parts."""
import numpy as np
import pytest
import torch

import fastt
from fastt.autograd import gradcheck


def _arr(shape, seed, kind):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a


def _leaves(specs, seed):
    """One (fastt, torch) pair of leaves per spec: (shape, "c" | "r")."""
    f, t = [], []
    for k, (shape, kind) in enumerate(specs):
        a = _arr(shape, seed + k, kind)
        f.append(fastt.tensor(a).requires_grad_())
        t.append(torch.tensor(a).requires_grad_())
    return f, t


def _np(x):
    return np.asarray(x.detach().tolist())


C, R = "c", "r"
# name -> (fn(lib, *xs), input specs); lib is fastt or torch.
CASES = {
    "add": (lambda m, a, b: a + b, [((3, 4), C), ((4,), C)]),
    "sub_alpha": (lambda m, a, b: m.sub(a, b, alpha=2 - 1j),
                  [((3, 4), C), ((3, 4), C)]),
    "mul": (lambda m, a, b: a * b, [((3, 4), C), ((3, 1), C)]),
    "mul_real_complex": (lambda m, a, b: a * b, [((3, 4), R), ((3, 4), C)]),
    "mul_scalar": (lambda m, a: a * (2 - 3j), [((5,), C)]),
    "rmul_scalar_real_input": (lambda m, a: (0.5 + 2j) * a, [((5,), R)]),
    "div": (lambda m, a, b: a / b, [((3, 4), C), ((3, 4), C)]),
    "div_scalar": (lambda m, a: a / (1 + 2j), [((5,), C)]),
    "rdiv_scalar": (lambda m, a: (1 - 2j) / a, [((5,), C)]),
    "neg": (lambda m, a: -a, [((5,), C)]),
    "abs": (lambda m, a: a.abs(), [((6,), C)]),
    "sum": (lambda m, a: a.sum(), [((3, 4), C)]),
    "sum_dim": (lambda m, a: a.sum(1), [((3, 4), C)]),
    "mean_dim": (lambda m, a: a.mean(0, keepdim=True), [((3, 4), C)]),
    "matmul": (lambda m, a, b: a @ b, [((3, 4), C), ((4, 2), C)]),
    "matmul_batched": (lambda m, a, b: a @ b,
                       [((2, 3, 4), C), ((4, 5), C)]),
    "matmul_vec": (lambda m, a, b: a @ b, [((4,), C), ((4, 3), C)]),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b),
               [((2, 3, 4), C), ((5, 4), C), ((5,), C)]),
    "conj": (lambda m, a, b: m.conj(a) * b, [((4,), C), ((4,), C)]),
    "conj_physical": (lambda m, a: m.conj_physical(a) * (1 + 1j),
                      [((4,), C)]),
    "real_imag": (lambda m, a: a.real * 2 + a.imag * a.real, [((5,), C)]),
    "view_as_real": (lambda m, a: m.view_as_real(a) * m.view_as_real(a),
                     [((3, 2), C)]),
    "view_as_complex": (lambda m, a: m.view_as_complex(a) * (1 + 2j),
                        [((3, 2), R)]),
    "complex": (lambda m, a, b: m.complex(a, b) * (2 - 1j),
                [((4,), R), ((4,), R)]),
    # abs >= 0 (torch's polar gradient assumes it: its sgn(result))
    "polar": (lambda m, a, b: m.polar(a.abs() + 0.1, b),
              [((4,), R), ((4,), R)]),
    "angle": (lambda m, a: m.angle(a), [((5,), C)]),
    "cast_real_to_complex": (lambda m, a, b: a.to(m.complex128) * b,
                             [((4,), R), ((4,), C)]),
    "views": (lambda m, a: a.reshape(2, 6).t().permute(1, 0)[1:, 2]
              .unsqueeze(0).expand(3, 1) * 1j, [((3, 4), C)]),
    "cat_stack": (lambda m, a, b: m.stack([m.cat([a, b]), m.cat([b, a])]),
                  [((2,), C), ((3,), C)]),
    "select_clone": (lambda m, a: a[1].clone() * a[0], [((2, 3), C)]),
    "as_strided_overlapping": (lambda m, a: a.as_strided((3, 2), (1, 1))
                               * (1 - 1j), [((4,), C)]),
    "diagonal_repeat": (lambda m, a: a.diagonal().repeat(2) * a[0, 0],
                        [((3, 3), C)]),
    "inplace_on_a_view": (lambda m, a: _write_row(m, a), [((2, 3), C)]),
    # holomorphic elementwise functions (the derivative conjugated)
    **{f"unary_{op}": ((lambda op: lambda m, a: getattr(m, op)(a))(op),
                       [((6,), C)])
       for op in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
                  "rsqrt", "reciprocal", "sin", "cos", "tan", "sinh",
                  "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
                  "atanh", "sigmoid")},
    "unary_chain": (lambda m, a, b: m.tanh(m.exp(a) * m.sin(b)).sqrt(),
                    [((3, 4), C), ((4,), C)]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [((4,), C), ((4,), C)]),
    # powers and products (conjugated factors)
    "square": (lambda m, a: m.square(a), [((5,), C)]),
    "exp2": (lambda m, a: m.exp2(a), [((5,), C)]),
    "sgn": (lambda m, a: m.sgn(a) * a, [((5,), C)]),
    "pow_tensor": (lambda m, a, b: a ** b, [((4,), C), ((4,), C)]),
    "pow_real_base": (lambda m, a, b: (a.abs() + 0.5) ** b,
                      [((4,), R), ((4,), C)]),
    "pow_real_exponent": (lambda m, a, b: a ** b, [((4,), C), ((4,), R)]),
    "pow_scalar": (lambda m, a: a ** 2.5, [((4,), C)]),
    "pow_complex_scalar": (lambda m, a: a ** (1.5 - 0.5j), [((4,), C)]),
    "pow_complex_scalar_real_base": (lambda m, a: (a.abs() + 1) ** (2 + 1j),
                                     [((4,), R)]),
    "pow_fast_paths": (lambda m, a: a ** 2 + a ** 3 + a ** -1 + a ** 0.5,
                       [((4,), C)]),
    "rpow": (lambda m, a: 2 ** a, [((4,), C)]),
    "rpow_complex_base": (lambda m, a: (1 - 2j) ** a, [((4,), C)]),
    "rpow_complex_base_real_exponent": (lambda m, a: (1 - 2j) ** a,
                                        [((4,), R)]),
    "prod": (lambda m, a: a.prod(), [((5,), C)]),
    "prod_dim": (lambda m, a: a.prod(1), [((3, 4), C)]),
    "cumsum": (lambda m, a: a.cumsum(1), [((3, 4), C)]),
    "cumprod": (lambda m, a: a.cumprod(1), [((3, 4), C)]),
    "cumprod_with_zero": (lambda m, a: m.cat([a[:2], a[2:3] * 0, a[3:]])
                          .cumprod(0), [((5,), C)]),
    "lerp": (lambda m, a, b, w: m.lerp(a, b, w),
             [((4,), C), ((4,), C), ((4,), C)]),
    "lerp_scalar": (lambda m, a, b: m.lerp(a, b, 0.25 + 0.5j),
                    [((4,), C), ((4,), C)]),
    "addcmul": (lambda m, a, b, c: m.addcmul(a, b, c, value=2 - 1j),
                [((4,), C), ((4,), C), ((4,), C)]),
    "addcdiv": (lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5j),
                [((4,), C), ((4,), C), ((4,), C)]),
    "var_std": (lambda m, a: a.var(1) + a.std(0).sum() * 1j, [((3, 4), C)]),
    "var_mean": (lambda m, a: m.var_mean(a, 0)[0] * m.var_mean(a, 0)[1],
                 [((3, 4), C)]),
    # selection and indexing (linear)
    "where": (lambda m, a, b: m.where(a.real > 0, a, b),
              [((5,), C), ((5,), C)]),
    "masked_fill": (lambda m, a: a.masked_fill(a.imag > 0, 2j), [((5,), C)]),
    "index_gather_scatter": (lambda m, a, b: m.cat([
        a[m.tensor([2, 0, 2])].flatten(),
        a.gather(1, m.tensor([[0], [3], [1]])).flatten(),
        a.index_select(1, m.tensor([1, 1])).flatten(),
        a.scatter(1, m.tensor([[0], [3], [1]]), b[:, :1]).flatten(),
        a.scatter_add(1, m.tensor([[0], [3], [0]]), b[:, :1]).flatten(),
        a.index_add(1, m.tensor([1, 1]), b[:, :2], alpha=2).flatten(),
    ]), [((3, 4), C), ((3, 4), C)]),
    "index_put": (lambda m, a, b: a.index_put(
        (m.tensor([0, 0, 2]),), b[:3], accumulate=True),
        [((3, 4), C), ((3, 4), C)]),
    "masked_select_scatter": (lambda m, a, b: a.masked_select(
        a.real > 0).sum() + a.masked_scatter(a.imag > 0, b),
        [((3, 4), C), ((3, 4), C)]),
    # the LU and Cholesky families (conjugate transposes)
    "det": (lambda m, a: m.linalg.det(a), [((2, 3, 3), C)]),
    "slogdet": (lambda m, a: m.linalg.slogdet(a)[1] * m.linalg.slogdet(a)[0],
                [((3, 3), C)]),
    "inv": (lambda m, a: m.linalg.inv(a), [((3, 3), C)]),
    "solve": (lambda m, a, b: m.linalg.solve(a, b),
              [((2, 3, 3), C), ((3, 2), C)]),
    "lu_factor": (lambda m, a: m.linalg.lu_factor(a)[0], [((4, 4), C)]),
    "lu_wide_tall": (lambda m, a, b: m.cat([
        m.linalg.lu(a)[1].flatten(), m.linalg.lu(a)[2].flatten(),
        m.linalg.lu(b)[1].flatten(), m.linalg.lu(b)[2].flatten()]),
        [((3, 5), C), ((5, 3), C)]),
    "cholesky": (lambda m, a: m.linalg.cholesky(
        a @ a.mH + 3 * m.eye(3, dtype=a.dtype), upper=False),
        [((3, 3), C)]),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(
        a @ a.mH + 3 * m.eye(3, dtype=a.dtype), upper=True),
        [((3, 3), C)]),
    # (a factor's diagonal is real: LAPACK's potri, torch's
    # cholesky_inverse, reads only its real part)
    "cholesky_solve_inverse": (lambda m, l, b: m.cholesky_solve(
        b, m.tril(l, -1) + 3 * m.eye(3, dtype=l.dtype)) + m.cholesky_inverse(
        m.tril(l, -1) + 3 * m.eye(3, dtype=l.dtype)),
        [((3, 3), C), ((3, 3), C)]),
    "solve_triangular": (lambda m, a, b: m.linalg.solve_triangular(
        m.triu(a) + 3 * m.eye(3, dtype=a.dtype), b, upper=True, left=False),
        [((3, 3), C), ((2, 3), C)]),
    # addmm's family, complex coefficients included (composed)
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0),
              [((3,), C), ((3, 4), C), ((4, 3), C)]),
    "addmm_complex_coefficients": (lambda m, c, a, b: m.addmm(
        c, a, b, beta=1 - 2j, alpha=0.5 + 1j), [((3, 3), C), ((3, 4), C),
                                                ((4, 3), C)]),
    "baddbmm_addbmm_addmv": (lambda m, c, a, b, v: m.cat([
        m.baddbmm(c, a, b, alpha=1j).flatten(),
        m.addbmm(c[0], a, b, beta=2j).flatten(),
        m.addmv(c[0, 0], a[0], v, alpha=-1j, beta=0.5)]),
        [((2, 3, 3), C), ((2, 3, 4), C), ((2, 4, 3), C), ((4,), C)]),
    # convolutions: four real ones of the parts
    "conv2d": (lambda m, x, w, b: m.nn.functional.conv2d(
        x, w, b, padding=1, stride=(1, 2)), [((2, 2, 5, 5), C),
                                             ((3, 2, 3, 3), C), ((3,), C)]),
    "conv1d_groups": (lambda m, x, w: m.nn.functional.conv1d(
        x, w, groups=2, dilation=2), [((4, 7), C), ((2, 2, 2), C)]),
    "conv_transpose1d_2d": (lambda m, x, w, y, v: m.cat([
        m.nn.functional.conv_transpose1d(x, w, stride=2).flatten(),
        m.nn.functional.conv_transpose2d(y, v, padding=1).flatten()]),
        [((1, 2, 4), C), ((2, 3, 3), C), ((1, 2, 3, 3), C),
         ((2, 1, 2, 2), C)]),
    # QR and the spectral decompositions: losses that do not depend on
    # the vectors' free phases (|V|, symmetric functions of eigenvalues)
    "qr_tall_wide": (lambda m, a, b: m.cat(
        [t.flatten() for t in m.linalg.qr(a) + m.linalg.qr(b)]),
        [((4, 3), C), ((3, 5), C)]),
    "qr_square_complete": (lambda m, a: m.cat(
        [t.flatten() for t in m.linalg.qr(a, "complete")]), [((3, 3), C)]),
    "householder_product": (lambda m, a, t: m.linalg.householder_product(
        a, t), [((4, 3), C), ((2,), C)]),
    "eigh": (lambda m, a: (lambda L, V: m.cat([L, V.abs().flatten()]))(
        *m.linalg.eigh(a + a.mH)), [((3, 3), C)]),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a @ a.mH, "U"),
                 [((3, 3), C)]),
    # (|V|^2 weighted unevenly: a weight per column alone would sum to a
    # constant, the columns being unit vectors)
    "eig": (lambda m, a: (lambda L, V: m.stack([
        L.sum(), (L * L).sum(), (V.abs() ** 2 * m.arange(
            1.0, 10.0, dtype=m.float64).reshape(3, 3) ** 2).sum()
        .to(L.dtype)]))(*m.linalg.eig(a)), [((3, 3), C)]),
    "eig_real_input": (lambda m, a: (lambda L, V: m.stack([
        (L * L * L).sum(), (V.abs() ** 2 * m.arange(
            1.0, 17.0, dtype=m.float64).reshape(4, 4) ** 2).sum()
        .to(L.dtype)]))(*m.linalg.eig(a)), [((4, 4), R)]),
    "eigvals": (lambda m, a: (m.linalg.eigvals(a) ** 2).sum(),
                [((3, 3), C)]),
    "svd_tall_wide": (lambda m, a, b: m.cat([
        t for M in (a, b) for U, S, Vh in [m.linalg.svd(M, False)]
        for t in (S, U.abs().flatten(), Vh.abs().flatten())]),
        [((4, 3), C), ((3, 5), C)]),
    "svd_reconstruct": (lambda m, a: (lambda U, S, Vh: (U * S.to(a.dtype))
                                      @ Vh)(*m.linalg.svd(a, False)),
                        [((3, 4), C)]),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), [((2, 3, 4), C)]),
    "pinv": (lambda m, a: m.linalg.pinv(a), [((3, 4), C)]),
    "pinv_hermitian": (lambda m, a: m.linalg.pinv(
        a + a.mH + 4 * m.eye(3, dtype=a.dtype), hermitian=True),
        [((3, 3), C)]),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution,
              [((5, 3), C), ((5, 2), C)]),
    "tril_triu_flip_roll": (lambda m, a: a.tril() + a.triu(1).flip(0)
                            + a.roll(1, 1), [((4, 4), C)]),
    # log-sum-exp family (the larger real part leads), sinc, softmax of
    # a complex input cast to a real dtype, rms_norm's composition
    "logsumexp": (lambda m, a: m.logsumexp(a, (0, 2)) + m.logsumexp(
        a, 1, keepdim=True).sum(), [((2, 3, 4), C)]),
    "logaddexp": (lambda m, a, b: m.logaddexp(a, b),
                  [((3, 4), C), ((4,), C)]),
    "logcumsumexp": (lambda m, a: m.logcumsumexp(a, 1), [((2, 5), C)]),
    "sinc": (lambda m, a: m.sinc(a), [((6,), C)]),
    "softmax_to_real": (lambda m, a: m.softmax(a, 1, dtype=m.float64)
                        + m.log_softmax(a, 0, dtype=m.float64),
                        [((3, 4), C)]),
    "rms_norm": (lambda m, x, w: m.nn.functional.rms_norm(x, (4,), w),
                 [((2, 3, 4), C), ((4,), C)]),
    # what models do with them
    "rope": (lambda m, x: m.view_as_real(
        m.view_as_complex(x.reshape(2, 4, 2)) * m.polar(
            m.ones(4, dtype=m.float64), m.arange(4, dtype=m.float64)))
        .flatten(1), [((2, 8), R)]),
    "fno_mode_mix": (lambda m, a, w: m.einsum("bix,iox->box", a, w),
                     [((2, 3, 4), C), ((3, 5, 4), C)]),
    "stft_magnitude": (lambda m, x: m.stft(
        x, n_fft=8, hop_length=2, window=m.hann_window(8, dtype=m.float64),
        return_complex=True).abs(), [((32,), R)]),
    "istft": (lambda m, z: m.istft(
        z, n_fft=8, hop_length=2, window=m.hann_window(8, dtype=m.float64),
        length=16), [((5, 9), C)]),
}


def _write_row(m, a):
    b = a * 1
    b[0].mul_(1j)  # CopySlices onto a complex base
    return b


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(name):
    fn, specs = CASES[name]
    f, t = _leaves(specs, seed=len(name))
    yf, yt = fn(fastt, *f), fn(torch, *t)
    assert yf.dtype.is_complex == yt.dtype.is_complex
    np.testing.assert_allclose(_np(yf), _np(yt.resolve_conj()),
                               rtol=1e-10, atol=1e-12)
    v = _arr(tuple(yt.shape), 99, C if yt.dtype.is_complex else R)
    yf.backward(fastt.tensor(v))
    yt.backward(torch.tensor(v))
    for xf, xt in zip(f, t):
        assert xf.grad is not None
        assert xf.grad.dtype == xf.dtype
        np.testing.assert_allclose(_np(xf.grad), _np(xt.grad), rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.parametrize("name", ["mul", "div", "abs", "matmul", "linear",
                                  "polar", "view_as_complex",
                                  "mul_real_complex", "rdiv_scalar",
                                  "unary_log", "unary_tan", "unary_asinh",
                                  "unary_sigmoid", "unary_chain", "square",
                                  "exp2", "sgn", "pow_tensor",
                                  "pow_real_base", "pow_complex_scalar",
                                  "pow_complex_scalar_real_base",
                                  "pow_fast_paths", "rpow_complex_base",
                                  "rpow_complex_base_real_exponent",
                                  "prod_dim", "cumprod", "cumprod_with_zero",
                                  "lerp", "lerp_scalar", "addcmul",
                                  "addcdiv", "var_std", "var_mean",
                                  "index_gather_scatter",
                                  "masked_select_scatter", "det", "slogdet",
                                  "solve", "lu_wide_tall", "cholesky_upper",
                                  "cholesky_solve_inverse",
                                  "solve_triangular", "qr_tall_wide",
                                  "householder_product", "eigh", "eig",
                                  "eig_real_input", "svd_tall_wide",
                                  "svd_reconstruct", "pinv", "lstsq",
                                  "addmm_complex_coefficients",
                                  "baddbmm_addbmm_addmv", "conv2d",
                                  "conv_transpose1d_2d", "logsumexp",
                                  "logaddexp", "logcumsumexp", "sinc",
                                  "softmax_to_real", "rms_norm"])
def test_gradcheck(name):
    fn, specs = CASES[name]
    f, _ = _leaves(specs, seed=3)
    assert gradcheck(lambda *xs: fn(fastt, *xs), f)


@pytest.mark.parametrize("op", ["asin", "acos", "asinh", "acosh", "atan",
                                "atanh", "log", "sqrt", "rsqrt", "log1p"])
def test_gradients_on_branch_cuts_match_torch(op):
    """Real numbers stored as complex sit on the cuts (|x| > 1 for asin,
    x < 1 for acosh, ...): the sign of zero picks the side, as torch's."""
    zs = [2 + 0j, -3 + 0j, 3 - 0j, -2 - 0j, 2j, -2j, 0.5 + 0j, -0.5 + 0j,
          -2 + 1e-300j]
    f = fastt.tensor(zs, dtype=fastt.complex128).requires_grad_()
    t = torch.tensor(zs, dtype=torch.complex128).requires_grad_()
    getattr(fastt, op)(f).sum().abs().backward()
    getattr(torch, op)(t).sum().abs().backward()
    np.testing.assert_allclose(_np(f.grad), _np(t.grad), rtol=1e-12,
                               atol=1e-12)


def test_index_add_complex_alpha_gradient_is_conjugated():
    """source's gradient is conj(alpha) times grad's selected rows (torch's
    derivatives.yaml multiplies by alpha itself, which gradcheck rejects:
    fastt departs from torch here)."""
    f, _ = _leaves([((3, 4), C), ((3, 2), C)], seed=5)
    assert gradcheck(lambda a, b: a.index_add(
        1, fastt.tensor([1, 1]), b, alpha=1 - 2j), f)


def test_gradcheck_catches_a_missing_conjugate():
    # d(a * b)/da with b unconjugated is wrong for complex b: gradcheck
    # must see it (the test of the checker).
    class Wrong(fastt.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    f, _ = _leaves([((3,), C), ((3,), C)], seed=5)
    assert not gradcheck(Wrong.apply, f, raise_exception=False)
    with pytest.raises(fastt.autograd.GradcheckError, match="grad_output 1j"):
        gradcheck(Wrong.apply, f)


def test_custom_function_with_complex_tensors():
    class Conj(fastt.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            return fastt.conj_physical(z)

        @staticmethod
        def backward(ctx, g):
            return fastt.conj_physical(g)

    f, _ = _leaves([((4,), C)], seed=6)
    assert gradcheck(Conj.apply, f)


# ---- the FFTs: every torch.fft function, against torch ----
FFT_CASES = [
    ("fft", C, (8,), {}), ("fft", C, (6,), {"n": 9, "norm": "ortho"}),
    ("fft", R, (7,), {"norm": "forward"}), ("ifft", C, (5, 4), {"dim": 0}),
    ("ifft", R, (8,), {"n": 6}), ("rfft", R, (8,), {}),
    ("rfft", R, (9,), {"norm": "ortho"}), ("rfft", R, (3, 6), {"n": 10}),
    ("irfft", C, (5,), {}), ("irfft", C, (5,), {"n": 9, "norm": "ortho"}),
    ("irfft", C, (4, 3), {"n": 3, "dim": 0}), ("hfft", C, (5,), {}),
    ("hfft", C, (4,), {"n": 7, "norm": "forward"}), ("ihfft", R, (8,), {}),
    ("ihfft", R, (7,), {"norm": "ortho"}), ("fft2", C, (4, 6), {}),
    ("ifft2", C, (3, 4, 5), {"s": (5, 3)}), ("fftn", R, (4, 5), {}),
    ("ifftn", C, (2, 3, 4), {"dim": (0, 2), "norm": "forward"}),
    ("rfft2", R, (4, 6), {}), ("rfftn", R, (3, 4, 5), {"norm": "ortho"}),
    ("irfft2", C, (4, 4), {}), ("irfftn", C, (3, 4, 3), {"s": (3, 5, 6)}),
    ("hfft2", C, (4, 3), {}), ("ihfft2", R, (4, 6), {}),
    ("hfftn", C, (3, 4), {"s": (3, 5)}), ("ihfftn", R, (3, 5), {}),
]


@pytest.mark.parametrize("case", FFT_CASES,
                         ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_fft_gradients_match_torch(case):
    name, kind, shape, kw = case
    f, t = _leaves([(shape, kind)], seed=11)
    yf = getattr(fastt.fft, name)(f[0], **kw)
    yt = getattr(torch.fft, name)(t[0], **kw)
    assert yf.grad_fn is not None
    v = _arr(tuple(yt.shape), 7, C if yt.dtype.is_complex else R)
    yf.backward(fastt.tensor(v))
    yt.backward(torch.tensor(v))
    np.testing.assert_allclose(_np(f[0].grad), _np(t[0].grad), rtol=1e-9,
                               atol=1e-10)


@pytest.mark.parametrize("name,kind,kw", [
    ("fft", C, {"n": 5}), ("rfft", R, {}), ("irfft", C, {"n": 5}),
    ("irfft", C, {}), ("hfft", C, {"norm": "ortho"}), ("ihfft", R, {}),
])
def test_fft_gradcheck(name, kind, kw):
    f, _ = _leaves([((4,), kind)], seed=13)
    assert gradcheck(lambda x: getattr(fastt.fft, name)(x, **kw), f)


def test_fft_grad_fn_names_and_double_backward():
    z = fastt.tensor(_arr((6,), 1, C)).requires_grad_()
    assert fastt.fft.fft(z).grad_fn.name() == "FftC2CBackward0"
    x = fastt.tensor(_arr((6,), 2, R)).requires_grad_()
    assert fastt.fft.rfft(x).grad_fn.name() == "FftR2CBackward0"
    assert fastt.fft.irfft(z).grad_fn.name() == "FftC2RBackward0"
    # The formulas are fastt ops: the gradient is differentiable again.
    y = fastt.fft.rfft(x).abs().pow(2).sum()
    (g,) = fastt.autograd.grad(y, x, create_graph=True)
    (h,) = fastt.autograd.grad(g.sum(), x)
    xt = torch.tensor(_arr((6,), 2, R)).requires_grad_()
    yt = torch.fft.rfft(xt).abs().pow(2).sum()
    (gt,) = torch.autograd.grad(yt, xt, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(_np(g), _np(gt), rtol=1e-9)
    np.testing.assert_allclose(_np(h), _np(ht), rtol=1e-9, atol=1e-9)


def test_spectral_layer_trains():
    # A learnable complex filter in the frequency domain fits a target
    # filter: the loss falls by orders of magnitude (a real use).
    rng = np.random.default_rng(0)
    x = fastt.tensor(rng.standard_normal((32, 16)))
    target = fastt.tensor(rng.standard_normal(9) + 1j * rng.standard_normal(9))
    y = fastt.fft.irfft(fastt.fft.rfft(x) * target, n=16)
    w = fastt.zeros(9, dtype=fastt.complex128, requires_grad=True)
    opt = fastt.optim.SGD([w], lr=1.0)
    first = None
    for _ in range(100):
        opt.zero_grad()
        loss = (fastt.fft.irfft(fastt.fft.rfft(x) * w, n=16) - y).pow(2) \
            .mean()
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < 1e-12 * first
    # The filter is recovered where irfft reads it: every bin but the
    # imaginary parts of the zero and Nyquist frequencies.
    err = (w - target).detach()
    assert err[1:8].abs().max().item() < 1e-6
    assert err.real.abs().max().item() < 1e-6


# ---- what is refused, and how ----
def test_leaf_grad_is_complex_and_accumulates():
    z = fastt.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    assert z.requires_grad and z.is_leaf
    (z * (2 + 1j)).sum().real.backward()
    (z * (2 + 1j)).sum().real.backward()
    assert z.grad.dtype == fastt.complex64
    assert z.grad.tolist() == [4 - 2j, 4 - 2j]


def test_complex_output_needs_a_grad_output():
    z = fastt.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        z.sum().backward()


@pytest.mark.parametrize("name", ["eigh", "svd", "eig"])
def test_losses_that_depend_on_the_phase_are_refused(name):
    """A complex eigen / singular vector is defined up to e^{i phi}: a loss
    that sees the phase has no gradient (torch's check and message)."""
    a = fastt.tensor(_arr((3, 3), 1, C)).requires_grad_()
    if name == "eigh":
        loss = fastt.linalg.eigh(a + a.mH)[1].real.sum()
    elif name == "svd":
        loss = fastt.linalg.svd(a)[0].real.sum()
    else:
        loss = fastt.linalg.eig(a)[1].real.sum()
    with pytest.raises(RuntimeError, match=r"up to multiplication by "
                                           r"e\^\{i phi\}"):
        loss.backward()


def test_integer_tensors_still_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point and complex"):
        fastt.tensor([1, 2], requires_grad=True)


def test_real_only_formulas_refuse_complex_tensors():
    z = fastt.tensor([[1 + 2j, 3j], [1 - 1j, 2 + 0j]], requires_grad=True)
    with pytest.raises(NotImplementedError,
                       match="EmbeddingBackward0: the gradient of this op "
                             "for complex tensors is not implemented"):
        fastt.nn.functional.embedding(fastt.tensor([1, 0, 1]), z)
    with fastt.no_grad():  # the forward itself is fine
        assert fastt.nn.functional.embedding(fastt.tensor([1]), z).shape == \
            (1, 2)


def test_silu_of_complex_has_no_gradient_as_torch():
    # torch: "silu does not support automatic differentiation for outputs
    # with complex dtype"; the forward is fine.
    z = fastt.tensor([1 + 2j, -0.5j], requires_grad=True)
    with pytest.raises(RuntimeError, match="SiluBackward0"):
        fastt.nn.functional.silu(z)
    with fastt.no_grad():
        np.testing.assert_allclose(
            _np(fastt.nn.functional.silu(z)),
            _np(torch.nn.functional.silu(torch.tensor([1 + 2j, -0.5j]))),
            rtol=1e-6)


def test_logaddexp_gradient_of_far_apart_operands_is_finite():
    # 1 / (1 + e^(y - x)) with e^(y - x) = inf + inf i would be NaN
    # (torch's is): the share is e^(x - y) / (1 + e^(x - y)) there.
    a = [10000 + 1j, -5 + 2j, 3 + 0.5j]
    b = [-5 + 2j, 10000 + 1j, 3 - 0.5j]
    g = np.array([1 + 1j, 2 - 1j, 0.5j])
    x = fastt.tensor(a, dtype=fastt.complex128, requires_grad=True)
    y = fastt.tensor(b, dtype=fastt.complex128, requires_grad=True)
    fastt.logaddexp(x, y).backward(fastt.tensor(g))
    d = np.array(b) - np.array(a)
    with np.errstate(over="ignore", invalid="ignore"):
        sx = np.where(d.real > 0, np.exp(-d) / (1 + np.exp(-d)),
                      1 / (1 + np.exp(d)))
    np.testing.assert_allclose(_np(x.grad), g * sx.conj(), atol=1e-12)
    np.testing.assert_allclose(_np(y.grad), g * (1 - sx).conj(), atol=1e-12)


def test_complex_log_sum_exp_special_values_match_torch():
    inf, nan = float("inf"), float("nan")
    a = [complex(inf, 1), complex(-inf, 2), complex(1, nan), 3 + 4j,
         complex(inf, 0), 1e30 + 1j]
    b = [complex(inf, 3), complex(-inf, 5), 1 + 1j, -2 + 1j, 1 + 1j, 2j]
    for x, y in ((a, b), (b, a)):
        got = _np(fastt.logaddexp(fastt.tensor(x), fastt.tensor(y)))
        want = torch.logaddexp(torch.tensor(x), torch.tensor(y)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)
    rows = [[complex(inf, 1), 1 + 1j], [complex(-inf, 1), complex(-inf, 3)],
            [complex(nan, 0), 1j], [1e300 + 1j, 1e300 - 1j]]
    for r in rows:
        got = _np(fastt.logsumexp(fastt.tensor(r), 0))
        want = torch.logsumexp(torch.tensor(r), 0).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)
    inf_rows = [[complex(-inf, 2), complex(-inf, 5), 1 + 1j],
                [1 + 2j, complex(-inf, 3)], [complex(inf, 1), complex(inf, 3)],
                [complex(nan, 1), 2j], [1j, complex(1, nan), 3],
                [complex(-inf, 1), complex(nan, 0)]]
    for r in inf_rows:  # logcumsumexp: torch's -inf + 0j start, NaN rule
        got = _np(fastt.logcumsumexp(fastt.tensor(r), 0))
        want = torch.logcumsumexp(torch.tensor(r), 0).numpy()
        for g, w in zip(got, want):
            for p, q in ((g.real, w.real), (g.imag, w.imag)):
                assert (np.isnan(p) and np.isnan(q)) or p == q, (r, got,
                                                                 want)
    x = _arr((2, 3, 4), 5, C)
    w = np.array([0.5, 2.0, -1.0, 1.5])  # a real weight promotes (torch)
    np.testing.assert_allclose(
        _np(fastt.nn.functional.rms_norm(fastt.tensor(x), (4,),
                                         fastt.tensor(w))),
        torch.nn.functional.rms_norm(torch.tensor(x), (4,),
                                     torch.tensor(w)).numpy(), rtol=1e-12)
    e = fastt.logsumexp(fastt.zeros(0, 3, dtype=fastt.complex64), 0)
    assert e.dtype == fastt.complex64 and _np(e).real.tolist() == [-inf] * 3


def test_inplace_through_a_dtype_view_is_refused():
    z = fastt.tensor([1 + 2j, 3j], requires_grad=True)
    w = z * 1
    with pytest.raises(NotImplementedError, match="view_as_real"):
        fastt.view_as_real(w).mul_(2)
    with pytest.raises(RuntimeError, match="leaf"):
        fastt.view_as_real(z).mul_(2)
    r = fastt.view_as_real(w)
    w.mul_(2)
    with pytest.raises(NotImplementedError, match="after an in-place"):
        r * 1
    assert fastt.view_as_real(w)._base is not None


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("Adam", dict(lr=0.05, weight_decay=0.01)),
    ("AdamW", dict(lr=0.05)), ("RMSprop", dict(lr=0.01, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)), ("NAdam", dict(lr=0.05)),
])
def test_optimizers_step_complex_parameters_as_torch(name, kw):
    # torch steps a complex parameter as its real view (each part on its
    # own, Adam's second moment per part): the same trajectory.
    f, t = _leaves([((3,), C), ((2,), R)], seed=21)
    of = getattr(fastt.optim, name)(f, **kw)
    ot = getattr(torch.optim, name)(t, **kw)
    for step in range(3):
        for lib, xs, opt in ((fastt, f, of), (torch, t, ot)):
            opt.zero_grad()
            loss = (xs[0] * xs[0].conj()).real.sum() * (step + 1) \
                + (xs[0].sum() * xs[1].sum()).abs()
            loss.backward()
            opt.step()
    for xf, xt in zip(f, t):
        np.testing.assert_allclose(_np(xf), _np(xt), rtol=1e-10)


def test_conj_physical_in_place_records():
    f, t = _leaves([((3,), C)], seed=31)
    yf, yt = f[0] * 1, t[0] * 1
    yf.conj_physical_()
    yt.conj_physical_()
    v = _arr((3,), 32, C)
    (yf * (1 + 2j)).backward(fastt.tensor(v))
    (yt * (1 + 2j)).backward(torch.tensor(v))
    np.testing.assert_allclose(_np(f[0].grad), _np(t[0].grad), rtol=1e-12)


def test_abs_in_place_is_refused_for_complex_as_torch():
    z = fastt.tensor([3 + 4j])
    with pytest.raises(RuntimeError, match="In-place abs is not supported"):
        z.abs_()
    y = fastt.tensor([3 + 4j], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="In-place abs is not supported"):
        y.abs_()


def test_grad_output_must_match_complexity():
    z = fastt.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        (z * 2).backward(fastt.ones(1))
    x = fastt.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        (x * 2).backward(fastt.tensor([1j]))


def test_real_view_gradient_arriving_at_an_odd_offset():
    # cat's backward narrows the real view's gradient to start mid-pair:
    # fastt copies it (torch 2.13 raises "storage_offset divisible by 2").
    f, _ = _leaves([((3,), R), ((2,), C)], seed=41)
    assert gradcheck(lambda a, z: fastt.cat(
        [a, fastt.view_as_real(z).flatten()]), f)

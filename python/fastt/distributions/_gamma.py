"""The standard Gamma(alpha, 1) sampler fastt lacks (torch._standard_gamma):
Marsaglia-Tsang rejection, vectorized with a bounded loop, with the
alpha < 1 boost; differentiable in alpha through the implicit
reparameterization gradient dx/dalpha = -(dF/dalpha) / (dF/dx), F the
regularized incomplete gamma function."""

import fastt

_MAX_ROUNDS = 64  # acceptance is > 95% per round for every alpha


def _sample_standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape and dtype (no autograd)."""
    with fastt.no_grad():
        a = alpha.detach()
        dtype = a.dtype
        boost = a < 1
        a1 = fastt.where(boost, a + 1, a)
        d = a1 - 1.0 / 3.0
        c = 1.0 / fastt.sqrt(9.0 * d)
        out = fastt.zeros_like(a)
        todo = fastt.ones_like(a, dtype=fastt.bool)
        for _ in range(_MAX_ROUNDS):
            x = fastt.randn(a.shape, dtype=dtype, device=a.device)
            u = fastt.rand(a.shape, dtype=dtype, device=a.device)
            v = (1 + c * x) ** 3
            vpos = v > 0
            logv = fastt.log(fastt.where(vpos, v, fastt.ones_like(v)))
            accept = vpos & (fastt.log(u) < 0.5 * x * x + d - d * v + d * logv)
            take = accept & todo
            out = fastt.where(take, d * v, out)
            todo = todo & ~accept
            if not bool(todo.any()):
                break
        # alpha < 1: Gamma(alpha) = Gamma(alpha + 1) * U^(1 / alpha)
        u = fastt.rand(a.shape, dtype=dtype, device=a.device)
        out = fastt.where(boost, out * u.pow(1.0 / a), out)
        return out.clamp(min=fastt.finfo(dtype).tiny)


def _standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) held at fixed CDF value, from a
    central difference of the regularized incomplete gamma function in
    alpha (in float64; the upper one where it is the smaller, for relative
    accuracy) over its density in x."""
    a = alpha.detach().double()
    xd = x.detach().double()
    h = 1e-5 * fastt.clamp(a, min=1.0)
    use_upper = xd > a
    lo = fastt.special.gammainc(a - h, xd)
    hi = fastt.special.gammainc(a + h, xd)
    lo_c = fastt.special.gammaincc(a - h, xd)
    hi_c = fastt.special.gammaincc(a + h, xd)
    dF_da = fastt.where(use_upper, -(hi_c - lo_c), hi - lo) / (2 * h)
    log_pdf = (a - 1) * fastt.log(xd) - xd - fastt.lgamma(a)
    grad = -dF_da * fastt.exp(-log_pdf)
    grad = fastt.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)
    return grad.to(alpha.dtype)


class _StandardGamma(fastt.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        x = _sample_standard_gamma(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        alpha, x = ctx.saved_tensors
        return grad_output * _standard_gamma_grad(alpha, x)


def standard_gamma(alpha):
    """Gamma(alpha, 1) samples; reparameterized (differentiable in alpha)."""
    if alpha.requires_grad and fastt.is_grad_enabled():
        return _StandardGamma.apply(alpha)
    return _sample_standard_gamma(alpha)

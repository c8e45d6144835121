"""gradcheck and gradgradcheck with torch's signatures: analytical
gradients (backward, one row of the Jacobian per output element) against
central finite differences."""

import warnings

from .. import _C

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when the Jacobians disagree."""


def _unravel(i, shape):
    pos = []
    for n in reversed(shape):
        pos.append(i % n)
        i //= n
    return tuple(reversed(pos))


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _grad(outputs, inputs, grad_outputs, create_graph=False):
    from . import grad
    return grad(outputs, inputs, grad_outputs, retain_graph=True,
                create_graph=create_graph, allow_unused=True)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3,
              raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
              check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Checks the gradients of ``func`` at ``inputs`` (the tensors that
    require grad; float64 recommended) against central finite differences.
    Returns True, or raises GradcheckError (returns False when
    raise_exception=False) naming the first mismatching entry."""
    from . import no_grad
    inputs = _as_tuple(inputs)
    diff = [t for t in inputs if isinstance(t, _C.Tensor) and t.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of the them have requires_grad=True.")
    for i, t in enumerate(inputs):
        if (isinstance(t, _C.Tensor) and t.requires_grad
                and t.dtype not in (_C.float64, _C.complex128)):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision "
                "floating point. This check will likely fail if all the "
                "inputs are not of double precision floating point. ")
    if check_forward_ad:
        raise NotImplementedError(
            "gradcheck: check_forward_ad needs forward-mode AD, which fastt "
            "does not have")

    def flat_outputs():
        return [o for o in _as_tuple(func(*inputs))
                if isinstance(o, _C.Tensor)]

    def fail(msg):
        if raise_exception:
            raise GradcheckError(msg)
        return False

    if not check_backward_ad:
        return True
    # Every analytical row first: perturbing the inputs below bumps their
    # version counters, which (rightly) invalidates the recorded graph.
    # Complex outputs get two seeds per element, 1 and 1j: backward with
    # seed v gives the gradient of the real loss Re(conj(v) y_j) (torch's
    # convention), dL/dRe x + i dL/dIm x for a complex input x.
    outs = flat_outputs()
    analytic = {}
    for oi, out in enumerate(outs):
        seeds = _seeds(out)
        if not out.requires_grad:  # its numerical Jacobian must be zero
            analytic[oi] = [[[None] * len(diff)] * len(seeds)] * out.numel()
            continue
        rows = []
        for j in range(out.numel()):
            row = []
            for v in seeds:
                g = _C.zeros_like(out)
                g.view(-1)[j] = v
                row.append(_grad([out], diff, [g]))
            rows.append(row)
        analytic[oi] = rows
        if nondet_tol == 0.0 and out.numel():
            # Reentrant: the same backward twice gives the same values.
            g = _C.zeros_like(out)
            g.view(-1)[0] = 1.0
            again = _grad([out], diff, [g])
            for a, b in zip(rows[0][0], again):
                if (a is None) != (b is None) or (
                        a is not None and not bool((a == b).all())):
                    return fail(
                        "Backward is not reentrant, i.e., running backward "
                        "with same input and grad_output multiple times "
                        "gives different values, although analytical "
                        "gradient matches numerical gradient.The tolerance "
                        "for nondeterminism was 0.0.")
        if check_grad_dtypes:
            for a, x in zip(rows[0][0] if rows else (), diff):
                if a is not None and (a.dtype != x.dtype
                                      or a.device != x.device):
                    return fail("Gradient has dtype mismatch" if
                                a.dtype != x.dtype else
                                "Gradient has device mismatch")
    del outs
    for k, x in enumerate(diff):
        xd = x.detach()  # shares memory; any layout
        # A complex input is perturbed along its real and imaginary parts.
        steps = (eps, eps * 1j) if x.dtype.is_complex else (eps,)
        for i in range(x.numel()):
            idx = _unravel(i, tuple(x.shape))
            orig = xd[idx].item()
            for step in steps:
                # Only the writes run without grad: func itself may need it
                # (gradgradcheck's func differentiates).
                with no_grad():
                    xd[idx] = orig + step
                plus = [o.detach().reshape(-1).clone()
                        for o in flat_outputs()]
                with no_grad():
                    xd[idx] = orig - step
                minus = [o.detach().reshape(-1).clone()
                         for o in flat_outputs()]
                with no_grad():
                    xd[idx] = orig
                err = _compare(analytic, plus, minus, k, i, step, eps, atol,
                               rtol)
                if err:
                    return fail(err)
    return True


def _seeds(out):
    return (1.0, 1j) if out.dtype.is_complex else (1.0,)


def _compare(analytic, plus, minus, k, i, step, eps, atol, rtol):
    """The first mismatch of input k's element i (perturbed by `step`)
    against every analytical row, as gradcheck's message, or None."""
    for oi, rows in analytic.items():
        for j, row in enumerate(rows):
            p, m = plus[oi][j].item(), minus[oi][j].item()
            for v, grads in zip((1.0, 1j), row):
                # The seed's real loss Re(conj(v) y_j), differenced.
                w = v.conjugate()
                numeric = ((p * w).real - (m * w).real) / (2 * eps)
                a = grads[k]
                a = 0.0 if a is None else a.reshape(-1)[i].item()
                a = a.imag if isinstance(step, complex) else a.real
                if abs(a - numeric) > atol + rtol * abs(numeric):
                    part = (" (imaginary part)" if isinstance(step, complex)
                            else "")
                    seed = " (grad_output 1j)" if v == 1j else ""
                    return (f"Jacobian mismatch for output {oi} with respect "
                            f"to input {k},\nnumerical:{numeric}\n"
                            f"analytical:{a}\n(output element {j}{seed}, "
                            f"input element {i}{part})")
    return None


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5,
                  rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradients: checks the second derivatives of
    ``func`` (through create_graph backward) by finite differences of its
    first derivatives. ``grad_outputs`` default to random tensors that
    require grad."""
    inputs = _as_tuple(inputs)
    if check_fwd_over_rev:
        raise NotImplementedError(
            "gradgradcheck: check_fwd_over_rev needs forward-mode AD, which "
            "fastt does not have")
    outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, _C.Tensor)]
    if grad_outputs is None:
        gen = _C.Generator().manual_seed(0) if hasattr(_C, "Generator") \
            else None
        grad_outputs = []
        for o in outs:
            g = (_C.randn(tuple(o.shape), generator=gen, dtype=o.dtype)
                 if gen is not None else _C.randn(tuple(o.shape),
                                                  dtype=o.dtype))
            if gen_non_contig_grad_outputs and g.dim() >= 2:
                g = g.t().contiguous().t()
            grad_outputs.append(g.requires_grad_())
    grad_outputs = list(_as_tuple(grad_outputs))
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs)
                if isinstance(t, _C.Tensor) and t.requires_grad]

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        outputs = [o for o in _as_tuple(func(*ins))
                   if isinstance(o, _C.Tensor)]
        pairs = [(o, g) for o, g in zip(outputs, gos) if o.requires_grad]
        diff = [ins[i] for i in diff_idx]
        gs = _grad([p[0] for p in pairs], diff, [p[1] for p in pairs],
                   create_graph=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, tuple(inputs) + tuple(grad_outputs),
                     eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, masked=masked)

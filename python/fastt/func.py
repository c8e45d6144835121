"""fastt.func: torch.func's functional_call, and grad / grad_and_value /
vjp over fastt's reverse-mode autograd (no vmap: fastt has no batching
transform)."""

import functools

from . import _C
from .nn.utils.stateless import functional_call  # noqa: F401

__all__ = ["functional_call", "grad", "grad_and_value", "vjp"]


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (d func / d args[argnums], func(*args))."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from .autograd import enable_grad, grad as _grad
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        with enable_grad():
            args = list(args)
            for i in nums:
                args[i] = args[i].detach().requires_grad_(True)
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f "
                        "should be a tuple: (output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, _C.Tensor) or out.numel() != 1:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a "
                    "scalar Tensor, got tensor with "
                    f"{getattr(out, 'dim', lambda: '?')()} dims.")
            gs = _grad([out], [args[i] for i in nums], allow_unused=True,
                       materialize_grads=True)
        g = gs[0] if isinstance(argnums, int) else tuple(gs)
        value = out.detach()
        return (g, (value, aux)) if has_aux else (g, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning d func / d args[argnums] (func returns a
    scalar)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn) where vjp_fn(cotangents) gives the
    gradients with respect to primals."""
    from .autograd import enable_grad, grad as _grad
    with enable_grad():
        prim = [p.detach().requires_grad_(True) for p in primals]
        out = func(*prim)
        aux = None
        if has_aux:
            out, aux = out

    def vjp_fn(*cotangents):
        outs = out if isinstance(out, tuple) else (out,)
        gs = _grad(list(outs), prim, list(cotangents), retain_graph=True,
                   allow_unused=True, materialize_grads=True)
        return tuple(gs)

    detached = (tuple(o.detach() for o in out) if isinstance(out, tuple)
                else out.detach())
    return (detached, vjp_fn, aux) if has_aux else (detached, vjp_fn)

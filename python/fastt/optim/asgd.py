"""ASGD (torch.optim.ASGD): one fused fastt._C._asgd_step per parameter
group; state per parameter: step, eta and mu (0-d float32 CPU tensors)
and ax (the average)."""

import fastt
from fastt import _C

from ._fused import _FusedOptimizer, _check_lr, _no_differentiable, _scalar
from .optimizer import _as_float

__all__ = ["ASGD"]


class ASGD(_FusedOptimizer):
    _NAMES = ("ax", "eta", "mu", "step")
    _SCALAR_STATE = ("eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6,
                 weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _no_differentiable("ASGD", differentiable)
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
            "weight_decay": weight_decay, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        st["step"] = _scalar(0.0)
        st["eta"] = _scalar(_as_float(group["lr"]))
        st["mu"] = _scalar(1.0)
        st["ax"] = fastt.zeros_like(p)

    def _fused_step(self, group, params, grads, lists):
        ax, eta, mu, steps = lists
        _C._asgd_step(params, grads, ax, eta, mu, steps,
                      _as_float(group["lr"]), group["lambd"], group["alpha"],
                      group["t0"], group["weight_decay"], group["maximize"])

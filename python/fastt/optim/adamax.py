"""Adamax (torch.optim.Adamax): one fused fastt._C._adamax_step per
parameter group; state per parameter: step (0-d float32 tensor), exp_avg
and exp_inf."""

import fastt
from fastt import _C

from ._fused import _FusedOptimizer, _check_lr, _no_differentiable, _scalar
from .optimizer import _as_float

__all__ = ["Adamax"]


class Adamax(_FusedOptimizer):
    _NAMES = ("exp_avg", "exp_inf", "step")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, foreach=None, *, maximize=False,
                 differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _no_differentiable("Adamax", differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps,
            "weight_decay": weight_decay, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        st["step"] = _scalar(0.0)
        st["exp_avg"] = fastt.zeros_like(p)
        st["exp_inf"] = fastt.zeros_like(p)

    def _fused_step(self, group, params, grads, lists):
        m, inf, steps = lists
        beta1, beta2 = group["betas"]
        _C._adamax_step(params, grads, m, inf, steps, _as_float(group["lr"]),
                        _as_float(beta1), _as_float(beta2), group["eps"],
                        group["weight_decay"], group["maximize"])

"""Adadelta (torch.optim.Adadelta): one fused fastt._C._adadelta_step per
parameter group; state per parameter: step (0-d float32 tensor),
square_avg and acc_delta."""

import fastt
from fastt import _C

from ._fused import _FusedOptimizer, _check_lr, _no_differentiable, _scalar
from .optimizer import _as_float

__all__ = ["Adadelta"]


class Adadelta(_FusedOptimizer):
    _NAMES = ("square_avg", "acc_delta", "step")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0,
                 foreach=None, *, capturable=False, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _no_differentiable("Adadelta", differentiable)
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable,
            "foreach": foreach, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        st["step"] = _scalar(0.0)
        st["square_avg"] = fastt.zeros_like(p)
        st["acc_delta"] = fastt.zeros_like(p)

    def _fused_step(self, group, params, grads, lists):
        sq, acc, steps = lists
        _C._adadelta_step(params, grads, sq, acc, steps,
                          _as_float(group["lr"]), group["rho"], group["eps"],
                          group["weight_decay"], group["maximize"])

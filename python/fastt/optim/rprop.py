"""Rprop (torch.optim.Rprop): one fused fastt._C._rprop_step per parameter
group; state per parameter: step (0-d float32 tensor), prev (the last
gradient used, zero where its sign flipped) and step_size (per element,
starting at lr)."""

import fastt
from fastt import _C

from ._fused import _FusedOptimizer, _check_lr, _no_differentiable, _scalar
from .optimizer import _as_float

__all__ = ["Rprop"]


class Rprop(_FusedOptimizer):
    _NAMES = ("prev", "step_size", "step")

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2),
                 step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _no_differentiable("Rprop", differentiable)
        defaults = {
            "lr": lr, "etas": etas, "step_sizes": step_sizes,
            "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        st["step"] = _scalar(0.0)
        st["prev"] = fastt.zeros_like(p)
        st["step_size"] = fastt.full_like(p, _as_float(group["lr"]))

    def _fused_step(self, group, params, grads, lists):
        prev, step_size, steps = lists
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        _C._rprop_step(params, grads, prev, step_size, steps,
                       _as_float(etaminus), _as_float(etaplus),
                       _as_float(lo), _as_float(hi), group["maximize"])

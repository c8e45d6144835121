"""NAdam (torch.optim.NAdam): one fused fastt._C._nadam_step per parameter
group; state per parameter: step and mu_product (0-d float32 tensors),
exp_avg and exp_avg_sq."""

import fastt
from fastt import _C

from ._fused import _FusedOptimizer, _check_lr, _no_differentiable, _scalar
from .optimizer import _as_float

__all__ = ["NAdam"]


class NAdam(_FusedOptimizer):
    _NAMES = ("exp_avg", "exp_avg_sq", "mu_product", "step")
    _SCALAR_STATE = ("mu_product",)
    _GROUP_DEFAULTS = _FusedOptimizer._GROUP_DEFAULTS + (
        ("decoupled_weight_decay", False),)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _no_differentiable("NAdam", differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps,
            "weight_decay": weight_decay, "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        st["step"] = _scalar(0.0)
        st["mu_product"] = _scalar(1.0)
        st["exp_avg"] = fastt.zeros_like(p)
        st["exp_avg_sq"] = fastt.zeros_like(p)

    def _fused_step(self, group, params, grads, lists):
        m, v, mu_products, steps = lists
        beta1, beta2 = group["betas"]
        _C._nadam_step(params, grads, m, v, mu_products, steps,
                       _as_float(group["lr"]), _as_float(beta1),
                       _as_float(beta2), group["eps"], group["weight_decay"],
                       group["momentum_decay"], group["maximize"],
                       group["decoupled_weight_decay"])

"""Adam and AdamW (torch.optim.Adam / AdamW): one fused fastt._C._adam_step
per parameter group; state per parameter: step (0-d float32 tensor),
exp_avg, exp_avg_sq and, with amsgrad, max_exp_avg_sq."""

import fastt
from fastt import _C

from .optimizer import Optimizer, _as_float

__all__ = ["Adam", "AdamW"]

_NAMES = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step")


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, amsgrad=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False,
                 fused=None, decoupled_weight_decay=False):
        if isinstance(lr, fastt.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], fastt.Tensor)
                    and isinstance(betas[1], fastt.Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        if differentiable:
            raise NotImplementedError(
                "fastt.optim.Adam: differentiable=True is not supported")
        betas = tuple(_as_float(b) for b in betas)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps,
            "weight_decay": weight_decay, "amsgrad": amsgrad,
            "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable,
            "fused": fused, "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                st = self.state.get(p)
                if st and not isinstance(st.get("step"), fastt.Tensor):
                    st["step"] = fastt.tensor(float(st["step"]),
                                              dtype=fastt.float32)

    def _init_state(self, p, amsgrad):
        st = self.state[p]
        st["step"] = fastt.tensor(0.0, dtype=fastt.float32)
        st["exp_avg"] = fastt.zeros_like(p)
        st["exp_avg_sq"] = fastt.zeros_like(p)
        if amsgrad:
            st["max_exp_avg_sq"] = fastt.zeros_like(p)

    def _group_step(self, group, index):
        params = group["params"]
        grads = [p.grad for p in params]
        amsgrad = group["amsgrad"]
        c = self._cache_for(index, group, amsgrad)
        if c is None or not c.complete:
            c = self._refresh(index, group, grads, amsgrad, c)
        m, v, vmax, steps = c.lists
        beta1, beta2 = group["betas"]
        _C._adam_step(params, grads, m, v, vmax if amsgrad else None, steps,
                      _as_float(group["lr"]), _as_float(beta1),
                      _as_float(beta2), group["eps"], group["weight_decay"],
                      amsgrad, group["maximize"],
                      group["decoupled_weight_decay"])

    def _refresh(self, index, group, grads, amsgrad, cache):
        params = group["params"]
        if cache is not None and not any(
                g is not None and s is None
                for g, s in zip(grads, cache.lists[3])):
            return cache  # still no state missing where a grad arrived
        state = self.state
        for p, g in zip(params, grads):
            if g is None:
                continue
            st = state.get(p)
            if not st:
                self._init_state(p, amsgrad)
            elif amsgrad and "max_exp_avg_sq" not in st:
                st["max_exp_avg_sq"] = fastt.zeros_like(p)
        lists, complete = self._state_lists(
            params, _NAMES if amsgrad else _NAMES[:2] + _NAMES[3:])
        if not amsgrad:
            lists.insert(2, None)
        return self._store_cache(index, group, amsgrad, lists, complete)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=1e-2, amsgrad=False, *, maximize=False,
                 foreach=None, capturable=False, differentiable=False,
                 fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad,
                         foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True

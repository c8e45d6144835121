"""Adagrad (torch.optim.Adagrad, dense gradients): one fused
fastt._C._adagrad_step per parameter group; state per parameter, created at
construction like torch: step (0-d float32 tensor) and sum (filled with
initial_accumulator_value)."""

import fastt
from fastt import _C

from .optimizer import Optimizer, _as_float

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *,
                 maximize=False, differentiable=False, fused=None):
        if isinstance(lr, fastt.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if differentiable:
            raise NotImplementedError(
                "fastt.optim.Adagrad: differentiable=True is not supported")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p):
        st = self.state[p]
        st["step"] = fastt.tensor(0.0, dtype=fastt.float32)
        st["sum"] = fastt.full_like(
            p, self.defaults["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                st = self.state.get(p)
                if st and not isinstance(st.get("step"), fastt.Tensor):
                    st["step"] = fastt.tensor(float(st["step"]),
                                              dtype=fastt.float32)

    def _group_step(self, group, index):
        params = group["params"]
        grads = [p.grad for p in params]
        c = self._cache_for(index, group, None)
        if c is None or not c.complete:
            c = self._refresh(index, group, grads, c)
        sums, steps = c.lists
        _C._adagrad_step(params, grads, sums, steps, _as_float(group["lr"]),
                         group["lr_decay"], group["weight_decay"],
                         group["eps"], group["maximize"])

    def _refresh(self, index, group, grads, cache):
        params = group["params"]
        if cache is not None and not any(
                g is not None and s is None
                for g, s in zip(grads, cache.lists[1])):
            return cache
        for p, g in zip(params, grads):
            if g is not None and not self.state.get(p):
                self._init_state(p)
        lists, complete = self._state_lists(params, ("sum", "step"))
        return self._store_cache(index, group, None, lists, complete)

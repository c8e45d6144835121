"""RMSprop (torch.optim.RMSprop): one fused fastt._C._rmsprop_step per
parameter group; state per parameter: step (0-d float32 tensor),
square_avg, momentum_buffer (momentum > 0) and grad_avg (centered)."""

import fastt
from fastt import _C

from .optimizer import Optimizer, _as_float

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
                 momentum=0, centered=False, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if isinstance(lr, fastt.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if differentiable:
            raise NotImplementedError(
                "fastt.optim.RMSprop: differentiable=True is not supported")
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
            "centered": centered, "weight_decay": weight_decay,
            "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                st = self.state.get(p)
                if st and not isinstance(st.get("step"), fastt.Tensor):
                    st["step"] = fastt.tensor(float(st["step"]),
                                              dtype=fastt.float32)

    def _group_step(self, group, index):
        params = group["params"]
        grads = [p.grad for p in params]
        use_mom = group["momentum"] > 0
        centered = group["centered"]
        key = (use_mom, centered)
        c = self._cache_for(index, group, key)
        if c is None or not c.complete:
            c = self._refresh(index, group, grads, key, c)
        sq, gavg, buf, steps = c.lists
        _C._rmsprop_step(params, grads, sq, gavg, buf, steps,
                         _as_float(group["lr"]), group["alpha"], group["eps"],
                         group["weight_decay"], group["momentum"], centered,
                         group["maximize"])

    def _refresh(self, index, group, grads, key, cache):
        params = group["params"]
        if cache is not None and not any(
                g is not None and s is None
                for g, s in zip(grads, cache.lists[3])):
            return cache
        use_mom, centered = key
        state = self.state
        for p, g in zip(params, grads):
            if g is None:
                continue
            st = state[p]
            if len(st) == 0:
                st["step"] = fastt.tensor(0.0, dtype=fastt.float32)
                st["square_avg"] = fastt.zeros_like(p)
                if use_mom:
                    st["momentum_buffer"] = fastt.zeros_like(p)
                if centered:
                    st["grad_avg"] = fastt.zeros_like(p)
            else:  # options changed since the state was made
                if use_mom and "momentum_buffer" not in st:
                    st["momentum_buffer"] = fastt.zeros_like(p)
                if centered and "grad_avg" not in st:
                    st["grad_avg"] = fastt.zeros_like(p)
        names = ["square_avg", "step"]
        if centered:
            names.insert(1, "grad_avg")
        if use_mom:
            names.insert(-1, "momentum_buffer")
        lists, complete = self._state_lists(params, names)
        sq = lists[0]
        gavg = lists[1] if centered else None
        buf = lists[-2] if use_mom else None
        return self._store_cache(index, group, key,
                                 [sq, gavg, buf, lists[-1]], complete)

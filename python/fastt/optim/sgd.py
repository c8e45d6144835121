"""SGD (torch.optim.SGD): one fused fastt._C._sgd_step per parameter group
(two on a step where some buffers are new); state per parameter, only with
momentum: momentum_buffer, created from the first gradient like torch."""

import fastt
from fastt import _C

from .optimizer import Optimizer, _as_float, required

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0,
                 weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if isinstance(lr, fastt.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError(
                "fastt.optim.SGD: differentiable=True is not supported")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov,
            "maximize": maximize, "foreach": foreach,
            "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _group_step(self, group, index):
        params = group["params"]
        grads = [p.grad for p in params]
        momentum = group["momentum"]
        lr = _as_float(group["lr"])
        wd, damp = group["weight_decay"], group["dampening"]
        nesterov, maximize = group["nesterov"], group["maximize"]
        if momentum == 0:
            _C._sgd_step(params, grads, None, lr, 0.0, damp, wd, nesterov,
                         maximize, False)
            return
        c = self._cache_for(index, group, True)
        if c is None or not c.complete:
            c = self._refresh(index, group, grads, c)
            if c is None:
                return  # the step was made while creating buffers
        _C._sgd_step(params, grads, c.lists[0], lr, momentum, damp, wd,
                     nesterov, maximize, False)

    def _refresh(self, index, group, grads, cache):
        """Makes the step for parameters whose buffer is new (torch's
        buf = grad.clone()) and the others; returns None, or the cache when
        no buffer is missing."""
        params = group["params"]
        if cache is not None and not any(
                g is not None and b is None
                for g, b in zip(grads, cache.lists[0])):
            return cache
        state = self.state
        new_p, new_g, new_b, old_p, old_g, old_b = [], [], [], [], [], []
        for p, g in zip(params, grads):
            if g is None:
                continue
            buf = state[p].get("momentum_buffer")
            if buf is None:
                new_p.append(p)
                new_g.append(g)
                new_b.append(fastt.empty_like(p))
            else:
                old_p.append(p)
                old_g.append(g)
                old_b.append(buf)
        lr = _as_float(group["lr"])
        args = (lr, group["momentum"], group["dampening"],
                group["weight_decay"], group["nesterov"], group["maximize"])
        _C._sgd_step(old_p, old_g, old_b, *args, False)
        _C._sgd_step(new_p, new_g, new_b, *args, True)
        for p, b in zip(new_p, new_b):
            state[p]["momentum_buffer"] = b
        lists, complete = self._state_lists(params, ("momentum_buffer",))
        self._store_cache(index, group, True, lists, complete)
        return None

"""_FusedOptimizer: the common hot path of the optimizers whose state is
created on a parameter's first gradient and whose options do not change
which state lists exist (Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop).
A subclass names its state lists in the fused call's order (_NAMES), makes
one parameter's state (_init_state) and makes the call (_fused_step)."""

import fastt

from .optimizer import Optimizer

__all__ = []


def _scalar(value):
    """A 0-d float32 CPU tensor (torch's state["step"] and friends)."""
    return fastt.tensor(float(value), dtype=fastt.float32)


class _FusedOptimizer(Optimizer):
    _NAMES = ()          # state names passed to the fused call, in order
    _SCALAR_STATE = ()   # 0-d tensor state besides "step" (kept on CPU)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for name, default in self._GROUP_DEFAULTS:
                group.setdefault(name, default)
            for p in group["params"]:
                st = self.state.get(p)
                if not st:
                    continue
                for key in ("step",) + self._SCALAR_STATE:
                    if key in st and not isinstance(st[key], fastt.Tensor):
                        st[key] = _scalar(st[key])

    _GROUP_DEFAULTS = (("foreach", None), ("maximize", False),
                       ("differentiable", False), ("capturable", False))

    def _init_state(self, p, group):
        raise NotImplementedError

    def _fused_step(self, group, params, grads, lists):
        raise NotImplementedError

    def _group_step(self, group, index):
        params = group["params"]
        grads = [p.grad for p in params]
        c = self._cache_for(index, group, None)
        if c is None or not c.complete:
            c = self._refresh(index, group, grads, c)
        self._fused_step(group, params, grads, c.lists)

    def _refresh(self, index, group, grads, cache):
        params = group["params"]
        if cache is not None and not any(
                g is not None and s is None
                for g, s in zip(grads, cache.lists[0])):
            return cache  # still no state missing where a grad arrived
        state = self.state
        for p, g in zip(params, grads):
            if g is not None and not state.get(p):
                self._init_state(p, group)
        lists, complete = self._state_lists(params, self._NAMES)
        return self._store_cache(index, group, None, lists, complete)


def _check_lr(lr):
    if isinstance(lr, fastt.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _no_differentiable(name, differentiable):
    if differentiable:
        raise NotImplementedError(
            f"fastt.optim.{name}: differentiable=True is not supported")

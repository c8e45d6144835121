"""fastt.nn.Parameter (and Buffer): tensors a Module registers when they are
assigned as attributes. Parameter is a fastt.Tensor subclass made with
Tensor._make_subclass, so every op takes it without a conversion."""

import fastt
from fastt import Tensor

# Tensor._make_subclass(cls, data, requires_grad) comes with autograd. Until
# the extension has it, a Parameter aliases `data` through Tensor.__new__
# (which shares storage) and keeps requires_grad as a plain attribute.
_HAS_MAKE_SUBCLASS = hasattr(Tensor, "_make_subclass")


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one as a Module
    attribute registers it in parameters(). requires_grad defaults to True.
    Results of ops on a Parameter are plain Tensors, as in torch."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = fastt.empty(0)
        if _HAS_MAKE_SUBCLASS:
            # Called through the instance: works whether the extension
            # registers _make_subclass as a static or a plain method.
            return data._make_subclass(cls, data, requires_grad)
        self = Tensor.__new__(cls, data)
        self._fallback_requires_grad = bool(requires_grad)
        return self

    if not _HAS_MAKE_SUBCLASS:
        # Stand-in until autograd lands (never used once it has).
        @property
        def requires_grad(self):
            return self._fallback_requires_grad

        @requires_grad.setter
        def requires_grad(self, value):
            self._fallback_requires_grad = bool(value)

        def requires_grad_(self, requires_grad=True):
            self._fallback_requires_grad = bool(requires_grad)
            return self

        grad = None

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


class Buffer(Tensor):
    """torch.nn.Buffer: a marker that makes `module.name = Buffer(t)`
    register `t` as a buffer (persistent unless persistent=False)."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = fastt.empty(0)
        self = Tensor.__new__(cls, data)
        self.persistent = persistent
        return self

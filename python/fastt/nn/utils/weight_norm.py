"""fastt.nn.utils.weight_norm / remove_weight_norm: torch's older,
hook-based weight normalization (parameters <name>_g and <name>_v; the
weight is recomputed before every forward). New code should use
fastt.nn.utils.parametrizations.weight_norm."""

import warnings

from ..parameter import Parameter
from .parametrizations import _norm_except_dim

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name, dim):
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
            stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError("Cannot register two weight_norm hooks on "
                                   f"the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(
            name + "_g", Parameter(_norm_except_dim(weight, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        object.__setattr__(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        object.__delattr__(module, self.name) \
            if self.name in module.__dict__ else None
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            module._fastt_refresh_hooked()
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")

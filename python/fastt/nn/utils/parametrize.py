"""fastt.nn.utils.parametrize: torch's parametrizations. A parametrized
tensor is computed from the parameters of module.parametrizations[name]
(`original`, or original0, original1, ... when right_inverse returns
several) every time it is read, through a property of a per-class
subclass (the module's class is swapped, as torch does); assigning to it
runs the right inverses. state_dict keys are torch's
(parametrizations.weight.original)."""

import contextlib

import fastt
from fastt import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization",
           "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Inside the block, each parametrized tensor is computed once (on
    first read) and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, X):
    if isinstance(X, Parameter):
        module.register_parameter(name, X)
    else:
        module.register_buffer(name, X)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its unconstrained
    original(s)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError(
                "ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with fastt.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, (list, tuple)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of "
                f"tensors (list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not "
                    "change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}")
            with fastt.no_grad():
                if tuple(original.shape) == tuple(new.shape):
                    original.copy_(new)
                else:
                    original = Parameter(new.clone(),
                                         original.requires_grad) \
                        if isinstance(original, Parameter) else new.clone()
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence "
                        "of tensors (list, tuple...). Got element "
                        f"{i} of the sequence with type "
                        f"{type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach().clone(),
                                          original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}",
                                              originali)
        if not self.unsafe:
            Z = self()
            if not isinstance(Z, Tensor):
                raise ValueError(
                    "A parametrization must return a tensor. Got "
                    f"{type(Z).__name__}.")
            if Z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype "
                    "of the tensor, unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {Z.dtype}")
            if tuple(Z.shape) != tuple(original_shape):
                raise ValueError(
                    "Registering a parametrization may not change the shape "
                    "of the tensor, unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {Z.shape}")

    def right_inverse(self, value):
        """Sets the original(s) so that the parametrized tensor is value."""
        with fastt.no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not "
                        "implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got "
                        f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype "
                        f"{value.dtype} while `original` has dtype "
                        f"{self.original.dtype}")
                self.original.copy_(value)
            else:
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors "
                        f"of length {self.ntensors}. Got a sequence of "
                        f"length {len(value)}")
                for i, tensor in enumerate(value):
                    getattr(self, f"original{i}").copy_(tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            originals = (getattr(self, f"original{i}")
                         for i in range(self.ntensors))
            x = self[0](*originals)
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        import copy
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through "
            "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
            "saving_loading_models.html#saving-loading-a-general-checkpoint-"
            "for-inference-and-or-resuming-training")

    dct = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), dct)
    param_cls._fastt_unparametrized = cls
    # The subclass must not get a fast __call__ of its own forward (it has
    # none): it inherits cls's.
    module.__class__ = param_cls


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            tensor = _cache.get(key)
            if tensor is None:
                tensor = parametrization()
                _cache[key] = tensor
            return tensor
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name,
            property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *,
                             unsafe=False):
    """Makes module.<tensor_name> the output of parametrization applied to
    a new parameter (torch.nn.utils.parametrize.register_parametrization).
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got "
                    f"{type(X).__name__}.")
            if X.dtype != Y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype "
                    "of the tensor, unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {Y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: "
                    f"{X.dtype}")
            if tuple(X.shape) != tuple(Y.shape):
                raise ValueError(
                    "Registering a parametrization may not change the shape "
                    "of the tensor, unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {Y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: "
                    f"{X.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(Z, Tensor):
                        raise ValueError(
                            "parametrization.right_inverse must return a "
                            f"tensor. Got: {type(Z).__name__}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original,
                                               unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    parametrizations = module.__dict__.get("_modules", {}).get(
        "parametrizations")
    if parametrizations is None or not isinstance(parametrizations,
                                                  ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations of module.<tensor_name>; it becomes a
    parameter again holding its current value (or the original)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(
            f"Module {module} does not have a parametrization on "
            f"{tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with fastt.no_grad():
                t = getattr(module, tensor_name)
            with fastt.no_grad():
                if tuple(t.shape) == tuple(original.shape) and \
                        t.dtype == original.dtype:
                    original.copy_(t)
                else:
                    original = Parameter(t.detach().clone(),
                                         original.requires_grad) \
                        if isinstance(original, Parameter) else t.detach()
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a "
                "tensor that is parametrized in terms of a sequence of "
                "tensors.")
        with fastt.no_grad():
            t = getattr(module, tensor_name)
        if parametrizations.original0.requires_grad:
            original = Parameter(t.detach().clone(), True)
        else:
            original = t.detach().clone()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__._fastt_unparametrized
    return module


def type_before_parametrizations(module):
    if is_parametrized(module):
        return module.__class__._fastt_unparametrized
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module,
                                         tensor_name=None):
    """Copies from_module's parametrizations (and their originals) to
    to_module."""
    if not is_parametrized(from_module):
        return to_module
    names = ([tensor_name] if isinstance(tensor_name, str) else
             list(from_module.parametrizations))
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for p in from_module.parametrizations[name]:
            register_parametrization(to_module, name, p)
        with fastt.no_grad():
            src = from_module.parametrizations[name]
            dst = to_module.parametrizations[name]
            if src.is_tensor:
                dst.original.copy_(src.original)
            else:
                for i in range(src.ntensors):
                    getattr(dst, f"original{i}").copy_(
                        getattr(src, f"original{i}"))
    return to_module


"""fastt.nn.Module: the base class of every layer, with torch.nn.Module's
API (registration, traversal, state_dict, hooks, repr). To add a layer,
subclass Module, create parameters in __init__ and write forward().

Speed: parameters, buffers and submodules are kept in torch's three
registries (_parameters, _buffers, _modules) AND mirrored into the
instance __dict__, so `self.weight` in forward() is a plain attribute load
instead of a trip through __getattr__ (~7 ns instead of ~360 ns here); the
class defines no __getattr__ at all, which keeps CPython's specialised
attribute loads; and __call__ goes straight to forward() when no hook is
registered."""

import inspect
import itertools
import weakref
from collections import OrderedDict, namedtuple

import fastt
from fastt import Tensor

from ..parameter import Buffer, Parameter

__all__ = ["Module", "RemovableHandle"]


def _no_grad():
    ng = getattr(fastt, "no_grad", None)
    if ng is None:
        import contextlib
        return contextlib.nullcontext()
    return ng()


def _typename(obj):
    return fastt.typename(obj) if isinstance(obj, Tensor) else (
        type(obj).__module__ + "." + type(obj).__qualname__
        if type(obj).__module__ not in ("builtins", None)
        else type(obj).__qualname__)


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    pad = " " * num_spaces
    return first + "\n" + "\n".join(pad + line for line in lines)


class _Registry(dict):
    """One of a module's three registries. Writes are mirrored into the
    owner's __dict__ (see the module docstring); reads are plain dict
    reads. Pickles as a plain dict; Module.__setstate__ rebuilds it."""

    __slots__ = ("_mirror",)

    def __init__(self, mirror=None, items=()):
        dict.__init__(self, items)
        self._mirror = mirror
        if mirror is not None:
            mirror.update(self)

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, value)
        if self._mirror is not None:
            self._mirror[key] = value

    def __delitem__(self, key):
        dict.__delitem__(self, key)
        if self._mirror is not None:
            self._mirror.pop(key, None)

    def pop(self, key, *default):
        had = key in self
        value = dict.pop(self, key, *default)
        if had and self._mirror is not None:
            self._mirror.pop(key, None)
        return value

    def popitem(self):
        key, value = dict.popitem(self)
        if self._mirror is not None:
            self._mirror.pop(key, None)
        return key, value

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self):
        if self._mirror is not None:
            for key in self:
                self._mirror.pop(key, None)
        dict.clear(self)

    def __reduce__(self):
        return (dict, (dict(self),))

    def __copy__(self):
        return dict(self)


_REGISTRIES = ("_parameters", "_buffers", "_modules")
# Bumped by every attribute assignment on any module (training flags,
# parameters, hyperparameters such as Dropout.p): fastt.compile re-checks
# the modules a captured step used only when it moved.
_STATE_EPOCH = [0]


class RemovableHandle:
    """Returned by the register_*_hook methods; remove() unregisters the
    hook. Usable as a context manager."""

    _next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None, module=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.module_ref = None if module is None else weakref.ref(module)
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        if extra_dict is None:
            extra_dict = []
        elif isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]
        module = self.module_ref() if self.module_ref is not None else None
        if module is not None:
            module._fastt_refresh_hooked()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


class _IncompatibleKeys(
        namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _parse_to(args, kwargs):
    """(device, dtype, non_blocking) from Module.to's argument forms."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("copy", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError("to() got an unexpected keyword argument '"
                        + next(iter(kwargs)) + "'")
    for a in args:
        if isinstance(a, fastt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, fastt.device)):
            device = fastt.device(a) if isinstance(a, str) else a
        elif isinstance(a, bool):
            non_blocking = a
        elif isinstance(a, int):
            device = fastt.device("cuda", a)
        else:
            raise TypeError("to() received an invalid combination of "
                            "arguments: " + repr(args))
    if isinstance(device, str):
        device = fastt.device(device)
    if dtype is not None and not dtype.is_floating_point:
        raise TypeError("nn.Module.to only accepts floating point or complex "
                        f"dtypes, but got desired dtype={dtype}")
    return device, dtype, non_blocking


_global_forward_hooks = OrderedDict()
_global_forward_pre_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    """A forward pre-hook called for every module (torch's global hook)."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook):
    """A forward hook called for every module (torch's global hook)."""
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


_FAST_CALL_TEMPLATE = """
def __call__(self, {args}):
    if (self._fastt_hooked or _fastt_global_hooks
            or _fastt_global_pre_hooks):
        return self._call_impl({args})
    return self.forward({args})
"""


def _install_fast_call(cls):
    """Gives `cls` a __call__ with forward()'s exact positional signature
    when forward takes only required positional arguments (Linear, Conv2d,
    activations, losses, Sequential, most user modules): packing and
    re-spreading *args/**kwargs costs ~170 ns a call on the dev machine,
    a fixed signature almost nothing. Other signatures keep the generic
    __call__; a user-written __call__ wins. Hooks see the arguments
    positionally even when the caller named them."""
    for klass in cls.__mro__:
        if klass is Module:
            break
        own = klass.__dict__.get("__call__")
        if own is not None and not getattr(own, "_fastt_fast_call", False):
            return
    generic = Module.__dict__["__call__"]
    forward = cls.__dict__.get("forward", None)
    if forward is None:
        return  # inherits the parent's choice, made for the same forward
    names = None
    code = getattr(forward, "__code__", None)
    if (code is not None and inspect.isfunction(forward)
            and not forward.__defaults__ and not code.co_kwonlyargcount
            and not code.co_posonlyargcount
            and not code.co_flags & (inspect.CO_VARARGS
                                     | inspect.CO_VARKEYWORDS)
            and code.co_argcount >= 1):
        names = list(code.co_varnames[1:code.co_argcount])
    if names is None or any(n.startswith("_fastt_") or n == "self"
                            for n in names):
        cls.__call__ = generic
        return
    namespace = {"_fastt_global_hooks": _global_forward_hooks,
                 "_fastt_global_pre_hooks": _global_forward_pre_hooks}
    exec(_FAST_CALL_TEMPLATE.format(args=", ".join(names)), namespace)
    fast = namespace["__call__"]
    fast._fastt_fast_call = True
    fast.__qualname__ = getattr(forward, "__qualname__", "forward")
    fast.__doc__ = generic.__doc__
    cls.__call__ = fast


class Module:
    """Base class of all layers (torch.nn.Module)."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and (args or kwargs):
            if kwargs:
                raise TypeError(
                    f"{type(self).__name__}.__init__() got an unexpected "
                    f"keyword argument '{next(iter(kwargs))}'")
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional "
                f"argument but {len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Registry(d)
        d["_buffers"] = _Registry(d)
        d["_non_persistent_buffers_set"] = set()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = _Registry(d)
        d["_fastt_hooked"] = False
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required '
            '"forward" function')

    # ---- calling ----
    def __call__(self, *args, **kwargs):
        if (self._fastt_hooked or _global_forward_hooks
                or _global_forward_pre_hooks):
            return self._call_impl(*args, **kwargs)
        return self.forward(*args, **kwargs)

    __call__._fastt_fast_call = True

    def _fastt_runs_hooks(self):
        # Whether a call runs hooks around forward (_call_impl): the test
        # of __call__ (and of the fast __call__ of _install_fast_call).
        return bool(self._fastt_hooked or _global_forward_hooks
                    or _global_forward_pre_hooks)

    def _fastt_refresh_hooked(self):
        # The one flag the call path tests: any per-module forward or
        # backward hook (kept by the register_* methods, handle.remove()
        # and __setstate__).
        d = self.__dict__
        d["_fastt_hooked"] = bool(
            d.get("_forward_pre_hooks") or d.get("_forward_hooks")
            or d.get("_backward_hooks") or d.get("_backward_pre_hooks"))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _install_fast_call(cls)

    def _call_impl(self, *args, **kwargs):
        pre_hooks = list(_global_forward_pre_hooks.items()) + list(
            self._forward_pre_hooks.items())
        with_kwargs = self._forward_pre_hooks_with_kwargs
        for hook_id, hook in pre_hooks:
            if hook_id in with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {result}.")
            else:
                result = hook(self, args)
                if result is not None:
                    if not isinstance(result, tuple):
                        result = (result,)
                    args = result
        hooks = list(_global_forward_hooks.items()) + list(
            self._forward_hooks.items())
        always = self._forward_hooks_always_called
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            from ...utils.hooks import BackwardHook
            bw_hook = BackwardHook(self, list(self._backward_hooks.values()),
                                   list(self._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in hooks:
                if hook_id in always:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:
                        pass
            raise
        for hook_id, hook in hooks:
            if hook_id in self._forward_hooks_with_kwargs:
                hook_result = hook(self, args, kwargs, result)
            else:
                hook_result = hook(self, args, result)
            if hook_result is not None:
                result = hook_result
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        return result

    def register_forward_pre_hook(self, hook, *, prepend=False,
                                  with_kwargs=False):
        handle = RemovableHandle(
            self._forward_pre_hooks,
            extra_dict=self._forward_pre_hooks_with_kwargs, module=self)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        self._fastt_refresh_hooked()
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs,
                        self._forward_hooks_always_called], module=self)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        self._fastt_refresh_hooked()
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or new grad_input,
        called when the gradients of the module's positional tensor inputs
        are computed."""
        handle = RemovableHandle(self._backward_hooks, module=self)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        self._fastt_refresh_hooked()
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or new grad_output, called
        when the gradients of the module's outputs are computed."""
        handle = RemovableHandle(self._backward_pre_hooks, module=self)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        self._fastt_refresh_hooked()
        return handle

    def register_backward_hook(self, hook):
        """Deprecated in torch in favour of register_full_backward_hook;
        fastt gives it the full hook's semantics."""
        return self.register_full_backward_hook(hook)

    def register_state_dict_pre_hook(self, hook):
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- registration ----
    def register_buffer(self, name, tensor, persistent=True):
        _STATE_EPOCH[0] += 1
        d = self.__dict__
        if "_buffers" not in d:
            raise AttributeError(
                "cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError("buffer name should be a string. Got "
                            + _typename(name))
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in d["_buffers"]:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to "
                            f"buffer '{name}' (fastt Tensor or None "
                            "required)")
        if isinstance(tensor, Buffer):
            tensor = Tensor(tensor)
        d["_buffers"][name] = tensor
        if persistent:
            d["_non_persistent_buffers_set"].discard(name)
        else:
            d["_non_persistent_buffers_set"].add(name)

    def register_parameter(self, name, param):
        _STATE_EPOCH[0] += 1
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError("parameter name should be a string. Got "
                            + _typename(name))
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in d["_parameters"]:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            d["_parameters"][name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to "
                            f"parameter '{name}' (fastt.nn.Parameter or None "
                            "required)")
        if getattr(param, "grad_fn", None) is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                "parameters must be created explicitly. To express "
                f"'{name}' as a function of another Tensor, compute the value "
                "in the forward() method.")
        d["_parameters"][name] = param

    def add_module(self, name, module):
        _STATE_EPOCH[0] += 1
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError("module name should be a string. Got "
                            + _typename(name))
        d = self.__dict__
        if "_modules" not in d:
            raise AttributeError(
                "cannot assign module before Module.__init__() call")
        if hasattr(self, name) and name not in d["_modules"]:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        d["_modules"][name] = module

    register_module = add_module

    def _remove_everywhere(self, name, keep=None):
        # Drops `name` from every registry but `keep` (whose order stays).
        d = self.__dict__
        for reg in _REGISTRIES:
            if reg == keep:
                continue
            r = d.get(reg)
            if r is not None and name in r:
                del r[name]
        d.pop(name, None)
        nps = d.get("_non_persistent_buffers_set")
        if nps is not None:
            nps.discard(name)

    def __setattr__(self, name, value):
        _STATE_EPOCH[0] += 1  # fastt.compile's guards re-check modules
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call")
            self._remove_everywhere(name, "_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter "
                    f"'{name}' (fastt.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call")
            self._remove_everywhere(name, "_modules")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module "
                    f"'{name}' (fastt.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None
                                         and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(fastt.nn.Buffer, fastt.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in d["_non_persistent_buffers_set"]
            if buffers is not None and name not in buffers:
                self._remove_everywhere(name)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    # No __getattr__: the registries are mirrored into __dict__, so a missing
    # name is a plain AttributeError ("'Linear' object has no attribute
    # 'x'", torch's message too). Defining one would make CPython take its
    # slow attribute path for every self.weight / self.training (~50 ns
    # each, several per layer call).

    def __delattr__(self, name):
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del d["_parameters"][name]
        elif name in d.get("_buffers", ()):
            del d["_buffers"][name]
            d["_non_persistent_buffers_set"].discard(name)
        elif name in d.get("_modules", ()):
            del d["_modules"][name]
        else:
            object.__delattr__(self, name)

    def __getstate__(self):
        state = self.__dict__.copy()
        for reg in _REGISTRIES:
            if reg in state:
                state[reg] = dict(state[reg])
        return state

    def __setstate__(self, state):
        d = self.__dict__
        d.update(state)
        for reg in _REGISTRIES:
            d[reg] = _Registry(d, d.get(reg) or ())
        for attr in ("_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called",
                     "_forward_pre_hooks_with_kwargs", "_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            d.setdefault(attr, OrderedDict())
        self._fastt_refresh_hooked()

    def __dir__(self):
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        keys = module_attrs + attrs
        keys = [k for k in keys if not k[0].isdigit()]
        return sorted(set(keys))

    # ---- traversal ----
    def _named_members(self, get_members_fn, prefix="", recurse=True,
                       remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix,
                                      remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                name = module_prefix + ("." if module_prefix else "") + k
                yield name, v

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(),
                                   prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(),
                                   prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            submodule_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, submodule_prefix,
                                            remove_duplicate)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `"
                                     + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `"
                                 + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an "
                                 "nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `"
                                 + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return mod._buffers[buffer_name]

    # ---- modes ----
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if getattr(g, "grad_fn", None) is not None:
                    g = g.detach()
                    p.grad = g
                g.zero_()

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- dtype / device ----
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        params = self._parameters
        for key, param in list(params.items()):
            if param is None:
                continue
            with _no_grad():
                applied = fn(param)
            if applied is param:
                continue
            # Keep the Parameter object (optimizers hold it): swap its data.
            try:
                param.data = applied
            except (AttributeError, TypeError, RuntimeError):
                params[key] = Parameter(applied, param.requires_grad)
                param = params[key]
            grad = getattr(param, "grad", None)
            if grad is not None:
                with _no_grad():
                    grad_applied = fn(grad)
                if grad_applied is not grad:
                    param.grad = grad_applied
        buffers = self._buffers
        for key, buf in list(buffers.items()):
            if buf is not None:
                buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        device, dtype, non_blocking = _parse_to(args, dict(kwargs))

        def convert(t):
            if dtype is not None and t.is_floating_point():
                return t.to(device=device, dtype=dtype)
            if device is not None:
                return t.to(device)
            return t
        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        if device is None:
            return self._apply(lambda t: t.cuda())
        return self._apply(lambda t: t.cuda(device))

    def float(self):
        return self._apply(
            lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(
            lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(
            lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(
            lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    # ---- state dict ----
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (param if keep_vars
                                              else param.detach())
        nps = self._non_persistent_buffers_set
        for name, buf in self._buffers.items():
            if buf is not None and name not in nps:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if (type(self).get_extra_state is not Module.get_extra_state):
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self):
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should "
            "never be called.")

    def set_extra_state(self, state):
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should "
            "never be called.")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            # torch's deprecated positional form: destination, prefix,
            # keep_vars
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination,
                                  prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {})
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs,
                              assign=False):
        nps = self._non_persistent_buffers_set
        local_state = {k: v for k, v in itertools.chain(
            self._parameters.items(),
            ((k, v) for k, v in self._buffers.items() if k not in nps))
            if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected '
                    "fastt.Tensor or Tensor-like object from checkpoint but "
                    f"received {type(input_param)}")
                continue
            if param.dim() == 0 and input_param.dim() == 1 \
                    and input_param.shape[0] == 1:
                input_param = input_param[0]  # torch's pre-0.4 checkpoints
            if input_param.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{input_param.shape} from checkpoint, the shape in "
                    f"current model is {param.shape}.")
                continue
            try:
                if assign:
                    _STATE_EPOCH[0] += 1
                    if isinstance(param, Parameter):
                        new = (input_param if isinstance(input_param,
                                                         Parameter)
                               else Parameter(input_param,
                                              param.requires_grad))
                        self._parameters[name] = new
                    else:
                        self._buffers[name] = input_param
                else:
                    with _no_grad():
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose '
                    f"dimensions in the model are {param.shape} and whose "
                    "dimensions in the checkpoint are "
                    f"{input_param.shape}, an exception occurred : {ex.args}.")
        extra_state_key = prefix + "_extra_state"
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and not (has_extra
                                                   and key == extra_state_key):
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict):
            raise TypeError("Expected state_dict to be dict-like, got "
                            f"{type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = ({} if metadata is None
                              else metadata.get(prefix[:-1], {}))
            module._load_from_state_dict(
                local_state_dict, prefix, local_metadata, True, missing_keys,
                unexpected_keys, error_msgs, assign)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items()
                                   if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)

        load(self, state_dict)
        del load
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. "
                                  .format(", ".join(f'"{k}"'
                                                    for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. "
                                  .format(", ".join(f'"{k}"'
                                                    for k in missing_keys)))
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- repr ----
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

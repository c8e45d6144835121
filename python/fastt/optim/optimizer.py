"""Optimizer: torch.optim.Optimizer's API (param_groups, state, add_param_group,
zero_grad, state_dict / load_state_dict in torch's format) over fastt's fused
multi-tensor steps. A subclass declares the per-parameter state it keeps and
implements _group_step(group, cache), which makes ONE fastt._C call per group.

The hot path avoids per-parameter Python work: each group caches the lists
of its parameters' state tensors, rebuilt only when the parameters, the state
or the options that shape it change (group["params"] and the state dicts are
list/dict subclasses whose writes bump an epoch counter), so a step costs one
list comprehension over ``p.grad`` and one C call; the C call skips
parameters whose grad is None, like torch.
"""

import contextlib
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import fastt
from fastt._compile import host_call as _host_call

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# Bumped by every write to optimizer state (any optimizer): group caches
# built before a write are rebuilt on the next step.
_epoch = [0]


def _bump(*_):
    _epoch[0] += 1


class _ParamState(dict):
    """One parameter's state dict; writes invalidate the step caches."""

    __slots__ = ()

    def __setitem__(self, key, value):
        _epoch[0] += 1
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        _epoch[0] += 1
        dict.__delitem__(self, key)

    def _mutating(name):
        base = getattr(dict, name)

        def method(self, *args, **kwargs):
            _epoch[0] += 1
            return base(self, *args, **kwargs)

        method.__name__ = name
        return method

    update = _mutating("update")
    pop = _mutating("pop")
    popitem = _mutating("popitem")
    clear = _mutating("clear")
    setdefault = _mutating("setdefault")
    __ior__ = _mutating("__ior__")
    del _mutating

    def __reduce__(self):  # pickles (and deep-copies) as a plain dict
        return (dict, (dict(self),))


class _ParamList(list):
    """group["params"]: in-place changes invalidate the step caches."""

    __slots__ = ()

    def _mutating(name):
        base = getattr(list, name)

        def method(self, *args, **kwargs):
            _epoch[0] += 1
            return base(self, *args, **kwargs)

        method.__name__ = name
        return method

    for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__",
                  "append", "extend", "insert", "pop", "remove", "clear",
                  "sort", "reverse"):
        locals()[_name] = _mutating(_name)
    del _name, _mutating

    def __reduce__(self):  # pickles (and deep-copies) as a plain list
        return (list, (list(self),))


class _State(defaultdict):
    """optimizer.state: param -> _ParamState, created on first access."""

    def __init__(self, *args):
        super().__init__(_ParamState, *args)

    def __setitem__(self, key, value):
        _epoch[0] += 1
        if not isinstance(value, _ParamState) and isinstance(value, dict):
            value = _ParamState(value)
        defaultdict.__setitem__(self, key, value)

    def __delitem__(self, key):
        _epoch[0] += 1
        defaultdict.__delitem__(self, key)

    def __missing__(self, key):
        value = _ParamState()
        self[key] = value
        return value

    def __reduce__(self):
        return (dict, (dict(self),))

    def __deepcopy__(self, memo):
        return _State({k: _ParamState(deepcopy(dict(v), memo))
                       for k, v in self.items()})


def _enable_grad():
    enable = getattr(fastt, "enable_grad", None)
    return enable() if enable is not None else contextlib.nullcontext()


def _to_fastt(value):
    """A fastt tensor for a tensor value (a torch tensor from a torch state
    dict is copied into one); None for anything else."""
    if isinstance(value, fastt.Tensor):
        return value
    if (hasattr(value, "detach") and hasattr(value, "numpy")
            and hasattr(value, "cpu")):
        return fastt.tensor(value.detach().cpu().numpy())
    return None


def _as_float(x):
    return x if type(x) is float else float(x)


class _GroupCache:
    """Per-group lists handed to the fused step (see Optimizer._cache_for)."""

    __slots__ = ("params", "state", "epoch", "key", "lists", "complete")

    def __init__(self, params, state, key, lists, complete):
        self.params = params
        self.state = state
        self.epoch = _epoch[0]
        self.key = key
        self.lists = lists
        self.complete = complete


class _RemovableHandle:
    """What register_step_*_hook returns: .remove() unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Optimizer:
    """Base class of the fastt optimizers (torch.optim.Optimizer's API)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, fastt.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable "
                "of Tensors or dicts, but got " + fastt.typename(params))
        self.state = _State()
        self.param_groups = []
        self._caches = {}
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- pickling / repr ----
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        state = dict(state)
        st = state.get("state", {})
        if not isinstance(st, _State):
            st = _State({k: _ParamState(v) for k, v in st.items()})
        state["state"] = st
        for group in state.get("param_groups", []):
            if not isinstance(group["params"], _ParamList):
                group["params"] = _ParamList(group["params"])
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        self._caches = {}
        self.defaults.setdefault("differentiable", False)
        _bump()

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        s += ")"
        return s

    # ---- groups ----
    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(
                f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, fastt.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered "
                "collections, but the ordering of tensors in sets will change "
                "between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = _ParamList(tensors)
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError(
                    "all optimizer params should be with/without names. Some "
                    "param names are missing")

        for param in param_group["params"]:
            if not isinstance(param, fastt.Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the "
                    "params is " + fastt.typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    getattr(param, "is_leaf", True)
                    or getattr(param, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required "
                    f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            import warnings
            warnings.warn(
                "optimizer contains a parameter group with duplicate "
                "parameters; in future, this will cause an error; see "
                "github.com/pytorch/pytorch/issues/40967 for more "
                "information", stacklevel=3)

        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = ("with names" if "param_names" in param_group
                         else "without names")
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError(
                "some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
        _bump()

    # ---- gradients ----
    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if getattr(g, "grad_fn", None) is not None:
                        g = g.detach()
                        p.grad = g
                    elif getattr(g, "requires_grad", False):
                        g.requires_grad_(False)
                    g.zero_()

    # ---- state dicts (torch's format) ----
    def state_dict(self):
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update(
                {id(p): i for i, p in enumerate(group["params"], start_index)
                 if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, fastt.Tensor) else k): v
            for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError(
                "loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't "
                "match the size of optimizer's group")
        id_map = dict(zip(
            chain.from_iterable(g["params"] for g in saved_groups),
            chain.from_iterable(g["params"] for g in groups)))

        # 0-d tensor state besides "step" (NAdam's mu_product, ASGD's eta
        # and mu): cast to the parameter's dtype like torch, but kept on
        # the CPU where the fused steps read it.
        scalar_keys = getattr(self, "_SCALAR_STATE", ())

        def cast(param, value, key=None):
            t = _to_fastt(value) if not isinstance(value, (dict, str, bytes,
                                                           list, tuple)) \
                else None
            if t is not None:
                if key == "step":  # stays a CPU scalar, as the steps read it
                    return t if t.device.type == "cpu" else t.cpu()
                if param.is_floating_point() and t.dtype != param.dtype:
                    t = t.to(param.dtype)
                if key in scalar_keys:  # 0-d state the fused steps read
                    return t if t.device.type == "cpu" else t.cpu()
                if t.device != param.device:
                    t = t.to(param.device)
                return t
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = _State()
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _ParamState(cast(param, v))
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]  # the same _ParamList
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng)
                        for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

    # ---- stepping ----
    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) runs before each step; it may return
        new (args, kwargs)."""
        handle = _RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) runs after each step."""
        handle = _RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @_host_call
    def step(self, closure=None):
        if self._optimizer_step_pre_hooks or self._optimizer_step_post_hooks:
            return self._step_with_hooks(closure)
        loss = None
        if closure is not None:
            with _enable_grad():
                loss = closure()
        for i, group in enumerate(self.param_groups):
            self._group_step(group, i)
        return loss

    def _step_with_hooks(self, closure):
        args, kwargs = (), {"closure": closure}
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, "
                        f"new_kwargs), but got {result}.")
                args, kwargs = result
        pre, post = (self._optimizer_step_pre_hooks,
                     self._optimizer_step_post_hooks)
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        try:
            out = self.step(*args, **kwargs)
        finally:
            self._optimizer_step_pre_hooks = pre
            self._optimizer_step_post_hooks = post
        for hook in list(post.values()):
            hook(self, args, kwargs)
        return out

    def _group_step(self, group, index):
        raise NotImplementedError

    def _cache_for(self, index, group, key):
        """The group's cache when still valid for `key` (the options that
        shape the state lists), else None."""
        c = self._caches.get(index)
        if (c is None or c.epoch != _epoch[0] or c.key != key
                or c.params is not group["params"]
                or c.state is not self.state):
            return None
        return c

    def _store_cache(self, index, group, key, lists, complete):
        c = _GroupCache(group["params"], self.state, key, lists, complete)
        self._caches[index] = c
        return c

    def _state_lists(self, params, names):
        """Lists of state[p][name] (None where absent) for each name."""
        state = self.state
        out = [[] for _ in names]
        complete = True
        for p in params:
            st = state.get(p)
            for lst, name in zip(out, names):
                t = st.get(name) if st is not None else None
                if t is None:
                    complete = False
                lst.append(t)
        return out, complete

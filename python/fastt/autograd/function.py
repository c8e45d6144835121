"""fastt.autograd.Function: custom differentiable operations, as torch's.

A Function's forward runs with grad mode off; when an input requires grad,
``apply`` records one node of fastt's tape (``_C._record_function``) whose
backward calls the class's ``backward`` with the gradients of the outputs.
The node owns the context object; saved tensors live in the node (checked
against in-place changes, freed by a backward pass without retain_graph,
routed through saved_tensors_hooks), so saving an output makes no cycle.
"""

import functools
import inspect

from .. import _C

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction",
           "once_differentiable"]

_Tensor = _C.Tensor


class FunctionCtx:
    """The ``ctx`` a Function's forward/setup_context and backward share."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        raise RuntimeError(
            "mark_shared_storage is deprecated. Tensors with shared storages "
            "are automatically tracked.")

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        saved = self.__dict__.get("_fastt_saved")
        if saved is not None:  # inside backward
            return saved
        node = self.__dict__.get("_fastt_node")
        if node is not None:
            return _C._custom_saved(node)
        to_save = self.__dict__.get("to_save")
        if to_save is not None:  # forward or setup_context, not recorded yet
            return tuple(to_save)
        if "_fastt_node" in self.__dict__:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or "
                "directly access saved tensors after they have already been "
                "freed).")
        return ()

    @property
    def saved_variables(self):
        return self.saved_tensors


class BackwardCFunction(FunctionCtx):
    """The class of a Function's ctx (and of its outputs' grad_fn)."""

    _forward_cls = None

    def apply(self, *args):
        return self._forward_cls.backward(self, *args)

    def name(self):
        return type(self).__name__

    def _fastt_backward(self, grads, saved):
        cls = self._forward_cls
        self._fastt_saved = saved
        try:
            backward = cls.backward
            if (backward is _SingleLevelFunction.backward
                    and cls.vjp is not _SingleLevelFunction.vjp):
                backward = cls.vjp
            result = backward(self, *grads)
        finally:
            self._fastt_saved = None
        return _check_grads(type(self).__name__, result, self._fastt_is_tensor)


def _check_grads(name, result, is_tensor):
    if not isinstance(result, tuple):
        result = (result,)
    n = len(is_tensor)
    if len(result) != n:
        if len(result) > n and all(g is None for g in result[n:]):
            result = result[:n]
        else:
            raise RuntimeError(
                f"function {name} returned an incorrect number of gradients "
                f"(expected {n}, got {len(result)})")
    for i, (g, t) in enumerate(zip(result, is_tensor)):
        if g is None:
            continue
        if not t:
            raise RuntimeError(
                f"function {name} returned a gradient different than None at "
                f"position {i + 1}, but the corresponding forward input was "
                "not a Variable")
        if not isinstance(g, _Tensor):
            raise TypeError(
                f"function {name} returned a gradient of type "
                f"{type(g).__name__} at position {i + 1}; expected a Tensor "
                "or None")
    return result


class FunctionMeta(type):
    """Gives each Function subclass its ctx class, named <Name>Backward."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,),
                            {"_forward_cls": cls})
        backward_cls._fastt_setup_style = _overrides_setup_context(cls)
        cls._backward_cls = backward_cls
        cls._fastt_signature = None
        super().__init__(name, bases, attrs)


def _overrides_setup_context(cls):
    base = globals().get("_SingleLevelFunction")
    return base is not None and cls.setup_context is not base.setup_context


class _SingleLevelFunction(metaclass=FunctionMeta):
    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom "
            "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your "
            "custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your "
            "custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function "
            "to use it with forward mode AD (fastt has no forward mode AD).")


class Function(_SingleLevelFunction):
    """Base class of custom differentiable operations (torch's).

    Subclasses define ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grads)``
    as staticmethods, and are called through ``MyFn.apply(*args)``::

        class Exp(fastt.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                y, = ctx.saved_tensors
                return g * y

        y = Exp.apply(x)
    """

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is "
            "deprecated. Please use new-style autograd function with static "
            "forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "fastt has no vmap; Function.vmap is not used.")

    @classmethod
    def apply(cls, *args, **kwargs):
        setup_style = cls._backward_cls._fastt_setup_style
        if kwargs or setup_style:  # torch binds defaults for setup_context
            sig = cls._fastt_signature
            if sig is None:
                sig = cls._fastt_signature = inspect.signature(cls.forward)
            if setup_style:
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                args = bound.args
            else:
                bound = sig.bind(None, *args, **kwargs)
                bound.apply_defaults()
                args = bound.args[1:]
        ctx = cls._backward_cls()
        grad_on = _C.is_grad_enabled()
        is_tensor = tuple(isinstance(a, _Tensor) for a in args)
        ctx._fastt_is_tensor = is_tensor
        if grad_on:
            ctx.needs_input_grad = tuple(
                t and a.requires_grad for t, a in zip(is_tensor, args))
        else:
            ctx.needs_input_grad = (False,) * len(args)
        ctx.materialize_grads = True
        _C._set_grad_enabled(False)
        try:
            if setup_style:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            _C._set_grad_enabled(grad_on)
        single = not isinstance(output, tuple)
        outs = (output,) if single else output
        d = ctx.__dict__
        to_save = d.pop("to_save", None)
        dirty = d.get("dirty_tensors", ())
        non_diff = d.get("non_differentiable", ())
        res = _C._record_function(
            ctx, cls._backward_cls.__name__,
            [a if t else None for a, t in zip(args, is_tensor)],
            [o if isinstance(o, _Tensor) else None for o in outs],
            to_save, dirty, non_diff, ctx.materialize_grads)
        res = [r if isinstance(o, _Tensor) else o for r, o in zip(res, outs)]
        if d.get("_fastt_node") is None and to_save is not None:
            d["to_save"] = to_save  # not recorded: saved_tensors reads it
        return res[0] if single else tuple(res)

    @staticmethod
    def _compiled_autograd_key(ctx):
        return (id(ctx),)


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (torch's)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class _DelayedError(Function):
    """Outputs whose backward raises: what once_differentiable's results
    become when grad mode is on (a backward pass with create_graph), so that
    differentiating them again fails with a clear message."""

    @staticmethod
    def forward(ctx, msg, *outs):
        ctx.msg = msg
        return outs

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


def once_differentiable(fn):
    """Runs a Function's backward with grad mode off; differentiating its
    results again raises (torch's once_differentiable)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        grad_on = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            _C._set_grad_enabled(grad_on)
        if not grad_on or not any(isinstance(a, _Tensor) and a.requires_grad
                                  for a in args):
            return outputs  # torch's rule: nothing to tie the error to
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # torch's fake_requires_grad: detached leaves that require grad, so
        # the error node has inputs and its outputs a grad_fn.
        fake = [o.detach().requires_grad_(True)
                if isinstance(o, _Tensor) and o.is_floating_point() else o
                for o in outs]
        res = _DelayedError.apply(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable", *fake)
        return res[0] if single else res

    return wrapper

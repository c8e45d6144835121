"""fastt.utils.checkpoint: activation checkpointing, as torch's.

use_reentrant=True: a custom Function whose forward runs without grad and
whose backward reruns the function with grad and backpropagates through
the rerun (a walk inside the walk; .grad() is refused, as torch does).

use_reentrant=False: the forward runs normally under saved_tensors_hooks
that keep only a handle per saved tensor; the first unpack in backward
reruns the function under hooks that collect the recomputed tensors (and
stops as soon as every live handle has its tensor). The graph is the
original one, so autograd.grad, keyword arguments and inputs that do not
require grad all work.
"""

import contextlib
import warnings
import weakref

from .. import _C
from ..autograd import Function, enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..random import fork_rng

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError",
           "CheckpointFunction", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "check_backward_validity"]

_Tensor = _C.Tensor


class CheckpointError(RuntimeError):
    """Recomputation did not reproduce the forward pass."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: ",
            type(inputs).__name__)
    out = []
    for inp in inputs:
        if not isinstance(inp, _Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(isinstance(i, _Tensor) and i.requires_grad for i in inputs):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be "
            "None")


_early_stop = [True]
_debug = [False]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    prev = _early_stop[0]
    _early_stop[0] = bool(enable)
    try:
        yield
    finally:
        _early_stop[0] = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    prev = _debug[0]
    _debug[0] = enabled
    try:
        yield
    finally:
        _debug[0] = prev


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = _C._get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, _Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if not _C._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is "
                "incompatible with .grad() or passing an `inputs` parameter "
                "to .backward(). To resolve this error, you can either set "
                "use_reentrant=False, or call .backward() without passing "
                "the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                _C._set_rng_state(ctx.fwd_rng_state)
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, _Tensor):
            outputs = (outputs,)
        outs, grads = [], []
        for o, g in zip(outputs, args):
            if isinstance(o, _Tensor) and o.requires_grad:
                outs.append(o)
                grads.append(g)
        if not outs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is "
                "not necessary")
        _C._run_backward(outs, grads, False, False, None)
        return (None, None) + tuple(
            inp.grad if isinstance(inp, _Tensor) else None
            for inp in detached)


class _StopRecomputation(Exception):
    pass


class _Handle:
    """What a checkpointed forward keeps for one saved tensor."""

    __slots__ = ("index", "__weakref__")

    def __init__(self, index):
        self.index = index


class _Frame:
    """One checkpointed call: the function and its inputs, the handles of
    the tensors its forward saved, and the recomputed tensors by handle."""

    def __init__(self, fn, args, kwargs, rng_state, recompute_context,
                 determinism_check):
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.recompute_context = recompute_context
        self.check = determinism_check != "none"
        self.handles = []      # weak references, in save order
        self.meta = []         # (shape, dtype, device) per save
        self.recomputed = weakref.WeakKeyDictionary()

    def pack(self, t):
        h = _Handle(len(self.handles))
        self.handles.append(weakref.ref(h))
        self.meta.append((tuple(t.shape), t.dtype, t.device))
        return h

    def unpack(self, h):
        t = self.recomputed.get(h)
        if t is None:
            self.recompute()
            t = self.recomputed.get(h)
            if t is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a "
                    "tensor that was already unpacked once. If you are "
                    "calling ctx.saved_tensors in backward, make sure to do "
                    "so only once. Otherwise please open an issue with "
                    "details on your use case.")
        return t

    def recompute(self):
        wanted = sum(1 for r in self.handles
                     if r() is not None and r() not in self.recomputed)
        counter = [0, 0]  # saves seen, handles filled
        early = _early_stop[0]

        def pack(t):
            i = counter[0]
            counter[0] += 1
            if i >= len(self.handles):
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors "
                    "during recomputation than during the original forward "
                    "pass.")
            if self.check and (tuple(t.shape), t.dtype, t.device) != \
                    self.meta[i]:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the "
                    "following tensors have different metadata than during "
                    "the forward pass.\n"
                    f"tensor at position {i}:\n"
                    f"saved metadata: {self.meta[i]}\n"
                    f"recomputed metadata: "
                    f"{(tuple(t.shape), t.dtype, t.device)}\n")
            h = self.handles[i]()
            if h is not None and h not in self.recomputed:
                self.recomputed[h] = t.detach()
                counter[1] += 1
                if early and counter[1] >= wanted:
                    raise _StopRecomputation
            return None

        def unpack(_):
            raise CheckpointError(
                "torch.utils.checkpoint: unpack is called on a tensor saved "
                "during recomputation")

        with fork_rng(enabled=self.rng_state is not None):
            if self.rng_state is not None:
                _C._set_rng_state(self.rng_state)
            try:
                with enable_grad(), self.recompute_context, \
                        saved_tensors_hooks(pack, unpack):
                    self.fn(*self.args, **self.kwargs)
            except _StopRecomputation:
                pass
        if counter[1] < wanted:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was "
                "saved during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.handles)}"
                f"\nNumber of tensors saved during recomputation: "
                f"{counter[0]}.")


def _checkpoint_without_reentrant(fn, preserve_rng_state, context_fn,
                                  determinism_check, *args, **kwargs):
    forward_context, recompute_context = context_fn()
    rng = _C._get_rng_state() if preserve_rng_state else None
    frame = _Frame(fn, args, kwargs, rng, recompute_context,
                   determinism_check)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return fn(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None,
               context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Runs ``function(*args, **kwargs)`` keeping only what is needed to
    run it again: its activations are recomputed in backward (torch's
    torch.utils.checkpoint.checkpoint; pass use_reentrant explicitly)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. "
            "use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. "
            "Refer to docs for more details on the differences between the "
            "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError(
            "Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError(
            "determinism_check should be one of ['default', 'none'], but got "
            f"{determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when "
                "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    with set_checkpoint_early_stop(early_stop and _early_stop[0]):
        return _checkpoint_without_reentrant(
            function, preserve, context_fn, determinism_check, *args,
            **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None,
                          **kwargs):
    """Splits a Sequential (or list of modules) into ``segments`` chunks and
    checkpoints all but the last."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. In version 2.9 we will "
            "raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. "
            "Refer to docs for more details on the differences between the "
            "two variants.")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(
            "Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(inp):
            for j in range(start, end + 1):
                inp = functions[j](inp)
            return inp
        return forward

    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)

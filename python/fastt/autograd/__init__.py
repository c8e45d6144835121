"""fastt.autograd: grad mode switches (no_grad, enable_grad,
set_grad_enabled, inference_mode), backward() and grad() over the C++
tape engine (autograd/ in the source tree), custom Functions
(function.py), saved-tensor hooks (graph.py), the functional API
(functional.py: jacobian, hessian, vjp, jvp, hvp, vhp) and
gradcheck/gradgradcheck (gradcheck.py)."""

import functools

from .. import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "backward", "grad",
           "gradcheck", "gradgradcheck", "Function", "once_differentiable",
           "functional", "graph", "function", "Variable",
           "set_multithreading_enabled"]

is_grad_enabled = _C.is_grad_enabled


class _GradModeBase:
    """A context manager that is also a decorator (torch's _DecoratorContextManager)."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return func(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()

    def clone(self):
        return self.__class__(*self._args())


class no_grad(_GradModeBase):
    """Disables gradient recording in this thread inside the block."""

    def __new__(cls, orig_func=None):  # bare @no_grad works too
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class enable_grad(_GradModeBase):
    """Enables gradient recording inside the block (e.g. within no_grad)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        self.prev = True

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class set_grad_enabled(_GradModeBase):
    """Sets grad mode now (usable as a function) and restores it on exit
    when used as a context manager."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)

    def _args(self):
        return (self.mode,)

    def __call__(self, func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class inference_mode(_GradModeBase):
    """Like no_grad (fastt keeps no separate inference-tensor state)."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        self.prev = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        if self.mode:
            _C._set_grad_enabled(False)
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev[0])
        _C._set_inference_mode(self.prev[1])
        return False


def _seq(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None,
             create_graph=False, inputs=None):
    """Accumulates d(tensors)/d(leaves) into the leaves' .grad."""
    _C._run_backward(_seq(tensors), _seq(grad_tensors), retain_graph,
                     create_graph, _seq(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None,
         create_graph=False, only_inputs=True, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """Returns d(outputs)/d(inputs) as a tuple, without touching .grad."""
    if is_grads_batched:
        raise NotImplementedError("grad: is_grads_batched is not supported")
    single = isinstance(inputs, _C.Tensor)
    allow = bool(allow_unused) or materialize_grads
    result = _C._run_grad(_seq(outputs), _seq(inputs), _seq(grad_outputs),
                          retain_graph, create_graph, allow)
    if materialize_grads:
        ins = _seq(inputs)
        result = tuple(g if g is not None else _C.zeros_like(i)
                       for g, i in zip(result, ins))
    return result if not single else result


from . import function, graph  # noqa: E402
from .function import Function, once_differentiable  # noqa: E402,F401
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402,F401
from . import functional  # noqa: E402

is_inference_mode_enabled = _C.is_inference_mode_enabled
Variable = _C.Tensor  # torch's deprecated alias


class set_multithreading_enabled(_GradModeBase):
    """Accepted for compatibility: fastt's backward runs in the calling
    thread either way."""

    def __init__(self, mode):
        self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        return False

_is_checkpoint_valid = _C._is_checkpoint_valid

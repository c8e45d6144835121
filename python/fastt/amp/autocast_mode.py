"""fastt.autocast / fastt.amp.autocast: torch's autocast context manager
and decorator over csrc/autocast.h (the ops' cast policies live there; the
Python-composed losses of fastt.nn.functional cast through fp32_policy
below)."""

import functools
import warnings

from .. import _C

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available",
           "fp32_policy", "lower_policy"]

_DEVICE_TYPES = ("cpu", "cuda")
_SUPPORTED = {"cpu": ("bfloat16", "float16"), "cuda": ("float16", "bfloat16")}
_nesting = [0]


def is_autocast_available(device_type):
    return device_type in _DEVICE_TYPES


class autocast:
    """Runs the region's matmuls, convolutions and recurrent layers in a
    lower precision and its losses (and, on CUDA, softmax, norms and
    reductions) in float32, as torch.autocast(device_type, dtype, enabled,
    cache_enabled)."""

    def __init__(self, device_type, dtype=None, enabled=True,
                 cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError("Expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(
                "User specified an unsupported autocast device_type "
                f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = (_C._get_autocast_dtype(device_type) if dtype is None
                           else dtype)
        self._cache_enabled = (_C._is_autocast_cache_enabled()
                               if cache_enabled is None else cache_enabled)
        enabled = bool(enabled)
        name = str(self.fast_dtype).split(".")[-1]
        if enabled and device_type == "cuda" and not _cuda_available():
            warnings.warn(
                "User provided device_type of 'cuda', but CUDA is not "
                "available. Disabling")
            enabled = False
        if enabled and name not in _SUPPORTED[device_type]:
            if device_type == "cpu":
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. "
                    "Disabling autocast.\nCPU Autocast only supports dtype of "
                    "torch.bfloat16, torch.float16 currently.")
            else:
                warnings.warn(
                    "In CUDA autocast, but the target dtype is not supported. "
                    "Disabling autocast.\nCUDA Autocast only supports dtypes "
                    "of torch.float16 and torch.bfloat16 currently.")
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        d = self.device
        self.prev = _C._is_autocast_enabled(d)
        self.prev_dtype = _C._get_autocast_dtype(d)
        self.prev_cache = _C._is_autocast_cache_enabled()
        _C._set_autocast_enabled(d, self._enabled)
        if self._enabled:
            _C._set_autocast_dtype(d, self.fast_dtype)
        _C._set_autocast_cache_enabled(self._cache_enabled)
        _nesting[0] += 1
        return self

    def __exit__(self, *exc):
        _nesting[0] -= 1
        if _nesting[0] == 0:
            _C._clear_autocast_cache()
        _C._set_autocast_enabled(self.device, self.prev)
        _C._set_autocast_dtype(self.device, self.prev_dtype)
        _C._set_autocast_cache_enabled(self.prev_cache)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self.__class__(self.device, self.fast_dtype, self._enabled,
                                self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast


def _cuda_available():
    try:
        from .. import cuda
        return cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


def _cast_fp32(value, device_types):
    if isinstance(value, _C.Tensor):
        if (value.is_floating_point() and value.dtype != _C.float64
                and value.device.type in device_types
                and value.dtype != _C.float32):
            return value.float()
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_fp32(v, device_types) for v in value)
    return value


def fp32_policy(fn):
    """Decorator for ops written in Python that torch's autocast runs in
    float32 (the losses): when autocast is on for a device, its 16-bit
    floating tensor arguments are cast to float32 first. One C flag test
    when autocast is off."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _C._autocast_active():
            return fn(*args, **kwargs)
        on = tuple(d for d in _DEVICE_TYPES if _C._is_autocast_enabled(d))
        args = tuple(_cast_fp32(a, on) for a in args)
        kwargs = {k: _cast_fp32(v, on) for k, v in kwargs.items()}
        with autocast(on[0], enabled=False):
            if len(on) > 1:
                with autocast(on[1], enabled=False):
                    return fn(*args, **kwargs)
            return fn(*args, **kwargs)

    return wrapper


def _cast_lower(value, targets):
    if isinstance(value, _C.Tensor):
        to = targets.get(value.device.type)
        if (to is not None and value.is_floating_point()
                and value.dtype != _C.float64 and value.dtype != to):
            return value.to(to)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_lower(v, targets) for v in value)
    return value


def lower_policy(fn):
    """Decorator for ops written in Python that torch's autocast runs in
    the low precision (prelu): floating tensor arguments (not float64) are
    cast to the autocast dtype of their device."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _C._autocast_active():
            return fn(*args, **kwargs)
        targets = {d: _C._get_autocast_dtype(d) for d in _DEVICE_TYPES
                   if _C._is_autocast_enabled(d)}
        args = tuple(_cast_lower(a, targets) for a in args)
        kwargs = {k: _cast_lower(v, targets) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return wrapper


def custom_fwd(fwd=None, *, device_type=None, cast_inputs=None):
    """For a custom Function's forward: records the autocast state for
    backward and, with cast_inputs, runs forward with autocast off on
    inputs cast to that dtype (torch.amp.custom_fwd)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type,
                                 cast_inputs=cast_inputs)
    if device_type is None:
        device_type = "cuda"  # torch.cuda.amp.custom_fwd's default

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._fwd_used_autocast = _C._is_autocast_enabled(device_type)
        ctx._dtype = _C._get_autocast_dtype(device_type)
        if cast_inputs is None:
            return fwd(*args, **kwargs)
        if ctx._fwd_used_autocast:
            def cast(v):
                if isinstance(v, _C.Tensor) and v.is_floating_point() and \
                        v.device.type == device_type:
                    return v.to(cast_inputs)
                if isinstance(v, (list, tuple)):
                    return type(v)(cast(x) for x in v)
                return v
            with autocast(device_type, enabled=False):
                return fwd(*[cast(a) for a in args],
                           **{k: cast(v) for k, v in kwargs.items()})
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type=None):
    """For a custom Function's backward: runs it under the autocast state
    its forward saw (torch.amp.custom_bwd)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    if device_type is None:
        device_type = "cuda"

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=getattr(ctx, "_fwd_used_autocast",
                                                   False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)

    return decorate_bwd

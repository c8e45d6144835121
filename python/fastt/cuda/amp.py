"""fastt.cuda.amp: torch.cuda.amp's deprecated aliases (FutureWarning, as
torch) of fastt.amp.autocast("cuda", ...), GradScaler("cuda"),
custom_fwd and custom_bwd."""

import functools
import warnings

from .. import _C
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast
from ..amp import custom_bwd as _custom_bwd
from ..amp import custom_fwd as _custom_fwd

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=_C.float16, cache_enabled=True):
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
            stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype,
                         cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0**16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
            stacklevel=2)
        super().__init__("cuda", init_scale=init_scale,
                         growth_factor=growth_factor,
                         backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    return _custom_bwd(bwd, device_type="cuda")


del functools

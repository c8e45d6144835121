"""fastt.cpu.amp: torch.cpu.amp's deprecated aliases (FutureWarning, as
torch) of fastt.amp.autocast("cpu", ...) and fastt.amp.GradScaler("cpu")."""

import warnings

from .. import _C
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=_C.bfloat16, cache_enabled=True):
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
            stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype,
                         cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0**16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
            stacklevel=2)
        super().__init__("cpu", init_scale=init_scale,
                         growth_factor=growth_factor,
                         backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)

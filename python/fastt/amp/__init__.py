"""fastt.amp: automatic mixed precision as torch.amp: autocast (the cast
policies are in csrc/autocast.h), GradScaler, custom_fwd/custom_bwd."""

from .autocast_mode import (autocast, custom_bwd, custom_fwd,  # noqa: F401
                            is_autocast_available)
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available",
           "GradScaler"]

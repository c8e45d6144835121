"""fastt.signal: torch.signal's window functions (fastt.signal.windows)."""
from . import windows  # noqa: F401

__all__ = ["windows"]

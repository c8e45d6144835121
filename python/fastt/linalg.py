"""fastt.linalg: torch.linalg's functions that fastt implements (each a C++
op bound in fastt._C)."""
from ._C import _linalg_cross as cross  # noqa: F401

__all__ = ["cross"]

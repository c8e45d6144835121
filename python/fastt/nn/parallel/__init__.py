"""fastt.nn.parallel: torch.nn.parallel's DistributedDataParallel over
fastt.distributed (which is imported only when a DDP is built, so that
`import fastt.nn` never depends on it)."""

from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]

"""fastt.cpu: torch.cpu's names that CPU code reaches for (amp)."""

from . import amp  # noqa: F401

__all__ = ["amp", "is_available", "device_count", "synchronize",
           "current_device"]


def is_available():
    return True


def device_count():
    return 1


def synchronize(device=None):
    """CPU ops finish before they return."""


def current_device():
    return "cpu"

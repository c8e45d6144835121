"""fastt.nn: torch.nn's layers, containers, losses and functional API,
written in Python over fastt ops (the op calls are where time goes; the
Module machinery stays out of the way: see modules/module.py)."""

from .parameter import Buffer, Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __dict__ as _modules_dict
from .modules.module import (  # noqa: F401
    register_module_forward_hook, register_module_forward_pre_hook)
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401

__all__ = ["Parameter", "Buffer", "functional", "init", "utils"] + [
    name for name, value in _modules_dict.items()
    if isinstance(value, type) and not name.startswith("_")]
del _modules_dict

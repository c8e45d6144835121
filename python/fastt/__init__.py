"""fastt: an eager tensor library with PyTorch's API and a near-zero
per-op overhead. Everything here comes from the C extension fastt._C
(csrc/python/); this file only re-exports it and adds torch's aliases."""

from . import _C
from ._C import (  # noqa: F401
    Size,
    Tensor,
    device,
    dtype,
)

__version__ = "0.1.0"

# Every public function of the extension becomes fastt.<name>.
for _name in dir(_C):
    if not _name.startswith("_"):
        globals()[_name] = getattr(_C, _name)
del _name

# dtypes and torch's aliases for them.
bool = _C.bool  # noqa: A001 - torch shadows the builtin the same way
uint8 = _C.uint8
int8 = _C.int8
int16 = short = _C.int16
int32 = int = _C.int32  # noqa: A001
int64 = long = _C.int64
float16 = half = _C.float16
bfloat16 = _C.bfloat16
float32 = float = _C.float32  # noqa: A001
float64 = double = _C.float64


def is_grad_enabled():
    """Autograd is not wired into the Python package yet."""
    return False


def numel(input):
    return input.numel()


def typename(obj):
    if isinstance(obj, Tensor):
        return "fastt." + {
            float32: "FloatTensor", float64: "DoubleTensor",
            float16: "HalfTensor", bfloat16: "BFloat16Tensor",
            int64: "LongTensor", int32: "IntTensor", int16: "ShortTensor",
            int8: "CharTensor", uint8: "ByteTensor", bool: "BoolTensor",
        }[obj.dtype]
    return type(obj).__name__


import builtins as _builtins  # noqa: E402


class _Cuda:
    """fastt.cuda: only what the CPU-only package needs."""

    @staticmethod
    def is_available():
        return _builtins.bool(_C._cuda_built)

    @staticmethod
    def device_count():
        return 1 if _C._cuda_built else 0


cuda = _Cuda()

__all__ = [n for n in globals() if not n.startswith("_")]

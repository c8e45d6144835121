"""fastt: an eager tensor library with PyTorch's API and a near-zero
per-op overhead. Everything here comes from the C extension fastt._C
(python/src/); this file only re-exports it and adds torch's aliases."""

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
complex64 = cfloat = _C.complex64
complex128 = cdouble = _C.complex128


from . import random  # noqa: E402
from .random import get_rng_state, set_rng_state  # noqa: E402,F401
from . import autograd  # noqa: E402
from .autograd import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
    """A 0-d tensor of the number s, in the default float dtype unless
    dtype is given (torch.scalar_tensor: True gives 1.0)."""
    t = tensor(s, dtype=dtype or get_default_dtype(), device=device)
    return t.requires_grad_(True) if requires_grad else t


def fill(input, value):
    """A tensor like input with every element value (input unchanged).
    Gradients, as torch's: zeros to input, the sum to a tensor value."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor "
                               f"but got tensor with {value.ndim} "
                               "dimensions.")
        v = value.to(input.dtype)
    else:
        v = tensor(value, dtype=input.dtype, device=input.device)
    return where(ones_like(input, dtype=bool), v, input)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None,
             requires_grad=False, layout=None, pin_memory=False, out=None):
    """base ** (the exponents from start to end), as torch's kernel: start
    and end are first rounded to dtype (the default float dtype unless
    given; an integer dtype truncates), their difference is taken in dtype,
    and the exponents (counted up from start in the first half, down from
    end in the second) and the power are float64, cast to dtype at the
    end."""
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim != 0:
            raise RuntimeError("logspace only supports 0-dimensional start "
                               f"and end tensors, but got {name} with "
                               f"{v.ndim} dimension(s).")
    if isinstance(start, Tensor):
        start = start.item()
    if isinstance(end, Tensor):
        end = end.item()
    if steps < 0:
        raise RuntimeError("logspace: number of steps must be "
                           "non-negative")
    if out is not None and dtype is None:
        dtype = out.dtype
    dtype = dtype or get_default_dtype()
    base = _builtins.float(base)
    if steps <= 1:  # torch: base ** start in float64, unrounded
        t = full((steps,), base ** _builtins.float(start), dtype=float64,
                 device=device).to(dtype)
    else:
        s = tensor(start, dtype=dtype)
        e = tensor(end, dtype=dtype)
        step = (e - s).item() / (steps - 1)
        s, e = s.item(), e.item()
        i = arange(steps, dtype=float64, device=device)
        exps = where(i < steps // 2, s + step * i, e - step * (steps - 1 - i))
        t = pow(base, exps).to(dtype)
    if out is not None:
        return out.copy_(t)
    return t.requires_grad_(True) if requires_grad else t


def numel(input):
    return input.numel()


def typename(obj):
    if isinstance(obj, Tensor):
        return "fastt." + {
            float32: "FloatTensor", float64: "DoubleTensor",
            float16: "HalfTensor", bfloat16: "BFloat16Tensor",
            int64: "LongTensor", int32: "IntTensor", int16: "ShortTensor",
            int8: "CharTensor", uint8: "ByteTensor", bool: "BoolTensor",
            complex64: "ComplexFloatTensor",
            complex128: "ComplexDoubleTensor",
        }[obj.dtype]
    return type(obj).__name__


import builtins as _builtins  # noqa: E402


class finfo:
    """Machine limits of a floating dtype (torch.finfo)."""

    _TABLE = {
        # bits, eps, max, tiny (smallest normal), resolution
        "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
        "bfloat16": (16, 0.0078125, 3.3895313892515355e38,
                     1.1754943508222875e-38, 0.01),
        "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e38,
                    1.1754943508222875e-38, 1e-06),
        "float64": (64, 2.220446049250313e-16, 1.7976931348623157e308,
                    2.2250738585072014e-308, 1e-15),
    }

    def __init__(self, type=None):  # noqa: A002 - torch's name
        if type is None:
            type = get_default_dtype()
        if isinstance(type, dtype) and type.is_complex:
            type = type.to_real()  # torch: a complex dtype's parts' limits
        if not isinstance(type, dtype) or not type.is_floating_point:
            raise TypeError("finfo(): argument 'type' must be a floating "
                            "dtype, got " + repr(type))
        self.dtype = str(type).split(".")[-1]
        (self.bits, self.eps, self.max, self.tiny,
         self.resolution) = self._TABLE[self.dtype]
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:e}, "
                f"max={self.max:e}, eps={self.eps:e}, "
                f"smallest_normal={self.tiny:e}, tiny={self.tiny:e}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):  # noqa: A002 - torch's name
        if not isinstance(type, dtype) or type.is_floating_point or \
                type.is_complex:
            raise TypeError("iinfo(): argument 'type' must be an integer "
                            "dtype, got " + repr(type))
        self.dtype = str(type).split(".")[-1]
        self.bits = type.itemsize * 8
        if type == uint8 or type == bool:
            self.min, self.max = 0, (1 if type == bool else 255)
        else:
            self.min = -(1 << (self.bits - 1))
            self.max = (1 << (self.bits - 1)) - 1

    def __repr__(self):
        return (f"iinfo(min={self.min}, max={self.max}, bits={self.bits}, "
                f"dtype={self.dtype})")



# fastt.cuda (python/fastt/cuda.py): devices, streams, events, memory
# statistics; imports without CUDA too (is_available() is then False).
from . import backends, cuda  # noqa: E402,F401
from . import __config__  # noqa: E402,F401  (threads, OpenMP, the BLAS)
if _C._cpu_isa()["warning"]:  # a FASTT_CPU_ISA value that was not taken
    import warnings as _warnings
    _warnings.warn(_C._cpu_isa()["warning"], RuntimeWarning, stacklevel=2)

# The legacy type classes (fastt.FloatTensor, ...; python/fastt/
# _legacy_types.py), also as fastt.cuda.FloatTensor, ...
from . import _legacy_types  # noqa: E402
globals().update(_legacy_types.CPU_TYPES)
for _n, _t in _legacy_types.CUDA_TYPES.items():
    setattr(cuda, _n, _t)

# Composite ops (python/fastt/_composite.py): functions and Tensor methods
# written as compositions of the kernels.
from ._composite import *  # noqa: E402,F401,F403

# Subpackages, available as attributes like torch.nn / torch.optim.
from . import (  # noqa: E402,F401
    fft, linalg, masked, nn, optim, profiler, signal, special, utils)
from . import distributions  # noqa: E402,F401  (after nn: it uses F)
from . import amp, cpu, func  # noqa: E402,F401
from . import distributed  # noqa: E402,F401
from . import multiprocessing  # noqa: E402,F401
from .amp import autocast  # noqa: E402,F401
# Capture and replay of a step (torch.compile's name).
from ._compile import compile  # noqa: E402,F401


def is_autocast_enabled(device_type=None):
    """Whether autocast is on in this thread for device_type (CUDA when not
    given, as torch)."""
    return _C._is_autocast_enabled(device_type or "cuda")


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # torch's old one-argument form: CUDA
        device_type, enabled = "cuda", device_type
    _C._set_autocast_enabled(device_type, enabled)


def get_autocast_dtype(device_type):
    return _C._get_autocast_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    _C._set_autocast_dtype(device_type, dtype)


def is_autocast_cpu_enabled():
    return _C._is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    return _C._get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    return _C._get_autocast_dtype("cuda")


def clear_autocast_cache():
    _C._clear_autocast_cache()


def is_autocast_cache_enabled():
    return _C._is_autocast_cache_enabled()


def set_autocast_cache_enabled(enabled):
    _C._set_autocast_cache_enabled(enabled)

from .serialization import load, save  # noqa: E402,F401

__all__ = [n for n in globals() if not n.startswith("_")]

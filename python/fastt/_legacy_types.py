"""torch's legacy tensor type classes: fastt.FloatTensor(2, 3),
fastt.LongTensor([1, 2]), isinstance(x, fastt.FloatTensor),
x.type(fastt.LongTensor), and their fastt.cuda.* twins. Each class is a
dtype and a device; calling it is the legacy constructor (C++
legacy_new: sizes, a Size, data, or a tensor of that type to alias)."""
import fastt

from . import _C

_NAMES = [("BoolTensor", "bool"), ("ByteTensor", "uint8"),
          ("CharTensor", "int8"), ("ShortTensor", "int16"),
          ("IntTensor", "int32"), ("LongTensor", "int64"),
          ("HalfTensor", "float16"), ("BFloat16Tensor", "bfloat16"),
          ("FloatTensor", "float32"), ("DoubleTensor", "float64")]


class _TensorType(type):
    """The metaclass: isinstance(x, FloatTensor) is x's dtype and device."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, fastt.Tensor) and obj.dtype == cls.dtype \
            and obj.is_cuda == cls.is_cuda

    def __call__(cls, *args, device=None):
        dev = device if device is not None else (
            "cuda" if cls.is_cuda else "cpu")
        return _C._legacy_new(cls.dtype, dev, args, cls.__name__)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make(module, cuda):
    types = {}
    for name, dt in _NAMES:
        types[name] = _TensorType(name, (), {
            "dtype": getattr(fastt, dt), "is_cuda": cuda,
            "__module__": module,
            "__doc__": f"{'CUDA ' if cuda else ''}{dt} tensors: the legacy "
                       f"constructor and isinstance class."})
    return types


CPU_TYPES = _make("fastt", False)
CUDA_TYPES = _make("fastt.cuda", True)

"""fastt.linalg: torch.linalg's functions that fastt implements (C++ ops
bound in fastt._C, or compositions of them here)."""
import math

import fastt

from ._C import _linalg_cross as cross  # noqa: F401

__all__ = ["cross", "vector_norm"]

# torch's scalar type names, as its error messages spell them
_TYPE_NAME = {"bool": "Bool", "uint8": "Byte", "int8": "Char",
              "int16": "Short", "int32": "Int", "int64": "Long",
              "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
              "float64": "Double"}


def _type_name(dtype):
    return _TYPE_NAME[str(dtype).split(".")[-1]]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ord-norm of x's elements over dim (all of them for None or ()),
    as a vector: sum(|x|^ord)^(1/ord); inf/-inf the max/min of |x|; 0 the
    count of non-zeros. dtype: x is cast to it first (no narrowing)."""
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) "
                        f"must be Number, not {type(ord).__name__}")
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point "
                           "or complex tensor as input. Got "
                           f"{_type_name(x.dtype)}")
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError("linalg.vector_norm: dtype should be floating"
                               f" point or complex, but got "
                               f"{_type_name(dtype)}")
        if fastt.promote_types(x.dtype, dtype) != dtype:
            raise RuntimeError(
                f"linalg.vector_norm: the dtype of the input "
                f"({_type_name(x.dtype)}) should be convertible without "
                f"narrowing to the specified dtype ({_type_name(dtype)})")
        x = x.to(dtype)
    if dim is None or dim == ():
        dims = tuple(range(x.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if ord < 0 or math.isinf(ord):
        for d in dims:
            if x.ndim and x.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {ord} norm on the"
                    f" dimension {d % x.ndim}because this dimension is empty "
                    "and the operation does not have an identity")
        if x.numel() == 0 and not dims:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on an "
                "empty tensor because the operation does not have an "
                "identity")
    result = fastt.norm(x, ord, dims, keepdim)
    if out is not None:
        out.copy_(result)
        return out
    return result

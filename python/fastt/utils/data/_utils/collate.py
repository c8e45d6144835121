"""fastt.utils.data._utils.collate: turning samples into batches
(torch.utils.data._utils.collate). default_collate stacks tensors and
converts numpy arrays and numbers; add a leaf type by adding an entry to
default_collate_fn_map (type -> fn(batch, *, collate_fn_map))."""

import collections.abc
import copy
import re

import numpy as np

import fastt

__all__ = ["collate", "default_collate", "default_collate_fn_map",
           "default_convert"]

_NP_STR_OBJ = re.compile(r"[SaUO]")
_COLLATE_ERR = ("default_collate: batch must contain tensors, numpy arrays, "
                "numbers, dicts or lists; found {}")
_CONVERT_ERR = ("default_convert: batch must contain tensors, numpy arrays, "
                "numbers, dicts or lists; found {}")


def _collate_tensor(batch, *, collate_fn_map=None):
    return fastt.stack(batch, 0)


def _collate_numpy_array(batch, *, collate_fn_map=None):
    if _NP_STR_OBJ.search(batch[0].dtype.str) is not None:
        raise TypeError(_COLLATE_ERR.format(batch[0].dtype))
    return collate([fastt.from_numpy(np.asarray(b)) for b in batch],
                   collate_fn_map=collate_fn_map)


def _collate_numpy_scalar(batch, *, collate_fn_map=None):
    return fastt.from_numpy(np.array(batch))


def _collate_float(batch, *, collate_fn_map=None):
    return fastt.tensor(batch, dtype=fastt.float64)


def _collate_int(batch, *, collate_fn_map=None):
    return fastt.tensor(batch)


def _collate_str(batch, *, collate_fn_map=None):
    return batch


# Looked up by exact type first, then by isinstance in insertion order
# (so bool, a subclass of int, becomes a bool tensor as in torch).
default_collate_fn_map = {
    fastt.Tensor: _collate_tensor,
    np.ndarray: _collate_numpy_array,
    (np.bool_, np.number, np.object_): _collate_numpy_scalar,
    float: _collate_float,
    int: _collate_int,
    str: _collate_str,
    bytes: _collate_str,
}


def collate(batch, *, collate_fn_map=None):
    """Turn a list of samples into a batch, recursing through mappings,
    namedtuples and sequences; leaves are handled by collate_fn_map."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        fn = collate_fn_map.get(elem_type)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {k: collate([d[k] for d in batch],
                             collate_fn_map=collate_fn_map) for k in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                out = copy.copy(elem)
                out.update(values)
                return out
            return elem_type(values)
        except TypeError:
            return values
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(list(s), collate_fn_map=collate_fn_map)
                           for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError(
                "each element in list of batch should be of equal size")
        columns = [collate(list(s), collate_fn_map=collate_fn_map)
                   for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as torch does
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                out = copy.copy(elem)
                for i, c in enumerate(columns):
                    out[i] = c
                return out
            return elem_type(columns)
        except TypeError:
            return columns
    raise TypeError(_COLLATE_ERR.format(elem_type))


def default_collate(batch):
    """torch's default_collate for fastt: tensors are stacked, numpy arrays
    and numbers become tensors (float -> float64, int -> int64, bool ->
    bool), str/bytes stay lists, containers are collated field by field
    (tuples come back as lists)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """The collate used when batch_size=None: numpy arrays/scalars become
    tensors, containers are converted element by element."""
    if isinstance(data, fastt.Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return fastt.from_numpy(data)
    if isinstance(data, (np.bool_, np.number)):
        return fastt.from_numpy(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        values = {k: default_convert(v) for k, v in data.items()}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                out = copy.copy(data)
                out.update(values)
                return out
            return type(data)(values)
        except TypeError:
            return values
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if (isinstance(data, collections.abc.Sequence)
            and not isinstance(data, (str, bytes))):
        items = [default_convert(d) for d in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                out = copy.copy(data)
                for i, v in enumerate(items):
                    out[i] = v
                return out
            return type(data)(items)
        except TypeError:
            return items
    return data


# torch's public names for the leaf collate functions.
collate_tensor_fn = _collate_tensor
collate_numpy_array_fn = _collate_numpy_array
collate_numpy_scalar_fn = _collate_numpy_scalar
collate_float_fn = _collate_float
collate_int_fn = _collate_int
collate_str_fn = _collate_str

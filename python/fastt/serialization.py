"""Safe saving and loading in the safetensors format (csrc/serialize.cpp).

fastt.save(obj, f) / fastt.load(f) keep torch's names, but the file is a
safetensors file, never a pickle: loading parses data and runs no code.
Nested dicts / lists / tuples of tensors and plain scalars are flattened to
tensor names like "a.b.0"; their structure is kept as JSON in the header's
"__metadata__" under "fastt.structure", so load rebuilds them exactly.
save_file / load_file / save_bytes / load_bytes mirror safetensors.torch.
To support another leaf type, extend _encode and _decode together.
"""

import json
import os
from collections import OrderedDict

from . import _C

__all__ = ["save", "load", "save_file", "load_file", "save_bytes",
           "load_bytes"]

STRUCTURE_KEY = "fastt.structure"
_SCALARS = (bool, int, float, str, type(None))


def _tensor_type():
    from . import Tensor
    return Tensor


# ---- flattening ---------------------------------------------------------
class _Flattener:
    def __init__(self):
        self.items = []   # (name, tensor) in save order
        self.names = set()
        self.active = set()  # ids of containers on the current path

    def name_for(self, path):
        name = ".".join(path) if path else "tensor"
        base, k = name, 1
        while name in self.names or name == "__metadata__":
            name = "%s#%d" % (base, k)
            k += 1
        self.names.add(name)
        return name

    def encode(self, obj, path):
        Tensor = _tensor_type()
        if isinstance(obj, Tensor):
            name = self.name_for(path)
            self.items.append((name, obj))
            return {"t": name}
        if isinstance(obj, _SCALARS):
            return {"v": obj}
        from . import device, dtype
        if isinstance(obj, dtype):
            return {"dtype": str(obj).split(".")[-1]}
        if isinstance(obj, device):
            return {"device": str(obj)}
        if not isinstance(obj, (dict, list, tuple)):
            raise TypeError(
                "fastt.save: cannot save an object of type %s (only "
                "tensors, dicts, lists, tuples, int, float, bool, str and "
                "None are supported; nothing is pickled)" % type(obj).__name__)
        if id(obj) in self.active:
            raise ValueError("fastt.save: the object contains itself")
        self.active.add(id(obj))
        try:
            if isinstance(obj, dict):
                entries = []
                for key, value in obj.items():
                    if not isinstance(key, _SCALARS):
                        raise TypeError(
                            "fastt.save: dict keys must be str, int, float, "
                            "bool or None, not %s" % type(key).__name__)
                    entries.append([key, self.encode(value, path + [str(key)])])
                node = {"d": entries}
                if isinstance(obj, OrderedDict):
                    node["o"] = 1
                return node
            kind = "l" if isinstance(obj, list) else "u"
            return {kind: [self.encode(v, path + [str(i)])
                           for i, v in enumerate(obj)]}
        finally:
            self.active.discard(id(obj))


def _corrupt(why):
    return ValueError("fastt.load: corrupt %r metadata: %s"
                      % (STRUCTURE_KEY, why))


def _decode(node, tensors):
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise _corrupt("expected a node object")
    if "t" in node:
        name = node["t"]
        if not isinstance(name, str) or name not in tensors:
            raise _corrupt("refers to a missing tensor %r" % (name,))
        return tensors[name]
    if "v" in node:
        v = node["v"]
        if not isinstance(v, _SCALARS):
            raise _corrupt("a value is not a scalar")
        return v
    if "d" in node:
        entries = node["d"]
        if not isinstance(entries, list):
            raise _corrupt("dict entries are not a list")
        out = OrderedDict() if node.get("o") else {}
        for entry in entries:
            if (not isinstance(entry, list) or len(entry) != 2 or
                    not isinstance(entry[0], _SCALARS)):
                raise _corrupt("bad dict entry")
            out[entry[0]] = _decode(entry[1], tensors)
        return out
    for kind, make in (("l", list), ("u", tuple)):
        if kind in node:
            if not isinstance(node[kind], list):
                raise _corrupt("sequence items are not a list")
            return make(_decode(v, tensors) for v in node[kind])
    from . import device, dtype
    import fastt
    if "dtype" in node:
        dt = getattr(fastt, str(node["dtype"]), None)
        if not isinstance(dt, dtype):
            raise _corrupt("unknown dtype %r" % (node["dtype"],))
        return dt
    if "device" in node:
        try:
            return device(node["device"])
        except Exception as e:
            raise _corrupt("bad device %r" % (node["device"],)) from e
    raise _corrupt("unknown node %r" % (sorted(node),))


# ---- files --------------------------------------------------------------
def _is_path(f):
    return isinstance(f, (str, os.PathLike))  # bytes are file contents


def _target_device(map_location):
    if map_location is None:
        return None
    if isinstance(map_location, dict):
        # Everything in a file lives on the CPU: only a 'cpu' entry applies.
        map_location = map_location.get("cpu", map_location.get(
            "cpu:0", None))
        if map_location is None:
            return None
    if callable(map_location):
        raise TypeError("fastt.load: map_location as a function is not "
                        "supported; pass 'cpu' or a device")
    from . import device
    return device(map_location)


def _read(f, mmap):
    """(items, metadata) from a path, a file object or a bytes-like."""
    if _is_path(f):
        with open(f, "rb") as fh:
            try:
                return _C._load_safetensors_fd(fh.fileno(), bool(mmap))
            except (ValueError, RuntimeError) as e:
                _explain_foreign(os.pread(fh.fileno(), 9, 0), e)
                raise
    if mmap:
        raise ValueError("fastt.load: f must be a file path in order to use "
                         "the mmap argument")
    data = f.read() if hasattr(f, "read") else f
    try:
        return _C._load_safetensors(data)
    except (ValueError, RuntimeError) as e:
        _explain_foreign(bytes(memoryview(data)[:9]), e)
        raise


def _explain_foreign(head, err):
    # A torch.save zip or pickle: say so instead of only "bad header".
    # (A safetensors file has '{' at byte 8.)
    if head[8:9] != b"{" and (head[:4] == b"PK\x03\x04" or
                              head[:1] == b"\x80"):
        raise ValueError(
            "fastt.load reads safetensors files only, and this looks like a "
            "pickle or torch.save file; convert it with safetensors.torch."
            "save_file (fastt never unpickles)") from err


def save(obj, f, *args, metadata=None, **kwargs):
    """Saves a tensor, a state dict, or nested dicts/lists/tuples of tensors
    and plain scalars to a path or a writable binary file object.

    Each tensor is written contiguous on the CPU under its own name, so
    tensors that shared storage (tied weights) load as separate copies.
    `metadata` (str -> str) is stored beside the structure. Extra arguments
    of torch.save (pickle_module, ...) are accepted and ignored.
    """
    flat = _Flattener()
    structure = flat.encode(obj, [])
    meta = {"format": "pt"}
    if metadata:
        meta.update(metadata)
    meta[STRUCTURE_KEY] = json.dumps(structure, separators=(",", ":"))
    if _is_path(f):
        with open(f, "wb") as fh:
            _C._save_safetensors_fd(fh.fileno(), flat.items, meta)
        return
    if not hasattr(f, "write"):
        raise TypeError("fastt.save: f must be a path or a writable file "
                        "object, not %s" % type(f).__name__)
    f.write(_C._save_safetensors(flat.items, meta))


def load(f, map_location=None, weights_only=True, mmap=None, **kwargs):
    """Loads what save wrote (or any safetensors file, as a flat dict).

    map_location: None/'cpu' or a device to move tensors to. With mmap=True
    (paths only) tensors view a private mapping of the file. weights_only
    is accepted for torch compatibility: loading never runs code anyway.
    """
    items, metadata = _read(f, mmap)
    device = _target_device(map_location)
    if device is not None and device.type != "cpu":
        items = [(n, t.to(device)) for n, t in items]
    tensors = dict(items)
    structure = metadata.get(STRUCTURE_KEY)
    if structure is None:
        return tensors
    try:
        node = json.loads(structure)
        return _decode(node, tensors)
    except RecursionError as e:
        raise _corrupt("nested too deeply") from e
    except json.JSONDecodeError as e:
        raise _corrupt(str(e)) from e


# ---- safetensors.torch-like helpers (flat dicts of tensors) -------------
def _flat_items(tensors):
    if not isinstance(tensors, dict):
        raise TypeError("expected a dict of str to Tensor, got %s"
                        % type(tensors).__name__)
    Tensor = _tensor_type()
    for k, v in tensors.items():
        if not isinstance(k, str) or not isinstance(v, Tensor):
            raise TypeError("expected a dict of str to Tensor; got key %r "
                            "with a %s" % (k, type(v).__name__))
    return list(tensors.items())


def save_file(tensors, filename, metadata=None):
    """safetensors.torch.save_file: a flat dict of tensors to a file."""
    with open(filename, "wb") as fh:
        _C._save_safetensors_fd(fh.fileno(), _flat_items(tensors), metadata)


def load_file(filename, device="cpu", mmap=False):
    """safetensors.torch.load_file: a dict of the file's tensors."""
    items, _ = _read(filename, mmap)
    target = _target_device(device)
    if target is not None and target.type != "cpu":
        items = [(n, t.to(target)) for n, t in items]
    return dict(items)


def save_bytes(tensors, metadata=None):
    """safetensors.torch.save: a flat dict of tensors as bytes."""
    return _C._save_safetensors(_flat_items(tensors), metadata)


def load_bytes(data):
    """safetensors.torch.load: a dict of tensors from bytes."""
    items, _ = _C._load_safetensors(data)
    return dict(items)


def read_metadata(f):
    """The "__metadata__" dict of a safetensors path, file object or bytes."""
    return _read(f, False)[1]

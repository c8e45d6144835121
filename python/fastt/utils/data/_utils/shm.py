"""fastt.utils.data._utils.shm: a worker's batch to the main process
without pickling tensor data.

pack(batch) (in the worker) pickles the batch with every fastt.Tensor in
it replaced by a reference (pickle's persistent_id, so tensors inside any
picklable object are found: lists, dicts, namedtuples, dataclasses...),
and writes the tensors' bytes into ONE POSIX shared-memory block per batch
(64-byte aligned, contiguous, named after the worker's pid). Only the block's name, the pickled skeleton
and (dtype, shape, offset) per tensor go through the result queue.
unpack(msg) (in the main process) maps the block, unlinks its name at once
and rebuilds each tensor zero-copy over the mapping (numpy.frombuffer +
fastt.from_numpy; bfloat16 travels as int16 and is reinterpreted with
.view); the mapping lives as long as any tensor over it.

Batches whose tensors hold fewer than INLINE_BYTES bytes carry them inline
(a shared block costs a few syscalls, more than copying a few KiB). The
worker registers each block with multiprocessing's resource tracker and
the main process unregisters it when it unlinks the name, so blocks of a
crashed run are still removed; release() drops a message never unpacked
(iterator shut down with batches in flight) and sweep() the blocks of
exited workers that never reached the main process."""

import io
import itertools
import mmap
import os
import pickle
from multiprocessing import resource_tracker

import numpy as np

import fastt

try:
    import _posixshmem
except ImportError:  # pragma: no cover - Windows: everything goes inline
    _posixshmem = None

INLINE_BYTES = 16384
_ALIGN = 64
_PREFIX = "/fastt_dl_"
_RTYPE = "shared_memory"

# fastt dtype -> (name on the wire, numpy dtype the bytes are read as,
# whether the fastt tensor is .view()ed back to the dtype)
_DTYPES = {
    fastt.bool: ("bool", np.bool_, False),
    fastt.uint8: ("uint8", np.uint8, False),
    fastt.int8: ("int8", np.int8, False),
    fastt.int16: ("int16", np.int16, False),
    fastt.int32: ("int32", np.int32, False),
    fastt.int64: ("int64", np.int64, False),
    fastt.float16: ("float16", np.float16, False),
    fastt.bfloat16: ("bfloat16", np.int16, True),
    fastt.float32: ("float32", np.float32, False),
    fastt.float64: ("float64", np.float64, False),
}
_BY_NAME = {name: (dt, npdt, view)
            for dt, (name, npdt, view) in _DTYPES.items()}

_counter = itertools.count()

# Main-process counters (tests and the bench read them).
stats = {"shm_batches": 0, "inline_batches": 0, "shm_bytes": 0}


class Batch:
    """What crosses the result queue for one batch: the pickled skeleton,
    the tensor bytes' home (a shared block's name, inline bytes, or None
    when the batch has no tensors) and one (dtype name, shape, offset,
    requires_grad) per tensor."""

    __slots__ = ("payload", "block", "size", "metas")

    def __init__(self, payload, block, size, metas):
        self.payload = payload
        self.block = block
        self.size = size
        self.metas = metas

    def __reduce__(self):
        return (Batch, (self.payload, self.block, self.size, self.metas))


class _Pickler(pickle.Pickler):
    def __init__(self, file, tensors):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._tensors = tensors

    def persistent_id(self, obj):
        if type(obj) is fastt.Tensor and obj.dtype in _DTYPES:
            self._tensors.append(obj)
            return len(self._tensors) - 1
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, tensors):
        super().__init__(file)
        self._tensors = tensors

    def persistent_load(self, pid):
        return self._tensors[pid]


def _raw(t):
    """A C-contiguous flat uint8 numpy view of tensor t's bytes (copies
    only when t is not contiguous)."""
    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.dtype == fastt.bfloat16:
        t = t.view(fastt.int16)
    return t.numpy().reshape(-1).view(np.uint8)


def _write_all(fd, buf, offset):
    view = memoryview(buf)
    while len(view):
        n = os.pwrite(fd, view, offset)
        view = view[n:]
        offset += n


def pack(batch):
    """The Batch message for `batch` (in a worker)."""
    tensors = []
    f = io.BytesIO()
    _Pickler(f, tensors).dump(batch)
    payload = f.getvalue()
    if not tensors:
        return Batch(payload, None, 0, ())
    metas, offset = [], 0
    for t in tensors:
        offset = (offset + _ALIGN - 1) // _ALIGN * _ALIGN
        metas.append((_DTYPES[t.dtype][0], tuple(t.shape), offset,
                      bool(t.requires_grad)))
        offset += t.numel() * t.element_size()
    size = offset
    if size < INLINE_BYTES or _posixshmem is None:
        block = bytearray(size)
        for t, meta in zip(tensors, metas):
            if t.numel():
                raw = _raw(t)
                block[meta[2]:meta[2] + raw.size] = memoryview(raw)
        return Batch(payload, bytes(block), size, tuple(metas))
    name = f"{_PREFIX}{os.getpid()}_{next(_counter)}"
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR,
                              mode=0o600)
    try:
        resource_tracker.register(name, _RTYPE)
        try:
            os.ftruncate(fd, size)
            for t, meta in zip(tensors, metas):
                if t.numel():
                    _write_all(fd, _raw(t), meta[2])
        except BaseException:
            _unlink(name)
            raise
    finally:
        os.close(fd)
    return Batch(payload, name, size, tuple(metas))


def _unlink(name):
    try:
        _posixshmem.shm_unlink(name)
    except FileNotFoundError:
        pass
    resource_tracker.unregister(name, _RTYPE)


def release(msg):
    """Drops a Batch that will never be unpacked (its shared block)."""
    if isinstance(msg, Batch) and isinstance(msg.block, str):
        _unlink(msg.block)


def sweep(pids):
    """Unlinks every block the worker processes `pids` (all exited) created
    that the main process never received (Linux: names in /dev/shm)."""
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return
    prefixes = tuple(f"{_PREFIX[1:]}{pid}_" for pid in pids)
    for n in names:
        if n.startswith(prefixes):
            _unlink("/" + n)


def _tensor(buf, meta):
    name, shape, offset, requires_grad = meta
    dtype, npdt, view = _BY_NAME[name]
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0:
        t = fastt.empty(shape, dtype=dtype)
    else:
        arr = np.frombuffer(buf, dtype=npdt, count=numel, offset=offset)
        t = fastt.from_numpy(arr.reshape(shape))
        if view:
            t = t.view(dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def unpack(msg):
    """The batch a Batch message describes (in the main process)."""
    block = msg.block
    if block is None:
        buf = None
    elif isinstance(block, str):
        try:
            fd = _posixshmem.shm_open(block, os.O_RDWR, mode=0o600)
            try:
                buf = mmap.mmap(fd, msg.size)
            finally:
                os.close(fd)
        finally:
            _unlink(block)
        stats["shm_batches"] += 1
        stats["shm_bytes"] += msg.size
    else:
        buf = bytearray(block)  # writable, like every other batch
        stats["inline_batches"] += 1
    tensors = [_tensor(buf, m) for m in msg.metas]
    return _Unpickler(io.BytesIO(msg.payload), tensors).load()

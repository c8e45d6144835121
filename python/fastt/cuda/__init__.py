"""fastt.cuda: torch.cuda's runtime API over fastt._C's _cuda_* functions
(python/src/cuda.cpp): devices, streams, events and the caching
allocator's memory statistics. It always imports; without CUDA (or without
a GPU) is_available() is False and calls that need a GPU raise RuntimeError
saying why."""

import contextlib

from .. import _C

__all__ = [
    "is_available", "is_built", "device_count", "current_device",
    "set_device", "device", "device_of", "synchronize", "current_stream",
    "default_stream", "set_stream", "stream", "Stream", "Event",
    "StreamContext", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
    "reset_max_memory_allocated", "reset_accumulated_memory_stats",
    "empty_cache", "memory_stats", "mem_get_info", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
    "get_rng_state_all", "set_rng_state_all",
    "is_bf16_supported", "get_device_name", "get_device_capability",
    "get_device_properties", "is_initialized", "init", "OutOfMemoryError",
    "CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
    "make_graphed_callables",
]

OutOfMemoryError = MemoryError


def is_built():
    """True when fastt was compiled with its CUDA backend."""
    return bool(_C._cuda_built)


def device_count():
    """Number of CUDA GPUs visible (0 without CUDA or without a GPU)."""
    return _C._cuda_get_device_count()


def is_available():
    """True when fastt was built with CUDA and a GPU is present."""
    return device_count() > 0


def is_initialized():
    return is_available()


def init():
    _require("init")


def _require(what):
    if not is_built():
        raise RuntimeError(f"{what}: fastt was built without CUDA")
    if device_count() == 0:
        raise RuntimeError(f"{what}: no CUDA GPU available")


def _device_index(device, optional=True):
    """torch's _get_device_index: None -> current device; int; 'cuda:1';
    fastt.device."""
    if device is None:
        if not optional:
            raise ValueError("expected a CUDA device, got None")
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"expected a cuda device, but got: {device}")
        return current_device() if device.index is None else device.index
    raise ValueError(f"invalid device: {device!r}")


def current_device():
    """Index of the calling thread's current CUDA device."""
    return _C._cuda_current_device()


def set_device(device):
    """Makes `device` current for the calling thread (negative: no-op,
    like torch)."""
    index = _device_index(device)
    if index >= 0:
        _C._cuda_set_device(index)


class device:  # noqa: N801 - torch.cuda.device
    """Context manager that makes a device current, restoring the old one."""

    def __init__(self, device):
        self.idx = -1 if device is None else _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                _C._cuda_set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._cuda_set_device(self.prev_idx)
        return False


class device_of(device):  # noqa: N801
    """Makes the device of a tensor current (no-op for CPU tensors)."""

    def __init__(self, obj):
        d = obj.device
        super().__init__(d.index if d.type == "cuda" else -1)


def synchronize(device=None):
    """Waits for all work on a device (default: the current one)."""
    _require("synchronize")
    _C._cuda_synchronize(_device_index(device))


# ---------------------------------------------------------------- streams --
class Stream:
    """A CUDA stream (from a per-device pool, like torch's). Work queued on
    different streams may run concurrently; order them with wait_stream /
    wait_event. `priority`: lower (negative) runs first."""

    def __new__(cls, device=None, priority=0, **kwargs):
        self = super().__new__(cls)
        if "stream_ptr" in kwargs:  # wrap an existing handle
            self.device_index = _device_index(device)
            self.cuda_stream = int(kwargs["stream_ptr"])
            return self
        if kwargs:
            raise TypeError(f"Stream() got unexpected arguments {kwargs}")
        _require("Stream")
        self.device_index = _device_index(device)
        self.cuda_stream = _C._cuda_stream_create(self.device_index,
                                                  int(priority))
        return self

    def __init__(self, device=None, priority=0, **kwargs):
        pass

    @classmethod
    def _wrap(cls, device_index, handle):
        self = super().__new__(cls)
        self.device_index = device_index
        self.cuda_stream = handle
        return self

    @property
    def device(self):
        return _C.device("cuda", self.device_index)

    @property
    def priority(self):
        return _C._cuda_stream_priority(self.device_index, self.cuda_stream)

    @staticmethod
    def priority_range():
        """(least, greatest) priority: greatest is the most urgent."""
        _require("Stream.priority_range")
        return _C._cuda_stream_priority_range()

    def query(self):
        """True when all work queued on this stream has completed."""
        return _C._cuda_stream_query(self.device_index, self.cuda_stream)

    def synchronize(self):
        """Waits for all work queued on this stream."""
        _C._cuda_stream_synchronize(self.device_index, self.cuda_stream)

    def wait_event(self, event):
        """Work queued here from now on waits for `event`."""
        event.wait(self)

    def wait_stream(self, stream):
        """Work queued here from now on waits for all work queued on
        `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records `event` (a new one when None) on this stream."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __enter__(self):
        self._ctx = StreamContext(self)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def __eq__(self, other):
        return (isinstance(other, Stream)
                and self.cuda_stream == other.cuda_stream
                and self.device_index == other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return (f"<fastt.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self.cuda_stream:#x}>")


def current_stream(device=None):
    """The calling thread's current stream on a device."""
    _require("current_stream")
    index = _device_index(device)
    return Stream._wrap(index, _C._cuda_current_stream(index))


def default_stream(device=None):
    """The device's default (legacy) stream."""
    _require("default_stream")
    return Stream._wrap(_device_index(device), 0)


def set_stream(stream):
    """Makes `stream` current on its device, and its device current, for
    the calling thread (like torch.cuda.set_stream)."""
    if stream is None:
        return
    if current_device() != stream.device_index:
        _C._cuda_set_device(stream.device_index)
    _C._cuda_set_stream(stream.device_index, stream.cuda_stream)


class StreamContext:
    """Selects a stream (and its device) for a `with` block; on exit the
    previous streams of both devices and the previous device return."""

    def __init__(self, stream):
        self.stream = stream
        self.idx = -1 if stream is None else stream.device_index

    def __enter__(self):
        cur = self.stream
        if cur is None or self.idx == -1:
            return cur
        self.src_prev_stream = current_stream(None)
        self.dst_prev_stream = None
        if self.src_prev_stream.device_index != cur.device_index:
            self.dst_prev_stream = current_stream(cur.device_index)
        set_stream(cur)
        return cur

    def __exit__(self, *exc):
        cur = self.stream
        if cur is None or self.idx == -1:
            return False
        if self.dst_prev_stream is not None:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)
        return False


def stream(stream):
    """Context manager: `with fastt.cuda.stream(s): ...` queues work on s."""
    return StreamContext(stream)


# ----------------------------------------------------------------- events --
class Event:
    """A CUDA event: a marker in a stream's work. Created on first
    record(); enable_timing=True allows elapsed_time()."""

    def __init__(self, enable_timing=False, blocking=False,
                 interprocess=False):
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        self.cuda_event = 0
        self.device_index = None

    def _create(self, device_index):
        self.cuda_event = _C._cuda_event_create(
            device_index, self.enable_timing, self.blocking,
            self.interprocess)
        self.device_index = device_index

    def record(self, stream=None):
        """Captures the work queued so far on `stream` (default: current)."""
        if stream is None:
            stream = current_stream()
        if not self.cuda_event:
            self._create(stream.device_index)
        if stream.device_index != self.device_index:
            raise RuntimeError(
                f"Event device cuda:{self.device_index} does not match the "
                f"recording stream's device cuda:{stream.device_index}")
        _C._cuda_event_record(self.cuda_event, stream.device_index,
                              stream.cuda_stream)

    def wait(self, stream=None):
        """Work queued on `stream` (default: current) from now on waits for
        this event."""
        if stream is None:
            stream = current_stream()
        if self.cuda_event:
            _C._cuda_stream_wait_event(stream.device_index,
                                       stream.cuda_stream, self.cuda_event)

    def query(self):
        """True when the captured work completed (or nothing recorded)."""
        if not self.cuda_event:
            return True
        return _C._cuda_event_query(self.cuda_event, self.device_index)

    def synchronize(self):
        """Waits for the captured work."""
        if self.cuda_event:
            _C._cuda_event_synchronize(self.cuda_event, self.device_index)

    def elapsed_time(self, end_event):
        """Milliseconds from this event to `end_event` (both recorded,
        completed, created with enable_timing=True)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time: both events must be created "
                               "with enable_timing=True")
        if not (self.cuda_event and end_event.cuda_event):
            raise RuntimeError("elapsed_time: both events must be recorded "
                               "before calculating elapsed time")
        return _C._cuda_event_elapsed_time(self.cuda_event,
                                           end_event.cuda_event)

    def __del__(self):
        handle = getattr(self, "cuda_event", 0)
        if handle:
            try:
                _C._cuda_event_destroy(handle)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass

    def __repr__(self):
        if self.cuda_event:
            return f"<fastt.cuda.Event {self.cuda_event:#x}>"
        return "<fastt.cuda.Event uninitialized>"


# ----------------------------------------------------------------- memory --
def memory_stats(device=None):
    """The caching allocator's counters for a device, as a dict:
    allocated_bytes, max_allocated_bytes, reserved_bytes,
    max_reserved_bytes, requested_bytes, active_blocks, segments,
    pending_free_blocks, alloc_count, free_count, num_device_allocs
    (cudaMalloc calls), num_device_frees, num_alloc_retries, num_ooms."""
    _require("memory_stats")
    stats = _C._cuda_memory_stats(_device_index(device))
    # torch's key names for the same counters, so code written against
    # torch.cuda.memory_stats() reads them unchanged.
    for torch_key, key in _TORCH_KEYS:
        stats[torch_key] = stats[key]
    return stats


_TORCH_KEYS = (
    ("allocated_bytes.all.current", "allocated_bytes"),
    ("allocated_bytes.all.peak", "max_allocated_bytes"),
    ("reserved_bytes.all.current", "reserved_bytes"),
    ("reserved_bytes.all.peak", "max_reserved_bytes"),
    ("requested_bytes.all.current", "requested_bytes"),
    ("active.all.current", "active_blocks"),
    ("segment.all.current", "segments"),
    ("allocation.all.allocated", "alloc_count"),
    ("allocation.all.freed", "free_count"),
    ("num_device_alloc", "num_device_allocs"),
    ("num_device_free", "num_device_frees"),
)


def memory_allocated(device=None):
    """Bytes in tensors on the device (rounded block sizes)."""
    return memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    return memory_stats(device)["max_allocated_bytes"]


def memory_reserved(device=None):
    """Bytes held by the caching allocator (in use or cached)."""
    return memory_stats(device)["reserved_bytes"]


def max_memory_reserved(device=None):
    return memory_stats(device)["max_reserved_bytes"]


def memory_cached(device=None):
    return memory_reserved(device)


def reset_peak_memory_stats(device=None):
    _require("reset_peak_memory_stats")
    _C._cuda_reset_peak_memory_stats(_device_index(device))


def reset_max_memory_allocated(device=None):
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None):
    _require("reset_accumulated_memory_stats")
    _C._cuda_reset_accumulated_memory_stats(_device_index(device))


def empty_cache():
    """Returns cached, unused device (and pinned host) memory to CUDA.
    A no-op without CUDA."""
    _C._cuda_empty_cache()


def mem_get_info(device=None):
    """(free, total) bytes of the device, from cudaMemGetInfo."""
    _require("mem_get_info")
    return _C._cuda_mem_get_info(_device_index(device))


# ------------------------------------------------------------- properties --
class _DeviceProperties:
    def __init__(self, name, total_memory, major, minor, sm_count):
        self.name = name
        self.total_memory = total_memory
        self.major = major
        self.minor = minor
        self.multi_processor_count = sm_count

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major="
                f"{self.major}, minor={self.minor}, total_memory="
                f"{self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    _require("get_device_properties")
    return _DeviceProperties(
        *_C._cuda_get_device_properties(_device_index(device)))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation=True):
    """True when the current GPU computes in bfloat16 natively (sm_80+)."""
    if not is_available():
        return False
    return get_device_properties().major >= 8


# -------------------------------------------------------------------- rng --
# fastt has one generator (Philox) shared by CPU and CUDA kernels, so the
# CUDA seeding functions delegate to it.
def manual_seed(seed):
    _C.manual_seed(int(seed))


def manual_seed_all(seed):
    _C.manual_seed(int(seed))


def seed():
    return _C.seed()


def seed_all():
    return _C.seed()


def initial_seed():
    return _C.initial_seed()


def get_rng_state(device="cuda"):
    """The generator's state (fastt's CUDA random ops share the default
    generator with the CPU ones)."""
    from ..random import get_rng_state as _get
    return _get()


def set_rng_state(new_state, device="cuda"):
    from ..random import set_rng_state as _set
    _set(new_state)


def get_rng_state_all():
    return [get_rng_state()]


def set_rng_state_all(new_states):
    for s in new_states:
        set_rng_state(s)

from . import amp  # noqa: E402,F401  (torch.cuda.amp)
from .graphs import (  # noqa: E402,F401  (torch.cuda.graphs)
    CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing,
    make_graphed_callables)

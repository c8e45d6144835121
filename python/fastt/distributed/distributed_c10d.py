"""fastt.distributed's process groups and collectives, with
torch.distributed's signatures: init_process_group (env://, tcp://,
file:// or a store), new_group, the collectives (sync or async_op=True
returning a Work), point-to-point send/recv and the object collectives.
The work happens in C++ (csrc/distributed: the stores, Gloo); this file
turns torch's arguments into flat contiguous CPU buffers and back."""

import ctypes
import datetime
import enum
import os
import pickle
import socket
import urllib.parse

import fastt

from .. import _C

_D = _C._distributed
DistError = _D.DistError
DistStoreError = _D.DistStoreError
DistNetworkError = _D.DistNetworkError
DistBackendError = _D.DistBackendError

default_pg_timeout = datetime.timedelta(minutes=30)
_DEFAULT_STORE_TIMEOUT = datetime.timedelta(minutes=5)


def _ms(timeout):
    if timeout is None:
        return int(default_pg_timeout.total_seconds() * 1000)
    if isinstance(timeout, datetime.timedelta):
        return max(1, int(timeout.total_seconds() * 1000))
    raise TypeError("timeout must be a datetime.timedelta, got "
                    f"{type(timeout).__name__}")


def is_available():
    """True when fastt was built with a back end (Gloo)."""
    return bool(_D._gloo_available())


def is_gloo_available():
    return bool(_D._gloo_available())


def is_nccl_available():
    """True when fastt has CUDA and an NCCL library loads (the
    nvidia-nccl-cu13 wheel's, FASTT_NCCL_LIBRARY, or the system's)."""
    if _nccl_state[0] is None:
        ok = False
        if fastt.cuda.is_built():
            try:
                ctypes.CDLL(_nccl_library())
                ok = True
            except OSError:
                pass
        _nccl_state[0] = ok
    return _nccl_state[0]


_nccl_state = [None]


def _nccl_library():
    forced = os.environ.get("FASTT_NCCL_LIBRARY")
    if forced:
        return forced
    try:
        import nvidia.nccl as wheel   # pip install nvidia-nccl-cu13
        for d in wheel.__path__:
            lib = os.path.join(d, "lib", "libnccl.so.2")
            if os.path.exists(lib):
                return lib
    except ImportError:
        pass
    return "libnccl.so.2"


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_torchelastic_launched():
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None or (
        os.environ.get("FASTT_LAUNCHED") == "1")


class ReduceOp(enum.IntEnum):
    """torch.distributed.ReduceOp: SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR,
    BXOR (AVG on floating and complex tensors)."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


ReduceOp.RedOpType = ReduceOp


class Backend(str):
    """A back end's name: Backend("GLOO") == Backend.GLOO == "gloo"."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, got {name!r}")
        return str.__new__(cls, name.lower())


# ---- Stores ----

def _as_bytes(value):
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise TypeError("a store value must be str or bytes, got "
                    f"{type(value).__name__}")


class Store:
    """torch.distributed.Store: a key-value space shared by the job's
    ranks (values are bytes; set also takes str)."""

    def __init__(self, *args, **kwargs):
        if type(self) is Store:
            raise TypeError("fastt.distributed.Store is abstract: use "
                            "TCPStore, FileStore, HashStore or PrefixStore")

    def set(self, key, value):
        self._s.set(key, _as_bytes(value))

    def get(self, key):
        return self._s.get(key)

    def add(self, key, amount):
        return self._s.add(key, int(amount))

    def compare_set(self, key, expected_value, desired_value):
        return self._s.compare_set(key, _as_bytes(expected_value),
                                   _as_bytes(desired_value))

    def check(self, keys):
        return self._s.check(list(keys))

    def delete_key(self, key):
        return self._s.delete_key(key)

    def num_keys(self):
        return self._s.num_keys()

    def wait(self, keys, timeout=None):
        self._s.wait(list(keys), -1 if timeout is None else _ms(timeout))

    def set_timeout(self, timeout):
        self._s.set_timeout_ms(_ms(timeout))

    @property
    def timeout(self):
        return datetime.timedelta(milliseconds=self._s.timeout_ms)


class HashStore(Store):
    """An in-process store (threads of one process)."""

    def __init__(self):
        self._s = _D._hash_store(_ms(_DEFAULT_STORE_TIMEOUT))


class FileStore(Store):
    """A store in a file every rank can reach; removed when its last user
    (of world_size, when given) closes it."""

    def __init__(self, file_name, world_size=-1):
        self.path = os.fspath(file_name)
        self._s = _D._file_store(self.path, int(world_size),
                                 _ms(_DEFAULT_STORE_TIMEOUT))


class TCPStore(Store):
    """A store served by the is_master instance (port 0: a free port,
    read back from .port) and reached over TCP by the others."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=_DEFAULT_STORE_TIMEOUT, wait_for_workers=True,
                 multi_tenant=False, master_listen_fd=None, use_libuv=True):
        if not isinstance(port, int) or isinstance(port, bool):
            raise TypeError(f"TCPStore: port must be an int, got {port!r}")
        self.host = host_name
        self._s = _D._tcp_store(
            host_name, port, -1 if world_size is None else int(world_size),
            bool(is_master), _ms(timeout), bool(wait_for_workers))
        self.port = self._s.port
        self.libuvBackend = False


class PrefixStore(Store):
    """Keys of `store` under `prefix/`."""

    def __init__(self, prefix, store):
        if not isinstance(store, Store):
            raise TypeError("PrefixStore: store must be a "
                            "fastt.distributed.Store")
        self.underlying_store = store
        self._s = _D._prefix_store(prefix, store._s)


# ---- Process groups ----

class ProcessGroup:
    """A group of ranks and its back end (rank() and size() are within
    the group)."""

    def __init__(self, impl, ranks, backend, name, nccl=None):
        self._impl = impl                # Gloo: CPU tensors (and others)
        self._nccl = nccl                # NCCL: CUDA tensors
        self._ranks = list(ranks)        # group rank -> global rank
        self._backend = Backend(backend)
        self.group_name = name

    def rank(self):
        return (self._impl or self._nccl).rank()

    def size(self):
        return (self._impl or self._nccl).size()

    def name(self):
        return self._backend

    def __repr__(self):
        return (f"ProcessGroup(backend={self._backend}, rank={self.rank()}, "
                f"size={self.size()})")


class _NonMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = _NonMember()


group = GroupMember


_CLOSING = "__fastt/closing"   # csrc/distributed/store.cpp's kClosingKey


class _State:
    store = None           # the default group's store (new_group uses it)
    own_store = False      # made by init_process_group's rendezvous
    rank = 0
    local_groups = {}      # use_local_synchronization: calls per rank list
    backend = None
    timeout = default_pg_timeout
    master = "127.0.0.1"   # MASTER_ADDR (picks Gloo's listening address)
    groups = 0             # new_group calls so far (their store prefixes)


def is_initialized():
    return GroupMember.WORLD is not None


def _world():
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, "
                         "please make sure to call init_process_group.")
    return GroupMember.WORLD


def _group(group):
    g = _world() if group is None else group
    if g is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {g!r}")
    return g


def _env(name, default=None):
    v = os.environ.get(name, default)
    if v is None:
        raise ValueError("Error initializing torch.distributed using env:// "
                         f"rendezvous: environment variable {name} expected,"
                         " but not set")
    return v


def _local_hostname(master):
    """The address Gloo listens on: loopback for a local job, else this
    host's name (GLOO_SOCKET_HOSTNAME overrides)."""
    forced = os.environ.get("GLOO_SOCKET_HOSTNAME")
    if forced:
        return forced
    try:
        infos = socket.getaddrinfo(master, None)
        if all(i[4][0].startswith("127.") or i[4][0] == "::1"
               for i in infos):
            return "127.0.0.1"
    except OSError:
        pass
    name = socket.gethostname()
    try:
        socket.getaddrinfo(name, None)
        return name
    except OSError:
        return "127.0.0.1"


def _rendezvous(init_method, rank, world_size, timeout):
    """Returns (store, rank, world_size, master host) of an init_method."""
    url = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(url.query))
    if rank < 0 and "rank" in query:
        rank = int(query["rank"])
    if world_size < 0 and "world_size" in query:
        world_size = int(query["world_size"])
    if url.scheme == "env":
        if rank < 0:
            rank = int(_env("RANK"))
        if world_size < 0:
            world_size = int(_env("WORLD_SIZE"))
        host = _env("MASTER_ADDR")
        port = int(_env("MASTER_PORT"))
    elif url.scheme == "tcp":
        host, port = url.hostname, url.port
        if host is None or port is None:
            raise ValueError(f"tcp:// init_method needs host:port, got "
                             f"{init_method!r}")
    elif url.scheme == "file":
        if rank < 0 or world_size < 0:
            raise ValueError("file:// rendezvous needs rank and world_size")
        path = urllib.parse.unquote(url.path)
        return FileStore(path, world_size), rank, world_size, "127.0.0.1"
    else:
        raise ValueError(f"unsupported init_method {init_method!r}: fastt "
                         "knows env://, tcp://host:port and file://path")
    if rank < 0 or world_size < 0:
        raise ValueError(f"{url.scheme}:// rendezvous needs rank and "
                         "world_size (arguments or ?rank=&world_size=)")
    store = TCPStore(host, port, world_size, is_master=(rank == 0),
                     timeout=timeout)
    return store, rank, world_size, host


def _backends(backend):
    """(name, gloo?, nccl?) of a backend argument: "gloo" (CUDA tensors
    through host copies), "nccl" (CUDA tensors; CPU ones and the object
    collectives on Gloo beside it, where Gloo is built), or torch's
    "cpu:gloo,cuda:nccl" form; None: Gloo, plus NCCL when a GPU and the
    NCCL library are here."""
    if backend is None:
        nccl = fastt.cuda.is_available() and is_nccl_available()
        return (Backend("cpu:gloo,cuda:nccl") if nccl else Backend.GLOO,
                True, nccl)
    b = str(backend).lower()
    names = ({p.split(":", 1)[1] for p in b.split(",")} if ":" in b
             else {b})
    bad = names - {Backend.GLOO, Backend.NCCL}
    if bad:
        raise ValueError(f"Invalid backend: '{backend}' (fastt has 'gloo' "
                         "and 'nccl')")
    nccl = Backend.NCCL in names
    if nccl and not fastt.cuda.is_built():
        raise RuntimeError("Distributed package doesn't have NCCL built in: "
                           "fastt was built without CUDA; use "
                           "backend='gloo'")
    gloo = Backend.GLOO in names or is_gloo_available()
    if gloo and not is_gloo_available():
        raise RuntimeError("fastt was built without Gloo: install "
                           "libgloo-dev (apt-get install libgloo-dev) and "
                           "rebuild fastt")
    return Backend(b), gloo, nccl


def _device_index(device_id):
    """init_process_group's device_id: the CUDA device whose NCCL
    communicator is made at once (-1: each on its first collective)."""
    if device_id is None:
        return -1
    if isinstance(device_id, int):
        return device_id
    d = fastt.device(device_id)
    if d.type != "cuda":
        raise ValueError(f"device_id must be a CUDA device, got {d}")
    return d.index if d.index is not None else fastt.cuda.current_device()


def _make_group(store, rank, size, timeout, gloo, nccl, master, device=-1):
    tms = _ms(timeout)
    # GLOO_SOCKET_IFNAME: the interface Gloo binds (torch's variable).
    iface = os.environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0]
    g = (_D._gloo_group(PrefixStore("gloo", store)._s, rank, size, tms,
                        _local_hostname(master), iface) if gloo else None)
    n = (_D._nccl_group(PrefixStore("nccl", store)._s, rank, size, tms,
                        _nccl_library(), device) if nccl else None)
    return g, n


def init_process_group(backend=None, init_method=None, timeout=None,
                       world_size=-1, rank=-1, store=None, group_name="",
                       pg_options=None, device_id=None):
    """Joins this process to the job's default group (torch's
    init_process_group, on Gloo and NCCL)."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group "
                         "twice!")
    name, gloo, nccl = _backends(backend)
    timeout = default_pg_timeout if timeout is None else timeout
    if store is not None:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        if rank < 0 or world_size <= 0:
            raise ValueError("rank and world_size must be given with store")
        master = os.environ.get("MASTER_ADDR", "127.0.0.1")
        own = False
    else:
        store, rank, world_size, master = _rendezvous(
            init_method or "env://", rank, world_size, timeout)
        own = True
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank} for world_size {world_size}")
    store.set_timeout(timeout)
    impl, nimpl = _make_group(PrefixStore("default_pg", store), rank,
                              world_size, timeout, gloo, nccl, master,
                              _device_index(device_id) if nccl else -1)
    _State.store = store
    _State.own_store = own
    _State.rank = rank
    _State.backend = name
    _State.timeout = timeout
    _State.master = master
    _State.groups = 0
    _State.local_groups = {}
    GroupMember.WORLD = ProcessGroup(impl, range(world_size), name,
                                     group_name or "default_pg", nimpl)


def destroy_process_group(group=None):
    """Leaves a group (the default one: every group, and the store
    init_process_group made: rank 0 marks it closing before it goes and the
    others wait for that, up to 30 s, so that a group made again meets
    the new store)."""
    if group is None or group is GroupMember.WORLD:
        GroupMember.WORLD = None
        store, _State.store = _State.store, None
        _State.backend = None
        if isinstance(store, TCPStore) and _State.own_store:
            try:
                if _State.rank == 0:
                    store.set(_CLOSING, "1")
                else:
                    store.wait([_CLOSING], min(
                        _State.timeout, datetime.timedelta(seconds=30)))
                    store._s.wait_server_gone(5000)
            except DistError:
                pass   # rank 0 is gone or slow: nothing to wait for
        del store
    elif isinstance(group, ProcessGroup):
        group._impl = None
        group._nccl = None


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None,
              device_id=None):
    """A group of some ranks of the world. Every rank of the world calls
    it, in the same order (torch's rule); non-members get
    GroupMember.NON_GROUP_MEMBER."""
    world = _world()
    n = world.size()
    ranks = list(range(n)) if ranks is None else sorted(int(r) for r in
                                                        ranks)
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < n for r in ranks):
        raise ValueError(f"new_group: ranks {ranks} must be distinct ranks "
                         f"of the world (size {n})")
    name, gloo, nccl = (_backends(backend) if backend is not None else
                        (_State.backend, world._impl is not None,
                         world._nccl is not None))
    me = world.rank()
    if use_local_synchronization:
        # Only the members call it: name the group by its ranks and how
        # many such groups came before (the same count on every member).
        key = tuple(ranks)
        k = _State.local_groups.get(key, 0) + 1
        _State.local_groups[key] = k
        tag = "local_" + "_".join(map(str, ranks)) + f"_{k}"
        if me not in ranks:
            raise ValueError("new_group(use_local_synchronization=True) "
                             "is called by the group's members only")
    else:
        _State.groups += 1
        tag = f"group_{_State.groups}"
        if me not in ranks:
            return GroupMember.NON_GROUP_MEMBER
    timeout = _State.timeout if timeout is None else timeout
    impl, nimpl = _make_group(
        PrefixStore(tag, _State.store), ranks.index(me), len(ranks), timeout,
        gloo, nccl, _State.master)
    return ProcessGroup(impl, ranks, name, tag, nimpl)


def get_rank(group=None):
    g = _group(group)
    return -1 if g is None else g.rank()


def get_world_size(group=None):
    g = _group(group)
    return -1 if g is None else g.size()


def get_backend(group=None):
    g = _group(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return g._backend


def get_process_group_ranks(group):
    g = _group(group)
    return list(g._ranks) if g is not None else []


def get_global_rank(group, group_rank):
    g = _group(group)
    if g is None or not 0 <= group_rank < len(g._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group "
                         f"{group}")
    return g._ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group)
    if g is None or global_rank not in g._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group "
                         f"{group}")
    return g._ranks.index(global_rank)


def get_node_local_rank(fallback_rank=None):
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment (start the "
                       "script with python -m fastt.distributed.run)")


# ---- Work and buffers ----

class Work:
    """An operation in flight (async_op=True): wait() blocks until it is
    done (and raises its error), then the tensors hold the results."""

    def __init__(self, impl, finish=None, result=None):
        self._impl = impl
        self._finish = finish
        self._result = result
        self._done = False
        self._error = None

    def wait(self, timeout=None):
        if not self._done:
            try:
                self._impl.wait(0 if timeout is None else _ms(timeout))
            except BaseException as e:
                self._error = e
                self._done = True
                self._finish = None
                raise
            self._done = True
            if self._finish is not None:
                f, self._finish = self._finish, None
                f()
        elif self._error is not None:
            raise self._error
        return True

    def is_completed(self):
        """True when the results are in the tensors (a finished operation
        is completed here: its copies back and local steps run now)."""
        if self._done:
            return True
        if self._impl.is_completed():
            self.wait()
            return True
        return False

    def is_success(self):
        if not self.is_completed():
            raise RuntimeError("Work.is_success: the work is not done yet")
        return self._impl.is_success()

    def exception(self):
        return self._error

    def result(self):
        self.wait()
        return list(self._result or [])

    def _source_rank(self):
        return self._impl.source_rank()

    def synchronize(self):
        self.wait()


def _check(t, what):
    if not isinstance(t, fastt.Tensor):
        raise TypeError(f"{what}: expected a fastt.Tensor, got "
                        f"{type(t).__name__}")
    return t


def _staged(t, what, dev="cpu"):
    """(a contiguous buffer for t on the back end's device, whether
    results must go back)."""
    _check(t, what)
    if str(t.device) == dev and t.is_contiguous():
        return t, False
    return t.detach().to(dev).contiguous(), True


def _run(impl_work, async_op, finish=None, result=None):
    w = Work(impl_work, finish, result)
    if async_op:
        return w
    w.wait()
    return None


def _copy_back(pairs):
    def finish():
        with fastt.no_grad():
            for dst, src in pairs:
                dst.copy_(src.reshape(dst.shape))
    return finish


def _member(group, tensor=None):
    """(group, back end, its device) for an op on `tensor`: NCCL for a
    CUDA tensor when the group has it, else Gloo (CUDA tensors through host
    copies); (None, None, None) when this rank is not in the group."""
    g = _group(group)
    if g is None:
        return None, None, None
    if g._impl is None and g._nccl is None:
        raise ValueError("the process group was destroyed")
    if g._nccl is not None and (g._impl is None or (
            tensor is not None and tensor.device.type == "cuda")):
        if tensor is not None and tensor.device.type != "cuda":
            raise ValueError("the NCCL back end takes CUDA tensors, got a "
                             f"{tensor.device} tensor")
        return g, g._nccl, (str(tensor.device) if tensor is not None
                            else "cuda")
    return g, g._impl, "cpu"


def _to_group_rank(g, rank, group_rank, what):
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"{what}: give either a global rank or a "
                             "group rank, not both")
        r = int(group_rank)
    else:
        if rank is None:
            raise ValueError(f"{what}: a rank is required")
        if int(rank) not in g._ranks:
            raise ValueError(f"{what}: rank {rank} is not part of the "
                             "group")
        r = g._ranks.index(int(rank))
    if not 0 <= r < g.size():
        raise ValueError(f"{what}: invalid rank {r} for a group of size "
                         f"{g.size()}")
    return r


def _op(op):
    if isinstance(op, ReduceOp):
        return int(op)
    try:
        return int(ReduceOp(op))
    except (ValueError, TypeError):
        raise ValueError(f"invalid ReduceOp {op!r}") from None


# ---- Collectives ----

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces tensor across the group; every rank gets the result."""
    g, impl, dev = _member(group, tensor)
    if impl is None:
        return None
    buf, back = _staged(tensor, "all_reduce", dev)
    w = impl.allreduce(buf, _op(op))
    return _run(w, async_op, _copy_back([(tensor, buf)]) if back else None,
                [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    g, impl, dev = _member(group, tensor)
    if impl is None:
        return None
    root = _to_group_rank(g, src, group_src, "broadcast")
    buf, back = _staged(tensor, "broadcast", dev)
    w = impl.broadcast(buf, root)
    return _run(w, async_op, _copy_back([(tensor, buf)]) if back else None,
                [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False,
           group_dst=None):
    g, impl, dev = _member(group, tensor)
    if impl is None:
        return None
    root = _to_group_rank(g, dst, group_dst, "reduce")
    buf, back = _staged(tensor, "reduce", dev)
    if g.rank() != root:    # Gloo uses the others' buffers as scratch
        buf = buf.clone() if not back else buf
    w = impl.reduce(buf, root, _op(op))
    mine = back and g.rank() == root
    return _run(w, async_op, _copy_back([(tensor, buf)]) if mine else None,
                [tensor])


def _same_layout(tensors, ref, what):
    for t in tensors:
        _check(t, what)
        if t.dtype != ref.dtype or t.numel() != ref.numel():
            raise ValueError(f"{what}: every tensor must have the dtype and "
                             f"number of elements of the input ({ref.dtype}"
                             f", {ref.numel()}); got {t.dtype}, {t.numel()}")


def _flat_out(n, ref):
    return fastt.empty((n * ref.numel(),), dtype=ref.dtype,
                       device=ref.device)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] receives rank r's tensor."""
    g, impl, dev = _member(group, tensor)
    if impl is None:
        return None
    if len(tensor_list) != g.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} "
                         f"tensors for a group of size {g.size()}")
    _same_layout(tensor_list, tensor, "all_gather")
    buf, _ = _staged(tensor, "all_gather", dev)
    out = _flat_out(g.size(), buf)
    w = impl.allgather(out, buf)
    blocks = out.chunk(g.size()) if out.numel() else [out] * g.size()
    return _run(w, async_op, _copy_back(list(zip(tensor_list, blocks))),
                tensor_list)


def _block_target(output, n, inp, what):
    _check(output, what)
    if output.dtype != inp.dtype or output.numel() != n * inp.numel():
        raise ValueError(f"{what}: the output must hold {n} x the input's "
                         f"{inp.numel()} elements of {inp.dtype}; got "
                         f"{output.numel()} of {output.dtype}")


def all_gather_into_tensor(output_tensor, input_tensor, group=None,
                           async_op=False):
    """output_tensor (concatenated or stacked) receives every rank's
    input_tensor in rank order."""
    g, impl, dev = _member(group, input_tensor)
    if impl is None:
        return None
    _block_target(output_tensor, g.size(), input_tensor,
                  "all_gather_into_tensor")
    buf, _ = _staged(input_tensor, "all_gather_into_tensor", dev)
    out, back = _staged(output_tensor, "all_gather_into_tensor", dev)
    w = impl.allgather(out.reshape(-1), buf)
    return _run(w, async_op,
                _copy_back([(output_tensor, out)]) if back else None,
                [output_tensor])


def _local_reduce(blocks, op, dtype):
    """Reduces the rows of `blocks` (one per rank) as ReduceOp `op`
    does across ranks (the same dtype rules as the C++ reductions)."""
    R = ReduceOp
    n = blocks.shape[0]
    cplx = dtype.is_complex
    if dtype == fastt.bool:
        if op in (R.SUM, R.MAX, R.BOR):
            return blocks.any(0)
        if op in (R.PRODUCT, R.MIN, R.BAND):
            return blocks.all(0)
        if op == R.BXOR:
            return blocks.to(fastt.int64).sum(0) % 2 == 1
    elif dtype.is_floating_point or cplx:
        acc = (fastt.float32 if dtype in (fastt.float16, fastt.bfloat16)
               else dtype)
        if op == R.SUM:
            return blocks.to(acc).sum(0).to(dtype)
        if op == R.AVG:
            return (blocks.to(acc).sum(0) / n).to(dtype)
        if op == R.PRODUCT:   # (fastt's prod has no complex kernel)
            out = blocks[0].to(acc)
            for k in range(1, n):
                out = out * blocks[k].to(acc)
            return out.to(dtype)
        if op in (R.MIN, R.MAX) and not cplx:
            return blocks.amin(0) if op == R.MIN else blocks.amax(0)
    else:
        if op == R.SUM:
            return blocks.sum(0).to(dtype)          # wraps like the ranks'
        if op == R.PRODUCT:
            return blocks.prod(0).to(dtype)
        if op in (R.MIN, R.MAX):
            return blocks.amin(0) if op == R.MIN else blocks.amax(0)
        if op in (R.BAND, R.BOR, R.BXOR):
            f = {R.BAND: fastt.bitwise_and, R.BOR: fastt.bitwise_or,
                 R.BXOR: fastt.bitwise_xor}[op]
            out = blocks[0]
            for k in range(1, n):
                out = f(out, blocks[k])
            return out
    name = str(dtype).rsplit(".", 1)[-1]
    raise DistBackendError(f"Cannot use ReduceOp.{op.name} with {name} "
                           "tensors")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None,
                          async_op=False):
    """Reduces input (size() blocks) across the group; rank r's output
    receives block r. An all-to-all brings every rank's block r to rank r
    (the (n-1)/n of the data a ring reduce-scatter moves too), then rank r
    reduces its n blocks locally, in rank order."""
    g, impl, dev = _member(group, output)
    if impl is None:
        return None
    _block_target(input, g.size(), output, "reduce_scatter_tensor")
    op = ReduceOp(_op(op))
    _local_reduce(fastt.zeros(1, 1, dtype=output.dtype), op,
                  output.dtype)          # refuse a bad op before sending
    buf, _ = _staged(input, "reduce_scatter_tensor", dev)
    flat = buf.reshape(-1)
    recv = fastt.empty_like(flat)
    w = impl.alltoall(recv, flat, [], [])

    def finish():
        red = _local_reduce(recv.view(g.size(), -1), op, output.dtype)
        with fastt.no_grad():
            output.copy_(red.reshape(output.shape))
    return _run(w, async_op, finish, [output])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None,
                   async_op=False):
    g, impl, dev = _member(group, output)
    if impl is None:
        return None
    if len(input_list) != g.size():
        raise ValueError(f"reduce_scatter: input_list has "
                         f"{len(input_list)} tensors for a group of size "
                         f"{g.size()}")
    _same_layout(input_list, output, "reduce_scatter")
    flat = fastt.cat([t.detach().to(dev).reshape(-1) for t in input_list])
    return reduce_scatter_tensor(output, flat, op, group, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False,
           group_dst=None):
    g, impl, dev = _member(group, tensor)
    if impl is None:
        return None
    if dst is None and group_dst is None:
        dst = 0
    root = _to_group_rank(g, dst, group_dst, "gather")
    buf, _ = _staged(tensor, "gather", dev)
    if g.rank() == root:
        if gather_list is None or len(gather_list) != g.size():
            raise ValueError("gather: the destination rank needs a "
                             f"gather_list of {g.size()} tensors")
        _same_layout(gather_list, tensor, "gather")
        out = _flat_out(g.size(), buf)
        blocks = out.chunk(g.size()) if out.numel() else [out] * g.size()
        finish = _copy_back(list(zip(gather_list, blocks)))
    else:
        if gather_list:
            raise ValueError("gather: gather_list must be None or empty on "
                             "ranks other than the destination")
        out, finish = None, None
    return _run(impl.gather(out, buf, root), async_op, finish,
                gather_list or [])


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False,
            group_src=None):
    g, impl, dev = _member(group, tensor)
    if impl is None:
        return None
    if src is None and group_src is None:
        src = 0
    root = _to_group_rank(g, src, group_src, "scatter")
    out, back = _staged(tensor, "scatter", dev)
    if g.rank() == root:
        if scatter_list is None or len(scatter_list) != g.size():
            raise ValueError("scatter: the source rank needs a "
                             f"scatter_list of {g.size()} tensors")
        _same_layout(scatter_list, tensor, "scatter")
        inp = fastt.cat([t.detach().to(dev).reshape(-1)
                         for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("scatter: scatter_list must be None or empty "
                             "on ranks other than the source")
        inp = None
    w = impl.scatter(out, inp, root)
    return _run(w, async_op, _copy_back([(tensor, out)]) if back else None,
                [tensor])


def all_to_all_single(output, input, output_split_sizes=None,
                      input_split_sizes=None, group=None, async_op=False):
    """Splits input along dim 0 (equal parts, or input_split_sizes) and
    sends part r to rank r; output receives the parts in rank order."""
    g, impl, dev = _member(group, input)
    if impl is None:
        return None
    _check(output, "all_to_all_single")
    _check(input, "all_to_all_single")
    if output.dtype != input.dtype:
        raise ValueError("all_to_all_single: output and input must have "
                         "one dtype")
    n = g.size()
    row_in = input[0].numel() if input.dim() and input.shape[0] else 0
    row_out = output[0].numel() if output.dim() and output.shape[0] else 0

    def counts(splits, t, row, what):
        if not splits:
            if t.dim() == 0 or t.shape[0] % n:
                raise ValueError(f"all_to_all_single: the {what}'s first "
                                 f"dimension must divide by {n}")
            return []
        if len(splits) != n or sum(splits) != t.shape[0]:
            raise ValueError(f"all_to_all_single: {what}_split_sizes "
                             f"{list(splits)} must have {n} entries summing"
                             f" to {t.shape[0]}")
        return [int(s) * row for s in splits]

    ic = counts(input_split_sizes, input, row_in, "input")
    oc = counts(output_split_sizes, output, row_out, "output")
    if bool(ic) != bool(oc):
        ic = ic or [input.numel() // n] * n
        oc = oc or [output.numel() // n] * n
    buf, _ = _staged(input, "all_to_all_single", dev)
    out, back = _staged(output, "all_to_all_single", dev)
    w = impl.alltoall(out.reshape(-1), buf.reshape(-1), oc, ic)
    return _run(w, async_op, _copy_back([(output, out)]) if back else None,
                [output])


def all_to_all(output_tensor_list, input_tensor_list, group=None,
               async_op=False):
    g, impl, dev = _member(group, input_tensor_list[0])
    if impl is None:
        return None
    n = g.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: both lists need {n} tensors")
    dtype = input_tensor_list[0].dtype
    if any(t.dtype != dtype for t in
           list(output_tensor_list) + list(input_tensor_list)):
        raise ValueError("all_to_all: every tensor must have one dtype")
    inp = fastt.cat([t.detach().to(dev).reshape(-1)
                     for t in input_tensor_list])
    out = fastt.empty((sum(t.numel() for t in output_tensor_list),),
                      dtype=dtype, device=dev)
    oc = [t.numel() for t in output_tensor_list]
    ic = [t.numel() for t in input_tensor_list]
    w = impl.alltoall(out, inp, oc, ic)
    parts = list(out.split(oc)) if out.numel() else [out] * n
    return _run(w, async_op,
                _copy_back(list(zip(output_tensor_list, parts))),
                output_tensor_list)


def barrier(group=None, async_op=False, device_ids=None):
    g, impl, dev = _member(group)
    if impl is None:
        return None
    return _run(impl.barrier(), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    g, impl, dev = _member(group)
    if impl is None:
        return None
    Work(impl.barrier()).wait(timeout)


# ---- Point to point ----

def _p2p(tensor, peer, group, group_peer, what):
    g, impl, dev = _member(group, tensor)
    if impl is None:
        raise ValueError(f"{what}: this rank is not in the group")
    r = _to_group_rank(g, peer, group_peer, what)
    if r == g.rank():
        side = "destination" if what.endswith("send") else "source"
        raise ValueError(f"Invalid {side} rank: should not be the same as "
                         "the rank of the current process.")
    return g, impl, r, dev


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    g, impl, r, dev = _p2p(tensor, dst, group, group_dst, "isend")
    buf, _ = _staged(tensor, "isend", dev)
    return Work(impl.send(buf, r, int(tag)), result=[tensor])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    g, impl, dev = _member(group, tensor)
    if impl is None:
        raise ValueError("irecv: this rank is not in the group")
    if src is None and group_src is None:
        r = -1
    else:
        g, impl, r, dev = _p2p(tensor, src, group, group_src, "irecv")
    buf, back = _staged(tensor, "irecv", dev)
    w = Work(impl.recv(buf, r, int(tag)),
             _copy_back([(tensor, buf)]) if back else None, [tensor])
    w._group = g
    return w


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into tensor; returns the sender's (global) rank."""
    w = irecv(tensor, src, group, tag, group_src)
    w.wait()
    return w._group._ranks[w._source_rank()]


class P2POp:
    def __init__(self, op, tensor, peer=None, group=None, tag=0,
                 group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("P2POp: op must be isend or irecv")
        self.op, self.tensor, self.peer = op, tensor, peer
        self.group, self.tag, self.group_peer = group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Posts the sends and receives together (one NCCL group, so a ring
    exchange cannot deadlock); returns their Works."""
    impls = []
    for p in p2p_op_list:
        _, impl, _ = _member(p.group, p.tensor)
        if impl is not None and all(impl is not i for i in impls):
            impls.append(impl)
    for impl in impls:
        impl.group_start()
    try:
        return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer)
                for p in p2p_op_list]
    finally:
        for impl in impls:
            impl.group_end()


# ---- Objects (pickled, as torch does) ----

def _pickled(obj):
    data = pickle.dumps(obj)
    return fastt.tensor(list(data), dtype=fastt.uint8), len(data)


def _unpickled(t, n):
    return pickle.loads(bytes(t[:n].tolist()))


def _sizes(n, group):
    g = _group(group)
    out = fastt.zeros(g.size(), dtype=fastt.int64)
    all_gather_into_tensor(out, fastt.tensor([n], dtype=fastt.int64),
                           group=group)
    return out.tolist()


def all_gather_object(object_list, obj, group=None):
    g, impl, dev = _member(group)
    if impl is None:
        return
    data, n = _pickled(obj)
    sizes = _sizes(n, group)
    m = max(sizes)
    pad = fastt.zeros(m, dtype=fastt.uint8)
    pad[:n] = data
    out = fastt.zeros(m * g.size(), dtype=fastt.uint8)
    all_gather_into_tensor(out, pad, group=group)
    for r in range(g.size()):
        object_list[r] = _unpickled(out[r * m:(r + 1) * m], sizes[r])


def gather_object(obj, object_gather_list=None, dst=None, group=None,
                  group_dst=None):
    g, impl, dev = _member(group)
    if impl is None:
        return
    if dst is None and group_dst is None:
        dst = 0
    root = _to_group_rank(g, dst, group_dst, "gather_object")
    data, n = _pickled(obj)
    sizes = _sizes(n, group)
    m = max(sizes)
    pad = fastt.zeros(m, dtype=fastt.uint8)
    pad[:n] = data
    mine = g.rank() == root
    outs = [fastt.zeros(m, dtype=fastt.uint8) for _ in range(g.size())]
    gather(pad, outs if mine else None, group=group, group_dst=root)
    if mine:
        for r in range(g.size()):
            object_gather_list[r] = _unpickled(outs[r], sizes[r])


def broadcast_object_list(object_list, src=None, group=None, device=None,
                          group_src=None):
    g, impl, dev = _member(group)
    if impl is None:
        return
    if src is None and group_src is None:
        src = 0
    root = _to_group_rank(g, src, group_src, "broadcast_object_list")
    if g.rank() == root:
        data, n = _pickled(list(object_list))
        size = fastt.tensor([n], dtype=fastt.int64)
    else:
        size = fastt.zeros(1, dtype=fastt.int64)
    broadcast(size, group=group, group_src=root)
    n = int(size.item())
    if g.rank() != root:
        data = fastt.zeros(n, dtype=fastt.uint8)
    broadcast(data, group=group, group_src=root)
    if g.rank() != root:
        objs = _unpickled(data, n)
        for i in range(len(object_list)):
            object_list[i] = objs[i]


def scatter_object_list(scatter_object_output_list,
                        scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    g, impl, dev = _member(group)
    if impl is None:
        return
    if src is None and group_src is None:
        src = 0
    root = _to_group_rank(g, src, group_src, "scatter_object_list")
    holder = [scatter_object_input_list if g.rank() == root else None]
    broadcast_object_list(holder, group=group, group_src=root)
    scatter_object_output_list[0] = holder[0][g.rank()]

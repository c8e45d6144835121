"""Functions that test_multiprocessing.py starts in child processes (the
children import them by name: this directory is on the sys.path a
"spawn" child inherits). Each writes what it saw into files under `out`,
a directory of the test's tmp_path. fastt and torch are imported inside
the functions that use them, so that a child pays only for its own."""

import os
import pickle
import signal
import time


def _write(out, name, value):
    path = os.path.join(out, name)
    with open(path + ".part", "wb") as f:
        pickle.dump(value, f)
    os.replace(path + ".part", path)


def write_index(i, out):
    _write(out, f"idx{i}", (i, os.getpid()))


def write_args(i, out, tensor, extra):
    import fastt
    # The child gets a copy: an in-place change stays here.
    got = (tensor.tolist(), str(tensor.dtype), tuple(tensor.shape), extra)
    tensor.add_(100)
    assert isinstance(tensor, fastt.Tensor)
    _write(out, f"args{i}", got)


def sleep_then_write(i, out, seconds):
    time.sleep(seconds)
    _write(out, f"slept{i}", i)


def raise_or_sleep(i, out):
    """Index 1 raises once every index has written its pid; the others
    sleep (they must be ended by the parent)."""
    _write(out, f"pid{i}", os.getpid())
    if i != 1:
        time.sleep(60)
        return
    deadline = time.monotonic() + 30
    while not all(os.path.exists(os.path.join(out, f"pid{j}"))
                  for j in (0, 2)) and time.monotonic() < deadline:
        time.sleep(0.01)
    raise ValueError(f"bad value in child {i}")


def exit_code_3(i):
    os._exit(3)


def sigkill_self(i):
    os.kill(os.getpid(), signal.SIGKILL)


def raise_value_error(i):
    raise ValueError(f"bad value in child {i}")


def queue_roundtrip(i, inq, outq):
    t = inq.get(timeout=30)
    t.mul_(2)  # the sender's tensor must not change
    outq.put((i, t))


def all_reduce_rank(rank, world_size, port, out):
    import fastt
    import fastt.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world_size)
    t = fastt.tensor([float(rank + 1), 10.0 * rank])
    dist.all_reduce(t)
    _write(out, f"rank{rank}", (dist.get_rank(), dist.get_world_size(),
                                t.tolist()))
    dist.destroy_process_group()

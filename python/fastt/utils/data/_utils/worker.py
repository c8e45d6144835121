"""fastt.utils.data._utils.worker: the DataLoader worker process
(torch.utils.data._utils.worker): seeding, get_worker_info and the loop
that turns (task id, indices) from its index queue into (task id, batch)
on the shared result queue. Batches go through shm.pack (tensor bytes in
shared memory); exceptions as ExceptionWrapper; an IterableDataset's end as
_IterableDatasetStopIteration."""

import os
import pickle
import queue
import random
from dataclasses import dataclass
from typing import Any, Optional

import fastt

from . import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, shm
from .fetch import create_fetcher


class ManagerWatchdog:
    """Tells a worker whether its main process is still alive."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker: id (0 to
    num_workers - 1), num_workers, seed (this worker's fastt/random seed)
    and dataset (this worker's copy)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Optional[Any] = None
    worker_method: Optional[str] = "multiprocessing"


_worker_info = None


def get_worker_info():
    """This DataLoader worker's WorkerInfo; None in the main process. A
    dataset uses it to split work among workers (an IterableDataset
    yielding every num_workers-th item from id on, say)."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at a new epoch; echoed back."""
    seed: Optional[int] = None


def _generate_state(base_seed, worker_id):
    """The numpy seed torch gives worker worker_id (a SeedSequence-style
    hash of base_seed and the id; torch's _generate_state)."""
    INIT_A = 0x43B0D7E5
    MULT_A = 0x931E8875
    INIT_B = 0x8B51F9DD
    MULT_B = 0x58F38DED
    MIX_MULT_L = 0xCA01F9DD
    MIX_MULT_R = 0x4973F715
    XSHIFT = 4 * 8 // 2
    MASK32 = 0xFFFFFFFF

    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_A = INIT_A

    def hash(value):
        nonlocal hash_const_A
        value = (value ^ hash_const_A) & MASK32
        hash_const_A = (hash_const_A * MULT_A) & MASK32
        value = (value * hash_const_A) & MASK32
        value = (value ^ (value >> XSHIFT)) & MASK32
        return value

    def mix(x, y):
        result_x = (MIX_MULT_L * x) & MASK32
        result_y = (MIX_MULT_R * y) & MASK32
        result = (result_x - result_y) & MASK32
        result = (result ^ (result >> XSHIFT)) & MASK32
        return result

    for i in range(len(pool)):
        pool[i] = hash(entropy[i])
    for i_src in range(len(pool)):
        for i_dst in range(len(pool)):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash(pool[i_src]))
    hash_const_B = INIT_B
    state = []
    for i_dst in range(4):
        data_val = pool[i_dst]
        data_val = (data_val ^ hash_const_B) & MASK32
        hash_const_B = (hash_const_B * MULT_B) & MASK32
        data_val = (data_val * hash_const_B) & MASK32
        data_val = (data_val ^ (data_val >> XSHIFT)) & MASK32
        state.append(data_val)
    return state


def _wrap_exception(worker_id):
    """The current exception as a picklable ExceptionWrapper (a class that
    can't be pickled, e.g. one defined in a function, travels by name and
    is re-raised as RuntimeError)."""
    w = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    try:
        pickle.dumps(w.exc_type)
    except Exception:
        w.exc_type = None
    return w


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event,
                 auto_collation, collate_fn, drop_last, base_seed, init_fn,
                 worker_id, num_workers, persistent_workers):
    """The body of worker process worker_id (see the module docstring).
    Returns when it reads None from its index queue or the main process
    dies."""
    try:
        # OpenMP's thread pool does not survive fork: one thread, as torch.
        fastt.set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        fastt.manual_seed(seed)
        try:
            import numpy as np
            np.random.seed(_generate_state(base_seed, worker_id))
        except ImportError:  # pragma: no cover - numpy is a dependency
            pass

        global _worker_info
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers,
                                  seed=seed, dataset=dataset)

        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation,
                                     collate_fn, drop_last)
        except Exception:
            init_exception = _wrap_exception(worker_id)

        # An IterableDataset's worker may run out before the others: it
        # says so once (_IterableDatasetStopIteration) and then skips tasks
        # until told to resume or to exit.
        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if iterable and init_exception is None:
                    try:
                        fetcher = create_fetcher(iterable, dataset,
                                                 auto_collation, collate_fn,
                                                 drop_last)
                    except Exception:
                        init_exception = _wrap_exception(worker_id)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = shm.pack(fetcher.fetch(index))
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = _wrap_exception(worker_id)
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    # Leaving normally flushes data_queue (the main process drains it while
    # it waits for the workers to exit) so no shared block is left behind.

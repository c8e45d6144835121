"""fastt.utils.data.dataloader: DataLoader (torch.utils.data.dataloader).

num_workers=0 loads in the calling process; a TensorDataset (or a Subset
of one) with the default collate is then batched by one index_select per
stored tensor per batch. num_workers>0 starts worker processes
(_MultiProcessingDataLoaderIter) with torch's semantics: per-worker seeds
(fastt, random, numpy), worker_init_fn, get_worker_info, prefetch_factor
tasks per worker in flight, results in sampler order (in_order=False: as
ready), timeout, persistent_workers, a worker's exception re-raised here
and a dead worker reported at once. Batches come back through shared
memory (_utils/shm.py): only their layout is pickled."""

import itertools
import math
import multiprocessing as python_multiprocessing
import multiprocessing.connection
import os
import queue
import time
import warnings
import weakref

import fastt

from . import _utils
from ._utils import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, shm
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import _as_index_tensor, _gather, _tensor_source
from ._utils.worker import (_IterableDatasetStopIteration, _ResumeIteration,
                            _worker_loop, get_worker_info)
from .dataset import IterableDataset
from .sampler import (_EXACT_ORDER_SAMPLERS, BatchSampler, RandomSampler,
                      SequentialSampler, _random_seed)

__all__ = ["DataLoader", "default_collate", "default_convert",
           "get_worker_info"]


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler:
    """An IterableDataset's 'sampler': None forever."""

    def __iter__(self):
        while True:
            yield None


# ---------------------------------------------------------------- pinning


def _accelerator_available():
    return fastt.cuda.is_available()


def pin_memory(data):
    """data with every tensor's .pin_memory() (containers rebuilt)."""
    if isinstance(data, fastt.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, dict):
        try:
            out = type(data)({k: pin_memory(v) for k, v in data.items()})
        except TypeError:
            out = {k: pin_memory(v) for k, v in data.items()}
        return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pin_memory(s) for s in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(s) for s in data)
    if isinstance(data, list):
        return [pin_memory(s) for s in data]
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data


def _pin_flag(loader):
    """torch's rule: pinning needs an accelerator; warn otherwise."""
    if not loader.pin_memory:
        return False
    if loader.pin_memory_device:
        warnings.warn("pin_memory_device is deprecated, the current "
                      "accelerator will be used as the device,ignore "
                      f"pin_memory_device='{loader.pin_memory_device}'.",
                      stacklevel=3)
    if not _accelerator_available():
        warnings.warn("'pin_memory' argument is set as true but no "
                      "accelerator is found, then device pinned memory "
                      "won't be used.", stacklevel=3)
        return False
    return True


# ---------------------------------------------------------------- loader


class _LoaderIter:
    """What iter(DataLoader) returns with num_workers=0: a batch iterator
    with len()."""

    __slots__ = ("_gen", "_loader")

    def __init__(self, loader, gen):
        self._loader = loader
        self._gen = gen

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._gen)

    def __len__(self):
        return len(self._loader)


class DataLoader:
    """Batches a dataset like torch.utils.data.DataLoader (see the module
    docstring for what num_workers > 0 does)."""

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None,
                 batch_sampler=None, num_workers=0, collate_fn=None,
                 pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in "
                "multiprocessing.let num_workers > 0 to enable "
                "multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected "
                                 "unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected "
                                 "unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected "
                                 "unspecified batch_sampler option, but got "
                                 f"batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with "
                             "shuffle")
        if batch_sampler is not None:
            if (batch_size != 1 or shuffle or sampler is not None
                    or drop_last):
                raise ValueError("batch_sampler option is mutually exclusive "
                                 "with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching "
                             "and is mutually exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = (default_collate if self._auto_collation
                          else default_convert)
        self.collate_fn = collate_fn
        self._iterator = None
        self._initialized = True
        self.check_worker_number_rationality()

    def __setattr__(self, attr, val):
        if self._initialized and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last",
                "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        if attr == "multiprocessing_context":
            val = self._check_context(val)
        super().__setattr__(attr, val)

    def _check_context(self, ctx):
        if ctx is None:
            return None
        if self.num_workers == 0:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process "
                "loading (num_workers > 0), but got "
                f"num_workers={self.num_workers}")
        if isinstance(ctx, str):
            valid = python_multiprocessing.get_all_start_methods()
            if ctx not in valid:
                raise ValueError(
                    "multiprocessing_context option should specify a valid "
                    f"start method in {valid!r}, but got "
                    f"multiprocessing_context={ctx!r}")
            ctx = python_multiprocessing.get_context(ctx)
        if not isinstance(ctx, python_multiprocessing.context.BaseContext):
            raise TypeError(
                "multiprocessing_context option should be a valid context "
                "object or a string specifying the start method, but got "
                f"multiprocessing_context={ctx}")
        return ctx

    @property
    def _dataset_kind(self):
        return _DatasetKind.Iterable if self._iterable else _DatasetKind.Map

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return n // self.batch_size
                return math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warns, as torch does, when num_workers exceeds the CPUs this
        process may use."""
        if not self.num_workers:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
            checked = True
        except AttributeError:  # pragma: no cover - not Linux
            cpus = os.cpu_count()
            checked = False
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is not None:
            suggest = (
                "Our suggested max number of worker in current system is "
                f"{cpus}{'' if checked else ' (`cpuset` is not taken into account)'}"
                ", which is smaller than what this DataLoader is going to "
                "create.")
        else:
            suggest = ("DataLoader is not able to compute a suggested max "
                       "number of worker in current system.")
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker "
            f"processes in total. {suggest} Please be aware that excessive "
            "worker creation might get DataLoader running slow or even "
            "freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.", stacklevel=3)

    def __iter__(self):
        if self.num_workers > 0:
            if not self.persistent_workers:
                return _MultiProcessingDataLoaderIter(self)
            it = self._iterator
            if it is None or it._shutdown:
                it = self._iterator = _MultiProcessingDataLoaderIter(self)
            else:
                it._reset(self)
            return it
        pin = _pin_flag(self)
        if self._iterable:
            gen = self._iter_iterable()
        elif not self._auto_collation:
            gen = self._iter_single()
        else:
            fast = _tensor_source(self.dataset, self.collate_fn)
            gen = (self._iter_tensor(*fast) if fast is not None
                   else self._iter_map())
        if pin:
            gen = map(pin_memory, gen)
        return _LoaderIter(self, gen)

    # -- num_workers=0: generic paths

    def _iter_single(self):
        ds, fn = self.dataset, self.collate_fn
        for i in self.sampler:
            yield fn(ds[i])

    def _iter_map(self):
        ds, fn = self.dataset, self.collate_fn
        getitems = getattr(ds, "__getitems__", None)
        for batch in self.batch_sampler:
            if callable(getitems):
                yield fn(getitems(batch))
            else:
                yield fn([ds[i] for i in batch])

    def _iter_iterable(self):
        fn, bs = self.collate_fn, self.batch_size
        if bs is None:
            for sample in self.dataset:
                yield fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == bs:
                yield fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield fn(batch)

    # -- num_workers=0, TensorDataset: one index_select per tensor per batch

    def _iter_tensor(self, tensors, mapping):
        bsampler = self.batch_sampler
        order = None
        if type(bsampler) is BatchSampler \
                and type(bsampler.sampler) in _EXACT_ORDER_SAMPLERS:
            order = bsampler.sampler._order_tensor()
        if order is not None:
            n, bs = order.size(0), bsampler.batch_size
            stop = n - n % bs if bsampler.drop_last else n
            batches = (order[i:i + bs] for i in range(0, stop, bs))
        else:
            size = (tensors[0].size(0) if mapping is None
                    else mapping.size(0))
            batches = (_as_index_tensor(b, size) for b in bsampler)
        for idx in batches:
            yield _gather(tensors, mapping, idx)


# ---------------------------------------------------------------- workers

class _WorkerPool:
    """The worker processes and queues of one iterator, and their
    shutdown. Kept apart from the iterator (which only points at it) and
    shut down by a weakref.finalize: when the iterator dies inside a
    reference cycle (a traceback holding it, say) the garbage collector
    finalizes the cycle's objects in any order, but the pool, reachable
    from the finalizer, is not part of that cycle, so its queues still
    work; the finalizer also runs at interpreter exit, before
    multiprocessing terminates daemonic workers."""

    def __init__(self, ctx):
        # Seconds shutdown waits for workers to exit by themselves; short
        # after a worker died (it may have died holding the result queue's
        # write lock, which would block the others' last flush).
        self.grace = MP_STATUS_CHECK_INTERVAL
        self.workers = []
        self.index_queues = []
        self.result_queue = ctx.Queue()
        self.done_event = ctx.Event()

    def drain(self):
        """Drops every result waiting on the queue (their shared blocks)."""
        q = self.result_queue
        while True:
            try:
                if not q._reader.poll():
                    return
                _, data = q.get(timeout=0.1)
            except (queue.Empty, OSError, EOFError, ValueError):
                return
            shm.release(data)

    def shutdown(self):
        try:
            self.done_event.set()
            for iq in self.index_queues:
                try:
                    iq.put(None)
                except (OSError, ValueError):
                    pass
            # Workers flush their results on the way out: keep reading so
            # a full pipe cannot block them, and unlink what they sent.
            deadline = time.monotonic() + self.grace
            while True:
                alive = [w for w in self.workers if w.is_alive()]
                if not alive or time.monotonic() >= deadline:
                    break
                self.drain()
                multiprocessing.connection.wait(
                    [self.result_queue._reader]
                    + [w.sentinel for w in alive], 0.05)
            self.drain()
        finally:
            pids = [w.pid for w in self.workers]
            for w in self.workers:
                if w.is_alive():
                    w.terminate()
            for w in self.workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
                try:
                    w.close()
                except ValueError:  # still running after terminate
                    pass
            for iq in self.index_queues:
                iq.close()
            self.result_queue.close()
            self.result_queue.join_thread()
            # Blocks of batches that never arrived (a worker killed or
            # terminated with results unsent): their names carry the pid.
            shm.sweep(pids)


class _MultiProcessingDataLoaderIter:
    """iter(DataLoader) with num_workers > 0. Task i (one batch's indices)
    goes to worker i % num_workers' index queue (skipping workers whose
    IterableDataset ran out); at most prefetch_factor * num_workers tasks
    are in flight; results come back on one queue and are handed out in
    task order (in_order=True) or as they arrive."""

    def __init__(self, loader):
        self._shutdown = True  # until the workers exist
        self._workers = []
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._pin_memory = _pin_flag(loader)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._in_order = loader.in_order
        self._sampler_iter = None
        self._peeked = []
        self._start_sampler()
        # Drawn after the sampler's first step so that a shuffled order is
        # the one num_workers=0 gives under the same seed.
        self._base_seed = _random_seed(loader.generator)
        self._num_yielded = 0
        self._len = None
        try:
            self._len = len(loader)
        except TypeError:
            pass

        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = python_multiprocessing
        # Shared blocks are registered by the workers with the resource
        # tracker: start it here so forked workers share this one.
        if shm._posixshmem is not None:
            from multiprocessing import resource_tracker
            resource_tracker.ensure_running()

        pool = self._pool = _WorkerPool(ctx)
        self._worker_result_queue = pool.result_queue
        self._workers_done_event = pool.done_event
        self._index_queues = pool.index_queues
        self._workers = pool.workers
        self._worker_queue_idx_cycle = itertools.cycle(
            range(self._num_workers))
        self._finalizer = weakref.finalize(self, pool.shutdown)
        self._shutdown = False
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()  # never block this process's exit
                w = ctx.Process(
                    target=_worker_loop,
                    args=(self._iterable, self._dataset, iq,
                          self._worker_result_queue,
                          self._workers_done_event, self._auto_collation,
                          self._collate_fn, self._drop_last,
                          self._base_seed, loader.worker_init_fn, i,
                          self._num_workers, self._persistent_workers),
                    daemon=True)
                w.start()
                # The child has its copy: the pool, kept alive by its
                # finalizer, must not keep the dataset or the functions
                # (and whatever they reference) alive here.
                w._args, w._kwargs = (), {}
                self._index_queues.append(iq)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def __iter__(self):
        return self

    def __len__(self):
        if self._len is None:
            raise TypeError("object of type '_MultiProcessingDataLoaderIter'"
                            " has no len()")
        return self._len

    def _start_sampler(self):
        """A new epoch's index iterator, its first index already drawn
        (samplers draw their random order on the first step)."""
        self._sampler_iter = iter(self._index_sampler)
        try:
            self._peeked = [next(self._sampler_iter)]
        except StopIteration:
            self._peeked = []

    def _reset(self, loader, first_iter=False):
        if not first_iter:
            self._start_sampler()
        self._num_yielded = 0
        self._send_idx = 0  # next task to send
        self._rcvd_idx = 0  # next task to hand out (in order)
        # task id -> (worker_id,) while in flight, (worker_id, data) once
        # received out of order
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        if not first_iter:
            for iq in self._index_queues:
                iq.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
                # else: a stale result of the previous epoch: dropped
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # -- sending tasks

    def _next_index(self):
        if self._peeked:
            return self._peeked.pop()
        return next(self._sampler_iter)

    def _try_put_index(self):
        if self._tasks_outstanding >= \
                self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker is done (IterableDataset)
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    # -- receiving results

    def _failed_workers(self):
        return [w for i, w in enumerate(self._workers)
                if self._workers_status[i] and not w.is_alive()]

    def _raise_failed(self, failed):
        pids = ", ".join(str(w.pid) for w in failed)
        self._pool.grace = 0.5
        self._shutdown_workers()
        raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited "
                           "unexpectedly")

    def _try_get_data(self, timeout):
        """(True, (idx, data)) or (False, None) after `timeout` seconds;
        raises at once when a worker has died."""
        q = self._worker_result_queue
        reader = q._reader
        deadline = time.monotonic() + timeout
        while True:
            sentinels = [w.sentinel for i, w in enumerate(self._workers)
                         if self._workers_status[i]]
            remaining = deadline - time.monotonic()
            ready = multiprocessing.connection.wait(
                [reader] + sentinels, max(remaining, 0))
            if reader in ready:
                try:
                    idx, data = q.get(timeout=max(remaining, 0.5))
                except queue.Empty:
                    continue
                if isinstance(data, shm.Batch):
                    data = shm.unpack(data)
                return True, (idx, data)
            if ready:
                failed = self._failed_workers()
                if failed:
                    self._raise_failed(failed)
                # A worker marked unavailable exited normally: go on.
            if remaining <= 0:
                failed = self._failed_workers()
                if failed:
                    self._raise_failed(failed)
                return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            raise RuntimeError(
                f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            # Skip tasks sent to workers whose IterableDataset ran out.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1])

            if self._shutdown:
                raise StopIteration
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data)
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        if self._pin_memory:
            data = pin_memory(data)
        return data

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    # -- shutdown

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        """No more tasks for this worker; it exits on the None."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if not self._shutdown:
            self._shutdown = True
            self._finalizer()


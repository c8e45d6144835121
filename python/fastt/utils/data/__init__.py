"""fastt.utils.data: torch.utils.data for fastt tensors (datasets, samplers,
collate, a single-process DataLoader). Add a dataset/sampler as a class here
and list it in __all__; DataLoader only needs __getitem__/__len__ or __iter__.

Random order comes from fastt's RNG (fastt.manual_seed) unless a generator is
given: a numpy Generator/RandomState is used directly, anything else is passed
to fastt.randperm(..., generator=). A TensorDataset (or a Subset of one) with
the default collate is batched by one index_select per stored tensor per
batch instead of indexing and stacking sample by sample."""

import bisect
import collections.abc
import copy
import math
import re
import warnings

import numpy as np

import fastt

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
    "Subset", "SubsetRandomSampler", "TensorDataset", "collate",
    "default_collate", "default_collate_fn_map", "default_convert",
    "get_worker_info", "random_split",
]

_NP_GENERATORS = (np.random.Generator, np.random.RandomState)


def _randperm(n, generator):
    """A fastt int64 permutation of range(n) drawn from `generator`."""
    if generator is None:
        return fastt.randperm(n)
    if isinstance(generator, _NP_GENERATORS):
        return fastt.from_numpy(generator.permutation(n).astype(np.int64))
    return fastt.randperm(n, generator=generator)


def _randint(high, size, generator):
    if generator is None:
        return fastt.randint(0, high, (size,))
    if isinstance(generator, _NP_GENERATORS):
        if isinstance(generator, np.random.Generator):
            arr = generator.integers(0, high, size)
        else:
            arr = generator.randint(0, high, size)
        return fastt.from_numpy(arr.astype(np.int64))
    return fastt.randint(0, high, (size,), generator=generator)


def get_worker_info():
    """Always None: fastt's DataLoader loads in the main process."""
    return None


# ---------------------------------------------------------------- datasets


class Dataset:
    """A map-style dataset: subclasses define __getitem__ (and usually
    __len__, which samplers and DataLoader's len() need)."""

    def __getitem__(self, index):
        raise NotImplementedError(
            "Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream-style dataset: subclasses define __iter__."""

    def __iter__(self):
        raise NotImplementedError(
            "Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the i-th rows of each tensor (same size(0) for all)."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """The datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError(
                    "ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed "
                                 "dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(
                    "ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(
                    "ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """dataset restricted to `indices` (in that order)."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split into non-overlapping Subsets of the given lengths (or fractions
    summing to 1), in an order drawn from `generator`."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(
                    f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.",
                              stacklevel=2)
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of "
                         "the input dataset!")
    perm = _randperm(sum(lengths), generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out


# ---------------------------------------------------------------- samplers


class Sampler:
    """Iterates over dataset indices. Subclasses define __iter__ (and
    __len__ where the count is known)."""

    def __init__(self, data_source=None):
        if data_source is not None:
            warnings.warn("`data_source` argument is not used and will be "
                          "removed", stacklevel=2)

    def __iter__(self):
        raise NotImplementedError

    # The built-in samplers can hand the whole epoch's order over as one
    # int64 tensor, which DataLoader slices instead of building index lists.
    def _order_tensor(self):
        return None


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)

    def _order_tensor(self):
        return fastt.arange(len(self.data_source))


class RandomSampler(Sampler):
    """A random permutation (or, with replacement, num_samples draws)."""

    def __init__(self, data_source, replacement=False, num_samples=None,
                 generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if (not isinstance(self.num_samples, int)
                or isinstance(self.num_samples, bool)
                or self.num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, "
                             f"but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def _order_tensor(self):
        n, k = len(self.data_source), self.num_samples
        if self.replacement:
            return _randint(n, k, self.generator)
        if k == n:
            return _randperm(n, self.generator)
        parts = [_randperm(n, self.generator) for _ in range(k // n)]
        if k % n:
            parts.append(_randperm(n, self.generator)[:k % n])
        return fastt.cat(parts) if len(parts) > 1 else parts[0].contiguous()

    def __iter__(self):
        return iter(self._order_tensor().tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(len(self.indices), self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size."""

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, "
                             f"but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


_EXACT_ORDER_SAMPLERS = (SequentialSampler, RandomSampler)


# ---------------------------------------------------------------- collate

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


# ---------------------------------------------------------------- loader


class _LoaderIter:
    """What iter(DataLoader) returns: a batch iterator with len()."""

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
    """Batches a dataset like torch.utils.data.DataLoader. Loading always
    happens in the calling process: num_workers, pin_memory and the other
    worker options are checked like torch's and otherwise ignored."""

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
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process "
                "loading (num_workers > 0), but got "
                f"num_workers={num_workers}")

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

        if sampler is None and not self._iterable:
            if shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None \
                and not self._iterable:
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
        self._initialized = True

    def __setattr__(self, attr, val):
        if self._initialized and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last",
                "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        if self._iterable:
            return self.batch_size is not None
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

    def __iter__(self):
        if self._iterable:
            gen = self._iter_iterable()
        elif not self._auto_collation:
            gen = self._iter_single()
        else:
            fast = self._tensor_source()
            gen = (self._iter_tensor(*fast) if fast is not None
                   else self._iter_map())
        return _LoaderIter(self, gen)

    # -- generic paths

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

    # -- TensorDataset fast path: one index_select per tensor per batch

    def _tensor_source(self):
        """(tensors, index map or None) when batches can be gathered from
        a TensorDataset's tensors directly, else None."""
        if self.collate_fn is not default_collate:
            return None
        ds, chain = self.dataset, []
        while type(ds) is Subset:
            chain.append(ds.indices)
            ds = ds.dataset
        if (not isinstance(ds, TensorDataset)
                or type(ds).__getitem__ is not TensorDataset.__getitem__
                or not all(isinstance(t, fastt.Tensor) for t in ds.tensors)):
            return None
        mapping = None
        for indices in reversed(chain):  # innermost Subset first
            n = len(ds) if mapping is None else mapping.size(0)
            idx = _as_index_tensor(indices, n)
            mapping = idx if mapping is None else mapping.index_select(0, idx)
        return ds.tensors, mapping

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
            if mapping is not None:
                idx = mapping.index_select(0, idx)
            yield [t.index_select(0, idx) for t in tensors]


def _as_index_tensor(indices, n):
    """An int64 fastt tensor from a list/sequence of ints (negative ones
    wrapped when the size n is known)."""
    if isinstance(indices, fastt.Tensor):
        idx = indices.long() if indices.dtype != fastt.int64 else indices
    else:
        arr = np.asarray(indices, dtype=np.int64)
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        if n is not None and arr.size and arr.min() < 0:
            arr = np.where(arr < 0, arr + n, arr)
        idx = fastt.from_numpy(arr)
    return idx

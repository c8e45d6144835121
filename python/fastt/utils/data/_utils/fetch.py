"""fastt.utils.data._utils.fetch: what one DataLoader task produces, in the
main process (num_workers=0 uses the same rules inline) or in a worker:
the samples of a list of indices collated into a batch, or the next
batch_size samples of an IterableDataset.

A TensorDataset (or a Subset of one) with the default collate is gathered
with one index_select per stored tensor per batch instead of indexing and
stacking sample by sample (the same values and dtypes)."""

import numpy as np

import fastt

from ..dataset import Subset, TensorDataset
from .collate import default_collate


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


def _tensor_source(dataset, collate_fn):
    """(tensors, index map or None) when batches can be gathered from a
    TensorDataset's tensors directly, else None."""
    if collate_fn is not default_collate:
        return None
    ds, chain = dataset, []
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


def _gather(tensors, mapping, idx):
    """One batch of a TensorDataset: idx (int64 tensor) through the Subset
    map, then one index_select per stored tensor (a list, as default_collate
    makes of tuple samples)."""
    if mapping is not None:
        idx = mapping.index_select(0, idx)
    return [t.index_select(0, idx) for t in tensors]


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self._source = (_tensor_source(dataset, collate_fn)
                        if auto_collation else None)

    def fetch(self, possibly_batched_index):
        if self._source is not None:
            tensors, mapping = self._source
            size = (tensors[0].size(0) if mapping is None
                    else mapping.size(0))
            return _gather(tensors, mapping,
                           _as_index_tensor(possibly_batched_index, size))
        ds = self.dataset
        if self.auto_collation:
            getitems = getattr(ds, "__getitems__", None)
            if callable(getitems):
                data = getitems(possibly_batched_index)
            else:
                data = [ds[i] for i in possibly_batched_index]
        else:
            data = ds[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last
                            and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)

"""fastt.utils.data: torch.utils.data for fastt tensors, with torch's
module layout: dataset (Dataset, IterableDataset, TensorDataset, ...),
sampler, distributed (DistributedSampler), dataloader (DataLoader, with
worker processes for num_workers > 0) and _utils (collate, fetch, the
worker loop, the shared-memory batch transport). Add a dataset or sampler
in its module and re-export it here."""

from . import _utils
from ._utils.collate import (collate, default_collate,
                             default_collate_fn_map, default_convert)
from ._utils.worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader, _DatasetKind
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,
                      StackDataset, Subset, TensorDataset, random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler,
                      SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from . import dataloader, dataset, distributed, sampler  # noqa: F401

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
    "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "collate",
    "default_collate", "default_collate_fn_map", "default_convert",
    "get_worker_info", "random_split",
]

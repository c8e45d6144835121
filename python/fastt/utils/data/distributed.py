"""fastt.utils.data.distributed: DistributedSampler (torch's semantics):
each of num_replicas ranks gets every num_replicas-th index of one epoch
order (the same order on every rank: seed + epoch), padded by repeating
indices (or trimmed with drop_last) so every rank gets num_samples.

Without an initialized fastt.distributed process group, num_replicas and
rank must be given (torch raises the same ValueError then)."""

import math

import fastt

from .sampler import Sampler

__all__ = ["DistributedSampler"]

_NO_GROUP = ("Default process group has not been initialized, please make "
             "sure to call init_process_group.")


def _dist_value(name):
    dist = getattr(fastt, "distributed", None)
    if dist is None or not callable(getattr(dist, name, None)):
        raise ValueError(_NO_GROUP)
    is_init = getattr(dist, "is_initialized", None)
    if callable(is_init) and not is_init():
        raise ValueError(_NO_GROUP)
    return getattr(dist, name)()


class DistributedSampler(Sampler):
    """Restricts loading to this rank's share of the dataset. Call
    set_epoch(epoch) before each epoch so shuffled orders differ."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True,
                 seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _dist_value("get_world_size")
        if rank is None:
            rank = _dist_value("get_rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the "
                             f"interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil(
                (n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            # The same permutation on every rank, without touching the
            # global random state (fastt has no Generator objects).
            with fastt.random.fork_rng():
                fastt.manual_seed(self.seed + self.epoch)
                indices = fastt.randperm(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(
                    padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(
                f"Number of indices ({len(indices)}) does not match "
                f"total_size ({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not "
                f"match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch whose order __iter__ gives (with shuffle=True)."""
        self.epoch = epoch

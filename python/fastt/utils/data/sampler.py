"""fastt.utils.data.sampler: index samplers (torch.utils.data.sampler).
A sampler iterates over dataset indices; add one as a class here and list
it in __all__ (and in the package's __init__).

Random order comes from fastt's RNG (fastt.manual_seed) unless a generator
is given: a numpy Generator/RandomState is used directly, anything else is
passed to fastt.randperm(..., generator=)."""

import warnings

import numpy as np

import fastt

__all__ = [
    "BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
    "SubsetRandomSampler", "WeightedRandomSampler",
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


def _random_seed(generator):
    """A non-negative 63-bit int from `generator` (torch draws its loader
    base seed as empty((), int64).random_(generator=...))."""
    return _randint(2 ** 63 - 1, 1, generator)[0].item()


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


class WeightedRandomSampler(Sampler):
    """num_samples indices in [0, len(weights)) drawn with probability
    proportional to weights (with or without replacement)."""

    def __init__(self, weights, num_samples, replacement=True,
                 generator=None):
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, "
                             f"but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        if isinstance(weights, fastt.Tensor):
            w = weights.double()
        else:
            w = fastt.from_numpy(np.asarray(weights, dtype=np.float64))
        if w.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        g = self.generator
        if isinstance(g, _NP_GENERATORS):
            p = self.weights.numpy()
            p = p / p.sum()
            out = g.choice(len(p), self.num_samples,
                           replace=self.replacement, p=p)
            return iter(out.astype(np.int64).tolist())
        if g is None:
            draw = fastt.multinomial(self.weights, self.num_samples,
                                     self.replacement)
        else:
            draw = fastt.multinomial(self.weights, self.num_samples,
                                     self.replacement, generator=g)
        return iter(draw.tolist())

    def __len__(self):
        return self.num_samples


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

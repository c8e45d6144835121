"""Shared plumbing of the training examples: --lib fastt|torch selection,
numpy-made initial weights and batch order (identical in both libraries for
one seed), a stderr progress bar, step timing and the SUMMARY line.
A new example imports this, builds its model from `lib.nn` and calls
init_params(), NumpySampler and Trainer-free helpers below."""

import argparse
import importlib
import json
import math
import sys
import time
import zlib

import numpy as np


def base_parser(description, epochs=10, batch_size=64, lr=1e-3):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--lib", choices=["fastt", "torch"], default="fastt",
                   help="library that runs the same model code")
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1,
                   help="intra-op threads (set_num_threads)")
    p.add_argument("--progress", choices=["auto", "on", "off"],
                   default="auto", help="progress bar on stderr")
    p.add_argument("--json", metavar="PATH",
                   help="write the loss curve and timings as JSON")
    p.add_argument("--device", default="cpu",
                   help="cpu, cuda or cuda:N (model and batches live there)")
    p.add_argument("--compile", action="store_true",
                   help="compile the training step (fastt.compile / "
                        "torch.compile)")
    return p


def load_lib(name, threads):
    """(lib, data): the library module and its utils.data."""
    lib = importlib.import_module(name)
    # torch imports these itself; importing them here also works for a
    # package whose __init__ does not.
    for sub in (".nn", ".nn.functional", ".optim", ".optim.lr_scheduler"):
        importlib.import_module(name + sub)
    data = importlib.import_module(name + ".utils.data")
    if hasattr(lib, "set_num_threads"):
        lib.set_num_threads(threads)
    lib.manual_seed(0)  # anything not drawn from numpy (dropout) is seeded
    return lib, data


# ---------------------------------------------------------------- init

def _stream(seed, name):
    """A numpy generator per parameter name, so the values do not depend on
    the order a library registers or iterates parameters in."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _uniform(rng, bound, shape):
    return rng.uniform(-bound, bound, shape)


def torch_default_init(kind, pname, shape, rng, module):
    """The array torch's reset_parameters() would draw (same
    distributions, numpy's draws), or None when not known."""
    if kind in ("Linear", "Conv1d", "Conv2d", "Conv3d", "Bilinear"):
        if kind.startswith("Conv"):
            fan_in = shape[1] * int(np.prod(shape[2:])) if pname == "weight" \
                else module.weight.shape[1] * int(
                    np.prod(tuple(module.weight.shape[2:])))
        else:
            fan_in = shape[1] if pname == "weight" else \
                module.weight.shape[1]
        # kaiming_uniform_(a=sqrt(5)) gives bound 1/sqrt(fan_in); the bias
        # uses the same bound.
        return _uniform(rng, 1.0 / math.sqrt(fan_in) if fan_in else 0.0,
                        shape)
    if kind == "Embedding":
        arr = rng.standard_normal(shape)
        pad = getattr(module, "padding_idx", None)
        if pad is not None:
            arr[pad] = 0.0
        return arr
    if kind in ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"):
        # reset_parameters: every weight and bias U(-1/sqrt(H), 1/sqrt(H)).
        return _uniform(rng, 1.0 / math.sqrt(module.hidden_size), shape)
    if kind in ("LayerNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm",
                "RMSNorm"):
        return np.ones(shape) if pname == "weight" else np.zeros(shape)
    return None


def init_params(model, lib, seed, rule=None):
    """Overwrite every parameter with values made by numpy from `seed`.
    rule(kind, qualified_name, shape, rng, module) may return an array to
    override torch's default distribution; a parameter neither knows raises
    so that both libraries never start from different weights."""
    modules = dict(model.named_modules())
    with lib.no_grad():
        for qname, p in model.named_parameters():
            owner, _, pname = qname.rpartition(".")
            module = modules[owner]
            kind = type(module).__name__
            shape = tuple(p.shape)
            rng = _stream(seed, qname)
            arr = rule(kind, qname, shape, rng, module) if rule else None
            if arr is None:
                arr = torch_default_init(kind, pname, shape, rng, module)
            if arr is None:
                raise ValueError(f"init_params: no initializer for {qname} "
                                 f"({kind}.{pname}); pass a rule")
            p.copy_(lib.tensor(np.asarray(arr, dtype=np.float32)))


def param_count(model):
    return sum(int(np.prod(tuple(p.shape))) for p in model.parameters())


# ---------------------------------------------------------------- data

class NumpySampler:
    """A fresh numpy permutation every epoch: a sampler both libraries'
    DataLoaders accept, so both see the same batches."""

    def __init__(self, n, seed):
        self.n = n
        self.rng = np.random.default_rng([seed, 1])

    def __iter__(self):
        return iter(self.rng.permutation(self.n).tolist())

    def __len__(self):
        return self.n


def load_digits_split(seed=0, test_frac=0.2):
    """sklearn's bundled 8x8 digits: standardized float32 features and
    int64 labels, split train/test with a fixed permutation."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = d.data.astype(np.float64)
    y = d.target.astype(np.int64)
    perm = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_frac))
    test, train = perm[:n_test], perm[n_test:]
    mean = x[train].mean(0)
    std = x[train].std(0)
    std[std == 0] = 1.0
    x = ((x - mean) / std).astype(np.float32)
    return x[train], y[train], x[test], y[test]


# ---------------------------------------------------------------- output

class Progress:
    """A one-line progress bar on stderr (no dependency), redrawn at most
    ten times a second."""

    def __init__(self, total, desc, enabled):
        self.total, self.desc, self.enabled = total, desc, enabled
        self.n, self.last, self.t0 = 0, 0.0, time.perf_counter()
        self.post = ""

    def update(self, k=1, post=None):
        self.n += k
        if post is not None:
            self.post = post
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1 and self.n < self.total:
            return
        self.last = now
        frac = self.n / self.total if self.total else 1.0
        width = 24
        fill = int(frac * width)
        bar = "#" * fill + "-" * (width - fill)
        sys.stderr.write(f"\r{self.desc} [{bar}] {self.n}/{self.total} "
                         f"{now - self.t0:5.1f}s {self.post}\x1b[K")
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def progress_enabled(args):
    if args.progress == "auto":
        return sys.stderr.isatty()
    return args.progress == "on"


class StepTimer:
    """Wall time of each training step in ms (the first `warmup` steps are
    kept in the curve but left out of the mean)."""

    def __init__(self, warmup=5):
        self.ms, self.warmup = [], warmup
        self._t = 0.0

    def start(self):
        self._t = time.perf_counter()

    def stop(self):
        self.ms.append((time.perf_counter() - self._t) * 1e3)

    def mean(self, last=None):
        xs = self.ms[-last:] if last else self.ms[self.warmup:] or self.ms
        return float(np.mean(xs)) if xs else float("nan")

    def median(self):
        xs = self.ms[self.warmup:] or self.ms
        return float(np.median(xs)) if xs else float("nan")


def summary(example, args, total_s, timer, **metrics):
    parts = [f"SUMMARY example={example}", f"lib={args.lib}"]
    parts += [f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
              for k, v in metrics.items()]
    parts += [f"step_ms={timer.mean():.3f}",
              f"median_step_ms={timer.median():.3f}", f"total_s={total_s:.2f}",
              f"threads={args.threads}", f"seed={args.seed}"]
    print(" ".join(parts), flush=True)


def write_json(args, record):
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f)

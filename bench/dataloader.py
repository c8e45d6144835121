"""A data-bound loop, fastt vs torch, in one run: a map-style dataset whose
__getitem__ does per-item Python work (a uint8 3x32x32 image from numpy:
random crop offsets and flip drawn with `random`, float conversion and
normalisation in numpy, a little pure-Python bookkeeping, then
from_numpy), batch 64, through each library's DataLoader with 0, 1 and 2
worker processes (persistent workers: an epoch's time excludes process
start, reported separately). The consumer only reduces each batch
(x.sum()), so loading sets the pace. Wall clock (several processes),
medians over interleaved repeats (every configuration once per round),
items/s and torch/fastt time ratios (> 1: fastt faster).

    python -m bench.dataloader [--quick] [--items N] [--no-save]

Writes bench/results/dataloader.md and dataloader.json unless --no-save.
"""

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

common.pin_environment()

import numpy as np  # noqa: E402

import fastt  # noqa: E402
from fastt.utils import data as fdata  # noqa: E402

try:
    import torch  # noqa: E402
    from torch.utils import data as tdata  # noqa: E402
except ImportError:  # pragma: no cover - torch is optional
    torch = tdata = None

MEAN = np.array([0.49, 0.48, 0.45], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.25, 0.24, 0.26], dtype=np.float32).reshape(3, 1, 1)


class Images:
    """Mixin: item i = (normalised, randomly cropped/flipped float32
    3x32x32 tensor, int label). `lib` is fastt or torch."""

    def __init__(self, lib, n):
        rng = np.random.default_rng(0)
        self.lib = lib
        self.images = rng.integers(0, 256, (n, 3, 36, 36), dtype=np.uint8)
        self.labels = rng.integers(0, 10, n).tolist()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i]
        dy, dx = random.randint(0, 4), random.randint(0, 4)
        crop = img[:, dy:dy + 32, dx:dx + 32]
        if random.random() < 0.5:
            crop = crop[:, :, ::-1]
        x = (crop.astype(np.float32) * (1 / 255.0) - MEAN) / STD
        # per-item Python bookkeeping (label smoothing table, stats...)
        weights = [0.01] * 10
        weights[self.labels[i]] = 0.91
        s = 0.0
        for w in weights * 200:
            s += w * w
        return self.lib.from_numpy(np.ascontiguousarray(x)), self.labels[i]


class FasttImages(Images, fdata.Dataset):
    pass


if tdata is not None:
    class TorchImages(Images, tdata.Dataset):
        pass


def make_loader(lib, n, workers):
    if lib == "fastt":
        ds, mod = FasttImages(fastt, n), fdata
    else:
        ds, mod = TorchImages(torch, n), tdata
    kw = dict(batch_size=64, shuffle=True)
    if workers:
        kw.update(num_workers=workers, persistent_workers=True)
    return mod.DataLoader(ds, **kw)


def epoch_sampler(loader):
    """sampler(number) -> wall seconds for `number` full epochs."""
    def sample(number):
        t0 = time.perf_counter()
        for _ in range(number):
            for x, y in loader:
                x.sum()
        return time.perf_counter() - t0
    return sample


def startup_time(lib, n, workers, repeats):
    """Median seconds from iter() of a fresh loader to its first batch."""
    times = []
    for _ in range(repeats):
        loader = make_loader(lib, n, workers)
        t0 = time.perf_counter()
        it = iter(loader)
        next(it)
        times.append(time.perf_counter() - t0)
        if workers:
            it._shutdown_workers()
        del it, loader
    return statistics.median(times)


def per_item_us(n=2000):
    ds = FasttImages(fastt, n)
    t0 = time.perf_counter()
    for i in range(n):
        ds[i]
    return (time.perf_counter() - t0) / n * 1e6


def to_markdown(res):
    m = res["machine"]
    lines = [
        "# DataLoader throughput: a data-bound loop, fastt vs torch",
        "",
        f"Dataset: {res['items']} items; __getitem__ does "
        f"{res['getitem_us']:.0f} us of per-item Python/numpy work "
        "(crop, flip, normalise a 3x32x32 uint8 image, from_numpy). "
        "Batch 64, shuffle, default collate; persistent workers; the loop "
        "only reduces each batch. Wall clock, medians of "
        f"{res['repeats']} interleaved repeats (one epoch each).",
        "",
        f"Machine: {m['cpu_model']}, {m['cores']} cores; python "
        f"{m['python']}, torch {m['torch']}, numpy {m['numpy']}, git "
        f"{m['git']}. Other processes' load before/after the run: "
        + " / ".join("?" if b is None else f"{b:.2f}"
                     for b in res["others_busy_cores"]) + " cores busy.",
        "",
        "| workers | fastt items/s | torch items/s | torch/fastt time | "
        "fastt first batch (ms) | torch first batch (ms) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for w, row in res["rows"].items():
        ratio = (f"{row['torch_s'] / row['fastt_s']:.2f}x"
                 if row.get("torch_s") else "-")
        tps = (f"{row['torch_items_s']:,.0f}" if row.get("torch_s")
               else "-")
        tfirst = (f"{row['torch_first_ms']:.1f}" if row.get("torch_s")
                  else "-")
        lines.append(f"| {w} | {row['fastt_items_s']:,.0f} | {tps} | "
                     f"{ratio} | {row['fastt_first_ms']:.1f} | {tfirst} |")
    lines += [
        "",
        "Workers are forked. fastt's workers write each batch's tensors "
        "into one POSIX shared-memory block and send only its layout; "
        "torch's move each tensor's storage to shared memory and pass file "
        "descriptors. With 2 cores, 2 workers plus the main process share "
        "the machine.",
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--items", type=int, default=None)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    n = args.items or (1024 if args.quick else 2048)
    repeats = 3 if args.quick else 7
    fastt.set_num_threads(1)
    libs = ["fastt"] + (["torch"] if torch is not None else [])
    if torch is not None:
        torch.set_num_threads(1)
    busy = common.others_busy()
    getitem = per_item_us()
    print(f"__getitem__: {getitem:.1f} us per item (fastt), {n} items, "
          f"batch 64")

    loaders = {(lib, w): make_loader(lib, n, w)
               for w in (0, 1, 2) for lib in libs}
    samplers = {k: epoch_sampler(v) for k, v in loaders.items()}
    for s in samplers.values():  # warm-up: starts persistent workers
        s(1)
    st = common.interleaved(samplers, repeats, 0,
                            dict.fromkeys(samplers, 1))
    for loader in loaders.values():
        it = getattr(loader, "_iterator", None)
        if it is not None:
            it._shutdown_workers()
    busy_after = common.others_busy()
    res = {"items": n, "repeats": repeats, "getitem_us": getitem,
           "others_busy_cores": [busy, busy_after],
           "machine": common.machine(), "rows": {}}
    res["machine"]["clock"] = "wall"
    print(f"{'workers':>7} {'fastt it/s':>11} {'torch it/s':>11} "
          f"{'torch/fastt':>11} {'fastt 1st ms':>12} {'torch 1st ms':>12}")
    for w in (0, 1, 2):
        row = {}
        for lib in libs:
            sec = st[(lib, w)]["median"]
            row[f"{lib}_s"] = sec
            row[f"{lib}_items_s"] = n / sec
            row[f"{lib}_first_ms"] = startup_time(
                lib, n, w, 3 if args.quick else 5) * 1e3
        res["rows"][w] = row
        t = row.get("torch_s")
        print(f"{w:>7} {row['fastt_items_s']:>11,.0f} "
              f"{row.get('torch_items_s', float('nan')):>11,.0f} "
              f"{(t / row['fastt_s']) if t else float('nan'):>10.2f}x "
              f"{row['fastt_first_ms']:>12.1f} "
              f"{row.get('torch_first_ms', float('nan')):>12.1f}")
    if not args.no_save:
        common.save_json("dataloader.json", res)
        (common.RESULTS / "dataloader.md").write_text(to_markdown(res))
        print(f"wrote {common.RESULTS / 'dataloader.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

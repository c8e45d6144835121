"""Training-step latency, fastt vs torch, in one run: an MLP (64-128-128-10,
the digits example's model) at batch sizes 1, 32 and 512, one full step =
forward + cross-entropy + backward + Adam step + zero_grad; plus the
autograd recording overhead per op from Python (a + b with and without an
input that requires grad). Single-threaded, interleaved repeats, medians.

    python bench/train_step.py [--quick] [--json out.json]
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import fastt  # noqa: E402

try:
    import torch  # noqa: E402
    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - torch is optional
    torch = None


def make_mlp(lib, seed):
    nn = lib.nn
    lib.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128),
                          nn.ReLU(), nn.Linear(128, 10))
    # Same initial weights in both libraries.
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in model.parameters():
            bound = 1.0 / np.sqrt(p.shape[-1] if p.dim() > 1 else 128)
            p.copy_(lib.tensor(rng.uniform(-bound, bound, tuple(p.shape))
                               .astype(np.float32)))
    return model


def step_fn(lib, batch, seed=0):
    model = make_mlp(lib, seed)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed + 1)
    x = lib.tensor(rng.standard_normal((batch, 64)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, batch))

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


def time_call(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def interleaved(fns, number, repeats):
    """Median seconds per call of each fn, runs interleaved."""
    for fn in fns.values():
        fn()  # warm-up
        fn()
    samples = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            samples[k].append(time_call(fn, number))
    return {k: statistics.median(v) for k, v in samples.items()}


def record_overhead(repeats, number):
    a = fastt.randn(16)
    b = fastt.randn(16)
    w = fastt.randn(16, requires_grad=True)
    fns = {"add": lambda: a + b, "add_record": lambda: w + b}
    if torch is not None:
        ta, tb = torch.randn(16), torch.randn(16)
        tw = torch.randn(16, requires_grad=True)
        fns["torch_add"] = lambda: ta + tb
        fns["torch_add_record"] = lambda: tw + tb
    return interleaved(fns, number, repeats)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    repeats = 5 if args.quick else 11
    results = {"mlp_step_us": {}, "record_ns": {}}
    libs = [("fastt", fastt)] + ([("torch", torch)] if torch else [])
    print("MLP 64-128-128-10 training step (forward+backward+Adam), "
          "1 thread, median us")
    print(f"{'batch':>6} " + " ".join(f"{n:>10}" for n, _ in libs) +
          ("   torch/fastt" if torch else ""))
    for batch in (1, 32, 512):
        number = max(3, (50 if args.quick else 200) // max(1, batch // 16))
        fns = {name: step_fn(lib, batch) for name, lib in libs}
        t = interleaved(fns, number, repeats)
        row = {k: v * 1e6 for k, v in t.items()}
        results["mlp_step_us"][batch] = row
        ratio = (f"   {row['torch'] / row['fastt']:.2f}x" if torch else "")
        print(f"{batch:>6} " + " ".join(f"{row[n]:>10.1f}" for n, _ in libs)
              + ratio)
    rec = record_overhead(repeats, 20000 if args.quick else 100000)
    rec = {k: v * 1e9 for k, v in rec.items()}
    results["record_ns"] = rec
    print(f"\nPython a + b, 16 float32: {rec['add']:.0f} ns; with an input "
          f"that requires grad: {rec['add_record']:.0f} ns "
          f"(recording +{rec['add_record'] - rec['add']:.0f} ns)")
    if torch:
        print(f"torch: {rec['torch_add']:.0f} ns / "
              f"{rec['torch_add_record']:.0f} ns "
              f"(+{rec['torch_add_record'] - rec['torch_add']:.0f} ns)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Training-step latency, fastt vs torch, in one run: an MLP (64-128-128-10,
the digits example's model) at batch sizes 1, 32 and 512, one full step =
zero_grad + forward + cross-entropy + backward + Adam step; plus the
autograd recording overhead per op from Python (a + b with and without an
input that requires grad). Single-threaded, interleaved repeats, medians.
The models and step closures are bench/curves.py's (part 3 of
`python -m bench` sweeps all batch sizes and three models).

    python bench/train_step.py [--quick] [--json out.json]
"""

import argparse
import json
import sys
import timeit
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

common.pin_environment()

from bench import curves  # noqa: E402

import fastt  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:  # pragma: no cover - torch is optional
    torch = None


def record_overhead(repeats, number):
    """ns per Python `a + b` on 16 floats, with and without an input that
    requires grad, fastt and torch."""
    envs = {"fastt": {"a": fastt.randn(16), "b": fastt.randn(16),
                      "w": fastt.randn(16, requires_grad=True)}}
    if torch is not None:
        envs["torch"] = {"a": torch.randn(16), "b": torch.randn(16),
                         "w": torch.randn(16, requires_grad=True)}
    timers = {}
    for lib, env in envs.items():
        pre = "" if lib == "fastt" else "torch_"
        timers[pre + "add"] = timeit.Timer(
            "a + b", globals=env, timer=common.clock()).timeit
        timers[pre + "add_record"] = timeit.Timer(
            "w + b", globals=env, timer=common.clock()).timeit
    st = common.interleaved(timers, repeats, 0, dict.fromkeys(timers, number))
    return {k: v["median"] * 1e9 for k, v in st.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--clock", choices=sorted(common.CLOCKS), default="cpu")
    args = ap.parse_args()
    common.set_clock(args.clock)
    repeats = 5 if args.quick else 11
    libs = curves._libs()  # also pins both libraries to one thread
    results = {"mlp_step_us": {}, "record_ns": {}}
    print("MLP 64-128-128-10 training step (forward+backward+Adam), "
          "1 thread, median us")
    print(f"{'batch':>6} " + " ".join(f"{n:>10}" for n in libs) +
          ("   torch/fastt" if torch else ""))
    for batch in (1, 32, 512):
        fns = {name: common.loop_sampler(curves.train_step(lib, "mlp", batch))
               for name, lib in libs.items()}
        st = common.interleaved(fns, repeats,
                                0.005 if args.quick else 0.02)
        row = {k: v["median"] * 1e6 for k, v in st.items()}
        results["mlp_step_us"][batch] = row
        ratio = f"   {row['torch'] / row['fastt']:.2f}x" if torch else ""
        print(f"{batch:>6} " + " ".join(f"{row[n]:>10.1f}" for n in libs)
              + ratio)
    rec = record_overhead(repeats, 20000 if args.quick else 100000)
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

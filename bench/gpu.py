"""GPU part of the suite (run by bench/gpu_check.sh on a CUDA machine with
torch installed), fastt vs torch in one process and run:
  1. host-side cost per small op from Python: add, mul, relu, sum, softmax
     (16 float32), a 64x64 matmul, a Linear(64, 64) forward and an AdamW step
     over 100 small parameters; beside them a raw kernel launch, from C++
     (bench/cpp/cuda_launch.cu, passed in with --launch-json) and from
     Python through CuPy's RawKernel when CuPy is installed. A sample times
     100 enqueues with the stream synchronised before and after (untimed),
     so the launch queue never fills and only host work counts;
  2. the same loops synchronised (what the GPU sustains per op);
  3. the char-GPT training step (examples/char_gpt.py's model) at batch 1
     and 16, eager and under fastt.compile (replayed as CUDA graphs);
  4. the framework-tax curves (bench/curves.py's models) on the GPU.
Medians over interleaved repeats. Writes DIR/gpu.json and DIR/gpu.md.

    python -m bench.gpu --out DIR [--launch-json PATH] [--quick]
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common, curves  # noqa: E402

BATCH = 100  # enqueues per host-side sample (well under the launch queue)
# FASTT_BENCH_DEVICE=cpu dry-runs the whole script on the CPU (checks the
# script itself; the numbers then mean nothing).
DEV = os.environ.get("FASTT_BENCH_DEVICE", "cuda")


def _libs():
    import fastt
    libs = {"fastt": fastt}
    try:
        import torch
        if DEV == "cpu" or torch.cuda.is_available():
            libs["torch"] = torch
    except ImportError:
        pass
    return libs


def _sync(lib):
    if DEV != "cpu":
        lib.cuda.synchronize()


def host_sampler(lib, fn):
    """Seconds to enqueue `number` calls; the GPU is drained before and
    after, outside the timed region."""
    def sample(number):
        _sync(lib)
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        t1 = time.perf_counter()
        _sync(lib)
        return t1 - t0
    return sample


def synced_sampler(lib, fn):
    """Seconds for `number` calls including the wait for the GPU."""
    def sample(number):
        _sync(lib)
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        _sync(lib)
        return time.perf_counter() - t0
    return sample


def op_cases(lib, dev=None):
    """name -> zero-argument callable, for one library, on device dev
    (default DEV)."""
    dev = dev or DEV

    def t(*shape):
        return lib.ones(*shape, device=dev)
    a, b, m = t(16), t(16), t(64, 64)
    lin = lib.nn.Linear(64, 64).to(dev)
    x = t(1, 64)
    params = [lib.zeros(*s, device=dev, requires_grad=True)
              for s in (curves.OPTIM_SHAPES * 17)[:100]]
    for p in params:
        p.grad = lib.ones_like(p)
    opt = lib.optim.AdamW(params, lr=1e-3)
    cases = {
        "add": lambda: a + b,
        "mul": lambda: a * b,
        "relu": lambda: a.relu(),
        "sum": lambda: a.sum(),
        "softmax": lambda: a.softmax(-1),
        "matmul 64x64": lambda: m @ m,
        "Linear(64,64) fwd": lambda: lin(x),
        "AdamW 100 params": opt.step,
    }
    if lib.__name__ == "torch":
        fused = lib.optim.AdamW(params, lr=1e-3, fused=True)
        cases["AdamW 100 params (fused)"] = fused.step
    return cases


def cupy_raw_launch():
    """A raw kernel launch from Python (CuPy RawKernel), or None."""
    try:
        import cupy
    except ImportError:
        return None
    k = cupy.RawKernel(
        r'extern "C" __global__ void add16(const float* a, const float* b,'
        r' float* c, int n) { int i = threadIdx.x; if (i < n) c[i] = a[i] +'
        r' b[i]; }', "add16")
    a, b, c = (cupy.ones(16, dtype=cupy.float32) for _ in range(3))
    n = np.int32(16)

    def launch():
        k((1,), (32,), (a, b, c, n))

    def sample(number):
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for _ in range(number):
            launch()
        t1 = time.perf_counter()
        cupy.cuda.Device().synchronize()
        return t1 - t0
    return sample


def run_ops(libs, repeats):
    host, synced = {}, {}
    for name, lib in libs.items():
        for op, fn in op_cases(lib).items():
            host[(op, name)] = host_sampler(lib, fn)
            synced[(op, name)] = synced_sampler(lib, fn)
    raw = cupy_raw_launch() if DEV != "cpu" else None
    if raw is not None:
        host[("raw launch", "cupy")] = raw
    numbers = {k: BATCH for k in host}
    h = common.interleaved(host, repeats, 0, numbers)
    s = common.interleaved(synced, repeats, 0.01)
    us = lambda st: {k: v * 1e6 for k, v in st.items()  # noqa: E731
                     if k in ("median", "min", "max")}
    out = {"host_us": {}, "synced_us": {}}
    for (op, name), st in h.items():
        out["host_us"].setdefault(op, {})[name] = us(st)
    for (op, name), st in s.items():
        out["synced_us"].setdefault(op, {})[name] = us(st)
    return out


def gpt_step(lib, batch, seed=0, dev=None):
    dev = dev or DEV
    sys.path.insert(0, str(common.ROOT / "examples"))
    import char_gpt
    import common as ex_common
    vocab, d_model, n_layer, n_head, block = 96, 64, 2, 4, 64
    model, _ = char_gpt.build_model(lib, vocab, d_model, n_layer, n_head,
                                    block, "sdpa")
    ex_common.init_params(model, lib, seed, char_gpt.gpt_init_rule(n_layer))
    model.to(dev)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (batch, block + 1))
    x = lib.tensor(ids[:, :-1]).to(dev)
    y = lib.tensor(ids[:, 1:]).to(dev)

    def step():
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        opt.step()
    return step


def run_gpt(libs, repeats, batches=(1, 16)):
    out = {}
    for b in batches:
        samplers = {name: synced_sampler(lib, gpt_step(lib, b))
                    for name, lib in libs.items()}
        compiled = None
        if "fastt" in libs:  # replayed as CUDA graphs (fastt.compile)
            fastt = libs["fastt"]
            compiled = fastt.compile(gpt_step(fastt, b))
            samplers["fastt compiled"] = synced_sampler(fastt, compiled)
        st = common.interleaved(samplers, repeats, 0.05)
        out[b] = {name: {k: v * 1e3 for k, v in s.items()
                         if k in ("median", "min", "max")}
                  for name, s in st.items()}
        if compiled is not None:  # what the compiled column really ran
            e = compiled._entries[0].step if compiled._entries else None
            out[b]["compiled_how"] = (
                f"{compiled.stats['replays']} replays, "
                f"{e.num_device_graphs if e else 0} CUDA graphs"
                + (f"; eager: {compiled.eager_reason}"
                   if compiled.eager_reason else ""))
    return out


def run_curves(libs, repeats, quick):
    batches = [1, 64] if quick else [1, 8, 64, 512]
    out = {"batches": batches, "ms": {}}
    for model in curves.MODELS:
        for b in batches:
            samplers = {}
            for name, lib in libs.items():
                samplers[("train", name)] = synced_sampler(
                    lib, curves.train_step(lib, model, b, device=DEV))
                samplers[("infer", name)] = synced_sampler(
                    lib, curves.infer_step(lib, model, b, device=DEV))
            st = common.interleaved(samplers, repeats, 0.02)
            for (mode, name), s in st.items():
                out["ms"].setdefault(model, {}).setdefault(
                    mode, {}).setdefault(name, {})[b] = s["median"] * 1e3
    return out


def _num(v, digits=2):
    return f"{v:.{digits}f}" if v is not None else "-"


def _ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def markdown(res):
    lines = ["# fastt on the GPU", "", f"Device: {res['device']}; "
             f"torch {res.get('torch', '-')}; {res['clock']}.", "",
             "## Host-side cost per op from Python (µs, median)", "",
             "| op | fastt | torch | fastt/torch | fastt/raw launch (C++) |",
             "|---|---:|---:|---:|---:|"]
    raw = res.get("launch", {}).get("raw_add_kernel", {}).get("median_ns")
    raw_us = raw / 1e3 if raw else None
    for op, v in res["ops"]["host_us"].items():
        f = v.get("fastt", {}).get("median")
        t = v.get("torch", {}).get("median")
        c = v.get("cupy", {}).get("median")
        fs = _num(f)
        ts = _num(t) if t else (f"{c:.2f} (CuPy raw)" if c else "-")
        lines.append(f"| {op} | {fs} | {ts} | {_ratio(f, t)} | "
                     f"{_ratio(f, raw_us)} |")
    if res.get("launch"):
        lines += ["", "Raw launches from C++ (ns, median): " + ", ".join(
            f"{k} {v['median_ns']:.0f}" for k, v in res["launch"].items())]
    lines += ["", "## Synchronised loop, µs per op (GPU-bound when above "
              "the host cost)", "", "| op | fastt | torch |", "|---|---:|---:|"]
    for op, v in res["ops"]["synced_us"].items():
        f = v.get("fastt", {}).get("median")
        t = v.get("torch", {}).get("median")
        lines.append(f"| {op} | {_num(f)} | {_num(t)} |")
    lines += ["", "## char-GPT training step (ms, median)", "",
              "| batch | fastt | fastt compiled | torch | torch/fastt | "
              "torch/compiled |", "|---:|---:|---:|---:|---:|---:|"]
    for b, v in res["gpt"].items():
        f = v.get("fastt", {}).get("median")
        c = v.get("fastt compiled", {}).get("median")
        t = v.get("torch", {}).get("median")
        lines.append(f"| {b} | {_num(f, 3)} | {_num(c, 3)} | {_num(t, 3)} | "
                     f"{_ratio(t, f)} | {_ratio(t, c)} |")
    lines += [f"\nfastt compiled at batch {b}: {v['compiled_how']}"
              for b, v in res["gpt"].items() if "compiled_how" in v]
    if res.get("curves"):
        lines += ["", "## Framework-tax curves on the GPU (ms per step)", ""]
        c = res["curves"]
        head = "| model | mode | lib | " + " | ".join(
            str(b) for b in c["batches"]) + " |"
        lines += [head, "|" + "---|" * (3 + len(c["batches"]))]
        for model, modes in c["ms"].items():
            for mode, per in modes.items():
                for name, vals in per.items():
                    lines.append(f"| {model} | {mode} | {name} | " + " | ".join(
                        f"{vals[b]:.3f}" for b in c["batches"]) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--launch-json", help="output of fastt_cuda_launch")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--no-curves", action="store_true")
    args = p.parse_args(argv)
    libs = _libs()
    import fastt
    if DEV != "cpu" and not fastt.cuda.is_available():
        sys.exit("bench.gpu: fastt sees no CUDA GPU")
    common.set_clock("wall")
    repeats = 9 if args.quick else 31
    res = {"device": DEV, "clock": "wall clock"}
    if "torch" in libs:
        res["torch"] = libs["torch"].__version__
        if DEV != "cpu":
            res["device"] = libs["torch"].cuda.get_device_name(0)
    if args.launch_json:
        res["launch"] = json.loads(Path(args.launch_json).read_text())
    common.log("gpu: per-op host cost")
    res["ops"] = run_ops(libs, repeats)
    common.log("gpu: GPT step")
    res["gpt"] = run_gpt(libs, max(5, repeats // 3))
    if not args.no_curves:
        common.log("gpu: curves")
        res["curves"] = run_curves(libs, max(3, repeats // 5), args.quick)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu.json").write_text(json.dumps(res, indent=1, default=str))
    (out / "gpu.md").write_text(markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()

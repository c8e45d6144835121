"""fastt.compile against eager fastt, eager torch and torch.compile, in one
run: training steps (zero_grad, forward, loss, backward, Adam step) and
inference (eval, no_grad) of the MLP, the digits CNN, a transformer
encoder layer (bench/curves.py's models) and the char-GPT of
examples/char_gpt.py, at batch 1 and a large batch; 1 thread, interleaved
repeats, medians. Also: that compiled and eager training give bitwise the
same losses (1,000 steps at batch 1), each step's peak memory with the
gradients counted in both (eager: the allocator's peak during a step plus
the gradients held before it; compiled: its pool, planned by liveness,
plus the replay's peak), and the replay's cost
per recorded kernel beyond the kernels' own time (inference, where the
list is kernels only).

    python -m bench.compile [--quick] [--no-torch-compile]
"""
import argparse
import sys
import warnings
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

common.pin_environment()

from bench import curves  # noqa: E402

import fastt  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:  # pragma: no cover
    torch = None

ROOT = Path(__file__).resolve().parent.parent
CASES = [("mlp", 1), ("mlp", 512), ("cnn", 1), ("cnn", 512),
         ("transformer", 1), ("transformer", 64), ("gpt", 1), ("gpt", 32)]


def gpt_parts(lib, batch):
    """examples/char_gpt.py's model (2 layers, 64 wide, block 32, GELU
    MLP), AdamW, clipping; (model, optimizer, x, y)."""
    sys.path.insert(0, str(ROOT / "examples"))
    import char_gpt
    import numpy as np
    model, _ = char_gpt.build_model(lib, 96, 64, 2, 4, 32, "sdpa")
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.normal(0, 0.02, tuple(p.shape))
                               .astype(np.float32)))
    x = lib.tensor(rng.integers(0, 96, (batch, 32)))
    y = lib.tensor(rng.integers(0, 96, (batch, 32)))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    return model, opt, x, y


def make(lib, model, batch, mode):
    """(fn, args): a training step or an inference call, taking its batch
    as arguments."""
    if model == "gpt":
        net, opt, x, y = gpt_parts(lib, batch)
        params = list(net.parameters())

        def train(x, y):
            opt.zero_grad()
            loss = net(x, y)[1]
            loss.backward()
            lib.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            return loss

        def infer(x):
            with lib.no_grad():
                return net(x)[0]
    else:
        net = curves.build(lib, model)
        opt = lib.optim.Adam(net.parameters(), lr=1e-3)
        x, y, loss_fn = curves.batch_data(lib, model, batch)

        def train(x, y):
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
            return loss

        def infer(x):
            with lib.no_grad():
                return net(x)
    if mode == "train":
        net.train()
        return train, (x, y)
    if mode == "train+item":  # a graph break: fastt.compile splits there
        net.train()

        def train_item(x, y):
            loss = train(x, y)
            return loss.item()
        return train_item, (x, y)
    net.eval()
    return infer, (x,)


def variants(model, batch, mode, torch_compile):
    """name -> (callable, args) for every column of a row."""
    out = {}
    f, a = make(fastt, model, batch, mode)
    out["fastt"] = (f, a)
    f, a = make(fastt, model, batch, mode)
    out["fastt compiled"] = (fastt.compile(f), a)
    if torch is not None:
        f, a = make(torch, model, batch, mode)
        out["torch"] = (f, a)
        if torch_compile:
            f, a = make(torch, model, batch, mode)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out["torch.compile"] = (torch.compile(f), a)
    return out


def same_losses(model, batch, steps=8):
    """Compiled and eager training from the same state: bitwise equal."""
    f, a = make(fastt, model, batch, "train")
    g, b = make(fastt, model, batch, "train")
    c = fastt.compile(g)
    fastt.manual_seed(0)
    e = [f(*a).item() for _ in range(steps)]
    fastt.manual_seed(0)
    r = [c(*b).item() for _ in range(steps)]
    return e == r and c.stats["replays"] == steps - 2


def held_grad_bytes(fn, args):
    """Bytes of the .grad tensors of the modules fn can reach."""
    from fastt._compile import _reachable
    fn = getattr(fn, "_compiled", fn)
    fn = getattr(fn, "_fn", fn)
    grads = {}
    for m in _reachable(fn, list(args))[0]:
        for p in m.parameters():
            if p.grad is not None:
                g = p.grad
                grads[g.data_ptr()] = g.numel() * g.element_size()
    return sum(grads.values())


def peak_bytes(fn, args, grads_held=True):
    """The allocator's peak over one call above what was allocated before
    it, plus the gradients held before it (a step that sets them to None
    frees them first; a compiled step keeps its gradients in its pool)."""
    fn(*args)
    fn(*args)
    fn(*args)
    held = held_grad_bytes(fn, args) if grads_held else 0
    base = fastt._C._memory_stats()["allocated_bytes"]
    fastt._C._reset_peak_memory_stats()
    fn(*args)
    return fastt._C._memory_stats()["peak_allocated_bytes"] - base + held


def kernel_ns(fn, args, calls=200):
    """Sum of the kernels' own times per eager call (the profiler)."""
    for _ in range(5):
        fn(*args)
    fastt._C._profiler_start()
    for _ in range(calls):
        fn(*args)
    ev = fastt._C._profiler_stop()
    return sum(e[4] - e[3] for e in ev) / calls


def per_kernel_ns(repeats):
    """The replay's cost per recorded kernel: compiled chains of 1 and 65
    in-place adds on 16 floats, the slope (kernel included), and the
    fixed cost of a call (guards, input copy, fresh output)."""
    def chain(k):
        def f(x):
            y = x * 1.0
            for _ in range(k - 1):
                y.add_(1.0)
            return y
        c = fastt.compile(f)
        x = fastt.randn(16)
        for _ in range(3):
            c(x)
        return common.loop_sampler(lambda: c(x))
    st = common.interleaved({1: chain(1), 65: chain(65)}, repeats, 0.02)
    t1, t65 = st[1]["median"] * 1e9, st[65]["median"] * 1e9
    return {"per_kernel_ns": (t65 - t1) / 64, "call_ns": t1}


def run(quick=False, torch_compile=True):
    libs = curves._libs()  # one thread, both libraries
    # Denormals (Adam's decaying moments of parameters that get no
    # gradient) would make a training step's time depend on how many
    # steps ran before: flushed, for both libraries (MXCSR is per thread).
    fastt.set_flush_denormal(True)
    if "torch" in libs:
        libs["torch"].set_flush_denormal(True)
    repeats = 5 if quick else 11
    target = 0.01 if quick else 0.05
    cases = CASES[:2] + CASES[6:7] if quick else CASES
    res = {"rows": [], "repeats": repeats,
           "replay": per_kernel_ns(repeats)}
    for model, batch in cases:
        modes = ("train", "infer") + (("train+item",) if batch == 1
                                      and model in ("mlp", "gpt") else ())
        for mode in modes:
            tc = torch_compile and not (quick and model != "mlp")
            vs = variants(model, batch, mode, tc)
            for f, a in vs.values():  # warm-up, capture, compile
                for _ in range(3):
                    f(*a)
            samplers = {k: common.loop_sampler(lambda f=f, a=a: f(*a))
                        for k, (f, a) in vs.items()}
            st = common.interleaved(samplers, repeats, target)
            row = {"model": model, "batch": batch, "mode": mode,
                   "us": {k: v["median"] * 1e6 for k, v in st.items()}}
            c = vs["fastt compiled"][0]
            c = getattr(c, "_compiled", c)
            row["stats"] = dict(c.stats)
            if c._split is not None:  # the captured piece before the break
                c = next(p for p in c._split.pieces if isinstance(p, type(c)))
            entry = c._entries[0] if c._entries else None
            row["kernels"] = entry.step.num_kernels if entry else 0
            row["eager_peak"] = peak_bytes(*vs["fastt"])
            row["compiled_peak"] = peak_bytes(*vs["fastt compiled"],
                                              grads_held=False) + (
                entry.step.pool_bytes if entry else 0)
            row["unplanned"] = (entry.step.unplanned_bytes
                                or entry.step.pool_bytes) if entry else 0
            if mode == "infer" and entry and batch == 1:
                k = kernel_ns(*vs["fastt"])
                row["kernel_us"] = k / 1e3
                row["replay_ns_per_kernel"] = (
                    row["us"]["fastt compiled"] * 1e3 - k) / row["kernels"]
            if mode == "train":
                # The 1,000 steps where a step is cheap.
                row["loss_steps"] = 1000 if batch == 1 and not quick else 8
                row["bitwise_equal_losses"] = same_losses(
                    model, batch, row["loss_steps"])
            res["rows"].append(row)
            common.log(f"{model} b{batch} {mode}: " + ", ".join(
                f"{k} {v:.1f}" for k, v in row["us"].items()))
    return res


def markdown(res):
    cols = ["fastt", "fastt compiled", "torch", "torch.compile"]
    lines = ["# fastt.compile: captured steps vs eager fastt, torch and "
             "torch.compile", "",
             f"Median µs per call over {res['repeats']} interleaved "
             "repeats, 1 thread (`python -m bench.compile`). "
             "*compiled/eager*: fastt compiled over fastt eager; "
             "*vs torch.compile*: fastt compiled over torch.compile. "
             "Peak memory per step in KiB, gradients included in both: "
             "eager, the allocator's peak during a step above what it held "
             "before, plus the gradients it held before (the step's "
             "zero_grad frees them); compiled, its pool (the gradients it "
             "assigns, and the intermediates laid out by liveness in an "
             "arena and in the gradients' blocks before those are written) "
             "plus the replay's own peak (its fresh outputs); *unplanned*: "
             "the pool as recorded, before the plan. Parameters, optimizer "
             "state and inputs count in neither. Denormals flushed in both "
             "libraries. *train+item*: the training step ending in `return "
             "loss.item()`, a graph break (fastt.compile splits there and "
             "replays the step before it; kernels and memory are that "
             "piece's).",
             "",
             "| model | batch | step | " + " | ".join(cols) +
             " | compiled/eager | vs torch.compile | kernels | peak eager "
             "| peak compiled | unplanned | losses equal |",
             "|---|---:|---|" + "---:|" * (len(cols) + 7)]
    for r in res["rows"]:
        us = r["us"]
        cells = [f"{us[c]:.1f}" if c in us else "—" for c in cols]
        ce = us["fastt compiled"] / us["fastt"]
        vt = (f"{us['fastt compiled'] / us['torch.compile']:.2f}"
              if "torch.compile" in us else "—")
        eq = (("yes" if r.get("bitwise_equal_losses") else "NO") +
              f" ({r['loss_steps']} steps)") if r["mode"] == "train" else ""
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['mode']} | " +
            " | ".join(cells) + f" | {ce:.2f} | {vt} | {r['kernels']} | "
            f"{r['eager_peak'] / 1024:.0f} | {r['compiled_peak'] / 1024:.0f}"
            f" | {r.get('unplanned', 0) / 1024:.0f} | {eq} |")
    rp = res["replay"]
    lines += ["", f"Replay cost per recorded kernel: {rp['per_kernel_ns']:.1f}"
              " ns (a chain of in-place adds on 16 floats, the kernel "
              f"included); a call's fixed cost: {rp['call_ns']:.0f} ns "
              "(Python wrapper, guards, input copy, fresh output, one "
              "kernel)."]
    per = [r for r in res["rows"] if "replay_ns_per_kernel" in r]
    if per:
        lines += ["", "Replay cost beyond the kernels (inference: compiled "
                  "call minus the kernels' own time in an eager call, per "
                  "recorded kernel; includes the guards, the input copy "
                  "and the fresh output):", ""]
        lines += [f"- {r['model']} batch {r['batch']}: "
                  f"{r['replay_ns_per_kernel']:.0f} ns per kernel "
                  f"({r['kernels']} kernels, {r['kernel_us']:.1f} µs in "
                  "kernels)" for r in per]
    m = res.get("machine") or common.machine()
    lines += ["", f"Machine: {m.get('cpu_model', '?')}, torch "
              f"{m.get('torch')}, fastt {m.get('git')}"]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch-compile", action="store_true")
    args = ap.parse_args()
    res = run(args.quick, not args.no_torch_compile)
    res["machine"] = common.machine()
    common.save_json("compile.json", res)
    md = markdown(res)
    (common.RESULTS / "compile.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

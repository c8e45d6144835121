"""Part 3, framework-tax curves: latency vs batch size (1, 2, 4, ... 512)
of inference and of a full training step (zero_grad, forward, loss,
backward, Adam step) for an MLP, the digits CNN and a transformer encoder
block, fastt vs torch, single-threaded, same initial weights; where each
turns compute-bound; and the optimizer step alone over 300 small tensors.
Add a model: a branch in build() and in batch_data()."""
import numpy as np

from . import common

MODELS = ("mlp", "cnn", "transformer")
SEQ = 16  # transformer tokens per sample
D_MODEL, NHEAD, D_FF = 64, 4, 256
OPTIM_SHAPES = [(64,), (32, 32), (16, 64), (128,), (8, 8), (256,)]


def build(lib, model, seed=0, device="cpu"):
    """The same network in fastt or torch, with identical initial weights
    (uniform +-1/sqrt(fan_in) from one NumPy generator), on `device`."""
    nn = lib.nn
    lib.manual_seed(seed)
    if model == "mlp":  # examples/mlp_digits.py
        net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(),
                            nn.Linear(128, 128), nn.ReLU(),
                            nn.Linear(128, 10))
    elif model == "cnn":  # examples/cnn_digits.py, dropout 0
        net = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(32 * 4 * 4, 128), nn.ReLU(), nn.Linear(128, 10))
    elif model == "transformer":
        net = nn.TransformerEncoderLayer(D_MODEL, NHEAD,
                                         dim_feedforward=D_FF, dropout=0.0,
                                         batch_first=True)
    else:
        raise ValueError(f"unknown model {model!r}")
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in net.parameters():
            shape = tuple(p.shape)
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(lib.tensor(rng.uniform(-bound, bound, shape)
                               .astype(np.float32)))
    return net.to(device)


def batch_data(lib, model, batch, seed=1, device="cpu"):
    """(input, target, loss function) for one batch, on `device`."""
    rng = np.random.default_rng(seed)
    if model == "transformer":
        x = rng.standard_normal((batch, SEQ, D_MODEL)).astype(np.float32)
        y = rng.standard_normal((batch, SEQ, D_MODEL)).astype(np.float32)
        return (lib.tensor(x).to(device), lib.tensor(y).to(device),
                lib.nn.MSELoss())
    shape = (batch, 64) if model == "mlp" else (batch, 1, 8, 8)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, 10, batch)
    return (lib.tensor(x).to(device), lib.tensor(y).to(device),
            lib.nn.CrossEntropyLoss())


def train_step(lib, model, batch, seed=0, device="cpu"):
    """A closure running one full training step."""
    net = build(lib, model, seed, device)
    opt = lib.optim.Adam(net.parameters(), lr=1e-3)
    x, y, loss_fn = batch_data(lib, model, batch, device=device)

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
    return step


def infer_step(lib, model, batch, seed=0, device="cpu"):
    """A closure running one forward pass in eval mode under no_grad."""
    net = build(lib, model, seed, device)
    net.eval()
    x, _, _ = batch_data(lib, model, batch, device=device)

    def step():
        with lib.no_grad():
            net(x)
    return step


def _libs():
    import fastt
    libs = {"fastt": fastt}
    try:
        import torch
        libs["torch"] = torch
    except ImportError:
        pass
    for lib in libs.values():
        lib.set_num_threads(1)
    return libs


def batches(quick):
    return [1, 8, 64, 512] if quick else [2 ** k for k in range(10)]


def run_curves(quick=False):
    """us per step: {model: {mode: {lib: {batch: {median, min, max}}}}}."""
    libs = _libs()
    out = {"batches": batches(quick), "libs": list(libs), "us": {}}
    repeats = 3 if quick else 7
    target = 0.004 if quick else 0.02
    for model in MODELS:
        for b in out["batches"]:
            common.log(f"curves: {model} batch {b}")
            samplers = {}
            for name, lib in libs.items():
                samplers[("train", name)] = common.loop_sampler(
                    train_step(lib, model, b))
                samplers[("infer", name)] = common.loop_sampler(
                    infer_step(lib, model, b))
            st = common.interleaved(samplers, repeats, target)
            for (mode, name), s in st.items():
                out["us"].setdefault(model, {}).setdefault(
                    mode, {}).setdefault(name, {})[b] = {
                    k: (v * 1e6 if k in ("median", "min", "max") else v)
                    for k, v in s.items()}
    analyse(out)
    return out


def analyse(out):
    """Per (model, mode, lib): the first batch whose latency is >= 2x the
    batch-1 latency (compute-bound from there); fastt/torch at the
    smallest and largest batch."""
    bound, ratios = {}, {}
    lo, hi = min(out["batches"]), max(out["batches"])
    for model, modes in out["us"].items():
        for mode, per in modes.items():
            for lib, by_b in per.items():
                base = by_b[lo]["median"]
                bound.setdefault(model, {}).setdefault(mode, {})[lib] = next(
                    (b for b in sorted(by_b) if by_b[b]["median"] >= 2 * base),
                    None)
            if "torch" in per:
                ratios.setdefault(model, {})[mode] = {
                    b: per["fastt"][b]["median"] / per["torch"][b]["median"]
                    for b in (lo, hi)}
    out["compute_bound_at"] = bound
    out["fastt_over_torch"] = ratios
    return out


def _optim_params(lib, count, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for i in range(count):
        shape = OPTIM_SHAPES[i % len(OPTIM_SHAPES)]
        p = lib.tensor(rng.standard_normal(shape).astype(np.float32),
                       requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        params.append(p)
    return params


def run_optim(quick=False, count=300):
    """us per optimizer.step() over `count` small tensors."""
    libs = _libs()
    variants = {}
    for cls in ("Adam", "AdamW"):
        variants[(cls, "fastt")] = ("fastt", cls, {})
        if "torch" in libs:
            variants[(cls, "torch for-loop")] = ("torch", cls,
                                                 {"foreach": False})
            variants[(cls, "torch foreach")] = ("torch", cls,
                                                {"foreach": True})
            variants[(cls, "torch fused")] = ("torch", cls, {"fused": True})
    samplers, notes = {}, []
    for key, (lib_name, cls, kw) in variants.items():
        lib = libs[lib_name]
        try:
            opt = getattr(lib.optim, cls)(_optim_params(lib, count),
                                          lr=1e-3, **kw)
            opt.step()
        except Exception as e:  # e.g. an older torch without CPU fused
            notes.append(f"{cls} {key[1]}: {type(e).__name__}: {e}")
            continue
        samplers[key] = common.loop_sampler(opt.step)
    st = common.interleaved(samplers, 3 if quick else 7,
                            0.005 if quick else 0.03)
    numel = sum(int(np.prod(OPTIM_SHAPES[i % len(OPTIM_SHAPES)]))
                for i in range(count))
    return {"count": count, "numel": numel, "notes": notes,
            "us": {f"{c}|{v}": s["median"] * 1e6
                   for (c, v), s in st.items()}}


def run(quick=False):
    res = run_curves(quick)
    common.log("curves: optimizer step alone")
    res["optim"] = run_optim(quick)
    return res


def _b(v):
    return "> max" if v is None else str(v)


def markdown(res):
    lines = ["## 3. Framework-tax curves", ""]
    lines.append(
        f"us per call, median of interleaved repeats, 1 thread, "
        f"{common.clock_name()} clock. Models: MLP 64-128-128-10; the digits "
        f"CNN (conv 1-16-32 3x3 on 1x8x8, max-pool, 512-128-10); "
        f"TransformerEncoderLayer(d={D_MODEL}, {NHEAD} heads, "
        f"ff={D_FF}, dropout 0, batch_first) on {SEQ} tokens per sample. "
        "Train = zero_grad + forward + loss + backward + Adam step (both "
        "libraries' default Adam: torch's is the for-loop one on CPU); "
        "infer = eval() forward under no_grad (torch may take its fused "
        "transformer fast path).")
    lines.append("")
    bs = res["batches"]
    for model, modes in res["us"].items():
        lines.append(f"**{model}**")
        lines.append("")
        lines.append("| batch | " + " | ".join(
            f"{mode} {lib}" for mode in modes for lib in modes[mode])
            + " | " + " | ".join(f"{mode} fastt/torch" for mode in modes
                                 if "torch" in modes[mode]) + " |")
        ncol = sum(len(modes[m]) for m in modes) + sum(
            "torch" in modes[m] for m in modes)
        lines.append("|---|" + "---|" * ncol)
        for b in bs:
            cells = [f"{modes[m][lib][b]['median']:,.1f}" for m in modes
                     for lib in modes[m]]
            rs = [f"{modes[m]['fastt'][b]['median'] / t:.2f}"
                  for m in modes if "torch" in modes[m]
                  for t in [modes[m]["torch"][b]["median"]]]
            lines.append(f"| {b} | " + " | ".join(cells + rs) + " |")
        lines.append("")
    lines.append("Compute-bound from (first batch with latency >= 2x the "
                 "batch-1 latency), and fastt/torch time ratio at the "
                 "smallest and largest batch (below 1: fastt faster):")
    lines.append("")
    lo, hi = min(bs), max(bs)
    lines.append(f"| model | mode | fastt bound at | torch bound at | "
                 f"fastt/torch @{lo} | fastt/torch @{hi} |")
    lines.append("|---|---|---|---|---|---|")
    for model, modes in res["compute_bound_at"].items():
        for mode, per in modes.items():
            r = res["fastt_over_torch"].get(model, {}).get(mode, {})
            lines.append(
                f"| {model} | {mode} | {_b(per.get('fastt'))} | "
                f"{_b(per.get('torch'))} | "
                f"{r.get(lo, float('nan')):.2f} | "
                f"{r.get(hi, float('nan')):.2f} |")
    lines.append("")
    o = res.get("optim")
    if o:
        lines.append(f"Optimizer step alone, {o['count']} small float32 "
                     f"tensors ({o['numel']:,} elements), us per step():")
        lines.append("")
        variants = sorted({k.split("|")[1] for k in o["us"]},
                          key=lambda v: (v != "fastt", v))
        lines.append("| optimizer | " + " | ".join(variants) +
                     " | fastt / best torch |")
        lines.append("|---|" + "---|" * (len(variants) + 1))
        for cls in ("Adam", "AdamW"):
            vals = {v: o["us"].get(f"{cls}|{v}") for v in variants}
            torch_best = min((x for v, x in vals.items()
                              if v != "fastt" and x), default=None)
            f = vals.get("fastt")
            lines.append(f"| {cls} | " + " | ".join(
                "-" if vals[v] is None else f"{vals[v]:,.1f}"
                for v in variants) + " | " +
                (f"{f / torch_best:.2f}" if f and torch_best else "-")
                + " |")
        for n in o.get("notes", []):
            lines += ["", f"> note: {n}"]
        lines.append("")
    return "\n".join(lines)


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = list(res["us"])
    fig, axes = plt.subplots(2, len(models), figsize=(5 * len(models), 8))
    colors = {"fastt": "tab:blue", "torch": "tab:red"}
    for j, model in enumerate(models):
        modes = res["us"][model]
        ax, rx = axes[0][j], axes[1][j]
        for mode, style in (("train", "o-"), ("infer", "s--")):
            for lib, by_b in modes.get(mode, {}).items():
                bs = sorted(by_b)
                ax.plot(bs, [by_b[b]["median"] for b in bs], style, ms=3,
                        color=colors.get(lib), label=f"{lib} {mode}")
            if "torch" in modes.get(mode, {}):
                per = modes[mode]
                bs = sorted(per["fastt"])
                rx.plot(bs, [per["fastt"][b]["median"] /
                             per["torch"][b]["median"] for b in bs], style,
                        ms=3, color="k", label=f"{mode} fastt/torch")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(model)
        ax.set_xlabel("batch size")
        ax.grid(which="both", alpha=0.3)
        rx.axhline(1.0, color="gray", lw=0.8)
        rx.set_xscale("log", base=2)
        rx.set_xlabel("batch size")
        rx.grid(which="both", alpha=0.3)
        if j == 0:
            ax.set_ylabel("us per call")
            rx.set_ylabel("time ratio (below 1: fastt faster)")
        ax.legend(fontsize=8)
        rx.legend(fontsize=8)
    fig.suptitle("Framework-tax curves: latency vs batch size, 1 thread")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

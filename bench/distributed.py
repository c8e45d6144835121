"""fastt.distributed against torch.distributed, both on Gloo, in one run
on this machine: world size 2 over loopback TCP, one thread per rank
(OMP_NUM_THREADS=1, set_num_threads(1)).

1. Collectives: all_reduce (float32 SUM), broadcast (from rank 0),
   all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single at 1
   to 4M float32 elements per rank (all_reduce also at the gradient count
   of the DDP model below), and barrier. One sample = K calls
   between two barriers (the closing barrier counted, K from the size so
   a sample moves about the same bytes), wall clock per call; bus
   bandwidth as nccl-tests counts it (algbw = bytes / time; busbw =
   algbw * 2(n-1)/n for all_reduce, (n-1)/n for the gather / scatter /
   all-to-all family on their total size, 1 for broadcast).
2. DistributedDataParallel: a training step (MLP 784-256-256-10, batch 64
   per rank, cross entropy, SGD) on 2 ranks against the same step of the
   bare model, and at world size 1 (one process) DDP(model) minus the
   bare model, per step, for that MLP and for a tiny model where a few
   microseconds show; with the cost of one all_reduce of the gradients'
   size at world size 1 for comparison.

fastt and torch cannot share a rendezvous, so each runs in its own
worker processes (this module, --worker), and the libraries alternate
round by round (ABBA: fastt, torch, torch, fastt, ...); every round
measures every case; the figures are medians over all rounds' samples.

    python -m bench.distributed [--quick]

Writes bench/results/distributed.md and .json.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

LIBS = ("fastt", "torch")
MLP = (784, 256, 256, 10)
TINY = (16, 16, 16, 4)
BATCH = 64
TINY_BATCH = 4
# The MLP's gradient count: its DDP all-reduces one bucket of this size.
GRAD = sum(a * b + b for a, b in zip(MLP[:-1], MLP[1:]))
FULL_SIZES = (1, 256, 4096, 1 << 16, 1 << 20, 1 << 22)
QUICK_SIZES = (1, 4096, 1 << 20, GRAD)
# Collective -> (sizes it runs at in a full run, busbw factor for n ranks,
# bytes counted: "in" per-rank input, "total" n x input).
OPS = {
    "all_reduce": (FULL_SIZES[:4] + (GRAD,) + FULL_SIZES[4:],
                   lambda n: 2 * (n - 1) / n, "in"),
    "broadcast": (FULL_SIZES, lambda n: 1.0, "in"),
    "all_gather_into_tensor": (FULL_SIZES, lambda n: (n - 1) / n, "total"),
    "reduce_scatter_tensor": ((256, 1 << 16, 1 << 20),
                              lambda n: (n - 1) / n, "total"),
    "all_to_all_single": ((256, 1 << 16, 1 << 20),
                          lambda n: (n - 1) / n, "in"),
    "barrier": ((0,), None, "in"),
}


def settings(quick):
    """Rounds (worker pairs per library), samples per case in a worker,
    bytes a collective's sample moves, its K bounds, DDP steps per
    sample and world-size-1 sample pairs per model."""
    if quick:
        return dict(rounds=3, reps=2, target_bytes=8 << 20, kmax=100,
                    ddp_k=10, ddp_reps=3, solo_k=(10, 100), solo_reps=6)
    return dict(rounds=5, reps=3, target_bytes=48 << 20, kmax=400,
                ddp_k=20, ddp_reps=5, solo_k=(25, 300), solo_reps=15)


def cases(quick):
    out = []
    for op, (sizes, _, _) in OPS.items():
        for n in sizes:
            if quick and n not in QUICK_SIZES and op != "barrier":
                continue
            out.append((op, n))
    return out


def calls_per_sample(n, cfg):
    return max(2, min(cfg["kmax"], cfg["target_bytes"] // max(4 * n, 1)))


# ---- the worker side (one process per rank) ----

def _import(lib):
    warnings.filterwarnings("ignore")  # torch's deprecation notices
    if lib == "fastt":
        import fastt as m
        import fastt.distributed as dist
        import fastt.nn as nn
        import fastt.nn.functional as F
        import fastt.optim as optim
        from fastt.nn.parallel import DistributedDataParallel as DDP
    else:
        import torch as m
        import torch.distributed as dist
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        from torch.nn.parallel import DistributedDataParallel as DDP
    m.set_num_threads(1)
    return m, dist, nn, F, optim, DDP


def _collectives(m, dist, cfg, quick):
    """{case key: [seconds per call, one per sample]}."""
    world = dist.get_world_size()
    me = dist.get_rank()
    perf = time.perf_counter
    calls = []
    for op, n in cases(quick):
        x = m.full((max(n, 1),), float(me + 1))
        if op == "all_reduce":
            def f(x=x):
                dist.all_reduce(x)
        elif op == "broadcast":
            def f(x=x):
                dist.broadcast(x, 0)
        elif op == "all_gather_into_tensor":
            out = m.empty(world * n)

            def f(x=x, out=out):
                dist.all_gather_into_tensor(out, x)
        elif op == "reduce_scatter_tensor":
            inp = m.ones(world * n)

            def f(x=x, inp=inp):
                dist.reduce_scatter_tensor(x, inp)
        elif op == "all_to_all_single":
            out = m.empty(n)

            def f(x=x, out=out):
                dist.all_to_all_single(out, x)
        else:
            def f():
                dist.barrier()
        k = calls_per_sample(n, cfg)
        for _ in range(min(k, 5)):  # warm-up
            f()
        calls.append((f"{op}/{n}", f, k))
    samples = {key: [] for key, _, _ in calls}
    for _ in range(cfg["reps"]):
        for key, f, k in calls:
            dist.barrier()
            t0 = perf()
            for _ in range(k):
                f()
            dist.barrier()
            samples[key].append((perf() - t0) / k)
    return samples


def _model(m, nn, dims, seed):
    """An MLP of `dims` whose weights come from numpy (the same numbers in
    both libraries)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    layers = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    with m.no_grad():
        for p in model.parameters():
            bound = 1 / (p.shape[-1] ** 0.5)
            arr = rng.uniform(-bound, bound, tuple(p.shape))
            p.copy_(m.from_numpy(arr.astype("float32")))
    return model


def _stepper(m, F, optim, model, dims, batch, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    x = m.from_numpy(rng.standard_normal((batch, dims[0]))
                     .astype("float32"))
    y = m.from_numpy(rng.integers(0, dims[-1], batch).astype("int64"))
    opt = optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def _paired(run_a, run_b, k, reps, sync=None):
    """[(a, b) seconds per call] over reps samples of k calls each, the
    order alternating; sync() (a barrier) around each sample."""
    perf = time.perf_counter
    out = []
    for r in range(reps):
        pair = {}
        for name in (("a", "b") if r % 2 == 0 else ("b", "a")):
            f = run_a if name == "a" else run_b
            if sync:
                sync()
            t0 = perf()
            for _ in range(k):
                f()
            if sync:
                sync()
            pair[name] = (perf() - t0) / k
        out.append((pair["a"], pair["b"]))
    return out


def _ddp_pair(m, dist, nn, F, optim, DDP, cfg):
    """World size 2: [(bare step, DDP step)] seconds, MLP."""
    me = dist.get_rank()
    bare = _stepper(m, F, optim, _model(m, nn, MLP, 0), MLP, BATCH, me)
    ddp = _stepper(m, F, optim, DDP(_model(m, nn, MLP, 0)), MLP, BATCH,
                   me)
    for _ in range(3):
        bare()
        ddp()
    return _paired(bare, ddp, cfg["ddp_k"], cfg["ddp_reps"], dist.barrier)


def _solo(m, dist, nn, F, optim, DDP, cfg):
    """World size 1: per model, [(bare, DDP)] step seconds and
    [all_reduce of the gradients' size] seconds."""
    out = {}
    for (name, dims, batch), k in zip(
            (("mlp", MLP, BATCH), ("tiny", TINY, TINY_BATCH)),
            cfg["solo_k"]):
        bare = _stepper(m, F, optim, _model(m, nn, dims, 0), dims, batch,
                        0)
        wrapped = DDP(_model(m, nn, dims, 0))
        ddp = _stepper(m, F, optim, wrapped, dims, batch, 0)
        nparam = sum(p.numel() for p in wrapped.parameters())
        flat = m.ones(nparam)

        def reduce(flat=flat):
            dist.all_reduce(flat)
        for _ in range(5):
            bare()
            ddp()
            reduce()
        pairs = _paired(bare, ddp, k, cfg["solo_reps"])
        ar = [b for _, b in _paired(lambda: None, reduce, k,
                                    cfg["solo_reps"])]
        out[name] = {"params": nparam, "pairs": pairs, "all_reduce": ar}
    return out


def worker(lib, task, out, quick):
    m, dist, nn, F, optim, DDP = _import(lib)
    cfg = settings(quick)
    dist.init_process_group("gloo", init_method="env://")
    res = {"lib": lib, "rank": dist.get_rank()}
    if task == "pair":
        res["coll"] = _collectives(m, dist, cfg, quick)
        res["ddp"] = _ddp_pair(m, dist, nn, F, optim, DDP, cfg)
    else:
        res["solo"] = _solo(m, dist, nn, F, optim, DDP, cfg)
    dist.barrier()
    dist.destroy_process_group()
    Path(out).write_text(json.dumps(res))


# ---- the driver ----

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(lib, task, world, quick, tmp, timeout):
    """Starts `world` ranks of a worker and returns rank 0's result."""
    env = common.bench_env()
    py = str(common.ROOT / "python")
    env["PYTHONPATH"] = os.pathsep.join(
        [py, str(common.ROOT)] + [p for p in env.get(
            "PYTHONPATH", "").split(os.pathsep) if p])
    env.update(WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(_free_port()), GLOO_SOCKET_IFNAME="lo")
    procs, outs = [], []
    for rank in range(world):
        out = Path(tmp) / f"{lib}-{task}-{rank}.json"
        out.unlink(missing_ok=True)
        outs.append(out)
        cmd = [sys.executable, "-m", "bench.distributed", "--worker", lib,
               "--task", task, "--out", str(out)]
        if quick:
            cmd.append("--quick")
        procs.append(subprocess.Popen(
            cmd, cwd=common.ROOT, env=dict(env, RANK=str(rank)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    t_end = time.monotonic() + timeout
    logs = []
    for p in procs:
        try:
            logs.append(p.communicate(
                timeout=max(1.0, t_end - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise RuntimeError(f"{lib} {task} workers timed out")
    bad = [i for i, p in enumerate(procs) if p.returncode]
    if bad:
        raise RuntimeError(f"{lib} {task} rank {bad[0]} failed:\n"
                           + logs[bad[0]][-3000:])
    return json.loads(outs[0].read_text())


def _med(xs):
    return statistics.median(xs)


def run(quick=False):
    cfg = settings(quick)
    busy = common.others_busy()
    raw = {lib: {"coll": {}, "ddp": [], "solo": {}} for lib in LIBS}
    timeout = 120 if quick else 300
    with tempfile.TemporaryDirectory(prefix="bench-dist-") as tmp:
        for r in range(cfg["rounds"]):
            order = LIBS if r % 2 == 0 else LIBS[::-1]
            for lib in order:
                t0 = time.perf_counter()
                got = launch(lib, "pair", 2, quick, tmp, timeout)
                for key, v in got["coll"].items():
                    raw[lib]["coll"].setdefault(key, []).extend(v)
                raw[lib]["ddp"].extend(got["ddp"])
                got = launch(lib, "solo", 1, quick, tmp, timeout)
                for name, d in got["solo"].items():
                    s = raw[lib]["solo"].setdefault(
                        name, {"params": d["params"], "pairs": [],
                               "all_reduce": []})
                    s["pairs"].extend(d["pairs"])
                    s["all_reduce"].extend(d["all_reduce"])
                common.log(f"distributed: round {r + 1}/{cfg['rounds']} "
                           f"{lib} {time.perf_counter() - t0:.1f} s")
    world = 2
    coll = {}
    for op, n in cases(quick):
        key = f"{op}/{n}"
        row = {"op": op, "n": n}
        for lib in LIBS:
            s = raw[lib]["coll"][key]
            t = _med(s)
            row[lib] = {"us": t * 1e6, "min_us": min(s) * 1e6,
                        "max_us": max(s) * 1e6, "samples": len(s),
                        "k": calls_per_sample(n, cfg)}
            factor = OPS[op][1]
            if factor is not None:
                nbytes = 4 * n * (world if OPS[op][2] == "total" else 1)
                alg = nbytes / t / 1e9
                row[lib].update(bytes=nbytes, algbw_gbs=alg,
                                busbw_gbs=alg * factor(world))
        coll[key] = row
    ddp = {}
    for lib in LIBS:
        pairs = raw[lib]["ddp"]
        ddp[lib] = {"bare_ms": _med([a for a, _ in pairs]) * 1e3,
                    "ddp_ms": _med([b for _, b in pairs]) * 1e3,
                    "diff_ms": _med([b - a for a, b in pairs]) * 1e3,
                    "samples": len(pairs)}
    solo = {}
    for name in ("mlp", "tiny"):
        solo[name] = {}
        for lib in LIBS:
            d = raw[lib]["solo"][name]
            diffs = sorted(b - a for a, b in d["pairs"])
            q = len(diffs) // 4
            solo[name][lib] = {
                "params": d["params"],
                "bare_us": _med([a for a, _ in d["pairs"]]) * 1e6,
                "ddp_us": _med([b for _, b in d["pairs"]]) * 1e6,
                "overhead_us": _med(diffs) * 1e6,
                "overhead_iqr_us": [diffs[q] * 1e6, diffs[-q - 1] * 1e6],
                "all_reduce_us": _med(d["all_reduce"]) * 1e6,
                "samples": len(diffs)}
    return {"world_size": world, "settings": cfg, "coll": coll,
            "ddp": ddp, "solo": solo, "raw": raw,
            "others_busy": [busy, common.others_busy()]}


def _busbw(d):
    return f"{d['busbw_gbs']:.2f}" if "busbw_gbs" in d else "-"


def markdown(res):
    m = res["machine"]
    cfg = res["settings"]
    busy = " / ".join("?" if b is None else f"{b:.2f}"
                      for b in res["others_busy"])
    lines = [
        "# fastt.distributed vs torch.distributed (Gloo), world size 2",
        "",
        "Two processes on this machine over loopback TCP, one thread "
        "each; both libraries on Gloo. Each library runs in its own "
        f"worker pair; {cfg['rounds']} rounds alternate the libraries "
        "(ABBA), each measures every case; figures are medians over all "
        "rounds' samples. Collectives: float32, n elements per rank "
        "(all_gather: n in, 2n out; reduce_scatter: 2n in, n out), µs "
        "per call, a sample being K calls between barriers (the closing "
        "barrier included); busbw as nccl-tests count it (all_reduce "
        "2(n-1)/n x bytes / time; gather, scatter, all-to-all (n-1)/n x "
        "their total; broadcast 1x). Wall clock.",
        "",
        f"Machine: {m['cpu_model']}, {m['cores']} cores; python "
        f"{m['python']}, torch {m['torch']}, numpy {m['numpy']}, git "
        f"{m['git']}. Other processes' load before/after the run: {busy} "
        "cores busy.",
        "",
        "| op | n | fastt µs | torch µs | fastt/torch | fastt busbw "
        "GB/s | torch busbw GB/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    worse = []
    for key, row in res["coll"].items():
        f, t = row["fastt"], row["torch"]
        ratio = f["us"] / t["us"]
        n = "-" if row["op"] == "barrier" else common.size_label(row["n"])
        if ratio > 1.0:
            worse.append(f"{row['op']} {n} ({ratio:.2f})")
        lines.append(f"| {row['op']} | {n} | {f['us']:.1f} | "
                     f"{t['us']:.1f} | {ratio:.2f} | {_busbw(f)} | "
                     f"{_busbw(t)} |")
    d = res["ddp"]
    lines += [
        "",
        "## DistributedDataParallel",
        "",
        f"Training step (zero_grad, forward, cross entropy, backward, SGD "
        f"step) of an MLP {'-'.join(map(str, MLP))} "
        f"({res['solo']['mlp']['fastt']['params']:,} parameters, one "
        f"bucket), batch {BATCH} per rank, ms per step; 'bare' is the "
        "same step of an unwrapped copy in the same processes "
        "(no communication).",
        "",
        "| world size 2 | fastt ms | torch ms | fastt/torch |",
        "|---|---:|---:|---:|",
    ]
    for name, k in (("bare model step", "bare_ms"),
                    ("DDP step", "ddp_ms"),
                    ("DDP - bare (median of paired samples)",
                     "diff_ms")):
        r = d["fastt"][k] / d["torch"][k]
        if r > 1.0 and k != "bare_ms":
            worse.append(f"{name} ({r:.2f})")
        lines.append(f"| {name} | {d['fastt'][k]:.3f} | "
                     f"{d['torch'][k]:.3f} | {r:.2f} |")
    lines += [
        "",
        "World size 1 (one process): DDP(model) step minus the bare "
        "model's step, median of paired samples (interquartile range in "
        "brackets), µs; 'all_reduce' is one all_reduce of a tensor of "
        "the gradients' size at world size 1, alone.",
        "",
        "| model | lib | bare µs | DDP µs | DDP - bare µs | all_reduce µs |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, s in res["solo"].items():
        label = (f"MLP {'-'.join(map(str, MLP))}, batch {BATCH}"
                 if name == "mlp" else
                 f"tiny {'-'.join(map(str, TINY))}, batch {TINY_BATCH}")
        for lib in LIBS:
            x = s[lib]
            lo, hi = x["overhead_iqr_us"]
            lines.append(
                f"| {label} | {lib} | {x['bare_us']:.1f} | "
                f"{x['ddp_us']:.1f} | {x['overhead_us']:.2f} "
                f"[{lo:.2f}, {hi:.2f}] | {x['all_reduce_us']:.1f} |")
    tiny = res["solo"]["tiny"]["fastt"]
    within = "within" if tiny["overhead_us"] <= 2.0 else "over"
    bucket = res["coll"].get(f"all_reduce/{GRAD}")
    lines += [
        "",
        "fastt's DDP issues no all-reduce at world size 1 (the collective "
        "is an identity), so none of fastt's DDP - bare is the all-reduce "
        f"call: on the tiny model it costs {tiny['overhead_us']:.2f} µs "
        f"per step over the bare module, {within} the 2 µs budget (the "
        "budget's all-reduce allowance is unused). The all_reduce column "
        "is a standalone call at world size 1, for comparison: it hands "
        "the work to the back end's thread and back, a few µs when that "
        "thread shares the caller's core, tens of µs when waking it on "
        "the other (idle) vCPU, which varies from process to process.",
    ]
    if bucket:
        lines += [
            "",
            f"At world size 2 a lone all_reduce of the MLP's {GRAD:,} "
            f"gradients takes {bucket['fastt']['us'] / 1e3:.2f} ms "
            f"(fastt) / {bucket['torch']['us'] / 1e3:.2f} ms (torch); "
            "DDP - bare adds to it the wait for the slower rank and the "
            "bucket copies.",
        ]
    lines += [
        "",
        "Samples spread widely on this 2-vCPU machine (min-max per case "
        "in distributed.json): 2 ranks x (caller, collective thread, "
        "Gloo's TCP event loop) share 2 cores, and Gloo's event loop "
        "spins on epoll while another thread holds a connection's lock, "
        "so a collective's time depends on how the scheduler places "
        "those threads; ratios within about 1.3x of 1 are noise-level "
        "here.",
        "",
        "Slower than torch: " + (", ".join(worse) if worse else "none"),
    ]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.distributed")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", choices=LIBS, help=argparse.SUPPRESS)
    ap.add_argument("--task", choices=("pair", "solo"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.task, args.out, args.quick)
        return 0
    if str(common.ROOT / "python") not in sys.path:
        sys.path.insert(0, str(common.ROOT / "python"))
    common.pin_environment()
    t0 = time.perf_counter()
    res = run(args.quick)
    res["machine"] = common.machine()
    res["machine"]["clock"] = "wall"
    res["seconds"] = time.perf_counter() - t0
    common.save_json("distributed.json", res)
    md = markdown(res)
    (common.RESULTS / "distributed.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Training steps at 1 thread and at the default thread count, fastt vs
torch, out of the box (issue 16's "threads, by default"): a 4-layer,
128-wide GPT (batch 32, block 64, 4 heads, GELU MLP, AdamW), the issue's
small GELU GPT ("gpt64": 2 layers, 64 wide, block 16, batch 64, where GELU
and its gradient were a third of fastt's step) and the digits CNN/MLP step
of bench/curves.py at batch 512.

Each (library, threads) configuration runs in its own process, without
the suite's OMP_NUM_THREADS=1 pin: two OpenMP runtimes (fastt's libgomp
and torch's bundled one) in one process spin against each other, and the
default thread count is what a user gets from a plain `import`. "1" is an
explicit set_num_threads(1). Rounds are interleaved (every configuration
once per round), each reports the median step of its run; the table gives
the median over rounds. Wall-clock time.

    python -m bench.threads [--quick] [--rounds N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

MODELS = ("gpt", "gpt64", "cnn", "mlp")
# (batch, block, width, layers) of the GPT models; vocab 96, 4 heads
GPTS = {"gpt": (32, 64, 128, 4), "gpt64": (64, 16, 64, 2)}


def _worker(lib_name, threads, model, steps):
    sys.path.insert(0, str(common.ROOT / "examples"))
    lib = __import__(lib_name)
    if threads != "default":
        lib.set_num_threads(int(threads))
    lib.manual_seed(0)
    if model in GPTS:
        from char_gpt import build_model
        B, T, D, L = GPTS[model]
        V = 96
        net, _ = build_model(lib, V, D, L, 4, T, "sdpa")
        opt = lib.optim.AdamW(net.parameters(), lr=1e-3)
        idx = lib.randint(0, V, (B, T))
        tgt = lib.randint(0, V, (B, T))

        def step():
            opt.zero_grad(set_to_none=True)
            _, loss = net(idx, tgt)
            loss.backward()
            opt.step()
    else:
        from bench import curves
        step = curves.train_step(lib, model, 512)
    for _ in range(3):
        step()
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        ts.append(time.perf_counter() - t0)
    print(json.dumps({"median_s": statistics.median(ts),
                      "threads": lib.get_num_threads()}))


def run(quick=False, rounds=None):
    rounds = rounds or (2 if quick else 5)
    steps = {"gpt": 4 if quick else 10, "gpt64": 10 if quick else 30,
             "cnn": 5 if quick else 12,
             "mlp": 50 if quick else 150}
    env = dict(os.environ)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(v, None)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(common.ROOT / "python"), str(common.ROOT)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    configs = [(lib, th) for th in ("1", "default")
               for lib in ("fastt", "torch")]
    samples = {m: {f"{lib}/{th}": [] for lib, th in configs} for m in MODELS}
    nthreads = {}
    busy = common.others_busy()
    for r in range(rounds):
        for model in MODELS:
            for lib, th in configs:
                out = subprocess.run(
                    [sys.executable, "-m", "bench.threads", "--worker", lib,
                     th, model, str(steps[model])], env=env,
                    cwd=common.ROOT, capture_output=True, text=True,
                    check=True).stdout
                d = json.loads(out.strip().splitlines()[-1])
                samples[model][f"{lib}/{th}"].append(d["median_s"])
                nthreads[th] = d["threads"]
        common.log(f"threads: round {r + 1}/{rounds}")
    med = {m: {k: statistics.median(v) * 1e3 for k, v in s.items()}
           for m, s in samples.items()}
    return {"default_threads": nthreads.get("default"), "rounds": rounds,
            "others_busy": busy, "ms": med}


def markdown(res):
    n = res["default_threads"]
    lines = [f"Training step, ms (median of {res['rounds']} interleaved "
             f"process runs; default = {n} threads, no set_num_threads "
             "call)", "",
             "| model | fastt 1 | torch 1 | fastt/torch 1 | fastt default "
             "| torch default | fastt/torch default | fastt default/1 |",
             "|---|---|---|---|---|---|---|---|"]
    for m, d in res["ms"].items():
        f1, t1 = d["fastt/1"], d["torch/1"]
        fd, td = d["fastt/default"], d["torch/default"]
        lines.append(f"| {m} | {f1:.1f} | {t1:.1f} | {f1 / t1:.2f} | "
                     f"{fd:.1f} | {td:.1f} | {fd / td:.2f} | {fd / f1:.2f} |")
    if res.get("others_busy") and res["others_busy"] > 0.3:
        lines.append(f"\nOther processes kept {res['others_busy']:.1f} "
                     "cores busy when this ran.")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    res = run(args.quick, args.rounds)
    if str(common.ROOT / "python") not in sys.path:
        sys.path.insert(0, str(common.ROOT / "python"))
    res["machine"] = common.machine()
    common.save_json("threads.json", res)
    md = markdown(res)
    (common.RESULTS / "threads.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

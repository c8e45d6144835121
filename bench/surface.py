"""Latency of the op surface issues 15 and 18 added, fastt vs torch in one
run: elementwise rows (trig, special functions), composites (isclose,
cummax, searchsorted, einsum, cdist, interpolate, ...) and linear algebra
(batches of 4x4 matrices and one large matrix), each at a small and a
large size. Single-threaded, interleaved repeats, medians:

    python -m bench.surface [--quick] [--repeats 9]

writes bench/results/surface.md and .json. Add a case: one row in
cases(); its statement runs with `L` bound to fastt or torch and the
operands of setup()."""
import argparse
import json
import sys
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):
    sys.path.insert(0, str(HERE.parent))
from bench import common  # noqa: E402

common.pin_environment()

import numpy as np  # noqa: E402

import fastt  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:
    torch = None

# (key, statement, sizes): the statement sees L (the library), a and b (n
# elements, a in (0.1, 0.9)), w (n in (2, 25)), ai (n int64 in [0, 10)),
# srt (1024 sorted), img ([1, 1, s, s]), m1/m2 ([s, s]), bm ([n/16, 4, 4]
# well conditioned), spd (bm's symmetric positive definite twin), big
# ([k, k]) and bigspd.
ELEMENTWISE = [
    ("tan", "a.tan()"), ("isnan", "a.isnan()"),
    ("nan_to_num", "a.nan_to_num()"), ("lgamma", "a.lgamma()"),
    ("digamma", "a.digamma()"), ("erfinv", "a.erfinv()"),
    ("hypot", "L.hypot(a, b)"), ("bessel_j0", "L.special.bessel_j0(a)"),
    ("bessel_j0, x in [2, 25]", "L.special.bessel_j0(w)"),
    ("xlogy", "L.xlogy(a, b)"),
]
COMPOSITES = [
    ("isclose", "L.isclose(a, b)"), ("cummax", "a.cummax(0)"),
    ("diff", "a.diff()"), ("repeat_interleave", "a.repeat_interleave(2)"),
    ("searchsorted", "L.searchsorted(srt, a)"),
    ("kthvalue", "a.kthvalue(3)"), ("median", "a.median()"),
    ("unique", "L.unique(ai)"), ("bincount", "L.bincount(ai)"),
    ("einsum", "L.einsum('ij,jk->ik', m1, m2)"),
    ("cdist", "L.cdist(m1, m2)"),
    ("interpolate", "L.nn.functional.interpolate(img, scale_factor=2, "
                    "mode='bilinear')"),
]
LINALG_BATCHED = [
    ("solve", "L.linalg.solve(bm, bm)"), ("inv", "L.linalg.inv(bm)"),
    ("det", "L.linalg.det(bm)"), ("cholesky", "L.linalg.cholesky(spd)"),
    ("qr", "L.linalg.qr(bm)"), ("eigh", "L.linalg.eigh(spd)"),
    ("svd", "L.linalg.svd(bm)"),
]
LINALG_BIG = [
    ("solve", "L.linalg.solve(big, big)"), ("inv", "L.linalg.inv(big)"),
    ("det", "L.linalg.det(big)"), ("cholesky", "L.linalg.cholesky(bigspd)"),
    ("qr", "L.linalg.qr(big)"), ("eigh", "L.linalg.eigh(bigspd)"),
    ("svd", "L.linalg.svd(big)"), ("pinv", "L.linalg.pinv(big)"),
]


def operands(lib, n, k):
    rng = np.random.default_rng(0)
    s = max(2, int(round(n ** 0.5)))
    nb = max(1, n // 16)
    a = rng.uniform(0.1, 0.9, n).astype(np.float32)
    b = rng.uniform(0.1, 0.9, n).astype(np.float32)
    bm = (rng.standard_normal((nb, 4, 4)) + 4 * np.eye(4)).astype(np.float32)
    big = (rng.standard_normal((k, k)) + k ** 0.5 * np.eye(k)).astype(
        np.float32)
    arrays = {"a": a, "b": b, "ai": rng.integers(0, 10, n),
              "w": rng.uniform(2, 25, n).astype(np.float32),
              "srt": np.sort(rng.uniform(0, 1, 1024)).astype(np.float32),
              "img": rng.standard_normal((1, 1, s, s)).astype(np.float32),
              "m1": rng.standard_normal((s, s)).astype(np.float32),
              "m2": rng.standard_normal((s, s)).astype(np.float32),
              "bm": bm, "spd": bm @ bm.transpose(0, 2, 1),
              "big": big, "bigspd": big @ big.T}
    env = {k_: lib.tensor(v) for k_, v in arrays.items()}
    env["L"] = lib
    return env


def run(quick=False, repeats=None):
    sizes = [16, 1 << 16] if quick else [16, 1 << 20]
    k = 128 if quick else 512
    repeats = repeats or (5 if quick else 9)
    fastt.set_num_threads(1)
    libs = {"fastt": fastt}
    if torch is not None:
        torch.set_num_threads(1)
        libs["torch"] = torch
    timers, rows = {}, []
    for n in sizes:
        envs = {name: operands(lib, n, k) for name, lib in libs.items()}
        groups = [("elementwise", ELEMENTWISE), ("composite", COMPOSITES),
                  ("linalg, [n/16, 4, 4]", LINALG_BATCHED)]
        if n == sizes[-1]:
            groups.append((f"linalg, [{k}, {k}]", LINALG_BIG))
        for group, cases in groups:
            for key, stmt in cases:
                row = (group, key, n)
                for name, env in envs.items():
                    try:
                        eval(stmt, env)
                    except Exception as e:
                        common.log(f"skip {name} {key} n={n}: "
                                   f"{type(e).__name__}: {e}")
                        continue
                    t = timeit.Timer(stmt, globals=env, timer=common.clock())
                    timers[row + (name,)] = t.timeit
                rows.append(row)
    res = common.interleaved(timers, repeats, 0.02 if quick else 0.05)
    out = []
    for group, key, n in rows:
        entry = {"group": group, "op": key, "n": n}
        for name in libs:
            st = res.get((group, key, n, name))
            if st:
                entry[name] = {m: st[m] * 1e6 for m in ("median", "min",
                                                        "max")}
        out.append(entry)
    return {"machine": common.machine(), "repeats": repeats,
            "clock": common.clock_name(), "rows": out}


def markdown(result):
    lines = ["<!-- written by bench/surface.py -->",
             f"Machine: {result['machine']}", "",
             "Latency of the ops issues 15 and 18 added, microseconds per "
             f"call: median of {result['repeats']} interleaved repeats, "
             f"1 thread, {result['clock']} clock. fastt/torch below 1 means "
             "fastt is faster.", "",
             "| group | op | elements | fastt us | torch us | fastt/torch |",
             "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        f, t = r.get("fastt"), r.get("torch")
        ratio = f"{f['median'] / t['median']:.2f}" if f and t else "-"
        cell = lambda s: f"{s['median']:.2f}" if s else "-"  # noqa: E731
        lines.append(f"| {r['group']} | `{r['op']}` | {r['n']} | {cell(f)} |"
                     f" {cell(t)} | {ratio} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--clock", choices=sorted(common.CLOCKS), default="cpu")
    args = ap.parse_args(argv)
    common.set_clock(args.clock)
    result = run(args.quick, args.repeats)
    md = markdown(result)
    print(md)
    if not args.quick:
        (common.RESULTS / "surface.json").write_text(
            json.dumps(result, indent=1))
        (common.RESULTS / "surface.md").write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

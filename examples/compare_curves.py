"""Runs each training example under torch and fastt with the same seed (so
the same initial weights and batches) and writes both loss curves and step
times as Markdown (and with --png a plot) into bench/results/.
  python examples/compare_curves.py [--examples mlp_digits cnn_digits]"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Per-example arguments that make the two runs comparable (dropout masks
# come from each library's own RNG, so the CNN comparison turns it off).
EXTRA = {"mlp_digits": [], "cnn_digits": ["--dropout", "0"], "char_gpt": []}


def run(example, lib, args, extra):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = [sys.executable, os.path.join(HERE, example + ".py"), "--lib", lib,
           "--seed", str(args.seed), "--threads", str(args.threads),
           "--progress", "off", "--json", path] + extra
    print("$", " ".join(cmd[1:]), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=args.timeout)
    summary = [ln for ln in proc.stdout.splitlines()
               if ln.startswith("SUMMARY")]
    if summary:
        print("  " + summary[-1], flush=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
        print("  FAILED: " + (tail[-1] if tail else "?"), flush=True)
        os.unlink(path)
        shown = [os.path.relpath(cmd[1], ROOT)] + cmd[2:]
        shown = [a for a in shown if a not in ("--json", path)]
        return {"error": "\n".join(tail), "cmd": " ".join(shown)}
    with open(path) as f:
        rec = json.load(f)
    os.unlink(path)
    rec["summary"] = summary[-1] if summary else ""
    return rec


def fmt(x, spec=".4f"):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def curve_rows(rec):
    """(label, loss, metric, step ms) rows: per epoch or per log point."""
    if "epochs" in rec:
        return [(e["epoch"], e["train_loss"], e["test_acc"], e["step_ms"])
                for e in rec["epochs"]]
    return [(c["step"], c["train_loss"], None, c["step_ms"])
            for c in rec["curve"]]


def section(example, runs, extra):
    t, f = runs["torch"], runs["fastt"]
    out = [f"## {example}", ""]
    args = " ".join(extra)
    note = f"; extra args: `{args}`" if args else ""
    out.append(f"Same seed, same numpy-made initial weights and batch order "
               f"in both libraries{note}.")
    out.append("")
    for lib, rec in runs.items():
        if "error" in rec:
            out += [f"**{lib} failed** (`{rec['cmd']}`):", "", "```",
                    rec["error"], "```", ""]
    ok = [lib for lib in ("torch", "fastt") if "error" not in runs[lib]]
    if not ok:
        return out
    metric = "test_acc" if "test_acc" in runs[ok[0]] else "val_loss"
    out += ["| lib | " + metric + " | first-step loss | final train loss "
            "| mean step ms | median step ms | total s |",
            "|---|---|---|---|---|---|---|"]
    for lib in ok:
        r = runs[lib]
        final = curve_rows(r)[-1][1]
        out.append(f"| {lib} | {fmt(r[metric])} | {fmt(r['step_losses'][0])}"
                   f" | {fmt(final)} | {fmt(r['mean_step_ms'], '.3f')} | "
                   f"{fmt(r['median_step_ms'], '.3f')} | "
                   f"{fmt(r['total_s'], '.2f')} |")
    if len(ok) == 2:
        ratio = t["median_step_ms"] / f["median_step_ms"]
        n = min(len(t["step_losses"]), len(f["step_losses"]), 5)
        diffs = [abs(a - b) for a, b in zip(t["step_losses"][:n],
                                            f["step_losses"][:n])]
        out += ["", f"Median step time torch/fastt = {ratio:.2f} (above 1: "
                f"fastt is faster). "
                f"|loss difference| over the first {n} steps: "
                + ", ".join(f"{d:.2e}" for d in diffs) + "."]
        label = "epoch" if "epochs" in t else "step"
        has_acc = "epochs" in t
        head = f"| {label} | torch loss | fastt loss |"
        sep = "|---|---|---|"
        if has_acc:
            head += " torch acc | fastt acc |"
            sep += "---|---|"
        head += " torch ms/step | fastt ms/step |"
        sep += "---|---|"
        out += ["", head, sep]
        for a, b in zip(curve_rows(t), curve_rows(f)):
            row = f"| {a[0]} | {fmt(a[1])} | {fmt(b[1])} |"
            if has_acc:
                row += f" {fmt(a[2])} | {fmt(b[2])} |"
            row += f" {fmt(a[3], '.3f')} | {fmt(b[3], '.3f')} |"
            out.append(row)
    out.append("")
    return out


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.6),
                             squeeze=False)
    for ax, (example, runs) in zip(axes[0], results.items()):
        for lib, style in (("torch", "-"), ("fastt", "--")):
            rec = runs[lib]
            if "error" in rec:
                continue
            ax.plot(range(1, len(rec["step_losses"]) + 1),
                    rec["step_losses"], style, lw=1,
                    label=f"{lib} ({rec['mean_step_ms']:.2f} ms/step)")
        ax.set_title(example)
        ax.set_xlabel("step")
        ax.set_ylabel("train loss")
        ax.set_yscale("log")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--examples", nargs="+", choices=sorted(EXTRA),
                   default=["mlp_digits", "cnn_digits", "char_gpt"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results",
                                                 "training_curves.md"))
    p.add_argument("--png", action="store_true",
                   help="also write a plot next to --out (matplotlib)")
    args, passthrough = p.parse_known_args()

    results, lines = {}, [
        "# Training curves: fastt vs torch", "",
        f"Generated by `python examples/compare_curves.py` (seed "
        f"{args.seed}, {args.threads} thread(s)). Step time is forward + "
        f"backward + optimizer step + loss.item(); mean and median leave "
        f"out the first five steps. The machine may be shared, so the "
        f"median is the steadier figure ({os.cpu_count()} CPUs, load "
        f"average {os.getloadavg()[0]:.1f} when this run started).", ""]
    for example in args.examples:
        extra = EXTRA[example] + passthrough
        runs = {lib: run(example, lib, args, extra)
                for lib in ("torch", "fastt")}
        results[example] = runs
        lines += section(example, runs, extra)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("wrote", args.out)
    if args.png:
        png = os.path.splitext(args.out)[0] + ".png"
        try:
            plot(results, png)
            print("wrote", png)
        except ImportError as e:
            print("no plot:", e)
    failed = any("error" in r for runs in results.values()
                 for r in runs.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

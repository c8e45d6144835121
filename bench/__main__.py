"""Runs fastt's benchmark suite and writes bench/results/report.md.

`python -m bench [--quick] [--only ops,sweep,curves]` runs the selected
parts in one process (single-threaded parts first, the multi-threaded
sweep last, in child processes), saves bench/results/<part>.json and
writes report.md, headline.md and the PNGs. The C++ benches come from
$FASTT_BUILD_DIR (default build/) and build-bench-libtorch; either is
built with cmake when missing (not with --no-build)."""
import argparse
import sys
import time

from . import common

common.pin_environment()  # before numpy / torch / fastt load their pools

from . import report  # noqa: E402


def run_gpu(quick, times):
    """The GPU part (bench/gpu.py) when fastt sees a CUDA GPU: results in
    bench/results/gpu/ (gpu.md, gpu.json)."""
    import os
    import subprocess

    import fastt
    if not fastt.cuda.is_available():
        return
    t0 = time.perf_counter()
    out = common.RESULTS / "gpu"
    out.mkdir(parents=True, exist_ok=True)
    argv = ["--out", str(out)] + (["--quick"] if quick else [])
    probe = (common.ROOT / os.environ.get("FASTT_BUILD_DIR", "build") /
             "bench" / "fastt_cuda_launch")
    if probe.exists():
        r = subprocess.run([str(probe)], capture_output=True, text=True)
        if r.returncode == 0:
            (out / "launch.json").write_text(r.stdout)
            argv += ["--launch-json", str(out / "launch.json")]
    from . import gpu
    gpu.main(argv)
    times["gpu"] = time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer sizes and repeats (under a minute)")
    ap.add_argument("--only", default=",".join(report.PARTS),
                    help="comma-separated parts: " + ",".join(report.PARTS))
    ap.add_argument("--clock", choices=sorted(common.CLOCKS), default="cpu",
                    help="single-threaded timing clock (default: process "
                    "CPU time)")
    ap.add_argument("--no-build", action="store_true",
                    help="do not build missing C++ bench binaries")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--no-gpu", action="store_true",
                    help="skip the GPU part (it runs when fastt sees a GPU)")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite report.md and plots from the saved JSON")
    args = ap.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    bad = [p for p in parts if p not in report.PARTS]
    if bad:
        ap.error(f"unknown part(s) {bad}; choose from {report.PARTS}")
    common.set_clock(args.clock)
    if args.report_only:
        path, headline = report.write(plots=not args.no_plots)
        print(headline + f"\nwrote {path}")
        return 0
    t_start = time.perf_counter()
    times = {}
    sweep_res = None
    for part in report.PARTS:  # fixed order; threads run at the very end
        if part not in parts:
            continue
        t0 = time.perf_counter()
        if part == "ops":
            from . import ops
            res = ops.run(args.quick, build=not args.no_build)
        elif part == "sweep":
            from . import sweep
            res = sweep_res = sweep.run_single(args.quick)
        else:
            from . import curves
            res = curves.run(args.quick)
        times[part] = time.perf_counter() - t0
        report.save(part, res, args.quick, times[part])
    if sweep_res is not None:
        from . import sweep
        t0 = time.perf_counter()
        sweep.run_threads(sweep_res, args.quick)
        times["sweep"] += time.perf_counter() - t0
        report.save("sweep", sweep_res, args.quick, times["sweep"])
    if not args.no_gpu:
        run_gpu(args.quick, times)
    path, headline = report.write(plots=not args.no_plots)
    total = time.perf_counter() - t_start
    print(headline)
    print("\n" + ", ".join(f"{p} {t:.0f} s" for p, t in times.items())
          + f"; total {total:.0f} s")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

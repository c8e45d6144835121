"""fastt's CUDA host path without a GPU: bench/gpu.py's small ops (and the
char-GPT step at batch 1) timed from Python on the emulated CUDA device
(tests/cuda_emu) with null kernels, beside the same ops on fastt CPU and
torch CPU, with the CUDA runtime calls each op makes. Writes
bench/results/emu_host.json and .md.

    scripts/cuda_emu_test.sh build-emu -q tests/python/test_cuda_host_path.py
    PYTHONPATH=build-emu/pkg FASTT_EMU_NULL_KERNELS=1 python3 -m bench.emu_host
"""
import argparse
import ctypes
import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

common.pin_environment()

import fastt  # noqa: E402

from bench import gpu  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:
    torch = None


def emu_lib():
    try:
        lib = ctypes.CDLL(fastt._C.__file__)
        lib.fastt_emu_counters_json.restype = ctypes.c_size_t
        lib.fastt_emu_counters_json.argtypes = [ctypes.c_char_p,
                                                ctypes.c_size_t]
        lib.fastt_emu_launch_cost_ns.restype = ctypes.c_double
    except (OSError, AttributeError):
        sys.exit("emu_host: fastt._C is not the CUDA emulation build "
                 "(PYTHONPATH=BUILD/pkg after scripts/cuda_emu_test.sh)")
    return lib


EMU = emu_lib()


def counters():
    buf = ctypes.create_string_buffer(1 << 16)
    n = EMU.fastt_emu_counters_json(buf, len(buf))
    if n >= len(buf):  # truncated: n is the length needed
        buf = ctypes.create_string_buffer(n + 1)
        EMU.fastt_emu_counters_json(buf, len(buf))
    return json.loads(buf.value.decode())


def calls_of(fn, warmup=3):
    """Runtime calls of one steady-state call of fn."""
    for _ in range(warmup):
        fn()
    EMU.fastt_emu_counters_reset()
    fn()
    return counters()


def cases(lib, dev, gpt):
    """bench/gpu.py's ops (its op_cases, on device dev) + the GPT step."""
    out = gpu.op_cases(lib, dev)
    if gpt:
        out["char-GPT step, batch 1"] = gpu.gpt_step(lib, 1, dev=dev)
    return out


def summarize(c):
    api = c["api"]
    launches = api.get("launch", 0)
    other = {k: v for k, v in api.items()
             if k not in ("launch", "cudaGetLastError")
             and not k.startswith("memcpy_")}
    return {"launches": launches,
            "cudaGetLastError": api.get("cudaGetLastError", 0),
            "other": other, "kernels": c["kernels"], "cub": c["cub"]}


def run(repeats, target_s, gpt):
    libs = {"fastt emu-cuda (null kernels)": (fastt, "cuda"),
            "fastt cpu": (fastt, "cpu")}
    if torch is not None:
        libs["torch cpu"] = (torch, "cpu")
    samplers, calls = {}, {}
    for lname, (lib, dev) in libs.items():
        for op, fn in cases(lib, dev, gpt).items():
            if dev == "cuda":
                calls[op] = summarize(calls_of(fn))
            samplers[(op, lname)] = common.loop_sampler(fn)
    # The GPT step on the CPU does the real arithmetic: fewer calls.
    st = common.interleaved(samplers, repeats, target_s)
    # What the emulator itself adds per launch (counting, config check,
    # its cudaGetLastError), to subtract from the emu-cuda times.
    cost = sorted(EMU.fastt_emu_launch_cost_ns(200000) for _ in range(7))[3]
    ns = {}
    for (op, lname), s in st.items():
        ns.setdefault(op, {})[lname] = {
            k: s[k] * 1e9 for k in ("median", "min", "max")}
    return {"ns": ns, "calls": calls, "libs": list(libs),
            "emu_launch_cost_ns": cost}


def _fmt(v):
    if v is None:
        return "-"
    return f"{v / 1e3:.1f} µs" if v >= 1e5 else f"{v:.0f}"


def markdown(res):
    libs = res["libs"]
    lines = [
        "# fastt's CUDA host path on the emulated device (no GPU)", "",
        "What this measures: the host time of one op called from Python on "
        "fastt's CUDA backend, with the device work switched off "
        "(tests/cuda_emu with FASTT_EMU_NULL_KERNELS=1: every launch is "
        "validated and counted but runs no threads; CUB calls only answer "
        "the temp-storage query). It is fastt's own host path — Python "
        "binding, dispatch, output allocation from the caching allocator, "
        "autograd bookkeeping, kernel-argument setup — *excluding* the "
        "driver's cost of each CUDA runtime call. On a GPU each launch adds "
        "the driver's cudaLaunchKernel cost (order of microseconds, not "
        "measured here); the real figures and the issue-5 budget (≤ 1.5x a "
        "raw launch, ≥ 3x below torch) come from bench/gpu_check.sh on a "
        "GPU. What the emulator still adds per call: a relaxed atomic "
        "increment per runtime call, a lock-free name-table increment and a "
        "launch-configuration check per launch, and the fake runtime's "
        "function bodies (no pointer checks, no mutexes in null mode): "
        f"{res['emu_launch_cost_ns']:.1f} ns per launch measured here "
        "(fastt_emu_launch_cost_ns); the \"fastt only\" column subtracts "
        "it (launches x that).", "",
        "The emulator has no cuBLAS: matmul and Linear launch the "
        "hand-written tiled gemm, so their rows lack cuBLAS's own host "
        "work (its calls are not counted either).", "",
        "fastt CPU and torch CPU run the same ops for real on this CPU "
        "(for tiny ops mostly host overhead too). torch is CPU-only here.",
        "", f"Machine: {res['machine']['cpu_model']}, clock "
        f"{res['machine']['clock']} time, single thread, medians of "
        f"{res['repeats']} interleaved repeats (ns per op).", "",
        "| op | " + " | ".join(libs) + " | fastt only (emu cost out) | "
        "emu-cuda / fastt cpu | "
        "launches | cudaGetLastError | other runtime calls |",
        "|---|" + "---:|" * (len(libs) + 4) + "---|"]
    for op, v in res["ns"].items():
        med = [v.get(lb, {}).get("median") for lb in libs]
        c = res["calls"].get(op, {})
        ratio = (f"{med[0] / med[1]:.2f}x" if med[0] and med[1] else "-")
        other = ", ".join(f"{k} {n}" for k, n in c.get("other", {}).items())
        own = (med[0] - c["launches"] * res["emu_launch_cost_ns"]
               if med[0] and c else None)
        lines.append(f"| {op} | " + " | ".join(_fmt(m) for m in med) +
                     f" | {_fmt(own)} | {ratio} | {c.get('launches', '-')} | "
                     f"{c.get('cudaGetLastError', '-')} | {other or '-'} |")
    lines += ["", "Kernels launched per call (emulated CUDA):", ""]
    for op, c in res["calls"].items():
        ks = ", ".join(f"{k} x{n}" for k, n in c["kernels"].items())
        cub = ", ".join(f"{k} x{n}" for k, n in c["cub"].items())
        lines.append(f"- {op}: {ks or '-'}" + (f"; CUB {cub}" if cub else ""))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--target", type=float, default=0.02,
                    help="seconds per sample (calibrated)")
    ap.add_argument("--no-gpt", action="store_true")
    ap.add_argument("--out", default=str(common.RESULTS))
    args = ap.parse_args(argv)
    EMU.fastt_emu_set_null_kernels(1)  # whatever the environment says
    res = run(args.repeats, args.target, not args.no_gpt)
    res.update(repeats=args.repeats, machine=common.machine(),
               null_kernels=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "emu_host.json").write_text(json.dumps(res, indent=1))
    md = markdown(res)
    (out / "emu_host.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()

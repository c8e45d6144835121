"""fastt.fft against torch.fft, one thread, medians of interleaved repeats
(bench.common.interleaved): rfft / irfft / fft of one signal at 256 to
64K points (powers of two, a prime length that runs Bluestein's
algorithm, a length of small odd factors), batches of rows, and 2-d
transforms. fastt's transforms (kernels/cpu/fft.cpp) are its radix-4
Stockham loops for powers of two (batches of rows: radix 8, several rows
in SIMD lanes), KissFFT for other lengths, Bluestein's
algorithm for large prime factors; torch's CPU wheels use oneMKL's
(pocketfft where built without MKL). The last row is a spectral layer's
training step (irfft(rfft(x) * w), a loss, backward into the complex w).

    python -m bench.fft [--quick]

Writes bench/results/fft.md and .json.
"""
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

# (label, shape, dtype, [(op name, function of (lib, x))])
ONE_D = (256, 1024, 4096, 1009, 1000, 65536)


def cases():
    def rfft(m, x):
        return m.fft.rfft(x)

    def irfft(m, x):
        return m.fft.irfft(x)

    def fft(m, x):
        return m.fft.fft(x)

    def rfft2(m, x):
        return m.fft.rfft2(x)

    def fft2(m, x):
        return m.fft.fft2(x)

    weights = {}

    def spectral(m, x):  # a spectral layer's training step (autograd)
        w = weights.get(m.__name__)
        if w is None:
            w = weights[m.__name__] = m.ones(
                x.shape[-1] // 2 + 1, dtype=m.complex64, requires_grad=True)
        y = m.fft.irfft(m.fft.rfft(x) * w, n=x.shape[-1])
        y.pow(2).mean().backward()
        return y

    out = []
    for n in ONE_D:
        out.append(("rfft", (n,), "float32", rfft))
    for n in (1024, 4096):
        out.append(("rfft", (n,), "float64", rfft))
        out.append(("irfft", (n // 2 + 1,), "complex64", irfft))
        out.append(("fft", (n,), "complex64", fft))
    out.append(("rfft 64 rows", (64, 1024), "float32", rfft))
    out.append(("irfft 64 rows", (64, 513), "complex64", irfft))
    out.append(("fft 64 rows", (64, 1024), "complex64", fft))
    out.append(("rfft 16 rows", (16, 4096), "float32", rfft))
    out.append(("rfft2", (64, 64), "float32", rfft2))
    out.append(("fft2", (64, 64), "complex64", fft2))
    out.append(("spectral layer fwd+bwd", (16, 256), "float32", spectral))
    return out


def run(quick=False):
    import numpy as np
    import torch

    import fastt
    repeats, target = common.single_thread(quick)
    res = {}
    for name, shape, dt, fn in cases():
        rng = np.random.default_rng(len(res))
        a = rng.standard_normal(shape)
        if dt.startswith("complex"):
            a = a + 1j * rng.standard_normal(shape)
        a = a.astype(dt)
        args = {"fastt": [fastt.from_numpy(a.copy())],
                "torch": [torch.from_numpy(a.copy())]}
        fns = {"fastt": [(name, lambda x, f=fn: f(fastt, x))],
               "torch": [(name, lambda x, f=fn: f(torch, x))]}
        for op, d in common.time_ops(fns, args, repeats, target).items():
            res[f"{op}/{dt}/{int(np.prod(shape))}"] = d
        common.log(f"fft: {name} {shape} {dt} done")
    return {"isa": fastt._C._cpu_isa()["in_use"], "us": res,
            "others_busy": common.others_busy()}


def markdown(res):
    return common.ratio_table(
        res, "fastt.fft against torch.fft, one thread, µs per call (median "
        "of interleaved repeats); n is the input's element count (irfft: "
        "n/2+1 complex values in, n real out); 'rfft 64 rows' is [64, "
        "1024] (irfft: [64, 513]), 'rfft 16 rows' [16, 4096], the 2-d "
        "transforms are 64x64; the spectral layer is "
        "irfft(rfft(x) * w) on [16, 256] with backward into w. fastt: "
        "radix-4 Stockham "
        "(powers of two; batches of rows in SIMD lanes, radix 8), KissFFT, "
        "Bluestein (large prime factors); "
        "torch: oneMKL.")


if __name__ == "__main__":
    sys.exit(common.standalone_main("fft", run, markdown))

"""Shared helpers for the CUDA tests (tests/python/test_cuda_*.py).

Every CUDA test runs an op on CPU tensors and on copies of them on the
device under test, then compares. The device under test is
FASTT_TEST_DEVICE (default "cuda"): without a GPU the tests skip, and
FASTT_TEST_DEVICE=cpu runs the whole suite CPU-against-CPU, which checks
only the test code itself (that every case builds its inputs, calls the
API and compares) so a suite that has never met a GPU is not also broken.
"""
import os

import numpy as np
import pytest

import fastt

DEVICE = os.environ.get("FASTT_TEST_DEVICE", "cuda")

# cuDNN convolutions default to TF32 like torch's; comparisons against the
# CPU need float32, so the suite turns it off (test_cuda_linalg.py checks
# the default and the switch).
CUDNN_TF32_DEFAULT = fastt.backends.cudnn.allow_tf32
fastt.backends.cudnn.allow_tf32 = False

requires_device = pytest.mark.skipif(
    DEVICE.startswith("cuda") and not fastt.cuda.is_available(),
    reason="no CUDA GPU (set FASTT_TEST_DEVICE=cpu to self-check the tests)")

FLOAT_DTYPES = [fastt.float32, fastt.float16, fastt.bfloat16, fastt.float64]
INT_DTYPES = [fastt.int32, fastt.int64]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + [fastt.bool]

# Tolerances by dtype for results the device computes in a different order
# (reductions, transcendental functions) than the CPU.
TOL = {
    fastt.float32: (1e-5, 1e-5),
    fastt.float64: (1e-12, 1e-12),
    fastt.float16: (1e-2, 1e-2),
    fastt.bfloat16: (2e-2, 2e-2),
    # products and quotients: the device contracts a*b - c*d into an FMA
    fastt.complex64: (1e-5, 1e-5),
    fastt.complex128: (1e-12, 1e-12),
}


def tol(dtype, scale=1.0):
    rtol, atol = TOL.get(dtype, (0.0, 0.0))
    return rtol * scale, atol * scale


def to_dev(x):
    """Copies tensors (also inside lists/tuples) to the device under test."""
    if isinstance(x, fastt.Tensor):
        y = x.to(DEVICE)
        if x.requires_grad:
            y = y.detach().requires_grad_(True)
        return y
    if isinstance(x, (list, tuple)):
        return type(x)(to_dev(v) for v in x)
    if isinstance(x, dict):
        return {k: to_dev(v) for k, v in x.items()}
    return x


def to_numpy(t):
    t = t.detach().cpu()
    if t.dtype in (fastt.float16, fastt.bfloat16):
        t = t.float()
    return t.numpy()


def assert_close(dev_result, cpu_result, rtol=None, atol=None, what=""):
    """Compares a device result (tensor, number, or nested tuple/list of
    them) with the CPU result: same dtype, shape and values."""
    if isinstance(cpu_result, (tuple, list)):
        assert isinstance(dev_result, (tuple, list)), what
        assert len(dev_result) == len(cpu_result), what
        for d, c in zip(dev_result, cpu_result, strict=True):
            assert_close(d, c, rtol, atol, what)
        return
    if cpu_result is None:
        assert dev_result is None, what
        return
    if not isinstance(cpu_result, fastt.Tensor):
        # A Python number (an .item(), a returned size or count): ints and
        # bools exactly, floats within rtol/atol (1e-6 when not given; an
        # explicit 0 means exact).
        assert not isinstance(dev_result, fastt.Tensor), what
        if isinstance(cpu_result, (bool, int)):
            assert type(dev_result) is type(cpu_result), (
                f"{what}: {type(dev_result).__name__} result, expected "
                f"{type(cpu_result).__name__}")
            assert dev_result == cpu_result, (what, dev_result, cpu_result)
            return
        assert dev_result == pytest.approx(
            cpu_result, rel=1e-6 if rtol is None else rtol,
            abs=1e-6 if atol is None else atol, nan_ok=True), what
        return
    assert isinstance(dev_result, fastt.Tensor), what
    assert dev_result.device.type == fastt.device(DEVICE).type, (
        f"{what}: result on {dev_result.device}, expected {DEVICE}")
    assert dev_result.dtype == cpu_result.dtype, what
    assert tuple(dev_result.shape) == tuple(cpu_result.shape), what
    r, a = tol(cpu_result.dtype)
    np.testing.assert_allclose(
        to_numpy(dev_result), to_numpy(cpu_result),
        rtol=r if rtol is None else rtol, atol=a if atol is None else atol,
        equal_nan=True, err_msg=what)


def check(fn, *args, rtol=None, atol=None, what="", **kwargs):
    """fn(*args, **kwargs) on CPU vs the same on device copies of the
    tensor arguments; returns both results."""
    cpu = fn(*args, **kwargs)
    dev = fn(*to_dev(args), **to_dev(kwargs))
    assert_close(dev, cpu, rtol, atol, what or getattr(fn, "__name__", ""))
    return dev, cpu


def check_grad(fn, *args, rtol=None, atol=None, what=""):
    """Runs fn forward + backward (sum of the output times a fixed random
    cotangent) on CPU and device; compares outputs and every input's grad.
    Float tensor args that require grad are the ones differentiated."""
    def run(inputs):
        out = fn(*inputs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        gen = np.random.default_rng(0)
        total = None
        for o in outs:
            if not (isinstance(o, fastt.Tensor) and o.requires_grad):
                continue
            v = gen.standard_normal(tuple(o.shape))
            if o.is_complex():
                v = v + 1j * gen.standard_normal(tuple(o.shape))
            cot = fastt.tensor(v, dtype=o.dtype).to(o.device)
            term = (o * cot).sum()
            if term.is_complex():  # a real loss: Re(sum(o * cot))
                term = term.real
            total = term if total is None else total + term
        total.backward()
        grads = [a.grad for a in inputs
                 if isinstance(a, fastt.Tensor) and a.requires_grad]
        return out, grads

    cpu_in = [a.detach().requires_grad_(True)
              if isinstance(a, fastt.Tensor) and a.requires_grad else a
              for a in args]
    dev_in = to_dev(cpu_in)
    cpu_out, cpu_grads = run(cpu_in)
    dev_out, dev_grads = run(dev_in)
    assert_close(dev_out, cpu_out, rtol, atol, what + " (forward)")
    assert cpu_grads, f"{what}: no input requires grad"
    for i, (d, c) in enumerate(zip(dev_grads, cpu_grads, strict=True)):
        assert_close(d, c, rtol, atol, f"{what} (grad of input {i})")


def rand(*shape, dtype=fastt.float32, seed=0, low=-2.0, high=2.0):
    """A CPU tensor of reproducible values (ints in [low, high))."""
    gen = np.random.default_rng(seed)
    if dtype == fastt.bool:
        return fastt.tensor(gen.random(shape) < 0.5)
    if dtype in INT_DTYPES or dtype in (fastt.int8, fastt.int16, fastt.uint8):
        return fastt.tensor(gen.integers(int(low), int(high), size=shape),
                            dtype=dtype)
    return fastt.tensor(gen.uniform(low, high, size=shape)).to(dtype)


def noncontig(t):
    """The same values as t, laid out non-contiguously (a transposed copy
    transposed back, or a strided slice for 1-d)."""
    if t.dim() >= 2:
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    if t.dim() == 1:
        big = fastt.zeros(t.shape[0] * 2, dtype=t.dtype, device=t.device)
        big[::2] = t
        return big[::2]
    return t

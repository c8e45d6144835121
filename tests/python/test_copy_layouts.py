"""Same-dtype copies between layouts (kernels/cpu/copy.cpp): the tiled
transpose with register-transposed blocks (x.t().contiguous(), NCHW <->
NHWC permutes) and the short-runs path (a [B, L, H, D] -> [B, H, L, D] head
split, and broadcast runs: repeat_interleave's expand), checked bit for
bit against NumPy for every element size, ragged tile edges, sliced and
stepped inputs, outer dims and strided destinations.
The block widths differ per ISA level, so the whole battery also runs in a
child process at every level this CPU and build have."""

import numpy as np
import pytest

import fastt
from isa_levels import levels as _levels, run_child

# Runs here and in the children: returns a list of failure descriptions.
_BATTERY = r'''
def battery():
    import numpy as np
    import fastt
    rng = np.random.default_rng(3)
    bad = []

    def bits(a):  # a NumPy array viewed as unsigned integers of its size
        return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32,
                       8: np.uint64}[a.dtype.itemsize])

    def check(name, got, want):
        got = got.numpy() if hasattr(got, "numpy") else got
        want = np.ascontiguousarray(want)
        if got.shape != want.shape or not np.array_equal(bits(got), bits(want)):
            bad.append(name)

    # Every element size; random bits, so float16 NaN payloads, -0 and
    # subnormals must come through unchanged.
    dtypes = [("bool", None), ("int8", None), ("uint8", None),
              ("int16", None), ("float16", np.uint16), ("int32", None),
              ("float32", np.uint32), ("int64", None),
              ("float64", np.uint64)]

    def make(shape, dt, raw):
        n = int(np.prod(shape))
        if dt == "bool":
            return (rng.integers(0, 2, n) == 1).reshape(shape)
        if raw is not None:  # arbitrary bit patterns of a float type
            return rng.integers(0, np.iinfo(raw).max, n, dtype=raw,
                                endpoint=True).view(dt).reshape(shape)
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt,
                            endpoint=True).reshape(shape)

    shapes2 = [(7, 9), (8, 8), (16, 16), (17, 33), (64, 64), (65, 130),
               (1024, 3), (3, 1024), (100, 257), (0, 50), (256, 256)]
    for dt, raw in dtypes:
        for shape in shapes2:
            a = make(shape, dt, raw)
            x = fastt.from_numpy(a)
            check(f"{dt} t {shape}", x.t().contiguous(), a.T)
        a = make((90, 120), dt, raw)
        x = fastt.from_numpy(a)
        check(f"{dt} sliced cols", x[:, 5:77].t().contiguous(), a[:, 5:77].T)
        check(f"{dt} sliced rows", x[3:70].t().contiguous(), a[3:70].T)
        check(f"{dt} stepped rows", x[::2].t().contiguous(), a[::2].T)
        a4 = make((2, 3, 40, 50), dt, raw)
        x4 = fastt.from_numpy(a4)
        for perm in [(0, 1, 3, 2), (0, 2, 3, 1), (0, 3, 1, 2), (3, 1, 2, 0),
                     (1, 0, 3, 2)]:
            check(f"{dt} permute {perm}", x4.permute(*perm).contiguous(),
                  a4.transpose(perm))
        for d in (1, 3, 16, 64, 65):  # head split: runs of D
            h = make((3, 20, 4, d), dt, raw)
            check(f"{dt} heads D={d}",
                  fastt.from_numpy(h).permute(0, 2, 1, 3).contiguous(),
                  h.transpose(0, 2, 1, 3))
        for r in (1, 2, 3, 8, 33):  # broadcast runs: repeat_interleave
            v = make((5, 70), dt, raw)
            xv = fastt.from_numpy(v)
            check(f"{dt} fill runs r={r}",
                  xv.unsqueeze(2).expand(5, 70, r).contiguous(),
                  np.broadcast_to(v[:, :, None], (5, 70, r)))
            check(f"{dt} fill runs stepped r={r}",
                  xv[:, ::3].unsqueeze(2).expand(5, 24, r).contiguous(),
                  np.broadcast_to(v[:, ::3, None], (5, 24, r)))
            check(f"{dt} repeat_interleave r={r}",
                  xv.repeat_interleave(r, 1), np.repeat(v, r, 1))
        # Into a transposed / strided destination (copy_ into a view).
        src = make((48, 40), dt, raw)
        dst = fastt.from_numpy(np.zeros((40, 48), dtype=src.dtype))
        dst.t().copy_(fastt.from_numpy(src))
        check(f"{dt} copy_ into .t()", dst, src.T)
        big = fastt.from_numpy(np.zeros((48, 80), dtype=src.dtype))
        big[:, ::2].copy_(fastt.from_numpy(src))
        want = np.zeros((48, 80), dtype=src.dtype)
        want[:, ::2] = src
        check(f"{dt} copy_ into stepped", big, want)
    # bfloat16 (NumPy has none): through its int16 bits.
    b = make((70, 90), "int16", None)
    xb = fastt.from_numpy(b).view(fastt.bfloat16)
    check("bfloat16 t", xb.t().contiguous().view(fastt.int16), b.T)
    # Threads: tiles split across the pool.
    fastt.set_num_threads(2)
    a = make((700, 900), "float32", np.uint32)
    check("float32 t 2 threads", fastt.from_numpy(a).t().contiguous(), a.T)
    return bad
'''




def test_layouts_bit_exact():
    ns = {}
    exec(_BATTERY, ns)
    assert ns["battery"]() == []


@pytest.mark.parametrize("isa", ["sse2", "avx2", "avx512"])
def test_layouts_bit_exact_at_each_level(isa):
    if isa not in _levels():
        pytest.skip(f"this CPU or build does not run {isa}")
    code = _BATTERY + (
        "\nimport json, fastt\n"
        "print(json.dumps([fastt._C._cpu_isa()['in_use'], battery()]))\n")
    level, bad = run_child(code, isa)
    assert level == isa
    assert bad == []


def test_transpose_keeps_autograd_and_values():
    x = fastt.randn(40, 70, requires_grad=True)
    y = x.t().contiguous()
    w = fastt.randn(70, 40)
    (y * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w.numpy().T)

"""fastt.compile over torch's operator database: every op name on the
OpInfo pass list, called through a compiled function on a sample, then
replayed on new values of the same shapes, must give exactly what eager
fastt gives on those values. An op whose entry point computes on the host
without telling the capture (a host read, a host write, a check that must
run again) would replay stale data here and fail.

Float inputs get new values for the replay (the sample times a random
factor); integer and bool inputs keep their values in a new order (they
are often indices, which must stay in range).
A sample whose op breaks the capture runs eagerly and still must match;
the test also requires that most names really replay.
"""
import math
import os

import numpy as np
import pytest

import fastt

H = pytest.importorskip("opinfo_harness")
torch = H.torch

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "opinfo_pass.txt")) as f:
    PASSING = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]

SAMPLES = 3  # per name and dtype
DTYPES = ("float32", "int64")


# The memory plan's freed memory is poisoned (conftest.capture_poison).
pytestmark = pytest.mark.usefixtures("capture_poison")


def _slots(x, leaves):
    """x with its fastt tensors replaced by slot numbers (as _Slot)."""
    if isinstance(x, fastt.Tensor):
        leaves.append(x)
        return _Slot(len(leaves) - 1)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_slots(v, leaves) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_slots(v, leaves) for v in x)
    if isinstance(x, dict):
        return {k: _slots(v, leaves) for k, v in x.items()}
    return x


class _Slot:
    def __init__(self, i):
        self.i = i


def _fill(x, ts):
    if isinstance(x, _Slot):
        return ts[x.i]
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_fill(v, ts) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_fill(v, ts) for v in x)
    if isinstance(x, dict):
        return {k: _fill(v, ts) for k, v in x.items()}
    return x


def _same(a, b):
    if isinstance(a, fastt.Tensor):
        if not isinstance(b, fastt.Tensor) or a.shape != b.shape or \
                a.dtype != b.dtype:
            return False
        x = a.detach().numpy() if a.dtype != fastt.bfloat16 else \
            a.detach().float().numpy()
        y = b.detach().numpy() if b.dtype != fastt.bfloat16 else \
            b.detach().float().numpy()
        return np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            _same(p, q) for p, q in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _new_values(ts, rng):
    """Copies of the inputs with the same strides (so the replay's guards
    hold), floats scaled by random factors."""
    out = []
    for t in ts:
        v = t
        if t.dtype.is_floating_point and t.numel() > 0:
            f = fastt.from_numpy(rng.uniform(0.5, 1.5, tuple(t.shape)))
            v = t * f.to(t.dtype)
        elif t.numel() > 1:  # the same values (indices stay valid), moved
            perm = fastt.from_numpy(rng.permutation(t.numel()))
            v = t.reshape(-1)[perm].reshape(t.shape)
        try:
            c = fastt.empty_strided(tuple(t.shape), t.stride(),
                                    dtype=t.dtype)
            c.copy_(v)
        except RuntimeError:  # overlapping strides (an expanded input)
            c = v.clone()
        out.append(c)
    return out


def _check_name(name, rng):
    """(samples run, samples replayed, failures)."""
    ran = replayed = 0
    failures = []
    for op in [o for o in H.op_db if o.name == name]:
        try:
            fn = H._fastt_function(op)
        except H.Missing:
            continue
        for dtype in DTYPES:
            td = getattr(torch, dtype)
            if td not in op.supported_dtypes("cpu"):
                continue
            with H._seeded(0):
                try:
                    samples = list(op.sample_inputs("cpu", td))[:SAMPLES]
                except Exception:
                    continue
            for s in samples:
                if H._has_complex([s.input, list(s.args), s.kwargs]):
                    continue
                if name.startswith("as_strided") and \
                        H._sees_part_of_storage(s.input):
                    # reads its input's storage outside the input: a
                    # capture's private copy holds only the input
                    # (README's compile section)
                    continue
                leaves = H._Leaves()
                try:
                    call = (H.convert(s.input, leaves),
                            H.convert(list(s.args), leaves),
                            H.convert(dict(s.kwargs), leaves))
                except (H.NotApplicable, H.ConvertError):
                    continue
                ts = []
                spec = _slots(call, ts)
                ts = [t.detach() for t in ts]

                def f(*xs, spec=spec, fn=fn):
                    inp, args, kwargs = _fill(spec, xs)
                    return fn(inp, *args, **kwargs)

                try:
                    with fastt.no_grad():
                        eager1 = f(*ts)
                except Exception:
                    continue  # fastt rejects it: nothing to replay
                ran += 1
                random = name in H.RANDOM_OPS or H._random_sample(name, s)
                c = fastt.compile(f)
                c._warm = True  # capture on the first call
                with fastt.no_grad():
                    first = c(*ts)
                    new = _new_values(ts, rng)
                    try:
                        eager2 = f(*new)
                    except Exception:
                        continue
                    second = c(*new)
                if c.stats["replays"]:
                    replayed += 1
                if random:
                    continue
                if not _same(first, eager1):
                    failures.append(f"{name} {dtype}: capture call differs")
                elif not _same(second, eager2):
                    failures.append(f"{name} {dtype}: replay differs "
                                    f"(stats {c.stats})")
    return ran, replayed, failures


def test_compiled_ops_replay_like_eager():
    rng = np.random.default_rng(0)
    ran = replayed = 0
    failures = []
    for name in PASSING:
        r, p, fl = _check_name(name, rng)
        ran += r
        replayed += p
        failures += fl
    assert failures == [], "\n".join(failures[:40])
    # Not vacuous: most samples were really captured and replayed.
    assert ran > 1000 and replayed > 0.6 * ran, (ran, replayed)

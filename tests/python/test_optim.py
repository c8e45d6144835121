# Tests of fastt.optim against torch.optim: every optimizer and option
# combination run side by side on identical parameters and gradients
# (parameters compared after each step, state dicts at the end), the fused
# _C kernels directly, state_dict round trips (also from torch), the
# Optimizer base API and errors, and every LR scheduler's values step by
# step against torch's.
import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest

import fastt
import fastt.optim as foptim
from fastt import _C
from fastt.optim import lr_scheduler as fsched

torch = pytest.importorskip("torch")
tsched = torch.optim.lr_scheduler

# A handful of float32 ulps over ~10 steps: torch's sqrt is not correctly
# rounded on MKL builds, ours is; SGD matches exactly.
TOL = {np.float32: dict(rtol=2e-6, atol=1e-7),
       np.float64: dict(rtol=1e-13, atol=1e-15)}
SHAPES = [(45, 65), (7,), (), (0, 3), (3, 1, 5)]


def to_np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t)


def assert_close(f, t, dtype, what=""):
    a, b = to_np(f), to_np(t)
    assert a.shape == b.shape, what
    assert a.dtype == b.dtype, what
    tol = TOL[dtype]
    # Sums of terms that cancel (momentum buffers) carry the error of the
    # largest value: allow a few ulps of the tensor's scale too.
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    np.testing.assert_allclose(a, b, rtol=tol["rtol"],
                               atol=tol["atol"] + 4 * tol["rtol"] * scale,
                               err_msg=what)


def make_params(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    tps = [torch.tensor(a, requires_grad=True) for a in arrays]
    fps = [fastt.tensor(a, requires_grad=True) for a in arrays]
    return arrays, tps, fps


def compare_state_dicts(fsd, tsd, dtype):
    assert set(fsd["state"]) == set(tsd["state"])
    for k, tst in tsd["state"].items():
        fst = fsd["state"][k]
        assert list(fst) == list(tst), k  # same keys, same order
        for name, tv in tst.items():
            fv = fst[name]
            if name == "step":
                assert isinstance(fv, fastt.Tensor)
                assert fv.dtype == fastt.float32 and fv.dim() == 0
                assert float(fv) == float(tv)
            else:
                assert_close(fv, tv, dtype, f"state[{k}][{name}]")
    assert len(fsd["param_groups"]) == len(tsd["param_groups"])
    for fg, tg in zip(fsd["param_groups"], tsd["param_groups"], strict=True):
        assert fg == tg


def run_pair(name, kwargs, dtype, steps=10, shapes=SHAPES, skip=None,
             seed=0):
    """Steps a torch and a fastt optimizer with the same gradients.
    skip(step, i) -> True leaves param i without a grad on that step."""
    arrays, tps, fps = make_params(shapes, dtype, seed)
    topt = getattr(torch.optim, name)(tps, foreach=False, **kwargs)
    fopt = getattr(foptim, name)(fps, foreach=False, **kwargs)
    rng = np.random.default_rng(seed + 1)
    for step in range(steps):
        for i, (a, tp, fp) in enumerate(zip(arrays, tps, fps, strict=True)):
            if skip is not None and skip(step, i):
                tp.grad = None
                fp.grad = None
                continue
            g = rng.standard_normal(a.shape).astype(dtype)
            tp.grad = torch.tensor(g)
            fp.grad = fastt.tensor(g)
        topt.step()
        fopt.step()
        for i, (tp, fp) in enumerate(zip(tps, fps, strict=True)):
            assert_close(fp, tp, dtype, f"{name} step {step} param {i}")
    compare_state_dicts(fopt.state_dict(), topt.state_dict(), dtype)
    return topt, fopt, tps, fps


def options(**choices):
    keys = list(choices)
    for values in itertools.product(*(choices[k] for k in keys)):
        yield dict(zip(keys, values, strict=True))


SGD_OPTS = [o for o in options(lr=[0.05], momentum=[0.0, 0.9],
                               dampening=[0.0, 0.3], weight_decay=[0.0, 0.1],
                               nesterov=[False, True],
                               maximize=[False, True])
            if not (o["nesterov"] and (o["momentum"] == 0
                                       or o["dampening"] != 0))]
ADAM_OPTS = list(options(lr=[0.01], weight_decay=[0.0, 0.1],
                         amsgrad=[False, True], maximize=[False, True]))
ADAM_OPTS.append(dict(betas=(0.3, 0.5), eps=1e-3))
ADAMW_OPTS = list(options(lr=[0.01], weight_decay=[0.0, 0.01, 0.1],
                          amsgrad=[False, True], maximize=[False, True]))
RMSPROP_OPTS = list(options(lr=[0.01], weight_decay=[0.0, 0.1],
                            momentum=[0.0, 0.5], centered=[False, True],
                            maximize=[False, True]))
RMSPROP_OPTS.append(dict(alpha=0.3, centered=True, eps=1e-4))
ADAGRAD_OPTS = list(options(lr=[0.1], lr_decay=[0.0, 0.05],
                            weight_decay=[0.0, 0.1],
                            initial_accumulator_value=[0.0, 0.5],
                            maximize=[False, True]))

CASES = ([("SGD", o) for o in SGD_OPTS] + [("Adam", o) for o in ADAM_OPTS]
         + [("AdamW", o) for o in ADAMW_OPTS]
         + [("RMSprop", o) for o in RMSPROP_OPTS]
         + [("Adagrad", o) for o in ADAGRAD_OPTS])


def case_id(case):
    name, opts = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in opts.items())


# ---------------------------------------------------------------------------
# Optimizers against torch
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_torch(case, dtype):
    name, opts = case
    run_pair(name, opts, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,opts", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, maximize=True)),
    ("Adam", dict(eps=1e-3, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(eps=1e-3)),
    ("RMSprop", dict(eps=1e-3, momentum=0.5, centered=True,
                     weight_decay=0.1)),
    ("Adagrad", dict(lr_decay=0.01, weight_decay=0.1))])
def test_matches_torch_16bit(name, opts, dtype):
    # Computed in float, rounded to the dtype wherever torch stores a
    # tensor. torch's vector loops fuse multiply-adds and its scalar tails
    # do not, so a few tail elements may differ by one ulp.
    tdt, fdt = getattr(torch, dtype), getattr(fastt, dtype)
    ulp = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[dtype]
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in [(45, 65), (7,), ()]]
    tps = [torch.tensor(a).to(tdt).requires_grad_() for a in arrays]
    fps = [fastt.tensor(a).to(fdt).requires_grad_() for a in arrays]
    topt = getattr(torch.optim, name)(tps, foreach=False, **opts)
    fopt = getattr(foptim, name)(fps, foreach=False, **opts)
    for _ in range(8):
        for a, tp, fp in zip(arrays, tps, fps, strict=True):
            g = rng.standard_normal(a.shape).astype(np.float32)
            tp.grad = torch.tensor(g).to(tdt)
            fp.grad = fastt.tensor(g).to(fdt)
        topt.step()
        fopt.step()
    for tp, fp in zip(tps, fps, strict=True):
        assert fp.dtype == fdt
        want = tp.detach().float().numpy()
        got = np.asarray(fp.float())
        np.testing.assert_allclose(got, want, rtol=2 * ulp, atol=2 * ulp)
        if got.size > 1000:  # away from the tails: bit for bit torch's
            assert np.mean(got != want) < 0.02


@pytest.mark.parametrize("name,opts", [
    ("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01))])
def test_params_without_grads_are_skipped(name, opts):
    # Param 1 never gets a grad, param 2 only on odd steps, so states and
    # step counts differ per parameter (and the fused call must skip).
    def skip(step, i):
        return i == 1 or (i == 2 and step % 2 == 0)
    run_pair(name, opts, np.float32, steps=8, skip=skip)


def test_sgd_exact_bits():
    # No square root in SGD: the update is bit for bit torch's.
    arrays, tps, fps = make_params([(33, 17), (5,)], np.float32)
    kw = dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)
    topt = torch.optim.SGD(tps, foreach=False, **kw)
    fopt = foptim.SGD(fps, **kw)
    rng = np.random.default_rng(3)
    for _ in range(5):
        for a, tp, fp in zip(arrays, tps, fps, strict=True):
            g = rng.standard_normal(a.shape).astype(np.float32)
            tp.grad, fp.grad = torch.tensor(g), fastt.tensor(g)
        topt.step()
        fopt.step()
    for tp, fp in zip(tps, fps, strict=True):
        np.testing.assert_array_equal(to_np(fp), to_np(tp))


def test_multiple_groups_and_mixed_dtypes():
    rng = np.random.default_rng(5)
    a32 = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (6,)]]
    a64 = [rng.standard_normal(s) for s in [(5,), (2, 2)]]
    tps = [torch.tensor(a, requires_grad=True) for a in a32 + a64]
    fps = [fastt.tensor(a, requires_grad=True) for a in a32 + a64]
    # Group 0 mixes float32 and float64 (one call, one kernel per dtype).
    tgroups = [{"params": [tps[0], tps[2]]},
               {"params": [tps[1], tps[3]], "lr": 0.05, "weight_decay": 0.1}]
    fgroups = [{"params": [fps[0], fps[2]]},
               {"params": [fps[1], fps[3]], "lr": 0.05, "weight_decay": 0.1}]
    topt = torch.optim.AdamW(tgroups, lr=0.01)
    fopt = foptim.AdamW(fgroups, lr=0.01)
    for _ in range(6):
        for tp, fp in zip(tps, fps, strict=True):
            g = rng.standard_normal(tuple(tp.shape)).astype(
                to_np(tp).dtype)
            tp.grad, fp.grad = torch.tensor(g), fastt.tensor(g)
        topt.step()
        fopt.step()
    for tp, fp in zip(tps, fps, strict=True):
        assert_close(fp, tp, to_np(tp).dtype.type)
    tsd, fsd = topt.state_dict(), fopt.state_dict()
    assert fsd["param_groups"] == tsd["param_groups"]


def test_one_fused_call_per_group(monkeypatch):
    calls = []
    real = _C._adam_step

    def counting(*args, **kwargs):
        calls.append(len(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(_C, "_adam_step", counting)
    ps = [fastt.zeros(3, requires_grad=True) for _ in range(50)]
    opt = foptim.Adam([{"params": ps[:20]}, {"params": ps[20:]}])
    for p in ps:
        p.grad = fastt.ones(3)
    for _ in range(3):
        opt.step()
    assert calls == [20, 30] * 3


def test_closure_zero_grad_and_state_cache():
    p = fastt.tensor([1.0, 2.0], requires_grad=True)
    opt = foptim.SGD([p], lr=0.1, momentum=0.9)

    def closure():
        p.grad = fastt.tensor([1.0, 1.0])
        return 42.0

    assert opt.step(closure) == 42.0
    np.testing.assert_allclose(to_np(p), [0.9, 1.9], rtol=1e-6)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and to_np(p.grad).tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no grad: nothing moves
    np.testing.assert_allclose(to_np(p), [0.9, 1.9], rtol=1e-6)
    # Replacing a state tensor by hand is seen by the next step.
    opt.state[p]["momentum_buffer"] = fastt.zeros(2)
    p.grad = fastt.tensor([1.0, 1.0])
    opt.step()
    np.testing.assert_allclose(to_np(p), [0.8, 1.8], rtol=1e-6)


def test_add_param_group_after_steps():
    arrays, tps, fps = make_params([(3,), (4,)], np.float32)
    topt = torch.optim.Adam([tps[0]], lr=0.01)
    fopt = foptim.Adam([fps[0]], lr=0.01)
    rng = np.random.default_rng(9)
    for step in range(6):
        if step == 3:
            topt.add_param_group({"params": [tps[1]], "lr": 0.1})
            fopt.add_param_group({"params": [fps[1]], "lr": 0.1})
        for a, tp, fp in zip(arrays, tps, fps, strict=True):
            g = rng.standard_normal(a.shape).astype(np.float32)
            tp.grad, fp.grad = torch.tensor(g), fastt.tensor(g)
        topt.step()
        fopt.step()
    for tp, fp in zip(tps, fps, strict=True):
        assert_close(fp, tp, np.float32)
    compare_state_dicts(fopt.state_dict(), topt.state_dict(), np.float32)


def test_group_params_edited_in_place():
    # The step caches notice params appended to / replaced in a group.
    arrays, tps, fps = make_params([(3,), (4,), (2,)], np.float32)
    topt = torch.optim.Adam(tps[:1], lr=0.01)
    fopt = foptim.Adam(fps[:1], lr=0.01)
    rng = np.random.default_rng(12)
    for step in range(6):
        if step == 2:
            topt.param_groups[0]["params"].append(tps[1])
            fopt.param_groups[0]["params"].append(fps[1])
        if step == 4:
            topt.param_groups[0]["params"][0] = tps[2]
            fopt.param_groups[0]["params"][0] = fps[2]
        for a, tp, fp in zip(arrays, tps, fps, strict=True):
            g = rng.standard_normal(a.shape).astype(np.float32)
            tp.grad, fp.grad = torch.tensor(g), fastt.tensor(g)
        topt.step()
        fopt.step()
        for tp, fp in zip(tps, fps, strict=True):
            assert_close(fp, tp, np.float32)


@pytest.mark.parametrize("name,opts", [
    ("SGD", dict(lr=0.1, momentum=0.9)), ("AdamW", dict(amsgrad=True)),
    ("RMSprop", dict(momentum=0.3, centered=True)), ("Adagrad", {})])
def test_state_dict_round_trip(name, opts):
    arrays, _, fps = make_params([(5, 3), (2,)], np.float64)
    fps2 = [fastt.tensor(a, requires_grad=True) for a in arrays]
    opt = getattr(foptim, name)(fps, **opts)
    rng = np.random.default_rng(2)
    grads = [[rng.standard_normal(a.shape) for a in arrays]
             for _ in range(6)]
    for gs in grads[:3]:
        for p, g in zip(fps, gs, strict=True):
            p.grad = fastt.tensor(g)
        opt.step()
    with fastt.no_grad():
        for p2, p in zip(fps2, fps, strict=True):
            p2.copy_(p)
    sd = pickle.loads(pickle.dumps(opt.state_dict()))
    opt2 = getattr(foptim, name)(fps2, **opts)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["params"][0] is fps2[0]
    for gs in grads[3:]:
        for p, p2, g in zip(fps, fps2, gs, strict=True):
            p.grad = fastt.tensor(g)
            p2.grad = fastt.tensor(g)
        opt.step()
        opt2.step()
    for p, p2 in zip(fps, fps2, strict=True):
        np.testing.assert_array_equal(to_np(p), to_np(p2))
    # The loaded state is opt2's own (steps counted independently).
    s1 = opt.state_dict()["state"][0]["step"] if name != "SGD" else None
    if s1 is not None:
        assert float(opt2.state_dict()["state"][0]["step"]) == float(s1)


def test_load_torch_state_dict():
    arrays, tps, fps = make_params([(4, 4), (3,)], np.float32)
    topt = torch.optim.Adam(tps, lr=0.01, amsgrad=True)
    rng = np.random.default_rng(4)
    for _ in range(3):
        for a, tp in zip(arrays, tps, strict=True):
            tp.grad = torch.tensor(rng.standard_normal(a.shape).astype(
                np.float32))
        topt.step()
    with fastt.no_grad():
        for fp, tp in zip(fps, tps, strict=True):
            fp.copy_(fastt.tensor(to_np(tp)))
    fopt = foptim.Adam(fps, lr=0.01, amsgrad=True)
    fopt.load_state_dict(topt.state_dict())
    for _ in range(3):
        for a, tp, fp in zip(arrays, tps, fps, strict=True):
            g = rng.standard_normal(a.shape).astype(np.float32)
            tp.grad, fp.grad = torch.tensor(g), fastt.tensor(g)
        topt.step()
        fopt.step()
    for tp, fp in zip(tps, fps, strict=True):
        assert_close(fp, tp, np.float32)
    compare_state_dicts(fopt.state_dict(), topt.state_dict(), np.float32)


def test_adagrad_state_exists_before_step():
    p = fastt.zeros(3)
    opt = foptim.Adagrad([p], initial_accumulator_value=0.25)
    st = opt.state_dict()["state"][0]
    assert float(st["step"]) == 0.0
    assert to_np(st["sum"]).tolist() == [0.25] * 3
    tp = torch.zeros(3)
    tsd = torch.optim.Adagrad([tp], initial_accumulator_value=0.25)
    assert list(tsd.state_dict()["state"][0]) == list(st)


def test_param_groups_defaults_match_torch():
    for name in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]:
        f = getattr(foptim, name)([fastt.zeros(2)])
        t = getattr(torch.optim, name)([torch.zeros(2)])
        fg = {k: v for k, v in f.param_groups[0].items() if k != "params"}
        tg = {k: v for k, v in t.param_groups[0].items() if k != "params"}
        assert fg == tg, name
        assert f.defaults == t.defaults, name
        assert repr(f).splitlines()[0] == repr(t).splitlines()[0]


# ---------------------------------------------------------------------------
# Errors (like torch)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=-0.1)), ("SGD", dict(momentum=-0.5)),
    ("SGD", dict(weight_decay=-1)), ("SGD", dict(nesterov=True)),
    ("SGD", dict(nesterov=True, momentum=0.9, dampening=0.1)),
    ("Adam", dict(lr=-1.0)), ("Adam", dict(eps=-1.0)),
    ("Adam", dict(betas=(1.0, 0.999))), ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(betas=(0, 0.9))), ("Adam", dict(weight_decay=-0.1)),
    ("AdamW", dict(betas=(0.9, 1.5))), ("AdamW", dict(lr=-1e-3)),
    ("RMSprop", dict(lr=-1.0)), ("RMSprop", dict(alpha=-0.1)),
    ("RMSprop", dict(momentum=-0.1)), ("RMSprop", dict(eps=-1.0)),
    ("Adagrad", dict(lr=-1.0)), ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adagrad", dict(eps=-1.0)),
])
def test_bad_hyperparameters(name, kwargs):
    with pytest.raises(ValueError) as fe:
        getattr(foptim, name)([fastt.zeros(2)], **kwargs)
    with pytest.raises(ValueError) as te:
        getattr(torch.optim, name)([torch.zeros(2)], **kwargs)
    assert str(fe.value) == str(te.value)


def test_bad_params():
    with pytest.raises(TypeError, match="iterable of Tensors"):
        foptim.SGD(fastt.zeros(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        foptim.Adam([])
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        foptim.Adam([1.0])
    p = fastt.zeros(2)
    with pytest.raises(ValueError, match="more than one parameter group"):
        foptim.Adam([{"params": [p]}, {"params": [p]}])
    with pytest.raises(TypeError, match="ordered collections"):
        foptim.Adam([{"params": {p}}])
    opt = foptim.SGD([p])
    with pytest.raises(TypeError, match="must be a dict"):
        opt.add_param_group([fastt.zeros(2)])
    with pytest.raises(ValueError, match="different number of parameter"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [
            dict(opt.state_dict()["param_groups"][0], params=[0, 1])]})


# ---------------------------------------------------------------------------
# The fused kernels through _C, without Tensor.grad
# ---------------------------------------------------------------------------
def torch_functional_adam(ps, gs, ms, vs, steps, **kw):
    from torch.optim.adam import adam
    adam(ps, gs, ms, vs, [], steps, foreach=False, amsgrad=False,
         capturable=False, differentiable=False, fused=None,
         has_complex=False, grad_scale=None, found_inf=None, **kw)


def test_c_adam_step_matches_torch_functional():
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in [(9, 11), (), (4,)]]
    fps = [fastt.tensor(a) for a in arrays]
    tps = [torch.tensor(a) for a in arrays]
    fm = [fastt.zeros_like(p) for p in fps]
    fv = [fastt.zeros_like(p) for p in fps]
    tm = [torch.zeros_like(p) for p in tps]
    tv = [torch.zeros_like(p) for p in tps]
    fs = [fastt.tensor(0.0) for _ in fps]
    ts = [torch.tensor(0.0) for _ in tps]
    for _ in range(5):
        gs = [rng.standard_normal(a.shape).astype(np.float32)
              for a in arrays]
        _C._adam_step(fps, [fastt.tensor(g) for g in gs], fm, fv, None, fs,
                      lr=0.01, beta1=0.9, beta2=0.99, eps=1e-8,
                      weight_decay=0.1, amsgrad=False, maximize=False,
                      decoupled_weight_decay=True)
        torch_functional_adam(tps, [torch.tensor(g) for g in gs], tm, tv, ts,
                              lr=0.01, beta1=0.9, beta2=0.99, eps=1e-8,
                              weight_decay=0.1, maximize=False,
                              decoupled_weight_decay=True)
    for group in [(fps, tps), (fm, tm), (fv, tv)]:
        for f, t in zip(*group, strict=True):
            assert_close(f, t, np.float32)
    assert [float(s) for s in fs] == [5.0] * 3


def test_c_steps_skip_none_grads_and_bump_versions():
    p, q = fastt.ones(3), fastt.ones(2)
    m = [fastt.zeros(3), None]
    v = [fastt.zeros(3), None]
    s = [fastt.tensor(0.0), None]
    v0 = p._version() if callable(p._version) else p._version
    _C._adam_step([p, q], [fastt.full((3,), 0.5), None], m, v, None, s,
                  lr=0.1)
    v1 = p._version() if callable(p._version) else p._version
    assert v1 > v0
    np.testing.assert_allclose(to_np(p), [0.9] * 3, rtol=1e-6)
    assert to_np(q).tolist() == [1.0, 1.0]
    assert float(s[0]) == 1.0
    # Positional form, all four kernels.
    _C._sgd_step([p], [fastt.ones(3)], [fastt.zeros(3)], 0.1, 0.9, 0.0, 0.0,
                 False, False, True)
    _C._rmsprop_step([p], [fastt.ones(3)], [fastt.zeros(3)], None, None,
                     [fastt.tensor(0.0)], 0.01)
    _C._adagrad_step([p], [fastt.ones(3)], [fastt.zeros(3)],
                     [fastt.tensor(0.0)], 0.1)


def test_c_step_errors():
    p = fastt.zeros(2, 3)
    ok = dict(params=[p], grads=[fastt.zeros(2, 3)],
              exp_avgs=[fastt.zeros(2, 3)], exp_avg_sqs=[fastt.zeros(2, 3)],
              max_exp_avg_sqs=None, state_steps=[fastt.tensor(0.0)])
    _C._adam_step(**ok)
    with pytest.raises(RuntimeError, match=r"grads\[0\] has shape \[3, 2\]"):
        _C._adam_step(**dict(ok, grads=[fastt.zeros(3, 2)]))
    with pytest.raises(RuntimeError, match="dtype"):
        _C._adam_step(**dict(ok, grads=[fastt.zeros(2, 3,
                                                     dtype=fastt.float64)]))
    with pytest.raises(RuntimeError, match="expected 1 exp_avgs"):
        _C._adam_step(**dict(ok, exp_avgs=[]))
    with pytest.raises(RuntimeError, match="floating point"):
        ip = fastt.zeros(2, 3, dtype=fastt.int64)
        _C._adam_step(**dict(ok, params=[ip], grads=[ip], exp_avgs=[ip],
                             exp_avg_sqs=[ip]))
    with pytest.raises(RuntimeError, match="one-element floating"):
        _C._adam_step(**dict(ok, state_steps=[fastt.zeros(2)]))
    with pytest.raises(TypeError, match="list of Tensors"):
        _C._adam_step(**dict(ok, exp_avgs=fastt.zeros(2, 3)))
    with pytest.raises(TypeError, match="item 0 is float"):
        _C._adam_step(**dict(ok, exp_avgs=[1.0]))
    with pytest.raises(TypeError, match="unexpected keyword"):
        _C._adam_step(**ok, betas=(0.9, 0.9))
    with pytest.raises(TypeError, match="missing required argument"):
        _C._sgd_step([p], [p], None)
    with pytest.raises(RuntimeError, match="must be empty"):
        _C._sgd_step([p], [p], [p], 0.1)
    # A failed call leaves the step counters alone.
    st = fastt.tensor(3.0)
    with pytest.raises(RuntimeError, match=r"grads\[0\] has shape \[3, 2\]"):
        _C._adam_step(**dict(ok, grads=[fastt.zeros(3, 2)],
                             state_steps=[st]))
    assert float(st) == 3.0


def test_c_step_strided_params():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 4)).astype(np.float32)
    g = rng.standard_normal((6, 4)).astype(np.float32)
    dense = fastt.tensor(a)
    strided = fastt.tensor(np.ascontiguousarray(a.T)).t()
    assert not strided.is_contiguous()
    for p in (dense, strided):
        _C._adagrad_step([p], [fastt.tensor(g)], [fastt.zeros(6, 4)],
                         [fastt.tensor(0.0)], 0.1)
    np.testing.assert_array_equal(to_np(dense), to_np(strided))


# ---------------------------------------------------------------------------
# LR schedulers against torch
# ---------------------------------------------------------------------------
def sched_pair(opt_name, opt_kwargs, sched_name, sched_kwargs, groups=2):
    tparams = [[torch.zeros(2)] for _ in range(groups)]
    fparams = [[fastt.zeros(2)] for _ in range(groups)]
    tgroups = [{"params": p, "lr": 0.1 * (i + 1)}
               for i, p in enumerate(tparams)]
    fgroups = [{"params": p, "lr": 0.1 * (i + 1)}
               for i, p in enumerate(fparams)]
    topt = getattr(torch.optim, opt_name)(tgroups, **opt_kwargs)
    fopt = getattr(foptim, opt_name)(fgroups, **opt_kwargs)
    ts = getattr(tsched, sched_name)(topt, **sched_kwargs)
    fs = getattr(fsched, sched_name)(fopt, **sched_kwargs)
    return topt, fopt, ts, fs


def check_groups(topt, fopt):
    for tg, fg in zip(topt.param_groups, fopt.param_groups, strict=True):
        for key in ("lr", "momentum", "betas", "initial_lr", "max_lr",
                    "min_lr", "max_momentum", "base_momentum"):
            if key in tg:
                assert fg[key] == tg[key], key  # exact: same float math


SCHEDS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("CosineAnnealingLR", dict(T_max=5)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e + 0.01 * e)),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9)),
    ("LinearLR", dict(start_factor=0.25, end_factor=0.9, total_iters=6)),
    ("LinearLR", dict()),
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=30)),
    ("OneCycleLR", dict(max_lr=[1.0, 2.0], total_steps=30,
                        anneal_strategy="linear", three_phase=True)),
    ("OneCycleLR", dict(max_lr=0.5, epochs=3, steps_per_epoch=9,
                        pct_start=0.4, div_factor=10.0,
                        final_div_factor=100.0, base_momentum=0.8,
                        max_momentum=0.9)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=20, cycle_momentum=False)),
]


@pytest.mark.parametrize("opt", [("SGD", dict(momentum=0.9)),
                                 ("Adam", {})], ids=["SGD", "Adam"])
@pytest.mark.parametrize("sched", SCHEDS,
                         ids=[f"{n}{i}" for i, (n, _) in enumerate(SCHEDS)])
def test_scheduler_matches_torch(opt, sched):
    sched_name, kwargs = sched
    steps = 25
    if sched_name == "OneCycleLR":  # it may not step past total_steps
        steps = kwargs.get("total_steps") or (kwargs["epochs"]
                                              * kwargs["steps_per_epoch"])
        steps -= 1
    topt, fopt, ts, fs = sched_pair(opt[0], opt[1], sched_name, kwargs)
    check_groups(topt, fopt)
    assert fs.get_last_lr() == ts.get_last_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            topt.step()
            fopt.step()
            ts.step()
            fs.step()
            assert fs.get_last_lr() == ts.get_last_lr()
            assert fs.last_epoch == ts.last_epoch
            check_groups(topt, fopt)


def test_chained_schedulers_and_epoch_argument():
    topt, fopt, ts, fs = sched_pair("SGD", {}, "StepLR", dict(step_size=2))
    ts2 = tsched.ExponentialLR(topt, gamma=0.9)
    fs2 = fsched.ExponentialLR(fopt, gamma=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(8):
            topt.step()
            fopt.step()
            for s in (ts, ts2, fs, fs2):
                s.step()
            assert fs2.get_last_lr() == ts2.get_last_lr()
        # The deprecated epoch argument takes the closed form.
        for e in (3, 10, 4):
            ts.step(e)
            fs.step(e)
            assert fs.get_last_lr() == ts.get_last_lr()


def test_scheduler_state_dict_round_trip():
    _, fopt, _, fs = sched_pair("SGD", {}, "CosineAnnealingLR",
                                dict(T_max=10))
    for _ in range(4):
        fopt.step()
        fs.step()
    sd = fs.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    _, fopt2, _, fs2 = sched_pair("SGD", {}, "CosineAnnealingLR",
                                  dict(T_max=10))
    fs2.load_state_dict(copy.deepcopy(sd))
    for g, g2 in zip(fopt.param_groups, fopt2.param_groups, strict=True):
        g2["lr"] = g["lr"]
    for _ in range(3):
        fopt.step()
        fopt2.step()
        fs.step()
        fs2.step()
        assert fs.get_last_lr() == fs2.get_last_lr()
    # Resuming needs initial_lr in the groups.
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified "
                       r"in param_groups\[0\] when resuming scheduler with "
                       "last_epoch >= 0"):
        fsched.StepLR(foptim.SGD([fastt.zeros(1)]), 2, last_epoch=3)


def test_scheduler_warnings_like_torch():
    p = fastt.zeros(1)
    opt = foptim.SGD([p], lr=0.1)
    s = fsched.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()
    assert hasattr(opt.step, "_wrapped_by_lr_sched")


def test_scheduler_errors():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        fsched.StepLR(object(), 2)
    opt = foptim.SGD([fastt.zeros(1)], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="total_steps OR"):
        fsched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="positive integer total_steps"):
        fsched.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="pct_start"):
        fsched.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy"):
        fsched.OneCycleLR(opt, max_lr=1.0, total_steps=10,
                          anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        fsched.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=10)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        fsched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas"):
        fsched.LambdaLR(opt, [lambda e: 1, lambda e: 1])
    s = fsched.OneCycleLR(foptim.Adam([fastt.zeros(1)]), max_lr=1.0,
                          total_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.step()
        s.step()
        with pytest.raises(ValueError, match="Tried to step 3 times"):
            s.step()
    no_momentum = foptim.Adagrad([fastt.zeros(1)])
    with pytest.raises(ValueError, match="momentum or beta1"):
        fsched.OneCycleLR(no_momentum, max_lr=1.0, total_steps=4)


def test_step_hooks():
    p = fastt.tensor([1.0], requires_grad=True)
    opt = foptim.SGD([p], lr=0.5)
    seen = []
    pre = opt.register_step_pre_hook(
        lambda o, a, k: seen.append(("pre", float(p))))
    post = opt.register_step_post_hook(
        lambda o, a, k: seen.append(("post", float(p))))
    p.grad = fastt.tensor([1.0])
    opt.step()
    assert seen == [("pre", 1.0), ("post", 0.5)]
    pre.remove()
    post.remove()
    opt.step()
    assert len(seen) == 2 and float(p) == 0.0

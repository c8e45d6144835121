"""Fused optimizer steps on the device (kernels/cuda/optim.cu) against the
same steps on CPU: every optimizer x options x float dtype over 100 small
parameters of odd sizes plus one that spans several chunks, groups larger
than one launch's chunk table, mixed dtypes and strided tensors, empty and
0-d parameters, mixed-device errors and state_dict round trips."""
import functools

import numpy as np
import pytest

import fastt
from fastt import _C
from fastt import optim

from cuda_util import (DEVICE, FLOAT_DTYPES, assert_close, noncontig, rand,
                       requires_device, to_dev)

pytestmark = requires_device

SIZES = [1, 3, 17, 1000, 65537]
LARGE = 2 ** 20 + 3  # 17 chunks of 65536

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.1, weight_decay=0.01,
                 maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1,
                  amsgrad=True)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9), eps=1e-6, maximize=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0.05, amsgrad=True,
                   maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.01,
                     maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1,
                     initial_accumulator_value=0.5, eps=1e-6,
                     maximize=True)),
    ("Adadelta", dict(lr=0.5)),
    ("Adadelta", dict(lr=0.5, rho=0.7, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1,
                    maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                   maximize=True)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.5))),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.6), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                   maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, t0=1, weight_decay=0.1,
                  maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.7), step_sizes=(1e-3, 0.02),
                   maximize=True)),
]
CONFIG_IDS = [f"{n}{i}" for i, (n, _) in enumerate(CONFIGS)]

STATE_KEYS = ("momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq",
              "square_avg", "grad_avg", "sum", "acc_delta", "exp_inf",
              "ax", "prev", "step_size")
SCALAR_KEYS = ("mu_product", "eta", "mu")  # 0-d CPU state besides step


def tolerance(dtype):
    """Same formula in the same order: float32 agrees to ~1e-6 relative
    (FMA placement and rounding may differ by an ulp per step)."""
    return {fastt.float32: (2e-5, 1e-6), fastt.float64: (1e-12, 1e-14),
            fastt.float16: (1e-2, 1e-3), fastt.bfloat16: (2e-2, 1e-2)}[dtype]


@functools.lru_cache(maxsize=None)
def _cached(kind, shape, dtype, seed):
    low = -1.0 if kind == "grad" else -2.0
    return rand(*shape, dtype=dtype, seed=seed, low=low, high=-low)


def make_params(sizes, dtype, seed=0):
    """Fresh tensors (the values of a (size, dtype, seed) are made once)."""
    return [_cached("param", (n,), dtype, seed + i).clone()
            for i, n in enumerate(sizes)]


def make_grads(params, step, seed=1000):
    """Gradients for one step (shared read-only between the tests)."""
    return [_cached("grad", tuple(p.shape), p.dtype, seed + 7919 * step + i)
            for i, p in enumerate(params)]


def run_optimizer(name, kwargs, params, grads_per_step):
    """Makes one optimizer over `params` (leaf copies) and steps it with
    the given grads; returns (params, optimizer)."""
    ps = [p.clone() for p in params]
    opt = getattr(optim, name)(ps, **kwargs)
    for grads in grads_per_step:
        for p, g in zip(ps, grads, strict=True):
            p.grad = g
        opt.step()
    return ps, opt


def compare_runs(name, kwargs, params, grads_per_step, dtype):
    cpu_p, cpu_opt = run_optimizer(name, kwargs, params, grads_per_step)
    dev_p, dev_opt = run_optimizer(name, kwargs, to_dev(params),
                                   to_dev(grads_per_step))
    rtol, atol = tolerance(dtype)
    for i, (d, c) in enumerate(zip(dev_p, cpu_p, strict=True)):
        assert_close(d, c, rtol, atol, f"{name} param {i}")
    for i, (d, c) in enumerate(zip(dev_p, cpu_p, strict=True)):
        ds, cs = dev_opt.state[d], cpu_opt.state[c]
        assert set(ds) == set(cs)
        for key in STATE_KEYS:
            if key in cs:
                assert_close(ds[key], cs[key], rtol, atol,
                             f"{name} state {key} of param {i}")
        if "step" in cs:
            assert ds["step"].device.type == "cpu"  # like torch's default
            assert float(ds["step"]) == float(cs["step"])
        for key in SCALAR_KEYS:
            if key in cs:
                assert ds[key].device.type == "cpu"
                assert float(ds[key]) == float(cs[key])
    return dev_p, dev_opt


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_optimizer_matches_cpu(config, dtype):
    name, kwargs = config
    sizes = [SIZES[i % len(SIZES)] for i in range(100)] + [LARGE]
    params = make_params(sizes, dtype)
    grads = [make_grads(params, s) for s in range(3)]
    compare_runs(name, kwargs, params, grads, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_radam_rectified_matches_cpu(dtype):
    """RAdam's rectified update (rho_t > 5 from the 7th step with
    betas[1] = 0.8), past the 3 steps of the tests above."""
    params = make_params([1, 17, 1000], dtype, seed=11)
    grads = [make_grads(params, s, seed=21) for s in range(8)]
    compare_runs("RAdam", dict(lr=0.01, betas=(0.9, 0.8), weight_decay=0.1),
                 params, grads, dtype)


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_more_tensors_than_one_table(config):
    """300 small params: more than one launch's chunk table holds."""
    name, kwargs = config
    params = make_params([(i * 37) % 300 + 1 for i in range(300)],
                         fastt.float32, seed=5)
    grads = [make_grads(params, s, seed=77) for s in range(2)]
    compare_runs(name, kwargs, params, grads, fastt.float32)


@pytest.mark.parametrize("name,kwargs", [
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
], ids=["Adam", "Adagrad", "SGD"])
def test_tensor_larger_than_one_launch(name, kwargs):
    """A tensor of more chunks than one launch's blocks, between small ones,
    so a launch ends mid-tensor and the rest continues in the next table."""
    n = 320 * 65536 + 5
    params = make_params([3, n, 17], fastt.float32, seed=3)
    grads = [make_grads(params, s, seed=9) for s in range(2)]
    compare_runs(name, kwargs, params, grads, fastt.float32)


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_empty_scalar_and_missing_grads(config):
    """0-size and 0-d params, and params whose grad is None (skipped)."""
    name, kwargs = config
    params = [rand(0), rand(), rand(5, 7), rand(0, 3), rand(65536)]
    grads_per_step = []
    for s in range(3):
        grads = make_grads(params, s)
        grads[2 if s == 1 else 4] = None  # a different one skips each step
        grads_per_step.append(grads)
    compare_runs(name, kwargs, params, grads_per_step, fastt.float32)


def test_mixed_dtypes_and_groups():
    """One group mixing dtypes (one kernel call per dtype), two groups with
    different options."""
    def build(params):
        return optim.AdamW([
            {"params": params[:4]},
            {"params": params[4:], "lr": 0.03, "weight_decay": 0.0,
             "amsgrad": True}], lr=0.01)

    params = [rand(17, dtype=dt, seed=i)
              for i, dt in enumerate(FLOAT_DTYPES * 2)]
    grads = [make_grads(params, s) for s in range(3)]
    dev_params = to_dev(params)
    cpu_opt, dev_opt = build(params), build(dev_params)
    for gc, gd in zip(grads, to_dev(grads), strict=True):
        for p, g in zip(params, gc, strict=True):
            p.grad = g
        for p, g in zip(dev_params, gd, strict=True):
            p.grad = g
        cpu_opt.step()
        dev_opt.step()
    for d, c in zip(dev_params, params, strict=True):
        assert_close(d, c, *tolerance(c.dtype), what=str(c.dtype))


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float16], ids=str)
def test_fused_calls_on_strided_tensors(dtype):
    """Non-contiguous params and state (computed densely, written back)."""
    def run(dev):
        conv = to_dev if dev else (lambda x: x)
        ps = [noncontig(conv(rand(45, 65, dtype=dtype, seed=1))),
              conv(rand(1000, dtype=dtype, seed=2))]
        m = [noncontig(conv(fastt.zeros(45, 65, dtype=dtype))),
             conv(fastt.zeros(1000, dtype=dtype))]
        v = [conv(fastt.zeros(45, 65, dtype=dtype)),
             conv(fastt.zeros(1000, dtype=dtype))]
        steps = [fastt.tensor(0.0), fastt.tensor(0.0)]
        for s in range(3):
            gs = [noncontig(conv(g)) if g.dim() == 2 else conv(g)
                  for g in make_grads([p.cpu() for p in ps], s)]
            _C._adam_step(ps, gs, m, v, None, steps, lr=0.01, beta1=0.9,
                          beta2=0.99, eps=1e-8, weight_decay=0.1,
                          amsgrad=False, maximize=False,
                          decoupled_weight_decay=True)
        return ps + m + v

    for d, c in zip(run(True), run(False), strict=True):
        assert_close(d, c, *tolerance(dtype))


def test_c_kernels_directly():
    """The four _C entry points on device tensors, positional form."""
    def run(conv):
        p = conv(rand(70000, seed=4))
        g = conv(rand(70000, seed=5))
        bufs = [conv(fastt.zeros(70000)) for _ in range(3)]
        _C._sgd_step([p], [g], [bufs[0]], 0.1, 0.9, 0.0, 0.01, True, False,
                     True)
        _C._sgd_step([p], [g], [bufs[0]], 0.1, 0.9, 0.0, 0.01, True, False,
                     False)
        _C._rmsprop_step([p], [g], [bufs[1]], [bufs[2]], None,
                         [fastt.tensor(0.0)], 0.01, 0.99, 1e-8, 0.0, 0.0,
                         True, False)
        _C._adagrad_step([p], [g], [bufs[2]], [fastt.tensor(4.0)], 0.1,
                         0.05)
        return [p] + bufs

    for d, c in zip(run(to_dev), run(lambda x: x), strict=True):
        assert_close(d, c, *tolerance(fastt.float32))


def test_step_counts_differ_per_param():
    """A param that skipped steps keeps its own bias correction."""
    params = make_params([33, 65537, 5], fastt.float32)
    grads = []
    for s in range(4):
        g = make_grads(params, s)
        if s < 2:
            g[1] = None
        grads.append(g)
    compare_runs("Adam", dict(lr=0.01), params, grads, fastt.float32)
    compare_runs("Adagrad", dict(lr=0.1, lr_decay=0.3), params, grads,
                 fastt.float32)


def test_nan_and_inf_propagate_like_cpu():
    p = fastt.tensor([1.0, 2.0, 3.0, 4.0])
    grads = [[fastt.tensor([float("nan"), 1.0, float("inf"), -1.0])],
             [fastt.tensor([1.0, 1.0, 1.0, 1.0])]]
    for name, kwargs in [("Adam", dict(lr=0.1, amsgrad=True)),
                         ("SGD", dict(lr=0.1, momentum=0.9)),
                         ("RMSprop", dict(lr=0.1, centered=True)),
                         ("Adagrad", dict(lr=0.1))]:
        compare_runs(name, kwargs, [p], grads, fastt.float32)


@pytest.mark.skipif(DEVICE == "cpu", reason="needs two devices types")
@pytest.mark.parametrize("config", [CONFIGS[0], CONFIGS[1], CONFIGS[4],
                                    CONFIGS[9], CONFIGS[13]],
                         ids=["SGD", "SGDmom", "Adam", "RMSprop", "Adagrad"])
def test_mixed_device_group_raises(config):
    name, kwargs = config
    ps = [rand(3), to_dev(rand(4))]
    for p in ps:
        p.grad = fastt.ones_like(p)
    opt = getattr(optim, name)(ps, **kwargs)
    before = [p.cpu().numpy().copy() for p in ps]
    with pytest.raises(RuntimeError, match="same device") as err:
        opt.step()
    # names the fused step and the optimizer: "adam_step_ (Adam/AdamW): "
    assert "_step_ (" in str(err.value)
    assert name in str(err.value)
    assert "cpu" in str(err.value) and "cuda" in str(err.value)
    for p, b in zip(ps, before, strict=True):  # nothing was updated
        np.testing.assert_array_equal(p.cpu().numpy(), b)
    for st in opt.state.values():
        if "step" in st:
            assert float(st["step"]) == 0.0


@pytest.mark.skipif(DEVICE == "cpu", reason="needs two devices types")
def test_mixed_device_lists_raise():
    p = to_dev(rand(5))
    with pytest.raises(RuntimeError, match=r"adam_step_ \(Adam/AdamW\): "
                                           r".*same device.*grads\[0\]"):
        _C._adam_step([p], [rand(5)], [fastt.zeros_like(p)],
                      [fastt.zeros_like(p)], None, [fastt.tensor(0.0)])
    with pytest.raises(RuntimeError, match=r"exp_avg_sqs\[0\]"):
        _C._adam_step([p], [fastt.zeros_like(p)], [fastt.zeros_like(p)],
                      [rand(5)], None, [fastt.tensor(0.0)])
    with pytest.raises(RuntimeError, match="one-element floating CPU"):
        _C._adam_step([p], [fastt.zeros_like(p)], [fastt.zeros_like(p)],
                      [fastt.zeros_like(p)], None, [to_dev(fastt.tensor(0.))])


def clone_state_dict(sd):
    """A state dict whose tensors are copies (loading one keeps tensors
    that need no cast, so optimizers would otherwise share state)."""
    state = {k: {kk: vv.clone() if isinstance(vv, fastt.Tensor) else vv
                 for kk, vv in v.items()} for k, v in sd["state"].items()}
    return {"state": state, "param_groups": sd["param_groups"]}


@pytest.mark.parametrize("config", [CONFIGS[2], CONFIGS[5], CONFIGS[12],
                                    CONFIGS[14]],
                         ids=["SGD", "Adam", "RMSprop", "Adagrad"])
def test_state_dict_round_trip_on_device(config):
    """Save a device optimizer's state, load it into a fresh one (and a CPU
    optimizer's state into a device one): state lands on the param's device
    (step stays on CPU) and further steps match the CPU run."""
    name, kwargs = config
    params = make_params([17, 1000, 65537], fastt.float32)
    grads = [make_grads(params, s) for s in range(5)]
    cpu_p, cpu_opt = run_optimizer(name, kwargs, params, grads[:3])
    dev_p, dev_opt = run_optimizer(name, kwargs, to_dev(params),
                                   to_dev(grads[:3]))
    sd_dev = clone_state_dict(dev_opt.state_dict())
    sd_cpu = clone_state_dict(cpu_opt.state_dict())
    for sd in (sd_dev, sd_cpu):
        for st in sd["state"].values():
            if "step" in st:
                assert st["step"].device.type == "cpu"
    saved_cpu_p = [p.clone() for p in cpu_p]
    for gs in grads[3:]:  # the reference: the CPU optimizer goes on
        for p, g in zip(cpu_p, gs, strict=True):
            p.grad = g
        cpu_opt.step()

    for sd, start in ((sd_dev, dev_p), (sd_cpu, to_dev(saved_cpu_p))):
        ps = [p.detach().clone() for p in start]
        opt = getattr(optim, name)(ps, **kwargs)
        opt.load_state_dict(sd)
        for p in ps:
            for key, t in opt.state[p].items():
                if key == "step":
                    assert t.device.type == "cpu"
                else:
                    assert t.device == p.device, key
        for gs in to_dev(grads[3:]):
            for p, g in zip(ps, gs, strict=True):
                p.grad = g
            opt.step()
        for d, c in zip(ps, cpu_p, strict=True):
            assert_close(d, c, *tolerance(fastt.float32))


def test_moving_model_after_optimizer_creation():
    """torch allows model.to(device) after building the optimizer: the
    Parameter objects are kept, state is created on the new device."""
    nn = fastt.nn
    cpu_model = nn.Linear(7, 5)
    dev_model = nn.Linear(7, 5)
    with fastt.no_grad():
        for a, b in zip(cpu_model.parameters(), dev_model.parameters(),
                        strict=True):
            b.copy_(a)
    dev_opt = optim.Adam(dev_model.parameters(), lr=0.01)
    dev_model.to(DEVICE)
    cpu_opt = optim.Adam(cpu_model.parameters(), lr=0.01)
    x = rand(4, 7)
    for _ in range(3):
        for model, opt, xx in ((cpu_model, cpu_opt, x),
                               (dev_model, dev_opt, to_dev(x))):
            opt.zero_grad()
            model(xx).square().sum().backward()
            opt.step()
    for d, c in zip(dev_model.parameters(), cpu_model.parameters(),
                    strict=True):
        assert_close(d, c, *tolerance(fastt.float32))
    for st in dev_opt.state.values():
        assert st["exp_avg"].device.type == fastt.device(DEVICE).type


@pytest.mark.skipif(DEVICE == "cpu" or fastt.cuda.device_count() < 2,
                    reason="needs two CUDA devices")
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_step_keeps_current_device(name):
    """A fused step runs on its parameters' device and leaves the caller's
    current device as it was (optim.cu once switched it for good)."""
    fastt.cuda.set_device(1)
    try:
        p = fastt.ones(1000, device="cuda:1").requires_grad_(True)
        (p * 2).sum().backward()
        opt = getattr(optim, name)([p], lr=0.5)
        fastt.cuda.set_device(0)
        opt.step()
        assert fastt.cuda.current_device() == 0
        fastt.cuda.set_device(1)
        got = p.detach().cpu().numpy()
    finally:
        fastt.cuda.set_device(0)
    want = 0.0 if name == "SGD" else 0.5  # 1 - 0.5*2 / 1 - lr*sign(g)
    assert np.allclose(got, want, atol=1e-3)

"""The host path of fastt's CUDA ops, counted on the CPU emulation build
(tests/cuda_emu): in steady state each op makes exactly its launches, one
cudaGetLastError per launch, no cudaMalloc/cudaFree and no synchronisation.
Skips unless fastt._C is the emulation build (it exports the counters;
tests/python/emu_counters.py).

    python3 tests/python/test_cuda_host_path.py   # prints each case's counts
"""
import json
import os
import sys

import numpy as np
import pytest

import emu_counters
import fastt

DEVICE = os.environ.get("FASTT_TEST_DEVICE", "cuda")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


EMU = emu_counters.LIB

pytestmark = [emu_counters.requires_emu, pytest.mark.skipif(
    not DEVICE.startswith("cuda"), reason="no CUDA GPU: FASTT_TEST_DEVICE "
    "is not cuda")]

# Runtime calls that wait for the device (a blocking cudaMemcpy waits for
# the stream; a device-to-host copy is only useful after one).
SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize",
         "cudaEventSynchronize", "cudaStreamQuery", "cudaEventQuery",
         "cudaMemcpy", "memcpy_DeviceToHost")
ALLOCS = ("cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaMallocHost",
          "cudaFreeHost")


counters = emu_counters.read


def measure(fn, warmup=3):
    """Counters of one call of fn after `warmup` calls (steady state)."""
    for _ in range(warmup):
        fn()
    EMU.fastt_emu_counters_reset()
    fn()
    return counters()


# ----------------------------------------------------------------- cases
# name -> builder returning the zero-argument callable to count.

def _t(*shape):
    return fastt.ones(*shape, device=DEVICE)


def case_add():
    a, b = _t(16), _t(16)
    return lambda: a + b


def case_mul_scalar():
    a = _t(16)
    return lambda: a * 2.0


def case_relu():
    a = _t(16)
    return lambda: a.relu()


def case_sum():
    a = _t(16)
    return lambda: a.sum()


def case_softmax():
    a = _t(16)
    return lambda: a.softmax(-1)


def case_matmul():
    m = _t(64, 64)
    return lambda: m @ m


def case_linear():
    lin = fastt.nn.Linear(64, 64).to(DEVICE)
    x = _t(1, 64)
    return lambda: lin(x)


OPTIM_SHAPES = [(64,), (32, 32), (16, 64), (128,), (8, 8), (256,)]


def case_adamw():
    # bench/gpu.py's AdamW case: 100 small parameters, one group.
    params = [fastt.zeros(*OPTIM_SHAPES[i % 6], device=DEVICE,
                          requires_grad=True) for i in range(100)]
    for p in params:
        p.grad = fastt.ones_like(p)
    return fastt.optim.AdamW(params, lr=1e-3).step


def case_mlp_step():
    nn, F = fastt.nn, fastt.nn.functional
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(),
                          nn.Linear(64, 10)).to(DEVICE)
    opt = fastt.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = fastt.tensor(rng.standard_normal((16, 32)).astype(np.float32))
    y = fastt.tensor(rng.integers(0, 10, 16))
    x, y = x.to(DEVICE), y.to(DEVICE)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def case_gpt_step():
    # examples/char_gpt.py's model (embedding, sdpa attention, layer norm,
    # cross entropy), small, batch 1.
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import char_gpt
    import common as ex_common
    vocab, d_model, n_layer, n_head, block = 32, 32, 1, 2, 16
    model, _ = char_gpt.build_model(fastt, vocab, d_model, n_layer, n_head,
                                    block, "sdpa")
    ex_common.init_params(model, fastt, 0, char_gpt.gpt_init_rule(n_layer))
    model.to(DEVICE)
    opt = fastt.optim.AdamW(model.parameters(), lr=1e-3)
    ids = np.random.default_rng(0).integers(0, vocab, (1, block + 1))
    x = fastt.tensor(ids[:, :-1]).to(DEVICE)
    y = fastt.tensor(ids[:, 1:]).to(DEVICE)

    def step():
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        opt.step()
    return step


# name: (builder, launches per call, other runtime calls allowed besides
# the launches' cudaGetLastError). Launch counts are what the kernels need
# (one per op here; AdamW: one chunk-table launch for the whole group).
CASES = {
    "add": (case_add, 1, {}),
    "mul_scalar": (case_mul_scalar, 1, {}),
    "relu": (case_relu, 1, {}),
    "sum": (case_sum, 1, {}),
    "softmax": (case_softmax, 1, {}),
    "matmul_64": (case_matmul, 1, {}),
    "linear_fwd": (case_linear, 1, {}),
    "adamw_100": (case_adamw, 1, {}),
}


def problems(c, launches=None, allowed=None):
    """What in counters c breaks the host-path budget (empty: none)."""
    api = c["api"]
    out = []
    for k in SYNCS:
        if api.get(k):
            out.append(f"{api[k]} {k} (a synchronisation)")
    for k in ALLOCS:
        if api.get(k):
            out.append(f"{api[k]} {k} in steady state")
    n = api.get("launch", 0)
    if launches is not None and n != launches:
        out.append(f"{n} launches, expected {launches}: {c['kernels']}")
    if api.get("cudaGetLastError", 0) != n:
        out.append(f"{api.get('cudaGetLastError', 0)} cudaGetLastError for "
                   f"{n} launches (one check per launch)")
    if allowed is not None:
        skip = set(SYNCS) | set(ALLOCS) | {"launch", "cudaGetLastError",
                                           "cub"}
        extra = {k: v for k, v in api.items()
                 if k not in skip and not k.startswith("memcpy_")
                 and allowed.get(k) != v}
        for k, v in allowed.items():
            if api.get(k, 0) != v and k not in extra:
                extra[k] = api.get(k, 0)
        if extra:
            out.append(f"runtime calls beyond the launches: {extra} "
                       f"(expected {allowed})")
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_op_host_path(name):
    build, launches, allowed = CASES[name]
    c = measure(build())
    assert not problems(c, launches, allowed), (name, problems(c, launches,
                                                              allowed), c)


# The MLP step's launches: forward 2 gemm (bias fused) + relu; loss
# ce_warp + sum_final (mean); backward fill (seed) + ce_backward +
# sum_final (mean's weight sum, recomputed) + relu_backward + 3 gemm + 2
# column sums (the bias grads, kept as .grad without a copy); one AdamW
# chunk-table launch. Update (with the kernel list printed on failure)
# when an op legitimately changes how it launches.
MLP_STEP_LAUNCHES = 15


def test_mlp_training_step():
    # Forward (2 Linear + ReLU), cross_entropy, backward, AdamW over 4
    # parameters: no allocation, no sync, no runtime call beyond the
    # launches and their checks, and the same launches every step.
    step = case_mlp_step()
    c = measure(step)
    assert not problems(c, MLP_STEP_LAUNCHES, {}), (
        problems(c, MLP_STEP_LAUNCHES, {}), c)
    assert measure(step, warmup=0)["kernels"] == c["kernels"]


def test_compiled_mlp_step_is_one_graph_launch():
    # fastt.compile: forward, loss, backward and the .grad assignments
    # replay as one CUDA graph; the optimizer's step (a host step, so it
    # reads the current learning rate) is its one chunk-table launch.
    # Nothing else: no sync, no allocation, no other runtime call.
    step = fastt.compile(case_mlp_step())
    c = measure(step)
    assert step.stats["replays"] >= 1, (step.stats, step.eager_reason)
    assert not problems(c, 1, {"cudaGraphLaunch": 1}), (
        problems(c, 1, {"cudaGraphLaunch": 1}), c)


def test_gpt_step_no_sync():
    # Embedding + sdpa attention + layer norm + cross entropy at batch 1:
    # the step must never wait for the device (e.g. an index op's range
    # check that copies a flag back and synchronises) nor allocate, and
    # makes no runtime call besides its launches and their checks.
    step = case_gpt_step()
    c = measure(step, warmup=2)
    assert not problems(c, allowed={}), (problems(c, allowed={}), c)
    assert measure(step, warmup=0)["kernels"] == c["kernels"]


def test_counters_see_sync_and_malloc():
    # The counters themselves: a sync, a copy back and an allocation show.
    a = _t(16)
    p = problems(measure(lambda: (a + 1).sum().item()))
    assert any("memcpy_DeviceToHost" in s for s in p), p
    assert any("Synchronize" in s for s in p), p
    fastt.cuda.empty_cache()
    EMU.fastt_emu_counters_reset()
    x = fastt.empty((1 << 23) + 4099, device=DEVICE)  # a fresh segment
    assert any("cudaMalloc" in s for s in problems(counters())), counters()
    del x


def test_null_kernels_count_but_do_not_run():
    x = fastt.full((4099,), 3.0, device=DEVICE)
    was = EMU.fastt_emu_null_kernels()
    EMU.fastt_emu_set_null_kernels(1)
    try:
        EMU.fastt_emu_counters_reset()
        x.add_(1.0)
        c = counters()
    finally:
        EMU.fastt_emu_set_null_kernels(was)
    assert c["null_kernels"] and c["api"]["launch"] == 1, c
    assert float(x[0].item()) == 3.0  # the kernel did not run
    x.add_(1.0)
    assert float(x[0].item()) == 4.0


if __name__ == "__main__":
    if EMU is None:
        sys.exit("not the emulation build")
    for name, (build, launches, allowed) in CASES.items():
        print(name, json.dumps(measure(build())))
    print("mlp_step", json.dumps(measure(case_mlp_step())))
    print("gpt_step", json.dumps(measure(case_gpt_step(), warmup=2)))

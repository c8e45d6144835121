"""Python threads running fastt at once: large ops (the bindings release the
GIL from 32K elements, so these really overlap) mixed with small ones,
thread-local grad mode, and two models training concurrently. Every
threaded result is compared with the same work done on one thread. Add a
test here when a feature keeps per-thread or shared state."""
import threading

import numpy as np
import pytest

import fastt

N_THREADS = 4


def npy(t):
    return np.asarray(t.detach().numpy())


def run_threads(n, body):
    """Runs body(i) on n threads started together; re-raises the first
    exception a thread hit."""
    barrier = threading.Barrier(n)
    errors = []

    def wrap(i):
        try:
            barrier.wait()
            body(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def inputs(seed):
    rng = np.random.default_rng(seed)
    big = rng.standard_normal((256, 192)).astype(np.float32)  # 49152 elems
    w = rng.standard_normal((192, 40)).astype(np.float32)
    small = rng.standard_normal((3, 5)).astype(np.float32)
    return big, w, small


def workload(big, w, small):
    b, w, s = fastt.from_numpy(big), fastt.from_numpy(w), fastt.from_numpy(small)
    return [
        b * b + b.tanh(),           # elementwise, GIL released
        (s + 1).exp(),              # small: stays on the calling thread
        b.sum(dim=1),
        b.var(dim=0),
        b.amax(dim=0),
        b @ w,
        b.softmax(dim=1),
        b.t().contiguous(),
        s.mean(),
    ]


def test_large_and_small_ops_concurrently():
    data = [inputs(i) for i in range(N_THREADS)]
    want = [[npy(t) for t in workload(*d)] for d in data]

    def body(i):
        for _ in range(5):
            got = workload(*data[i])
            for g, w in zip(got, want[i], strict=True):
                np.testing.assert_allclose(npy(g), w, rtol=1e-5, atol=1e-5)

    run_threads(N_THREADS, body)


def test_threads_reading_one_shared_tensor():
    big, w, _ = inputs(7)
    x = fastt.from_numpy(big)
    wt = fastt.from_numpy(w)
    ops = [lambda: (x * 2).sum(dim=0), lambda: x @ wt,
           lambda: x.exp().mean(dim=1), lambda: x.relu().amax(dim=1)]
    want = [npy(op()) for op in ops]

    def body(i):
        for _ in range(5):
            np.testing.assert_allclose(npy(ops[i]()), want[i], rtol=1e-5,
                                       atol=1e-5)

    run_threads(len(ops), body)
    np.testing.assert_array_equal(npy(x), big)  # readers never wrote


def test_inplace_ops_on_per_thread_tensors():
    def body(i):
        acc = fastt.zeros(300, 200)  # 60000 elements: GIL released
        for _ in range(20):
            acc.add_(i + 1)
        small = fastt.zeros(3)
        for _ in range(20):
            small.add_(i + 1)
        assert float(acc.min()) == float(acc.max()) == 20.0 * (i + 1)
        assert npy(small).tolist() == [20.0 * (i + 1)] * 3

    run_threads(N_THREADS, body)


def test_grad_mode_is_thread_local():
    in_no_grad = threading.Event()
    recorded = threading.Event()
    seen = {}

    def no_grad_thread():
        x = fastt.ones(4, requires_grad=True)
        with fastt.no_grad():
            in_no_grad.set()
            assert recorded.wait(30)
            y = x * 2
            seen["no_grad_enabled"] = fastt.is_grad_enabled()
            seen["no_grad_requires"] = y.requires_grad

    def recording_thread():
        assert in_no_grad.wait(30)
        seen["rec_enabled"] = fastt.is_grad_enabled()
        x = fastt.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x * x).sum()
        seen["rec_requires"] = y.requires_grad
        recorded.set()
        y.backward()
        seen["grad"] = npy(x.grad).tolist()

    ts = [threading.Thread(target=no_grad_thread),
          threading.Thread(target=recording_thread)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen == {"no_grad_enabled": False, "no_grad_requires": False,
                    "rec_enabled": True, "rec_requires": True,
                    "grad": [2.0, 4.0, 6.0]}
    assert fastt.is_grad_enabled()


def test_new_thread_starts_with_grad_enabled():
    # As in torch: grad mode does not follow a thread that main spawns.
    seen = []
    with fastt.no_grad():
        t = threading.Thread(target=lambda: seen.append(
            fastt.is_grad_enabled()))
        t.start()
        t.join()
        assert not fastt.is_grad_enabled()
    assert seen == [True]

    def off():
        fastt.set_grad_enabled(False)
        seen.append(fastt.is_grad_enabled())

    t = threading.Thread(target=off)
    t.start()
    t.join()
    assert seen == [True, False]
    assert fastt.is_grad_enabled()  # the other thread's switch stayed there


def _make_model(seed):
    nn = fastt.nn
    model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 3))
    rng = np.random.default_rng(seed)
    with fastt.no_grad():
        for p in model.parameters():
            p.copy_(fastt.from_numpy(
                (0.3 * rng.standard_normal(tuple(p.shape))).astype(
                    np.float32)))
    return model


def _train(model, seed, steps=40, opt="sgd"):
    rng = np.random.default_rng(100 + seed)
    # 512 x 64 hidden activations: large enough to release the GIL.
    x = fastt.from_numpy(rng.standard_normal((512, 20)).astype(np.float32))
    y = fastt.from_numpy(rng.integers(0, 3, 512).astype(np.int64))
    if opt == "sgd":
        o = fastt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        o = fastt.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        o.zero_grad()
        loss = fastt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        o.step()
        losses.append(float(loss))
    return losses


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_two_models_train_concurrently(opt):
    ref = [_make_model(s) for s in range(2)]
    ref_losses = [_train(m, s, opt=opt) for s, m in enumerate(ref)]
    assert ref_losses[0][-1] < ref_losses[0][0]  # it does learn

    models = [_make_model(s) for s in range(2)]
    losses = [None, None]

    def body(i):
        losses[i] = _train(models[i], i, opt=opt)

    run_threads(2, body)
    for i in range(2):
        np.testing.assert_allclose(losses[i], ref_losses[i], rtol=1e-5)
        for p, q in zip(models[i].parameters(), ref[i].parameters(),
                        strict=True):
            np.testing.assert_allclose(npy(p), npy(q), rtol=1e-5, atol=1e-6)


def test_concurrent_backward_on_independent_graphs():
    def grads(seed):
        rng = np.random.default_rng(seed)
        a = fastt.tensor(rng.standard_normal((200, 200)), requires_grad=True)
        b = fastt.tensor(rng.standard_normal((200, 200)), requires_grad=True)
        loss = ((a @ b).tanh() * a).sum()
        loss.backward()
        return npy(a.grad), npy(b.grad)

    want = [grads(i) for i in range(N_THREADS)]

    def body(i):
        for _ in range(3):
            ga, gb = grads(i)
            np.testing.assert_allclose(ga, want[i][0], rtol=1e-10)
            np.testing.assert_allclose(gb, want[i][1], rtol=1e-10)

    run_threads(N_THREADS, body)


def test_random_ops_from_threads():
    # Concurrent sampling from the default generator while reseeding:
    # values are unspecified but must be sane, and reseeding still works.
    def body(i):
        for k in range(20):
            if i == 0 and k % 5 == 0:
                fastt.manual_seed(k)
            r = npy(fastt.randn(40000 if k % 2 else 7))
            assert np.isfinite(r).all() and np.abs(r).max() < 10

    run_threads(N_THREADS, body)
    fastt.manual_seed(3)
    a = npy(fastt.randn(100))
    fastt.manual_seed(3)
    np.testing.assert_array_equal(npy(fastt.randn(100)), a)


def test_blas_runs_in_fastts_openmp_pool():
    """OpenBLAS's pthread build keeps its own worker pool, which competes
    with fastt's OpenMP workers for the cores (a GPT step took 2.2x as
    long on 2 threads as on 1). The build must link the OpenMP build, and
    the BLAS must follow fastt.set_num_threads."""
    info = fastt.__config__._info()
    assert fastt.__config__.blas_threading() == "openmp", (
        fastt.__config__.parallel_info())
    assert "USE_OPENMP" in info["blas_config"]
    assert "OpenMP (fastt's pool)" in fastt.__config__.parallel_info()
    n = fastt.get_num_threads()
    a = fastt.randn(256, 256)
    try:
        for k in (1, 2):
            fastt.set_num_threads(k)
            c = a @ a  # big enough for the BLAS to thread
            assert fastt.__config__._info()["blas_num_threads"] == k
            np.testing.assert_allclose(npy(c), npy(a) @ npy(a), rtol=1e-4,
                                       atol=1e-3)
    finally:
        fastt.set_num_threads(n)

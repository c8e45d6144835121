"""nn.RNN / LSTM / GRU, their cells and nn.utils.rnn against torch on the
same weights: outputs, final states, gradients of the input, the states
and every parameter; packed sequences (sorted and not); parameter names,
shapes, init and state_dicts; torch's errors."""
import math

import pytest
import torch

import fastt
import fastt.nn as nn
from fastt.nn.utils import rnn as frnn
from torch_ref import Fz, close

CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True,
              "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True, "batch_first": True}),
]
IDS = [f"{c}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}"
       for c, kw in CONFIGS]


def pair(cls, kw, I=5, H=6, dtype=torch.float64):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(I, H, dtype=dtype, **kw)
    fm = getattr(nn, cls)(I, H, dtype=getattr(fastt, str(dtype)[6:]), **kw)
    fm.load_state_dict({k: Fz(v) for k, v in tm.state_dict().items()})
    return fm, tm


def states(cls, kw, B, H=6, seed=1):
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    out = kw.get("proj_size", 0) or H
    g = torch.Generator().manual_seed(seed)
    h0 = torch.randn(L * D, B, out, generator=g, dtype=torch.float64)
    if cls != "LSTM":
        return h0.requires_grad_(), Fz(h0, True)
    c0 = torch.randn(L * D, B, H, generator=g, dtype=torch.float64)
    return ((h0.requires_grad_(), c0.requires_grad_()),
            (Fz(h0, True), Fz(c0, True)))


def loss(y, h):
    hs = h if isinstance(h, tuple) else (h,)
    return (y * y).sum() + sum((s * s * 0.5).sum() for s in hs)


def compare_grads(fm, tm, pairs):
    for a, b in pairs:
        close(a.grad, b.grad)
    for (nf, pf), (nt, pt) in zip(fm.named_parameters(),
                                  tm.named_parameters()):
        assert nf == nt
        close(pf.grad, pt.grad)


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=IDS)
def test_matches_torch_with_given_states(cls, kw):
    fm, tm = pair(cls, kw)
    xt = torch.randn(4, 3, 5, dtype=torch.float64, requires_grad=True)
    xf = Fz(xt, True)
    ht, hf = states(cls, kw, B=3 if not kw.get("batch_first") else 4)
    yt, st = tm(xt, ht)
    yf, sf = fm(xf, hf)
    close(yf, yt)
    for a, b in zip(sf if cls == "LSTM" else (sf,),
                    st if cls == "LSTM" else (st,)):
        close(a, b)
    loss(yt, st).backward()
    loss(yf, sf).backward()
    hp = list(zip(hf, ht)) if cls == "LSTM" else [(hf, ht)]
    compare_grads(fm, tm, [(xf, xt)] + hp)


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=IDS)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_match_torch(cls, kw, enforce_sorted):
    fm, tm = pair(cls, kw)
    bf = kw.get("batch_first", False)
    lens = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    shape = (4, 5, 5) if bf else (5, 4, 5)
    xt = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    xf = Fz(xt, True)
    pt = torch.nn.utils.rnn.pack_padded_sequence(
        xt, lens, batch_first=bf, enforce_sorted=enforce_sorted)
    pf = frnn.pack_padded_sequence(xf, lens, batch_first=bf,
                                   enforce_sorted=enforce_sorted)
    close(pf.data, pt.data)
    assert pf.batch_sizes.tolist() == pt.batch_sizes.tolist()
    ht, hf = states(cls, kw, B=4)
    yt, st = tm(pt, ht)
    yf, sf = fm(pf, hf)
    close(yf.data, yt.data)
    ut, lt = torch.nn.utils.rnn.pad_packed_sequence(yt, batch_first=bf,
                                                    total_length=6)
    uf, lf = frnn.pad_packed_sequence(yf, batch_first=bf, total_length=6)
    close(uf, ut)
    assert lf.tolist() == lt.tolist()
    loss(ut, st).backward()
    loss(uf, sf).backward()
    hp = list(zip(hf, ht)) if cls == "LSTM" else [(hf, ht)]
    compare_grads(fm, tm, [(xf, xt)] + hp)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_unbatched_input_default_state_and_float32(cls):
    fm, tm = pair(cls, {}, dtype=torch.float32)
    xt = torch.randn(7, 5)
    yt, st = tm(xt)
    yf, sf = fm(Fz(xt))
    close(yf, yt, tol=2e-6)
    assert tuple(yf.shape) == (7, 6)
    st = st if cls == "LSTM" else (st,)
    sf = sf if cls == "LSTM" else (sf,)
    for a, b in zip(sf, st):
        assert tuple(a.shape) == tuple(b.shape) == (1, 6)
        close(a, b, tol=2e-6)
    # a larger float32 run, every activation range the kernels meet
    fm, tm = pair(cls, {"num_layers": 2}, I=8, H=32, dtype=torch.float32)
    xt = torch.randn(20, 16, 8) * 3
    yt, _ = tm(xt)
    yf, _ = fm(Fz(xt))
    close(yf, yt, tol=1e-5)


@pytest.mark.parametrize("cell,mode", [("RNNCell", "tanh"),
                                       ("RNNCell", "relu"),
                                       ("LSTMCell", None), ("GRUCell", None)])
def test_cells_match_torch(cell, mode):
    kw = {"nonlinearity": mode} if mode else {}
    torch.manual_seed(0)
    tc = getattr(torch.nn, cell)(4, 5, dtype=torch.float64, **kw)
    fc = getattr(nn, cell)(4, 5, dtype=fastt.float64, **kw)
    fc.load_state_dict({k: Fz(v) for k, v in tc.state_dict().items()})
    xt = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    xf = Fz(xt, True)
    ht = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    hf = Fz(ht, True)
    if cell == "LSTMCell":
        ct = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
        cf = Fz(ct, True)
        (h1t, c1t), (h1f, c1f) = tc(xt, (ht, ct)), fc(xf, (hf, cf))
        close(h1f, h1t)
        close(c1f, c1t)
        (h1t.sum() + (c1t * c1t).sum()).backward()
        (h1f.sum() + (c1f * c1f).sum()).backward()
        close(cf.grad, ct.grad)
    else:
        h1t, h1f = tc(xt, ht), fc(xf, hf)
        close(h1f, h1t)
        (h1t * h1t).sum().backward()
        (h1f * h1f).sum().backward()
    close(xf.grad, xt.grad)
    close(hf.grad, ht.grad)
    for (n, pf), (_, pt) in zip(fc.named_parameters(),
                                tc.named_parameters()):
        close(pf.grad, pt.grad)
    # unbatched, default state
    out_t, out_f = tc(xt[0].detach()), fc(xf[0].detach())
    for a, b in zip(out_f if cell == "LSTMCell" else (out_f,),
                    out_t if cell == "LSTMCell" else (out_t,)):
        assert tuple(a.shape) == (5,)
        close(a, b)


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=IDS)
def test_parameters_names_shapes_init_and_state_dict(cls, kw):
    tm = getattr(torch.nn, cls)(5, 6, **kw)
    fm = getattr(nn, cls)(5, 6, **kw)
    ts, fs = tm.state_dict(), fm.state_dict()
    assert list(ts) == list(fs)
    for k in ts:
        assert tuple(ts[k].shape) == tuple(fs[k].shape)
        assert float(fs[k].abs().max()) <= 1 / math.sqrt(6) + 1e-7
    assert fm._flat_weights_names == tm._flat_weights_names
    assert repr(fm) == repr(tm)
    # torch's state_dict in, fastt's out, same values
    fm.load_state_dict({k: Fz(v) for k, v in ts.items()})
    back = {k: torch.from_dlpack(v) for k, v in fm.state_dict().items()}
    tm.load_state_dict(back)
    for k in ts:
        assert torch.equal(tm.state_dict()[k], ts[k])


def test_inter_layer_dropout_only_in_training():
    fastt.manual_seed(0)
    m = nn.LSTM(4, 8, num_layers=2, dropout=0.5)
    x = fastt.randn(5, 3, 4)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    assert bool((a == b).all())
    m.train()
    c, _ = m(x)
    assert not bool((a == c).all())
    with pytest.warns(UserWarning, match="non-zero dropout expects "
                                         "num_layers greater than 1"):
        nn.GRU(4, 8, dropout=0.2)


def test_pad_pack_helpers_match_torch():
    seqs_t = [torch.randn(n, 3, dtype=torch.float64, requires_grad=True)
              for n in (4, 1, 3)]
    seqs_f = [Fz(s, True) for s in seqs_t]
    for side in ("right", "left"):
        for bf in (False, True):
            close(frnn.pad_sequence(seqs_f, batch_first=bf, padding_value=-1,
                                    padding_side=side),
                  torch.nn.utils.rnn.pad_sequence(
                      seqs_t, batch_first=bf, padding_value=-1,
                      padding_side=side))
    pt = torch.nn.utils.rnn.pack_sequence(seqs_t, enforce_sorted=False)
    pf = frnn.pack_sequence(seqs_f, enforce_sorted=False)
    close(pf.data, pt.data)
    assert pf.sorted_indices.tolist() == pt.sorted_indices.tolist()
    assert pf.unsorted_indices.tolist() == pt.unsorted_indices.tolist()
    for a, b in zip(frnn.unpack_sequence(pf),
                    torch.nn.utils.rnn.unpack_sequence(pt)):
        close(a, b)
    (pt.data * 2).sum().backward()
    (pf.data * 2).sum().backward()
    for a, b in zip(seqs_f, seqs_t):
        close(a.grad, b.grad)
    padded_t = torch.nn.utils.rnn.pad_sequence(seqs_t)
    padded_f = frnn.pad_sequence(seqs_f)
    for a, b in zip(frnn.unpad_sequence(padded_f, [4, 1, 3]),
                    torch.nn.utils.rnn.unpad_sequence(
                        padded_t, torch.tensor([4, 1, 3]))):
        close(a, b)


@pytest.mark.parametrize("ctor,exc,match", [
    (lambda L: L.nn.LSTM(4, 0), ValueError,
     "hidden_size must be greater than zero"),
    (lambda L: L.nn.LSTM(4, 5, num_layers=0), ValueError,
     "num_layers must be greater than zero"),
    (lambda L: L.nn.LSTM(4, 5, proj_size=5), ValueError,
     "proj_size has to be smaller than hidden_size"),
    (lambda L: L.nn.GRU(4, 5, proj_size=2), ValueError,
     "proj_size argument is only supported for LSTM"),
    (lambda L: L.nn.RNN(4, 5, nonlinearity="gelu"), ValueError,
     "Unknown nonlinearity 'gelu'"),
    (lambda L: L.nn.LSTM(4, 5, dropout=1.5), ValueError,
     "dropout should be a number in range"),
])
def test_constructor_errors(ctor, exc, match):
    for L in (fastt, torch):
        with pytest.raises(exc, match=match):
            ctor(L)


def test_forward_errors_like_torch():
    cases = [
        (lambda L, m: m(L.randn(2, 3, 4, 5)), ValueError,
         "LSTM: Expected input to be 2D or 3D, got 4D instead"),
        (lambda L, m: m(L.randn(3, 2, 7)), RuntimeError,
         "input.size\\(-1\\) must be equal to input_size. Expected 4, got 7"),
        (lambda L, m: m(L.randn(3, 2, 4), (L.zeros(1, 3, 5),
                                            L.zeros(1, 2, 5))),
         RuntimeError, "Expected hidden\\[0\\] size \\(1, 2, 5\\), got "
                       "\\[1, 3, 5\\]"),
        (lambda L, m: m(L.randn(3, 2, 4, dtype=L.float64)), ValueError,
         "RNN input dtype"),
        (lambda L, m: L.nn.utils.rnn.pack_padded_sequence(
            L.randn(3, 2, 4), [1, 3]), RuntimeError,
         "must be sorted in decreasing order"),
    ]
    for L in (fastt, torch):
        m = L.nn.LSTM(4, 5)
        for fn, exc, match in cases:
            with pytest.raises(exc, match=match):
                fn(L, m)
        g = L.nn.GRU(4, 5)
        with pytest.raises(RuntimeError, match="Expected hidden size "
                                               "\\(1, 2, 5\\), got"):
            g(L.randn(3, 2, 4), L.zeros(1, 3, 5))


def test_gradcheck_and_no_double_backward():
    fastt.manual_seed(0)
    m = nn.GRU(2, 3, dtype=fastt.float64)
    x = fastt.randn(3, 2, 2, dtype=fastt.float64, requires_grad=True)
    assert fastt.autograd.gradcheck(lambda a: m(a)[0], (x,))
    y, _ = m(x)
    with pytest.raises(NotImplementedError, match="double backward"):
        fastt.autograd.grad(y.sum(), x, create_graph=True)

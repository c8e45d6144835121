"""fastt.nn layers and nn.functional against torch: each layer is built in
both libraries, torch's weights are copied into fastt, and forward outputs
(and input and parameter gradients) are compared.
To add a case, add a row to LAYER_CASES or a test below."""

import math

import numpy as np
import pytest

import fastt
import fastt.nn as nn
import fastt.nn.functional as F

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

def to_fastt(t, requires_grad=False):
    out = fastt.tensor(t.detach().numpy())
    if requires_grad:
        out.requires_grad_()
    return out


def to_numpy(x):
    return np.asarray(x.detach().numpy() if hasattr(x, "detach")
                      else x.numpy())


def assert_close(ours, ref, rtol=1e-4, atol=1e-5):
    ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else ref
    got = to_numpy(ours)
    assert got.shape == np.asarray(ref).shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


def copy_weights(tmod, fmod):
    """torch state_dict -> fastt module (exercises load_state_dict)."""
    sd = {k: fastt.tensor(v.detach().numpy())
          for k, v in tmod.state_dict().items()}
    fmod.load_state_dict(sd)


def build(ctor):
    torch.manual_seed(0)
    tmod = ctor(tnn)
    fmod = ctor(nn)
    copy_weights(tmod, fmod)
    return tmod, fmod


def rand(*shape, seed=0, dtype=np.float32):
    return torch.from_numpy(
        np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# (name, constructor over the nn namespace, input shapes)
LAYER_CASES = [
    ("linear", lambda m: m.Linear(5, 7), [(3, 5)]),
    ("linear_nobias_3d", lambda m: m.Linear(5, 4, bias=False), [(2, 3, 5)]),
    ("bilinear", lambda m: m.Bilinear(3, 4, 5), [(6, 3), (6, 4)]),
    ("conv1d", lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1), [(2, 3, 9)]),
    ("conv1d_same", lambda m: m.Conv1d(2, 4, 4, padding="same"), [(2, 2, 7)]),
    ("conv2d", lambda m: m.Conv2d(3, 4, 3), [(2, 3, 7, 6)]),
    ("conv2d_stride_pad", lambda m: m.Conv2d(3, 6, (3, 2), stride=(2, 1),
                                             padding=(1, 2)), [(2, 3, 8, 7)]),
    ("conv2d_dil_groups", lambda m: m.Conv2d(4, 6, 3, padding=2, dilation=2,
                                             groups=2), [(1, 4, 9, 9)]),
    ("conv2d_same_even", lambda m: m.Conv2d(2, 3, 4, padding="same"),
     [(2, 2, 6, 5)]),
    ("conv2d_valid", lambda m: m.Conv2d(2, 3, 3, padding="valid"),
     [(1, 2, 5, 5)]),
    ("conv2d_reflect", lambda m: m.Conv2d(2, 3, 3, padding=1,
                                          padding_mode="reflect"),
     [(1, 2, 5, 6)]),
    ("conv2d_circular", lambda m: m.Conv2d(2, 3, 3, padding=1,
                                           padding_mode="circular"),
     [(1, 2, 5, 6)]),
    ("conv2d_replicate", lambda m: m.Conv2d(2, 3, 3, padding=2,
                                            padding_mode="replicate"),
     [(1, 2, 5, 6)]),
    ("conv2d_unbatched", lambda m: m.Conv2d(2, 3, 3), [(2, 5, 5)]),
    ("convT2d", lambda m: m.ConvTranspose2d(3, 2, 3), [(2, 3, 4, 5)]),
    ("convT2d_stride", lambda m: m.ConvTranspose2d(
        4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
     [(2, 4, 3, 4)]),
    ("convT2d_dil", lambda m: m.ConvTranspose2d(2, 3, 2, stride=3,
                                                dilation=2), [(1, 2, 3, 3)]),
    ("maxpool2d", lambda m: m.MaxPool2d(2), [(2, 3, 6, 7)]),
    ("maxpool2d_pad_stride", lambda m: m.MaxPool2d(3, 2, 1), [(2, 2, 7, 8)]),
    ("maxpool2d_ceil", lambda m: m.MaxPool2d(3, 2, ceil_mode=True),
     [(1, 2, 8, 9)]),
    ("maxpool2d_dil", lambda m: m.MaxPool2d(2, 1, dilation=2), [(1, 1, 6, 6)]),
    ("avgpool2d", lambda m: m.AvgPool2d(2), [(2, 3, 6, 7)]),
    ("avgpool2d_pad", lambda m: m.AvgPool2d(3, 2, 1), [(1, 2, 7, 6)]),
    ("avgpool2d_nopadcount", lambda m: m.AvgPool2d(
        3, 2, 1, count_include_pad=False), [(1, 2, 7, 6)]),
    ("adaptive_avg_1", lambda m: m.AdaptiveAvgPool2d(1), [(2, 3, 5, 4)]),
    ("adaptive_avg_div", lambda m: m.AdaptiveAvgPool2d((2, 3)),
     [(2, 3, 4, 6)]),
    ("adaptive_avg_odd", lambda m: m.AdaptiveAvgPool2d((3, 2)),
     [(1, 2, 7, 5)]),
    ("layernorm", lambda m: m.LayerNorm(6), [(3, 4, 6)]),
    ("layernorm_2d", lambda m: m.LayerNorm([4, 6], eps=1e-3), [(3, 4, 6)]),
    ("layernorm_noaffine", lambda m: m.LayerNorm(6, elementwise_affine=False),
     [(5, 6)]),
    ("groupnorm", lambda m: m.GroupNorm(2, 6), [(3, 6, 4, 3)]),
    ("rmsnorm", lambda m: m.RMSNorm(6), [(3, 4, 6)]),
    ("rmsnorm_eps", lambda m: m.RMSNorm([4, 6], eps=1e-3), [(3, 4, 6)]),
    ("relu", lambda m: m.ReLU(), [(4, 5)]),
    ("leaky_relu", lambda m: m.LeakyReLU(0.2), [(4, 5)]),
    ("gelu", lambda m: m.GELU(), [(4, 5)]),
    ("gelu_tanh", lambda m: m.GELU("tanh"), [(4, 5)]),
    ("silu", lambda m: m.SiLU(), [(4, 5)]),
    ("tanh", lambda m: m.Tanh(), [(4, 5)]),
    ("sigmoid", lambda m: m.Sigmoid(), [(4, 5)]),
    ("softmax", lambda m: m.Softmax(dim=1), [(3, 4, 5)]),
    ("logsoftmax", lambda m: m.LogSoftmax(dim=-1), [(3, 4, 5)]),
    ("elu", lambda m: m.ELU(0.5), [(4, 5)]),
    ("softplus", lambda m: m.Softplus(2.0, 3.0), [(4, 5)]),
    ("mish", lambda m: m.Mish(), [(4, 5)]),
    ("hardswish", lambda m: m.Hardswish(), [(4, 5)]),
    ("flatten", lambda m: m.Flatten(), [(2, 3, 4)]),
    ("unflatten", lambda m: m.Unflatten(1, (3, 4)), [(2, 12)]),
    ("identity", lambda m: m.Identity(), [(2, 3)]),
    ("sequential_mlp", lambda m: m.Sequential(
        m.Linear(6, 8), m.ReLU(), m.Linear(8, 3)), [(4, 6)]),
]


def _inputs(shapes, seed=1):
    return [rand(*s, seed=seed + i) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("name,ctor,shapes", LAYER_CASES,
                         ids=[c[0] for c in LAYER_CASES])
def test_layer_forward_matches_torch(name, ctor, shapes):
    tmod, fmod = build(ctor)
    xs = _inputs(shapes)
    ref = tmod(*xs)
    out = fmod(*[to_fastt(x) for x in xs])
    assert_close(out, ref)


@pytest.mark.parametrize("name,ctor,shapes", LAYER_CASES,
                         ids=[c[0] for c in LAYER_CASES])
def test_layer_grads_match_torch(name, ctor, shapes):
    tmod, fmod = build(ctor)
    xs = [x.requires_grad_() for x in _inputs(shapes)]
    fxs = [to_fastt(x, requires_grad=True) for x in xs]
    ref = tmod(*xs)
    out = fmod(*fxs)
    weight = rand(*ref.shape, seed=99)
    (ref * weight).sum().backward()
    (out * to_fastt(weight)).sum().backward()
    for x, fx in zip(xs, fxs, strict=True):
        assert_close(fx.grad, x.grad, rtol=1e-3, atol=1e-4)
    tparams = dict(tmod.named_parameters())
    for pname, p in fmod.named_parameters():
        assert_close(p.grad, tparams[pname].grad, rtol=1e-3, atol=1e-4)


# The composed fallbacks (used while a fused op is missing, and kept as a
# reference for the fused ones) must agree with torch too.
@pytest.fixture
def composed(monkeypatch):
    for name, fn in F._COMPOSED.items():
        monkeypatch.setattr(F, name, fn)
    for name in ("_cross_entropy", "_nll_loss"):
        monkeypatch.setattr(F, name, None)


_COMPOSED_CASES = [c for c in LAYER_CASES if c[0].split("_")[0] in (
    "conv1d", "conv2d", "convT2d", "maxpool2d", "avgpool2d", "adaptive",
    "layernorm", "rmsnorm")]


@pytest.mark.parametrize("name,ctor,shapes", _COMPOSED_CASES,
                         ids=[c[0] for c in _COMPOSED_CASES])
def test_layer_forward_composed_path(name, ctor, shapes, composed):
    test_layer_forward_matches_torch(name, ctor, shapes)


@pytest.mark.parametrize("name,ctor,shapes", _COMPOSED_CASES,
                         ids=[c[0] for c in _COMPOSED_CASES])
def test_layer_grads_composed_path(name, ctor, shapes, composed):
    test_layer_grads_match_torch(name, ctor, shapes)


# ---- embedding ----
def test_embedding_padding_idx_and_from_pretrained():
    tmod, fmod = build(lambda m: m.Embedding(10, 4, padding_idx=2))
    assert np.all(to_numpy(fmod.weight)[2] == 0)
    idx = torch.tensor([[0, 2, 9], [3, 3, 1]])
    assert_close(fmod(fastt.tensor(idx.numpy())), tmod(idx))
    neg = nn.Embedding(5, 2, padding_idx=-1)
    assert neg.padding_idx == 4
    w = fastt.randn(4, 3)
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad
    assert_close(emb(fastt.tensor([1, 3])), w.numpy()[[1, 3]])
    with pytest.raises(AssertionError, match="Padding_idx must be within "
                                             "num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_grads_padding_idx():
    tmod, fmod = build(lambda m: m.Embedding(6, 3, padding_idx=1))
    idx = torch.tensor([[0, 1, 5], [5, 1, 2]])
    g = rand(2, 3, 3, seed=2)
    (tmod(idx) * g).sum().backward()
    (fmod(fastt.tensor(idx.numpy())) * to_fastt(g)).sum().backward()
    assert_close(fmod.weight.grad, tmod.weight.grad)


def test_embedding_max_norm():
    tmod, fmod = build(lambda m: m.Embedding(6, 3, max_norm=1.0))
    idx = torch.tensor([0, 1, 1, 4])
    assert_close(fmod(fastt.tensor(idx.numpy())), tmod(idx))
    assert_close(fmod.weight, tmod.weight)


# ---- batch norm: running stats ----
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (8, 3)),
                                       ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (4, 3, 5, 2))])
def test_batchnorm_train_eval(cls, shape, momentum):
    tmod, fmod = build(lambda m: getattr(m, cls)(3, momentum=momentum))
    with torch.no_grad():
        tmod.weight.uniform_(0.5, 1.5)
        tmod.bias.uniform_(-0.5, 0.5)
    copy_weights(tmod, fmod)
    for step in range(3):
        x = rand(*shape, seed=step)
        assert_close(fmod(to_fastt(x)), tmod(x))
    assert_close(fmod.running_mean, tmod.running_mean)
    assert_close(fmod.running_var, tmod.running_var)
    assert int(fmod.num_batches_tracked) == 3
    tmod.eval()
    fmod.eval()
    x = rand(*shape, seed=7)
    assert_close(fmod(to_fastt(x)), tmod(x))


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5, 2)])
def test_batchnorm_train_grads(shape):
    cls = "BatchNorm1d" if len(shape) == 2 else "BatchNorm2d"
    tmod, fmod = build(lambda m: getattr(m, cls)(3))
    with torch.no_grad():
        tmod.weight.uniform_(0.5, 1.5)
    copy_weights(tmod, fmod)
    x = rand(*shape).requires_grad_()
    fx = to_fastt(x, requires_grad=True)
    g = rand(*shape, seed=4)
    (tmod(x) * g).sum().backward()
    (fmod(fx) * to_fastt(g)).sum().backward()
    assert_close(fx.grad, x.grad, rtol=1e-3, atol=1e-4)
    assert_close(fmod.weight.grad, tmod.weight.grad, rtol=1e-3, atol=1e-4)
    assert_close(fmod.bias.grad, tmod.bias.grad, rtol=1e-3, atol=1e-4)
    assert fmod.running_mean.grad_fn is None


def test_batchnorm_no_tracking_and_errors():
    tmod, fmod = build(lambda m: m.BatchNorm2d(3, affine=False,
                                               track_running_stats=False))
    assert fmod.running_mean is None and fmod.weight is None
    fmod.eval()
    tmod.eval()
    x = rand(2, 3, 4, 4)
    assert_close(fmod(to_fastt(x)), tmod(x))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(fastt.randn(2, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(fastt.randn(1, 3))


# ---- dropout ----
def test_dropout():
    x = fastt.ones(200, 100)
    d = nn.Dropout(0.3)
    d.eval()
    assert d(x) is x
    d.train()
    fastt.manual_seed(0)
    y = to_numpy(d(x))
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert np.all(to_numpy(F.dropout(x, 1.0)) == 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    fastt.manual_seed(3)
    a = to_numpy(d(x))
    fastt.manual_seed(3)
    assert np.array_equal(a, to_numpy(d(x)))


def test_dropout2d_zeroes_whole_channels():
    x = fastt.ones(8, 50, 3, 3)
    fastt.manual_seed(1)
    y = to_numpy(nn.Dropout2d(0.4)(x))
    per_channel = y.reshape(8, 50, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel != 0).all(-1))
    kept = (per_channel != 0).all(-1).mean()
    assert abs(kept - 0.6) < 0.08
    np.testing.assert_allclose(y[y != 0], 1 / 0.6, rtol=1e-6)
    d = nn.Dropout2d(0.4)
    d.eval()
    assert d(x) is x


# ---- attention ----
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("average", [True, False])
def test_multihead_attention_self(batch_first, average):
    tmod, fmod = build(lambda m: m.MultiheadAttention(
        8, 2, batch_first=batch_first))
    tmod.eval()
    fmod.eval()
    x = rand(3, 5, 8)
    ref, ref_w = tmod(x, x, x, average_attn_weights=average)
    fx = to_fastt(x)
    out, w = fmod(fx, fx, fx, average_attn_weights=average)
    assert_close(out, ref)
    assert_close(w, ref_w)
    ref2, none_w = tmod(x, x, x, need_weights=False)
    out2, w2 = fmod(fx, fx, fx, need_weights=False)
    assert w2 is None and none_w is None
    assert_close(out2, ref2)


def test_multihead_attention_masks_cross_kdim():
    tmod, fmod = build(lambda m: m.MultiheadAttention(
        6, 3, kdim=4, vdim=5, batch_first=True))
    assert "q_proj_weight" in fmod.state_dict()
    q, k, v = rand(2, 3, 6), rand(2, 4, 4, seed=2), rand(2, 4, 5, seed=3)
    attn_mask = torch.tensor([[False, True, False, False]] * 3)
    kpm = torch.tensor([[False, False, False, True],
                        [False, False, False, False]])
    ref, ref_w = tmod(q, k, v, key_padding_mask=kpm, attn_mask=attn_mask)
    out, w = fmod(to_fastt(q), to_fastt(k), to_fastt(v),
                  key_padding_mask=fastt.tensor(kpm.numpy()),
                  attn_mask=fastt.tensor(attn_mask.numpy()))
    assert_close(out, ref)
    assert_close(w, ref_w)
    fmask = rand(3, 4, seed=5)
    ref, _ = tmod(q, k, v, attn_mask=fmask, need_weights=False)
    out, _ = fmod(to_fastt(q), to_fastt(k), to_fastt(v),
                  attn_mask=to_fastt(fmask), need_weights=False)
    assert_close(out, ref)


def test_multihead_attention_unbatched_bias_kv():
    tmod, fmod = build(lambda m: m.MultiheadAttention(
        4, 2, add_bias_kv=True, add_zero_attn=True))
    x = rand(3, 4)
    ref, ref_w = tmod(x, x, x)
    fx = to_fastt(x)
    out, w = fmod(fx, fx, fx)
    assert_close(out, ref)
    assert_close(w, ref_w)


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_grads(need_weights):
    tmod, fmod = build(lambda m: m.MultiheadAttention(8, 2,
                                                      batch_first=True))
    x = rand(2, 5, 8).requires_grad_()
    fx = to_fastt(x, requires_grad=True)
    kpm = torch.tensor([[False] * 4 + [True], [False] * 5])
    ref, _ = tmod(x, x, x, key_padding_mask=kpm, need_weights=need_weights)
    out, _ = fmod(fx, fx, fx, key_padding_mask=fastt.tensor(kpm.numpy()),
                  need_weights=need_weights)
    g = rand(*ref.shape, seed=3)
    (ref * g).sum().backward()
    (out * to_fastt(g)).sum().backward()
    assert_close(fx.grad, x.grad, rtol=1e-3, atol=1e-4)
    tparams = dict(tmod.named_parameters())
    for name, p in fmod.named_parameters():
        assert_close(p.grad, tparams[name].grad, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_grads(causal):
    q, k, v = (rand(2, 2, 4, 8, seed=s).requires_grad_() for s in (1, 2, 3))
    fq, fk, fv = (to_fastt(t, requires_grad=True) for t in (q, k, v))
    ref = TF.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out = F.scaled_dot_product_attention(fq, fk, fv, is_causal=causal)
    g = rand(*ref.shape, seed=4)
    (ref * g).sum().backward()
    (out * to_fastt(g)).sum().backward()
    for t, f in ((q, fq), (k, fk), (v, fv)):
        assert_close(f.grad, t.grad, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_layer(norm_first, activation):
    tmod, fmod = build(lambda m: m.TransformerEncoderLayer(
        8, 2, 16, dropout=0.1, activation=activation, batch_first=True,
        norm_first=norm_first))
    tmod.eval()
    fmod.eval()
    x = rand(2, 5, 8)
    kpm = torch.tensor([[False] * 4 + [True], [False] * 5])
    mask = tnn.Transformer.generate_square_subsequent_mask(5)
    ref = tmod(x, src_mask=mask, src_key_padding_mask=kpm)
    out = fmod(to_fastt(x), src_mask=to_fastt(mask),
               src_key_padding_mask=fastt.tensor(kpm.numpy()))
    assert_close(out, ref)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_grads(norm_first):
    tmod, fmod = build(lambda m: m.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, activation="gelu", batch_first=True,
        norm_first=norm_first))
    x = rand(2, 5, 8).requires_grad_()
    fx = to_fastt(x, requires_grad=True)
    g = rand(2, 5, 8, seed=6)
    (tmod(x) * g).sum().backward()
    (fmod(fx) * to_fastt(g)).sum().backward()
    assert_close(fx.grad, x.grad, rtol=1e-3, atol=1e-4)
    tparams = dict(tmod.named_parameters())
    for name, p in fmod.named_parameters():
        assert_close(p.grad, tparams[name].grad, rtol=1e-3, atol=1e-4)


def test_transformer_encoder_stack():
    def ctor(m):
        layer = m.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        return m.TransformerEncoder(layer, 2, norm=m.LayerNorm(8))
    tmod, fmod = build(ctor)
    assert list(fmod.state_dict()) == list(tmod.state_dict())
    tmod.eval()
    fmod.eval()
    x = rand(2, 4, 8)
    assert_close(fmod(to_fastt(x)), tmod(x))


@pytest.mark.parametrize("case", ["plain", "causal", "bool", "float",
                                  "scale"])
def test_scaled_dot_product_attention(case):
    q, k, v = rand(2, 3, 4, 8), rand(2, 3, 6, 8, seed=2), rand(2, 3, 6, 5,
                                                               seed=3)
    kwargs, fkwargs = {}, {}
    if case == "causal":
        k, v = k[:, :, :4], v[:, :, :4]
        kwargs = fkwargs = {"is_causal": True}
    elif case == "bool":
        m = torch.from_numpy(np.random.default_rng(4).random((4, 6)) > 0.3)
        m[:, 0] = True
        kwargs = {"attn_mask": m}
        fkwargs = {"attn_mask": fastt.tensor(m.numpy())}
    elif case == "float":
        m = rand(4, 6, seed=5)
        kwargs = {"attn_mask": m}
        fkwargs = {"attn_mask": to_fastt(m)}
    elif case == "scale":
        kwargs = fkwargs = {"scale": 0.3}
    ref = TF.scaled_dot_product_attention(q, k, v, **kwargs)
    out = F.scaled_dot_product_attention(to_fastt(q), to_fastt(k),
                                         to_fastt(v), **fkwargs)
    assert_close(out, ref)


# ---- losses ----
def _ce_cases():
    return [
        ({}, (5, 4), "index"),
        ({"reduction": "sum"}, (5, 4), "index"),
        ({"reduction": "none"}, (5, 4), "index"),
        ({"ignore_index": 1}, (6, 4), "index"),
        ({"label_smoothing": 0.2}, (6, 4), "index"),
        ({"label_smoothing": 0.1, "ignore_index": 0, "weight": True},
         (6, 4), "index"),
        ({"weight": True, "reduction": "mean"}, (6, 4), "index"),
        ({"weight": True, "reduction": "none"}, (6, 4), "index"),
        ({}, (3, 4, 5, 2), "index"),
        ({}, (4,), "index"),
        ({}, (5, 4), "probs"),
        ({"label_smoothing": 0.3, "weight": True}, (5, 4), "probs"),
        ({"reduction": "none"}, (3, 4, 2), "probs"),
        ({"reduction": "sum"}, (5, 4), "probs"),
    ]


@pytest.mark.parametrize("kwargs,shape,kind", _ce_cases())
def test_cross_entropy(kwargs, shape, kind):
    x = rand(*shape)
    c = shape[0] if len(shape) == 1 else shape[1]
    rng = np.random.default_rng(2)
    if kind == "index":
        tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
        target = torch.from_numpy(rng.integers(0, c, tshape))
    else:
        target = torch.softmax(rand(*shape, seed=3), 0 if len(shape) == 1
                               else 1)
    tk, fk = dict(kwargs), dict(kwargs)
    if kwargs.get("weight"):
        w = torch.from_numpy(rng.random(c).astype(np.float32) + 0.5)
        tk["weight"], fk["weight"] = w, to_fastt(w)
    ref = TF.cross_entropy(x, target, **tk)
    out = F.cross_entropy(to_fastt(x), to_fastt(target), **fk)
    assert_close(out, ref)
    ref_mod = tnn.CrossEntropyLoss(**tk)(x, target)
    out_mod = nn.CrossEntropyLoss(**fk)(to_fastt(x), to_fastt(target))
    assert_close(out_mod, ref_mod)


_NLL_CASES = [{}, {"reduction": "sum"}, {"ignore_index": 2},
              {"weight": True}, {"reduction": "none", "weight": True}]


@pytest.mark.parametrize("kwargs", _NLL_CASES)
def test_nll_loss_composed_path(kwargs, composed):
    test_nll_loss(kwargs)


@pytest.mark.parametrize("kwargs", _NLL_CASES)
def test_nll_loss(kwargs):
    x = torch.log_softmax(rand(6, 4), 1)
    target = torch.tensor([0, 2, 3, 1, 2, 0])
    tk, fk = dict(kwargs), dict(kwargs)
    if kwargs.get("weight"):
        w = torch.tensor([0.5, 1.0, 2.0, 1.5])
        tk["weight"], fk["weight"] = w, to_fastt(w)
    ref = tnn.NLLLoss(**tk)(x, target)
    out = nn.NLLLoss(**fk)(to_fastt(x), to_fastt(target))
    assert_close(out, ref)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    x, y = rand(4, 5), rand(4, 5, seed=2)
    for tcls, fcls, kw in [(tnn.MSELoss, nn.MSELoss, {}),
                           (tnn.L1Loss, nn.L1Loss, {}),
                           (tnn.SmoothL1Loss, nn.SmoothL1Loss, {}),
                           (tnn.SmoothL1Loss, nn.SmoothL1Loss,
                            {"beta": 0.5}),
                           (tnn.SmoothL1Loss, nn.SmoothL1Loss,
                            {"beta": 0.0}),
                           (tnn.HuberLoss, nn.HuberLoss, {"delta": 0.7})]:
        ref = tcls(reduction=reduction, **kw)(x, y)
        out = fcls(reduction=reduction, **kw)(to_fastt(x), to_fastt(y))
        assert_close(out, ref)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_losses(reduction):
    logits = rand(4, 5) * 5
    p = torch.sigmoid(logits)
    p[0, 0] = 0.0
    p[0, 1] = 1.0
    t = torch.from_numpy(
        np.random.default_rng(3).random((4, 5)).astype(np.float32))
    w = torch.rand(5) + 0.5
    pw = torch.rand(5) + 0.5
    ref = tnn.BCELoss(weight=w, reduction=reduction)(p, t)
    out = nn.BCELoss(weight=to_fastt(w), reduction=reduction)(to_fastt(p),
                                                              to_fastt(t))
    assert_close(out, ref, rtol=1e-4, atol=1e-4)
    ref = tnn.BCEWithLogitsLoss(weight=w, pos_weight=pw,
                                reduction=reduction)(logits, t)
    out = nn.BCEWithLogitsLoss(weight=to_fastt(w), pos_weight=to_fastt(pw),
                               reduction=reduction)(to_fastt(logits),
                                                    to_fastt(t))
    assert_close(out, ref)
    big = torch.tensor([100.0, -100.0, 0.0])
    tt = torch.tensor([0.0, 1.0, 0.5])
    assert_close(F.binary_cross_entropy_with_logits(to_fastt(big),
                                                    to_fastt(tt)),
                 TF.binary_cross_entropy_with_logits(big, tt))
    with pytest.raises(ValueError, match=r"Using a target size \(fastt.Size"
                       r"\(\[4\]\)\) that is different to the input size "
                       r"\(fastt.Size\(\[3\]\)\)"):
        F.binary_cross_entropy(fastt.rand(3), fastt.rand(4))


def test_loss_legacy_args_and_bad_reduction():
    x, y = rand(3, 2), rand(3, 2, seed=1)
    assert nn.MSELoss(size_average=False).reduction == "sum"
    assert nn.MSELoss(reduce=False).reduction == "none"
    with pytest.raises(ValueError, match="avg is not a valid value for "
                                         "reduction"):
        F.mse_loss(to_fastt(x), to_fastt(y), reduction="avg")


@pytest.mark.parametrize("kwargs,shape,kind", _ce_cases())
def test_cross_entropy_composed_path(kwargs, shape, kind, composed):
    test_cross_entropy(kwargs, shape, kind)


@pytest.mark.parametrize("kwargs,shape,kind", _ce_cases())
def test_cross_entropy_composed_grad(kwargs, shape, kind, composed):
    test_cross_entropy_grad(kwargs, shape, kind)


@pytest.mark.parametrize("kwargs,shape,kind", _ce_cases())
def test_cross_entropy_grad(kwargs, shape, kind):
    x = rand(*shape).requires_grad_()
    c = shape[0] if len(shape) == 1 else shape[1]
    rng = np.random.default_rng(2)
    if kind == "index":
        tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
        target = torch.from_numpy(rng.integers(0, c, tshape))
    else:
        target = torch.softmax(rand(*shape, seed=3), 0 if len(shape) == 1
                               else 1)
    tk, fk = dict(kwargs), dict(kwargs)
    if kwargs.get("weight"):
        w = torch.from_numpy(rng.random(c).astype(np.float32) + 0.5)
        tk["weight"], fk["weight"] = w, to_fastt(w)
    fx = to_fastt(x, requires_grad=True)
    ref = TF.cross_entropy(x, target, **tk)
    out = F.cross_entropy(fx, to_fastt(target), **fk)
    g = rand(*ref.shape, seed=8)
    (ref * g).sum().backward()
    (out * to_fastt(g)).sum().backward()
    assert_close(fx.grad, x.grad)


def test_losses_grad():
    x, y = rand(4, 5).requires_grad_(), rand(4, 5, seed=2)
    t = torch.from_numpy(
        np.random.default_rng(3).random((4, 5)).astype(np.float32))
    for tf, ff, target in [
            (TF.mse_loss, F.mse_loss, y), (TF.l1_loss, F.l1_loss, y),
            (TF.smooth_l1_loss, F.smooth_l1_loss, y),
            (TF.binary_cross_entropy_with_logits,
             F.binary_cross_entropy_with_logits, t)]:
        x.grad = None
        fx = to_fastt(x, requires_grad=True)
        tf(x, target).backward()
        ff(fx, to_fastt(target)).backward()
        assert_close(fx.grad, x.grad)


# ---- functional odds and ends ----
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate",
                                  "circular"])
def test_pad(mode):
    x = rand(2, 3, 5, 6)
    pads = (1, 2, 2, 0)
    kw = {"value": 1.5} if mode == "constant" else {}
    assert_close(F.pad(to_fastt(x), pads, mode=mode, **kw),
                 TF.pad(x, pads, mode=mode, **kw))
    if mode == "constant":
        assert_close(F.pad(to_fastt(x), (-1, 2, 0, -2)),
                     TF.pad(x, (-1, 2, 0, -2)))


def test_functional_misc():
    x = rand(4, 6)
    fx = to_fastt(x)
    assert_close(F.normalize(fx), TF.normalize(x))
    assert_close(F.normalize(fx, p=1.0, dim=0), TF.normalize(x, p=1.0, dim=0))
    assert_close(F.softmax(fx, dim=0), TF.softmax(x, dim=0))
    assert_close(F.log_softmax(fx, dim=1, dtype=fastt.float64),
                 TF.log_softmax(x, dim=1, dtype=torch.float64))
    assert F.log_softmax(fx, 1, dtype=fastt.float64).dtype == fastt.float64
    idx = torch.tensor([0, 3, 2])
    assert_close(F.one_hot(fastt.tensor(idx.numpy()), 5),
                 TF.one_hot(idx, 5))
    assert_close(F.linear(fx, to_fastt(rand(3, 6))),
                 TF.linear(x, rand(3, 6)))
    assert_close(F.relu(fx), TF.relu(x))
    assert_close(F.leaky_relu(fx, 0.3), TF.leaky_relu(x, 0.3))
    assert_close(F.gelu(fx, approximate="tanh"),
                 TF.gelu(x, approximate="tanh"))
    assert_close(F.silu(fx), TF.silu(x))
    assert_close(F.glu(fx), TF.glu(x))
    assert_close(F.logsigmoid(fx), TF.logsigmoid(x))
    assert_close(F.hardtanh(fx), TF.hardtanh(x))
    assert_close(F.relu6(fx * 4), TF.relu6(x * 4))
    assert_close(F.cosine_similarity(fx, fx * 2 + 1),
                 TF.cosine_similarity(x, x * 2 + 1))
    assert_close(F.kl_div(F.log_softmax(fx, 1), F.softmax(fx * 2, 1),
                          reduction="batchmean"),
                 TF.kl_div(TF.log_softmax(x, 1), TF.softmax(x * 2, 1),
                           reduction="batchmean"))
    y = rand(3, 4, 5)
    assert_close(F.group_norm(to_fastt(y), 2), TF.group_norm(y, 2))
    assert_close(F.instance_norm(to_fastt(y)), TF.instance_norm(y))
    assert_close(F.max_pool1d(to_fastt(y), 2), TF.max_pool1d(y, 2))
    assert_close(F.avg_pool1d(to_fastt(y), 2), TF.avg_pool1d(y, 2))
    z = rand(2, 3, 7, 5)
    assert_close(F.adaptive_max_pool2d(to_fastt(z), (3, 2)),
                 TF.adaptive_max_pool2d(z, (3, 2)))


def test_functional_layer_norm_matches_module_path():
    x = rand(3, 4, 5)
    w, b = rand(5, seed=2), rand(5, seed=3)
    assert_close(F.layer_norm(to_fastt(x), (5,), to_fastt(w), to_fastt(b)),
                 TF.layer_norm(x, (5,), w, b))
    assert_close(F.rms_norm(to_fastt(x), (5,), to_fastt(w)),
                 TF.rms_norm(x, (5,), w))


def test_batch_norm_functional_eval():
    x = rand(4, 3, 2)
    rm, rv = rand(3, seed=1), rand(3, seed=2).abs() + 0.5
    w, b = rand(3, seed=3), rand(3, seed=4)
    assert_close(F.batch_norm(to_fastt(x), to_fastt(rm), to_fastt(rv),
                              to_fastt(w), to_fastt(b)),
                 TF.batch_norm(x, rm, rv, w, b))


# ---- init ----
def test_init_statistics_and_gain():
    assert nn.init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(
        tnn.init.calculate_gain("leaky_relu", 0.2))
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    with pytest.raises(ValueError, match="Unsupported nonlinearity nope"):
        nn.init.calculate_gain("nope")
    fastt.manual_seed(0)
    w = fastt.empty(400, 300)
    nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = 1 / math.sqrt(300)
    a = to_numpy(w)
    assert a.max() <= bound and a.min() >= -bound
    assert abs(a.std() - bound / math.sqrt(3)) < 2e-3
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(to_numpy(w).std() - math.sqrt(2 / 400)) < 2e-3
    nn.init.xavier_uniform_(w)
    assert abs(to_numpy(w).std() - math.sqrt(2 / 700)) < 2e-3
    nn.init.xavier_normal_(w, gain=2.0)
    assert abs(to_numpy(w).std() - 2 * math.sqrt(2 / 700)) < 3e-3
    t = fastt.empty(100, 50)
    nn.init.trunc_normal_(t, std=1.0, a=-1.0, b=1.5)
    a = to_numpy(t)
    assert a.min() >= -1.0 and a.max() <= 1.5 and a.min() < -0.99
    nn.init.constant_(w, 0.25)
    assert np.all(to_numpy(w) == 0.25)
    nn.init.zeros_(w)
    assert np.all(to_numpy(w) == 0)
    nn.init.ones_(w)
    assert np.all(to_numpy(w) == 1)
    o = fastt.empty(40, 30)
    nn.init.orthogonal_(o)
    q = to_numpy(o).astype(np.float64)
    np.testing.assert_allclose(q.T @ q, np.eye(30), atol=1e-5)
    o = fastt.empty(3, 2, 4)  # rows < cols: orthonormal rows
    nn.init.orthogonal_(o, gain=2.0)
    q = to_numpy(o).reshape(3, 8).astype(np.float64)
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-5)
    e = fastt.empty(3, 4)
    nn.init.eye_(e)
    assert_close(e, np.eye(3, 4, dtype=np.float32))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(fastt.empty(3))
    with pytest.raises(ValueError, match="Mode"):
        nn.init.kaiming_uniform_(fastt.empty(3, 3), mode="fan")


def test_init_uses_fastt_rng():
    fastt.manual_seed(5)
    a = nn.Linear(4, 3)
    fastt.manual_seed(5)
    b = nn.Linear(4, 3)
    assert np.array_equal(to_numpy(a.weight), to_numpy(b.weight))
    assert np.array_equal(to_numpy(a.bias), to_numpy(b.bias))
    bound = 1 / 2
    assert np.abs(to_numpy(a.bias)).max() <= bound


# ---- utils ----
def _with_grads(shapes, seed=0):
    params, grads = [], []
    for i, s in enumerate(shapes):
        p = nn.Parameter(fastt.zeros(*s))
        g = rand(*s, seed=seed + i)
        p.grad = to_fastt(g)
        params.append(p)
        grads.append(g)
    return params, grads


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm(norm_type):
    params, grads = _with_grads([(3, 4), (5,), (2, 2)])
    tparams = []
    for g in grads:
        tp = torch.zeros(g.shape, requires_grad=True)
        tp.grad = g.clone()
        tparams.append(tp)
    ref = tnn.utils.clip_grad_norm_(tparams, 1.5, norm_type)
    total = nn.utils.clip_grad_norm_(params, 1.5, norm_type)
    assert_close(total, ref)
    for p, tp in zip(params, tparams, strict=True):
        assert_close(p.grad, tp.grad)
    # under the threshold: gradients untouched
    params, grads = _with_grads([(3,)])
    nn.utils.clip_grad_norm_(params, 100.0)
    assert_close(params[0].grad, grads[0])


def test_clip_grad_norm_nonfinite_and_value():
    params, _ = _with_grads([(3,)])
    params[0].grad = fastt.tensor([1.0, float("inf"), 0.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    params, grads = _with_grads([(4, 3)])
    nn.utils.clip_grad_value_(params, 0.5)
    assert_close(params[0].grad, grads[0].clamp(-0.5, 0.5))
    vec = nn.utils.parameters_to_vector(params)
    assert tuple(vec.shape) == (12,)
    nn.utils.vector_to_parameters(fastt.arange(12).float(), params)
    assert_close(params[0], np.arange(12, dtype=np.float32).reshape(4, 3))


def test_softplus_family_gradient_at_zero_matches_torch():
    # log1p(exp(-|x|)) + relu(x) has a zero one-sided slope at 0; the true
    # derivative is sigmoid(0) = 1/2.
    cases = [
        (lambda L, x: L.nn.functional.softplus(x)),
        (lambda L, x: L.nn.functional.softplus(x, beta=2.0)),
        (lambda L, x: L.nn.functional.logsigmoid(x)),
        (lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(
            x, L.full_like(x, 0.2), reduction="none")),
        (lambda L, x: L.nn.functional.mish(x)),
    ]
    for fn in cases:
        grads = []
        for L in (fastt, torch):
            x = L.tensor([0.0, -1.5, 2.0, 25.0, -25.0], dtype=L.float64,
                         requires_grad=True)
            y = fn(L, x)
            g, = L.autograd.grad(y.sum(), x)
            grads.append((y.detach().tolist(), g.tolist()))
        for a, b in zip(grads[0], grads[1]):
            assert max(abs(u - v) for u, v in zip(a, b)) < 1e-12, (a, b)

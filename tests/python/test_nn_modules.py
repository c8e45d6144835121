"""fastt.nn.Module's API against torch.nn.Module's: registration and
traversal order, state_dict keys and load_state_dict errors, hooks, repr,
train/eval, zero_grad, dtype moves, containers, Parameter. To add a case,
build the same architecture in both libraries and compare."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import fastt
import fastt.nn as nn

torch = pytest.importorskip("torch")
tnn = torch.nn

def _net(m):
    class Block(m.Module):
        def __init__(self):
            super().__init__()
            self.conv = m.Conv2d(3, 4, 3, padding=1)
            self.bn = m.BatchNorm2d(4)
            self.act = m.ReLU()

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))

    class Net(m.Module):
        def __init__(self):
            super().__init__()
            self.features = m.Sequential(Block(), m.MaxPool2d(2))
            self.heads = m.ModuleList([m.Linear(16, 5), m.Linear(16, 2)])
            self.extra = m.ModuleDict({"emb": m.Embedding(7, 3),
                                       "ln": m.LayerNorm(3)})
            self.scale = m.Parameter(
                (torch if m is tnn else fastt).ones(1))
            self.register_buffer("steps", (torch if m is tnn else fastt)
                                 .zeros(2))
            self.register_buffer("cache", (torch if m is tnn else fastt)
                                 .zeros(3), persistent=False)
            self.flat = m.Flatten()

        def forward(self, x):
            y = self.flat(self.features(x))
            return self.heads[0](y) * self.scale

    return Net()


# ---- traversal / state_dict ----
def test_names_and_order_match_torch():
    t, f = _net(tnn), _net(nn)
    assert [n for n, _ in f.named_parameters()] == \
        [n for n, _ in t.named_parameters()]
    assert [n for n, _ in f.named_buffers()] == \
        [n for n, _ in t.named_buffers()]
    assert [n for n, _ in f.named_modules()] == \
        [n for n, _ in t.named_modules()]
    assert [n for n, _ in f.named_children()] == \
        [n for n, _ in t.named_children()]
    assert list(f.state_dict().keys()) == list(t.state_dict().keys())
    assert "cache" not in f.state_dict()
    assert [n for n, _ in f.named_parameters(prefix="m", recurse=False)] == \
        ["m.scale"]
    assert len(list(f.parameters())) == len(list(t.parameters()))
    assert len(list(f.modules())) == len(list(t.modules()))
    assert [type(c).__name__ for c in f.children()] == \
        [type(c).__name__ for c in t.children()]


def test_shared_parameters_remove_duplicate():
    for m in (tnn, nn):
        lin = m.Linear(2, 2)
        seq = m.Sequential(lin, lin)
        assert [n for n, _ in seq.named_parameters()] == ["0.weight",
                                                          "0.bias"]
        assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
        assert len(list(seq.named_modules())) == 2
        assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight",
                                          "1.bias"]


def test_state_dict_roundtrip_from_torch_and_back():
    t, f = _net(tnn), _net(nn)
    sd = {k: fastt.tensor(v.numpy()) for k, v in t.state_dict().items()}
    res = f.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    for (k, v), (k2, v2) in zip(f.state_dict().items(),
                                t.state_dict().items(), strict=True):
        assert k == k2
        np.testing.assert_array_equal(v.numpy(), v2.numpy())
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(
        np.float32)
    t.eval()
    f.eval()
    np.testing.assert_allclose(
        f(fastt.tensor(x)).numpy(),
        t(torch.from_numpy(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    # state_dict values are detached aliases of the parameters
    assert f.state_dict()["scale"].data_ptr() == f.scale.data_ptr()
    kept = f.state_dict(keep_vars=True)
    assert kept["scale"] is f.scale
    assert f.state_dict(prefix="p.").keys() == \
        t.state_dict(prefix="p.").keys()


def _err(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


def test_load_state_dict_errors_match_torch():
    t, f = tnn.Linear(2, 3), nn.Linear(2, 3)
    cases = [
        ({"weight": (3, 2), "foo": (1,)}, True),
        ({"weight": (3, 3), "bias": (3,)}, True),
        ({"weight": (3, 2), "bias": (3,), "x.y": (1,)}, True),
    ]
    for spec, strict in cases:
        tsd = {k: torch.ones(s) for k, s in spec.items()}
        fsd = {k: fastt.ones(s) for k, s in spec.items()}
        terr = _err(lambda: t.load_state_dict(tsd, strict=strict))
        ferr = _err(lambda: f.load_state_dict(fsd, strict=strict))
        assert terr[0] is ferr[0]
        assert ferr[1] == terr[1].replace("torch.", "fastt.")
    res = f.load_state_dict({"weight": fastt.ones(3, 2),
                             "foo": fastt.ones(1)}, strict=False)
    tres = t.load_state_dict({"weight": torch.ones(3, 2),
                              "foo": torch.ones(1)}, strict=False)
    assert res.missing_keys == tres.missing_keys == ["bias"]
    assert res.unexpected_keys == tres.unexpected_keys == ["foo"]
    assert np.all(f.weight.numpy() == 1)
    with pytest.raises(TypeError, match="Expected state_dict to be "
                                        "dict-like, got <class 'list'>"):
        f.load_state_dict([1, 2])


def test_load_state_dict_nested_missing_unexpected():
    t, f = _net(tnn), _net(nn)
    tsd = t.state_dict()
    del tsd["heads.1.bias"]
    tsd["heads.2.weight"] = torch.ones(1)
    tsd["extra.ln.gamma"] = torch.ones(1)
    fsd = {k: fastt.tensor(v.numpy()) for k, v in tsd.items()}
    terr = _err(lambda: t.load_state_dict(tsd))
    ferr = _err(lambda: f.load_state_dict(fsd))
    assert ferr == terr
    res = f.load_state_dict(fsd, strict=False)
    tres = t.load_state_dict(tsd, strict=False)
    assert res.missing_keys == tres.missing_keys
    assert res.unexpected_keys == tres.unexpected_keys


def test_load_state_dict_assign():
    f = nn.Linear(2, 2)
    w = fastt.ones(2, 2)
    f.load_state_dict({"weight": w, "bias": fastt.zeros(2)}, assign=True)
    assert isinstance(f.weight, nn.Parameter)
    assert f.weight.data_ptr() == w.data_ptr()


# ---- repr ----
def test_repr_matches_torch():
    for ctor in [
            _net,
            lambda m: m.Sequential(m.Linear(3, 4), m.ReLU(),
                                   m.Dropout(0.2)),
            lambda m: m.Sequential(OrderedDict(
                [("fc", m.Linear(2, 2)), ("act", m.GELU("tanh"))])),
            lambda m: m.ModuleList([m.Linear(2, 2) for _ in range(3)]
                                   + [m.ReLU(), m.ReLU(), m.Tanh()]),
            lambda m: m.ModuleList(),
            lambda m: m.TransformerEncoderLayer(8, 2, 16),
            lambda m: m.MultiheadAttention(4, 2, batch_first=True),
            lambda m: m.Conv2d(2, 4, 3, stride=2, padding=1, dilation=2,
                               groups=2, bias=False,
                               padding_mode="reflect"),
            lambda m: m.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
            lambda m: m.Conv1d(2, 3, 3, padding="same"),
            lambda m: m.BatchNorm1d(3, momentum=None, affine=False),
            lambda m: m.LayerNorm([2, 3], elementwise_affine=False),
            lambda m: m.GroupNorm(2, 4), lambda m: m.RMSNorm(4, eps=1e-6),
            lambda m: m.Embedding(10, 3, padding_idx=1, max_norm=2.0),
            lambda m: m.MaxPool2d(3, 2, 1, ceil_mode=True),
            lambda m: m.AvgPool2d(2), lambda m: m.AdaptiveAvgPool2d((1, 2)),
            lambda m: m.LeakyReLU(0.2, inplace=True),
            lambda m: m.ReLU(inplace=True), lambda m: m.Softmax(dim=-1),
            lambda m: m.LogSoftmax(1), lambda m: m.Unflatten(1, (2, 2)),
            lambda m: m.Bilinear(2, 3, 4), lambda m: m.Identity(),
            lambda m: m.CrossEntropyLoss(label_smoothing=0.1),
            lambda m: m.BCEWithLogitsLoss(),
    ]:
        assert repr(ctor(nn)) == repr(ctor(tnn))


def test_custom_extra_repr_and_none_child():
    for m in (tnn, nn):
        class A(m.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.Linear(1, 1)
                self.register_module("gone", None)

            def extra_repr(self):
                return "hello=1\nworld=2"
        reprs = repr(A())
        if m is tnn:
            expected = reprs
    assert reprs == expected


# ---- attribute bookkeeping ----
def test_setattr_getattr_delattr_bookkeeping():
    m = nn.Module()
    p = nn.Parameter(fastt.ones(2))
    m.w = p
    assert m.w is p and m._parameters["w"] is p
    assert "w" in dir(m)
    m.w = None
    assert m.w is None and "w" in m._parameters
    assert list(m.named_parameters()) == []
    with pytest.raises(TypeError, match="cannot assign"):
        m.w = fastt.ones(2)
    m.register_buffer("b", fastt.zeros(1))
    m.b = fastt.ones(3)
    assert m._buffers["b"].shape == (3,)
    with pytest.raises(TypeError, match="cannot assign"):
        m.b = 3
    m.sub = nn.Linear(1, 1)
    assert m._modules["sub"] is m.sub
    with pytest.raises(TypeError, match="cannot assign"):
        m.sub = 5
    # re-assigning a name as another kind moves it between registries
    m.sub = nn.Parameter(fastt.ones(1))
    assert "sub" in m._parameters and "sub" not in m._modules
    del m.sub
    assert "sub" not in m._parameters
    with pytest.raises(AttributeError, match="has no attribute 'sub'"):
        m.sub
    del m.b
    assert "b" not in m._buffers and not hasattr(m, "b")
    m.plain = 3
    assert m.plain == 3 and "plain" not in m._parameters
    del m.plain
    # direct registry writes stay visible through attributes
    q = nn.Parameter(fastt.zeros(1))
    m._parameters["q"] = q
    assert m.q is q
    del m._parameters["q"]
    assert not hasattr(m, "q")


def test_registration_errors_match_torch():
    for m, T in ((tnn, torch), (nn, fastt)):
        mod = m.Linear(1, 1)
        with pytest.raises(KeyError, match="already exists"):
            mod.register_buffer("weight", T.ones(1))
        with pytest.raises(KeyError, match="contain"):
            mod.register_parameter("a.b", None)
        with pytest.raises(KeyError, match="empty string"):
            mod.register_buffer("", T.ones(1))
        with pytest.raises(TypeError, match="should be a string"):
            mod.register_parameter(1, None)
        with pytest.raises(TypeError, match="cannot assign"):
            mod.register_parameter("x", T.ones(1))
        with pytest.raises(TypeError, match="is not a Module subclass"):
            mod.add_module("x", 3)
        with pytest.raises(KeyError, match="already exists"):
            mod.add_module("weight", m.ReLU())

    class Early(nn.Module):
        def __init__(self):
            self.lin = nn.Linear(1, 1)
    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(TypeError, match=r"Module.__init__\(\) takes 1 "
                       r"positional argument but 2 were given"):
        nn.Module(3)


def test_get_submodule_parameter_buffer():
    f, t = _net(nn), _net(tnn)
    assert f.get_submodule("features.0.conv") is f.features[0].conv
    assert f.get_submodule("") is f
    assert f.get_parameter("heads.1.weight") is f.heads[1].weight
    assert f.get_buffer("features.0.bn.running_mean") is \
        f.features[0].bn.running_mean
    for target in ("features.9", "heads.0.weight.x", "flat.nope"):
        terr = _err(lambda: t.get_submodule(target))
        ferr = _err(lambda: f.get_submodule(target))
        assert terr == ferr


_BAD_INPUTS = [
    lambda m, T: m.Linear(3, 4)(T.randn(2, 5)),
    lambda m, T: m.Conv2d(3, 4, 3)(T.randn(1, 2, 5, 5)),
    lambda m, T: m.Conv2d(3, 4, 3, groups=2),
    lambda m, T: m.Conv2d(3, 4, 3, padding="full"),
    lambda m, T: m.Conv2d(3, 4, 3, stride=2, padding="same"),
    lambda m, T: m.Conv2d(3, 4, 3, padding_mode="mirror"),
    lambda m, T: m.LayerNorm(4)(T.randn(2, 5)),
    lambda m, T: m.Embedding(3, 2)(T.tensor([3])),
    lambda m, T: m.CrossEntropyLoss()(T.randn(2, 3), T.tensor([0, 3])),
    lambda m, T: m.MaxPool2d(5)(T.randn(1, 1, 3, 3)),
    lambda m, T: m.GroupNorm(3, 4),
    lambda m, T: m.MultiheadAttention(5, 2),
    lambda m, T: m.BatchNorm1d(3)(T.randn(2, 3, 4, 5)),
    lambda m, T: m.BatchNorm2d(3)(T.randn(1, 3, 1, 1)),
    lambda m, T: m.Dropout(-0.1),
    lambda m, T: m.BCELoss()(T.rand(3), T.rand(4)),
    lambda m, T: m.Embedding(3, 2, padding_idx=5),
    lambda m, T: m.Sequential(m.ReLU())[3],
    lambda m, T: m.ModuleList([m.ReLU()])[-2],
    lambda m, T: m.Linear(2, 2).get_submodule("weight"),
]


@pytest.mark.parametrize("case", range(len(_BAD_INPUTS)))
def test_error_types_match_torch(case):
    fn = _BAD_INPUTS[case]
    with pytest.raises(Exception) as terr:
        fn(tnn, torch)
    with pytest.raises(Exception) as ferr:
        fn(nn, fastt)
    assert type(ferr.value) is type(terr.value), (terr.value, ferr.value)
    # messages: torch's wording, with fastt names and an optional op prefix
    tmsg = str(terr.value).split("\n")[0].replace("torch.", "fastt.")
    fmsg = str(ferr.value).split("\n")[0]
    if case not in (6, 7):  # index errors word the same fact differently
        assert fmsg.split(": ", 1)[-1][:28] in tmsg or tmsg[:28] in fmsg, \
            (tmsg, fmsg)


# ---- modes, grads, dtypes ----
def test_train_eval_propagation():
    f = _net(nn)
    assert all(m.training for m in f.modules())
    assert f.eval() is f
    assert not any(m.training for m in f.modules())
    f.features.train()
    assert f.features[0].bn.training and not f.training
    f.train()
    assert all(m.training for m in f.modules())
    with pytest.raises(ValueError, match="boolean"):
        f.train("yes")


def test_zero_grad_and_requires_grad():
    f = nn.Linear(3, 2)
    assert all(p.requires_grad for p in f.parameters())
    f.requires_grad_(False)
    assert not any(p.requires_grad for p in f.parameters())
    f.requires_grad_()
    for p in f.parameters():
        p.grad = fastt.ones(p.shape)
    f.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in f.parameters())
    f.zero_grad()
    assert all(p.grad is None for p in f.parameters())


def test_to_double_float_keeps_parameter_identity():
    f = _net(nn)
    w = f.heads[0].weight
    assert f.double() is f
    assert f.heads[0].weight is w and w.dtype == fastt.float64
    assert f.features[0].bn.running_var.dtype == fastt.float64
    # integer buffers keep their dtype
    assert f.features[0].bn.num_batches_tracked.dtype == fastt.int64
    f.to(fastt.float32)
    assert w.dtype == fastt.float32
    f.to("cpu")
    f.to(device="cpu", dtype=fastt.float64)
    assert w.dtype == fastt.float64
    f.float().cpu()
    assert w.dtype == fastt.float32
    with pytest.raises(TypeError, match="floating point"):
        f.to(fastt.int32)
    x = fastt.randn(2, 3, 4, 4)
    assert f.eval()(x).dtype == fastt.float32


def test_apply_and_deepcopy_and_pickle():
    f = _net(nn)
    seen = []
    f.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Conv2d"
    g = copy.deepcopy(f)
    assert g.heads[0].weight is not f.heads[0].weight
    assert isinstance(g.heads[0].weight, nn.Parameter)
    np.testing.assert_array_equal(g.heads[0].weight.numpy(),
                                  f.heads[0].weight.numpy())
    # the copy's registries mirror into the copy, not the original
    g.heads[0].weight = nn.Parameter(fastt.zeros(5, 16))
    assert f.heads[0].weight.shape == (5, 16)
    assert np.all(g.heads[0].weight.numpy() == 0)
    assert not np.all(f.heads[0].weight.numpy() == 0)
    h = pickle.loads(pickle.dumps(f.heads))
    assert isinstance(h[0].weight, nn.Parameter)
    assert [n for n, _ in h.named_parameters()] == \
        [n for n, _ in f.heads.named_parameters()]
    h[0].bias = None
    assert h[0].bias is None


# ---- hooks ----
def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []

    def pre(mod, args):
        calls.append("pre")
        return (args[0] * 0,)

    def post(mod, args, out):
        calls.append("post")
        return out + 1

    h1 = lin.register_forward_pre_hook(pre)
    h2 = lin.register_forward_hook(post)
    y = lin(fastt.ones(1, 2))
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(y.numpy(), lin.bias.numpy()[None] + 1,
                               rtol=1e-6)
    h1.remove()
    h2.remove()
    h1.remove()  # twice is fine
    calls.clear()
    lin(fastt.ones(1, 2))
    assert calls == []
    # with_kwargs, prepend, context-manager handles, always_call
    order = []
    with lin.register_forward_hook(lambda m, a, o: order.append(1)):
        lin.register_forward_hook(lambda m, a, o: order.append(0),
                                  prepend=True)
        lin(fastt.ones(1, 2))
    assert order == [0, 1]
    lin._forward_hooks.clear()

    class KW(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale
    k = KW()
    k.register_forward_pre_hook(
        lambda m, a, kw: (a, {"scale": 3.0}), with_kwargs=True)
    seen = {}
    k.register_forward_hook(
        lambda m, a, kw, out: seen.update(kw), with_kwargs=True)
    assert k(fastt.ones(1)).item() == 3.0
    assert seen == {"scale": 3.0}

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    b = Boom()
    hit = []
    b.register_forward_hook(lambda m, a, o: hit.append(o), always_call=True)
    with pytest.raises(ValueError, match="^boom$"):
        b(fastt.ones(1))
    assert hit == [None]


def test_global_forward_hook():
    seen = []
    h = nn.register_module_forward_hook(
        lambda m, a, o: seen.append(type(m).__name__))
    try:
        nn.Sequential(nn.Linear(2, 2), nn.ReLU())(fastt.ones(1, 2))
    finally:
        h.remove()
    assert seen == ["Linear", "ReLU", "Sequential"]


def test_state_dict_and_load_hooks():
    lin = nn.Linear(1, 1)
    seen = []
    lin.register_state_dict_post_hook(
        lambda m, sd, prefix, local: seen.append(list(sd)))
    lin.register_load_state_dict_post_hook(
        lambda m, keys: seen.append(keys.missing_keys))
    sd = lin.state_dict()
    lin.load_state_dict(sd)
    assert seen == [["weight", "bias"], []]


def test_extra_state():
    class S(nn.Module):
        def __init__(self):
            super().__init__()
            self.v = 1

        def get_extra_state(self):
            return {"v": self.v}

        def set_extra_state(self, state):
            self.v = state["v"]
    s = S()
    sd = s.state_dict()
    assert sd["_extra_state"] == {"v": 1}
    sd["_extra_state"] = {"v": 5}
    s.load_state_dict(sd)
    assert s.v == 5


def test_missing_forward():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


# ---- containers ----
def test_sequential_api():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3
    assert isinstance(seq[-1], nn.Linear)
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2
    # slices keep the original names, as torch's do
    assert list(sub._modules) == ["1", "2"]
    seq.append(nn.Sigmoid())
    assert list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"]
    assert isinstance(seq[1], nn.Linear)
    seq.insert(1, nn.Tanh())
    assert isinstance(seq[1], nn.Tanh) and len(seq) == 4
    seq[0] = nn.Linear(2, 3)
    with pytest.raises(IndexError, match="index 10 is out of range"):
        seq[10]
    both = seq + nn.Sequential(nn.ReLU())
    assert len(both) == 5
    out = nn.Sequential(nn.Linear(2, 3), nn.ReLU())(fastt.randn(4, 2))
    assert out.shape == (4, 3) and out.numpy().min() >= 0
    assert [type(m).__name__ for m in seq] == ["Linear", "Tanh", "Linear",
                                               "Sigmoid"]


def test_modulelist_moduledict_api():
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh(), nn.Sigmoid()])
    ml += [nn.GELU()]
    assert len(ml) == 5 and isinstance(ml[-1], nn.GELU)
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    ml.insert(0, nn.Identity())
    assert isinstance(ml[0], nn.Identity) and isinstance(ml[1], nn.Linear)
    del ml[0]
    assert isinstance(ml[0], nn.Linear) and list(ml._modules)[0] == "0"
    assert len(list(ml.parameters())) == 2
    md = nn.ModuleDict({"a": nn.Linear(1, 2)})
    md["b"] = nn.ReLU()
    md.update([("c", nn.Tanh())])
    assert list(md.keys()) == ["a", "b", "c"] and "b" in md
    assert md.pop("b").__class__ is nn.ReLU and len(md) == 2
    assert [k for k in md] == ["a", "c"]
    pl = nn.ParameterList([fastt.ones(2), nn.Parameter(fastt.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"x": fastt.ones(1)})
    assert isinstance(pd["x"], nn.Parameter) and list(pd) == ["x"]


# ---- Parameter ----
def test_parameter_basics():
    data = fastt.arange(6).float().reshape(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, fastt.Tensor)
    assert p.requires_grad
    assert p.data_ptr() == data.data_ptr()  # aliases, no copy
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    q = p * 2
    assert type(q) is fastt.Tensor
    assert nn.Parameter().shape == (0,)
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter)
    np.testing.assert_array_equal(r.numpy(), p.numpy())


def test_buffer_marker():
    m = nn.Module()
    m.buf = nn.Buffer(fastt.ones(2), persistent=False)
    assert "buf" in m._buffers and "buf" in m._non_persistent_buffers_set
    assert "buf" not in m.state_dict()


def test_call_fast_path_semantics():
    # forward with defaults: the generic __call__ passes args and kwargs
    class M(nn.Module):
        def forward(self, x, y=0):
            return x + y
    assert M()(1, y=2) == 3
    # required-positional forward: the generated __call__ takes the same
    # arguments, by position or by name
    class P(nn.Module):
        def forward(self, a, b):
            return a - b
    p = P()
    assert p(5, 2) == 3 and p(b=2, a=5) == 3
    with pytest.raises(TypeError, match=r"forward\(\) takes 3 positional "
                                        r"arguments but 4 were given"):
        p(1, 2, 3)
    # an instance-level forward override is honoured
    p.forward = lambda a, b: a * b
    assert p(5, 2) == 10
    # subclasses pick up their own forward; a user __call__ wins
    class Q(P):
        def forward(self, a):
            return -a
    assert Q()(4) == -4

    class R(nn.Module):
        def __call__(self, *args):
            return "custom"

        def forward(self, x):
            return x
    class S(R):
        def forward(self, x):
            return x
    assert R()(1) == "custom" and S()(1) == "custom"
    # hooks still run on the fast path
    seen = []
    p2 = P()
    p2.register_forward_pre_hook(lambda m, args: seen.append(args))
    assert p2(3, 1) == 2 and seen == [(3, 1)]


def test_parameter_repr_matches_torch():
    assert repr(nn.Parameter(fastt.ones(2))) == \
        repr(tnn.Parameter(torch.ones(2)))
    assert repr(nn.Parameter(fastt.ones(2), requires_grad=False)) == \
        repr(tnn.Parameter(torch.ones(2), requires_grad=False))
    p = nn.Parameter(fastt.ones(2))
    assert p.is_leaf and p.grad_fn is None
    assert (p * 2).requires_grad


def test_training_step_matches_torch():
    t, f = tnn.Sequential(tnn.Linear(4, 8), tnn.ReLU(), tnn.Linear(8, 3)), \
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    f.load_state_dict({k: fastt.tensor(v.numpy())
                       for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    y = np.array([0, 2, 1, 1, 0])
    tl = tnn.functional.cross_entropy(t(torch.from_numpy(x)),
                                      torch.from_numpy(y))
    fl = nn.functional.cross_entropy(f(fastt.tensor(x)), fastt.tensor(y))
    tl.backward()
    fl.backward()
    np.testing.assert_allclose(fl.item(), tl.item(), rtol=1e-5)
    for (n, p), (_, tp) in zip(f.named_parameters(), t.named_parameters(),
                               strict=True):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(),
                                   rtol=1e-4, atol=1e-6)
    tn = tnn.utils.clip_grad_norm_(t.parameters(), 0.1)
    fn = nn.utils.clip_grad_norm_(f.parameters(), 0.1)
    np.testing.assert_allclose(fn.item(), tn.item(), rtol=1e-5)
    f.zero_grad()
    assert all(p.grad is None for p in f.parameters())

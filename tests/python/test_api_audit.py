"""Regression tests from an audit of the Python API against torch 2.13:
print format, Size, Tensor extras (H, type(), __format__), where(cond),
out= on reductions and clamp, input= keywords, finfo/iinfo. Expected
strings are torch's output with 'torch.' written as 'fastt.'."""
import math

import numpy as np
import pytest

import fastt


# ---- repr / str: torch/_tensor_str.py with default print options ----
@pytest.mark.parametrize("make, expected", [
    # widths come from the nonzero finite values only
    (lambda: fastt.tensor([float("nan"), 1.0]), "tensor([nan, 1.])"),
    (lambda: fastt.tensor([-0.0, 1.0]), "tensor([-0., 1.])"),
    # int mode switches to sci when max/min > 1000
    (lambda: fastt.tensor([1.0, 2000.0]), "tensor([1.0000e+00, 2.0000e+03])"),
    # empty tensors always name a non-default dtype
    (lambda: fastt.zeros(0, dtype=fastt.int64),
     "tensor([], dtype=fastt.int64)"),
    (lambda: fastt.zeros(2, 0, dtype=fastt.bool),
     "tensor([], size=(2, 0), dtype=fastt.bool)"),
    # int64 prints exactly (no trip through double)
    (lambda: fastt.tensor([2**62 + 1, -3]),
     "tensor([4611686018427387905,                  -3])"),
    (lambda: fastt.tensor(1.5, dtype=fastt.float64),
     "tensor(1.5000, dtype=fastt.float64)"),
])
def test_repr_matches_torch(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_repr_summary_and_line_wrap():
    assert repr(fastt.arange(2000.0)) == (
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, "
        "1.9980e+03,\n        1.9990e+03])")
    assert repr(fastt.arange(20.0) * 1000.5) == (
        "tensor([    0.0000,  1000.5000,  2001.0000,  3001.5000,  4002.0000,"
        "  5002.5000,\n         6003.0000,  7003.5000,  8004.0000,  9004.5000,"
        " 10005.0000, 11005.5000,\n        12006.0000, 13006.5000, 14007.0000,"
        " 15007.5000, 16008.0000, 17008.5000,\n        18009.0000, 19009.5000])")
    # a suffix that would pass column 80 goes on its own line
    assert repr(fastt.full((1200,), 1.5, dtype=fastt.float16)) == (
        "tensor([1.5000, 1.5000, 1.5000,  ..., 1.5000, 1.5000, 1.5000],\n"
        "       dtype=fastt.float16)")
    r = repr(fastt.arange(4000.0).reshape(2, 2000))
    assert r.startswith("tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ...,")
    assert "\n         3.9990e+03]])" in r


def test_repr_against_torch_random():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    for sh in [(), (5,), (3, 4), (2, 3, 4), (1200,), (3, 500), (7, 0)]:
        for a in (rng.standard_normal(sh) * 10.0 ** rng.integers(-6, 10),
                  np.round(rng.standard_normal(sh) * 3),
                  rng.integers(-2**40, 2**40, sh),
                  rng.standard_normal(sh) > 0):
            want = repr(torch.tensor(a)).replace("torch.", "fastt.")
            assert repr(fastt.tensor(a)) == want


# ---- Tensor extras ----
def test_format_0d_uses_the_value():
    assert f"{fastt.tensor(1.5):.2f}" == "1.50"
    assert f"{fastt.tensor(3)}" == "3"
    assert f"{fastt.ones(2)}" == "tensor([1., 1.])"
    with pytest.raises(TypeError, match="unsupported format string passed "
                                        "to Tensor.__format__"):
        f"{fastt.ones(2):.2f}"


def test_H_mH_requires_grad_type():
    a = fastt.arange(6.0).reshape(2, 3)
    assert a.H.tolist() == a.T.tolist()
    assert fastt.ones(2, 3, 4).mH.shape == (2, 4, 3)
    with pytest.raises(RuntimeError, match=r"tensor.H is only supported on "
                       r"matrices \(2-D tensors\). Got 3-D tensor. For "
                       r"batches of matrices, consider using tensor.mH"):
        fastt.ones(2, 2, 2).H
    assert a.requires_grad is False
    assert a.type() == "fastt.FloatTensor"
    assert fastt.ones(1, dtype=fastt.int64).type() == "fastt.LongTensor"
    assert a.type(fastt.int32).dtype == fastt.int32
    assert a.type(fastt.float32) is a


def test_invert_float_is_type_error():
    with pytest.raises(TypeError, match="integer and Boolean"):
        ~fastt.ones(2)
    assert (~fastt.tensor([True, False])).tolist() == [False, True]


def test_where_condition_only_is_nonzero_tuple():
    r = fastt.where(fastt.tensor([[0, 1], [1, 1]]))
    assert isinstance(r, tuple) and len(r) == 2
    assert r[0].tolist() == [0, 1, 1] and r[1].tolist() == [1, 0, 1]


def test_tensor_from_any_sequence():
    assert fastt.tensor(range(3)).tolist() == [0, 1, 2]
    assert fastt.tensor(range(3)).dtype == fastt.int64
    assert fastt.tensor(range(2), dtype=fastt.float64).dtype == fastt.float64
    with pytest.raises(TypeError, match=r"new\(\): invalid data type 'str'"):
        fastt.tensor("abc")
    with pytest.raises(RuntimeError, match="Could not infer dtype of object"):
        fastt.tensor(object())


# ---- Size ----
def test_size_slices_and_concat_stay_size():
    s = fastt.ones(2, 3, 4).shape
    assert type(s[1:]) is fastt.Size and s[1:] == (3, 4)
    assert type(s + (5,)) is fastt.Size and s + (5,) == (2, 3, 4, 5)
    assert type(s[0]) is int
    assert fastt.Size([2, 3]) == (2, 3) and fastt.Size() == ()
    with pytest.raises(TypeError, match="item 0 is 'float'"):
        fastt.Size([1.5])


# ---- in-place clamps, randint_like ----
def test_clamp_min_max_inplace_and_randint_like():
    a = fastt.tensor([0.0, 5.0])
    assert a.clamp_min_(1.0) is a and a.tolist() == [1.0, 5.0]
    assert fastt.clamp_max_(a, 2.0) is a and a.tolist() == [1.0, 2.0]
    r = fastt.randint_like(fastt.zeros(100, dtype=fastt.int32), 3, 5)
    assert r.dtype == fastt.int32 and r.shape == (100,)
    assert set(r.tolist()) <= {3, 4}
    assert set(fastt.randint_like(fastt.zeros(50), 2).tolist()) <= {0.0, 1.0}


# ---- keywords ----
def test_input_keyword_for_functions():
    assert fastt.add(input=fastt.ones(1), other=2, alpha=3).tolist() == [7.0]
    assert fastt.sum(input=fastt.ones(2, 3), dim=0).tolist() == [2.0] * 3
    with pytest.raises(TypeError, match="missing required argument 'input'"):
        fastt.add(other=2)


@pytest.mark.parametrize("call, shape, expected", [
    (lambda o: fastt.sum(fastt.ones(2, 3), 1, out=o), (2,), [3.0, 3.0]),
    (lambda o: fastt.mean(fastt.ones(2, 3), dim=0, out=o), (3,), [1.0] * 3),
    (lambda o: fastt.ones(2, 3).sum(out=o), (), 6.0),
    (lambda o: fastt.prod(fastt.full((2, 2), 2.0), 1, out=o), (2,),
     [4.0, 4.0]),
    (lambda o: fastt.amax(fastt.arange(4.0).view(2, 2), 1, out=o), (2,),
     [1.0, 3.0]),
    (lambda o: fastt.clamp(fastt.arange(4.0), 1, 2, out=o), (4,),
     [1.0, 1.0, 2.0, 2.0]),
    (lambda o: fastt.arange(4.0).clamp(min=fastt.tensor(2.0), out=o), (4,),
     [2.0, 2.0, 2.0, 3.0]),
])
def test_out_on_reductions_and_clamp(call, shape, expected):
    o = fastt.empty(*shape)
    assert call(o) is o
    assert o.tolist() == expected
    o = fastt.empty(0)  # resized like torch
    assert call(o) is o
    assert o.shape == shape and o.tolist() == expected


def test_out_dtype_rules():
    o = fastt.empty(2, dtype=fastt.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        fastt.sum(fastt.ones(2, 3), 1, out=o)
    o = fastt.empty(2, dtype=fastt.float64)
    fastt.sum(fastt.ones(2, 3), 1, out=o)
    assert o.dtype == fastt.float64 and o.tolist() == [3.0, 3.0]
    o = fastt.empty(2, dtype=fastt.bool)
    fastt.any(fastt.tensor([[0, 1], [0, 0]]), 1, out=o)
    assert o.tolist() == [True, False]
    with pytest.raises(TypeError, match=r"clamp_\(\) got an unexpected "
                                        r"keyword argument 'out'"):
        fastt.ones(2).clamp_(0, 1, out=fastt.empty(2))
    with pytest.raises(RuntimeError, match=r"output with shape \[5\]"):
        fastt.sum(fastt.ones(2, 3), 1, out=fastt.empty(5))


# ---- finfo / iinfo ----
def test_finfo_iinfo():
    f = fastt.finfo(fastt.float32)
    assert f.eps == 2.0 ** -23 and f.bits == 32
    assert fastt.finfo(fastt.float16).max == 65504.0
    assert fastt.finfo(fastt.bfloat16).eps == 2.0 ** -7
    assert fastt.finfo().dtype == "float32"
    assert math.isclose(fastt.finfo(fastt.float64).tiny, 2.2250738585072014e-308)
    assert (fastt.iinfo(fastt.int8).min, fastt.iinfo(fastt.int8).max) == \
        (-128, 127)
    assert fastt.iinfo(fastt.uint8).max == 255
    assert fastt.iinfo(fastt.int64).max == 2**63 - 1
    with pytest.raises(TypeError, match="finfo.* must be a floating dtype"):
        fastt.finfo(fastt.int32)
    with pytest.raises(TypeError, match="iinfo.* must be an integer dtype"):
        fastt.iinfo(fastt.float32)


# ---- tensor() from NumPy pieces ----
def test_tensor_from_list_of_ndarrays_keeps_their_dtype():
    t = fastt.tensor([np.ones(2), np.zeros(2)])
    assert t.dtype == fastt.float64 and t.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    t = fastt.tensor([np.ones(2, np.float32), np.zeros(2, np.float32)])
    assert t.dtype == fastt.float32
    t = fastt.tensor([np.ones(2, np.int32)], dtype=fastt.float16)
    assert t.dtype == fastt.float16 and t.shape == (1, 2)
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at "
                                         r"dim 1 \(got 3\)"):
        fastt.tensor([np.ones(2), np.ones(3)])


@pytest.mark.parametrize("data, dtype", [
    (lambda: [np.float64(1), np.float64(2)], "float64"),
    (lambda: [2.5, np.float64(1)], "float64"),
    (lambda: [[np.float64(1)], [np.float64(2)]], "float64"),
    (lambda: [np.int32(1), np.int32(2)], "int32"),
    (lambda: [[np.int32(1)], [2]], "int64"),
    (lambda: [np.int32(1), 2.5], "float32"),
    (lambda: [np.float16(1), True], "float16"),
])
def test_numpy_scalar_leaves_count_with_their_dtype(data, dtype):
    assert fastt.tensor(data()).dtype == getattr(fastt, dtype)


# ---- out= of elementwise ops: an empty out takes the result's shape ----
def test_elementwise_out_resizes_empty_out():
    o = fastt.empty(0)
    assert fastt.add(fastt.ones(2, 1), fastt.ones(3), alpha=2, out=o) is o
    assert o.shape == (2, 3) and o.tolist() == [[3.0] * 3] * 2
    o = fastt.empty(0)
    fastt.mul(fastt.ones(2), 3, out=o)
    assert o.tolist() == [3.0, 3.0]
    o = fastt.empty(0)
    fastt.exp(fastt.zeros(2, 2), out=o)
    assert o.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(RuntimeError, match="must match the size"):
        fastt.add(fastt.ones(2), fastt.ones(3), out=fastt.empty(0))
    # A non-empty wrong shape stays an error (torch resizes it, warning).
    with pytest.raises(RuntimeError, match=r"add: output with shape \[5\] "
                       r"doesn't match the broadcast shape \[2\]"):
        fastt.add(fastt.ones(2), fastt.ones(2), out=fastt.empty(5))


# ---- copy / pickle ----
@pytest.mark.parametrize("make", [
    lambda: fastt.arange(6.0).view(2, 3).T,
    lambda: fastt.tensor(3),
    lambda: fastt.ones(0, 2, dtype=fastt.int8),
    lambda: fastt.tensor([1.5, -2.0], dtype=fastt.bfloat16),
    lambda: fastt.tensor([True, False]),
])
def test_pickle_round_trip(make):
    import pickle
    x = make()
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is fastt.Tensor and y.dtype == x.dtype
    assert y.shape == x.shape and y.tolist() == x.tolist()
    assert y.numel() == 0 or y.data_ptr() != x.data_ptr()


def test_copy_shares_and_deepcopy_clones():
    import copy
    t = fastt.zeros(2, 2)
    d = copy.deepcopy(t)
    d[0, 0] = 9.0
    assert t[0, 0].item() == 0.0
    c = copy.copy(t)
    assert c is not t
    c[0, 0] = 7.0
    assert t[0, 0].item() == 7.0
    pair = copy.deepcopy([t, t])
    assert pair[0] is pair[1]
    import pickle
    assert pickle.loads(pickle.dumps(fastt.device("cpu"))) == fastt.device("cpu")


# ---- view(dtype) ----
def test_view_dtype_same_and_different_sizes():
    t = fastt.tensor([1.0, 2.0])
    v = t.view(fastt.int32)
    assert v.dtype == fastt.int32 and v.tolist() == [1065353216, 1073741824]
    v[0] = 0
    assert t.tolist() == [0.0, 2.0]  # shares memory
    a = fastt.arange(1.0, 9.0).reshape(2, 4)
    h = a.view(fastt.float16)
    assert h.shape == (2, 8) and h.stride() == (8, 1)
    d = a.view(fastt.float64)
    assert d.shape == (2, 2) and d.stride() == (2, 1)
    assert np.array_equal(d.numpy(), a.numpy().view(np.float64))
    s = a[:, 1:].view(fastt.int16)
    assert s.shape == (2, 6) and s.storage_offset() == 2
    with pytest.raises(RuntimeError, match="divisible by 2"):
        fastt.ones(2, 3).view(fastt.float64)
    with pytest.raises(RuntimeError, match="stride"):
        a.T.view(fastt.float16)
    with pytest.raises(RuntimeError, match="self.dim\\(\\) cannot be 0 to "
                       "view float32 as float16 \\(different element sizes"):
        fastt.tensor(1.0).view(fastt.float16)
    assert fastt.tensor([True]).view(fastt.uint8).tolist() == [1]


def test_zero_d_tensor_leaves_count_with_their_dtype():
    f64 = fastt.tensor(1.0, dtype=fastt.float64)
    assert fastt.tensor([f64]).dtype == fastt.float64
    assert fastt.tensor([fastt.tensor(1), 2.5]).dtype == fastt.float32
    i32 = fastt.tensor(1, dtype=fastt.int32)
    assert fastt.tensor([i32, i32]).dtype == fastt.int32
    assert fastt.tensor([fastt.tensor(True), 3]).dtype == fastt.int64
    # a one-element tensor is a scalar leaf, not a nested sequence
    assert fastt.tensor([fastt.ones(1, dtype=fastt.float64)]).shape == (1,)
    with pytest.raises(ValueError, match="one element tensors"):
        fastt.tensor([fastt.ones(2), fastt.ones(2)])


def test_nonzero_as_tuple_of_0d():
    assert [t.tolist() for t in fastt.tensor(1.0).nonzero(as_tuple=True)] == \
        [[0]]
    assert [t.tolist() for t in fastt.where(fastt.tensor(0.0))] == [[]]
    assert fastt.where(fastt.tensor(0.0))[0].dtype == fastt.int64


def test_manual_seed_full_uint64_range():
    fastt.manual_seed(2**64 - 1)
    a = fastt.rand(4)
    fastt.manual_seed(2**64 - 1)
    assert fastt.rand(4).tolist() == a.tolist()
    fastt.manual_seed(-1)  # wraps like torch
    with pytest.raises(OverflowError, match="seed: int too big to convert"):
        fastt.manual_seed(2**64)


def test_lerp_inplace_tensor_weight():
    a = fastt.zeros(3)
    a.lerp_(fastt.ones(3), fastt.tensor([0.0, 0.5, 1.0]))
    assert a.tolist() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize("call", [
    lambda a, out: fastt.cat([a, a], out=out),
    lambda a, out: fastt.stack([a, a], out=out),
    lambda a, out: fastt.matmul(a.view(2, 2), a.view(2, 2), out=out),
])
def test_out_writes_into_the_given_storage(call):
    a = fastt.arange(4).float()
    base = fastt.zeros(8)
    shape = call(a, None).shape
    n = 1
    for d in shape:
        n *= d
    out = base[:n].view(*shape)
    r = call(a, out)
    assert r is out
    # The result lands in out's memory, so the base tensor sees it too.
    assert base[:n].tolist() == call(a, None).flatten().tolist()

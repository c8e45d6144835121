"""The Tensor API a torch user relies on: properties, views, indexing and
index assignment, dunder rules, repr, factories, dtype/device objects."""
import numpy as np
import pytest

import fastt

try:
    import torch
except ImportError:
    torch = None


def arange(*shape, dtype=None):
    n = int(np.prod(shape)) if shape else 1
    t = fastt.arange(n).view(*shape) if shape else fastt.tensor(0)
    return t.to(dtype) if dtype else t


def test_version_and_dtypes():
    assert fastt.__version__ == "0.1.0"
    assert repr(fastt.float32) == "fastt.float32"
    assert fastt.float is fastt.float32 and fastt.long is fastt.int64
    assert fastt.double is fastt.float64 and fastt.half is fastt.float16
    assert fastt.float32.is_floating_point and not fastt.int8.is_floating_point
    assert fastt.float64.itemsize == 8 and fastt.bool.itemsize == 1
    assert fastt.int8.is_signed and not fastt.uint8.is_signed


def test_device_objects():
    d = fastt.device("cpu")
    assert repr(d) == "device(type='cpu')" and str(d) == "cpu"
    assert d.type == "cpu" and d.index is None
    assert fastt.device("cuda:1").index == 1
    assert fastt.device("cuda", 0) == fastt.device("cuda:0")
    assert fastt.ones(2).device == fastt.device("cpu")
    assert fastt.ones(2).device == "cpu"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda.* "
                       "device type at start of device string: tpu"):
        fastt.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:x'"):
        fastt.device("cuda:x")


def test_properties():
    t = fastt.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, fastt.Size)
    assert repr(t.shape) == "fastt.Size([2, 3, 4])"
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12
    assert t.dtype == fastt.float32 and t.is_contiguous()
    assert t.T.shape == (4, 3, 2) and t.mT.shape == (2, 4, 3)
    assert not t.transpose(0, 1).is_contiguous()
    assert t.data_ptr() == t.view(24).data_ptr()
    assert t[1].storage_offset() == 12
    assert t.element_size() == 4 and t.itemsize == 4 and t.nbytes == 96
    assert t.is_floating_point() and not t.is_cuda and t.is_cpu


def test_views_share_memory():
    t = arange(4, 4).float()
    v = t.view(16)
    v[0] = 100
    assert t[0, 0].item() == 100
    assert t.reshape(2, 8).shape == (2, 8)
    assert t.permute(1, 0).shape == (4, 4)
    assert t.unsqueeze(0).shape == (1, 4, 4) and t.flatten().shape == (16,)
    assert t[None].squeeze(0).shape == (4, 4)
    assert t.expand(2, 4, 4).shape == (2, 4, 4)
    assert t.narrow(0, 1, 2).shape == (2, 4)
    assert t.unflatten(1, (2, 2)).shape == (4, 2, 2)
    assert t.diagonal().tolist() == [100.0, 5.0, 10.0, 15.0]


INDICES = [
    0, -1, slice(1, 3), slice(None, None, 2), slice(-3, None), (1, 2),
    (slice(None), 1), (Ellipsis, 0), (None, 0), (0, None, slice(1, 3)),
    (Ellipsis,), (slice(1, None), Ellipsis, None), (1, slice(0, 4, 3), 2),
    [0, 2], ([0, 1], [1, 2]), (slice(None), [2, 0]), (0, [1, 1, 3]),
    (Ellipsis, [0, -1]), ([[0], [1]], [0, 2]),
]


@pytest.mark.parametrize("index", INDICES, ids=[repr(i) for i in INDICES])
def test_getitem_matches_numpy(index):
    a = np.arange(60).reshape(3, 4, 5)
    t = fastt.from_numpy(a)
    np_index = index
    if isinstance(index, list):
        np_index = np.array(index)
    got = t[index]
    exp = a[np_index]
    assert tuple(got.shape) == exp.shape
    np.testing.assert_array_equal(got.numpy(), exp)


def test_getitem_bool_mask_and_tensor_index():
    a = np.arange(12.0).reshape(3, 4)
    t = fastt.from_numpy(a)
    np.testing.assert_array_equal(t[t > 5].numpy(), a[a > 5])
    np.testing.assert_array_equal(t[fastt.tensor([2, 0])].numpy(), a[[2, 0]])
    np.testing.assert_array_equal(t[:, fastt.tensor([True, False, True,
                                                     False])].numpy(),
                                  a[:, [True, False, True, False]])
    assert t[fastt.tensor(1)].tolist() == a[1].tolist()


def test_setitem():
    t = fastt.zeros(3, 4)
    t[0] = 1
    t[1, 1:3] = fastt.tensor([5.0, 6.0])
    t[:, -1] = 7.5
    t[2][0] = 9
    t[t == 0] = -1
    t[[0, 2], [1, 1]] = fastt.tensor([3.0, 4.0])
    t[..., 0] += 10
    exp = np.array([[11, 3, 1, 7.5], [9, 5, 6, 7.5], [19, 4, -1, 7.5]])
    np.testing.assert_array_equal(t.numpy(), exp)
    t[1] = [1, 2, 3, 4]
    assert t[1].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_index_errors():
    t = fastt.zeros(3, 4)
    with pytest.raises(IndexError, match="index 3 is out of bounds for "
                                         "dimension 0 with size 3"):
        t[3]
    with pytest.raises(IndexError, match="too many indices for tensor of "
                                         "dimension 2"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="an index can only have a single "
                                         "ellipsis"):  # NumPy's rule
        t[..., ...]
    with pytest.raises(IndexError, match=r"only integers, slices .* are "
                                         r"valid indices \(got str\)"):
        t["a"]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(IndexError, match="index 5 is out of bounds for "
                                         "dimension 0 with size 3"):
        t[fastt.tensor([5])]
    with pytest.raises(TypeError, match="Tensor does not support deleting "
                                        "items"):
        del t[0]


def test_len_iter_bool_int_float_index():
    t = fastt.tensor([[1, 2], [3, 4]])
    assert len(t) == 2
    assert [r.tolist() for r in t] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(fastt.tensor(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(fastt.tensor(1))
    assert bool(fastt.tensor([1])) and not bool(fastt.tensor(0.0))
    with pytest.raises(RuntimeError, match="more than one value"):
        bool(t)
    with pytest.raises(RuntimeError, match="no values"):
        bool(fastt.zeros(0))
    assert int(fastt.tensor(3.7)) == 3 and float(fastt.tensor(2)) == 2.0
    with pytest.raises(ValueError, match="only one element tensors can be "
                                         "converted to Python scalars"):
        float(t)
    assert [10, 20, 30][fastt.tensor(1)] == 20
    with pytest.raises(TypeError, match="only integer tensors of a single "
                                        "element can be converted to an "
                                        "index"):
        [1, 2][fastt.tensor(1.0)]
    assert hash(t) == hash(t) and {t: 1}[t] == 1


def test_item_tolist_repr():
    assert fastt.tensor(2.5).item() == 2.5
    assert fastt.tensor(3).item() == 3 and isinstance(fastt.tensor(3).item(),
                                                      int)
    assert fastt.tensor(True).item() is True
    assert fastt.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert fastt.tensor([1.5]).half().tolist() == [1.5]
    assert repr(fastt.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(fastt.tensor([1, 2])) == "tensor([1, 2])"
    if torch is not None:
        for data in ([1.0, 2.5], [[1, 2], [3, 4]], 3.25, [True, False]):
            assert repr(fastt.tensor(data)) == repr(torch.tensor(data))
        assert repr(fastt.tensor([1, 2], dtype=fastt.int32)) == \
            repr(torch.tensor([1, 2], dtype=torch.int32)).replace("torch",
                                                                  "fastt")


def test_tensor_constructor_dtype_inference():
    assert fastt.tensor([1, 2]).dtype == fastt.int64
    assert fastt.tensor([1, 2.0]).dtype == fastt.float32
    assert fastt.tensor([True, False]).dtype == fastt.bool
    assert fastt.tensor([True, 2]).dtype == fastt.int64
    assert fastt.tensor(1.5).shape == () and fastt.tensor([]).shape == (0,)
    assert fastt.tensor([[1], [2]], dtype=fastt.float64).dtype == \
        fastt.float64
    assert fastt.tensor(np.arange(3, dtype=np.int32)).dtype == fastt.int32
    assert fastt.tensor([fastt.tensor(1.0), 2]).tolist() == [1.0, 2.0]
    assert fastt.tensor(np.float64(2.0)).dtype == fastt.float64
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at "
                                         r"dim 1 \(got 1\)"):
        fastt.tensor([[1, 2], [3]])
    # (torch: ValueError "too many dimensions 'str'", as it takes a str
    # for a sequence; fastt takes it for an element of an invalid type.)
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        fastt.tensor(["a"])
    old = fastt.get_default_dtype()
    fastt.set_default_dtype(fastt.float64)
    try:
        assert fastt.tensor([1.0]).dtype == fastt.float64
        assert fastt.zeros(1).dtype == fastt.float64
    finally:
        fastt.set_default_dtype(old)
    with pytest.raises(TypeError, match="only floating-point types are "
                                        "supported as the default type"):
        fastt.set_default_dtype(fastt.int32)


def test_as_tensor_and_copy_semantics():
    a = np.arange(3.0)
    t = fastt.as_tensor(a)
    t[0] = 5
    assert a[0] == 5
    c = fastt.tensor(a)
    c[1] = 7
    assert a[1] == 1
    x = fastt.ones(2)
    assert fastt.as_tensor(x) is x
    assert fastt.as_tensor(x, dtype=fastt.float64).dtype == fastt.float64


def test_factories():
    assert fastt.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert fastt.zeros((2, 3)).shape == (2, 3)
    assert fastt.ones(2, dtype=fastt.int32).tolist() == [1, 1]
    assert fastt.full((2,), 7).dtype == fastt.int64
    assert fastt.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert fastt.empty(3).shape == (3,)
    assert fastt.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert fastt.arange(1, 2, 0.5).tolist() == [1.0, 1.5]
    assert fastt.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert fastt.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    x = fastt.ones(2, 3, dtype=fastt.float64)
    assert fastt.zeros_like(x).dtype == fastt.float64
    assert fastt.full_like(x, 2).tolist() == [[2.0] * 3] * 2
    assert x.new_zeros(4).dtype == fastt.float64
    assert x.new_tensor([1, 2]).dtype == fastt.float64
    fastt.manual_seed(0)
    a = fastt.rand(5)
    fastt.manual_seed(0)
    assert fastt.rand(5).tolist() == a.tolist()
    r = fastt.randn(1000)
    assert abs(r.mean().item()) < 0.2
    assert fastt.randint(0, 10, (20,)).dtype == fastt.int64
    assert sorted(fastt.randperm(5).tolist()) == [0, 1, 2, 3, 4]


def test_inplace_operators_keep_identity():
    t = fastt.ones(3)
    u = t
    t += 1
    t *= fastt.tensor([1.0, 2.0, 3.0])
    t -= 0.5
    t /= 2
    assert u is t
    assert t.tolist() == [0.75, 1.75, 2.75]
    i = fastt.tensor([6, 7])
    i //= 2
    i %= 2
    i |= 4
    i ^= 1
    i &= 5
    assert i.tolist() == [4, 4]
    # float result can't be cast to int64 in place
    with pytest.raises(RuntimeError, match="result type float32 can't be "
                       "cast to the desired output type int64"):
        i += 1.5


def test_reflected_operators():
    t = fastt.tensor([1.0, 2.0])
    assert (1 + t).tolist() == [2.0, 3.0]
    assert (1 - t).tolist() == [0.0, -1.0]
    assert (2 * t).tolist() == [2.0, 4.0]
    assert (2 / t).tolist() == [2.0, 1.0]
    assert (2 ** t).tolist() == [2.0, 4.0]
    assert (t ** 2).tolist() == [1.0, 4.0]
    assert (5 // t).tolist() == [5.0, 2.0]
    assert (5 % t).tolist() == [0.0, 1.0]
    assert (-t).tolist() == [-1.0, -2.0] and abs(-t).tolist() == [1.0, 2.0]
    assert (~fastt.tensor([True, False])).tolist() == [False, True]
    assert (1 < t).tolist() == [False, True]
    assert (t == 2).tolist() == [False, True]
    assert (t != None) is True  # noqa: E711 - falls back to identity
    m = fastt.eye(2)
    assert (m @ m).tolist() == m.tolist()


def test_methods_and_keywords():
    t = fastt.tensor([[1.0, -2.0], [3.0, 4.0]])
    assert t.add(t, alpha=2).tolist() == [[3.0, -6.0], [9.0, 12.0]]
    assert fastt.sub(t, 1, alpha=2).tolist() == [[-1.0, -4.0], [1.0, 2.0]]
    assert t.div(3, rounding_mode="floor").tolist() == [[0.0, -1.0],
                                                        [1.0, 1.0]]
    out = fastt.empty(2, 2)
    r = fastt.add(t, 1, out=out)
    assert r is out and out.tolist() == [[2.0, -1.0], [4.0, 5.0]]
    assert t.clamp(min=0).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert t.clamp(-1, 2).tolist() == [[1.0, -1.0], [2.0, 2.0]]
    assert t.sum(dim=1, keepdim=True).shape == (2, 1)
    assert t.sum((0, 1)).item() == 6.0
    assert t.relu().tolist() == [[1.0, 0.0], [3.0, 4.0]]
    x = t.clone()
    assert x.relu_() is x and x.tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert fastt.where(t > 0, t, 0.0).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert t.to(fastt.int32).dtype == fastt.int32
    assert t.to("cpu") is t and t.to(dtype=fastt.float64).dtype == \
        fastt.float64
    assert t.to(fastt.float32, copy=True) is not t
    assert t.long().dtype == fastt.int64 and t.bool().dtype == fastt.bool
    assert t.max(dim=0).indices.tolist() == [1, 1]
    assert fastt.cat([t, t], dim=1).shape == (2, 4)
    assert fastt.stack([t, t]).shape == (2, 2, 2)
    assert [c.shape for c in t.chunk(2)] == [(1, 2), (1, 2)]
    v, i = t.sort(dim=1, descending=True)
    assert v.tolist() == [[1.0, -2.0], [4.0, 3.0]] and i.tolist() == [[0, 1],
                                                                    [1, 0]]


def test_subclass_and_weakref():
    import weakref

    class Param(fastt.Tensor):
        pass

    p = Param([1.0, 2.0])
    assert isinstance(p, fastt.Tensor) and type(p) is Param
    p.requires_grad_flag = True  # subclasses get a __dict__
    assert (p + 1).tolist() == [2.0, 3.0] and type(p + 1) is fastt.Tensor
    r = weakref.ref(p)
    assert r() is p
    del p
    assert r() is None
    # The base type has no __dict__ (torch's has one).
    with pytest.raises(AttributeError, match="'fastt.Tensor' object has no "
                                             "attribute 'foo'"):
        fastt.ones(1).foo = 1


def test_threads():
    n = fastt.get_num_threads()
    fastt.set_num_threads(1)
    assert fastt.get_num_threads() == 1
    fastt.set_num_threads(n)
    with pytest.raises(RuntimeError, match="set_num_threads expects a "
                                           "positive integer"):
        fastt.set_num_threads(0)

"""Zero-copy exchange: numpy()/from_numpy/__array__ share memory and keep
their owner alive; DLPack with NumPy and torch both ways."""
import gc

import numpy as np
import pytest

import fastt

try:
    import torch
except ImportError:
    torch = None

NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64,
             np.float16, np.float32, np.float64]


@pytest.mark.parametrize("npdt", NP_DTYPES)
def test_numpy_round_trip_shares_memory(npdt):
    a = (np.arange(12) % 3).astype(npdt).reshape(3, 4)
    t = fastt.from_numpy(a)
    assert t.shape == (3, 4) and t.numpy().dtype == a.dtype
    assert t.data_ptr() == a.ctypes.data
    back = t.numpy()
    assert np.shares_memory(back, a)
    back[0, 0] = 1
    assert t[0, 0].item() == 1
    t[2, 3] = 0
    assert a[2, 3] == 0


def test_from_numpy_keeps_array_alive_and_strides():
    a = np.arange(20.0).reshape(4, 5)[:, 1::2]
    t = fastt.from_numpy(a)
    assert t.stride() == (5, 2) and not t.is_contiguous()
    del a
    gc.collect()
    assert t.tolist() == [[1.0, 3.0], [6.0, 8.0], [11.0, 13.0],
                          [16.0, 18.0]]
    with pytest.raises(ValueError, match="negative"):
        fastt.from_numpy(np.arange(3)[::-1])
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        fastt.from_numpy([1, 2])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        fastt.from_numpy(np.array(["a"]))


def test_numpy_keeps_tensor_alive():
    t = fastt.arange(6.0).view(2, 3)
    a = t.numpy()
    del t
    gc.collect()
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_array_protocol():
    t = fastt.arange(4).view(2, 2).t()
    a = np.asarray(t)
    np.testing.assert_array_equal(a, [[0, 2], [1, 3]])
    assert np.shares_memory(a, t.numpy())
    assert np.array(t, dtype=np.float32).dtype == np.float32
    assert np.add(t, 1).tolist() == [[1, 3], [2, 4]]
    with pytest.raises(TypeError, match="Got unsupported ScalarType "
                                        "bfloat16"):
        fastt.ones(2, dtype=fastt.bfloat16).numpy()


def test_dlpack_numpy_both_ways():
    t = fastt.arange(6.0).view(2, 3)
    a = np.from_dlpack(t)
    assert np.shares_memory(a, t.numpy())
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    b = np.arange(4, dtype=np.int32)
    u = fastt.from_dlpack(b)
    assert u.dtype == fastt.int32 and u.data_ptr() == b.ctypes.data
    u[1] = 9
    assert b[1] == 9
    assert t.__dlpack_device__() == (1, 0)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64",
                                   "float16", "bfloat16", "float32",
                                   "float64"])
def test_dlpack_torch_both_ways(dtype):
    t = (fastt.arange(12) % 2).view(3, 4).to(getattr(fastt, dtype))
    tt = torch.from_dlpack(t)
    assert str(tt.dtype) == "torch." + dtype
    assert tt.data_ptr() == t.data_ptr()
    assert tt.tolist() == t.tolist()
    back = fastt.from_dlpack(tt)
    assert back.data_ptr() == tt.data_ptr() and back.dtype == t.dtype
    src = torch.arange(6).view(2, 3).t()
    f = fastt.from_dlpack(src)
    assert f.stride() == src.stride() and f.tolist() == src.tolist()
    src[0, 0] = 7
    assert f[0, 0].item() == 7
    del src
    gc.collect()
    assert f[0, 0].item() == 7  # the capsule keeps torch's storage alive


def test_numpy_operands_in_operators():
    """As in torch: ndarray operands become tensors, both sides, and NumPy
    defers to the tensor (Tensor.__array_priority__)."""
    t = fastt.ones(2)
    a = np.arange(2.0)
    for r in (t + a, a + t, a * t, t - a):
        assert isinstance(r, fastt.Tensor) and r.dtype == fastt.float64
    assert (a - t).tolist() == [-1.0, 0.0]
    assert (t == a).tolist() == [False, True]
    assert (a < t).tolist() == [True, False]
    u = fastt.ones(2)
    u += a
    assert isinstance(u, fastt.Tensor) and u.tolist() == [1.0, 2.0]
    assert (t * np.float32(3)).tolist() == [3.0, 3.0]
    assert (np.int64(2) + t).tolist() == [3.0, 3.0]

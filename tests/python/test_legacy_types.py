"""torch's legacy constructors and type names, as old code uses them:
torch.Tensor(2, 3), torch.FloatTensor([..]), isinstance checks,
x.type(torch.LongTensor) / x.type('torch.FloatTensor') / x.type()."""
import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")

NAMES = ["BoolTensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "HalfTensor", "BFloat16Tensor",
         "FloatTensor", "DoubleTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_constructor_forms_match_torch(name):
    fc, tc = getattr(fastt, name), getattr(torch, name)
    assert str(fc.dtype).split(".")[-1] == str(tc.dtype).split(".")[-1]
    for args in [(), (2, 3), (0,), ([1, 0, 2],), ([[1, 2], [3, 4]],),
                 ((2, 3),)]:
        f, t = fc(*args), tc(*args)
        assert tuple(f.shape) == tuple(t.shape), args
        assert str(f.dtype).split(".")[-1] == \
            str(t.dtype).split(".")[-1], args
        if args and not isinstance(args[0], int):  # data, not sizes
            np.testing.assert_array_equal(np.asarray(f.float()),
                                          t.float().numpy())
    assert tuple(fc(fastt.Size([4, 1])).shape) == (4, 1)
    x = fastt.zeros(3, dtype=fc.dtype)
    y = fc(x)
    assert y.data_ptr() == x.data_ptr()  # an alias, as torch's
    assert isinstance(x, fc)
    assert not isinstance(x.to(fastt.float64 if name != "DoubleTensor"
                               else fastt.float32), fc)
    assert not isinstance(x, fastt.cuda.FloatTensor)


def test_wrong_arguments_raise_type_errors():
    with pytest.raises(TypeError, match="int"):
        fastt.FloatTensor(2, 3.0)
    with pytest.raises(TypeError, match="float32"):
        fastt.FloatTensor(fastt.zeros(2, dtype=fastt.float64))


def test_tensor_type_conversions():
    x = fastt.tensor([[1.5, -2.0]])
    assert x.type() == "fastt.FloatTensor"
    assert x.type(fastt.LongTensor).dtype == fastt.int64
    assert x.type("torch.DoubleTensor").dtype == fastt.float64
    assert x.type("fastt.IntTensor").dtype == fastt.int32
    assert x.type("HalfTensor").dtype == fastt.float16
    assert x.type(fastt.int16).dtype == fastt.int16
    assert x.type(fastt.FloatTensor) is x
    np.testing.assert_array_equal(np.asarray(x.type(fastt.LongTensor)),
                                  [[1, -2]])
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    # torch.Tensor(...): the default dtype, every form
    assert tuple(fastt.Tensor(2, 3).shape) == (2, 3)
    assert tuple(fastt.Tensor(fastt.Size([2, 3])).shape) == (2, 3)
    assert fastt.Tensor([1, 2]).dtype == fastt.float32
    assert tuple(fastt.Tensor().shape) == (0,)


def test_list_index_of_tensors_or_sequences_is_a_tuple():
    """x[[t0, t1]] and x[[[0, 1], [1, 2]]] index two dims (torch's legacy
    treatSequenceAsTuple); x[[0, 2]] stays one advanced index."""
    import warnings
    x = fastt.arange(12).reshape(3, 4)
    t = torch.arange(12).reshape(3, 4)
    i0, i1 = [0, 2], [1, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation warning
        for fi, ti in [
                ([fastt.tensor(i0), fastt.tensor(i1)],
                 [torch.tensor(i0), torch.tensor(i1)]),
                ([i0, i1], [i0, i1]), ([0, 2], [0, 2]),
                ([slice(0, 2), 1], [slice(0, 2), 1]),
                ([None, 1], [None, 1]), ([Ellipsis, 1], [Ellipsis, 1])]:
            assert x[fi].tolist() == t[ti].tolist(), ti
        x[[fastt.tensor(i0), fastt.tensor(i1)]] = -1
        t[[torch.tensor(i0), torch.tensor(i1)]] = -1
    assert x.tolist() == t.tolist()

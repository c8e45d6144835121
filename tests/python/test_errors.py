"""Bad input raises the right Python exception with a torch-style message;
nothing crashes."""
import pytest

import fastt


def test_index_error():
    with pytest.raises(IndexError, match="index 5 is out of bounds for "
                                         "dimension 0 with size 3"):
        fastt.zeros(3)[5]
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected"
                       r" to be in range of \[-2, 1\], but got 2\)"):
        fastt.zeros(2, 3).sum(dim=2)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected"
                       r" to be in range of \[-2, 1\], but got 5\)"):
        fastt.zeros(2).unsqueeze(5)


def test_type_error():
    # Python's own wording; the type's name is fastt.Tensor.
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for "
                                        r"\+: 'fastt.Tensor' and 'str'"):
        fastt.zeros(2) + "a"
    with pytest.raises(TypeError, match="view must be an int, not str"):
        fastt.zeros(2).view("a")
    with pytest.raises(TypeError, match=r"add\(\) got an unexpected keyword "
                                        r"argument 'bogus'"):
        fastt.zeros(2).add(fastt.ones(2), bogus=1)
    # (torch takes .to(3.5) as float64, a quirk fastt does not copy; a list
    # is a TypeError in both.)
    with pytest.raises(TypeError, match="expected a fastt.device or str, "
                                        "got list"):
        fastt.zeros(2).to([1])
    with pytest.raises(TypeError, match="got float"):
        fastt.zeros(2).to(3.5)
    with pytest.raises(TypeError, match="expected a fastt.dtype, got 'nope'"):
        fastt.zeros(2, dtype="nope")


def test_value_error():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at "
                                         r"dim 1 \(got 1\)"):
        fastt.tensor([[1, 2], [3]])
    # Slices: a zero step is Python's own error, a negative one torch's.
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        fastt.zeros(3)[::0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        fastt.zeros(3)[::-1]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        fastt.zeros(3, 3)[:, ::-2]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        fastt.zeros(3, 3)[0, ::0]


def test_runtime_error_names_sizes():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must "
                       r"match the size of tensor b \(2\) at non-singleton "
                       r"dimension 1"):
        fastt.ones(2, 3) + fastt.ones(3, 2)
    with pytest.raises(RuntimeError, match=r"shape '\[4\]' is invalid for "
                                           r"input of size 6"):
        fastt.ones(6).view(4)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be "
                                           r"multiplied \(2x3 and 2x3\)"):
        fastt.ones(2, 3) @ fastt.ones(2, 3)
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more "
                                           "than one value is ambiguous"):
        bool(fastt.ones(2))
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda.* "
                       "device type at start of device string: gpu"):
        fastt.device("gpu")


def test_not_implemented_error():
    with pytest.raises(NotImplementedError, match="gemm: not implemented for "
                       "dtype 'bool' on device 'cpu'"):
        fastt.ones(2, 2, dtype=fastt.bool) @ fastt.ones(2, 2, dtype=fastt.bool)


def test_memory_error():
    with pytest.raises(MemoryError, match="CPU out of memory: tried to "
                                          "allocate 2814749767"):
        fastt.empty(1 << 48, dtype=fastt.uint8)  # 256 TiB


def test_overflow():
    with pytest.raises(OverflowError, match="int too big to convert"):
        fastt.ones(2) + 2 ** 70

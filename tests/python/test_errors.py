"""Bad input raises the right Python exception with a torch-style message;
nothing crashes."""
import pytest

import fastt


def test_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        fastt.zeros(3)[5]
    with pytest.raises(IndexError):
        fastt.zeros(2, 3).sum(dim=2)
    with pytest.raises(IndexError):
        fastt.zeros(2).unsqueeze(5)


def test_type_error():
    with pytest.raises(TypeError):
        fastt.zeros(2) + "a"
    with pytest.raises(TypeError):
        fastt.zeros(2).view("a")
    with pytest.raises(TypeError):
        fastt.zeros(2).add(fastt.ones(2), bogus=1)
    with pytest.raises(TypeError):
        fastt.zeros(2).to(3.5)
    with pytest.raises(TypeError):
        fastt.zeros(2, dtype="nope")


def test_value_error():
    with pytest.raises(ValueError):
        fastt.tensor([[1, 2], [3]])
    with pytest.raises(ValueError):
        fastt.zeros(3)[::0] if False else fastt.zeros(3)[::-1]
    with pytest.raises(ValueError):
        fastt.device("gpu")


def test_runtime_error_names_sizes():
    with pytest.raises(RuntimeError, match=r"must match the size of tensor "
                                           r"b"):
        fastt.ones(2, 3) + fastt.ones(3, 2)
    with pytest.raises(RuntimeError):
        fastt.ones(6).view(4)
    with pytest.raises(RuntimeError):
        fastt.ones(2, 3) @ fastt.ones(2, 3)
    with pytest.raises(RuntimeError):
        bool(fastt.ones(2))


def test_not_implemented_error():
    with pytest.raises(NotImplementedError):
        fastt.ones(2, 2, dtype=fastt.bool) @ fastt.ones(2, 2, dtype=fastt.bool)


def test_memory_error():
    with pytest.raises(MemoryError):
        fastt.empty(1 << 48, dtype=fastt.uint8)  # 256 TiB


def test_overflow():
    with pytest.raises(OverflowError):
        fastt.ones(2) + 2 ** 70

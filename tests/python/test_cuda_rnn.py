"""The recurrent layers' fused gate kernels on the device
(kernels/cuda/rnn.cu, Op::rnn_cell / rnn_cell_backward) against the same
layers on CPU: every cell kind (tanh, relu, LSTM with and without a
projection, GRU), every float dtype, packed sequences, forward values and
the gradients of the input, the states and the weights."""
import pytest

import fastt
import fastt.nn as nn
from fastt.nn.utils import rnn as frnn

from cuda_util import (DEVICE, FLOAT_DTYPES, assert_close, rand,
                       requires_device)

pytestmark = requires_device

KINDS = [("RNN", {"nonlinearity": "tanh"}), ("RNN", {"nonlinearity": "relu"}),
         ("LSTM", {}), ("LSTM", {"proj_size": 3, "bidirectional": True}),
         ("GRU", {"num_layers": 2})]


def tols(dtype):
    return {fastt.float32: (1e-4, 1e-5), fastt.float64: (1e-9, 1e-11),
            fastt.float16: (3e-2, 3e-2), fastt.bfloat16: (8e-2, 8e-2)}[dtype]


def run(m, x, packed_lens=None):
    if packed_lens is not None:
        p = frnn.pack_padded_sequence(x, packed_lens, enforce_sorted=False)
        y, s = m(p)
        y = frnn.pad_packed_sequence(y)[0]
    else:
        y, s = m(x)
    states = list(s) if isinstance(s, tuple) else [s]
    total = (y.float() ** 2).sum()
    for st in states:
        total = total + (st.float() * 0.5).sum()
    total.backward()
    return [y] + states


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("cls,kw", KINDS,
                         ids=[f"{c}-{k}" for c, k in KINDS])
@pytest.mark.parametrize("packed", [False, True])
def test_layers_on_device(cls, kw, dtype, packed):
    fastt.manual_seed(0)
    cpu = getattr(nn, cls)(4, 5, **kw).to(dtype)
    dev = getattr(nn, cls)(4, 5, **kw).to(dtype)
    dev.load_state_dict(cpu.state_dict())
    dev = dev.to(DEVICE)
    x = rand(6, 3, 4, dtype=dtype, seed=1, low=-1, high=1)
    xc = x.clone().requires_grad_(True)
    xd = x.to(DEVICE).requires_grad_(True)
    lens = [6, 2, 4] if packed else None
    rc = run(cpu, xc, lens)
    rd = run(dev, xd, lens)
    rtol, atol = tols(dtype)
    assert_close([r.detach() for r in rd], [r.detach() for r in rc],
                  rtol=rtol, atol=atol, what=f"{cls} forward")
    assert_close(xd.grad, xc.grad, rtol=rtol, atol=atol, what="input grad")
    for (n, pc), (_, pd) in zip(cpu.named_parameters(),
                                dev.named_parameters()):
        assert_close(pd.grad, pc.grad, rtol=rtol * 4, atol=atol * 4,
                     what=f"{cls} {n} grad")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_cells_on_device(dtype):
    fastt.manual_seed(0)
    for cell in (nn.LSTMCell, nn.GRUCell, nn.RNNCell):
        cpu = cell(4, 5).to(dtype)
        dev = cell(4, 5).to(dtype)
        dev.load_state_dict(cpu.state_dict())
        dev = dev.to(DEVICE)
        x = rand(3, 4, dtype=dtype, seed=2, low=-1, high=1)
        oc, od = cpu(x), dev(x.to(DEVICE))
        rtol, atol = tols(dtype)
        assert_close(od, oc, rtol=rtol, atol=atol, what=cell.__name__)

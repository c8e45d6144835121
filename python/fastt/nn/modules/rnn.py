"""Recurrent layers (torch.nn.RNN, LSTM, GRU and their cells) with torch's
parameters, names, init, shapes and errors. Each layer and direction is one
C++ call (_C._rnn_layer, csrc/ops/rnn.h): the input projection for all
steps is one GEMM here, then the C++ time loop runs one GEMM and one fused
gate kernel per step, and the backward through time mirrors it."""

import math
import numbers
import warnings

import fastt
from fastt import _C

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
           "LSTMCell", "GRUCell"]

_MODES = {"RNN_TANH": (0, 1), "RNN_RELU": (1, 1), "LSTM": (2, 4),
          "GRU": (3, 3)}


def _packed():
    from ..utils.rnn import PackedSequence
    return PackedSequence


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1,
                 bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number)
                or not 0 <= dropout <= 1 or isinstance(dropout, bool)):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent "
                "layer, so non-zero dropout expects num_layers greater than "
                f"1, but got dropout={dropout} and num_layers={num_layers}")
        if not isinstance(bias, bool):
            raise TypeError(
                f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError("batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        if not isinstance(input_size, int) or isinstance(input_size, bool):
            raise TypeError("input_size should be of type int, got: "
                            f"{type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError("hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero "
                             "to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _MODES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _MODES[mode][1] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = (input_size if layer == 0
                               else real_hidden * num_directions)
                sfx = "_reverse" if direction == 1 else ""
                params = [
                    (f"weight_ih_l{layer}{sfx}", (gate_size, layer_input)),
                    (f"weight_hh_l{layer}{sfx}", (gate_size, real_hidden)),
                ]
                if bias:
                    params += [(f"bias_ih_l{layer}{sfx}", (gate_size,)),
                               (f"bias_hh_l{layer}{sfx}", (gate_size,))]
                if proj_size > 0:
                    params.append((f"weight_hr_l{layer}{sfx}",
                                   (proj_size, hidden_size)))
                names = []
                for name, shape in params:
                    setattr(self, name,
                            Parameter(fastt.empty(shape, **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self):
        """A no-op (torch compacts cuDNN's weight buffer here)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- checks (torch's messages) ----
    def check_input(self, input, batch_sizes):
        w = getattr(self, self._flat_weights_names[0])
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(
                f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        out = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, out)

    def check_hidden_size(self, hx, expected,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected):
            raise RuntimeError(msg.format(expected, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    # ---- the layers ----
    def _run(self, x, batch_sizes, hx, cx):
        """x: [T*B, F] (rows by step) or packed data; hx [L*D, B, Hout],
        cx [L*D, B, H] (LSTM). Returns (output rows, h_n, c_n)."""
        mode = _MODES[self.mode][0]
        D = 2 if self.bidirectional else 1
        bs = [] if batch_sizes is None else [int(b) for b in batch_sizes]
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                names = self._all_weights[layer * D + d]
                w = {n.split("_l")[0]: getattr(self, n) for n in names}
                gi = F.linear(x, w["weight_ih"], w.get("bias_ih"))
                k = layer * D + d
                out, h, c = _C._rnn_layer(
                    mode, gi, hx[k], None if cx is None else cx[k],
                    w["weight_hh"], w.get("bias_hh"), w.get("weight_hr"),
                    bs, d == 1)
                outs.append(out)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            x = outs[0] if D == 1 else fastt.cat(outs, -1)
            if self.dropout and self.training and \
                    layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, fastt.stack(h_n), fastt.stack(c_n) if c_n else None

    def _forward(self, input, hx, name):
        PackedSequence = _packed()
        is_lstm = self.mode == "LSTM"
        D = 2 if self.bidirectional else 1
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        batch_sizes = None
        sorted_indices = unsorted_indices = None
        if isinstance(input, PackedSequence):
            data, batch_sizes = input.data, input.batch_sizes
            sorted_indices = input.sorted_indices
            unsorted_indices = input.unsorted_indices
            max_batch = int(batch_sizes[0])
            is_batched = True
        else:
            if input.dim() not in (2, 3):
                tail = "D tensor instead" if name == "RNN" else "D instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}{tail}")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(1 if not self.batch_first else 0)
            max_batch = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            w = getattr(self, self._flat_weights_names[0])
            h0 = fastt.zeros(self.num_layers * D, max_batch, out_size,
                             dtype=input.dtype if batch_sizes is None
                             else data.dtype, device=w.device)
            c0 = (fastt.zeros(self.num_layers * D, max_batch,
                              self.hidden_size, dtype=h0.dtype,
                              device=w.device) if is_lstm else None)
        else:
            if is_lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError(
                        "LSTM: hx must be a tuple (h_0, c_0) of tensors")
                h0, c0 = hx
            else:
                h0, c0 = hx, None
            if not is_batched:
                if h0.dim() != 2 or (c0 is not None and c0.dim() != 2):
                    if is_lstm:
                        raise RuntimeError(
                            "For unbatched 2-D input, hx and cx should also "
                            f"be 2-D but got ({h0.dim()}-D, {c0.dim()}-D) "
                            "tensors")
                    raise RuntimeError(
                        "For unbatched 2-D input, hx should also be 2-D but "
                        f"got {h0.dim()}-D tensor")
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if c0 is not None else None
            elif batch_sizes is None:
                if h0.dim() != 3 or (c0 is not None and c0.dim() != 3):
                    if is_lstm:
                        raise RuntimeError(
                            "For batched 3-D input, hx and cx should also be "
                            f"3-D but got ({h0.dim()}-D, {c0.dim()}-D) "
                            "tensors")
                    raise RuntimeError(
                        "For batched 3-D input, hx should also be 3-D but got "
                        f"{h0.dim()}-D tensor")
            h0 = self.permute_hidden(h0, sorted_indices)
            c0 = self.permute_hidden(c0, sorted_indices) if is_lstm else None
        x = data if batch_sizes is not None else input
        if is_lstm:
            self.check_input(x, batch_sizes)
            self.check_hidden_size(
                h0, self.get_expected_hidden_size(x, batch_sizes),
                "Expected hidden[0] size {}, got {}")
            exp_c = self.get_expected_hidden_size(x, batch_sizes)
            exp_c = (exp_c[0], exp_c[1], self.hidden_size)
            self.check_hidden_size(c0, exp_c,
                                   "Expected hidden[1] size {}, got {}")
        else:
            self.check_forward_args(x, h0, batch_sizes)
        if batch_sizes is None:
            seq = x.transpose(0, 1) if self.batch_first else x
            T, B = seq.size(0), seq.size(1)
            rows = seq.contiguous().view(T * B, seq.size(2))
            out, h_n, c_n = self._run(rows, None, h0, c0)
            out = out.view(T, B, out.size(-1))
            if self.batch_first:
                out = out.transpose(0, 1)
            if not is_batched:
                out = out.squeeze(1 if not self.batch_first else 0)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if c_n is not None else None
            output = out
        else:
            out, h_n, c_n = self._run(x, batch_sizes, h0, c0)
            output = PackedSequence(out, batch_sizes, sorted_indices,
                                    unsorted_indices)
            h_n = self.permute_hidden(h_n, unsorted_indices)
            c_n = (self.permute_hidden(c_n, unsorted_indices)
                   if c_n is not None else None)
        if is_lstm:
            return output, (h_n, c_n)
        return output, h_n


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)
    (or relu), multi-layer and bidirectional as torch.nn.RNN."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, "
                             "not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. "
                             "Select from 'tanh' or 'relu'.")
        nl = self.nonlinearity
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nl

    def forward(self, input, hx=None):
        return self._forward(input, hx, "RNN")


class LSTM(RNNBase):
    """Long short-term memory (torch.nn.LSTM, proj_size included)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "LSTM")


class GRU(RNNBase):
    """Gated recurrent unit (torch.nn.GRU)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, "
                             "not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "GRU")


# ---------------------------------------------------------------- cells
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks,
                 device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            fastt.empty(num_chunks * hidden_size, input_size, **factory))
        self.weight_hh = Parameter(
            fastt.empty(num_chunks * hidden_size, hidden_size, **factory))
        if bias:
            self.bias_ih = Parameter(
                fastt.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(
                fastt.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, mode, name, input, hx, cx):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(-1)} "
                f"expected {self.input_size}")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        B = input.size(0)
        if hx is None:
            hx = fastt.zeros(B, self.hidden_size, dtype=input.dtype,
                             device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        if mode == 2:
            if cx is None:
                cx = fastt.zeros(B, self.hidden_size, dtype=input.dtype,
                                 device=input.device)
            elif not batched:
                cx = cx.unsqueeze(0)
        for what, t in (("hidden", hx), ("cell", cx)):
            if t is not None and (t.size(0) != B
                                  or t.size(-1) != self.hidden_size):
                raise RuntimeError(
                    f"Input batch size {B} doesn't match {what}0 batch size "
                    f"{t.size(0)}" if t.size(0) != B else
                    f"{what}0 has inconsistent hidden_size: got "
                    f"{t.size(-1)}, expected {self.hidden_size}")
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        _, h, c = _C._rnn_layer(mode, gi, hx, cx, self.weight_hh,
                                self.bias_hh, None, [], False)
        if not batched:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return (h, c) if mode == 2 else h


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True,
                 nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError("RNNCell: Expected hidden to be 1D or 2D, got "
                             f"{hx.dim()}D instead")
        if self.nonlinearity == "tanh":
            mode = 0
        elif self.nonlinearity == "relu":
            mode = 1
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step(mode, "RNNCell", input, hx, None)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4,
                         device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                        f"{value.dim()}D instead")
            h, c = hx
        else:
            h = c = None
        return self._step(2, "LSTMCell", input, h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3,
                         device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError("GRUCell: Expected hidden to be 1D or 2D, got "
                             f"{hx.dim()}D instead")
        return self._step(3, "GRUCell", input, hx, None)

"""Linear layers (torch.nn semantics and default init): Identity, Linear,
Bilinear. A new one creates its Parameters in __init__, initializes them in
reset_parameters() as torch does, and calls one fused op in forward()."""

import math

import fastt

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]

_linear = fastt.linear


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b: one fused fastt.linear call."""

    def __init__(self, in_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(fastt.empty((out_features, in_features),
                                            device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(fastt.empty(out_features, device=device,
                                              dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # torch's default: kaiming_uniform_(a=sqrt(5)) == U(+-1/sqrt(fan_in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return _linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, "
                f"out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """The name torch gives MultiheadAttention.out_proj (same as Linear)."""


class Bilinear(Module):
    """y = x1^T A x2 + b with weight [out, in1, in2]."""

    def __init__(self, in1_features, in2_features, out_features, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(fastt.empty(
            (out_features, in1_features, in2_features), device=device,
            dtype=dtype))
        if bias:
            self.bias = Parameter(fastt.empty(out_features, device=device,
                                              dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, "
                f"in2_features={self.in2_features}, "
                f"out_features={self.out_features}, "
                f"bias={self.bias is not None}")

"""Convolutions (torch.nn semantics, reprs, default init): Conv1d, Conv2d,
Conv3d, ConvTranspose1d/2d/3d over F.conv1d / conv2d / conv3d /
conv_transpose2d / conv_transpose3d. Non-zero padding modes pad with F.pad
first, as torch does."""

import math

import fastt

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]


def _ntuple(x, n):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride,
                 padding, dilation, transposed, output_padding, groups, bias,
                 padding_mode, device=None, dtype=None):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size = _ntuple(kernel_size, n)
        stride = _ntuple(stride, n)
        dilation = _ntuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of "
                    "{'same', 'valid'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError(
                    "padding='same' is not supported for strided "
                    "convolutions")
        else:
            padding = _ntuple(padding, n)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(
                "padding_mode must be one of ['zeros', 'reflect', "
                f"'replicate', 'circular'], but got padding_mode="
                f"'{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order: last dim first, (before, after) each.
        if isinstance(padding, str):
            pads = []
            if padding == "same":
                for d, k in zip(dilation, kernel_size):
                    total = d * (k - 1)
                    pads = [total // 2, total - total // 2] + pads
            else:
                pads = [0, 0] * n
            self._reversed_padding_repeated_twice = pads
        else:
            pads = []
            for p in reversed(padding):
                pads += [p, p]
            self._reversed_padding_repeated_twice = pads
        kw = {"device": device, "dtype": dtype}
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        self.weight = Parameter(fastt.empty(shape, **kw))
        if bias:
            self.bias = Parameter(fastt.empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, "
             f"kernel_size={self.kernel_size}, stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    """Conv1d/2d/3d: the same constructor and forward over F.conv<n>d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride,
                         padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input):
        conv = getattr(F, f"conv{self._n}d")
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice,
                          mode=self.padding_mode)
            return conv(input, self.weight, self.bias, self.stride, 0,
                        self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride,
                    self.padding, self.dilation, self.groups)


class Conv1d(_Conv):
    _n = 1


class Conv2d(_Conv):
    _n = 2


class Conv3d(_Conv):
    _n = 3


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, output_padding=0, groups=1, bias=True, dilation=1,
                 padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride,
                         padding, dilation, True, output_padding, groups,
                         bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = list(output_size)[-n:]
        result = []
        for d in range(n):
            dim_size = input.size(d - n)
            min_size = ((dim_size - 1) * self.stride[d]
                        - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            max_size = min_size + self.stride[d] - 1
            if not min_size <= output_size[d] <= max_size:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid "
                    f"sizes range from {min_size} to {max_size} (for an "
                    f"input of {list(input.shape[-n:])})")
            result.append(output_size[d] - min_size)
        return tuple(result)


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride,
                                  self.padding, output_padding, self.groups,
                                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        unbatched = input.dim() == 2
        x = input.unsqueeze(0) if unbatched else input
        out = F.conv_transpose2d(
            x.unsqueeze(2), self.weight.unsqueeze(2), self.bias,
            (1, self.stride[0]), (0, self.padding[0]), (0, op[0]),
            self.groups, (1, self.dilation[0])).squeeze(2)
        return out.squeeze(0) if unbatched else out


class ConvTranspose3d(_ConvTransposeNd):
    _n = 3

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride,
                                  self.padding, output_padding, self.groups,
                                  self.dilation)

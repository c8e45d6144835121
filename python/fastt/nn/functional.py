"""fastt.nn.functional: torch.nn.functional's functions over fastt ops.
Each function calls a fused fastt op where one exists (linear, layer_norm,
conv2d, cross_entropy, ...) and otherwise composes as few ops as it can:
every extra op is framework tax. To add a function, write it here with
torch's signature and defaults, and a test in tests/python/test_nn.py.

Where the extension has a fused op with torch's exact signature (conv2d,
layer_norm, max_pool2d, ...), the public name IS that C function: no Python
frame in between. Each also has a composed version (_COMPOSED at the end),
used when the extension lacks the op and tested against torch, so it can
serve as a reference."""

import builtins as _builtins
import math

import fastt
from fastt import _C
from fastt._compile import TensorCache as _TensorCache

_inf = float("inf")


def _fused(*names):
    """The first of `names` the extension provides, else None."""
    for name in names:
        fn = getattr(_C, name, None)
        if fn is not None:
            return fn
    return None


_max_pool2d_with_indices = _fused("max_pool2d_with_indices")
# (input, target, weight, reduction, ignore_index[, label_smoothing])
#   -> (loss, lse) / (loss, total_weight)
_cross_entropy = _fused("_cross_entropy")
_nll_loss = _fused("_nll_loss")


def _nograd():
    no_grad = getattr(fastt, "no_grad", None)  # late: fastt may import us
    if no_grad is None:
        import contextlib
        return contextlib.nullcontext()
    return no_grad()


def _pair(x, n=2):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,) * n


def _reduction(size_average, reduce, reduction):
    """torch's legacy size_average/reduce -> reduction string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


# ---------------------------------------------------------------------------
# Linear
# ---------------------------------------------------------------------------
linear = fastt.linear  # one fused GEMM (+ bias); torch's (input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b, weight [out, in1, in2]: one GEMM, then a reduce."""
    out_f, in1, in2 = weight.shape
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # [N, in1] @ [in1, out*in2] -> [N, out, in2]
    a = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = x1.matmul(a).view(-1, out_f, in2)
    y = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(tuple(lead) + (out_f,))


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------
def relu(input, inplace=False):
    return fastt.relu_(input) if inplace else fastt.relu(input)


def relu_(input):
    return fastt.relu_(input)


# Same signatures as torch's: the C functions themselves.
leaky_relu = fastt.leaky_relu  # (input, negative_slope=0.01, inplace=False)
gelu = fastt.gelu  # (input, *, approximate="none")
tanh = fastt.tanh
sigmoid = fastt.sigmoid
pdist = fastt.pdist  # (input, p=2), python/fastt/_composite.py


def silu(input, inplace=False):
    return fastt.silu_(input) if inplace else fastt.silu(input)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not input.is_floating_point():  # torch keeps the integer dtype
        min_val, max_val = int(min_val), int(max_val)
    if inplace:
        return input.clamp_(min_val, max_val)
    return input.clamp(min_val, max_val)


def elu(input, alpha=1.0, inplace=False):
    out = fastt.where(input > 0, input, fastt.expm1(input) * alpha)
    return input.copy_(out) if inplace else out


def celu(input, alpha=1.0, inplace=False):
    out = fastt.where(input > 0, input, fastt.expm1(input / alpha) * alpha)
    return input.copy_(out) if inplace else out


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    out = fastt.where(input > 0, input * _SELU_SCALE,
                      fastt.expm1(input) * (_SELU_ALPHA * _SELU_SCALE))
    return input.copy_(out) if inplace else out


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - fastt.tanh(input)


def hardshrink(input, lambd=0.5):
    return fastt.where((input > lambd) | (input < -lambd), input, 0.0)


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError("softshrink: lambda must be greater or equal to 0, "
                           f"but found to be {lambd}.")
    return fastt.where(input > lambd, input - lambd,
                       fastt.where(input < -lambd, input + lambd, 0.0))


def _softplus1(x):
    """log(1 + e^x), stable for any x, with the gradient sigmoid(x) at
    every point (x = 0 included: log1p(exp(-|x|)) + relu(x) has a zero
    one-sided slope there)."""
    return fastt.logaddexp(x, x.new_zeros(()))


def softplus(input, beta=1.0, threshold=20.0):
    scaled = input * beta if beta != 1.0 else input
    soft = _softplus1(scaled)
    if beta != 1.0:
        soft = soft / beta
    return fastt.where(scaled > threshold, input, soft)


def mish(input, inplace=False):
    out = input * fastt.tanh(softplus(input))
    return input.copy_(out) if inplace else out


def hardswish(input, inplace=False):
    out = input * (input + 3.0).clamp(0.0, 6.0) / 6.0
    return input.copy_(out) if inplace else out


def hardsigmoid(input, inplace=False):
    out = (input + 3.0).clamp(0.0, 6.0) / 6.0
    return input.copy_(out) if inplace else out


def logsigmoid(input):
    return -_softplus1(-input)  # no threshold (torch's log_sigmoid is exact)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return fastt.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return fastt.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


def glu(input, dim=-1):
    a, b = input.chunk(2, dim)
    return a * fastt.sigmoid(b)


# ---------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, "
                         f"but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by
    1/(1-p): the mask is one bernoulli_ draw in the input's dtype."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    q = 1.0 - p
    mask = fastt.empty_like(input).bernoulli_(q).div_(q)
    return input.mul_(mask) if inplace else input * mask


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 4)


def _channel_dropout(input, p, training, inplace, batched_dim):
    _check_p(p)
    if not training or p == 0.0:
        return input
    ndim = input.dim()
    lead = 2 if ndim == batched_dim else 1
    shape = tuple(input.shape[:lead]) + (1,) * (ndim - lead)
    q = 1.0 - p
    mask = input.new_empty(shape).bernoulli_(q).div_(q) if q > 0 else \
        input.new_zeros(shape)
    return input.mul_(mask) if inplace else input * mask


# ---------------------------------------------------------------------------
# Embedding, one_hot, pad, normalize
# ---------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError(
                    "Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
        elif padding_idx >= weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    out = fastt.embedding(input, weight, padding_idx)
    if scale_grad_by_freq:
        out = _scale_grad_by_freq(out, input, weight.size(0))
    return out


def _scale_grad_by_freq(rows, idx, num):
    """rows (gathered from weight at idx) unchanged forward; backward, each
    row's gradient divided by how often its index occurs in idx (torch's
    scale_grad_by_freq)."""
    if not (rows.requires_grad and fastt.is_grad_enabled()):
        return rows
    flat = idx.reshape(-1).to(fastt.int64)
    counts = fastt.bincount(flat, minlength=num)
    s = (1.0 / counts.index_select(0, flat).to(rows.dtype)).reshape(
        tuple(idx.shape) + (1,))
    base = rows.detach()
    return base + (rows - base) * s  # exactly rows: rows - base is 0


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxes of bags of embedding rows: a 2-D input is B bags
    of equal length; a 1-D input is cut into bags at `offsets` (with
    include_last_offset, offsets' last entry ends the last bag). Rows equal
    to padding_idx are left out (a mean divides by the rest); an empty bag
    is zeros. sparse= is accepted (the gradient is dense)."""
    if weight.dim() != 2:
        raise ValueError("weight has to be a 2D Tensor, but got Tensor of "
                         f"dimension {weight.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. "
                "per_sample_weights is only supported for mode='sum' (got "
                f"mode='{mode}'). Please open a feature request on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                "embedding_bag: If per_sample_weights "
                f"({tuple(per_sample_weights.shape)}) is not None, then it "
                "must have the same shape as the input "
                f"({tuple(input.shape)})")
    if input.is_floating_point() or input.dtype == fastt.bool:
        raise RuntimeError("embedding_bag: expected indices of dtype int32 "
                           f"or int64, got {input.dtype}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is "
                "treated is a mini-batch of fixed length sequences. "
                f"However, found offsets of type {type(offsets)}")
        nb, per = input.shape
        offsets = fastt.arange(0, nb * per, max(per, 1), dtype=input.dtype,
                               device=input.device)[:nb]
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        include_last_offset = False
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor "
                         f"of dimension {input.dim()}")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
    n = input.numel()
    bags = offsets.numel() - (1 if include_last_offset else 0)
    if bags < 0:
        raise RuntimeError("embedding_bag: include_last_offset needs at "
                           "least one offset")
    if offsets.numel() and offsets[0].item() != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first "
                           "sequence in the mini-batch has to start from "
                           f"position 0. However, got {offsets[0].item()}")
    if offsets.numel() and offsets[-1].item() > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's "
                           f"length ({n}), but got offsets[-1] of "
                           f"{offsets[-1].item()}")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    starts = offsets[:bags].to(fastt.int64)
    pos = fastt.arange(n, device=input.device)
    bag = fastt.bucketize(pos, starts, right=True) - 1
    keep = None
    if padding_idx is not None:
        keep = input != padding_idx
    if include_last_offset:
        inside = pos < offsets[bags].item()
        keep = inside if keep is None else keep & inside
    idx = input.to(fastt.int64)
    psw = per_sample_weights
    if keep is not None:
        sel = keep.nonzero().reshape(-1)
        idx, bag = idx.index_select(0, sel), bag.index_select(0, sel)
        if psw is not None:
            psw = psw.index_select(0, sel)
    rows = weight.index_select(0, idx)
    if scale_grad_by_freq:
        rows = _scale_grad_by_freq(rows, idx, num)
    wide = weight.dtype in (fastt.float16, fastt.bfloat16)
    if wide:  # 16-bit weights accumulate in float32 (as torch's kernel)
        rows = rows.float()
    if psw is not None:
        rows = rows * psw.unsqueeze(1).to(rows.dtype)
    zeros = fastt.zeros((bags, dim), dtype=rows.dtype, device=rows.device)
    if mode == "max":
        out = zeros.scatter_reduce(0, bag.unsqueeze(1).expand(-1, dim),
                                   rows, "amax", include_self=False)
    else:
        out = zeros.index_add(0, bag, rows)
    if mode == "mean":
        count = fastt.zeros(bags, dtype=rows.dtype, device=rows.device)
        count = count.index_add(0, bag, fastt.ones_like(bag, dtype=rows.dtype))
        out = out / count.clamp(min=1).unsqueeze(1)
    return out.to(weight.dtype) if wide else out


def _embedding_renorm_(weight, input, max_norm, norm_type):
    # Rows the input names whose norm exceeds max_norm shrink in place.
    with _nograd():
        idx = input.reshape(-1)
        rows = weight.index_select(0, idx)
        norms = rows.norm(norm_type, dim=1, keepdim=True)
        scale = fastt.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_put_((idx,), rows * scale)
    return weight


one_hot = fastt.one_hot


def pad(input, pad, mode="constant", value=None):
    """torch's F.pad: `pad` lists (before, after) pairs starting from the
    last dim. constant pads with cat (negative pads crop); reflect,
    replicate and circular gather rows with one index_select per dim."""
    if len(pad) % 2 != 0:
        raise ValueError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise ValueError("Padding length should be less than or equal to "
                         "two times the input dimension but got padding "
                         f"length {len(pad)} and input of dimension "
                         f"{input.dim()}")
    out = input
    for i in range(len(pad) // 2):
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        if before == 0 and after == 0:
            continue
        dim = input.dim() - 1 - i
        if mode == "constant":
            out = _pad_constant(out, dim, before, after,
                                0.0 if value is None else value)
        elif mode in ("reflect", "replicate", "circular"):
            # circular: torch crops the negative pads first, then wraps
            # over what is left (replicate indexes the uncropped dim).
            if mode == "circular" and before < 0:
                out = out.narrow(dim, -before, out.size(dim) + before)
                before = 0
            if mode == "circular" and after < 0:
                out = out.narrow(dim, 0, out.size(dim) + after)
                after = 0
            if before or after:
                out = out.index_select(dim, _pad_index(
                    out.size(dim), before, after, mode, out.device))
        else:
            raise NotImplementedError(f"Unsupported padding mode: {mode}")
    return out


def _pad_constant(x, dim, before, after, value):
    if before < 0:
        x = x.narrow(dim, -before, x.size(dim) + before)
        before = 0
    if after < 0:
        x = x.narrow(dim, 0, x.size(dim) + after)
        after = 0
    parts = []
    if before:
        shape = list(x.shape)
        shape[dim] = before
        parts.append(x.new_full(shape, value))
    parts.append(x)
    if after:
        shape = list(x.shape)
        shape[dim] = after
        parts.append(x.new_full(shape, value))
    return fastt.cat(parts, dim) if len(parts) > 1 else x


def _pad_index(n, before, after, mode, device):
    idx = []
    for j in range(-before, n + after):
        if mode == "replicate":
            k = min(max(j, 0), n - 1)
        elif mode == "circular":
            k = j % n
        else:  # reflect, without repeating the edge
            if before >= n or after >= n:
                raise RuntimeError(
                    "Argument #4: Padding size should be less than the "
                    f"corresponding input dimension, but got: padding "
                    f"({before}, {after}) at dimension with size {n}")
            period = 2 * (n - 1)
            k = j % period if period else 0
            if k >= n:
                k = period - k
        idx.append(k)
    return fastt.tensor(idx, dtype=fastt.int64, device=device)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps)
    result = input / denom
    if out is not None:
        return out.copy_(result)
    return result


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor "
                f"b ({y}) at non-singleton dimension")
        out.append(y if x == 1 else x)
    return tuple(out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/|x1| * x2/|x2|) over the broadcast inputs; each norm is
    clamped at eps in value only (torch clamps it under no_grad)."""
    if tuple(x1.shape) != tuple(x2.shape):
        shape = _broadcast_shape(x1.shape, x2.shape)
        x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = x1.norm(2, dim, keepdim=True)
    n2 = x2.norm(2, dim, keepdim=True)
    n1 = n1 + (n1.detach().clamp_min(eps) - n1.detach())
    n2 = n2 + (n2.detach().clamp_min(eps) - n2.detach())
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------
def _layer_norm_composed(input, normalized_shape, weight=None, bias=None,
                         eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(-len(normalized_shape), 0))
    var, mean = fastt.var_mean(input, dims, correction=0, keepdim=True)
    out = (input - mean) * fastt.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _rms_norm_composed(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if eps is None:
        eps = fastt.finfo(input.dtype).eps
    dims = tuple(range(-len(normalized_shape), 0))
    out = input * fastt.rsqrt(input.square().mean(dims, keepdim=True) + eps)
    if weight is not None:
        out = out * weight
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(
            "Expected at least 2 dimensions for input tensor but received "
            f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups != 0:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by "
            f"num_groups, but got input of shape {input.shape} and "
            f"num_groups={num_groups}")
    per_group = input.numel() // n // num_groups if n and num_groups else 0
    x = input.reshape(n, num_groups, per_group)  # (n may be 0)
    x = _wide(x)  # 16-bit inputs: float32 math, one rounding at the end
    var, mean = fastt.var_mean(x, -1, correction=0, keepdim=True)
    out = ((x - mean) * fastt.rsqrt(var + eps)).view(input.shape)
    if weight is not None or bias is not None:
        shape = (c,) + (1,) * (input.dim() - 2)
        if weight is not None:
            out = out * _wide(weight).view(shape)
        if bias is not None:
            out = out + _wide(bias).view(shape)
    return out.to(input.dtype)


def _wide(t):
    """t in float32 if it is a 16-bit float (torch's norm kernels compute
    in float32 and round once)."""
    return t.float() if t.dtype in (fastt.float16, fastt.bfloat16) else t


def batch_norm(input, running_mean, running_var, weight=None, bias=None,
               training=False, momentum=0.1, eps=1e-5):
    """Per-channel (dim 1) normalization. Training normalizes with the
    batch's biased variance and folds the unbiased one into running_var;
    the result is x * scale + shift with C-sized scale/shift."""
    if input.numel() == 0:  # torch: a copy, still attached to the graph
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    c = input.shape[1] if input.dim() > 1 else input.shape[0]
    shape = (1, c) + (1,) * (input.dim() - 2)
    if training:
        count = input.numel() // c if c else 0
        if count == 1:  # torch's check (an empty batch passes it)
            raise ValueError("Expected more than 1 value per channel when "
                             f"training, got input size {input.shape}")
        dims = (0,) + tuple(range(2, input.dim()))
        var, mean = fastt.var_mean(input, dims, correction=0)
        if running_mean is not None:
            with _nograd():
                running_mean.mul_(1.0 - momentum).add_(
                    mean.detach(), alpha=momentum)
        if running_var is not None:
            with _nograd():
                running_var.mul_(1.0 - momentum).add_(
                    var.detach(), alpha=momentum * count / (count - 1))
    else:
        mean, var = running_mean, running_var
    # C-sized scale/shift, then one pass over the input: shift + x * scale
    scale = fastt.rsqrt(_wide(var) + eps)
    if weight is not None:
        scale = scale * _wide(weight)
    shift = _wide(mean) * scale
    shift = _wide(bias) - shift if bias is not None else -shift
    return fastt.addcmul(shift.view(shape), _wide(input),
                         scale.view(shape)).to(input.dtype)


def instance_norm(input, running_mean=None, running_var=None, weight=None,
                  bias=None, use_input_stats=True, momentum=0.1, eps=1e-5):
    """batch_norm over (1, N*C, ...): each instance's channels normalized
    on their own; running statistics (when given) updated with the mean
    over the batch, or used instead with use_input_stats=False (torch's
    formulation)."""
    n, c = input.shape[0], input.shape[1]
    x = input.reshape((1, n * c) + tuple(input.shape[2:]))

    def rep(t):
        return None if t is None else t.repeat(n)
    rm, rv = rep(running_mean), rep(running_var)
    out = batch_norm(x, rm, rv, rep(weight), rep(bias), use_input_stats,
                     momentum, eps)
    with _nograd():
        if running_mean is not None:
            running_mean.copy_(rm.view(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(n, c).mean(0))
    return out.view(input.shape)


# ---------------------------------------------------------------------------
# Convolution and pooling (fused fastt ops; as_strided fallbacks)
# ---------------------------------------------------------------------------
def _same_padding(kernel, dilation):
    # (before, after) per dim: total = dilation * (k - 1), extra after.
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def _windows(x, kernel, stride, dilation, out_hw):
    """[N, C, OH, OW, KH, KW] view of a contiguous [N, C, H, W] tensor."""
    x = x.contiguous()
    sn, sc, sh, sw = x.stride()
    return x.as_strided(
        (x.shape[0], x.shape[1], out_hw[0], out_hw[1], kernel[0], kernel[1]),
        (sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0],
         sw * dilation[1]))


def _conv2d_im2col(x, weight, bias, stride, padding, dilation, groups):
    kh, kw = weight.shape[2], weight.shape[3]
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, "
            f"expected input{list(x.shape)} to have "
            f"{weight.shape[1] * groups} channels, but got {x.shape[1]} "
            "channels instead")
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0), (0, 0)]
        else:
            pads = _same_padding((kh, kw), dilation)
    else:
        pads = [(p, p) for p in padding]
    if any(a or b for a, b in pads):
        x = pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    n, c, h, w = x.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    cols = _windows(x, (kh, kw), stride, dilation, (oh, ow))
    o = weight.shape[0]
    g = groups
    cols = cols.reshape(n, g, c // g, oh, ow, kh, kw).permute(
        0, 1, 3, 4, 2, 5, 6).reshape(n, g, oh * ow, (c // g) * kh * kw)
    wmat = weight.reshape(g, o // g, -1).transpose(1, 2)
    out = cols.matmul(wmat)  # [n, g, oh*ow, o/g]
    out = out.permute(0, 1, 3, 2).reshape(n, o, oh, ow)
    if bias is not None:
        out = out + bias.view(1, o, 1, 1)
    return out


def _conv2d_composed(input, weight, bias=None, stride=1, padding=0,
                     dilation=1, groups=1):
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    out = _conv2d_im2col(x, weight, bias, _pair(stride),
                           padding if isinstance(padding, str)
                           else _pair(padding), _pair(dilation), groups)
    return out.squeeze(0) if unbatched else out


def _conv1d_composed(input, weight, bias=None, stride=1, padding=0,
                     dilation=1, groups=1):
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else input
    if not isinstance(padding, str):
        padding = (0, _pair(padding, 1)[0])
    out = _conv2d_im2col(x.unsqueeze(2), weight.unsqueeze(2), bias,
                           (1, _pair(stride, 1)[0]), padding,
                           (1, _pair(dilation, 1)[0]), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


def _conv_transpose2d_composed(input, weight, bias=None, stride=1,
                               padding=0, output_padding=0, groups=1,
                               dilation=1):
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    s, p, op, d = (_pair(stride), _pair(padding), _pair(output_padding),
                   _pair(dilation))
    n, cin, h, w = x.shape
    kh, kw = weight.shape[2], weight.shape[3]
    cout_g = weight.shape[1]
    # Zero-insert by the stride, pad by d*(k-1)-p, correlate with the
    # flipped, in/out-swapped kernel.
    if s != (1, 1):
        up = x.new_zeros((n, cin, (h - 1) * s[0] + 1, (w - 1) * s[1] + 1))
        up[:, :, ::s[0], ::s[1]] = x
        x = up
    ph = [d[0] * (kh - 1) - p[0], d[0] * (kh - 1) - p[0] + op[0]]
    pw = [d[1] * (kw - 1) - p[1], d[1] * (kw - 1) - p[1] + op[1]]
    x = pad(x, (pw[0], pw[1], ph[0], ph[1]))
    g = groups
    wt = weight.reshape(g, cin // g, cout_g, kh, kw).transpose(1, 2).reshape(
        g * cout_g, cin // g, kh, kw).flip((2, 3))
    out = _conv2d_im2col(x, wt, bias, (1, 1), (0, 0), d, g)
    return out.squeeze(0) if unbatched else out


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_windows(x, kernel, stride, padding, dilation, ceil_mode, fill):
    n, c, h, w = x.shape
    oh = _pool_out(h, kernel[0], stride[0], padding[0], dilation[0],
                   ceil_mode)
    ow = _pool_out(w, kernel[1], stride[1], padding[1], dilation[1],
                   ceil_mode)
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{oh}x{ow}). Output size is too small")
    need_h = (oh - 1) * stride[0] + dilation[0] * (kernel[0] - 1) + 1
    need_w = (ow - 1) * stride[1] + dilation[1] * (kernel[1] - 1) + 1
    xp = pad(x, (padding[1], max(need_w - w - padding[1], 0), padding[0],
                 max(need_h - h - padding[0], 0)), value=fill)
    return _windows(xp, kernel, stride, dilation, (oh, ow))


def _max_pool2d_composed(input, kernel_size, stride=None, padding=0,
                         dilation=1, ceil_mode=False, return_indices=False):
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        stride = kernel_size
    if return_indices:
        if _max_pool2d_with_indices is None:
            raise NotImplementedError(
                "max_pool2d(return_indices=True) needs "
                "fastt.max_pool2d_with_indices")
        return _max_pool2d_with_indices(input, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    win = _pool_windows(x, _pair(kernel_size), _pair(stride), _pair(padding),
                        _pair(dilation), ceil_mode, -_inf)
    out = win.amax((-2, -1))
    return out.squeeze(0) if unbatched else out


def _avg_pool2d_composed(input, kernel_size, stride=None, padding=0,
                         ceil_mode=False, count_include_pad=True,
                         divisor_override=None):
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        stride = kernel_size
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    k, s, p = _pair(kernel_size), _pair(stride), _pair(padding)
    total = _pool_windows(x, k, s, p, (1, 1), ceil_mode, 0.0).sum((-2, -1))
    if divisor_override:
        out = total / divisor_override
    elif count_include_pad and not ceil_mode:
        out = total / (k[0] * k[1])
    else:
        # Divisor per window: in-bounds (or in padded bounds) cells.
        h, w = x.shape[2], x.shape[3]
        ones = x.new_ones((1, 1, h, w))
        if count_include_pad:
            ones = pad(ones, (p[1], p[1], p[0], p[0]), value=1.0)
            cnt = _pool_windows(ones, k, s, (0, 0), (1, 1), ceil_mode, 0.0)
            # windows were computed against the padded size
            cnt = cnt.sum((-2, -1))
            oh, ow = total.shape[2], total.shape[3]
            cnt = cnt[:, :, :oh, :ow]
        else:
            cnt = _pool_windows(ones, k, s, p, (1, 1), ceil_mode,
                                0.0).sum((-2, -1))
        out = total / cnt
    return out.squeeze(0) if unbatched else out


def _adaptive_avg_pool2d_composed(input, output_size):
    out_hw = _pair(output_size)
    h, w = input.shape[-2], input.shape[-1]
    oh = h if out_hw[0] is None else out_hw[0]
    ow = w if out_hw[1] is None else out_hw[1]
    lead = tuple(input.shape[:-2])
    if h % oh == 0 and w % ow == 0:
        return input.reshape(lead + (oh, h // oh, ow, w // ow)).mean((-3, -1))
    rows = []
    for i in range(oh):
        h0, h1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        cols = []
        for j in range(ow):
            w0, w1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            cols.append(input[..., h0:h1, w0:w1].mean((-2, -1)))
        rows.append(fastt.stack(cols, -1))
    return fastt.stack(rows, -2)


def _adaptive_index(n, o, device):
    """[o, k] input positions of each adaptive window along a dim of size
    n (k = the widest window; short windows repeat their last position)
    and the [o, k] mask of real (non-repeated) positions."""
    starts = [(i * n) // o for i in range(o)]
    ends = [-(-((i + 1) * n) // o) for i in range(o)]
    k = max(e - st for st, e in zip(starts, ends)) if o else 1
    idx = [[min(st + j, e - 1) for j in range(k)]
           for st, e in zip(starts, ends)]
    mask = [[st + j < e for j in range(k)] for st, e in zip(starts, ends)]
    return (fastt.tensor(idx, dtype=fastt.int64, device=device),
            fastt.tensor(mask, dtype=fastt.bool, device=device))


def _adaptive_sizes(op, input, output_size, nd):
    if nd > 1 and input.dim() < nd + 1:
        raise ValueError(f"{op}(): Input dimension should be at least "
                         f"{nd + 1}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
            f"{list(input.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0 and (d > 0 or input.dim() == nd + 1):
            raise RuntimeError(
                f"{op}(): Expected input to have non-zero size for "
                f"non-batch dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {d} being empty")
    out = _pair(output_size, nd)
    if len(out) != nd:
        raise RuntimeError(f"{op}(): output_size must be {nd}")
    sizes = tuple(input.shape[-nd:])
    out = tuple(n if o is None else int(o) for o, n in zip(out, sizes))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}(): elements of output_size must be "
                           "greater than or equal to 0")
    return sizes, out


def _adaptive_windows(x, sizes, out):
    """x [..., *sizes] -> ([..., *out, prod(k)] windows, per-dim indices
    and masks)."""
    nd = len(sizes)
    idxs, masks = [], []
    lead = x.dim() - nd
    for i, (n, o) in enumerate(zip(sizes, out)):
        idx, mask = _adaptive_index(n, o, x.device)
        idxs.append(idx)
        masks.append(mask)
        dim = lead + 2 * i
        x = x.index_select(dim, idx.reshape(-1))
        shape = tuple(x.shape)
        x = x.reshape(shape[:dim] + (o, idx.shape[1]) + shape[dim + 1:])
    # [..., o0, k0, o1, k1, ...] -> [..., o0, o1, ..., k0 k1 ...]
    perm = list(range(lead)) + [lead + 2 * i for i in range(nd)] + \
        [lead + 2 * i + 1 for i in range(nd)]
    x = x.permute(perm)
    k = 1
    for i in idxs:
        k *= i.shape[1]
    x = x.reshape(tuple(x.shape[:lead + nd]) + (k,))
    return x, idxs, masks


def _adaptive_max(op, input, output_size, return_indices, nd):
    sizes, out = _adaptive_sizes(op, input, output_size, nd)
    win, idxs, _ = _adaptive_windows(input, sizes, out)
    if win.shape[-1] == 0 or 0 in out:
        vals = win.sum(-1)
        return (vals, vals.to(fastt.int64)) if return_indices else vals
    vals, arg = win.max(-1)
    if not return_indices:
        return vals
    # window position -> flat input position
    ks = [i.shape[1] for i in idxs]
    flat = None
    rem = arg
    lead = input.dim() - nd
    for i in range(nd):
        inner = 1
        for k in ks[i + 1:]:
            inner *= k
        kpos = rem // inner if inner > 1 else rem
        rem = rem - kpos * inner
        pos = _pick_window(idxs[i], i, out, kpos, lead)
        stride = 1
        for n in sizes[i + 1:]:
            stride *= n
        flat = pos * stride if flat is None else flat + pos * stride
    return vals, flat


def _pick_window(idx, i, out, kpos, lead):
    """idx [o_i, k_i]; kpos [..., *out] window offsets -> input positions
    along dim i, shaped like kpos."""
    nd = len(out)
    o_i, k_i = idx.shape
    # offset of each output cell along dim i
    shape = [1] * (lead + nd)
    shape[lead + i] = o_i
    cell = fastt.arange(o_i, device=kpos.device).view(tuple(shape))
    flat_idx = idx.reshape(-1)
    return flat_idx.index_select(0, (cell * k_i + kpos).reshape(-1)).view(
        tuple(kpos.shape))


def _adaptive_avg(op, input, output_size, nd):
    sizes, out = _adaptive_sizes(op, input, output_size, nd)
    if all(n % o == 0 for n, o in zip(sizes, out) if o) and 0 not in out:
        lead = tuple(input.shape[:-nd])
        shape = lead
        for n, o in zip(sizes, out):
            shape += (o, n // o)
        dims = tuple(-2 * (nd - i) + 1 for i in range(nd))
        return input.reshape(shape).mean(dims)
    win, _, masks = _adaptive_windows(input, sizes, out)
    w = None
    for i, m in enumerate(masks):
        shape = [1] * (2 * nd)
        shape[i] = m.shape[0]
        shape[nd + i] = m.shape[1]
        mm = m.to(input.dtype).view(tuple(shape))
        w = mm if w is None else w * mm
    w = w.reshape(tuple(out) + (-1,))
    w = w / w.sum(-1, keepdim=True)
    return (win * w).sum(-1)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max("adaptive_max_pool1d", input, output_size,
                         return_indices, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max("adaptive_max_pool2d", input, output_size,
                         return_indices, 2)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max("adaptive_max_pool3d", input, output_size,
                         return_indices, 3)


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_avg("adaptive_avg_pool1d", input, output_size, 1)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg("adaptive_avg_pool3d", input, output_size, 3)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    nd = input.dim()
    if nd not in (2, 3) or input.shape[-1] == 0 or (
            nd == 2 and input.shape[0] == 0) or (nd == 3 and
                                                 input.shape[1] == 0):
        raise RuntimeError(
            "max_pool1d() Expected 2D or 3D (batch mode) tensor with "
            "optional 0 dim batch size for input, but got: "
            f"{list(input.shape)}")
    stride = kernel_size if stride is None else stride
    out = max_pool2d(input.unsqueeze(-2), (1, _pair(kernel_size, 1)[0]),
                     (1, _pair(stride, 1)[0]), (0, _pair(padding, 1)[0]),
                     (1, _pair(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    stride = kernel_size if stride is None else stride
    return avg_pool2d(input.unsqueeze(-2), (1, _pair(kernel_size, 1)[0]),
                      (1, _pair(stride, 1)[0]), (0, _pair(padding, 1)[0]),
                      ceil_mode, count_include_pad).squeeze(-2)


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None,
                                 dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q k^T * scale + mask) v. A bool mask keeps True entries.
    16-bit inputs are computed in float32 and rounded once at the end (as
    torch's CPU kernel accumulates)."""
    L, S = query.size(-2), key.size(-2)
    if scale is None:  # torch's 1 / sqrt(E), inf for E = 0
        scale = 1.0 / math.sqrt(query.size(-1)) if query.size(-1) else _inf
    low = query.dtype in (fastt.float16, fastt.bfloat16)
    if low:
        out_dtype = query.dtype
        query, key, value = (query.float(), key.float(), value.float())
        if attn_mask is not None and attn_mask.dtype != fastt.bool:
            attn_mask = attn_mask.float()
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit "
                           "attn_mask should not be set when is_causal=True")
    if dropout_p == 0.0:
        out = _flash_attention(query, key, value, attn_mask, is_causal, scale,
                               enable_gqa)
        if out is not None:
            return out.to(out_dtype) if low else out
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        rep = query.size(-3) // key.size(-3)
        key = _repeat_heads(key, rep)
        value = _repeat_heads(value, rep)
    attn = query.matmul(key.transpose(-2, -1)) * scale
    masked = is_causal or attn_mask is not None
    if is_causal:
        attn = attn.masked_fill(_causal_mask(L, S, query.device), -_inf)
    elif attn_mask is not None:
        if attn_mask.dtype == fastt.bool:
            attn = attn.masked_fill(attn_mask.logical_not(), -_inf)
        else:
            attn = attn + attn_mask
    if masked:
        # torch's safe softmax: a row with every key masked out is 0, not
        # NaN (as the fused kernel gives).
        dead = (attn == -_inf).all(-1, keepdim=True)
        attn = fastt.softmax(attn, -1).masked_fill(dead, 0.0)
    else:
        attn = fastt.softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    out = attn.matmul(value)
    return out.to(out_dtype) if low else out


def _flash_attention(query, key, value, attn_mask, is_causal, scale,
                     enable_gqa):
    """The fused CPU kernel (csrc/ops/attention.cpp) when it serves these
    inputs, else None (the composed path runs): float32/float64 on the CPU,
    2 to 4 dims with key and value of query's leading dims, a bool mask or
    a float mask that needs no gradient, broadcastable to [..., L, S]."""
    nd = query.dim()
    if (query.device.type != "cpu" or
            query.dtype not in (fastt.float32, fastt.float64) or
            not 2 <= nd <= 4 or key.dim() != nd or value.dim() != nd or
            key.dtype != query.dtype or value.dtype != query.dtype or
            key.device != query.device or value.device != query.device):
        return None
    lead = tuple(query.shape[:-3]) if nd == 4 else tuple(query.shape[:-2])
    if nd >= 3:
        kv_lead = tuple(key.shape[:-2])
        if kv_lead != tuple(value.shape[:-2]):
            return None
        if nd == 4 and (kv_lead[0] != query.size(0) or
                        (kv_lead[1] != query.size(1) and
                         (not enable_gqa or kv_lead[1] == 0 or
                          query.size(1) % kv_lead[1]))):
            return None
        if nd == 3 and kv_lead != lead:
            return None
    if key.size(-1) != query.size(-1) or key.size(-2) != value.size(-2):
        return None
    mask = attn_mask
    if mask is not None:
        if mask.device != query.device or mask.dim() > nd:
            return None
        if mask.dtype == fastt.bool:
            mask = fastt.zeros(mask.shape, dtype=query.dtype).masked_fill(
                mask.logical_not(), -_inf)
        elif mask.dtype != query.dtype or mask.requires_grad:
            return None
        mask = mask.reshape((1,) * (nd - mask.dim()) + tuple(mask.shape))
    # To [N, H, L, E]: a 3-D input is N batches of one head, 2-D one of one.
    if nd == 3:
        query, key, value = (t.unsqueeze(1) for t in (query, key, value))
        mask = None if mask is None else mask.unsqueeze(1)
    elif nd == 2:
        query, key, value = (t.unsqueeze(0).unsqueeze(0)
                             for t in (query, key, value))
        mask = None if mask is None else mask.unsqueeze(0).unsqueeze(0)
    out, _ = _C._flash_attention(query, key, value, mask, scale, is_causal)
    if nd == 3:
        return out.squeeze(1)
    if nd == 2:
        return out.squeeze(0).squeeze(0)
    return out


# A compiled step may read a cached mask (fastt.compile holds it).
_causal_masks = _TensorCache(max_size=65)


def _causal_mask(L, S, device):
    """The [L, S] bool mask above the diagonal, cached (read-only use)."""
    return _causal_masks.get_or_make(
        (L, S, str(device)),
        lambda: fastt.ones((L, S), dtype=fastt.bool, device=device).triu(1))


def _repeat_heads(x, rep):
    shape = tuple(x.shape)
    x = x.unsqueeze(-3).expand(shape[:-2] + (rep,) + shape[-2:])
    return x.reshape(shape[:-3] + (shape[-3] * rep,) + shape[-2:])


def _canonical_mask(mask, target_dtype):
    """A bool mask (True = masked out) or float mask -> additive float."""
    if mask is None:
        return None
    if mask.dtype == fastt.bool:
        return fastt.zeros(mask.shape, dtype=target_dtype,
                           device=mask.device).masked_fill(mask, -_inf)
    return mask.to(target_dtype) if mask.dtype != target_dtype else mask


def multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
        in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
        out_proj_weight, out_proj_bias, training=True, key_padding_mask=None,
        need_weights=True, attn_mask=None, use_separate_proj_weight=False,
        q_proj_weight=None, k_proj_weight=None, v_proj_weight=None,
        static_k=None, static_v=None, average_attn_weights=True,
        is_causal=False):
    """torch's F.multi_head_attention_forward with sequence-first inputs
    ([L, N, E] or unbatched [L, E]). Returns (output, weights or None).
    16-bit inputs are computed in float32, rounded once at the end."""
    if query.dtype in (fastt.float16, fastt.bfloat16):
        low = query.dtype

        def up(t):
            return t.float() if isinstance(t, fastt.Tensor) and \
                t.dtype == low else t
        out, weights = multi_head_attention_forward(
            up(query), up(key), up(value), embed_dim_to_check, num_heads,
            up(in_proj_weight), up(in_proj_bias), up(bias_k), up(bias_v),
            add_zero_attn, dropout_p, up(out_proj_weight), up(out_proj_bias),
            training, up(key_padding_mask), need_weights, up(attn_mask),
            use_separate_proj_weight, up(q_proj_weight), up(k_proj_weight),
            up(v_proj_weight), up(static_k), up(static_v),
            average_attn_weights, is_causal)
        return out.to(low), (None if weights is None else weights.to(low))
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = (query.unsqueeze(1), key.unsqueeze(1),
                             value.unsqueeze(1))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, "
            f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(
            f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use "
            "the Transformer module method `generate_square_subsequent_mask` "
            "to create this mask.")
    # ---- input projections: one GEMM for self-attention ----
    if not use_separate_proj_weight:
        if query is key and key is value:
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q = b_k = b_v = None
            if in_proj_bias is not None:
                b_q, b_k, b_v = in_proj_bias.chunk(3)
            q = linear(query, w_q, b_q)
            if key is value:
                k, v = linear(key, fastt.cat([w_k, w_v]),
                              None if in_proj_bias is None
                              else fastt.cat([b_k, b_v])).chunk(2, -1)
            else:
                k = linear(key, w_k, b_k)
                v = linear(value, w_v, b_v)
    else:
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight, b_q)
        k = linear(key, k_proj_weight, b_k)
        v = linear(value, v_proj_weight, b_v)
    # ---- masks: merged into one additive float mask [N, H, L, S] ----
    if attn_mask is not None:
        attn_mask = _canonical_mask(attn_mask, q.dtype)
        if attn_mask.dim() == 2:
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() != 3:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is "
                               "not supported")
    if bias_k is not None and bias_v is not None:
        k = fastt.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = fastt.cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    # [L, N, E] -> [N, H, L, D]
    q = q.reshape(tgt_len, bsz, num_heads, head_dim).permute(1, 2, 0, 3)
    k = (static_k.view(bsz, num_heads, -1, head_dim) if static_k is not None
         else k.reshape(k.shape[0], bsz, num_heads, head_dim)
         .permute(1, 2, 0, 3))
    v = (static_v.view(bsz, num_heads, -1, head_dim) if static_v is not None
         else v.reshape(v.shape[0], bsz, num_heads, head_dim)
         .permute(1, 2, 0, 3))
    if add_zero_attn:
        zeros = k.new_zeros((bsz, num_heads, 1, head_dim))
        k = fastt.cat([k, zeros], 2)
        v = fastt.cat([v, zeros], 2)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[2]
    mask = None
    if attn_mask is not None:
        # [1 or N*H, L, S] -> broadcastable to [N, H, L, S]
        mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                else attn_mask.view(bsz, num_heads, tgt_len, src_len))
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                f"got {key_padding_mask.shape}")
        kpm = _canonical_mask(key_padding_mask, q.dtype).view(
            bsz, 1, 1, src_len)
        mask = kpm if mask is None else mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scale = 1.0 / math.sqrt(head_dim)
        scores = (q * scale).matmul(k.transpose(-2, -1))
        if mask is not None:
            scores = scores + mask
        weights = fastt.softmax(scores, -1)
        if dropout_p > 0.0:  # torch returns the dropped-out weights
            weights = dropout(weights, dropout_p)
        out = weights.matmul(v)
    else:
        out = scaled_dot_product_attention(q, k, v, mask, dropout_p)
        weights = None
    out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = weights.mean(1)
    if unbatched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------
def mse_loss(input, target, size_average=None, reduce=None,
             reduction="mean", weight=None):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = (input - target).square()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
            weight=None):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None,
                   reduction="mean", beta=1.0):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values "
                           "for beta.")
    diff = (input - target).abs()
    if beta == 0.0:
        return _reduce(diff, reduction)
    loss = fastt.where(diff < beta, diff.square() * (0.5 / beta),
                       diff - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values "
                           "for delta.")
    diff = (input - target).abs()
    loss = fastt.where(diff < delta, diff.square() * 0.5,
                       (diff - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _class_weight_view(weight, ndim):
    # weight [C] broadcast along the class dim (1) of an [N, C, ...] input.
    return weight.view((1, -1) + (1,) * (ndim - 2)) if ndim > 1 else weight


def _lengths(v, n, what, device):
    if isinstance(v, fastt.Tensor):
        v = v.to(fastt.int64)
    else:
        v = fastt.tensor(list(v), dtype=fastt.int64, device=device)
    if v.dim() != 1 or v.numel() != n:
        raise RuntimeError(f"ctc_loss: {what} must be of size batch_size "
                           f"({n}), got {tuple(v.shape)}")
    return v


def _safe_logsumexp3(a, b, c):
    """log(e^a + e^b + e^c) elementwise, -inf where all are -inf, with no
    NaN in its gradient there."""
    m = fastt.maximum(fastt.maximum(a, b), c)
    m = fastt.where(fastt.isinf(m), fastt.zeros_like(m), m).detach()
    total = (a - m).exp() + (b - m).exp() + (c - m).exp()
    pos = total > 0
    safe = fastt.where(pos, total, fastt.ones_like(total))
    return fastt.where(pos, m + safe.log(), fastt.full_like(total, -_inf))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
             reduction="mean", zero_infinity=False):
    """Connectionist temporal classification: -log of the total probability
    of every alignment of each target with its input (the forward recursion
    over the blank-interleaved targets, in log space, one step per time).
    log_probs (T, N, C) or (T, C); targets padded (N, S) or concatenated
    1-D. As torch's kernel, the gradient w.r.t. log_probs assumes they are
    log_softmax outputs (it carries an extra exp(log_probs) term that the
    log_softmax's own backward cancels), so log_softmax inputs get torch's
    gradients exactly. reduction 'mean' divides each loss by its target
    length, then averages."""
    if log_probs.dim() not in (2, 3):
        raise RuntimeError("ctc_loss: log_probs must be 2-D (T, C) or 3-D "
                           f"(T, N, C), got {log_probs.dim()}-D")
    if not log_probs.is_floating_point():
        raise RuntimeError("ctc_loss: log_probs must be floating point")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    T, N, C = lp.shape
    dev = lp.device
    if unbatched and targets.dim() == 1 and not isinstance(
            target_lengths, fastt.Tensor) and not isinstance(
            target_lengths, (list, tuple)):
        target_lengths = [int(target_lengths)]
    if unbatched:
        if isinstance(input_lengths, fastt.Tensor):
            input_lengths = input_lengths.reshape(1)
        elif not isinstance(input_lengths, (list, tuple)):
            input_lengths = [int(input_lengths)]
        if isinstance(target_lengths, fastt.Tensor):
            target_lengths = target_lengths.reshape(1)
        elif not isinstance(target_lengths, (list, tuple)):
            target_lengths = [int(target_lengths)]
    in_len = _lengths(input_lengths, N, "input_lengths", dev)
    tg_len = _lengths(target_lengths, N, "target_lengths", dev)
    il, tl = in_len.tolist(), tg_len.tolist()
    if any(v < 0 or v > T for v in il):
        raise RuntimeError(f"ctc_loss: Expected input_lengths to have value "
                           f"at most {T}, but got value "
                           f"{max(il)} (while checking arguments for "
                           "ctc_loss_cpu)")
    if any(v < 0 for v in tl):
        raise RuntimeError("ctc_loss: target_lengths must be non-negative")
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    L = max(tl) if tl else 0
    tg = targets.to(fastt.int64)
    if tg.dim() == 1:  # concatenated targets: cut into padded rows
        if tg.numel() < sum(tl):
            raise RuntimeError("ctc_loss: targets has fewer elements than "
                               "the target lengths sum to")
        rows, at = [], 0
        for n_ in tl:
            row = tg.narrow(0, at, n_)
            rows.append(fastt.cat([row, fastt.full((L - n_,), blank,
                                                   dtype=fastt.int64,
                                                   device=dev)]))
            at += n_
        tg = fastt.stack(rows) if rows else fastt.zeros(
            (N, 0), dtype=fastt.int64, device=dev)
    elif tg.dim() == 2:
        if tg.shape[0] != N:
            raise RuntimeError("ctc_loss: targets' first dimension must be "
                               f"the batch size {N}, got {tg.shape[0]}")
        if tg.shape[1] < L:
            raise RuntimeError(f"ctc_loss: Expected tensor to have size at "
                               f"least {L} at dimension 1, but got size "
                               f"{tg.shape[1]} for argument #2 'targets'")
        tg = tg[:, :L]
    else:
        raise RuntimeError("ctc_loss: targets must be 1-D or 2-D")
    S = 2 * L + 1
    ext = fastt.full((N, S), blank, dtype=fastt.int64, device=dev)
    if L:
        ext[:, 1::2] = tg
    pos = fastt.arange(S, device=dev)
    valid = pos.unsqueeze(0) < (2 * tg_len + 1).unsqueeze(1)   # (N, S)
    prev2 = fastt.cat([fastt.full((N, 2), -1, dtype=fastt.int64, device=dev),
                       ext[:, :-2]], 1) if S > 2 else fastt.full(
        (N, S), -1, dtype=fastt.int64, device=dev)
    skip = (ext != blank) & (ext != prev2)
    neg = fastt.full((N, S), -_inf, dtype=lp.dtype, device=dev)
    start = (pos < 2).unsqueeze(0) & valid

    def emit(t):
        return lp[t].gather(1, ext)  # (N, S)
    alpha = fastt.where(start, emit(0), neg) if T else neg
    col = fastt.full((N, 1), -_inf, dtype=lp.dtype, device=dev)
    for t in range(1, T):
        a1 = fastt.cat([col, alpha[:, :-1]], 1)
        a2 = fastt.cat([col, col, alpha[:, :-2]], 1) if S > 1 else neg
        a2 = fastt.where(skip, a2, neg)
        nxt = _safe_logsumexp3(alpha, a1, a2) + emit(t)
        nxt = fastt.where(valid, nxt, neg)
        live = (t < in_len).unsqueeze(1)
        alpha = fastt.where(live, nxt, alpha)
    end = (2 * tg_len).unsqueeze(1)
    last = alpha.gather(1, end).squeeze(1)
    before = alpha.gather(1, (end - 1).clamp(min=0)).squeeze(1)
    before = fastt.where(tg_len > 0, before, fastt.full_like(before, -_inf))
    zero_in = in_len == 0  # no frames: probability 1 only for an empty target
    lse = _safe_logsumexp3(last, before, fastt.full_like(last, -_inf))
    lse = fastt.where(zero_in, fastt.where(tg_len == 0,
                                           fastt.zeros_like(lse),
                                           fastt.full_like(lse, -_inf)), lse)
    loss = -lse
    finite = ~fastt.isinf(loss)
    # torch's gradient convention: + exp(log_probs) over each input's frames
    # (value 0 forward; see the docstring)
    frames = (fastt.arange(T, device=dev).unsqueeze(1) <
              in_len.unsqueeze(0)).to(lp.dtype)                 # (T, N)
    base = lp.detach()
    diff = fastt.where(fastt.isfinite(base), lp - base,
                       fastt.zeros_like(base))  # -inf - -inf would be NaN
    extra = (base.exp() * diff).sum(2) * frames
    extra = extra.sum(0)
    if zero_infinity:
        loss = fastt.where(finite, loss + extra, fastt.zeros_like(loss))
    else:
        loss = loss + fastt.where(finite, extra, fastt.zeros_like(extra))
    if unbatched:
        loss = loss.squeeze(0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return (loss / tg_len.clamp(min=1).to(loss.dtype).reshape(
            loss.shape)).mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100,
             reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if _nll_loss is not None:
        out = _nll_loss(input, target, weight, reduction, ignore_index)
        return out[0] if isinstance(out, tuple) else out
    return _nll_composed(input, target, weight, reduction, ignore_index)


def _nll_composed(input, target, weight, reduction, ignore_index):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    class_dim = 0 if input.dim() == 1 else 1
    ignore = target == ignore_index
    safe = target.masked_fill(ignore, 0)
    n_classes = input.shape[class_dim]
    if safe.numel() and (int(safe.max()) >= n_classes or int(safe.min()) < 0):
        bad = int(safe.max()) if int(safe.max()) >= n_classes \
            else int(safe.min())
        raise IndexError(f"Target {bad} is out of bounds.")
    picked = input.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(
        class_dim)
    keep = ignore.logical_not()
    w = keep.to(input.dtype)
    if weight is not None:
        w = weight.index_select(0, safe.reshape(-1)).view(safe.shape) * w
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(input, target, weight=None, size_average=None,
                  ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Class-index targets use the fused fastt op (one kernel: logsumexp,
    pick, reduce); class-probability targets are composed."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if target.is_floating_point():
        if ignore_index != -100:
            raise RuntimeError(
                "ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction,
                                    label_smoothing)
    if _cross_entropy is not None:  # the hot path: one fused op
        return _cross_entropy(input, target, weight, reduction, ignore_index,
                              label_smoothing)[0]
    class_dim = 0 if input.dim() == 1 else 1
    logp = fastt.log_softmax(input, class_dim)
    nll = _nll_composed(logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0.0:
        return nll
    n_classes = input.shape[class_dim]
    ignore = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_weight_view(weight, input.dim())).sum(
            class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            keep = ignore.logical_not()
            safe = target.masked_fill(ignore, 0)
            denom = (weight.index_select(0, safe.reshape(-1)) *
                     keep.reshape(-1).to(weight.dtype)).sum()
        else:
            denom = ignore.logical_not().sum()
        smooth = smooth.sum() / denom
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing /
                                                     n_classes)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None,
                         weight=None, reduction="mean", ignore_index=None,
                         label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target):
    torch's reference path. A linear_weight (C, d_1, ..., d_K, in) gives
    K-dimensional logits (N, C, d_1, ..., d_K). `options` (torch's chunking)
    is accepted and computes the same values without chunking."""
    op = "linear_cross_entropy"
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{op}: expected input with dimensionality 1 or "
                           f"2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"{op}: expected linear_weight with "
                           "dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    fin = input.shape[-1]
    if linear_weight.shape[-1] != fin:
        raise RuntimeError(f"{op}: expected equal input and linear_weight "
                           "last dimensions (in_features), got "
                           f"{fin} and {linear_weight.shape[-1]}, "
                           "respectively")
    out_shape = tuple(linear_weight.shape[:-1])
    if len(out_shape) > 1 and input.dim() != 2:
        raise RuntimeError(f"{op}: K-dimensional loss defined by "
                           f"linear_weight shape {tuple(linear_weight.shape)}"
                           f" requires batched input, (N, {fin}), got "
                           f"{tuple(input.shape)}")
    if linear_bias is not None and tuple(linear_bias.shape) != out_shape:
        raise RuntimeError(f"{op}: expected linear_bias shape {out_shape}, "
                           f"got {tuple(linear_bias.shape)}")
    if target.is_floating_point() and ignore_index is not None:
        raise RuntimeError(f"{op}: ignore_index cannot be specified when "
                           "target contains probabilities")
    w2 = linear_weight.reshape(-1, fin)
    b = linear_bias.reshape(-1) if linear_bias is not None else None
    logits = linear(input, w2, b)
    if len(out_shape) > 1:
        logits = logits.reshape(tuple(input.shape[:-1]) + out_shape)
    return cross_entropy(logits, target, weight,
                         ignore_index=-100 if ignore_index is None
                         else ignore_index,
                         reduction=reduction,
                         label_smoothing=label_smoothing)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0,
                            dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool1d's (output, indices), whatever return_indices says (as
    torch's)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation,
                      ceil_mode, return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0,
                            dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool2d's (output, indices), whatever return_indices says."""
    return max_pool2d(input, kernel_size, stride, padding, dilation,
                      ceil_mode, return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0,
                            dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool3d's (output, indices), whatever return_indices says."""
    return max_pool3d(input, kernel_size, stride, padding, dilation,
                      ceil_mode, return_indices=True)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) != tuple(target.shape):
        raise RuntimeError(
            "Expected target size to be the same as input size when "
            f"target holds probabilities, got {target.shape} and "
            f"{input.shape}")
    n_classes = input.shape[class_dim]
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + (label_smoothing /
                                                     n_classes)
    logp = fastt.log_softmax(input, class_dim)
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight_view(weight, input.dim())
    if reduction == "mean":
        if input.numel() == 0:
            return -prod.sum() / 0.0
        return -prod.sum() / (input.numel() // n_classes)
    loss = -prod.sum(class_dim)
    return loss.sum() if reduction == "sum" else _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None,
                         reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the "
            f"input size ({input.shape}) is deprecated. Please ensure they "
            "have the same size.")
    # torch clamps the logs at -100 so 0 * log(0) stays finite.
    log_x = fastt.log(input).clamp_min(-100.0)
    log_1mx = fastt.log1p(-input).clamp_min(-100.0)
    loss = -(log_1mx + target * (log_x - log_1mx))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None,
                                     size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """(1 - t) x + w_p * softplus(-x), softplus(-x) = logaddexp(-x, 0):
    finite for any logit, gradient exact at 0."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size "
            f"({input.shape})")
    softplus_neg = _softplus1(-input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1.0) * target + 1.0
        loss = (1.0 - target) * input + log_weight * softplus_neg
    else:
        loss = (1.0 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if log_target:
        loss = fastt.exp(target) * (target - input)
    else:
        loss = fastt.where(target > 0, target * (fastt.log(target) - input),
                           0.0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


def _legacy(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _reduction(size_average, reduce, reduction)
    return reduction


def margin_ranking_loss(input1, input2, target, margin=0.0,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(
            "margin_ranking_loss(): All input tensors should have same "
            f"dimension but got sizes: input1: {input1.shape}, input2: "
            f"{input2.shape}, target: {target.shape} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None,
                         reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    margin_clamp = (margin - input).clamp_min(0)
    out_margin = fastt.where(target != 1, margin_clamp, 0.0)
    out_self = fastt.where(target != -1, input, 0.0)
    return _reduce(out_margin + out_self, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None,
                     reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    return _reduce(fastt.log1p(fastt.exp(-target * input)), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0,
                          size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    if target.dim() not in (0, 1):
        raise RuntimeError(
            "cosine_embedding_loss(): 0D or 1D target tensor expected, "
            "multi-target not supported")
    if input1.dim() != input2.dim() or input1.dim() not in (1, 2):
        raise RuntimeError(
            "cosine_embedding_loss(): 1D target tensor expects 2D input "
            f"tensors, but found inputs with sizes {list(input1.shape)} and "
            f"{list(input2.shape)}.")
    if input1.dim() == 2 and target.dim() != 1:
        raise RuntimeError(
            "cosine_embedding_loss(): 1D target tensor expects 2D input "
            "tensors")
    if input1.dim() == 1 and target.dim() != 0:
        raise RuntimeError(
            "cosine_embedding_loss(): 0D target tensor expects 1D input "
            "tensors")
    d = input1.dim() - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + eps
    m2 = (input2 * input2).sum(d) + eps
    cos = prod / (m1 * m2).sqrt()
    pos = fastt.where(target == 1, 1.0 - cos, 0.0)
    neg = fastt.where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(pos + neg, reduction)


def multilabel_soft_margin_loss(input, target, weight=None,
                                size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    return _reduce(loss, reduction)


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _margin_input(op, input):
    """0-D/1-D/2-D input -> [N, C]; an empty class dim is an error."""
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0) or (
            input.dim() == 1 and input.shape[0] == 0):
        raise RuntimeError(
            f"{op}(): Expected non-empty vector or matrix with optional "
            f"0-dim batch size, but got: {list(input.shape)}")
    if input.dim() == 0:
        return input.reshape((1, 1))
    return input.unsqueeze(0) if input.dim() == 1 else input


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None,
                      size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = _margin_input("multi_margin_loss", input)
    n, c = x.shape
    if (input.dim() == 2 and (target.dim() != 1 or target.shape[0] != n)) \
            or target.numel() != n or target.dim() > 1:
        raise RuntimeError(
            "multi_margin_loss(): target tensor should be 1-D with size "
            f"equal to the batch size. Expected target size [{n}], but got "
            f"{list(target.shape)}")
    if target.dtype != fastt.int64:
        raise RuntimeError("multi_margin_loss(): expected scalar type Long "
                           f"but found {_dtype_name(target.dtype)}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError("multi_margin_loss(): inconsistent weight size, "
                           f"expected {c} but got {list(weight.shape)}")
    t = target.reshape(-1)
    if t.numel() and (int(t.max()) >= c or int(t.min()) < 0):
        raise RuntimeError("multi_margin_loss(): target out of range")
    xy = x.gather(1, t.unsqueeze(1))
    z = (margin - xy + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t).unsqueeze(1)
    own = fastt.arange(c, device=x.device).unsqueeze(0) == t.unsqueeze(1)
    loss = z.masked_fill(own, 0.0).sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(tuple(target.shape))
    return _reduce(loss, reduction)


def _dtype_name(dt):
    return {fastt.float32: "Float", fastt.float64: "Double",
            fastt.int64: "Long", fastt.int32: "Int",
            fastt.float16: "Half", fastt.bfloat16: "BFloat16"}.get(
                dt, str(dt))


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction)
    x = _margin_input("multilabel_margin_loss", input)
    if tuple(input.shape) != tuple(target.shape):
        raise RuntimeError(
            "multilabel_margin_loss(): inconsistent target size: "
            f"{list(target.shape)} for input of size: {list(input.shape)}")
    t = target.reshape(tuple(x.shape))
    n, c = x.shape
    # the targets of a row: its entries before the first -1
    valid = (t >= 0).to(fastt.int64).cumprod(1).to(fastt.bool)
    safe = t.masked_fill(valid.logical_not(), 0)
    is_t = x.new_zeros((n, c)).scatter_add(
        1, safe, valid.to(x.dtype)) > 0
    xj = x.gather(1, safe)
    z = (1.0 - xj.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)
    keep = valid.unsqueeze(2).logical_and(is_t.logical_not().unsqueeze(1))
    loss = z.masked_fill(keep.logical_not(), 0.0).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2,
                        eps=1e-6, swap=False, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pp, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pp == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to "
            "have the same number of dimensions, but got: anchor "
            f"{a}D, positive {pp}D, and negative {n}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = fastt.minimum(d_neg, pairwise_distance(positive, negative,
                                                       p, eps))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *,
                                      distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pp, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pp == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to "
            "have the same number of dimensions, but got: anchor "
            f"{a}D, positive {pp}D, and negative {n}D inputs")
    dist = distance_function if distance_function is not None \
        else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = fastt.minimum(d_neg, dist(positive, negative))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6,
                      reduction="mean"):
    if isinstance(var, (int, float)):
        var = fastt.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and \
                var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # torch clamps a copy under no_grad: the value only
    v = var.detach()
    var = var + (v.clamp_min(eps) - v)
    loss = 0.5 * (fastt.log(var) + (input - target).square() / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False,
                     size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    low = input.dtype if input.dtype in (fastt.float16, fastt.bfloat16) \
        else None
    if low is not None:  # one rounding at the end, as torch's fused kernel
        input, target = input.float(), target.float()
    if log_input:
        loss = fastt.exp(input) - target * input
    else:
        loss = input - target * fastt.log(input + eps)
    if full:
        st = target * fastt.log(target) - target + 0.5 * fastt.log(
            2 * math.pi * target)
        loss = loss + st.masked_fill(target <= 1, 0.0)
    loss = _reduce(loss, reduction)
    return loss.to(low) if low is not None else loss


# ---------------------------------------------------------------------------
# Shape helpers
# ---------------------------------------------------------------------------
def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def unflatten(input, dim, sizes):
    return input.unflatten(dim, sizes)


def threshold(input, threshold, value, inplace=False):
    out = fastt.where(input > threshold, input, value)
    return input.copy_(out) if inplace else out


# ---------------------------------------------------------------------------
# Shuffles, fold/unfold, N-d pooling, more dropouts and activations
# ---------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but "
            f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError("pixel_shuffle expects a positive upscale_factor,"
                           f" but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be "
            f"divisible by the square of upscale_factor, but input.size(-3)"
            f"={c} is not divisible by {r * r}")
    lead = tuple(lead)
    n = len(lead)
    oc = c // (r * r)
    x = input.reshape(lead + (oc, r, r, h, w))
    x = x.permute(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(lead + (oc, h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, "
            f"but got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError("pixel_unshuffle expects a positive "
                           f"downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r != 0 or w % r != 0:
        raise RuntimeError(
            "pixel_unshuffle expects height and width to be divisible by "
            f"downscale_factor, but input.size(-2)={h} and input.size(-1)="
            f"{w} are not divisible by {r}")
    lead = tuple(lead)
    n = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(lead + (c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    g = int(groups)
    if input.dim() < 3:
        raise RuntimeError(
            "channel_shuffle expects input to have at least 3 dimensions, "
            f"but got input with {input.dim()} dimension(s)")
    if g <= 0:
        raise RuntimeError("Number of groups to divide channels in must be "
                           f"positive. Value of groups:{g}")
    n, c = input.shape[0], input.shape[1]
    if c % g != 0:
        raise RuntimeError(
            "Number of channels must be divisible by groups. Got "
            f"{c} channels and {g} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape((n, g, c // g) + rest).transpose(1, 2).reshape(
        (n, c) + rest)


def _window_dim(x, dim, size, step, dilation=1):
    """x with `dim` split into [count, size] windows (start = i * step,
    element j at start + j * dilation), the window dim last. One
    index_select: its backward accumulates overlaps (index_add)."""
    n = x.shape[dim]
    span = (size - 1) * dilation + 1
    count = (n - span) // step + 1
    o = fastt.arange(count, device=x.device).view(count, 1) * step
    j = fastt.arange(size, device=x.device).view(1, size) * dilation
    x = x.index_select(dim, (o + j).reshape(-1))
    shape = tuple(x.shape)
    x = x.reshape(shape[:dim] + (count, size) + shape[dim + 1:])
    nd = x.dim()
    if dim + 1 == nd - 1:
        return x
    return x.permute([d for d in range(nd) if d != dim + 1] + [dim + 1])


def _im2col_windows(x, kernel, dilation, padding, stride):
    """[N, C, *spatial] -> [N, C, *out, *kernel] windows (zero padding)."""
    nd = len(kernel)
    if any(padding):
        pads = []
        for p in reversed(padding):
            pads += [p, p]
        x = pad(x, tuple(pads))
    for i in range(nd):
        x = _window_dim(x, 2 + i, kernel[i], stride[i], dilation[i])
    return x


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if input.dim() not in (3, 4):
        raise NotImplementedError(
            "Input Error: Only 3D or 4D input Tensors are supported (got "
            f"{input.dim()}D)")
    k, d, p, s = (_pair(kernel_size), _pair(dilation), _pair(padding),
                  _pair(stride))
    for name, v, lo in (("kernel", k, 1), ("dilation", d, 1),
                        ("padding", p, 0), ("stride", s, 1)):
        if any(e < lo for e in v):
            raise RuntimeError(
                f"im2col(): {name} should be greater than "
                f"{'or equal to ' if lo == 0 else ''}zero, but got {v}")
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    n, c, h, w = x.shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"im2col(): Given input with spatial size ({h}, {w}), "
            f"kernel_size={k}, dilation={d}, padding={p}, calculated shape "
            f"of the array of sliding blocks as ({oh}, {ow}), but its "
            "components must be at least one.")
    win = _im2col_windows(x, k, d, p, s)  # [N, C, OH, OW, KH, KW]
    out = win.permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1],
                                                oh * ow)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if input.dim() not in (2, 3):
        raise NotImplementedError(
            "Input Error: Only unbatched (2D) or batched (3D) input Tensors "
            f"are supported (got {input.dim()}D)")
    osz, k, d, p, s = (_pair(output_size), _pair(kernel_size),
                       _pair(dilation), _pair(padding), _pair(stride))
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else input
    n, ck, L = x.shape
    kk = k[0] * k[1]
    if ck % kk != 0:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the "
            f"product of kernel_size, but got input.size(1)={ck} and "
            f"kernel_size={k}")
    c = ck // kk
    hp, wp = osz[0] + 2 * p[0], osz[1] + 2 * p[1]
    oh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh * ow != L:
        raise RuntimeError(
            "Given output_size=" + str(osz) + ", kernel_size=" + str(k) +
            ", dilation=" + str(d) + ", padding=" + str(p) + ", stride=" +
            str(s) + ", expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {oh} * {ow} = {oh * ow}, "
            f"but got input.size(2)={L}.")
    dev = x.device
    ki = fastt.arange(k[0], device=dev).view(k[0], 1, 1, 1) * d[0]
    kj = fastt.arange(k[1], device=dev).view(1, k[1], 1, 1) * d[1]
    bi = fastt.arange(oh, device=dev).view(1, 1, oh, 1) * s[0]
    bj = fastt.arange(ow, device=dev).view(1, 1, 1, ow) * s[1]
    idx = ((ki + bi) * wp + (kj + bj)).reshape(-1)
    cols = x.reshape(n, c, kk * L)
    out = x.new_zeros((n, c, hp * wp)).index_add(2, idx, cols)
    out = out.view(n, c, hp, wp)[:, :, p[0]:p[0] + osz[0],
                                  p[1]:p[1] + osz[1]]
    return out.squeeze(0) if unbatched else out


def _pool_nd_prep(op, input, kernel_size, stride, padding, dilation,
                  ceil_mode, nd):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{op}(): Expected {nd + 1}D or {nd + 2}D input tensor, but got "
            f"{list(input.shape)}")
    k = _pair(kernel_size, nd)
    s = _pair(stride, nd) if stride is not None and (
        not isinstance(stride, (tuple, list)) or len(stride)) else k
    p, d = _pair(padding, nd), _pair(dilation, nd)
    if len(k) == 1:
        k = k * nd
    if len(s) == 1:
        s = s * nd
    if len(p) == 1:
        p = p * nd
    if len(d) == 1:
        d = d * nd
    if any(v <= 0 for v in k):
        raise RuntimeError(f"{op}(): kernel_size must be greater than zero")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"{op}(): stride must be greater than zero")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"{op}(): dilation must be greater than zero")
    if any(pi < 0 for pi in p):
        raise RuntimeError(f"{op}(): pad must be non-negative")
    if any(pi > ki // 2 for pi, ki in zip(p, k)):
        raise RuntimeError(
            f"{op}(): pad should be at most half of effective kernel size")
    sizes = tuple(input.shape[-nd:])
    if any(v == 0 for v in input.shape[input.dim() - nd - 1 + (
            1 if input.dim() == nd + 2 else 0):]) or (
            input.dim() == nd + 2 and input.shape[1] == 0):
        raise RuntimeError(
            f"{op}(): Expected input's non-batch dimensions to have "
            f"positive length, but input has a shape of {list(input.shape)}")
    out = tuple(_pool_out(n, ki, si, pi, di, ceil_mode)
                for n, ki, si, pi, di in zip(sizes, k, s, p, d))
    if any(o < 1 for o in out):
        raise RuntimeError(
            f"{op}(): Given input size: {list(input.shape)}. Calculated "
            f"output size: {list(out)}. Output size is too small")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    return x, k, s, p, d, sizes, out, unbatched


def _pool_nd_pad(x, k, s, p, d, sizes, out, fill):
    pads = []
    for n, ki, si, pi, di, o in reversed(list(zip(sizes, k, s, p, d, out))):
        need = (o - 1) * si + di * (ki - 1) + 1
        pads += [pi, max(need - n - pi, 0)]
    return pad(x, tuple(pads), value=fill)


_INT_MIN = {fastt.int8: -2 ** 7, fastt.int16: -2 ** 15,
            fastt.int32: -2 ** 31, fastt.int64: -2 ** 63}


def _max_pool_nd(op, input, kernel_size, stride, padding, dilation,
                 ceil_mode, return_indices, nd):
    x, k, s, p, d, sizes, out, unbatched = _pool_nd_prep(
        op, input, kernel_size, stride, padding, dilation, ceil_mode, nd)
    fill = -_inf if x.is_floating_point() else _INT_MIN.get(x.dtype, 0)
    xp = _pool_nd_pad(x, k, s, p, d, sizes, out, fill)
    win = _im2col_windows(xp, k, d, (0,) * nd, s)
    kk = 1
    for v in k:
        kk *= v
    win = win.reshape(tuple(win.shape[:2 + nd]) + (kk,))
    vals, arg = win.max(-1)
    if not return_indices:
        return vals.squeeze(0) if unbatched else vals
    flat = None
    rem = arg
    dev = x.device
    for i in range(nd):
        inner = 1
        for v in k[i + 1:]:
            inner *= v
        kpos = rem // inner
        rem = rem - kpos * inner
        shape = [1] * (2 + nd)
        shape[2 + i] = out[i]
        start = fastt.arange(out[i], device=dev).view(tuple(shape)) * s[i] \
            - p[i]
        pos = start + kpos * d[i]
        stride_i = 1
        for n in sizes[i + 1:]:
            stride_i *= n
        flat = pos * stride_i if flat is None else flat + pos * stride_i
    if unbatched:
        return vals.squeeze(0), flat.squeeze(0)
    return vals, flat


def _avg_pool_nd(op, input, kernel_size, stride, padding, ceil_mode,
                 count_include_pad, divisor_override, nd):
    x, k, s, p, d, sizes, out, unbatched = _pool_nd_prep(
        op, input, kernel_size, stride, padding, 1, ceil_mode, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}(): divisor must be not zero")
    xp = _pool_nd_pad(x, k, s, p, d, sizes, out, 0.0)
    win = _im2col_windows(xp, k, d, (0,) * nd, s)
    dims = tuple(range(-nd, 0))
    total = win.sum(dims)
    if divisor_override:
        res = total / divisor_override if x.is_floating_point() else \
            fastt.div(total, divisor_override, rounding_mode="trunc")
    else:
        ones = x.new_ones(sizes)
        if count_include_pad:
            pads = []
            for pi in reversed(p):
                pads += [pi, pi]
            ones = pad(ones, tuple(pads), value=1.0)
            ones = _pool_nd_pad(ones.unsqueeze(0).unsqueeze(0), k, s,
                                (0,) * nd, d,
                                tuple(n + 2 * pi for n, pi in zip(sizes, p)),
                                out, 0.0)
        else:
            ones = _pool_nd_pad(ones.unsqueeze(0).unsqueeze(0), k, s, p, d,
                                sizes, out, 0.0)
        cnt = _im2col_windows(ones, k, d, (0,) * nd, s).sum(dims)
        res = total / cnt if x.is_floating_point() else fastt.div(
            total, cnt, rounding_mode="trunc")
    return res.squeeze(0) if unbatched else res


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _max_pool_nd("max_pool3d", input, kernel_size, stride, padding,
                        dilation, ceil_mode, return_indices, 3)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool_nd("avg_pool3d", input, kernel_size, stride, padding,
                        ceil_mode, count_include_pad, divisor_override, 3)


def _lp_pool(avg_pool, input, norm_type, kernel_size, stride, ceil_mode,
             nd):
    """(sum over each window of x^p)^(1/p): the mean of x^p times the
    window's size, with torch's sign * relu(|.|) guard for odd powers."""
    k = _pair(kernel_size, nd)
    out = avg_pool(input.pow(norm_type), kernel_size,
                   kernel_size if stride is None else stride, 0, ceil_mode)
    size = 1
    for v in (k * nd if len(k) == 1 else k):
        size *= v
    return (fastt.sign(out) * fastt.relu(out.abs())).mul(size).pow(
        1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool1d, input, norm_type, kernel_size, stride,
                    ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool2d, input, norm_type, kernel_size, stride,
                    ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool3d, input, norm_type, kernel_size, stride,
                    ceil_mode, 3)


def _max_unpool(op, input, indices, kernel_size, stride, padding,
                output_size, nd):
    k = _pair(kernel_size, nd)
    s = _pair(stride, nd) if stride is not None else k
    p = _pair(padding, nd)
    if len(k) == 1:
        k = k * nd
    if len(s) == 1:
        s = s * nd
    if len(p) == 1:
        p = p * nd
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"{op}(): Expected shape of indices to be same as that of the "
            f"input tensor ({list(input.shape)}) but got indices tensor with "
            f"shape: {list(indices.shape)}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    idx = indices.unsqueeze(0) if unbatched else indices
    insz = tuple(x.shape[-nd:])
    default = tuple((i - 1) * si - 2 * pi + ki
                    for i, si, pi, ki in zip(insz, s, p, k))
    if output_size is None:
        osz = default
    else:
        osz = tuple(output_size)[-nd:]
        for o, dft, si in zip(osz, default, s):
            if not (dft - si < o < dft + si):
                raise ValueError(
                    f"invalid output_size \"{list(output_size)}\" (dim 0 "
                    f"must be between {dft - si} and {dft + si})")
    n, c = x.shape[0], x.shape[1]
    total = 1
    for o in osz:
        total *= o
    flat_idx = idx.reshape(n, c, -1)
    if flat_idx.numel() and (int(flat_idx.max()) >= total or
                             int(flat_idx.min()) < 0):
        raise RuntimeError(f"{op}(): Found an invalid max index: "
                           f"{int(flat_idx.max())} (output volumes are of "
                           f"size {'x'.join(str(o) for o in osz)}")
    out = x.new_zeros((n, c, total)).scatter(2, flat_idx,
                                             x.reshape(n, c, -1))
    out = out.reshape((n, c) + osz)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None):
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride,
                       padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None):
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride,
                       padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None):
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride,
                       padding, output_size, 3)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 5)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _alpha_dropout(input, p, training, inplace, feature):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    alpha = _SELU_ALPHA * _SELU_SCALE
    if feature:
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    keep = input.new_empty(shape).bernoulli_(1.0 - p)
    a = 1.0 / math.sqrt((alpha * alpha * p + 1.0) * (1.0 - p))
    b = (keep - 1.0) * (alpha * a) + alpha * a * p
    noise = keep * a
    if inplace:
        return input.mul_(noise).add_(b)
    return input * noise + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, True)


def prelu(input, weight):
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("prelu: Not allow zero-dim input tensor.")
        c = input.shape[1] if input.dim() >= 2 else input.shape[0]
        if weight.numel() != c:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. "
                f"Found parameter numbers = {weight.numel()} and channel "
                f"size = {c}.")
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D "
                           f"tensor, but got: ndim = {weight.dim()}")
    w = weight
    if input.dim() >= 2 and weight.numel() > 1:
        w = weight.view((1, -1) + (1,) * (input.dim() - 2))
    elif weight.dim() == 1 and input.dim() < 1:
        w = weight.reshape(())
    return fastt.where(input > 0, input, w * input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False,
          inplace=False):
    if lower > upper:
        raise RuntimeError("rrelu(): Lower bound should be less than or "
                           f"equal to the upper bound, got lower={lower} "
                           f"and upper={upper}")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = fastt.empty_like(input).uniform_(lower, upper)
    out = fastt.where(input >= 0, input, input * slope)
    return input.copy_(out) if inplace else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got "
                         f"{dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    sq = _pad_constant(sq, 1, size // 2, (size - 1) // 2, 0.0)
    div = _window_dim(sq, 1, size, 1).sum(-1)
    # torch averages with avg_pool: integer inputs divide truncating
    div = div / size if sq.is_floating_point() else fastt.div(
        div, size, rounding_mode="trunc")
    return input / (div * alpha + k).pow(beta)


# ---------------------------------------------------------------------------
# Interpolation: separable, one index_select (and weights) per spatial dim
# ---------------------------------------------------------------------------
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _interp_sizes(input, size, scale_factor, recompute_scale_factor):
    nd = input.dim() - 2
    insz = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial "
                    f"dimensions, but got input with spatial dimensions of "
                    f"{list(insz)} and output size of {size}. Please provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            out = tuple(int(v) for v in size)
        else:
            out = (int(size),) * nd
        return out, (None,) * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != nd:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial "
                f"dimensions, but got input with spatial dimensions of "
                f"{list(insz)} and scale_factor of shape {scale_factor}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format.")
        sf = tuple(float(v) for v in scale_factor)
    else:
        sf = (float(scale_factor),) * nd
    out = tuple(int(math.floor(n * s)) for n, s in zip(insz, sf))
    if recompute_scale_factor:
        return out, (None,) * nd
    return out, sf


def _interp_dim(x, dim, n, o, scale, mode, align_corners):
    dev = x.device
    if mode in ("nearest", "nearest-exact"):
        s = 1.0 / scale if scale is not None and scale > 0 else n / o
        dst = fastt.arange(o, dtype=fastt.float32, device=dev)
        if mode == "nearest-exact":
            dst = dst + 0.5
        idx = (dst * s).floor().clamp_max(n - 1).to(fastt.int64)
        return x.index_select(dim, idx)
    # torch's source indices and weights: [o, K] taps (K = 2 or 4)
    idx, w = _C._interp_taps(n, o, scale or 0.0, align_corners,
                             mode == "bicubic", x.dtype == fastt.float64)
    if dev.type == "cpu":
        return _C._resample(x, dim, idx, w)
    return _resample_composed(x, dim, idx.to(dev), w.to(dev))


def _resample_composed(x, dim, idx, w):
    """_C._resample (a CPU kernel) from index_selects, for other devices:
    position j of dim is sum_k w[j, k] * x[..., idx[j, k], ...]."""
    shape = [1] * x.dim()
    shape[dim] = idx.shape[0]
    out = None
    for k in range(idx.shape[1]):
        term = x.index_select(dim, idx[:, k]) * w[:, k].view(shape)
        out = term if out is None else out + term
    return out


def _aa_matrix(n, o, scale, align_corners, mode, dtype, device):
    """The (o, n) weights of torch's antialiased resize along one dim (the
    PIL scheme): output pixel i averages the inputs within `support` of its
    centre with a triangle (bilinear) or a = -0.5 cubic (bicubic) filter
    stretched by the downscale factor, the weights normalized to sum 1."""
    if align_corners:
        sc = (n - 1) / (o - 1) if o > 1 else 0.0
    else:
        sc = 1.0 / scale if scale is not None and scale > 0 else n / o
    size = 2 if mode == "bilinear" else 4
    support = size * 0.5 * sc if sc >= 1.0 else size * 0.5
    inv = 1.0 / sc if sc >= 1.0 else 1.0

    def filt(x):
        x = abs(x)
        if mode == "bilinear":
            return 1.0 - x if x < 1.0 else 0.0
        a = -0.5
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0
    rows = []
    for i in range(o):
        centre = sc * (i + 0.5)  # align_corners only changes the scale
        lo = _builtins.max(int(centre - support + 0.5), 0)
        hi = _builtins.min(int(centre + support + 0.5), n)
        ws = [filt((j - centre + 0.5) * inv) for j in range(lo, hi)]
        total = sum(ws)
        row = [0.0] * n
        for j, w in zip(range(lo, hi), ws):
            row[j] = w / total if total != 0.0 else w
        rows.append(row)
    return fastt.tensor(rows, dtype=fastt.float64, device=device).to(dtype)


def interpolate(input, size=None, scale_factor=None, mode="nearest",
                align_corners=None, recompute_scale_factor=None,
                antialias=False):
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic",
             "trilinear", "area")
    if mode not in modes:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
            f"bicubic | trilinear | area | nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias and (mode not in ("bilinear", "bicubic") or
                      input.dim() != 4):
        raise ValueError("Anti-alias option is restricted to bilinear and "
                         "bicubic modes and requires a 4-D tensor as input")
    nd = input.dim() - 2
    if nd < 1 or nd > 3 or (mode in _INTERP_DIMS and
                            _INTERP_DIMS[mode] != nd):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
            f"bicubic | trilinear | area | nearest-exact (got {mode})")
    out, scales = _interp_sizes(input, size, scale_factor,
                                recompute_scale_factor)
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"interpolate(): Input and output sizes should be greater than "
            f"0, but got input ({tuple(input.shape[2:])}) and output "
            f"({out})")
    if mode == "area":
        return _adaptive_avg("adaptive_avg_pool%dd" % nd, input, out, nd)
    x = input
    low = None
    if mode not in ("nearest", "nearest-exact"):
        if x.dtype in (fastt.float16, fastt.bfloat16):
            low = x.dtype
            x = x.float()
        elif not x.is_floating_point():
            low = x.dtype
            x = x.float()
    insz = tuple(input.shape[2:])
    if antialias:  # separable filter matrices: W_h @ x @ W_w^T
        for i in (1, 0):
            w = _aa_matrix(insz[i], out[i], scales[i], align_corners, mode,
                           x.dtype, x.device)
            x = fastt.matmul(w, x) if i == 0 else fastt.matmul(x, w.t())
    else:
        # the last dim's pass gathers value by value, the others move whole
        # rows: it goes first (torch's order of the weighted sums) unless
        # it shrinks, then last, where it has the fewest values to make
        order = list(reversed(range(nd)))
        if out[-1] < insz[-1]:
            order = order[1:] + order[:1]
        for i in order:
            x = _interp_dim(x, 2 + i, insz[i], out[i], scales[i], mode,
                            align_corners)
    if low is not None:
        if low in (fastt.float16, fastt.bfloat16):
            return x.to(low)
        return x.round().clamp(0, 255).to(low)
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest",
             align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear",
                       align_corners=True)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0,
                     output_padding=0, groups=1, dilation=1):
    """conv_transpose2d over a height-1 image."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "conv_transpose1d(): Expected 2D (unbatched) or 3D (batched) "
            f"input to conv_transpose1d, but got input of size: "
            f"{list(input.shape)}")
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else input
    low = x.dtype if x.dtype in (fastt.float16, fastt.bfloat16) else None
    if low is not None:  # accumulate in float32, round once
        x, weight = x.float(), weight.float()
        bias = bias.float() if bias is not None else None
    out = conv_transpose2d(
        x.unsqueeze(2), weight.unsqueeze(2), bias,
        (1, _pair(stride, 1)[0]), (0, _pair(padding, 1)[0]),
        (0, _pair(output_padding, 1)[0]), groups,
        (1, _pair(dilation, 1)[0])).squeeze(2)
    if low is not None:
        out = out.to(low)
    return out.squeeze(0) if unbatched else out


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1,
           groups=1):
    """Windows by index_select (im2col), then one batched GEMM."""
    if input.dim() not in (4, 5):
        raise RuntimeError(
            "conv3d(): Expected 4D (unbatched) or 5D (batched) input to "
            f"conv3d, but got input of size: {list(input.shape)}")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    s, d = _pair(stride, 3), _pair(dilation, 3)
    if len(s) == 1:
        s = s * 3
    if len(d) == 1:
        d = d * 3
    if weight.dim() != 5:
        raise RuntimeError(
            f"conv3d(): Expected {weight.dim()}-dimensional input for "
            f"{weight.dim()}-dimensional weight {list(weight.shape)}, but "
            f"got {x.dim()}-dimensional input of size {list(x.shape)}")
    if x.dtype != weight.dtype or (bias is not None and
                                   bias.dtype != x.dtype):
        raise RuntimeError(
            "conv3d(): Input type, weight type and bias type should be the "
            "same")
    if any(v <= 0 for v in s):
        raise RuntimeError("conv3d(): non-positive stride is not supported")
    if any(v <= 0 for v in d):
        raise RuntimeError("conv3d(): dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("conv3d(): non-positive groups is not supported")
    if weight.shape[0] < groups or weight.shape[0] % groups:
        raise RuntimeError(
            f"conv3d(): expected weight to be at least {groups} at "
            f"dimension 0, but got weight of size {list(weight.shape)} "
            "instead" if weight.shape[0] < groups else
            "conv3d(): expected weight's dimension 0 to be divisible by "
            "groups")
    k = tuple(weight.shape[2:])
    g = groups
    if x.shape[1] != weight.shape[1] * g:
        raise RuntimeError(
            f"Given groups={g}, weight of size {list(weight.shape)}, "
            f"expected input{list(x.shape)} to have {weight.shape[1] * g} "
            f"channels, but got {x.shape[1]} channels instead")
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * 3
        elif padding == "same":
            if any(v != 1 for v in s):
                raise RuntimeError("conv3d(): padding='same' is not "
                                   "supported for strided convolutions")
            pads = _same_padding(k, d)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should "
                             "be one of {'valid', 'same'}")
    else:
        p = _pair(padding, 3)
        if len(p) == 1:
            p = p * 3
        if any(v < 0 for v in p):
            raise RuntimeError("conv3d(): negative padding is not supported")
        pads = [(v, v) for v in p]
    if any(a or b for a, b in pads):
        flat = []
        for a, b in reversed(pads):
            flat += [a, b]
        x = pad(x, tuple(flat))
    n, c = x.shape[0], x.shape[1]
    win = _im2col_windows(x, k, d, (0, 0, 0), s)  # [N, C, O3, K3]
    out_sp = tuple(win.shape[2:5])
    L = out_sp[0] * out_sp[1] * out_sp[2]
    kk = k[0] * k[1] * k[2]
    o = weight.shape[0]
    cols = win.reshape(n, g, c // g, L, kk).permute(0, 1, 3, 2, 4).reshape(
        n, g, L, (c // g) * kk)
    wmat = weight.reshape(g, o // g, -1).transpose(1, 2)
    out = cols.matmul(wmat).permute(0, 1, 3, 2).reshape((n, o) + out_sp)
    if bias is not None:
        out = out + bias.view(1, o, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def _zero_stuff(x, dim, s):
    """x with s - 1 zeros between neighbours along dim (a transposed
    convolution's stride), by cat + reshape + narrow (differentiable)."""
    if s == 1 or x.shape[dim] == 0:
        return x
    n = x.shape[dim]
    z = fastt.zeros(tuple(x.shape[:dim + 1]) + (s - 1,) +
                    tuple(x.shape[dim + 1:]), dtype=x.dtype, device=x.device)
    y = fastt.cat([x.unsqueeze(dim + 1), z], dim + 1)
    y = y.reshape(tuple(x.shape[:dim]) + (n * s,) + tuple(x.shape[dim + 1:]))
    return y.narrow(dim, 0, (n - 1) * s + 1)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0,
                     output_padding=0, groups=1, dilation=1):
    """The transposed 3-D convolution as conv3d over the zero-stuffed input
    padded by dilation * (k - 1) - padding (+ output_padding after), with
    the weight's channels swapped per group and its window flipped."""
    op = "conv_transpose3d"
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"{op}(): Expected 4D (unbatched) or 5D (batched) input to {op},"
            f" but got input of size: {list(input.shape)}")
    if weight.dim() != 5:
        raise RuntimeError(f"{op}(): expected a 5-D weight, got "
                           f"{list(weight.shape)}")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input

    def three(v):
        v = _pair(v, 3)
        return tuple(v) * 3 if len(v) == 1 else tuple(v)
    s, p, o, d = three(stride), three(padding), three(output_padding), \
        three(dilation)
    if any(v <= 0 for v in s):
        raise RuntimeError(f"{op}(): non-positive stride is not supported")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"{op}(): dilation should be greater than zero")
    if any(v < 0 for v in p):
        raise RuntimeError(f"{op}(): negative padding is not supported")
    if groups <= 0:
        raise RuntimeError(f"{op}(): non-positive groups is not supported")
    for oi, si, di in zip(o, s, d):
        if oi < 0 or oi >= max(si, di):
            raise RuntimeError(f"{op}(): output padding must be smaller "
                               "than either stride or dilation, but got "
                               f"output_padding={list(o)}, stride={list(s)}"
                               f", dilation={list(d)}")
    cin = weight.shape[0]
    if x.shape[1] != cin or cin % groups:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, "
            f"expected input{list(x.shape)} to have {cin} channels, but got "
            f"{x.shape[1]} channels instead")
    if x.dtype != weight.dtype or (bias is not None and
                                   bias.dtype != x.dtype):
        raise RuntimeError(f"{op}(): Input type, weight type and bias type "
                           "should be the same")
    k = tuple(weight.shape[2:])
    dtype = x.dtype
    if dtype in (fastt.float16, fastt.bfloat16):  # float32, one rounding
        x, weight = x.float(), weight.float()
        bias = bias.float() if bias is not None else None
    for i in range(3):
        x = _zero_stuff(x, 2 + i, s[i])
    flat = []
    for i in reversed(range(3)):
        lo = d[i] * (k[i] - 1) - p[i]
        flat += [lo, lo + o[i]]
    x = pad(x, tuple(flat))
    cout_g = weight.shape[1]
    w = weight.reshape((groups, cin // groups, cout_g) + k).transpose(1, 2)
    w = w.reshape((groups * cout_g, cin // groups) + k).flip(2, 3, 4)
    out = conv3d(x, w, bias, 1, 0, d, groups).to(dtype)
    return out.squeeze(0) if unbatched else out


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _grid_unnormalize(coord, size, align_corners):
    # [-1, 1] -> pixel coordinates (corner centres, or corner edges)
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _grid_reflect(x, twice_low, twice_high):
    """torch's reflect_coordinates: x folded into [low, high]."""
    if twice_low == twice_high:
        return fastt.zeros_like(x)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = x - lo
    x = x * fastt.where(x < 0, -1.0, 1.0)  # |x|, gradient +1 at 0 (torch)
    extra = fastt.fmod(x, span)
    flips = fastt.floor(x / span)
    even = fastt.remainder(flips, 2) == 0
    return fastt.where(even, extra + lo, span - extra + lo)


def _grid_clip(x, size):
    """x clamped to [0, size - 1], its gradient 1 strictly inside and 0 on
    and beyond the edges (torch's clip_coordinates_set_grad; clamp's
    gradient would be 1 on the edge)."""
    inside = (x > 0) & (x < size - 1)
    return fastt.where(inside, x, x.detach().clamp(0, size - 1))


def _grid_pad(x, size, padding, align_corners):
    """A source coordinate under border / reflection padding."""
    if padding == 1:
        return _grid_clip(x, size)
    if padding == 2:
        if align_corners:
            x = _grid_reflect(x, 0, 2 * (size - 1))
        else:
            x = _grid_reflect(x, -1, 2 * size - 1)
        return _grid_clip(x, size)
    return x


def _grid_taps(flat, coords, sizes):
    """flat (N, C, prod(sizes)); coords: one (N, L) integer tensor per
    spatial dim (outermost first). The values there, 0 where out of
    bounds: (N, C, L)."""
    inside = None
    lin = None
    for c, n in zip(coords, sizes):
        ok = (c >= 0) & (c < n)
        inside = ok if inside is None else inside & ok
        c = c.clamp(0, n - 1)
        lin = c if lin is None else lin * n + c
    nb, ch = flat.shape[0], flat.shape[1]
    idx = lin.unsqueeze(1).expand(nb, ch, lin.shape[-1])
    vals = flat.gather(2, idx)
    return vals * inside.unsqueeze(1).to(vals.dtype)


def _cubic_weights(t):
    """torch's cubic convolution coefficients (A = -0.75) at offset t in
    [0, 1): the weights of taps -1, 0, 1, 2."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sample(input, grid, mode, padding, align_corners, op):
    nd = input.dim() - 2
    if input.dim() not in (4, 5):
        raise RuntimeError(f"{op}(): expected 4D or 5D input and grid with "
                           f"same number of dimensions, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.dim() != input.dim():
        raise RuntimeError(f"{op}(): expected grid to have the same number "
                           f"of dimensions as input, but got grid with sizes"
                           f" {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"{op}(): expected grid and input to have same "
                           f"batch size, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"{op}(): expected grid to have size {nd} in last"
                           f" dimension, but got grid with sizes "
                           f"{list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"{op}(): expected input and grid to have the "
                           f"same dtype, but input has {input.dtype} and "
                           f"grid has {grid.dtype}")
    if any(n == 0 for n in input.shape[2:]):
        raise RuntimeError(f"{op}(): expected input to have non-empty "
                           f"spatial dimensions, but input has sizes "
                           f"{list(input.shape)} with dimension 2 being "
                           "empty")
    if mode == 2 and nd != 2:
        raise RuntimeError(f"{op}(): bicubic interpolation only supports "
                           "4D input")
    dtype = input.dtype
    if dtype in (fastt.float16, fastt.bfloat16):  # float32 math
        input, grid = input.float(), grid.float()
    nb, ch = input.shape[0], input.shape[1]
    sizes = tuple(input.shape[2:])          # (H, W) or (D, H, W)
    out_sp = tuple(grid.shape[1:-1])
    g = grid.reshape(nb, -1, nd)            # (N, L, nd), x first
    flat = input.reshape(nb, ch, -1)
    # source coordinates, outermost spatial dim first (grid's last entry)
    src = [_grid_unnormalize(g[..., nd - 1 - i], sizes[i], align_corners)
           for i in range(nd)]
    if mode != 2:
        src = [_grid_pad(x, n, padding, align_corners)
               for x, n in zip(src, sizes)]
    if mode == 1:  # nearest: round half to even, as nearbyint
        out = _grid_taps(flat, [fastt.round(x).to(fastt.int64)
                                for x in src], sizes)
    elif mode == 0:
        lows = [fastt.floor(x) for x in src]
        fr = [x - lo for x, lo in zip(src, lows)]
        lows = [lo.to(fastt.int64) for lo in lows]
        out = None
        for corner in range(1 << nd):
            w = None
            coords = []
            for i in range(nd):
                hi = (corner >> (nd - 1 - i)) & 1
                wi = fr[i] if hi else 1 - fr[i]
                w = wi if w is None else w * wi
                coords.append(lows[i] + hi)
            term = _grid_taps(flat, coords, sizes) * w.unsqueeze(1)
            out = term if out is None else out + term
    else:  # bicubic (2-D): 4 x 4 taps, each tap coordinate padded
        fy, fx = fastt.floor(src[0]), fastt.floor(src[1])
        wy = _cubic_weights(src[0] - fy)
        wx = _cubic_weights(src[1] - fx)
        fy, fx = fy.to(fastt.int64), fx.to(fastt.int64)
        out = None
        for i in range(4):
            yi = fy + (i - 1)
            if padding:
                yi = _grid_pad(yi.to(src[0].dtype), sizes[0], padding,
                               align_corners).to(fastt.int64)
            row = None
            for j in range(4):
                xj = fx + (j - 1)
                if padding:
                    xj = _grid_pad(xj.to(src[1].dtype), sizes[1], padding,
                                   align_corners).to(fastt.int64)
                term = _grid_taps(flat, [yi, xj], sizes) * \
                    wx[j].unsqueeze(1)
                row = term if row is None else row + term
            term = row * wy[i].unsqueeze(1)
            out = term if out is None else out + term
    out = out.reshape((nb, ch) + out_sp)
    return out.to(dtype) if out.dtype != dtype else out


def _grid_axis(steps, align_corners, like):
    """Normalized sample positions along one axis: [-1, 1] through the
    corner pixels' centers (align_corners) or their outer edges."""
    x = fastt.linspace(-1.0, 1.0, steps, dtype=like.dtype, device=like.device)
    if not align_corners and steps > 1:
        x = x * ((steps - 1) / steps)
    return x if steps > 1 else fastt.zeros(1, dtype=like.dtype,
                                           device=like.device)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid [N, H, W, 2] ([N, D, H, W, 3]) that grid_sample
    needs to apply the affine maps theta [N, 2, 3] ([N, 3, 4])."""
    if align_corners is None:
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError("Expected theta to have floating point type, but "
                         f"got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError("Expected a batch of 2D affine matrices of shape "
                             f"Nx2x3 for size {size}. Got "
                             f"{tuple(theta.shape)}.")
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError("Expected a batch of 3D affine matrices of shape "
                             f"Nx3x4 for size {size}. Got "
                             f"{tuple(theta.shape)}.")
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
            f"transforms, respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got "
                         f"{size}")
    N, spatial = size[0], size[2:]
    # (x, y[, z], 1) for every output position, x along the last axis.
    axes = [_grid_axis(n, align_corners, theta) for n in reversed(spatial)]
    mesh = fastt.meshgrid(*reversed(axes), indexing="ij")  # (z,) y, x
    coords = [m.unsqueeze(-1) for m in reversed(mesh)] + [
        fastt.ones(tuple(spatial) + (1,), dtype=theta.dtype,
                   device=theta.device)]
    base = fastt.cat(coords, -1).reshape(1, -1, len(spatial) + 1)
    grid = fastt.matmul(base, theta.mT)
    return grid.reshape([N] + spatial + [len(spatial)])


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g Gumbel(0, 1) noise; hard: the
    one-hot argmax in the forward pass, the soft sample's gradient."""
    gumbels = -fastt.empty_like(logits).exponential_().log()
    y = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = fastt.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y.detach() + y


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros",
                align_corners=None):
    """Samples input (N, C, H, W) or (N, C, D, H, W) at grid's normalized
    [-1, 1] coordinates (x first): bilinear / nearest (round half to even) /
    bicubic (4-D only, A = -0.75), with zeros / border / reflection padding;
    align_corners=None is False, as torch. Gradients flow to input and
    grid."""
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be "
                         f"'bilinear', 'nearest' or 'bicubic', but got: "
                         f"'{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode"
                         " to be 'zeros', 'border', or 'reflection', but got"
                         f": '{padding_mode}'")
    return _grid_sample(input, grid, _GRID_MODES[mode],
                        _GRID_PADDINGS[padding_mode], bool(align_corners),
                        "grid_sample")


def _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                         return_indices, samples, nd):
    """Max over pseudo-random windows: along each dim the window starts are
    int((i + u) * alpha) - int(u * alpha), alpha = (in - k) / (out - 1),
    the last one in - k (torch's generate_intervals), with u one uniform
    sample per (batch, channel, dim) -- _random_samples when given, else
    drawn from fastt's generator. Indices are flat over the input's
    spatial dims; the gradient goes to each window's (first) maximum."""
    op = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size "
                         "or an output_ratio")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor"
                           f", but got: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    sizes = tuple(x.shape[2:])
    k = _pair(kernel_size, nd)
    k = tuple(k) * nd if len(k) == 1 else tuple(k)
    if output_size is None:
        r = _pair(output_ratio, nd)
        r = tuple(r) * nd if len(r) == 1 else tuple(r)
        output_size = tuple(int(n * ri) for n, ri in zip(sizes, r))
    out = _pair(output_size, nd)
    out = tuple(out) * nd if len(out) == 1 else tuple(out)
    names = {2: ("height", "width"), 3: ("time", "height", "width")}[nd]
    order = {2: (1, 0), 3: (0, 1, 2)}[nd]  # which sample column each dim
    for n, ki, oi, name in zip(sizes, k, out, names):
        if oi + ki - 1 > n:
            raise RuntimeError(f"{op}(): pool {name} {ki} too large "
                               f"relative to input {name} {n}")
    nb, ch = x.shape[0], x.shape[1]
    if samples is None:
        samples = fastt.rand((nb, ch, nd), dtype=x.dtype, device=x.device)
    if tuple(samples.shape) != (nb, ch, nd):
        raise RuntimeError(f"{op}(): expected _random_samples of shape "
                           f"{[nb, ch, nd]}, got {list(samples.shape)}")
    calc = x.dtype if x.dtype in (fastt.float32, fastt.float64) \
        else fastt.float32
    u_all = samples.detach().to(calc)
    starts = []
    for d in range(nd):
        n, ki, oi = sizes[d], k[d], out[d]
        u = u_all[..., order[d]].unsqueeze(-1)                 # (N, C, 1)
        last = fastt.full((nb, ch, 1), n - ki, dtype=fastt.int64,
                          device=x.device)
        if oi > 1:
            alpha = fastt.tensor(n - ki, dtype=calc) / (oi - 1)
            i = fastt.arange(oi - 1, dtype=calc, device=x.device)
            seq = ((i + u) * alpha).to(fastt.int64) - \
                (u * alpha).to(fastt.int64)
            seq = fastt.cat([seq, last], -1)
        else:
            seq = last
        starts.append(seq)                                   # (N, C, out_d)
    # flat input positions of every window element: (N, C, *out, *k)
    lin = None
    stride = 1
    for d in reversed(range(nd)):
        pos = starts[d].unsqueeze(-1) + fastt.arange(k[d], device=x.device)
        shape = [nb, ch] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = out[d], k[d]
        term = pos.reshape(shape) * stride
        lin = term if lin is None else lin + term
        stride *= sizes[d]
    lin = lin.expand((nb, ch) + out + k)
    kk, no = 1, 1
    for v in k:
        kk *= v
    for v in out:
        no *= v
    flat_lin = lin.reshape((nb, ch) + out + (kk,))
    # explicit sizes: an empty batch has no -1 to infer
    vals = x.reshape(nb, ch, stride).gather(
        2, flat_lin.reshape(nb, ch, no * kk)).reshape((nb, ch) + out + (kk,))
    am = vals.argmax(-1, keepdim=True)
    res = vals.gather(-1, am).squeeze(-1)
    if unbatched:
        res = res.squeeze(0)
    if not return_indices:
        return res
    idx = flat_lin.gather(-1, am).squeeze(-1)
    return res, (idx.squeeze(0) if unbatched else idx)


def fractional_max_pool2d(input, kernel_size, output_size=None,
                          output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size,
                                output_ratio, return_indices,
                                _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None,
                          output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size,
                                output_ratio, return_indices,
                                _random_samples, 3)


# ---------------------------------------------------------------------------
# Public names of the fused ops: the extension's function when it has one.
# ---------------------------------------------------------------------------
_COMPOSED = {
    "conv1d": _conv1d_composed,
    "conv2d": _conv2d_composed,
    "conv_transpose2d": _conv_transpose2d_composed,
    "max_pool2d": _max_pool2d_composed,
    "avg_pool2d": _avg_pool2d_composed,
    "adaptive_avg_pool2d": _adaptive_avg_pool2d_composed,
    "layer_norm": _layer_norm_composed,
    "rms_norm": _rms_norm_composed,
}
conv1d = _fused("conv1d") or _conv1d_composed
conv2d = _fused("conv2d") or _conv2d_composed
conv_transpose2d = _fused("conv_transpose2d") or _conv_transpose2d_composed
max_pool2d = _fused("max_pool2d") or _max_pool2d_composed
avg_pool2d = _fused("avg_pool2d") or _avg_pool2d_composed
adaptive_avg_pool2d = (_fused("adaptive_avg_pool2d")
                       or _adaptive_avg_pool2d_composed)
layer_norm = _fused("layer_norm") or _layer_norm_composed
rms_norm = _fused("rms_norm") or _rms_norm_composed


# Losses torch's autocast runs in float32 (16-bit inputs cast up when
# autocast is on; one flag test otherwise). cross_entropy and nll_loss cast
# in C++ (csrc/autocast.h).
def _fp32_losses():
    from ..amp.autocast_mode import fp32_policy, lower_policy
    g = globals()
    g["prelu"] = lower_policy(g["prelu"])
    # Written in Python since its fused CPU kernel (float32/float64 only;
    # 16-bit inputs compute through float32): autocast's lower precision.
    g["scaled_dot_product_attention"] = lower_policy(
        g["scaled_dot_product_attention"])
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                 "binary_cross_entropy", "binary_cross_entropy_with_logits",
                 "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
                 "cosine_embedding_loss", "hinge_embedding_loss",
                 "margin_ranking_loss", "soft_margin_loss",
                 "multilabel_margin_loss", "multilabel_soft_margin_loss",
                 "multi_margin_loss", "triplet_margin_loss",
                 "triplet_margin_with_distance_loss", "ctc_loss"):
        if name in g:
            g[name] = fp32_policy(g[name])


_fp32_losses()

# The OpInfo conformance harness: torch's own operator database (op_db)
# run against fastt. For each OpInfo and each dtype torch lists for it (of
# float32, float64, int64, bool, float16, bfloat16) it converts every sample
# input to fastt, calls fastt's op of the same name (function, method,
# in-place; nn.functional.*, linalg.*, special.*, fft.* by name; torch's
# wrapper lambdas with `torch` rebound to fastt, as a user's program would
# run after `import fastt as torch`) and compares with torch:
#   forward   value, dtype and shape of every output (random ops: dtype and
#             shape only); a sample torch rejects must be rejected too
#   backward  for float32/float64 samples torch differentiates: the
#             gradients of <outputs, random cotangent> w.r.t. every input
#             that requires grad (autograd.grad on both sides)
#   errors    every error input raises an error of the same class
# Samples with complex inputs are not applicable in this run (the dtypes
# above are real); complex outputs of real inputs (fft.*, polar, ...) are
# compared, their gradients with complex cotangents. run_name(...,
# complex=True) is the complex run: the OpInfos' complex64 and complex128
# samples (complex scalars included), forward and backward (both dtypes),
# without the error inputs (the real run has them); its pass list is
# opinfo_complex_pass.txt.
#
# run_name(name) -> NameResult is the unit: an op name passes when every
# OpInfo of that name (its variants) passes every check above.
# tests/python/test_opinfo.py runs the names on the pass list
# (opinfo_pass.txt); scripts/opinfo_report.py runs them all and writes the
# report (opinfo_report.md) and grows the pass list.
import cmath
import contextlib
import dataclasses
import functools
import math
import numbers
import os
import sys
import types
import warnings

import fastt
import fastt.nn.functional  # noqa: F401  (resolved by name below)

warnings.filterwarnings("ignore")
import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa
from torch.testing._utils import wrapper_set_seed as _wrapper_set_seed  # noqa

DTYPES = ("float32", "float64", "int64", "bool", "float16", "bfloat16")
GRAD_DTYPES = ("float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
_COMPLEX_RUN = []  # non-empty during run_name(..., complex=True)
# (rtol, atol) per dtype: forward and backward. fastt and torch may sum in
# different orders and round intermediates differently; these allow about
# two ulps at each precision, not more.
FWD_TOL = {"float64": (1e-7, 1e-7), "float32": (1.3e-5, 1e-5),
           "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}
BWD_TOL = {"float64": (1e-6, 1e-6), "float32": (1e-4, 1e-4)}
for _t in (FWD_TOL, BWD_TOL):  # complex results: their parts' tolerances
    _t["complex64"], _t["complex128"] = _t["float32"], _t["float64"]
VERBOSE = os.environ.get("FASTT_OPINFO_VERBOSE") == "1"
MAX_SAMPLES = int(os.environ.get("FASTT_OPINFO_MAX_SAMPLES", "0")) or None

# Ops whose values are random or uninitialised: only dtype and shape are
# compared (torch's and fastt's generators differ by design).
RANDOM_OPS = {
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal",
    "multinomial", "normal", "uniform", "randn", "randn_like", "rand_like",
    "randint", "randint_like", "empty", "empty_like", "empty_strided",
    "empty_permuted", "new_empty", "new_empty_strided",
    "nn.functional.dropout", "nn.functional.dropout1d",
    "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
    "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d", "svd_lowrank", "pca_lowrank",
    "nn.functional.gumbel_softmax",
}
# Ops that are random only for some samples: attention with dropout_p > 0
# (in training): (position of dropout_p in args or None, training kwarg?).
DROPOUT_SAMPLE_OPS = {"nn.functional.scaled_dot_product_attention": (None,
                                                                     False),
                      "nn.functional.multi_head_attention_forward": (9,
                                                                     True)}


def _random_sample(name, sample):
    spec = DROPOUT_SAMPLE_OPS.get(name)
    if spec is None:
        return False
    pos, training = spec
    p = sample.kwargs.get("dropout_p", 0.0)
    if pos is not None and len(sample.args) > pos:
        p = sample.args[pos]
    if training and not sample.kwargs.get("training", True):
        return False
    return bool(p)


EMPTY_OPS = {"empty", "empty_like", "empty_strided", "empty_permuted",
             "new_empty", "new_empty_strided"}


class NotApplicable(Exception):
    """The sample uses something fastt cannot express yet (complex)."""


class Missing(Exception):
    """fastt has no such function or method."""


class ConvertError(Exception):
    """fastt cannot hold a sample's tensor (more dims than it supports)."""


# ---------------------------------------------------------------- convert --

def _fdtype(td):
    name = str(td).split(".")[-1]
    d = getattr(fastt, name, None)
    if not isinstance(d, fastt.dtype):
        raise NotApplicable(f"dtype {name}")
    return d


def _tdtype(fd):
    return getattr(torch, str(fd).split(".")[-1])


class _Leaves(list):
    """The grad leaves of one sample, and the storage copies made for it:
    torch tensors that share memory in a sample (an out= that is also the
    input) become fastt tensors that share memory too."""

    def __init__(self):
        super().__init__()
        self.storages = {}


def _extent(t):
    """Elements of storage from t's first element to its last, plus one."""
    return 1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))


def _to_fastt_tensor(t, leaves):
    orig = t  # (torch's gradients are taken with respect to it)
    if t.is_complex():
        if not _COMPLEX_RUN:
            raise NotApplicable("complex tensor")
        if t.is_conj() or t.is_neg():  # (a storage copy would drop the bit)
            t = t.detach().resolve_conj().resolve_neg()
    if t.layout != torch.strided or t.is_quantized:
        raise NotApplicable(f"layout {t.layout}")
    if t.device.type != "cpu":  # e.g. a meta tensor in an error input
        raise NotApplicable(f"device {t.device}")
    _fdtype(t.dtype)
    # The same storage layout (offset, strides, zero strides) in a copy.
    d = t.detach()
    st = d.untyped_storage()
    memo = getattr(leaves, "storages", {})
    if st.data_ptr() not in memo or st.data_ptr() == 0:
        # (the storage is kept alive beside its copy: a resolved conjugate
        # is a temporary whose address a later one could reuse)
        memo[st.data_ptr()] = (st.clone(), st)
    whole = memo[st.data_ptr()][0]
    copy = torch.empty(0, dtype=d.dtype).set_(
        whole, d.storage_offset(), d.shape, d.stride())
    try:
        n = whole.nbytes() // d.element_size()
        if d.storage_offset() or (d.numel() and _extent(d) < n):
            # the tensor sees part of its storage (as_strided may read the
            # rest): import the whole storage and view it the same way
            flat = torch.empty(0, dtype=d.dtype).set_(whole, 0, (n,), (1,))
            f = fastt.from_dlpack(flat).as_strided(
                tuple(d.shape), tuple(d.stride()), d.storage_offset()
            ).detach()
        else:
            f = fastt.from_dlpack(copy)
    except Exception as e:
        raise ConvertError(f"tensor {tuple(t.shape)} {t.dtype}: "
                           f"{type(e).__name__}: {e}") from e
    if orig.requires_grad:
        f.requires_grad_(True)
        leaves.append((orig, f))
    return f


_TORCH_MODULES = {}


def _fastt_module_for(mod):
    """torch.nn.functional -> fastt.nn.functional, etc. (None: not torch)."""
    name = getattr(mod, "__name__", "")
    if not (name == "torch" or name.startswith("torch.")):
        return None
    obj = fastt
    for part in name.split(".")[1:]:
        if part in ("_C", "_linalg", "_special", "_fft", "_nn", "_refs"):
            continue
        obj = getattr(obj, part, None)
        if obj is None:
            raise Missing(f"module fastt{name[5:]}")
    return obj


class _Shim(types.ModuleType):
    """A module whose attributes are fastt's: the `torch` a rebound lambda
    sees. A name fastt lacks raises Missing."""

    def __init__(self, target, label):
        super().__init__(label)
        self._target = target
        self._label = label

    def __getattr__(self, attr):
        v = getattr(self._target, attr, None)
        if v is None:
            raise Missing(f"{self._label}.{attr}")
        if isinstance(v, types.ModuleType):
            return _Shim(v, f"{self._label}.{attr}")
        return v


def _translate_callable(f):
    """A torch callable an argument or a wrapper holds, as fastt's."""
    if isinstance(f, functools.partial):
        return functools.partial(_translate_callable(f.func),
                                 *[convert(a, []) for a in f.args],
                                 **{k: convert(v, [])
                                    for k, v in f.keywords.items()})
    if isinstance(f, types.FunctionType):
        mod = getattr(f, "__module__", "") or ""
        if mod.startswith("torch.nn.functional") or (
                mod.startswith("torch.") and not mod.startswith(
                    "torch.testing")):
            return _resolve_torch_name(f)
        g = dict(f.__globals__)
        for n in f.__code__.co_names:
            v = g.get(n)
            if v is _wrapper_set_seed:
                g[n] = _fastt_wrapper_set_seed
            elif isinstance(v, types.ModuleType):
                fm = _fastt_module_for(v)
                if fm is not None:
                    g[n] = _Shim(fm, "fastt" + v.__name__[5:])
            elif v is not None and not isinstance(v, type) and callable(v) \
                    and _is_torch_callable(v):
                g[n] = _LazyMissing(v)
        closure = f.__closure__
        if closure:
            closure = tuple(types.CellType(_translate_value(c.cell_contents))
                            for c in closure)
        nf = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__,
                                closure)
        nf.__kwdefaults__ = f.__kwdefaults__
        return nf
    if isinstance(f, torch.nn.Module) and not any(
            True for _ in f.parameters()) and not any(
            True for _ in f.buffers()):
        # a stateless torch module (PairwiseDistance()): fastt's class
        # with the same plain options
        cls = getattr(fastt.nn, type(f).__name__, None)
        if cls is None:
            raise Missing(f"fastt.nn.{type(f).__name__}")
        m = cls()
        for k, v in vars(f).items():
            if not k.startswith("_") and isinstance(
                    v, (bool, int, float, str, tuple, type(None))):
                setattr(m, k, v)
        return m
    if _is_torch_callable(f):
        return _resolve_torch_name(f)
    if isinstance(f, type) and f.__module__.startswith("torch.nn"):
        v = getattr(fastt.nn, f.__name__, None)
        if v is None:
            raise Missing(f"fastt.nn.{f.__name__}")
        return v
    return f


def _fastt_wrapper_set_seed(op, *args, **kwargs):
    """torch.testing's wrapper_set_seed for fastt: the wrapped callable
    (an argument, so translated here) runs after fastt.manual_seed(42)."""
    fastt.manual_seed(42)
    if not (getattr(op, "__module__", "") or "").startswith("fastt"):
        op = _translate_callable(op)
    return op(*args, **kwargs)


def _translate_value(v):
    if callable(v) and not isinstance(v, (torch.Tensor, type)):
        try:
            return _translate_callable(v)
        except Missing:
            return _LazyMissing(v)
    return v


class _LazyMissing:
    """A torch callable fastt lacks, raising Missing only when called."""

    def __init__(self, f):
        self._f = f

    def __call__(self, *a, **k):
        return _resolve_torch_name(self._f)(*a, **k)


def _is_torch_callable(f):
    mod = getattr(f, "__module__", None) or ""
    if mod == "torch" or (mod.startswith("torch.")
                          and not mod.startswith("torch.testing")):
        return True
    qn = getattr(f, "__qualname__", "") or ""
    return type(f).__name__ in ("builtin_function_or_method",
                                "method_descriptor", "wrapper_descriptor",
                                "getset_descriptor") and (
        qn.startswith("TensorBase.") or qn.startswith("Tensor.")
        or mod.startswith("torch"))


def _resolve_torch_name(f):
    qn = getattr(f, "__qualname__", None) or getattr(f, "__name__", "")
    mod = getattr(f, "__module__", None) or "torch"
    if qn.startswith("TensorBase.") or qn.startswith("Tensor."):
        name = qn.split(".", 1)[1]
        v = getattr(fastt.Tensor, name, None)
        if v is None:
            raise Missing(f"Tensor.{name}")
        return v
    target = _fastt_module_for(sys.modules.get(mod, torch)) or fastt
    name = getattr(f, "__name__", qn)
    for prefix in ("linalg_", "special_", "fft_"):
        if mod.endswith(prefix[:-1]) and name.startswith(prefix):
            name = name[len(prefix):]
    v = getattr(target, name, None)
    if v is None:
        raise Missing(f"{getattr(target, '__name__', 'fastt')}.{name}")
    return v


def convert(x, leaves):
    """A torch sample argument as fastt's (tensors copied, grad leaves
    recorded in `leaves` as (torch tensor, fastt tensor))."""
    if isinstance(x, torch.Tensor):
        return _to_fastt_tensor(x, leaves)
    if isinstance(x, torch.dtype):
        return _fdtype(x)
    if isinstance(x, torch.device):
        if x.type != "cpu":
            raise NotApplicable(f"device {x}")
        return "cpu"
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.memory_format):
        v = getattr(fastt, str(x).split(".")[-1], None)
        if v is None:
            raise NotApplicable(f"memory format {x}")
        return v
    if isinstance(x, torch.layout):
        v = getattr(fastt, str(x).split(".")[-1], None)
        if v is None:
            raise NotApplicable(f"layout {x}")
        return v
    if isinstance(x, torch.Generator):
        raise NotApplicable("torch.Generator argument")
    if isinstance(x, complex) and not _COMPLEX_RUN:
        raise NotApplicable("complex scalar")
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[convert(v, leaves) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(convert(v, leaves) for v in x)
    if isinstance(x, dict):
        return {k: convert(v, leaves) for k, v in x.items()}
    if callable(x) and not isinstance(x, type):
        return _translate_callable(x)
    return x


def _has_complex(x):
    """x holds a complex tensor or number (outside the complex run,
    where none is skipped)."""
    if _COMPLEX_RUN:
        return False
    if isinstance(x, torch.Tensor):
        return x.is_complex()
    if isinstance(x, (list, tuple)):
        return any(_has_complex(v) for v in x)
    if isinstance(x, dict):
        return any(_has_complex(v) for v in x.values())
    return isinstance(x, complex)


# ---------------------------------------------------------------- compare --

class Mismatch(Exception):
    pass


def _to_torch(x):
    if isinstance(x, fastt.Tensor):
        d = x.detach()
        if d.device.type != "cpu":
            d = d.cpu()
        return torch.from_dlpack(d.contiguous()).clone()
    return x


def compare(actual, expected, dtype, tol, values=True, path="out"):
    """Raise Mismatch with the first difference of fastt's `actual` from
    torch's `expected`."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, fastt.Tensor):
            raise Mismatch(f"{path}: expected a Tensor, got "
                           f"{type(actual).__name__}")
        a = _to_torch(actual)
        if a.dtype != expected.dtype:
            raise Mismatch(f"{path}: dtype {a.dtype} != torch's "
                           f"{expected.dtype}")
        if tuple(a.shape) != tuple(expected.shape):
            raise Mismatch(f"{path}: shape {tuple(a.shape)} != torch's "
                           f"{tuple(expected.shape)}")
        if not values:
            return
        e = expected.detach().resolve_conj()
        rtol, atol = tol.get(str(e.dtype).split(".")[-1], (0, 0))
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol,
                                       equal_nan=True, check_stride=False)
        except AssertionError as err:
            msg = " ".join(str(err).split())
            raise Mismatch(f"{path}: {msg[:300]}")
        return
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            raise Mismatch(f"{path}: expected a sequence of "
                           f"{len(expected)}, got {type(actual).__name__}")
        if len(actual) != len(expected):
            raise Mismatch(f"{path}: {len(actual)} results != torch's "
                           f"{len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(a, e, dtype, tol, values, f"{path}[{i}]")
        return
    if isinstance(expected, bool):
        if actual is not expected and not (
                isinstance(actual, bool) and actual == expected):
            raise Mismatch(f"{path}: {actual!r} != torch's {expected!r}")
        return
    if isinstance(expected, numbers.Number):
        if not isinstance(actual, numbers.Number) or isinstance(
                actual, bool) != isinstance(expected, bool):
            raise Mismatch(f"{path}: {actual!r} != torch's {expected!r}")
        if values and not (actual == expected or (
                cmath.isnan(expected) and cmath.isnan(actual)) or
                cmath.isclose(actual, expected, rel_tol=1e-5,
                              abs_tol=1e-6)):
            raise Mismatch(f"{path}: {actual!r} != torch's {expected!r}")
        return
    if isinstance(expected, torch.dtype):
        if str(actual).split(".")[-1] != str(expected).split(".")[-1]:
            raise Mismatch(f"{path}: {actual!r} != torch's {expected!r}")
        return
    if expected is None:
        if actual is not None:
            raise Mismatch(f"{path}: {actual!r} != torch's None")
        return
    if values and actual != expected:
        raise Mismatch(f"{path}: {actual!r} != torch's {expected!r}")


# ---------------------------------------------------------------- run ------

@dataclasses.dataclass
class Counts:
    passed: int = 0
    wrong: int = 0
    erroring: int = 0
    na: int = 0


@dataclasses.dataclass
class NameResult:
    name: str
    status: str = "pass"        # pass | wrong | missing | error | n/a
    fwd: Counts = dataclasses.field(default_factory=Counts)
    bwd: Counts = dataclasses.field(default_factory=Counts)
    err: Counts = dataclasses.field(default_factory=Counts)
    first: str = ""             # the first difference
    missing: str = ""

    def fail(self, kind, msg):
        if VERBOSE:
            print(f"  {self.name} {kind}: {msg}", file=sys.stderr)
        if not self.first:
            self.first = msg
        if kind == "missing" and not self.missing:
            self.missing = msg

    def finish(self):
        total = self.fwd.passed + self.fwd.wrong + self.fwd.erroring
        if self.missing:
            self.status = "missing"
        elif self.fwd.erroring or self.bwd.erroring or self.err.erroring:
            self.status = "error"
        elif self.fwd.wrong or self.bwd.wrong or self.err.wrong:
            self.status = "wrong"
        elif total == 0:
            self.status = "n/a"
        else:
            self.status = "pass"
        return self


def _variants(op):
    """(label, torch callable, fastt callable factory) per variant."""
    out = []
    fn = op.op
    if fn is not None:
        out.append(("function", fn, lambda: _fastt_function(op)))
    if op.method_variant is not None and op.method_variant is not fn:
        out.append(("method", op.method_variant,
                    lambda: _translate_callable(op.method_variant)))
    if op.inplace_variant is not None:
        out.append(("inplace", op.inplace_variant,
                    lambda: _translate_callable(op.inplace_variant)))
    return out


def _fastt_function(op):
    fn = op.op
    if isinstance(fn, (types.FunctionType, functools.partial)) and (
            (getattr(fn, "__module__", "") or "").startswith("torch.testing")
            or getattr(fn, "__name__", "") == "<lambda>"):
        return _translate_callable(fn)
    qn = getattr(fn, "__qualname__", "") or ""
    if qn.startswith(("TensorBase.", "Tensor.")):
        # op is a Tensor method (cfloat: torch.cfloat is a dtype)
        return _resolve_torch_name(fn)
    parts = op.name.split(".")
    if len(parts) == 1 and not hasattr(torch, op.name):
        # A Tensor method torch has no function for (__radd__, ...).
        v = getattr(fastt.Tensor, op.name, None)
        if v is None:
            raise Missing(f"Tensor.{op.name}")
        return v
    obj = fastt
    if parts[0] == "torch":      # torch.ops.aten.* and torch._foo
        parts = parts[1:]
    for p in parts:
        nxt = getattr(obj, p, None)
        if nxt is None:
            raise Missing(("fastt." + ".".join(parts)))
        obj = nxt
    return obj


def _tensors_in(x):
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors_in(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _tensors_in(v)


def _ftensors_in(x):
    if isinstance(x, fastt.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _ftensors_in(v)


def _call(f, inp, args, kwargs):
    return f(inp, *args, **kwargs)


@contextlib.contextmanager
def _seeded(seed):
    torch.manual_seed(seed)
    yield


_WIDE = {torch.float32: torch.float64, torch.complex64: torch.complex128,
         torch.float64: torch.float64, torch.complex128: torch.complex128}


def _sees_part_of_storage(t):
    """t's storage holds more than t's elements (as_strided may read it)."""
    return bool(t.storage_offset()) or \
        t.untyped_storage().nbytes() != t.numel() * t.element_size()


def _widened(x, leaves, grad, raw=False):
    """x (a sample's input, args or kwargs) with float64 / complex128
    copies of its floating tensors; the copies of grad leaves appended to
    `leaves` (leaves of their own when `grad`). `raw`: the op reads the
    leaves' storage beyond their elements, which a copy would not share
    (refused unless there is none)."""
    if isinstance(x, torch.Tensor) and x.dtype in _WIDE:
        if raw and x.requires_grad and _sees_part_of_storage(x):
            raise Mismatch("numerical gradient: a leaf sharing storage")
        y = x.detach().to(_WIDE[x.dtype]).clone()
        if x.requires_grad:
            if grad:
                y.requires_grad_(True)
            leaves.append(y)
        return y
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_widened(v, leaves, grad, raw) for v in x)
    if isinstance(x, dict):
        return {k: _widened(v, leaves, grad, raw) for k, v in x.items()}
    return x


def _grad_check(op, tfn, ffn, sample, dtype, res):
    """Gradients of <outputs, cotangent> w.r.t. the sample's grad inputs."""
    leaves = _Leaves()
    fin = convert(sample.input, leaves)
    fargs = convert(list(sample.args), leaves)
    fkw = convert(dict(sample.kwargs), leaves)
    tin_leaves = [t for t, _ in leaves]
    if not tin_leaves:
        return
    tout = _call(tfn, sample.input, sample.args, sample.kwargs)
    tout = sample.output_process_fn_grad(tout)
    touts = [t for t in _tensors_in(tout) if t.requires_grad and (
        t.is_floating_point() or t.is_complex())]
    if not touts:
        return
    g = torch.Generator().manual_seed(1234)
    cots = [torch.randn(t.shape, dtype=t.dtype, generator=g) for t in touts]
    tgrads = torch.autograd.grad(touts, tin_leaves, cots, allow_unused=True)
    fout = _call(ffn, fin, fargs, fkw)
    fout = _apply_process(sample.output_process_fn_grad, fout)
    fouts = list(_ftensors_in(fout))
    fouts = [f for f in fouts if f.requires_grad]
    if len(fouts) != len(touts):
        raise Mismatch(f"backward: {len(fouts)} differentiable outputs != "
                       f"torch's {len(touts)}")
    fcots = [fastt.from_dlpack(c.clone()) for c in cots]
    fleaves = [f for _, f in leaves]
    fgrads = fastt.autograd.grad(fouts, fleaves, fcots, allow_unused=True)
    ref64 = None
    for i, (fg, tg, (tt, _)) in enumerate(zip(fgrads, tgrads, leaves)):
        if tg is None:
            tg = torch.zeros_like(tt)
        if fg is None:
            fg = fastt.zeros(tuple(tt.shape), dtype=_fdtype(tt.dtype))
        try:
            compare(fg, tg, dtype, BWD_TOL, True, f"grad[{i}]")
        except Mismatch:
            num = _torch_grad_is_wrong(op, tfn, sample, cots, i, tg)
            if num is not None:  # fastt's is judged by finite differences
                compare(fg, num.to(tg.dtype), dtype, BWD_TOL, True,
                        f"grad[{i}] (numerical)")
                continue
            # torch's float32 (complex64) gradient can be the less
            # accurate one (large inputs): fastt's passes if it matches
            # torch's computation in float64 (complex128) to the narrow
            # dtype's tolerance.
            if dtype not in ("float32", "complex64"):
                raise
            if ref64 is None:
                ref64 = _grads_in_float64(tfn, sample, cots)
            if ref64 is None or ref64[i] is None:
                raise
            narrow = (torch.complex64 if ref64[i].is_complex()
                      else torch.float32)
            compare(fg, ref64[i].to(narrow), dtype, BWD_TOL, True,
                    f"grad[{i}]")


def _numerical_grad(tfn, sample, cots, which, raw, h=1e-6):
    """The gradient of L = sum Re(conj(cot) * out) with respect to the
    sample's grad leaf `which`, by central differences in float64 /
    complex128 (dL/dRe + i dL/dIm for a complex leaf: torch's convention).
    `raw`: the op reads the leaves' storage beyond their elements, which
    the float64 copies would not share (refused unless there is none).
    """
    leaves = []

    def up(x):
        return _widened(x, leaves, grad=False, raw=raw)
    inp, args, kw = up(sample.input), up(sample.args), up(sample.kwargs)
    leaf = leaves[which]
    wide = [c.to(torch.complex128 if c.is_complex() else torch.float64)
            for c in cots]

    def loss():
        with torch.no_grad():
            out = sample.output_process_fn_grad(_call(tfn, inp, args, kw))
        outs = [t for t in _tensors_in(out)
                if t.is_floating_point() or t.is_complex()]
        return sum(float((c.conj() * o).real.sum()) if o.is_complex()
                   else float((c * o).sum())
                   for o, c in zip(outs, wide, strict=True))
    if not leaf.is_contiguous() or leaf.numel() > 512:
        raise Mismatch("numerical gradient: a non-contiguous or large leaf")
    flat = leaf.view(-1)
    grad = torch.zeros_like(flat)
    steps = (1, 1j) if leaf.is_complex() else (1,)
    for k in range(flat.numel()):
        for step in steps:
            old = flat[k].clone()
            flat[k] = old + h * step
            up_ = loss()
            flat[k] = old - h * step
            down = loss()
            flat[k] = old
            grad[k] += (up_ - down) / (2 * h) * step
    return grad.view(leaf.shape)


# Ops whose torch gradient is known wrong for some samples: there a
# gradient that differs from torch's is judged by finite differences
# (only here: at ties and kinks -- max, sort, clamp's bounds -- central
# differences average the one-sided slopes, which is no reference).
TORCH_GRAD_BUGS = {
    # torch's gradcheck fails on it: the input gradient is the scattered
    # region's instead of the rest
    "as_strided_scatter",
    # win_length < n_fft: torch pads the window outside the graph
    # (autograd.grad reports the window unused)
    "istft",
}


def _torch_grad_is_wrong(op, tfn, sample, cots, which, tg):
    """The finite-difference gradient of leaf `which` where torch's is
    known wrong (TORCH_GRAD_BUGS) and differs from it; else None."""
    if op.name not in TORCH_GRAD_BUGS:
        return None
    try:
        num = _numerical_grad(tfn, sample, cots, which,
                              op.name.startswith("as_strided"))
    except Exception:
        return None
    if torch.allclose(tg.to(num.dtype), num, rtol=1e-3, atol=1e-3):
        return None
    return num


def _grads_in_float64(tfn, sample, cots):
    """torch's gradients of the sample computed in float64 / complex128
    (None when the sample does not upcast cleanly)."""
    leaves = []

    def up(x):
        return _widened(x, leaves, grad=True)
    try:
        out = _call(tfn, up(sample.input), up(sample.args),
                    up(sample.kwargs))
        out = sample.output_process_fn_grad(out)
        outs = [t for t in _tensors_in(out) if t.requires_grad and (
            t.is_floating_point() or t.is_complex())]
        if len(outs) != len(cots):
            return None
        wide = [c.to(torch.complex128 if c.is_complex() else torch.float64)
                for c in cots]
        return torch.autograd.grad(outs, leaves, wide, allow_unused=True)
    except Exception:
        return None


def _apply_process(fn, out):
    try:
        return _translate_callable(fn)(out)
    except Missing:
        raise
    except Exception:
        return fn(out)


def _raises_like(fe, cls):
    """fastt's exception `fe` is of torch's class `cls` (or one named the
    same: torch's own error types such as torch.OutOfMemoryError)."""
    return isinstance(fe, cls) or type(fe).__name__ == cls.__name__


def _run_sample(op, label, tfn, ffn_factory, sample, dtype, res, random):
    if _has_complex([sample.input, list(sample.args), sample.kwargs]):
        res.fwd.na += 1
        return
    leaves = _Leaves()
    try:
        fin = convert(sample.input, leaves)
        fargs = convert(list(sample.args), leaves)
        fkw = convert(dict(sample.kwargs), leaves)
    except NotApplicable:
        res.fwd.na += 1
        return
    except ConvertError as e:
        res.fwd.erroring += 1
        res.fail("error", f"{label} {dtype}: {e}")
        return
    ffn = ffn_factory()   # raises Missing
    tin = sample.input
    if label == "inplace":
        tin = tin.detach().clone() if isinstance(tin, torch.Tensor) else tin
        fin = fin.detach().clone() if isinstance(fin, fastt.Tensor) else fin
    try:
        with torch.no_grad():
            tout = _call(tfn, tin, sample.args, sample.kwargs)
    except Exception as e:  # torch rejects it: fastt must too
        try:
            with fastt.no_grad():
                _call(ffn, fin, fargs, fkw)
        except Missing:
            raise
        except Exception as fe:
            if _raises_like(fe, type(e)):
                res.fwd.passed += 1
            else:
                res.fwd.wrong += 1
                res.fail("wrong", f"{label} {dtype}: torch raised "
                         f"{type(e).__name__}, fastt {type(fe).__name__}: "
                         f"{str(fe)[:120]}")
            return
        res.fwd.wrong += 1
        res.fail("wrong", f"{label} {dtype}: torch raised "
                 f"{type(e).__name__} ({str(e)[:100]}), fastt did not")
        return
    try:
        with fastt.no_grad():
            fout = _call(ffn, fin, fargs, fkw)
    except Missing:
        raise
    except NotApplicable:
        res.fwd.na += 1
        return
    except Exception as e:
        res.fwd.erroring += 1
        res.fail("error", f"{label} {dtype}: {type(e).__name__}: "
                 f"{' '.join(str(e).split())[:200]}")
        return
    try:
        try:
            compare(fout, tout, dtype, FWD_TOL, values=not random)
        except Mismatch:
            if not _equivalent(op, tfn, sample, fout, tout, dtype):
                raise
        if label == "inplace" and isinstance(fout, fastt.Tensor) and \
                fout is not fin:
            raise Mismatch("inplace: did not return self")
        res.fwd.passed += 1
    except NotApplicable:
        res.fwd.na += 1
    except Mismatch as m:
        res.fwd.wrong += 1
        res.fail("wrong", f"{label} {dtype}: {m}")


# Ops whose index outputs may pick any of tied elements (torch does not
# promise which): (position of the dim argument, its default).
TIE_OPS = {"sort": (0, -1), "argsort": (0, -1), "msort": (None, 0),
           "topk": (1, -1), "kthvalue": (1, -1), "mode": (0, -1),
           "median": (0, None), "nanmedian": (0, None), "max": (0, None),
           "min": (0, None), "cummax": (0, None), "cummin": (0, None),
           "argmax": (0, None), "argmin": (0, None)}


# Decompositions whose vectors torch defines only up to sign, or phase
# when complex (LAPACK builds choose differently): the positions of the
# vector factors in the result, and whether the right factor is V
# (torch.svd) rather than Vh. eig's unit vectors are not orthonormal.
SIGN_GAUGE_OPS = {"linalg.svd": (0, 2, False), "svd": (0, 2, True),
                  "linalg.eigh": (1, None, False),
                  "linalg.eig": (1, None, False)}


def _sign_fixed(name, out):
    """out with each singular / eigen vector's sign (phase) chosen so that
    its largest-magnitude entry is real and positive (the same factor on
    U's column and V's), keeping only the k = min(m, n) vectors the values
    determine; also checks that a full U / V is orthonormal (its extra
    columns are any basis of the complement)."""
    left, right, right_is_v = SIGN_GAUGE_OPS[name]
    out = [_to_torch(t) for t in out]
    vals = out[1] if right is not None else out[0]
    k = vals.shape[-1]
    for pos in (left, right):
        if pos is None or name == "linalg.eig":
            continue
        M = out[pos] if (pos == left or right_is_v) else out[pos].mH
        eye = torch.eye(M.shape[-1], dtype=M.dtype)
        if M.shape[-2] >= M.shape[-1] and M.numel() and not torch.allclose(
                M.mH @ M, eye, atol=1e-4 if M.dtype in (
                    torch.float32, torch.complex64) else 1e-10):
            raise Mismatch(f"out[{pos}]: not orthonormal")
    U = out[left][..., :k]
    if U.numel() == 0:
        return out
    top = torch.gather(U, -2, U.abs().argmax(-2, keepdim=True))
    flip = torch.where(top == 0, torch.ones_like(top), top.abs() / top)
    fixed = list(out)
    fixed[left] = U * flip
    if right is not None:
        V = out[right] if right_is_v else out[right].mH
        fixed[right] = V[..., :k] * flip
    return fixed


def _equivalent(op, tfn, sample, fout, tout, dtype):
    """Is fastt's result as right as torch's though not equal to it?
    - singular / eigen vectors that differ from torch's by sign only
      (SIGN_GAUGE_OPS);
    - index outputs of TIE_OPS pointing at equal values (ties);
    - float16/bfloat16 results within tolerance of torch's computation in
      float32 rounded to the dtype (fastt computes in float32; torch's CPU
      kernels sometimes accumulate in the low precision);
    - float32/float64 results that match the OpInfo's own reference
      (op.ref: NumPy or SciPy) where torch's kernel is the inaccurate one
      (torch.special.bessel_j0 is off by 1e-7 near its zeros)."""
    if op.name in SIGN_GAUGE_OPS and isinstance(tout, tuple):
        try:
            fixed = [fastt.from_dlpack(t) for t in _sign_fixed(op.name,
                                                               fout)]
            compare(fixed, _sign_fixed(op.name, tout), dtype, FWD_TOL)
            return True
        except Mismatch:
            return False
    if op.name in TIE_OPS and not sample.kwargs.get("stable"):
        try:
            return _ties_ok(op.name, sample, fout, tout)
        except Mismatch:
            return False
    if dtype in ("float32", "float64") and _matches_ref(op, sample, fout,
                                                       tout, dtype):
        return True
    if dtype in ("float32", "complex64") and \
            _as_accurate_as_torch(tfn, sample, fout, tout):
        return True
    if dtype in ("float16", "bfloat16"):
        td = getattr(torch, dtype)

        def up(x):
            if isinstance(x, torch.Tensor) and x.dtype == td:
                return x.detach().float()
            if isinstance(x, (list, tuple)):
                return type(x)(up(v) for v in x)
            if isinstance(x, dict):
                return {k: up(v) for k, v in x.items()}
            return x

        def down(x):
            if isinstance(x, torch.Tensor) and x.dtype == torch.float32:
                return x.to(td)
            if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
                return type(x)(down(v) for v in x)
            if isinstance(x, tuple):
                return tuple(down(v) for v in x)
            return x
        try:
            with torch.no_grad():
                ref = down(_call(tfn, up(sample.input), up(sample.args),
                                 up(sample.kwargs)))
            compare(fout, ref, dtype, FWD_TOL)
            return True
        except Exception:
            return False
    return False


def _as_accurate_as_torch(tfn, sample, fout, tout):
    """fastt's float32 / complex64 tensor result is no further from
    torch's float64 / complex128 computation than twice torch's own result
    is (plus float32's tolerance): where the problem is ill-conditioned (a
    matrix exponential of large entries) or the result cancels to near 0
    (an inverse FFT's small outputs) neither result can match the other."""
    if not isinstance(fout, fastt.Tensor) or \
            not isinstance(tout, torch.Tensor) or \
            tout.dtype not in (torch.float32, torch.complex64):
        return False

    def up(x):
        return _widened(x, [], grad=False)
    try:
        with torch.no_grad():
            ref = _call(tfn, up(sample.input), up(sample.args),
                        up(sample.kwargs))
        if not isinstance(ref, torch.Tensor) or \
                ref.dtype != _WIDE[tout.dtype]:
            return False
        f = _to_torch(fout).to(ref.dtype)
        if f.shape != ref.shape:
            return False
        torch_err = (tout.to(ref.dtype) - ref).abs().nan_to_num(
            0, posinf=math.inf).max().item() if ref.numel() else 0.0
        if not math.isfinite(torch_err):  # (an inf bound accepts anything)
            return False
        rtol, atol = FWD_TOL["float32"]
        bound = 2 * torch_err + atol + rtol * ref.abs().nan_to_num(0)
        return bool(((f - ref).abs() <= bound).all()) or \
            bool(torch.equal(f.isnan(), ref.isnan()) and
                 ((f - ref).abs().nan_to_num(0) <= bound).all())
    except Exception:
        return False


def _matches_ref(op, sample, fout, tout, dtype):
    """fastt's single tensor result agrees with op.ref (computed on the
    sample as NumPy arrays, in float64, then cast to torch's result dtype)
    to the dtype's tolerance."""
    ref = getattr(op, "ref", None)
    if ref is None or not isinstance(fout, fastt.Tensor) or \
            not isinstance(tout, torch.Tensor) or \
            op.name.startswith(("nn.", "linalg.", "fft.")):
        return False

    def np_(x):
        if isinstance(x, torch.Tensor):
            return x.detach().cpu().double().numpy() if \
                x.is_floating_point() else x.detach().cpu().numpy()
        if isinstance(x, (list, tuple)):
            return type(x)(np_(v) for v in x)
        return x
    try:
        import numpy as np
        with np.errstate(all="ignore"):
            r = ref(np_(sample.input), *np_(list(sample.args)),
                    **{k: np_(v) for k, v in sample.kwargs.items()})
        r = torch.as_tensor(np.asarray(r, dtype=np.float64))
        if tuple(r.shape) != tuple(tout.shape):
            return False
        compare(fout, r.to(tout.dtype), dtype, FWD_TOL)
        return True
    except Exception:
        return False


def _ties_ok(name, sample, fout, tout):
    pos, default = TIE_OPS[name]
    x = sample.input.detach()
    dim = sample.kwargs.get("dim", default)
    if pos is not None and len(sample.args) > pos and isinstance(
            sample.args[pos], int):
        dim = sample.args[pos]
    if isinstance(tout, torch.Tensor):       # argsort/argmax: indices only
        fidx, tidx = _to_torch(fout), tout
        if dim is None:
            xs = x.reshape(-1)
            return bool(torch.equal(xs[fidx.reshape(-1)].nan_to_num(),
                                    xs[tidx.reshape(-1)].nan_to_num()))
        if x.dim() == 0:
            return torch.equal(fidx, tidx)
        if fidx.dim() < x.dim():
            fidx, tidx = fidx.unsqueeze(dim), tidx.unsqueeze(dim)
        a, b = x.gather(dim, fidx), x.gather(dim, tidx)
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    if not isinstance(fout, (list, tuple)) or len(fout) != 2:
        return False
    compare(fout[0], tout[0], str(x.dtype).split(".")[-1], FWD_TOL)
    fidx = _to_torch(fout[1])
    tidx = tout[1]
    if fidx.dtype != tidx.dtype or fidx.shape != tidx.shape:
        return False
    if x.dim() == 0:
        return bool(torch.equal(fidx, tidx))
    if dim is None:
        dim = 0
    vals = tout[0]
    if fidx.dim() < x.dim():
        fidx, vals = fidx.unsqueeze(dim), vals.unsqueeze(dim)
    if name in ("sort", "msort"):
        # a permutation along dim
        srt = fidx.sort(dim).values
        ar = torch.arange(x.shape[dim]).view(
            [-1 if i == (dim % x.dim()) else 1 for i in range(x.dim())])
        if not torch.equal(srt, ar.expand_as(srt)):
            return False
    a = x.gather(dim, fidx)
    return bool(((a == vals) | (a.isnan() & vals.isnan())).all())


def run_name(name, ops=None, max_samples=MAX_SAMPLES, complex=False):
    if complex:
        _COMPLEX_RUN.append(True)
        try:
            return _run_name(name, ops, max_samples, COMPLEX_DTYPES,
                             COMPLEX_DTYPES, False)
        finally:
            _COMPLEX_RUN.pop()
    return _run_name(name, ops, max_samples, DTYPES, GRAD_DTYPES, True)


def _run_name(name, ops, max_samples, dtypes, grad_dtypes, errors):
    ops = ops if ops is not None else [o for o in op_db if o.name == name]
    res = NameResult(name)
    random = name in RANDOM_OPS
    for op in ops:
        tested = [d for d in dtypes
                  if getattr(torch, d) in op.supported_dtypes("cpu")]
        variants = _variants(op)
        for dtype in tested:
            td = getattr(torch, dtype)
            grad = (op.supports_autograd and dtype in grad_dtypes and
                    td in op.supported_backward_dtypes("cpu") and
                    name not in RANDOM_OPS)
            with _seeded(0):
                try:
                    samples = list(op.sample_inputs("cpu", td,
                                                    requires_grad=grad))
                except Exception as e:  # torch's own generator failed
                    res.fail("n/a", f"torch sample_inputs({dtype}): {e}")
                    continue
            if max_samples:
                samples = samples[:max_samples]
            for label, tfn, ffn_factory in variants:
                for s in samples:
                    try:
                        _run_sample(op, label, tfn, ffn_factory, s, dtype,
                                    res, random or _random_sample(name, s))
                    except Missing as m:
                        res.fail("missing", f"missing {m}")
                        return res.finish()
                    except Exception as e:
                        res.fwd.erroring += 1
                        res.fail("error", f"{label} {dtype}: harness: "
                                 f"{type(e).__name__}: {str(e)[:200]}")
            if not grad or not variants:
                continue
            _, tfn, ffn_factory = variants[0]
            for s in samples:
                if _has_complex([s.input, list(s.args), s.kwargs]) or \
                        _random_sample(name, s):
                    res.bwd.na += 1
                    continue
                try:
                    _grad_check(op, tfn, ffn_factory(), s, dtype, res)
                    res.bwd.passed += 1
                except NotApplicable:
                    res.bwd.na += 1
                except Missing as m:
                    res.fail("missing", f"missing {m}")
                    return res.finish()
                except Mismatch as m:
                    res.bwd.wrong += 1
                    res.fail("wrong", f"backward {dtype}: {m}")
                except Exception as e:
                    res.bwd.erroring += 1
                    res.fail("error", f"backward {dtype}: "
                             f"{type(e).__name__}: "
                             f"{' '.join(str(e).split())[:200]}")
        try:
            if errors:
                _run_errors(op, variants, res)
        except Missing as m:
            res.fail("missing", f"missing {m}")
            return res.finish()
    return res.finish()


def _run_errors(op, variants, res):
    if op.error_inputs_func is None or not variants:
        return
    try:
        with _seeded(0):
            errs = list(op.error_inputs("cpu"))
    except Exception:
        return
    _, tfn, ffn_factory = variants[0]
    for ei in errs:
        s = ei.sample_input
        leaves = _Leaves()
        # The class torch itself raises there (some of op_db's generic
        # error inputs do not raise for every op: torch's own tests skip
        # them; they are not applicable).
        try:
            with torch.no_grad():
                _call(tfn, s.input, s.args, s.kwargs)
            res.err.na += 1
            continue
        except Exception as te:
            if not isinstance(te, ei.error_type):
                res.err.na += 1
                continue
        try:
            if _has_complex([s.input, list(s.args), s.kwargs]):
                raise NotApplicable("complex")
            fin = convert(s.input, leaves)
            fargs = convert(list(s.args), leaves)
            fkw = convert(dict(s.kwargs), leaves)
        except (NotApplicable, ConvertError):
            # ConvertError: a tensor fastt cannot hold (over 16 dims).
            res.err.na += 1
            continue
        try:
            _call(ffn_factory(), fin, fargs, fkw)
        except Missing:
            raise
        except NotApplicable:
            res.err.na += 1
            continue
        except Exception as e:
            if _raises_like(e, ei.error_type):
                res.err.passed += 1
            else:
                res.err.wrong += 1
                res.fail("wrong", f"error input: torch raises "
                         f"{ei.error_type.__name__}, fastt "
                         f"{type(e).__name__}: {str(e)[:120]}")
            continue
        res.err.wrong += 1
        res.fail("wrong", f"error input: torch raises "
                 f"{ei.error_type.__name__} ({ei.error_regex[:80]}), "
                 f"fastt did not")


def all_names():
    return sorted({o.name for o in op_db})


def namespace(name):
    if name.startswith("nn.functional."):
        return "nn.functional"
    for ns in ("linalg", "special", "fft", "masked", "signal", "sparse"):
        if name.startswith(ns + "."):
            return ns
    if name.startswith("torch."):
        return "internal"
    return "torch"

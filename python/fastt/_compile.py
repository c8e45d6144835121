"""fastt.compile: capture a step once, replay its kernels afterwards.

The first call of a compiled function runs eagerly (a warm-up: what a
first step creates lazily, gradients and optimizer state, then exists);
the second runs eagerly too while fastt records every kernel it calls at
the dispatch table (forward, the autograd engine's backward, gradient
accumulation, ``clip_grad_norm_``...), with the step's intermediates in a
private memory pool (csrc/capture.h).
Later calls whose guards hold replay that list from C: no Python for the
captured part, no argument parsing, no dispatch, no allocation beyond the
returned outputs, no autograd bookkeeping. ``Optimizer.step`` and
``LRScheduler.step`` run again on each replay as host steps, so learning
rates read from ``param_groups`` and Adam's step counts are current.

Guards (checked by ``_CapturedStep.run`` in C, plus a module re-check
when any module attribute changed): positional and keyword arguments
(tensor shape, strides, dtype, device, requires_grad; other values by
type and ==), grad mode, CPU and CUDA autocast, the address and
requires_grad of every parameter, buffer, gradient and optimizer state
the step can see, the ``training`` flags, parameters and plain
attributes of its modules, and the gradients it accumulates into in
place. A miss captures again
(``cache_size_limit`` entries at most, then eager with a warning).

What cannot be captured is a graph break: a host read (``.item()``,
``tolist()``, printing a tensor, ``bool(t)``), an op whose output shape
depends on the data (``nonzero``, ``masked_select``), Python data turned
into a tensor inside the step, work on two CUDA devices, a gradient
hook. The function is then split at its top-level statements
(_split.py): the statement holding the break runs eagerly on every call,
the statements before and after it are captured as pieces of their own
(and split again at their own breaks). ``graph_breaks`` lists the breaks
(reason, file, line); ``verbose=True`` prints them. Where it cannot be
split (a tensor with autograd history passing the break, the source not
readable) the piece or the function stays eager, and ``eager_reason``
says why. With ``fullgraph=True`` a break raises naming the op and the
line (and the first call is the capture, without a warm-up, so it raises
at once).

As with torch.compile and CUDA graphs, Python side effects inside the
captured function (printing, appending to a list, forward hooks) happen
during the capture only, and Python values the function reads from
places the guards do not see (a global of another function, an attribute
of a non-module object) are frozen at capture.
"""
import functools
import sys
import types
import warnings

from . import _C, _split

__all__ = ["compile", "CompiledFunction", "host_call"]

cache_size_limit = 8  # entries per function, as torch._dynamo.config


_module_types = _split.module_types
_TYPES = _split._TYPES  # (the same list: filled in place on first use)


_ATOMS = (type(None), bool, int, float, complex, str, bytes)
# Arguments guarded as themselves (by type and ==): the atoms, and the
# value split pieces pass for an unbound local.
_ARG_ATOMS = _ATOMS + (type(_split.UNBOUND),)


# Caches of tensors fastt reuses across calls (TensorCache): a step that
# reads one of their tensors holds it, as it holds parameters.
_CACHES = []


class TensorCache(dict):
    """A dict of tensors fastt reuses across calls (nn.functional's causal
    masks), known to fastt.compile as state a step may read. Values are
    made by get_or_make: one made while a step is captured is cached state,
    not one of the step's intermediates (which a replay rewrites)."""

    def __init__(self, max_size=64):
        super().__init__()
        self.max_size = max_size
        _CACHES.append(self)

    def get_or_make(self, key, make):
        value = self.get(key)
        if value is None:
            if len(self) >= self.max_size:
                self.clear()
            value = (_C._capture_suspended(make) if _C._capture_in_capture()
                     else make())
            self[key] = value
        return value


def _flatten(obj, leaves):
    """Leaves (tensors and atoms) of nested tuples/lists/dicts, and the
    structure (hashable) to rebuild them."""
    if isinstance(obj, _C.Tensor):
        leaves.append(obj)
        return 0
    if obj is None:  # a constant of the structure (a step returning None)
        return 2
    t = type(obj)
    if t is tuple or t is list:
        return (t, tuple(_flatten(x, leaves) for x in obj))
    if isinstance(obj, tuple):  # a namedtuple or a return type (structseq)
        return (_named(t), tuple(_flatten(x, leaves) for x in obj))
    if t is dict:
        keys = tuple(obj)
        return (dict, keys, tuple(_flatten(obj[k], leaves) for k in keys))
    leaves.append(obj)
    return 1


_NAMED = {}


def _named(t):
    """A constructor from an iterable for a tuple subclass; one object per
    type, so that two specs of the same structure compare equal."""
    c = _NAMED.get(t)
    if c is None:
        c = (lambda xs: t(*xs)) if hasattr(t, "_fields") else t
        _NAMED[t] = c  # (a structseq takes a sequence)
    return c


def _unflatten(spec, it):
    if spec == 2:
        return None
    if spec == 0 or spec == 1:
        return next(it)
    if spec[0] is dict:
        return {k: _unflatten(s, it) for k, s in zip(spec[1], spec[2])}
    return spec[0]([_unflatten(s, it) for s in spec[1]])


class _Spec:
    """A guard on the structure of the call's arguments."""
    __slots__ = ("spec",)

    def __init__(self, spec):
        self.spec = spec

    def __eq__(self, other):
        return type(other) is _Spec and other.spec == self.spec

    def __hash__(self):
        return hash(self.spec)


def _flat_args(args, kwargs):
    """The tuple run() guards: the arguments themselves when they are
    tensors and atoms, else their leaves after a structure guard."""
    if not kwargs:
        for a in args:
            if not (isinstance(a, _C.Tensor) or type(a) in _ARG_ATOMS):
                break
        else:
            return args, None
    leaves = []
    spec = _flatten((args, kwargs), leaves)
    return (_Spec(spec),) + tuple(leaves), spec


# ---- what the step can see: modules, optimizers, tensors ----
def _reachable(fn, flat):
    """Modules, optimizers and tensors reachable from fn (bound self,
    closure cells, the globals its code names, recursively through the
    functions found there) and the arguments."""
    Module, Optimizer, _ = _module_types()
    modules, optims, tensors = {}, {}, {}
    seen = set()

    def visit(o, depth):
        if id(o) in seen or depth > 4:
            return
        seen.add(id(o))
        if isinstance(o, _C.Tensor):
            tensors[id(o)] = o
        elif isinstance(o, Module):
            for m in o.modules():
                modules[id(m)] = m
        elif isinstance(o, Optimizer):
            optims[id(o)] = o
        elif isinstance(o, (types.FunctionType, types.MethodType)):
            if isinstance(o, types.MethodType):
                visit(o.__self__, depth + 1)
                o = o.__func__
            for c in o.__closure__ or ():
                try:
                    visit(c.cell_contents, depth + 1)
                except ValueError:  # an empty cell
                    pass
            g = o.__globals__
            for name in o.__code__.co_names:
                if name in g:
                    visit(g[name], depth + 1)
            for const in o.__code__.co_consts:
                if isinstance(const, types.CodeType):
                    for name in const.co_names:
                        if name in g:
                            visit(g[name], depth + 1)
        elif isinstance(o, (list, tuple)):
            for x in o:
                visit(x, depth + 1)
        elif isinstance(o, dict):
            for x in o.values():
                visit(x, depth + 1)
        elif isinstance(_optimizer_of(o), Optimizer):
            visit(o.optimizer, depth + 1)  # an LR scheduler
        elif (depth <= 1 and hasattr(o, "__dict__")
              and not isinstance(o, (type, types.ModuleType))):
            for x in vars(o).values():
                visit(x, depth + 1)

    visit(fn, 0)
    for a in flat:
        visit(a, 1)
    return list(modules.values()), list(optims.values()), tensors


def _optimizer_of(o):
    try:  # (any object: its __getattr__ may raise anything)
        return getattr(o, "optimizer", None)
    except Exception:
        return None


def _state_tensors(modules, optims, tensors):
    out = {}

    def add(t):
        if isinstance(t, _C.Tensor):
            out[id(t)] = t
            g = t.grad
            if g is not None:
                out[id(g)] = g

    for m in modules:
        for t in m._parameters.values():
            add(t)
        for t in m._buffers.values():
            add(t)
    for o in optims:
        for group in o.param_groups:
            for p in group["params"]:
                add(p)
        for st in o.state.values():
            for v in st.values():
                add(v)
    for t in tensors.values():
        add(t)
    return list(out.values())


def _snapshot(modules):
    """What of the step's modules a replay depends on besides addresses."""
    snap = []
    for m in modules:
        attrs = tuple(sorted(
            (k, v) for k, v in vars(m).items()
            if type(v) in _ATOMS and not k.startswith("__")))
        snap.append((id(m), m.training, attrs,
                     tuple(id(p) for p in m._parameters.values()),
                     tuple(id(b) for b in m._buffers.values()),
                     tuple(id(c) for c in m._modules.values())))
    return snap


class _Entry:
    __slots__ = ("step", "epoch", "modules", "snapshot", "out_spec",
                 "single", "recipe", "flat_piece")


class CompiledFunction:
    """What fastt.compile returns for a function: call it like the
    function. ``stats`` counts captures, replays, eager calls, graph
    breaks and calls run as split pieces (whose own counts are on the
    pieces); ``graph_breaks`` lists (reason, file, line) per break;
    ``reset()`` drops the recorded steps."""

    def __init__(self, fn, fullgraph=False, verbose=False, _root=None):
        self._fn = fn
        self._fullgraph = bool(fullgraph)
        self._verbose = bool(verbose)
        self._entries = []
        self._eager_reason = None
        self._split = None
        # A piece of a split function (_split.py): no warm-up (the whole
        # function ran twice already); its breaks are counted by the root.
        self._root = _root if _root is not None else self
        self._warm = _root is not None
        self.stats = {"captures": 0, "replays": 0, "eager_calls": 0,
                      "graph_breaks": 0, "split_calls": 0}
        self.graph_breaks = []
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def reset(self):
        self._entries = []
        self._eager_reason = None
        self._split = None
        self._warm = self._root is not self
        self.graph_breaks = []

    @property
    def eager_reason(self):
        """Why the function runs eagerly (None while it replays)."""
        return self._eager_reason

    def _go_eager(self, reason):
        self._eager_reason = reason
        if self._verbose:
            print(f"fastt.compile: {_name(self._fn)} runs eagerly: {reason}",
                  file=sys.stderr)

    def __call__(self, *args, **kwargs):
        if self._split is not None:
            self.stats["split_calls"] += 1
            return self._split(args, kwargs)
        if self._eager_reason is not None or _C._capture_in_capture():
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        flat, spec = _flat_args(args, kwargs)
        epoch = (_TYPES or _module_types())[2][0]
        for e in self._entries:
            if e.epoch != epoch:
                if _snapshot(e.modules) != e.snapshot:
                    continue
                e.epoch = epoch
            out = e.step.run(flat)
            if out is not None:
                self.stats["replays"] += 1
                if e.recipe is not None:
                    out = _assemble(e.recipe, flat, out)
                    if e.flat_piece:  # (returned, (value, ...))
                        return out[0], tuple(out[1:])
                return out[0] if e.single else _unflatten(e.out_spec,
                                                          iter(out))
        if len(self._entries) >= cache_size_limit:
            warnings.warn(
                f"fastt.compile: {_name(self._fn)} hit cache_size_limit "
                f"({cache_size_limit}) captured steps (its guards keep "
                "failing: changing shapes or arguments?); running it "
                "eagerly from now on", stacklevel=2)
            self._go_eager("cache_size_limit reached")
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        if not self._warm and not self._fullgraph:
            # A warm-up call, eager: what a first step creates lazily
            # (gradients, optimizer state) exists when the next one is
            # captured, so the capture needs no guard on it.
            self._warm = True
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        if self._root is not self:  # a piece: what it is given
            code = self._fn.__code__
            for name, v in zip(code.co_varnames, args):
                if not _passable(v):
                    self._go_eager(
                        f"its local {name!r}, a {type(v).__name__}, passes "
                        "a graph break (a captured piece would work on a "
                        "copy)")
                    self.stats["eager_calls"] += 1
                    return self._fn(*args, **kwargs)
        return self._capture(flat, spec, epoch, args, kwargs)

    def _capture(self, flat, spec, epoch, args, kwargs):
        seen = set()
        for a in flat:
            if not isinstance(a, _C.Tensor):
                continue
            if _base(a) in seen:
                self._go_eager("two tensor arguments share memory")
                self.stats["eager_calls"] += 1
                return self._fn(*args, **kwargs)
            seen.add(_base(a))
        for a in flat:
            if isinstance(a, _C.Tensor) and a.requires_grad:
                self._go_eager("an input requires grad (capture the whole "
                               "step, with the parameters as leaves)")
                self.stats["eager_calls"] += 1
                return self._fn(*args, **kwargs)
        # The step runs on private copies of its tensor inputs: a replay
        # copies new inputs into them.
        from . import no_grad
        with no_grad():
            bindings = [a.detach().clone() if isinstance(a, _C.Tensor)
                        else None for a in flat]
        # (Containers holding no tensor are passed as themselves, so that
        # the capture's own call mutates the caller's list or dict.)
        sub = {id(a): b for a, b in zip(flat, bindings) if b is not None}
        cargs, ckwargs = _substitute((args, kwargs), sub)
        versions = [b._version if b is not None else 0 for b in bindings]
        modules_before, optims, tensors = _reachable(self._fn, flat)
        snapshot = _snapshot(modules_before)
        had_grad = [t for t in _state_tensors(modules_before, optims,
                                              tensors)
                    if t.grad is not None]
        self.stats["captures"] += 1
        _C._capture_break_frames()  # (clears the last capture's)
        _C._capture_begin(self._fullgraph)
        try:
            out = self._fn(*cargs, **ckwargs)
        except RuntimeError as e:
            _C._capture_abort()
            if self._fullgraph and "fullgraph=True" in str(e):
                raise _with_user_line(e) from None
            raise
        except BaseException:
            _C._capture_abort()
            raise
        step = _C._capture_end()
        # The caller's tensors for the private copies, in what is returned.
        unbind = {id(b): a for a, b in zip(flat, bindings) if b is not None}
        copy_back = [b is not None and b._version != v
                     for b, v in zip(bindings, versions)]
        # A step that wrote its inputs: the caller's tensors see it too.
        if any(copy_back):
            with no_grad():
                for a, b, c in zip(flat, bindings, copy_back):
                    if c:
                        a.copy_(b)
        if not step.replayable:
            self._graph_break(step.break_reason, _C._capture_break_frames())
            return _substitute(out, unbind)
        leaves = []
        out_spec = _flatten(out, leaves)
        recipe = None
        if self._root is not self:
            recipe, outputs = _piece_outputs(
                out, leaves, bindings, self._fn, flat)
            if isinstance(recipe, str):
                self._go_eager(recipe)
                return _substitute(out, unbind)
            leaves = outputs
        outputs = [x for x in leaves if isinstance(x, _C.Tensor)]
        if any(x.requires_grad for x in outputs) and not step.ran_backward:
            self._go_eager(
                "its outputs require grad and it runs no backward (a "
                "replay returns plain tensors): compile the whole training "
                "step, or run it under no_grad")
            return _substitute(out, unbind)
        if len(outputs) != len(leaves):
            self._go_eager("it returns values other than tensors")
            return _substitute(out, unbind)
        modules, optims, tensors = _reachable(self._fn, flat)
        state = _state_tensors(modules, optims, tensors)
        # fastt's own caches (causal masks): the step keeps what it uses.
        state += [t for cache in _CACHES for t in cache.values()]
        known = [b for b in bindings if b is not None] + state
        why = step.check_addresses(known)
        if why is not None:
            self._go_eager(why)
            return _substitute(out, unbind)
        step.guard_assigned_grads(had_grad)
        step.bind(flat, list(bindings), copy_back, outputs, state)
        e = _Entry()
        e.step = step
        # The state before the capture: a step that changes its modules'
        # attributes is re-checked (and captured again) on the next call.
        e.epoch = epoch
        e.modules = modules_before
        e.snapshot = snapshot
        e.out_spec = out_spec
        e.single = out_spec == 0 and recipe is None
        e.recipe = recipe
        # A piece's (returned, values) whose values are all leaves.
        values = out_spec[1][1] if recipe is not None else None
        e.flat_piece = (isinstance(values, tuple) and values[0] is tuple
                        and all(v in (0, 1) for v in values[1]))
        self._entries.append(e)
        if self._verbose:
            before = step.unplanned_bytes or step.pool_bytes
            print(f"fastt.compile: captured {_name(self._fn)}: "
                  f"{step.num_kernels} kernels, {step.num_host_steps} host "
                  f"steps, {step.pool_bytes} bytes of memory (gradients "
                  f"and intermediates; {before} before the liveness plan)",
                  file=sys.stderr)
        res = step.outputs()
        if recipe is not None:
            res = _assemble(recipe, flat, res)
        return res[0] if e.single else _unflatten(out_spec, iter(res))

    def _graph_break(self, reason, frames):
        """A break while capturing: split the function there (_split.py),
        or run it eagerly from now on."""
        root = self._root
        root.stats["graph_breaks"] += 1
        where = next(((c.co_filename, line) for c, line in reversed(frames)
                      if c is _code_of(self._fn)), None)
        root.graph_breaks.append((reason,) + (where or ("?", 0)))
        split = _split.plan(self._fn, frames, functools.partial(
            CompiledFunction, verbose=self._verbose, _root=root))
        if isinstance(split, str):
            self._go_eager(f"graph break: {reason} (not split: {split})")
            return
        self._split = split
        if self._verbose:
            lines = [getattr(p, "_fastt_lines", None) for p in split.pieces]
            eager = next(p for p in split.pieces
                         if not isinstance(p, CompiledFunction))
            a, b = eager._fastt_lines
            print(f"fastt.compile: graph break in {_name(self._fn)} at "
                  f"{where[0]}:{where[1]} ({reason}): lines {a}-{b} run "
                  f"eagerly, {len(lines) - 1} piece(s) around them are "
                  "captured", file=sys.stderr)


def _code_of(fn):
    return getattr(_split.unwrap(fn)[1], "__code__", None)


def _piece_outputs(out, leaves, bindings, fn, flat):
    """How a piece's results are rebuilt on a replay: per leaf (0, value)
    a constant (a non-tensor, or the step's state), (1, i) the call's
    argument flat[i] (a tensor the piece was given), (2, j) its j-th
    output (a tensor it made, fresh on each replay). Returns (recipe,
    outputs) or (why not, None). The locals it passes on must be tensors,
    immutable values or objects compared by identity (a list or dict
    rebuilt from constants would lose later mutations and aliases)."""
    returned, values = out
    if not returned:
        for name, v in zip(fn._fastt_outs, values):
            if not _passable(v):
                return (f"its local {name!r}, a {type(v).__name__}, passes "
                        "a graph break (a replay would give it as the "
                        "capture saw it)", None)
    by_binding = {id(b): i for i, b in enumerate(bindings) if b is not None}
    modules, optims, tensors = _reachable(fn, flat)
    state = {id(t): t for t in _state_tensors(modules, optims, tensors)}
    taken = {_base(b) for b in bindings if b is not None}
    taken.update(_base(t) for t in state.values())
    recipe, outputs, made = [], [], set()
    for x in leaves:
        if not isinstance(x, _C.Tensor):
            recipe.append((0, x))
        elif id(x) in by_binding:
            recipe.append((1, by_binding[id(x)]))
        elif id(x) in state:
            recipe.append((0, x))
        elif _base(x) in taken:
            return ("a view of an argument or of the step's state passes "
                    "a graph break", None)
        elif _base(x) in made:
            return ("two tensors passing a graph break share memory", None)
        else:
            made.add(_base(x))
            recipe.append((2, len(outputs)))
            outputs.append(x)
    return recipe, outputs


def _substitute(obj, sub):
    """obj with the tensors of sub (id -> tensor) replaced; the containers
    on the way rebuilt, the others kept."""
    if isinstance(obj, _C.Tensor):
        return sub.get(id(obj), obj)
    t = type(obj)
    if t is tuple or t is list:
        new = [_substitute(x, sub) for x in obj]
        if all(a is b for a, b in zip(new, obj)):
            return obj
        return t(new)
    if isinstance(obj, tuple):  # a namedtuple or a return type (structseq)
        new = [_substitute(x, sub) for x in obj]
        return obj if all(a is b for a, b in zip(new, obj)) else _named(t)(new)
    if t is dict:
        new = {k: _substitute(v, sub) for k, v in obj.items()}
        return obj if all(new[k] is obj[k] for k in obj) else new
    return obj


def _passable(v):
    Module, Optimizer, _ = _module_types()
    if isinstance(v, (_C.Tensor, Module, Optimizer, types.FunctionType,
                      types.BuiltinFunctionType, types.MethodType, type,
                      types.ModuleType)) or type(v) in _ARG_ATOMS:
        return True
    if isinstance(v, tuple):
        return all(_passable(x) for x in v)
    return isinstance(v, (_C.dtype, _C.device))


def _assemble(recipe, flat, out):
    return [v if k == 0 else flat[v] if k == 1 else out[v]
            for k, v in recipe]


def _base(t):
    """The address of t's storage (views of one storage share it)."""
    return t.data_ptr() - t.storage_offset() * t.element_size()


def _name(fn):
    return getattr(fn, "__qualname__", None) or repr(fn)


def _with_user_line(err):
    """The fullgraph error, naming the line of user code that broke."""
    tb = err.__traceback__
    where = None
    pkg = __file__.rsplit("/", 1)[0]
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if not f.startswith(pkg):
            where = (f, tb.tb_lineno)
        tb = tb.tb_next
    msg = str(err)
    if where:
        msg += f" (at {where[0]}:{where[1]})"
    return type(err)(msg)


_OPTIMIZED_MODULE = []


def _optimized_module_type():
    """torch's OptimizedModule: a Module whose calls go through the
    compiled original (``_orig_mod``); other attributes are the
    original's. Made on first use (nn imports this module)."""
    if _OPTIMIZED_MODULE:
        return _OPTIMIZED_MODULE[0]
    Module = _module_types()[0]

    class OptimizedModule(Module):
        def __init__(self, mod, **options):
            super().__init__()
            self._orig_mod = mod
            self.__dict__["_compiled"] = CompiledFunction(mod, **options)

        def forward(self, *args, **kwargs):
            return self.__dict__["_compiled"](*args, **kwargs)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self._orig_mod, name)

    _OPTIMIZED_MODULE.append(OptimizedModule)
    return OptimizedModule


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor",
            mode=None, options=None, disable=False, verbose=False):
    """Compiles a function or module (torch.compile's signature): the first
    call captures its kernels, later calls with the same guards replay
    them. ``backend``, ``mode``, ``dynamic`` and ``options`` are accepted
    for torch compatibility (there is one way to compile here; a new
    shape captures again). ``disable=True`` returns the function as is.
    """
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph,
                                 dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable,
                                 verbose=verbose)
    if not callable(model):
        raise TypeError(f"compile: expected a callable, got "
                        f"{type(model).__name__}")
    if mode is not None and mode not in (
            "default", "reduce-overhead", "max-autotune",
            "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           "default, reduce-overhead, max-autotune, "
                           "max-autotune-no-cudagraphs")
    if disable:
        return model
    Module = _module_types()[0]
    if isinstance(model, Module):
        return _optimized_module_type()(model, fullgraph=fullgraph,
                                        verbose=verbose)
    return CompiledFunction(model, fullgraph=fullgraph, verbose=verbose)


def host_call(method):
    """Makes a method a host step of a captured function: while a step is
    recorded, the call runs with recording suspended and the replay calls
    it again (Optimizer.step, LRScheduler.step). A call with arguments is
    a graph break (their values would be frozen)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if not _C._capture_recording():
            return method(self, *args, **kwargs)
        if any(a is not None for a in args) or any(
                v is not None for v in kwargs.values()):
            _C._capture_break(
                f"{type(self).__name__}.{method.__name__} with arguments")
            return method(self, *args, **kwargs)
        _C._capture_host_step(functools.partial(method, self))
        return _C._capture_suspended(method, self)

    return wrapper

"""Graph breaks split a compiled function into pieces (fastt.compile).

A break (a host read such as ``.item()``, an op whose output shape
depends on the data) found while a function is captured names the line
its own frame stood at. The function's source is cut at its top-level
statements: the statement holding that line runs eagerly on every call,
the statements before and after it become functions of their own, each
compiled (captured and replayed, and split again at their own breaks).
Local variables pass between the pieces as arguments and return values:
tensors made by a captured piece come back as fresh tensors on each
replay, the caller's tensors and the step's state as themselves, and
other values (ints, lists, modules) as the capture saw them, as for
every Python value a captured piece computes.

A break inside a loop, ``with`` or ``if`` at the top level makes that
whole statement the eager piece. Functions whose source cannot be read,
generators and coroutines, functions with a local that an inner function
captures (a cell), a ``nonlocal`` statement or a class-private
(``__name``) name are not split: they stay eager, as before.
"""
import ast
import copy
import inspect
import textwrap
import types

__all__ = ["plan"]


class _Unbound:
    """The value passed for a local that is not bound yet."""
    __slots__ = ()

    def __repr__(self):
        return "<unbound local>"


UNBOUND = _Unbound()
_UNBOUND_CELL = types.CellType(UNBOUND)

_NO_SPLIT_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                   | inspect.CO_ASYNC_GENERATOR
                   | inspect.CO_ITERABLE_COROUTINE)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class _Source:
    """A function's top-level statements and what a piece of them needs:
    the function's local names (arguments first), its global
    declarations, its closure cells by name, its globals and file."""
    __slots__ = ("name", "qualname", "stmts", "local_names", "globals_decl",
                 "cells", "globals", "filename", "first_arg", "outs")


def _source_of(func):
    """The _Source of a plain function, or a string saying why not."""
    src = getattr(func, "_fastt_source", None)
    if src is not None:
        return src
    code = getattr(func, "__code__", None)
    if code is None:
        return "it has no Python code"
    if code.co_flags & _NO_SPLIT_FLAGS:
        return "it is a generator or coroutine"
    if code.co_cellvars:
        return (f"its local {code.co_cellvars[0]!r} is captured by an inner "
                "function")
    try:  # (the code's own source: a functools.wraps wrapper's, not the
        # wrapped function's, which inspect would follow __wrapped__ to)
        lines, start = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return "its source cannot be read"
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != code.co_name:
        return "its source is not a def statement"
    ast.increment_lineno(tree, start - 1)
    src = _Source()
    src.name = code.co_name
    src.qualname = func.__qualname__
    src.globals_decl = []
    src.stmts = []
    for s in node.body:
        for n in _walk_scope(s):
            if isinstance(n, ast.Nonlocal):
                return "it has a nonlocal statement"
        for n in ast.walk(s):
            name = (n.id if isinstance(n, ast.Name) else
                    n.attr if isinstance(n, ast.Attribute) else "")
            if name.startswith("__") and not name.endswith("__"):
                return f"it names {name} (a class-private name)"
        if isinstance(s, ast.Global):
            src.globals_decl.extend(s.names)
        else:
            src.stmts.append(s)
    nargs = (code.co_argcount + code.co_kwonlyargcount
             + bool(code.co_flags & inspect.CO_VARARGS)
             + bool(code.co_flags & inspect.CO_VARKEYWORDS))
    src.local_names = code.co_varnames
    src.first_arg = code.co_varnames[0] if nargs else None
    src.cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    src.globals = func.__globals__
    src.filename = code.co_filename
    src.outs = None  # a piece: the locals it returns
    return src


def _walk_scope(node):
    """The nodes of node in its own scope: a nested function or class is
    yielded (its name is bound here) but not entered."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _assigned_in(stmts):
    """The names stmts bind or delete in their own scope."""
    out = set()
    for s in stmts:
        for n in _walk_scope(s):
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, (ast.Store, ast.Del)):
                    out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0]
                           for a in n.names)
            elif isinstance(n, (ast.ExceptHandler, ast.MatchAs,
                                ast.MatchStar)) and n.name:
                out.add(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                out.add(n.rest)
    return out


def _names_in(stmts):
    out = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name):
                out.add(n.id)
    return out


class _Returns(ast.NodeTransformer):
    """``return x`` becomes ``return (True, x)`` (the function ends)."""

    def visit_Return(self, node):
        value = node.value or ast.Constant(None)
        return ast.copy_location(ast.Return(ast.Tuple(
            [ast.Constant(True), value], ast.Load())), node)

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _make_piece(src, stmts, params, outs):
    """A function of the locals `params` running `stmts`; it returns
    (True, value) where the statements return, else (False, the values of
    the locals `outs`, UNBOUND for unbound ones)."""
    line = stmts[0].lineno
    last = max(s.end_lineno for s in stmts)
    body = []
    if src.globals_decl:
        body.append(ast.Global(list(src.globals_decl)))
    for p in params:  # an unbound local stays unbound
        body.append(ast.If(
            ast.Compare(ast.Name(p, ast.Load()), [ast.Is()],
                        [ast.Name("_fastt_unbound", ast.Load())]),
            [ast.Delete([ast.Name(p, ast.Del())])], []))
    # (On copies: the transformer edits compound statements in place, and
    # a piece split again is made from the statements as written.)
    body.extend(_Returns().visit(copy.deepcopy(s)) for s in stmts)
    body.append(ast.Assign([ast.Name("_fastt_locals", ast.Store())],
                           ast.Call(ast.Name("locals", ast.Load()), [], [])))
    got = [ast.Call(ast.Attribute(ast.Name("_fastt_locals", ast.Load()),
                                  "get", ast.Load()),
                    [ast.Constant(n), ast.Name("_fastt_unbound", ast.Load())],
                    []) for n in outs]
    body.append(ast.Return(ast.Tuple(
        [ast.Constant(False), ast.Tuple(got, ast.Load())], ast.Load())))
    fn = ast.FunctionDef(
        "_fastt_piece",
        ast.arguments([], [ast.arg(p) for p in params], None, [], [], None,
                      []),
        body, [], None)
    # The factory makes the closure's names free variables of the piece;
    # the piece is then built with the original function's cells.
    outer = [ast.Assign([ast.Name(n, ast.Store())], ast.Constant(None))
             for n in ["_fastt_unbound"] + list(src.cells)]
    factory = ast.FunctionDef(
        "_fastt_factory", ast.arguments([], [], None, [], [], None, []),
        outer + [fn], [], None)
    mod = ast.Module([factory], [])
    for n in ast.walk(mod):
        if isinstance(n, (ast.stmt, ast.expr)) and not hasattr(n, "lineno"):
            n.lineno = n.end_lineno = line
            n.col_offset = n.end_col_offset = 0
    ast.fix_missing_locations(mod)
    code = compile(mod, src.filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    pcode = next(c for c in fcode.co_consts if isinstance(c, types.CodeType))
    closure = tuple(_UNBOUND_CELL if n == "_fastt_unbound" else src.cells[n]
                    for n in pcode.co_freevars)
    piece = types.FunctionType(pcode, src.globals, src.name, None, closure)
    piece.__qualname__ = f"{src.qualname} (lines {line}-{last})"
    sub = _Source()
    for k in _Source.__slots__:
        setattr(sub, k, getattr(src, k))
    sub.stmts = stmts
    sub.outs = outs
    piece._fastt_source = sub
    piece._fastt_outs = tuple(outs)
    piece._fastt_lines = (line, last)
    return piece


class Split:
    """The pieces a function runs as: call it like the function (a piece
    split again returns what the piece returns: (returned, values)).
    steps: (callable, the locals it takes, the locals it returns); the
    locals live in a dict between the steps."""

    def __init__(self, func, steps, bound, outs, eager=None):
        self.steps = steps
        self.pieces = [p for p, _, _ in steps]
        self.bound = bound
        self._outs = outs  # None: the function itself, not a piece
        self._eager = eager  # a module with hooks runs as a whole
        code = func.__code__
        self._simple = not (code.co_flags & (inspect.CO_VARARGS
                                             | inspect.CO_VARKEYWORDS)
                            or code.co_kwonlyargcount)
        self._argnames = code.co_varnames[:code.co_argcount]
        self._sig = inspect.signature(func, follow_wrapped=False)

    def __call__(self, args, kwargs):
        if self._eager is not None and self.bound._fastt_runs_hooks():
            return self._eager(*args, **kwargs)
        if self.bound is not None:
            args = (self.bound,) + tuple(args)
        if self._simple and not kwargs and len(args) == len(self._argnames):
            env = dict(zip(self._argnames, args))
        else:
            ba = self._sig.bind(*args, **kwargs)
            ba.apply_defaults()
            env = dict(ba.arguments)
        for piece, takes, gives in self.steps:
            returned, values = piece(*[env.get(n, UNBOUND) for n in takes])
            if returned:
                return values if self._outs is None else (True, values)
            env.update(zip(gives, values))
        if self._outs is None:
            return None
        return False, tuple(env.get(n, UNBOUND) for n in self._outs)


def unwrap(fn):
    """(the object fn is bound to or None, the plain function it runs):
    a module runs its class's forward, a bound method its function."""
    if isinstance(fn, module_types()[0]):
        return fn, type(fn).forward
    if isinstance(fn, types.MethodType):
        return fn.__self__, fn.__func__
    return None, fn


def plan(fn, frames, compile_piece):
    """The Split of fn at the break noted in frames ([(code, line)] from
    the innermost frame out), or a string saying why it cannot be split.
    compile_piece(function) compiles a piece."""
    bound, func = unwrap(fn)
    eager = None
    if isinstance(fn, module_types()[0]):
        if "forward" in vars(fn):
            return "its forward is an instance attribute"
        # Module.__call__ runs the hooks: with any, the module runs whole.
        eager = fn
    src = _source_of(func)
    if isinstance(src, str):
        return src
    line = None
    for code, at in reversed(frames):  # the outermost frame of func
        if code is func.__code__:
            line = at
            break
    if line is None:
        return "the break happened outside its own frame"
    k = next((i for i, s in enumerate(src.stmts)
              if s.lineno <= line <= s.end_lineno), None)
    if k is None:
        return f"line {line} is not in its body"
    parts = [(src.stmts[:k], True), (src.stmts[k:k + 1], False),
             (src.stmts[k + 1:], True)]
    parts = [(s, c) for s, c in parts if s]
    if len(parts) == 1:
        return "the break is in its only statement"
    # A final `return` naming what the eager statement bound (the value
    # read on the host) runs eagerly too: in the captured piece it would
    # be guarded per value, captured again on every call.
    last, captured = parts[-1]
    if (captured and len(last) > 1 and isinstance(last[-1], ast.Return)
            and _names_in(last[-1:]) & _assigned_in(src.stmts[k:k + 1])):
        parts[-1:] = [(last[:-1], True), (last[-1:], False)]
    local = set(src.local_names)
    order = {n: i for i, n in enumerate(src.local_names)}
    outs = list(src.outs) if src.outs is not None else []

    def ordered(names):
        return sorted(names, key=order.__getitem__)

    steps = []
    for i, (stmts, captured) in enumerate(parts):
        # A piece takes the locals it names (the first argument always,
        # for super()), and returns those it binds that later code names.
        takes = _names_in(stmts) & local
        if src.first_arg is not None:
            takes.add(src.first_arg)
        later = _names_in([s for p in parts[i + 1:] for s in p[0]])
        gives = _assigned_in(stmts) & local & (later | set(outs))
        takes, gives = ordered(takes), ordered(gives)
        piece = _make_piece(src, stmts, takes, gives)
        steps.append((compile_piece(piece) if captured else piece, takes,
                      gives))
    return Split(func, steps, bound, src.outs, eager)


_TYPES = []


def module_types():
    """(Module, Optimizer, the modules' state epoch), imported once (they
    import fastt.compile's modules)."""
    if not _TYPES:
        from .nn.modules.module import Module, _STATE_EPOCH
        from .optim.optimizer import Optimizer
        _TYPES.extend((Module, Optimizer, _STATE_EPOCH))
    return _TYPES

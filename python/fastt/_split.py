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
    try:
        lines, start = inspect.getsourcelines(func)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return "its source cannot be read"
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != func.__name__:
        return "its source is not a def statement"
    ast.increment_lineno(tree, start - 1)
    src = _Source()
    src.name = func.__name__
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
    """The nodes of node, not entering nested functions and classes."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, _SCOPES):
                todo.append(c)


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
    body.extend(_Returns().visit(s) for s in stmts)
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
    piece._fastt_lines = (line, last)
    return piece


class Split:
    """The pieces a function runs as: call it like the function (a piece
    split again returns what the piece returns: (returned, values))."""

    def __init__(self, func, pieces, params, bound, piece):
        self.pieces = pieces  # callables, each returning (returned, values)
        self.bound = bound
        self._piece = piece
        code = func.__code__
        self._simple = not (code.co_flags & (inspect.CO_VARARGS
                                             | inspect.CO_VARKEYWORDS)
                            or code.co_kwonlyargcount)
        self._argcount = code.co_argcount
        names = code.co_varnames
        self._take = [names.index(p) if p in names[:code.co_argcount]
                      else -1 for p in params]
        self._params = params
        self._sig = inspect.signature(func)

    def __call__(self, args, kwargs):
        if self.bound is not None:
            args = (self.bound,) + tuple(args)
        if self._simple and not kwargs and len(args) == self._argcount:
            values = tuple(args[i] if i >= 0 else UNBOUND
                           for i in self._take)
        else:
            ba = self._sig.bind(*args, **kwargs)
            ba.apply_defaults()
            values = tuple(ba.arguments.get(p, UNBOUND)
                           for p in self._params)
        for piece in self.pieces:
            returned, values = piece(*values)
            if returned:
                return (True, values) if self._piece else values
        return (False, values) if self._piece else None


def plan(fn, frames, compile_piece):
    """The Split of fn at the break noted in frames ([(code, line)] from
    the innermost frame out), or a string saying why it cannot be split.
    compile_piece(function) compiles a piece."""
    Module = _module_type()
    bound = None
    func = fn
    if Module is not None and isinstance(fn, Module):
        bound, func = fn, type(fn).forward
    elif isinstance(fn, types.MethodType):
        bound, func = fn.__self__, fn.__func__
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
    local = set(src.local_names)
    order = {n: i for i, n in enumerate(src.local_names)}

    outs = src.outs or []

    def live(i):  # the locals pieces i... name (the first argument always)
        names = _names_in([s for p in parts[i:] for s in p[0]]) & local
        names.update(outs)
        if src.first_arg is not None:
            names.add(src.first_arg)
        return sorted(names, key=order.__getitem__)

    bounds = [live(i) for i in range(len(parts))] + [list(outs)]
    pieces = []
    for i, (stmts, captured) in enumerate(parts):
        piece = _make_piece(src, stmts, bounds[i], bounds[i + 1])
        pieces.append(compile_piece(piece) if captured else piece)
    return Split(func, pieces, bounds[0], bound, src.outs is not None)


_MODULE = []


def _module_type():
    if not _MODULE:
        from .nn.modules.module import Module
        _MODULE.append(Module)
    return _MODULE[0]

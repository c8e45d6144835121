"""Coverage from the op rows. The rows: csrc/ops/elementwise.def (read back
through fastt._C._ew_rows() with the dtypes the dispatch table registers
on each device), the sections of csrc/ops.def and autograd/grad_fns.def.
What the Python op table (op_table.py) covers, stated by section of
csrc/ops.def in OP_TABLE_SECTIONS; the other sections are listed, with
where they are tested, in NOT_IN_OP_TABLE. A test here fails when
  - an elementwise row (hand-bound ones included: add, sub, div,
    leaky_relu, heaviside, ...) has no OpInfo and is not an internal row
    (op_table.INTERNAL_ROWS), or a reduction row has no REDUCTIONS entry;
  - a differentiable row's GradFn is recorded by no grad_table.py case;
  - a row's op-table dtypes are not the dtypes the dispatch table makes it
    accept, nor those fastt and torch accept when tried, but for the
    listed divergences (op_table.DTYPE_DIVERGENCES);
  - the CUDA registrations of a row are not its CPU ones (CUDA builds; the
    CUDA device tests check the same op table on the device).
"""
import functools
import os
import re

import pytest

import fastt
import grad_table
import op_table

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROWS = fastt._C._ew_rows()  # (name, kind, rule, grad, python, cpu, cuda)
ROW = {r[0]: r for r in ROWS}
BY_ROW = {}  # row name -> its OpInfos, the first the row's own function
for _op in op_table.OPS:
    BY_ROW.setdefault(_op.row, []).append(_op)
DIFFERENTIABLE = [r for r in ROWS if r[3] != "NotDiff"]
TABLE_ROWS = [r for r in ROWS if r[0] not in op_table.INTERNAL_ROWS]


def _read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def _name(d):
    return str(d).split(".")[-1]


def _ids(rows):
    return [r[0] for r in rows]


# ---- which rows the op table covers, by section of csrc/ops.def --------
OP_TABLE_SECTIONS = {
    "unary and binary elementwise": "op_table.OPS (the rows of "
                                    "csrc/ops/elementwise.def)",
    "reductions": "op_table.REDUCTIONS",
}
# The sections the op table does not cover (its OpInfo is one or two
# same-kind inputs and one output), and where their rows are tested.
NOT_IN_OP_TABLE = {
    "copies and fills": "test_tensor_api.py, test_interop.py (to, copy_)",
    "ternary elementwise": "a condition or bound input: test_api_audit.py, "
                           "test_cuda_elementwise.py, test_elementwise.cpp",
    "linear algebra": "test_ops.py test_matmul, test_cuda_linalg.py",
    "dense factorizations": "test_linalg.py, test_opinfo.py (linalg.*), "
                            "test_cuda_linalg.py (the host round trip)",
    "discrete Fourier transforms": "test_fft.py (against torch.fft), "
                                   "test_fft.cpp, test_cuda_linalg.py",
    "indexing and shape": "test_autograd_index.py, test_cuda_index.py",
    "nn: convolution and pooling": "test_nn_conv.py, test_cuda_nn.py",
    "nn: normalization and losses": "test_nn.py, test_cuda_nn.py",
    "factories and random": "test_tensor_api.py, test_cuda_factory.py",
    "optimizer steps": "test_optim.py, test_cuda_optim.py",
}


def ops_def_sections():
    """{section header: [row names]} of csrc/ops.def, the elementwise.def
    include standing for its rows."""
    sections, cur = {}, None
    for line in _read("csrc/ops.def").splitlines():
        m = re.match(r"\s*// ---- (.*?)(?: ----)?\s*$", line)
        if m:
            cur = m.group(1)
            sections[cur] = []
            continue
        m = re.match(r"FASTT_OP\((\w+),", line)
        if m:
            sections[cur].append(m.group(1))
        elif re.match(r'#include "ops/elementwise.def"', line):
            sections[cur] += [r[0] for r in ROWS]
    return sections


def _section_key(header):
    keys = [k for k in list(OP_TABLE_SECTIONS) + list(NOT_IN_OP_TABLE)
            if header.startswith(k)]
    return keys[0] if len(keys) == 1 else None


SECTIONS = ops_def_sections()


def test_rows_are_read_back():
    """_ew_rows() is every FASTT_EW row of the source, in order."""
    src = re.findall(r"^FASTT_EW\((\w+),\s*(\w+),",
                     _read("csrc/ops/elementwise.def"), re.M)
    assert [(r[0], r[1]) for r in ROWS] == src
    assert ROW["add"][1] == ROW["sub"][1] == "BinaryAlpha"
    assert ROW["leaky_relu"][1] == "UnaryHand"


def test_ops_def_sections_are_classified():
    """Every section of csrc/ops.def is either the op table's or listed as
    tested elsewhere: a new section fails here until it is placed."""
    assert len(SECTIONS) >= 10
    for header, rows in SECTIONS.items():
        assert rows, f"section {header!r} has no rows (parse error?)"
        assert _section_key(header), (
            f"csrc/ops.def section {header!r}: add it to OP_TABLE_SECTIONS "
            "or NOT_IN_OP_TABLE in tests/python/test_op_rows.py")
    used = {_section_key(h) for h in SECTIONS}
    assert used == set(OP_TABLE_SECTIONS) | set(NOT_IN_OP_TABLE), (
        "stale section names")


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_elementwise_row_has_op_table_row(row):
    name = row[0]
    internal = name in op_table.INTERNAL_ROWS
    assert internal != (name in BY_ROW), (
        f"{name}: add an OpInfo for it to tests/python/op_table.py (OPS)"
        if not internal else
        f"{name} has an OpInfo: drop it from op_table.INTERNAL_ROWS")


def test_op_table_names_only_rows():
    """Every OpInfo's row and every internal row is a row (a renamed or
    removed row fails here)."""
    assert set(BY_ROW) - set(ROW) == set()
    assert set(op_table.INTERNAL_ROWS) - set(ROW) == set()


REDUCTION_ROWS = [r for h, rows in SECTIONS.items()
                  if _section_key(h) == "reductions" for r in rows]


@pytest.mark.parametrize("row", REDUCTION_ROWS)
def test_reduction_row_has_op_table_entry(row):
    covered = {op_table.REDUCTION_ROWS.get(r[0], r[0])
               for r in op_table.REDUCTIONS}
    assert row in covered, (
        f"{row}: add an entry to op_table.REDUCTIONS (and to "
        "op_table.REDUCTION_ROWS if its name is not the row's)")


def test_reduction_entries_name_rows():
    for r in op_table.REDUCTIONS:
        assert op_table.REDUCTION_ROWS.get(r[0], r[0]) in REDUCTION_ROWS, r[0]


# ---- the gradient table ---------------------------------------------------
def _grad_fn_names():
    """{GradFn enum name: grad_fn name} of autograd/grad_fns.def."""
    return dict(re.findall(r'^FASTT_GRAD_FN\((\w+),\s*"(\w+)"\)',
                           _read("autograd/grad_fns.def"), re.M))


def expected_grad_fn(row):
    """The grad_fn name a differentiable row records: its Uses(GradFn)
    row's name in grad_fns.def, or <GradFn>Backward0 for Grad(GradFn)."""
    m = re.match(r"(Uses|Grad)\((\w+),\s*\w+\)$", row[3])
    assert m, row[3]
    if m.group(1) == "Grad":
        return m.group(2) + "Backward0"
    return _grad_fn_names()[m.group(2)]


@functools.lru_cache(maxsize=None)
def recorded_grad_fns():
    """{grad_fn name: [grad_table case names]}: every case's function run
    once in fastt (float64), its graph walked."""
    import test_gradcheck as G
    seen = {}
    for case in grad_table.CASES:
        xs = G.build(fastt, G.arrays_for(case), case.inputs, fastt.float64)
        try:
            outs = G.outputs(case.fn(fastt, *xs))
        except Exception:  # an xfail case: its own test says why
            continue
        stack = [o.grad_fn for o in outs if o.grad_fn is not None]
        done = set()
        while stack:
            g = stack.pop()
            if id(g) in done:
                continue
            done.add(id(g))
            seen.setdefault(g.name(), []).append(case.name)
            stack += [n for n, _ in g.next_functions if n is not None]
    return seen


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=_ids(DIFFERENTIABLE))
def test_differentiable_row_has_grad_case(row):
    want = expected_grad_fn(row)
    assert want in recorded_grad_fns(), (
        f"{row[0]}: no tests/python/grad_table.py case records {want}; "
        "add one")


@pytest.mark.parametrize("row", sorted(op_table.INTERNAL_ROWS))
def test_internal_row_is_reached_through_its_grad_case(row):
    """An internal row's kernel runs in the backward of the named case:
    the case exists and records the named GradFn, and the row's kernels
    are the float dtypes gradients come in."""
    case, grad_fn = op_table.INTERNAL_ROWS[row]
    assert case in recorded_grad_fns().get(grad_fn, []), (case, grad_fn)
    assert {_name(d) for d in ROW[row][5]} == set(op_table.FLOATS)


def test_grad_fn_table_is_parsed():
    names = _grad_fn_names()
    assert names["Exp"] == "ExpBackward0" and len(names) > 100


# ---- dtypes ----------------------------------------------------------------
# Dtypes an op takes but its OpInfo cannot express, and where they are
# tested instead.
TABLE_NARROWER = {
    "square": {"bool"},  # bool -> int64 (torch's pow(x, 2)): test_elementwise
    # a real result: hypot of the parts (elementwise.cpp's complex_abs)
    "abs": {"complex64", "complex128"},  # test_complex.py
}


def accepted(row, registered):
    """The input dtypes a row takes given its `registered` (compute)
    dtypes on a device: those, or every dtype for a Float-rule op with
    float kernels (integer and bool inputs promote), plus bool for square
    (torch: pow(x, 2) in int64). A Float-rule op with a float32 kernel but
    none of 16 bits (ndtri) takes the integers, not the 16-bit floats."""
    name, kind, rule = row[:3]
    reg = {_name(d) for d in registered}
    if rule == "Float" and set(op_table.FLOATS) <= reg:
        return set(op_table.ALL) | (reg & set(op_table.COMPLEX))
    if rule == "Float" and "float32" in reg:
        return reg | set(op_table.BOOL) | set(op_table.INTS)
    return reg | TABLE_NARROWER.get(name, set())


def table_dtypes(name):
    """The union of the row's OpInfo dtypes, as the row accepts them."""
    return set().union(*(op.dtypes for op in BY_ROW[name])) | \
        TABLE_NARROWER.get(name, set())


def primary(row):
    """The row's own OpInfo (its first), failing when it has none."""
    if row[0] not in BY_ROW:
        pytest.fail(f"{row[0]} has no op table row")
    return BY_ROW[row[0]][0]


@pytest.mark.parametrize("row", TABLE_ROWS, ids=_ids(TABLE_ROWS))
def test_op_table_dtypes_are_the_registered_ones(row):
    primary(row)
    want = accepted(row, row[5])
    for op in BY_ROW[row[0]]:
        assert set(op.dtypes) <= want, (op.name, sorted(set(op.dtypes) -
                                                        want))
    assert table_dtypes(row[0]) == want, (
        f"{row[0]}: the op table tests {sorted(table_dtypes(row[0]))}, the "
        f"dispatch table takes {sorted(want)}")


def _probe(call, lib, arity):
    """The dtypes `call` takes when tried on small tensors of each dtype
    (ones: no value is out of any op's domain)."""
    ok = set()
    for d in op_table.ALL + op_table.COMPLEX:
        xs = [lib.ones(3, dtype=getattr(lib, d)) for _ in range(arity)]
        try:
            call(*xs)
        except (RuntimeError, TypeError, NotImplementedError, ValueError):
            continue
        ok.add(d)
    return ok


@pytest.mark.parametrize("row", TABLE_ROWS, ids=_ids(TABLE_ROWS))
def test_fastt_accepts_the_op_table_dtypes(row):
    """Tried, fastt takes exactly the row's op-table dtypes."""
    op = primary(row)
    assert _probe(op.fastt_fn, fastt, op.arity) == table_dtypes(row[0])


def _torch_call(op):
    import torch
    fn = torch
    for part in (op.torch_name or op.name).split("."):
        fn = getattr(fn, part)
    return lambda *xs: fn(*xs, **op.torch_kwargs)


@pytest.mark.parametrize("row", TABLE_ROWS, ids=_ids(TABLE_ROWS))
def test_torch_accepts_the_op_table_dtypes(row):
    """Tried on torch's CPU tensors, torch takes the row's op-table dtypes
    but for the row's entry in op_table.DTYPE_DIVERGENCES, exactly."""
    torch = pytest.importorskip("torch")
    op = primary(row)
    fastt_only, torch_only, _ = op_table.DTYPE_DIVERGENCES.get(
        op.name, (frozenset(), frozenset(), ""))
    got = _probe(_torch_call(op), torch, op.arity)
    table = table_dtypes(row[0])
    # Complex kernels come row by row (issue 18): a row torch takes
    # complex for and fastt does not yet is not counted as a divergence.
    got -= set(op_table.COMPLEX) - table
    assert (table - got, got - table) == (set(fastt_only), set(torch_only)), (
        f"{row[0]}: torch takes {sorted(got)}, the op table "
        f"{sorted(table)}; divergences listed: fastt only "
        f"{sorted(fastt_only)}, torch only {sorted(torch_only)}")


def test_divergences_name_op_table_rows():
    for name in op_table.DTYPE_DIVERGENCES:
        assert any(op.name == name for op in op_table.OPS), name


CUDA_BUILD = any(r[6] for r in ROWS)  # the build registers CUDA kernels


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_cuda_registrations_are_the_cpu_ones(row):
    """A CUDA build registers every row for the CPU's dtypes (the device
    tests run the op table's dtypes); a CPU build registers none."""
    cpu, cuda = {_name(d) for d in row[5]}, {_name(d) for d in row[6]}
    assert cuda == (cpu if CUDA_BUILD else set()), (
        f"{row[0]}: CPU kernels {sorted(cpu)}, CUDA {sorted(cuda)}")

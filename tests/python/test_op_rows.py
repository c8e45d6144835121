"""Coverage from the op rows (csrc/ops/elementwise.def, read back through
fastt._C._ew_rows() with the dtypes the dispatch table registers): every
generated op has a row in the op table (op_table.OPS), every differentiable
one a gradient-table case (grad_table.CASES), and the dtypes an op accepts
are the op table's and torch's. A row added without its test rows fails
here."""
import pytest

import fastt
import grad_table
import op_table

ROWS = fastt._C._ew_rows()
OPS = {op.name: op for op in op_table.OPS}
GRAD_CASES = [c.name for c in grad_table.CASES]


def _name(d):
    return str(d).split(".")[-1]


def _generated(row):  # an op whose entry points and binding come from it
    name, kind, rule, grad, python, cpu, cuda = row
    return kind in ("Unary", "Binary") and python != "PyHand"


GENERATED = [r for r in ROWS if _generated(r)]

# Where the input dtypes fastt accepts differ from torch's, and why.
TORCH_DIVERGENCES = {
    "nextafter": ({"float16", "bfloat16"}, set(),
                  "16-bit nextafter needs a step on the 16-bit bits; the "
                  "functor computes in float32"),
}


# Dtypes the op takes but its op table row cannot express, and where they
# are tested instead.
TABLE_NARROWER = {
    "square": {"bool"},  # bool -> int64 (torch's pow(x, 2)): test_elementwise
}


def accepted(row):
    """The input dtypes an op takes: the registered (compute) dtypes, or
    every dtype for a Float-rule op with float kernels (integer and bool
    inputs promote), plus bool for square (torch: pow(x, 2) in int64)."""
    name, kind, rule, grad, python, cpu, cuda = row
    reg = {_name(d) for d in cpu}
    if rule == "Float" and set(op_table.FLOATS) <= reg:
        return set(op_table.ALL)
    if name == "square":
        return reg | {"bool"}
    return reg


def test_rows_are_read_back():
    names = [r[0] for r in ROWS]
    assert len(names) == len(set(names))
    kinds = {r[0]: r[1] for r in ROWS}
    assert kinds["add"] == kinds["sub"] == "BinaryAlpha"
    assert kinds["leaky_relu"] == "UnaryHand"
    assert {"hypot", "isnan", "bitwise_left_shift"} <= set(names)


@pytest.mark.parametrize("row", GENERATED, ids=[r[0] for r in GENERATED])
def test_row_has_op_table_row(row):
    assert row[0] in OPS, (
        f"{row[0]}: add a row to tests/python/op_table.py (OPS)")


@pytest.mark.parametrize("row", [r for r in GENERATED if r[3] != "NotDiff"],
                         ids=[r[0] for r in GENERATED if r[3] != "NotDiff"])
def test_differentiable_row_has_grad_case(row):
    name = row[0]
    assert any(c == name or c.startswith(name + "_") for c in GRAD_CASES), (
        f"{name}: add a case to tests/python/grad_table.py")


@pytest.mark.parametrize("row", GENERATED, ids=[r[0] for r in GENERATED])
def test_op_table_dtypes_are_the_registered_ones(row):
    op = OPS.get(row[0])
    if op is None:
        pytest.fail(f"{row[0]} has no op table row")
    assert set(op.dtypes) == accepted(row) - TABLE_NARROWER.get(row[0],
                                                                 set()), (
        f"{row[0]}: the op table tests {sorted(op.dtypes)}, the dispatch "
        f"table takes {sorted(accepted(row))}")


def _torch_dtypes(torch_name):
    from torch.testing._internal.common_methods_invocations import op_db
    for o in op_db:
        if o.name in (torch_name, "nn.functional." + torch_name) and \
                not o.variant_test_name:
            return {_name(d) for d in o.supported_dtypes("cpu")
                    if _name(d) in op_table.ALL}
    return None


@pytest.mark.parametrize("row", GENERATED, ids=[r[0] for r in GENERATED])
def test_accepted_dtypes_match_torch(row):
    pytest.importorskip("torch")
    pytest.importorskip("expecttest")
    op = OPS.get(row[0])
    tname = (op.torch_name if op and op.torch_name else row[0])
    tname = tname.split(".")[-1]
    want = _torch_dtypes(tname)
    assert want is not None, f"{tname} is not in torch's op_db"
    got = accepted(row)
    extra_torch, extra_fastt, _ = TORCH_DIVERGENCES.get(row[0],
                                                        (set(), set(), ""))
    assert want - got == extra_torch and got - want == extra_fastt, (
        f"{row[0]}: torch takes {sorted(want)}, fastt {sorted(got)}")

"""The composite ops (python/fastt/_composite.py) against torch, on what
torch's OpInfo samples leave out: every einsum form, the large-input paths
(isin's sorted lookup, searchsorted's kernel), ties and NaN in the scans
and order statistics (kthvalue / median's selection kernel against a
stable sort, every dtype), histogram bin edges; and, on the CPU, the
paths other devices take instead of the CPU-only kernels (searchsorted's
rounds, kthvalue / median through a sort)."""
import math

import numpy as np
import pytest
import torch

import fastt


def F(t):
    return fastt.from_dlpack(t.detach().clone())


def T(f):
    return torch.from_dlpack(f)


def same(f, t, tol=1e-6):
    assert tuple(f.shape) == tuple(t.shape)
    assert str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(T(f).numpy(), t.numpy(), rtol=tol, atol=tol)


def test_methods_join_tensor_once():
    x = fastt.arange(6.).reshape(2, 3)
    assert x.nansum().item() == 15.0 and x.diff(dim=1).sum().item() == 4.0
    with pytest.raises(ImportError, match="bound twice"):
        fastt._C._add_tensor_method("add", lambda self: self)
    with pytest.raises(TypeError, match="neither callable nor a descriptor"):
        fastt._C._add_tensor_method("not_an_op", 3)
    # a property joins as one (Tensor.real / .imag)
    assert isinstance(type(x).__dict__["real"], property)


EINSUM = [
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)]),
    ("ijk->", [(2, 3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("Ab,bA", [(2, 3), (3, 2)]), ("i...->...", [(2, 3, 4)]),
    ("iij->ji", [(3, 3, 2)]), ("ij,ij->", [(3, 1), (3, 4)]),
    ("a,b,c", [(2,), (3,), (4,)]),
    ("bn,anm,bm->ba", [(2, 3), (5, 3, 4), (2, 4)]), ("i,i", [(0,), (0,)]),
    ("ij->", [(0, 3)]), ("b i d, b j d -> b i j", [(2, 3, 4), (2, 5, 4)]),
    ("...,...", [(2, 3), (3,)]), ("ijij->", [(2, 3, 2, 3)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum_matches_torch(eq, shapes):
    g = torch.Generator().manual_seed(0)
    ts = [torch.randn(s, dtype=torch.float64, generator=g) for s in shapes]
    same(fastt.einsum(eq, *[F(t) for t in ts]), torch.einsum(eq, *ts), 1e-9)
    # the list form, and gradients: the same shapes again, so this call
    # replays the plan the first one recorded (as does float32's)
    fs = [F(t).requires_grad_(True) for t in ts]
    tt = [t.clone().requires_grad_(True) for t in ts]
    fo, to = fastt.einsum(eq, fs), torch.einsum(eq, tt)
    same(fo.detach(), to.detach(), 1e-9)
    ts32 = [t.float() * 2 for t in ts]
    same(fastt.einsum(eq, *[F(t) for t in ts32]), torch.einsum(eq, *ts32),
         1e-5)
    if to.numel():
        fo.sum().backward()
        to.sum().backward()
        for f, t in zip(fs, tt):
            same(f.grad, t.grad, 1e-9)


def test_einsum_sublists_and_integers():
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    same(fastt.einsum(F(a), [0, 1], F(b), [1, 2], [0, 2]),
         torch.einsum(a, [0, 1], b, [1, 2], [0, 2]), 1e-5)
    c = torch.randn(4, 3)
    same(fastt.einsum(F(c), [Ellipsis, 1], F(b), [1, Ellipsis]),
         torch.einsum(c, [Ellipsis, 1], b, [1, Ellipsis]), 1e-5)
    ai, bi = torch.randint(0, 5, (2, 3)), torch.randint(0, 5, (3, 4))
    same(fastt.einsum("ij,jk", F(ai), F(bi)), torch.einsum("ij,jk", ai, bi))


@pytest.mark.parametrize("eq,shapes,msg", [
    ("ij,jk", [(2, 3), (4, 4)], "subscript j has size 4"),
    ("ij", [(2, 3, 4)], "number of subscripts"),
    ("i->j", [(3,)], "output subscript j does not appear"),
    ("i->ii", [(3,)], "appears more than once"),
    ("i,j", [(3,)], "fewer operands"),
    ("i.j", [(3, 3)], "not part of any ellipsis"),
    ("i1", [(3, 3)], "invalid subscript"),
])
def test_einsum_errors_as_torch(eq, shapes, msg):
    ts = [torch.randn(s) for s in shapes]
    with pytest.raises(RuntimeError, match=msg):
        torch.einsum(eq, *ts)
    with pytest.raises(RuntimeError, match=msg):
        fastt.einsum(eq, *[F(t) for t in ts])


def test_isin_large_takes_the_sorted_path():
    g = torch.Generator().manual_seed(1)
    e = torch.randint(0, 5000, (3000,), generator=g)
    t = torch.randint(0, 5000, (2000,), generator=g)   # 6M pairs
    same(fastt.isin(F(e), F(t)), torch.isin(e, t))
    same(fastt.isin(F(e), F(t), invert=True), torch.isin(e, t, invert=True))
    same(fastt.isin(F(e.double()), 7), torch.isin(e.double(), 7))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_large_and_batched(right):
    g = torch.Generator().manual_seed(2)
    seq = torch.randint(0, 50, (1000,), generator=g).sort().values.float()
    seq[-3:] = math.nan  # NaN sorts last
    v = torch.randint(-5, 55, (4000,), generator=g).float()
    v[:5] = math.nan
    same(fastt.searchsorted(F(seq), F(v), right=right),
         torch.searchsorted(seq, v, right=right))
    b = torch.randn(3, 7, generator=g).sort(-1).values
    q = torch.randn(3, 11, generator=g)
    same(fastt.searchsorted(F(b), F(q), right=right, out_int32=True),
         torch.searchsorted(b, q, right=right, out_int32=True))
    perm = torch.randperm(7, generator=g)
    un = b[0][perm]
    srt = un.argsort()
    same(fastt.searchsorted(F(un), F(q[0]), sorter=F(srt), right=right),
         torch.searchsorted(un, q[0], sorter=srt, right=right))
    same(fastt.bucketize(F(q), F(b[0]), right=right),
         torch.bucketize(q, b[0], right=right))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64,
                                   torch.float16, torch.int64, torch.int32,
                                   torch.int16, torch.uint8])
def test_searchsorted_kernel_dtypes_layouts_and_edges(dtype):
    g = torch.Generator().manual_seed(4)
    seq = torch.randint(0, 40, (2, 3, 25), generator=g).sort(-1).values
    v = torch.randint(-2, 42, (2, 3, 9), generator=g)
    seq, v = seq.to(dtype), v.to(dtype)
    for right in (False, True):
        for s_, v_ in ((seq, v), (seq[0, 1], v.transpose(0, 2)),
                       (seq[..., ::2], v[..., ::3])):   # strided
            same(fastt.searchsorted(F(s_), F(v_), right=right),
                 torch.searchsorted(s_, v_, right=right))
        same(fastt.searchsorted(F(seq[0, 0]), 7, right=right),
             torch.searchsorted(seq[0, 0], 7, right=right))
    # empty sequences give 0; empty inputs an empty result
    same(fastt.searchsorted(F(seq[..., :0]), F(v)),
         torch.searchsorted(seq[..., :0], v))
    same(fastt.searchsorted(F(seq), F(v[..., :0]), out_int32=True),
         torch.searchsorted(seq, v[..., :0], out_int32=True))
    # promotion: int64 boundaries, float values
    same(fastt.searchsorted(F(seq[0, 0].long()), F(v.double() + 0.5)),
         torch.searchsorted(seq[0, 0].long(), v.double() + 0.5))
    with pytest.raises(RuntimeError, match="first N-1 dimensions"):
        fastt.searchsorted(F(seq), F(v[0]))
    # the other devices' vectorised rounds give the kernel's answers
    for s_, v_ in ((seq, v), (seq[0, 1], v.transpose(0, 2))):
        for right in (False, True):
            got = fastt._composite._search_rounds(F(s_), F(v_), right)
            same(got, torch.searchsorted(s_, v_, right=right))


def test_searchsorted_promotes_as_torch():
    seq = torch.tensor([1, 2, 3])
    same(fastt.searchsorted(F(seq), 2.5), torch.searchsorted(seq, 2.5))
    b = torch.tensor([0.1])
    q = torch.tensor(0.1, dtype=torch.float64)    # 0-d: does not lead
    same(fastt.searchsorted(F(b), F(q), right=True),
         torch.searchsorted(b, q, right=True))


def _stable_positions(x, dim, which, k):
    """The index at one position of each slice's stable ascending order
    (NaN last), as numpy's stable argsort gives it: kthvalue's k (which
    0), median's (1) or nanmedian's (2) position."""
    a = x.double().numpy()
    order = np.argsort(a, axis=dim, kind="stable")
    n = a.shape[dim]
    good = (~np.isnan(a)).sum(axis=dim, keepdims=True)
    if which == 0:
        pos = np.full(good.shape, k)
    elif which == 1:
        pos = np.where(good < n, good, (n - 1) // 2)
    else:
        pos = np.maximum((good - 1) // 2, 0)
    return np.take_along_axis(order, pos, axis=dim).squeeze(dim)


SELECT_DTYPES = [torch.float32, torch.float64, torch.float16,
                 torch.bfloat16, torch.int64, torch.int32, torch.int16,
                 torch.int8, torch.uint8, torch.bool]


def _few_values(shape, dtype, g):
    """Many ties, negative values for the signed types and the top half
    of uint8."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype == torch.uint8:
        return (torch.randint(0, 6, shape, generator=g) * 50).to(dtype)
    return torch.randint(-3, 3, shape, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", SELECT_DTYPES)
def test_kthvalue_and_median_pick_the_stable_sorts_element(dtype):
    g = torch.Generator().manual_seed(3)
    for shape, dim in (((5, 37), 1), ((5, 37), 0), ((3, 4, 9), 1),
                       ((2, 70001), 1), ((40,), 0), ((3, 1), 1)):
        x = _few_values(shape, dtype, g)
        if dtype.is_floating_point:
            x.view(-1)[::7] = math.nan
            x.view(-1)[1::5] = -0.0                  # ties with +0
            x.view(-1)[2::11] = -math.inf
        for xs, d in ((x, dim), (x.transpose(0, -1), x.ndim - 1 - dim)):
            n = xs.shape[d]
            for k in sorted({1, (n + 1) // 2, n}):
                fv, fi = fastt.kthvalue(F(xs), k, d)
                want = _stable_positions(xs, d, 0, k - 1)
                assert np.array_equal(T(fi).numpy(), want), (shape, d, k)
                picked = xs.gather(d, torch.from_numpy(want).unsqueeze(d))
                assert torch.equal(T(fv).double().nan_to_num(7.5),
                                   picked.squeeze(d).double().nan_to_num(7.5))
            for which, name in ((1, "median"), (2, "nanmedian")):
                fv, fi = getattr(fastt, name)(F(xs), d, keepdim=True)
                want = _stable_positions(xs, d, which, 0)
                assert np.array_equal(T(fi).squeeze(d).numpy(), want)
                # other devices: a stable sort, then the same position
                fx = F(xs)
                pos = fastt._composite._positions(fx, d, which, 0)
                by_sort = fastt.sort(fx, d, stable=True).indices.gather(
                    d, pos)
                assert np.array_equal(T(by_sort).squeeze(d).numpy(), want)
                if dtype in (torch.float32, torch.float64):
                    tv = getattr(torch, name)(xs, d, keepdim=True).values
                    assert torch.equal(T(fv).nan_to_num(7.5),
                                       tv.nan_to_num(7.5))


def test_kthvalue_orders_the_extremes_of_each_type():
    f = torch.tensor([0.0, -0.0, -math.inf, math.inf, math.nan, 1e-45,
                      -1e-45, 5.0, -5.0, 3.4e38, -3.4e38, math.nan])
    i = torch.tensor([2 ** 63 - 1, -2 ** 63, -1, 0, 1, -2 ** 63 + 1,
                      2 ** 62, -2 ** 62])
    small = torch.tensor([-128, 127, -1, 0, 1, -127])
    u8 = torch.tensor([255, 0, 128, 127, 1], dtype=torch.uint8)
    for x in (f, f.double(), f.half(), f.bfloat16(), i, small.int(),
              small.short(), small.to(torch.int8), u8):
        want = np.argsort(x.double().numpy() if x.is_floating_point()
                          else x.numpy(), kind="stable")
        got = [fastt.kthvalue(F(x), k).indices.item()
               for k in range(1, x.numel() + 1)]
        assert got == want.tolist(), x
    # gradients reach the chosen element only
    x = fastt.tensor([3.0, 1.0, 2.0, 1.0], requires_grad=True)
    fastt.kthvalue(x, 2).values.backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="k out of range"):
        fastt.kthvalue(F(f), 13)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8,
                                   torch.int16, torch.int32, torch.int64,
                                   torch.float16, torch.bfloat16,
                                   torch.float32, torch.float64])
def test_sort_long_rows_by_radix_is_stable(dtype):
    # rows past the radix sort's thresholds (256 for 32-bit keys, 4096 for
    # 64-bit): ties keep their order (the indices say so), NaN above every
    # number, -0 equal to +0, negative numbers, descending, rows along
    # either dim, a strided row; narrow values (passes skipped) and wide
    g = torch.Generator().manual_seed(5)
    n = 5000
    if dtype.is_floating_point:
        x = torch.randint(-6, 7, (3, n), generator=g).to(dtype) / 2
        x[0, ::97] = math.nan
        x[1, ::5] = -0.0
        x[2] = torch.randn(n, generator=g).to(dtype) * 1e3
    elif dtype == torch.bool:
        x = torch.randint(0, 2, (3, n), generator=g).bool()
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(info.min, info.max, (3, n), generator=g,
                          dtype=torch.int64).to(dtype)
        x[0] = torch.randint(max(info.min, -4), 5, (n,), generator=g)
    for t, d in ((x, 1), (x.t().contiguous(), 0), (x[:, ::2], 1)):
        for desc in (False, True):
            fv, fi = fastt.sort(F(t), dim=d, descending=desc, stable=True)
            tv, ti = torch.sort(t, dim=d, descending=desc, stable=True)
            assert torch.equal(T(fi), ti), (dtype, d, desc)
            if dtype.is_floating_point:
                assert torch.equal(T(fv).isnan(), tv.isnan())
                assert torch.equal(T(fv).nan_to_num(0), tv.nan_to_num(0))
                assert torch.equal(T(fv).signbit(), tv.signbit())
            else:
                assert torch.equal(T(fv), tv)
    u = torch.randint(-3, 1000, (70000,), generator=g)
    same(fastt.unique(F(u)), torch.unique(u))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin_ties_and_nan(op):
    x = torch.tensor([[3., 1., 3., math.nan, 2., math.nan, 5.],
                      [1., 1., 0., 0., 2., 2., -1.]])
    for d in (0, 1, -1):
        fv, fi = getattr(fastt, op)(F(x), d)
        tv, ti = getattr(torch, op)(x, d)
        same(fv, tv)
        same(fi, ti)
    xi = torch.randint(0, 3, (4, 33))
    fv, fi = getattr(fastt, op)(F(xi), 1)
    tv, ti = getattr(torch, op)(xi, 1)
    same(fv, tv)
    same(fi, ti)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin_long_rows(op):
    # the dense-row kernel's chunks of 16: quiet ones filled, the rest
    # element by element; ties, NaNs at chunk edges and inside, monotone
    g = torch.Generator().manual_seed(6)
    x = torch.randint(0, 40, (3, 1001), generator=g).float()
    x[0, [15, 16, 17, 500]] = math.nan
    x[1] = torch.arange(1001.0) * (1 if op == "cummax" else -1)
    for t in (x, x.double(), x.nan_to_num(7).long(), x[:, ::3]):
        fv, fi = getattr(fastt, op)(F(t), 1)
        tv, ti = getattr(torch, op)(t, 1)
        assert torch.equal(T(fi), ti)
        assert torch.equal(T(fv).nan_to_num(-1), tv.nan_to_num(-1))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_values_in_the_kernel_pass_match_the_gather(op):
    # without a gradient the kernel writes the values in its pass; with
    # one they are a gather at the indices: the same elements, signed
    # zeros, NaN payload and half types included, along both layouts
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-3, 4, (5, 40), generator=g).float()
    x[x == 0] = -0.0
    x[1, 7] = x[3, 30] = math.nan
    for dt in (torch.float32, torch.float16, torch.bfloat16, torch.int8):
        t = x.nan_to_num(9).to(dt) if dt == torch.int8 else x.to(dt)
        for d in (0, 1):
            fv, fi = getattr(fastt, op)(F(t), d)
            tv, ti = getattr(torch, op)(t, d)
            assert fv.dtype == F(t).dtype
            assert torch.equal(T(fi), ti)
            assert torch.equal(T(fv).float().nan_to_num(100),
                               tv.float().nan_to_num(100))
            assert (T(fv).float().signbit() == tv.float().signbit()).all()
    w = F(x).requires_grad_(True)
    tw = x.clone().requires_grad_(True)
    v, i = getattr(fastt, op)(w, 1)
    tv, ti = getattr(torch, op)(tw, 1)
    same(v.detach(), tv.detach())
    (v.nan_to_num(0) * F(x.nan_to_num(0))).sum().backward()
    (tv.nan_to_num(0) * x.nan_to_num(0)).sum().backward()
    same(w.grad, tw.grad)


def test_logcumsumexp_is_stable():
    x = torch.tensor([-math.inf, -1e4, 0., 1e4, -math.inf, 80., 1e4])
    same(fastt.logcumsumexp(F(x), 0), torch.logcumsumexp(x, 0))
    y = torch.randn(3, 100, dtype=torch.float64) * 50
    same(fastt.logcumsumexp(F(y), 1), torch.logcumsumexp(y, 1), 1e-12)


def test_order_statistics_with_nan_and_ties():
    x = torch.tensor([[2., math.nan, 1., 3.], [4., 4., 1., 1.],
                      [math.nan, math.nan, math.nan, math.nan]])
    for name in ("median", "nanmedian"):
        fv, fi = getattr(fastt, name)(F(x), 1)
        tv, ti = getattr(torch, name)(x, 1)
        same(fv, tv)
        # an index of an element equal to the result (torch picks any tie)
        picked = x.gather(1, T(fi).unsqueeze(1)).squeeze(1)
        assert ((picked == tv) | (picked.isnan() & tv.isnan())).all()
        if name == "median":   # a NaN's slice: the first NaN, as torch
            assert T(fi)[0].item() == ti[0].item() == 1
        same(getattr(fastt, name)(F(x)), getattr(torch, name)(x))
    fv, fi = fastt.mode(F(x[1]), 0)
    tv, ti = torch.mode(x[1], 0)
    assert fv.item() == tv.item() and fi.item() == ti.item()
    q = torch.tensor([0., 0.25, 0.5, 1.])
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        same(fastt.nanquantile(F(x), F(q), 1, interpolation=interp),
             torch.nanquantile(x, q, 1, interpolation=interp))
        same(fastt.quantile(F(x), 0.3, 1, True, interpolation=interp),
             torch.quantile(x, 0.3, 1, True, interpolation=interp))


def test_histc_bin_edges_and_unique_dims():
    x = torch.linspace(-1, 1, 2001)   # many values on bin edges
    for bins in (1, 7, 10, 100):
        same(fastt.histc(F(x), bins, -1, 1), torch.histc(x, bins, -1, 1))
    same(fastt.histc(F(x), 5, -0.5, 0.5), torch.histc(x, 5, -0.5, 0.5))
    m = torch.tensor([[1, 2, 1, 2], [3, 0, 3, 0], [1, 2, 1, 2]])
    for dim in (0, 1):
        fu = fastt.unique(F(m), return_inverse=True, return_counts=True,
                          dim=dim)
        tu = torch.unique(m, return_inverse=True, return_counts=True,
                          dim=dim)
        for f, t in zip(fu, tu):
            same(f, t)


def test_inplace_views_keep_autograd_history():
    x = fastt.randn(2, 1, 3, requires_grad=True)
    tx = T(x.detach()).clone().requires_grad_(True)
    y, ty = x * 2, tx * 2
    assert y.squeeze_(1) is y
    ty.squeeze_(1)
    y.t_()
    ty.t_()
    y.unsqueeze_(0).transpose_(0, 2)
    ty.unsqueeze_(0).transpose_(0, 2)
    assert tuple(y.shape) == tuple(ty.shape)
    g = torch.randn(ty.shape)
    (y * F(g)).sum().backward()
    (ty * g).sum().backward()
    same(x.grad, tx.grad)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.squeeze_()
    # as_strided_ and set_ share the storage
    z = fastt.arange(6.)
    z.as_strided_((2, 2), (1, 2), 1)
    same(z, torch.arange(6.).as_strided((2, 2), (1, 2), 1))
    w = fastt.zeros(1)
    w.set_(z)
    assert w.data_ptr() == z.data_ptr() and tuple(w.shape) == (2, 2)


def test_resize_keeps_leading_values():
    x = fastt.arange(6.)
    x.resize_(2, 2)
    same(x, torch.arange(4.).reshape(2, 2))
    x.resize_(3, 3)
    assert tuple(x.shape) == (3, 3)
    same(x.reshape(-1)[:4], torch.arange(4.))
    with pytest.raises(RuntimeError, match="require grad"):
        fastt.ones(2, requires_grad=True).resize_(4)


def test_scatter_reduce_ties_share_the_gradient():
    src = torch.tensor([1., 3., 3., 2., 5., 5.], dtype=torch.float64)
    idx = torch.tensor([0, 0, 0, 1, 1, 1])
    base = torch.tensor([3., 0., 7.], dtype=torch.float64)
    for reduce in ("amax", "amin", "prod", "mean", "sum"):
        for include_self in (True, False):
            fs = F(src).requires_grad_(True)
            fb = F(base).requires_grad_(True)
            ts = src.clone().requires_grad_(True)
            tb = base.clone().requires_grad_(True)
            fo = fb.scatter_reduce(0, F(idx), fs, reduce,
                                   include_self=include_self)
            to = tb.scatter_reduce(0, idx, ts, reduce,
                                   include_self=include_self)
            same(fo, to.detach(), 1e-12)
            g = torch.tensor([1., 2., 3.], dtype=torch.float64)
            fo.backward(F(g))
            to.backward(g)
            same(fs.grad, ts.grad, 1e-12)
            same(fb.grad, tb.grad, 1e-12)


@pytest.mark.parametrize("decimals", [-2, -1, 1, 3])
def test_round_decimals(decimals):
    x = torch.tensor([1234.5678, -0.125, 2.5, 155.0, 1e-3])
    same(fastt.round(F(x), decimals=decimals),
         torch.round(x, decimals=decimals))
    y = F(x)
    y.round_(decimals=decimals)
    same(y, torch.round(x, decimals=decimals))
    with pytest.raises(NotImplementedError):
        fastt.round(fastt.arange(3), decimals=1)

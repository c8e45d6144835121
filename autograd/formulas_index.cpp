// Recording and backward formulas of the indexing and shape ops
// (csrc/ops/index.h): cat, index_select, gather, scatter, ... Same rules as
// formulas.cpp. To add an op: a row in grad_fns.def's indexing section, a
// recording function (declared in functions_index.h), its
// FASTT_FORMULA(Name) below.
#include <algorithm>

#include "autograd/formulas.h"
#include "autograd/functions.h"
#include "autograd/functions_index.h"
#include "autograd/node.h"
#include "csrc/ops.h"

namespace fastt {
namespace autograd {
namespace {

template <class F>
auto no_grad(F&& f) {
  GradModeGuard guard(false);
  return f();
}

bool differentiable(const Tensor& out) {
  if (!out.defined()) return false;
  // Complex results are recorded too; make_node refuses the formulas
  // that are real-only (engine.cpp's complex_formula).
  return is_floating(out.dtype()) || is_complex(out.dtype());
}

Tensor cast(const Tensor& g, DType dt) {
  return g.dtype() == dt ? g : g.to(dt);
}

// Saves an op's index tensors (undefined entries stay undefined) as
// saved[0..k) and gets them back.
void save_indices(Node& n, const std::vector<Tensor>& indices) {
  for (size_t i = 0; i < indices.size(); ++i) n.save(i, indices[i]);
  n.i0 = int64_t(indices.size());
}
std::vector<Tensor> unpack_indices(const Node& n) {
  std::vector<Tensor> r(size_t(n.i0));
  for (size_t i = 0; i < r.size(); ++i) r[i] = n.unpack(i);
  return r;
}

// cat/stack: the inputs' dtypes, for casting their gradients back.
void save_dtypes(Node& n, const std::vector<Tensor>& ts, size_t at) {
  for (size_t i = 0; i < ts.size(); ++i)
    n.ints[at + i] = int64_t(ts[i].dtype());
}

}  // namespace

// ====================================================== recording ====

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  Tensor out = no_grad([&] { return fastt::cat(ts, dim); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Cat, ts);
  // ints = [size along dim (-1: a skipped legacy [0] input)..., dtypes...]
  const size_t k = ts.size();
  n->ints.resize(2 * k);
  bool any = false;
  for (size_t i = 0; i < k; ++i) {
    const bool legacy = ts[i].dim() == 1 && ts[i].numel() == 0;
    any = any || !legacy;
    n->ints[i] = legacy ? -1 : 0;
  }
  if (any) {
    n->i0 = wrap_dim(dim, out.dim(), "cat");
    for (size_t i = 0; i < k; ++i)
      if (n->ints[i] == 0) n->ints[i] = ts[i].sizes()[size_t(n->i0)];
  }
  save_dtypes(*n, ts, k);
  set_history(out, n.get());
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  Tensor out = no_grad([&] { return fastt::stack(ts, dim); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Stack, ts);
  n->ints.resize(ts.size());
  save_dtypes(*n, ts, 0);
  n->i0 = wrap_dim(dim, out.dim(), "stack");
  set_history(out, n.get());
  return out;
}

Tensor repeat(const Tensor& t, IntList repeats) {
  Tensor out = no_grad([&] { return fastt::repeat(t, repeats); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Repeat, {&t});
  n->set_shape0(t.sizes());
  n->set_shape1(repeats);
  set_history(out, n.get());
  return out;
}

// index_select, gather: one input, the index saved, a dim.
namespace {
Tensor record_select(GradFn fn, const Tensor& self, int64_t dim,
                     const Tensor& index, Tensor out) {
  if (!differentiable(out)) return out;
  NodeRef n = make_node(fn, {&self});
  n->save(0, index);
  n->set_shape0(self.sizes());
  n->i0 = dim;
  set_history(out, n.get());
  return out;
}
}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return record_select(GradFn::IndexSelect, self, dim, index, no_grad([&] {
                         return fastt::index_select(self, dim, index);
                       }));
}

// resample: the taps saved; its gradient is its adjoint (and back).
Tensor resample(const Tensor& self, int64_t dim, const Tensor& idx,
                const Tensor& w, bool adjoint, int64_t size) {
  Tensor out = no_grad(
      [&] { return fastt::resample(self, dim, idx, w, adjoint, size); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Resample, {&self});
  n->save(0, idx);
  n->save(1, w);
  n->i0 = wrap_dim(dim, self.dim(), "resample");
  n->i1 = adjoint;
  n->i2 = self.sizes()[size_t(n->i0)];
  set_history(out, n.get());
  return out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  return record_select(GradFn::Gather, self, dim, index, no_grad([&] {
                         return fastt::gather(self, dim, index);
                       }));
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index,
               const Tensor* src, const Scalar& value) {
  Tensor out = no_grad([&] {
    return src ? fastt::scatter(self, dim, index, *src)
               : fastt::scatter(self, dim, index, value);
  });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(src ? GradFn::Scatter : GradFn::ScatterValue,
                        {&self, src});
  n->save(0, index);
  n->i0 = dim;
  if (src) n->set_shape1(src->sizes());
  set_history(out, n.get());
  return out;
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index,
                   const Tensor& src) {
  Tensor out =
      no_grad([&] { return fastt::scatter_add(self, dim, index, src); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::ScatterAdd, {&self, &src});
  n->save(0, index);
  n->i0 = dim;
  n->set_shape1(src.sizes());
  set_history(out, n.get());
  return out;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index,
                 const Tensor& source, const Scalar& alpha) {
  Tensor out = no_grad(
      [&] { return fastt::index_add(self, dim, index, source, alpha); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::IndexAdd, {&self, &source});
  n->save(0, index);
  n->i0 = dim;
  n->s0 = alpha;
  n->set_shape1(source.sizes());
  set_history(out, n.get());
  return out;
}

Tensor embedding(const Tensor& weight, const Tensor& indices,
                 int64_t padding_idx) {
  Tensor out = no_grad(
      [&] { return fastt::embedding(weight, indices, padding_idx); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Embedding, {&weight});
  n->save(0, indices);
  n->set_shape0(weight.sizes());
  n->i0 = padding_idx;
  set_history(out, n.get());
  return out;
}

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  Tensor out = no_grad([&] { return fastt::index(self, indices); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Index, {&self});
  save_indices(*n, indices);
  n->set_shape0(self.sizes());
  set_history(out, n.get());
  return out;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices,
                 const Tensor& values, bool accumulate) {
  Tensor out = no_grad(
      [&] { return fastt::index_put(self, indices, values, accumulate); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::IndexPut, {&self, &values});
  save_indices(*n, indices);
  n->i1 = accumulate;
  n->set_shape1(values.sizes());
  set_history(out, n.get());
  return out;
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  Tensor out = no_grad([&] { return fastt::masked_select(self, mask); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::MaskedSelect, {&self});
  n->save(0, mask);
  n->set_shape0(self.sizes());
  int64_t shape[kMaxDims];
  const int nd =
      broadcast_shapes(self.sizes(), mask.sizes(), shape, "masked_select");
  n->set_shape1(IntList(shape, size_t(nd)));
  set_history(out, n.get());
  return out;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask,
                      const Tensor& source) {
  Tensor out =
      no_grad([&] { return fastt::masked_scatter(self, mask, source); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::MaskedScatter, {&self, &source});
  n->save(0, mask);
  n->set_shape1(source.sizes());
  set_history(out, n.get());
  return out;
}

Tensor tril_triu(bool upper, const Tensor& t, int64_t diagonal) {
  Tensor out = no_grad([&] {
    return upper ? fastt::triu(t, diagonal) : fastt::tril(t, diagonal);
  });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(upper ? GradFn::Triu : GradFn::Tril, {&t});
  n->i0 = diagonal;
  set_history(out, n.get());
  return out;
}

Tensor flip(const Tensor& t, IntList dims) {
  Tensor out = no_grad([&] { return fastt::flip(t, dims); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Flip, {&t});
  n->set_shape1(dims);  // at most max(ndim, 1) entries (checked by flip)
  set_history(out, n.get());
  return out;
}

Tensor roll(const Tensor& t, IntList shifts, IntList dims) {
  Tensor out = no_grad([&] { return fastt::roll(t, shifts, dims); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Roll, {&t});
  // The inverse roll: a0 = negated total shift per dim, a1 = those dims;
  // i0 = 1 for the flattened form (no dims, one shift in a0[0]).
  if (dims.empty()) {
    n->i0 = 1;
    n->nd0 = 1;
    n->a0[0] = -shifts[0];
  } else {
    int64_t total[kMaxDims] = {};
    for (size_t i = 0; i < dims.size(); ++i)
      total[wrap_dim(dims[i], t.dim(), "roll")] += shifts[i];
    int k = 0;
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (total[d] == 0) continue;
      n->a0[k] = -total[d];
      n->a1[k++] = d;
    }
    n->nd0 = n->nd1 = int8_t(k);
  }
  set_history(out, n.get());
  return out;
}

namespace {
// sort/topk: the values get a node that scatters their gradient back
// through the saved indices.
void record_values(GradFn fn, const Tensor& t, int64_t dim,
                   std::tuple<Tensor, Tensor>& r) {
  const Tensor& values = std::get<0>(r);
  if (!differentiable(values)) return;
  NodeRef n = make_node(fn, {&t});
  n->save(0, std::get<1>(r));  // indices: no history, so no cycle
  n->set_shape0(t.sizes());
  n->i0 = wrap_dim(dim, t.dim(), fn == GradFn::Sort ? "sort" : "topk");
  set_history(values, n.get());
}
}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending,
                                bool stable) {
  std::tuple<Tensor, Tensor> r =
      no_grad([&] { return fastt::sort(t, dim, descending, stable); });
  record_values(GradFn::Sort, t, dim, r);
  return r;
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim,
                                bool largest, bool sorted) {
  std::tuple<Tensor, Tensor> r =
      no_grad([&] { return fastt::topk(t, k, dim, largest, sorted); });
  record_values(GradFn::Topk, t, dim, r);
  return r;
}

// ====================================================== formulas ====
namespace {

// g.gather(dim, index) zero-padded up to `shape` (src may be larger than
// the index in every dim; torch rejects that case, fastt pads).
Tensor gather_to(const Tensor& g, int64_t dim, const Tensor& index,
                 IntList shape) {
  Tensor r = fastt::gather(g, dim, index);
  if (r.sizes().equals(shape)) return r;
  for (int64_t d = 0; d < r.dim(); ++d) {
    const int64_t have = r.sizes()[size_t(d)];
    if (have == shape[size_t(d)]) continue;
    int64_t zs[kMaxDims];
    std::copy(r.sizes().begin(), r.sizes().end(), zs);
    zs[d] = shape[size_t(d)] - have;
    Tensor z = fastt::zeros(IntList(zs, size_t(r.dim())), r.dtype(),
                            r.device());
    r = fastt::cat({r, z}, d);
  }
  return r;
}

// The gradient of repeat: the sum over the tiles of each repeated dim.
Tensor repeat_backward(const Tensor& g, const Node& n) {
  const int nr = n.nd1;
  int64_t padded[kMaxDims];
  for (int i = 0; i < nr; ++i) {
    const int j = i - (nr - n.nd0);
    padded[i] = j >= 0 ? n.a0[j] : 1;
  }
  Tensor r = g;
  if (2 * nr <= kMaxDims) {
    // g viewed as [r0, s0, r1, s1, ...], summed over the r dims.
    int64_t split[kMaxDims], dims[kMaxDims];
    int nsum = 0;
    for (int i = 0; i < nr; ++i) {
      split[2 * i] = n.a1[i];
      split[2 * i + 1] = padded[i];
      if (n.a1[i] != 1) dims[nsum++] = 2 * i;
    }
    if (nsum > 0)
      r = fastt::sum(g.reshape(IntList(split, size_t(2 * nr))),
                     IntList(dims, size_t(nsum)), false);
  } else {
    // Too many dims to interleave: add the tiles of one dim at a time.
    for (int i = 0; i < nr; ++i) {
      const int64_t reps = n.a1[i], len = padded[i];
      if (reps == 1) continue;
      if (reps == 0) {
        int64_t zs[kMaxDims];
        std::copy(r.sizes().begin(), r.sizes().end(), zs);
        zs[i] = len;
        r = fastt::zeros(IntList(zs, size_t(nr)), g.dtype(), g.device());
        continue;
      }
      Tensor acc = r.narrow(i, 0, len);
      for (int64_t k = 1; k < reps; ++k)
        acc = fastt::add(acc, r.narrow(i, k * len, len));
      r = acc;
    }
  }
  return r.reshape(n.shape0());
}

}  // namespace

FASTT_FORMULA(Cat) {
  const Tensor& g = go[0];
  const size_t k = n.next.size();
  int64_t offset = 0;
  for (size_t i = 0; i < k; ++i) {
    const int64_t len = n.ints[i];
    const DType dt = DType(n.ints[k + i]);
    if (len < 0) {  // a skipped legacy [0] input
      if (n.needs(i)) gi[i] = fastt::zeros({0}, dt, g.device());
      continue;
    }
    if (n.needs(i)) gi[i] = cast(g.narrow(n.i0, offset, len), dt);
    offset += len;
  }
}
FASTT_FORMULA(Stack) {
  const Tensor& g = go[0];
  for (size_t i = 0; i < n.next.size(); ++i)
    if (n.needs(i))
      gi[i] = cast(g.select(n.i0, int64_t(i)), DType(n.ints[i]));
}
FASTT_FORMULA(Repeat) {
  const Tensor& g = go[0];
  gi[0] = repeat_backward(g, n);
}
FASTT_FORMULA(IndexSelect) {
  const Tensor& g = go[0];
  Tensor z = fastt::zeros(n.shape0(), g.dtype(), g.device());
  gi[0] = cast(fastt::index_add(z, n.i0, n.unpack(0), g), n.dtypes[0]);
}
FASTT_FORMULA(Resample) {
  gi[0] = cast(fastt::resample(go[0], n.i0, n.unpack(0), n.unpack(1),
                               n.i1 == 0, n.i2),
               n.dtypes[0]);
}
FASTT_FORMULA(Gather) {
  const Tensor& g = go[0];
  Tensor z = fastt::zeros(n.shape0(), g.dtype(), g.device());
  gi[0] = cast(fastt::scatter_add(z, n.i0, n.unpack(0), g), n.dtypes[0]);
}
// scatter with a src tensor (Scatter) or a scalar value: one body that
// tests n.fn.
static void scatter_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  Tensor index = n.unpack(0);
  if (n.needs(0))
    gi[0] = cast(fastt::scatter(g, n.i0, index, Scalar(0)), n.dtypes[0]);
  if (n.fn == GradFn::Scatter && n.needs(1))
    gi[1] = cast(gather_to(g, n.i0, index, n.shape1()), n.dtypes[1]);
}
FASTT_FORMULA(Scatter) { scatter_grad(n, go, gi); }
FASTT_FORMULA(ScatterValue) { scatter_grad(n, go, gi); }
FASTT_FORMULA(ScatterAdd) {
  const Tensor& g = go[0];
  if (n.needs(0)) gi[0] = cast(g, n.dtypes[0]);
  if (n.needs(1))
    gi[1] = cast(gather_to(g, n.i0, n.unpack(0), n.shape1()), n.dtypes[1]);
}
FASTT_FORMULA(IndexAdd) {
  const Tensor& g = go[0];
  if (n.needs(0)) gi[0] = cast(g, n.dtypes[0]);
  if (n.needs(1)) {
    Tensor r = fastt::index_select(g, n.i0, n.unpack(0));
    if (!r.sizes().equals(n.shape1())) r = r.reshape(n.shape1());
    if (n.s0.to<double>() != 1 || n.s0.imag() != 0)  // times conj(alpha)
      r = fastt::mul(r, n.s0.is_complex()
                            ? Scalar(Complex<double>(n.s0.to_double(),
                                                     -n.s0.imag()))
                            : n.s0);
    gi[1] = cast(r, n.dtypes[1]);
  }
}
FASTT_FORMULA(Embedding) {
  // Rows add up where an index repeats; the padding row gets nothing.
  const Tensor& g = go[0];
  Tensor idx = n.unpack(0).reshape({-1});
  Tensor g2 = g.reshape({-1, n.a0[1]});
  if (n.i0 >= 0)
    g2 = fastt::masked_fill(
        g2, fastt::eq(idx, Scalar(n.i0)).unsqueeze(1), Scalar(0));
  Tensor z = fastt::zeros(n.shape0(), g.dtype(), g.device());
  gi[0] = cast(fastt::index_add(z, 0, idx, g2), n.dtypes[0]);
}
FASTT_FORMULA(Index) {
  const Tensor& g = go[0];
  Tensor z = fastt::zeros(n.shape0(), g.dtype(), g.device());
  gi[0] = cast(fastt::index_put(z, unpack_indices(n), g, true),
               n.dtypes[0]);
}
FASTT_FORMULA(IndexPut) {
  const Tensor& g = go[0];
  std::vector<Tensor> idx = unpack_indices(n);
  if (n.needs(0)) {
    gi[0] = n.i1 ? g
                 : fastt::index_put(
                       g, idx, fastt::zeros({}, g.dtype(), g.device()));
    gi[0] = cast(gi[0], n.dtypes[0]);
  }
  if (n.needs(1))
    gi[1] = fit(fastt::index(g, idx), n.shape1(), n.dtypes[1]);
}
FASTT_FORMULA(MaskedSelect) {
  const Tensor& g = go[0];
  Tensor z = fastt::zeros(n.shape1(), g.dtype(), g.device());
  gi[0] = fit(fastt::masked_scatter(z, n.unpack(0), g), n.shape0(),
              n.dtypes[0]);
}
FASTT_FORMULA(MaskedScatter) {
  const Tensor& g = go[0];
  Tensor mask = n.unpack(0);
  if (n.needs(0))
    gi[0] = cast(fastt::masked_fill(g, mask, Scalar(0)), n.dtypes[0]);
  if (n.needs(1)) {
    // The selected gradients fill source's first elements; the rest
    // of source was not used.
    Tensor r = fastt::masked_select(g, mask);
    int64_t total = 1;
    for (int d = 0; d < n.nd1; ++d) total *= n.a1[d];
    if (total > r.numel())
      r = fastt::cat({r, fastt::zeros({total - r.numel()}, r.dtype(),
                                      r.device())});
    gi[1] = cast(r.reshape(n.shape1()), n.dtypes[1]);
  }
}
FASTT_FORMULA(Tril) {
  const Tensor& g = go[0];
  gi[0] = fastt::tril(g, n.i0);
}
FASTT_FORMULA(Triu) {
  const Tensor& g = go[0];
  gi[0] = fastt::triu(g, n.i0);
}
FASTT_FORMULA(Flip) {
  const Tensor& g = go[0];
  gi[0] = fastt::flip(g, n.shape1());
}
FASTT_FORMULA(Roll) {
  const Tensor& g = go[0];
  if (n.i0)
    gi[0] = fastt::roll(g, IntList(n.a0, 1));
  else
    gi[0] = n.nd1 == 0 ? g : fastt::roll(g, n.shape0(), n.shape1());
}
// sort, topk values: scattered back through the saved indices.
static void sort_topk_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  Tensor z = fastt::zeros(n.shape0(), g.dtype(), g.device());
  gi[0] = fastt::scatter(z, n.i0, n.unpack(0), g);
}
FASTT_FORMULA(Sort) { sort_topk_grad(n, go, gi); }
FASTT_FORMULA(Topk) { sort_topk_grad(n, go, gi); }

}  // namespace autograd
}  // namespace fastt

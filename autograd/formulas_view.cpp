// Backward formulas of the copies and views (recorded by clone, to_copy,
// copy_, view_of, rebase_view and the in-place write through a view in
// formulas.cpp), and AccumulateGrad's, which the engine handles itself.
#include <algorithm>
#include <vector>

#include "autograd/formulas.h"
#include "csrc/ops.h"

namespace fastt {
namespace autograd {
namespace {

// Gradient of a view-like scatter: zeros of `shape` with `g` written where
// `view_fn` of it points.
template <class F>
Tensor scatter_into(IntList shape, const Tensor& g, F&& view_fn) {
  Tensor z = fastt::zeros(shape, g.dtype(), g.device());
  Tensor v = view_fn(z);
  v.copy_(g);
  return z;
}

Tensor as_strided_backward(const Tensor& g, const Node& n) {
  // The input's storage span as a flat buffer; each output element adds
  // its gradient at its storage position (overlapping windows sum). The
  // buffer also covers output positions outside that span (a view read
  // before or past its input's elements, as torch allows): they add
  // nothing to the input's gradient.
  const size_t nd = n.ints.size() / 2;
  const int64_t in_off = n.i0;
  int64_t span = 1;
  for (int d = 0; d < n.nd0; ++d)
    if (n.a0[d] > 0) span += (n.a0[d] - 1) * n.a1[d];
  const int64_t first = n.ints[2 * nd] - in_off;
  int64_t last = first;
  for (size_t d = 0; d < nd; ++d)
    if (n.ints[d] > 0) last += (n.ints[d] - 1) * n.ints[nd + d];
  const int64_t lo = std::min<int64_t>(0, first);
  const int64_t hi = std::max<int64_t>(span, last + 1);
  Tensor pos = fastt::full({}, Scalar(first - lo), DType::Int64, g.device());
  for (size_t d = 0; d < nd; ++d) {
    std::vector<int64_t> shape(nd, 1);
    shape[d] = n.ints[d];
    Tensor r = fastt::mul(
        fastt::arange(Scalar(0), Scalar(n.ints[d]), Scalar(1), DType::Int64,
                      g.device())
            .view(IntList(shape)),
        Scalar(n.ints[nd + d]));
    pos = fastt::add(pos, r);
  }
  std::vector<int64_t> out_shape(n.ints.begin(), n.ints.begin() + nd);
  pos = pos.expand(IntList(out_shape)).reshape({-1});
  Tensor buf = fastt::zeros({hi - lo}, g.dtype(), g.device());
  buf = fastt::index_add(buf, 0, pos, g.reshape({-1}));
  return buf.as_strided(n.shape0(), n.shape1(), -lo);
}

}  // namespace

// ---- copies and views ----
FASTT_FORMULA(Clone) {
  const Tensor& g = go[0];
  gi[0] = g;
}
FASTT_FORMULA(Alias) {
  const Tensor& g = go[0];
  gi[0] = g;
}
FASTT_FORMULA(ToCopy) {
  const Tensor& g = go[0];
  Tensor r = g.device() == n.device ? g : g.to(n.device);
  gi[0] = r.dtype() == n.dtypes[0] ? r : r.to(n.dtypes[0]);
}
FASTT_FORMULA(Copy) {
  const Tensor& g = go[0];
  gi[0] = fit(g, n.shape0(), n.dtypes[0]);
}
FASTT_FORMULA(Reshape) {
  const Tensor& g = go[0];
  gi[0] = g.reshape(n.shape0());
}
// The real [..., 2] view's gradient seen as complex, and back (torch's
// formulas: the parts of the gradient are the gradients of the parts).
FASTT_FORMULA(ViewAsReal) {
  Tensor g = go[0].contiguous();  // a narrowed one may start mid-pair
  if (g.storage_offset() % 2 != 0) g = g.clone();
  gi[0] = fastt::view_as_complex(g);
}
FASTT_FORMULA(ViewAsComplex) {
  gi[0] = fastt::view_as_real(go[0]);
}
FASTT_FORMULA(Transpose) {
  const Tensor& g = go[0];
  gi[0] = g.transpose(n.i0, n.i1);
}
FASTT_FORMULA(Permute) {
  const Tensor& g = go[0];
  int64_t inv[kMaxDims];
  for (int d = 0; d < n.nd1; ++d) inv[n.a1[d]] = d;
  gi[0] = g.permute(IntList(inv, size_t(n.nd1)));
}
FASTT_FORMULA(Expand) {
  const Tensor& g = go[0];
  gi[0] = sum_to(g, n.shape0());
}
FASTT_FORMULA(Slice) {
  const Tensor& g = go[0];
  const int64_t len = g.sizes()[size_t(n.i0)];
  gi[0] = scatter_into(n.shape0(), g, [&](const Tensor& z) {
    return z.slice(n.i0, n.i1, n.i1 + (len - 1) * n.i2 + 1, n.i2);
  });
}
FASTT_FORMULA(Select) {
  const Tensor& g = go[0];
  gi[0] = scatter_into(n.shape0(), g, [&](const Tensor& z) {
    return z.select(n.i0, n.i1);
  });
}
FASTT_FORMULA(Diagonal) {
  const Tensor& g = go[0];
  gi[0] = scatter_into(n.shape0(), g, [&](const Tensor& z) {
    return z.diagonal(n.i0, n.i1, n.i2);
  });
}
FASTT_FORMULA(AsStrided) {
  const Tensor& g = go[0];
  gi[0] = as_strided_backward(g, n);
}
FASTT_FORMULA(CopySlices) {
  // go[0] is the gradient of the whole base after the write.
  const Tensor& g = go[0];
  const size_t nd = n.ints.size() / 2;
  Tensor gb = g.contiguous().clone();
  Tensor region = gb.as_strided(
      IntList(n.ints.data(), nd), IntList(n.ints.data() + nd, nd),
      gb.storage_offset() + n.i0);
  if (n.needs(1)) gi[1] = region.clone();
  region.zero_();
  gi[0] = gb;
}
FASTT_FORMULA(AccumulateGrad) {}  // handled by the engine

}  // namespace autograd
}  // namespace fastt

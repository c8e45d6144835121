// Every backward formula, next to the recording code that decides what it
// saves. Recording functions run the op with grad mode off (so composite
// internals do not record) and build one node; apply_formula() turns the
// gradients of a node's outputs into gradients of its inputs, using fastt
// ops only, so with create_graph the backward pass records itself (double
// backward). To add an op: a row in grad_fns.def, a recording function
// below (declared in functions.h), a case in apply_formula.
#include <algorithm>
#include <cmath>

#include "autograd/formulas.h"
#include "autograd/functions.h"
#include "autograd/node.h"
#include "csrc/mutation.h"
#include "csrc/ops.h"
#include "csrc/ops/nn.h"

namespace fastt {
namespace autograd {
namespace {

template <class F>
Tensor no_grad(F&& f) {
  GradModeGuard guard(false);
  return f();
}

bool differentiable(const Tensor& out) {
  return out.defined() && is_floating(out.dtype());
}

void set_dims(Node& n, IntList dims, int64_t ndim, const char* op) {
  n.nd1 = 0;
  if (dims.empty()) {  // all dims
    for (int64_t d = 0; d < ndim; ++d) n.a1[n.nd1++] = d;
    return;
  }
  for (int64_t d : dims) n.a1[n.nd1++] = wrap_dim(d, std::max<int64_t>(ndim, 1), op);
  std::sort(n.a1, n.a1 + n.nd1);
  if (ndim == 0) n.nd1 = 0;
}

// A reduced gradient (keepdim or not) broadcast back over the input shape.
Tensor expand_reduced(const Tensor& g, const Node& n, bool keepdim) {
  Tensor r = g;
  if (!keepdim)
    for (int k = 0; k < n.nd1; ++k) r = r.unsqueeze(n.a1[k]);
  return r.expand(n.shape0());
}

int64_t reduced_count(const Node& n) {
  int64_t c = 1;
  for (int k = 0; k < n.nd1; ++k) c *= n.a0[n.a1[k]];
  return c;
}

}  // namespace

Tensor sum_to(const Tensor& g, IntList shape) {
  if (g.sizes().equals(shape)) return g;
  const int64_t lead = g.dim() - int64_t(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < g.dim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
    } else if (shape[size_t(d - lead)] == 1 && g.sizes()[size_t(d)] != 1) {
      dims.push_back(d);
    }
  }
  if (dims.empty()) return g.reshape(shape);
  // Sum straight to `shape` where keepdim allows (bias grads: leading dims
  // only, no keepdim). A reshape would return a view of the sum, which the
  // engine must clone before it may keep it as a leaf's .grad.
  Tensor r = fastt::sum(g, IntList(dims), lead == 0);
  return r.sizes().equals(shape) ? r : r.reshape(shape);
}

// ====================================================== recording ====

// ---- elementwise ----
Tensor unary(GradFn fn, Save save, Tensor (*op)(const Tensor&),
             const Tensor& a) {
  Tensor out = no_grad([&] { return op(a); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(fn, {&a});
  if (save == Save::Out) n->save(0, out, true);
  else if (save != Save::None) n->save(0, a);
  set_history(out, n.get());
  return out;
}

Tensor gelu(const Tensor& a, const char* approximate) {
  Tensor out = no_grad([&] { return fastt::gelu(a, approximate); });
  NodeRef n = make_node(GradFn::Gelu, {&a});
  n->save(0, a);
  n->i0 = approximate && approximate[0] == 't';
  set_history(out, n.get());
  return out;
}

Tensor leaky_relu(const Tensor& a, double slope) {
  Tensor out = no_grad([&] { return fastt::leaky_relu(a, slope); });
  NodeRef n = make_node(GradFn::LeakyRelu, {&a});
  n->save(0, a);
  n->f0 = slope;
  set_history(out, n.get());
  return out;
}

Tensor pow(const Tensor& a, const Scalar& e) {
  Tensor out = no_grad([&] { return fastt::pow(a, e); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::PowScalar, {&a});
  n->save(0, a);
  n->s0 = e;
  set_history(out, n.get());
  return out;
}

Tensor pow(const Scalar& a, const Tensor& e) {
  Tensor out = no_grad([&] { return fastt::pow(a, e); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::RPow, {&e});
  n->save(0, out, true);
  n->s0 = a;
  set_history(out, n.get());
  return out;
}

Tensor clamp(const Tensor& a, const Scalar* lo, const Scalar* hi) {
  Tensor out = no_grad([&] { return fastt::clamp(a, lo, hi); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::ClampScalar, {&a});
  n->save(0, a);
  n->i0 = (lo ? 1 : 0) | (hi ? 2 : 0);
  n->f0 = lo ? lo->to<double>() : 0;
  n->f1 = hi ? hi->to<double>() : 0;
  set_history(out, n.get());
  return out;
}

Tensor clamp(const Tensor& a, const Tensor& lo, const Tensor& hi) {
  Tensor out = no_grad([&] { return fastt::clamp(a, lo, hi); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Clamp, {&a, &lo, &hi});
  n->save(0, a);
  n->save(1, lo);
  n->save(2, hi);
  n->set_shape0(a.sizes());
  set_history(out, n.get());
  return out;
}

Tensor binary(GradFn fn, Save save, const Tensor* a, const Tensor* b,
              const Scalar* sa, const Scalar* sb, const Scalar& alpha,
              Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(fn, {a, b});
  n->s0 = alpha;
  if (a) n->set_shape0(a->sizes());
  if (b) n->set_shape1(b->sizes());
  n->i0 = sa ? 2 : sb ? 1 : 0;  // which side is a Python scalar
  n->f0 = sa ? sa->to<double>() : sb ? sb->to<double>() : 0;
  if (save != Save::None) {
    if (a) n->save(0, *a);
    if (b) n->save(1, *b);
  }
  if (save == Save::InOut) n->save(2, out, true);
  set_history(out, n.get());
  return out;
}

Tensor where(const Tensor& c, const Tensor* a, const Tensor* b,
             Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Where, {a, b});
  n->save(0, c);
  if (a) n->set_shape0(a->sizes());
  if (b) n->set_shape1(b->sizes());
  set_history(out, n.get());
  return out;
}

Tensor lerp(const Tensor& a, const Tensor& end, const Tensor* w,
            const Scalar& ws) {
  Tensor out = no_grad([&] {
    return w ? fastt::lerp(a, end, *w) : fastt::lerp(a, end, ws);
  });
  NodeRef n = make_node(GradFn::Lerp, {&a, &end, w});
  n->save(0, a);
  n->save(1, end);
  if (w) n->save(2, *w);
  n->f0 = w ? 0 : ws.to<double>();
  n->set_shape0(a.sizes());
  n->set_shape1(end.sizes());
  set_history(out, n.get());
  return out;
}

Tensor addc(GradFn fn, const Tensor& a, const Tensor& t1, const Tensor& t2,
            const Scalar& value) {
  Tensor out = no_grad([&] {
    return fn == GradFn::Addcmul ? fastt::addcmul(a, t1, t2, value)
                                 : fastt::addcdiv(a, t1, t2, value);
  });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(fn, {&a, &t1, &t2});
  n->save(0, t1);
  n->save(1, t2);
  n->s0 = value;
  n->set_shape0(a.sizes());
  set_history(out, n.get());
  return out;
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& v) {
  Tensor out = no_grad([&] { return fastt::masked_fill(a, mask, v); });
  NodeRef n = make_node(GradFn::MaskedFill, {&a});
  n->save(0, mask);
  n->set_shape0(a.sizes());
  set_history(out, n.get());
  return out;
}

void check_out(const char* name, bool any) {
  if (any && grad_enabled())
    throw RuntimeError(fmt::format(
        "{}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad.",
        name));
}

namespace {
// Moves self's history to r's node after r was written into self. A view
// gets a CopySlices node on its base, and a view node of the new base.
void commit_inplace(Tensor& self, const Tensor& r) {
  if (!r.impl()->requires_grad) return;
  TensorImpl* impl = self.impl();
  Node* node = r.impl()->grad_fn;
  if (!impl->is_view || !impl->view_base) {
    set_history(self, node, r.impl()->output_nr);
    return;
  }
  Tensor base(impl->view_base);
  impl->view_base->refcount.fetch_add(1, std::memory_order_relaxed);
  FASTT_CHECK(base.is_contiguous(), NotImplementedError,
              "in-place write through a view of a non-contiguous base "
              "tensor that takes part in autograd");
  NodeRef c = make_node(GradFn::CopySlices, {&base});
  c->next.resize(2);
  retain(node);
  c->next[1] = Edge(node, r.impl()->output_nr);
  c->set_shape0(base.sizes());
  c->ints.assign(self.sizes().begin(), self.sizes().end());
  c->ints.insert(c->ints.end(), self.strides().begin(), self.strides().end());
  c->i0 = self.storage_offset() - base.storage_offset();
  set_history(base, c.get());
  rebase_view(self, base);
}
}  // namespace

// The view `self` as an AsStrided record of its base's current history.
void rebase_view(const Tensor& self, const Tensor& base) {
  NodeRef v = make_node(GradFn::AsStrided, {&base});
  v->set_shape0(base.sizes());
  v->set_shape1(base.strides());
  v->i0 = base.storage_offset();
  v->ints.assign(self.sizes().begin(), self.sizes().end());
  v->ints.insert(v->ints.end(), self.strides().begin(), self.strides().end());
  v->ints.push_back(self.storage_offset());
  set_history(self, v.get());
  self.impl()->view_version = self.storage()->version();
}

void refresh_view(const Tensor& view) {
  TensorImpl* impl = view.impl();
  TensorImpl* base = impl->view_base;
  if (impl->view_version == impl->storage->version()) return;
  if (!base->requires_grad || !base->grad_fn || !impl->grad_fn ||
      !base->contiguous) {
    impl->view_version = impl->storage->version();
    return;
  }
  // Views recorded before the base's last in-place write point at stale
  // history; a view whose grad_fn already came from the base's current
  // node (its own in-place write) is current.
  Node* own = impl->grad_fn;
  if (own->next.size() == 1 && own->next[0].node == base->grad_fn) {
    impl->view_version = impl->storage->version();
    return;
  }
  base->refcount.fetch_add(1, std::memory_order_relaxed);
  Tensor b(base);
  GradModeGuard on(true);
  rebase_view(view, b);
}

Tensor& inplace(Tensor& self, const char* name,
                FnRef<Tensor(const Tensor&)> op) {
  check_inplace(self, name);
  Tensor r = op(self.clone());
  FASTT_CHECK(r.sizes().equals(self.sizes()), RuntimeError,
              "{}: output with shape {} doesn't match the broadcast shape {}",
              name, shape_str(self.sizes()), shape_str(r.sizes()));
  FASTT_CHECK(can_cast(r.dtype(), self.dtype()), RuntimeError,
              "{}: result type {} can't be cast to the desired output type {}",
              name, dtype_name(r.dtype()), dtype_name(self.dtype()));
  {
    GradModeGuard guard(false);
    self.copy_(r);
  }
  commit_inplace(self, r);
  return self;
}

// ---- reductions ----
Tensor sum(const Tensor& a, IntList dims, bool keepdim, bool all,
           Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(all ? GradFn::SumAll : GradFn::Sum, {&a});
  n->set_shape0(a.sizes());
  set_dims(*n, all ? IntList() : dims, a.dim(), "sum");
  n->i0 = keepdim;
  set_history(out, n.get());
  return out;
}

Tensor mean(const Tensor& a, IntList dims, bool keepdim, bool all,
            Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(all ? GradFn::MeanAll : GradFn::Mean, {&a});
  n->set_shape0(a.sizes());
  set_dims(*n, all ? IntList() : dims, a.dim(), "mean");
  n->i0 = keepdim;
  set_history(out, n.get());
  return out;
}

Tensor prod(const Tensor& a, std::optional<int64_t> dim, bool keepdim,
            Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Prod, {&a});
  n->save(0, a);
  n->set_shape0(a.sizes());
  n->i1 = dim.has_value();
  if (dim) {
    const int64_t d = wrap_dim(*dim, std::max<int64_t>(a.dim(), 1), "prod");
    set_dims(*n, IntList(d), a.dim(), "prod");
  } else {
    set_dims(*n, {}, a.dim(), "prod");
  }
  n->i0 = keepdim;
  set_history(out, n.get());
  return out;
}

Tensor amax_amin(bool is_max, const Tensor& a, IntList dims, bool keepdim,
                 Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(is_max ? GradFn::Amax : GradFn::Amin, {&a});
  n->save(0, a);
  n->save(1, out, true);
  n->set_shape0(a.sizes());
  set_dims(*n, dims, a.dim(), is_max ? "amax" : "amin");
  n->i0 = keepdim;
  set_history(out, n.get());
  return out;
}

std::pair<Tensor, Tensor> max_min_dim(bool is_max, const Tensor& a,
                                      int64_t dim, bool keepdim) {
  std::pair<Tensor, Tensor> r;
  {
    GradModeGuard guard(false);
    r = is_max ? fastt::max(a, dim, keepdim) : fastt::min(a, dim, keepdim);
  }
  if (!differentiable(r.first)) return r;
  NodeRef n = make_node(is_max ? GradFn::MaxDim : GradFn::MinDim, {&a});
  n->save(0, r.second);  // indices: no history, no cycle
  n->set_shape0(a.sizes());
  set_dims(*n, IntList(dim), a.dim(), is_max ? "max" : "min");
  n->i0 = keepdim;
  set_history(r.first, n.get());
  return r;
}

Tensor var_std(bool is_std, const Tensor& a, IntList dims, double correction,
               bool keepdim) {
  Tensor out = no_grad([&] {
    return is_std ? fastt::std(a, dims, correction, keepdim)
                  : fastt::var(a, dims, correction, keepdim);
  });
  NodeRef n = make_node(is_std ? GradFn::Std : GradFn::Var, {&a});
  n->save(0, a);
  if (is_std) n->save(1, out, true);
  n->set_shape0(a.sizes());
  set_dims(*n, dims, a.dim(), is_std ? "std" : "var");
  n->i0 = keepdim;
  n->f0 = correction;
  set_history(out, n.get());
  return out;
}

std::pair<Tensor, Tensor> var_std_mean(bool is_std, const Tensor& a,
                                       IntList dims, double correction,
                                       bool keepdim) {
  std::pair<Tensor, Tensor> r;
  {
    GradModeGuard guard(false);
    r = is_std ? fastt::std_mean(a, dims, correction, keepdim)
               : fastt::var_mean(a, dims, correction, keepdim);
  }
  NodeRef n = make_node(is_std ? GradFn::StdMean : GradFn::VarMean, {&a});
  n->num_outputs = 2;
  n->save(0, a);
  if (is_std) n->save(1, r.first, true, 0);
  n->set_shape0(a.sizes());
  set_dims(*n, dims, a.dim(), is_std ? "std_mean" : "var_mean");
  n->i0 = keepdim;
  n->f0 = correction;
  set_history(r.first, n.get(), 0);
  set_history(r.second, n.get(), 1);
  return r;
}

Tensor norm(const Tensor& a, double p, IntList dims, bool keepdim,
            Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Norm, {&a});
  n->save(0, a);
  n->save(1, out, true);
  n->set_shape0(a.sizes());
  set_dims(*n, dims, a.dim(), "norm");
  n->i0 = keepdim;
  n->f0 = p;
  set_history(out, n.get());
  return out;
}

Tensor logsumexp(const Tensor& a, IntList dims, bool keepdim) {
  Tensor out = no_grad([&] { return fastt::logsumexp(a, dims, keepdim); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Logsumexp, {&a});
  n->save(0, a);
  n->save(1, out, true);
  n->set_shape0(a.sizes());
  set_dims(*n, dims, a.dim(), "logsumexp");
  n->i0 = keepdim;
  set_history(out, n.get());
  return out;
}

Tensor cumsum_cumprod(bool is_sum, const Tensor& a, int64_t dim,
                      Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(is_sum ? GradFn::Cumsum : GradFn::Cumprod, {&a});
  if (!is_sum) {
    n->save(0, a);
    n->save(1, out, true);
  }
  n->i0 = wrap_dim(dim, std::max<int64_t>(a.dim(), 1), "cumsum");
  set_history(out, n.get());
  return out;
}

Tensor softmax(bool is_log, const Tensor& a, int64_t dim, Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(is_log ? GradFn::LogSoftmax : GradFn::Softmax, {&a});
  n->save(0, out, true);
  n->i0 = wrap_dim(dim, std::max<int64_t>(a.dim(), 1), "softmax");
  set_history(out, n.get());
  return out;
}

// ---- linear algebra ----
Tensor matmul(const Tensor& a, const Tensor& b, Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Matmul, {&a, &b});
  n->save(0, a);
  n->save(1, b);
  set_history(out, n.get());
  return out;
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2,
             const Scalar& beta, const Scalar& alpha, Compute compute) {
  Tensor out = no_grad(compute);
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Addmm, {&input, &m1, &m2});
  n->save(0, m1);
  n->save(1, m2);
  n->set_shape0(input.sizes());
  n->f0 = beta.to<double>();
  n->f1 = alpha.to<double>();
  set_history(out, n.get());
  return out;
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor out = no_grad([&] { return fastt::linear(x, w, b); });
  if (!differentiable(out)) return out;
  NodeRef n = make_node(GradFn::Linear, {&x, &w, &b});
  n->save(0, x);
  n->save(1, w);
  if (b.defined()) n->set_shape0(b.sizes());
  set_history(out, n.get());
  return out;
}

// ---- copies and views ----
void view_of(GradFn fn, const Tensor& in, const Tensor& out, int64_t i0,
             int64_t i1, int64_t i2, IntList extra) {
  NodeRef n = make_node(fn, {&in});
  n->set_shape0(in.sizes());
  n->i0 = i0;
  n->i1 = i1;
  n->i2 = i2;
  if (fn == GradFn::AsStrided) {
    n->set_shape1(in.strides());
    n->i0 = in.storage_offset();
    n->ints.assign(out.sizes().begin(), out.sizes().end());
    n->ints.insert(n->ints.end(), out.strides().begin(), out.strides().end());
    n->ints.push_back(out.storage_offset());
  } else if (!extra.empty()) {
    n->set_shape1(extra);
  }
  set_history(out, n.get());
  out.impl()->view_version = out.storage()->version();
}

Tensor to_copy(const Tensor& in, Compute compute) {
  Tensor out = no_grad(compute);
  if (out.is_same(in) || !differentiable(out)) return out;
  NodeRef n = make_node(GradFn::ToCopy, {&in});
  set_history(out, n.get());
  return out;
}

Tensor clone(const Tensor& in) {
  Tensor out = no_grad([&] { return in.clone(); });
  NodeRef n = make_node(GradFn::Clone, {&in});
  set_history(out, n.get());
  return out;
}

Tensor& copy_(Tensor& self, const Tensor& src) {
  check_inplace(self, "copy_");
  Tensor r = no_grad([&] {
    Tensor t = Tensor::empty(self.sizes(), self.dtype(), self.device());
    return t.copy_(src);
  });
  {
    GradModeGuard guard(false);
    self.copy_(r);
  }
  if (!requires_grad(src) && !self.impl()->requires_grad) return self;
  NodeRef n = make_node(GradFn::Copy, {&src});
  if (src.defined()) n->set_shape0(src.sizes());
  set_history(r, n.get());
  commit_inplace(self, r);
  return self;
}

// ====================================================== formulas ====
namespace {

Tensor zeros_of(IntList shape, const Node& n, int k = 0) {
  return fastt::zeros(shape, n.dtypes[k], n.device);
}

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
  // its gradient at its storage position (overlapping windows sum).
  const size_t nd = n.ints.size() / 2;
  const int64_t in_off = n.i0;
  int64_t span = 1;
  for (int d = 0; d < n.nd0; ++d)
    if (n.a0[d] > 0) span += (n.a0[d] - 1) * n.a1[d];
  Tensor pos = fastt::full({}, Scalar(n.ints[2 * nd] - in_off), DType::Int64,
                           g.device());
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
  Tensor buf = fastt::zeros({span}, g.dtype(), g.device());
  buf = fastt::index_add(buf, 0, pos, g.reshape({-1}));
  return buf.as_strided(n.shape0(), n.shape1(), 0);
}

// Products of every element but one along dim d (zeros handled exactly).
Tensor prod_others(const Tensor& x, int64_t d) {
  const int64_t len = x.sizes()[size_t(d)];
  if (len <= 1) return fastt::ones_like(x);
  Tensor one = fastt::ones_like(x.narrow(d, 0, 1));
  Tensor left = fastt::cat({one, fastt::cumprod(x.narrow(d, 0, len - 1), d)}, d);
  Tensor xf = fastt::flip(x, IntList(d));
  Tensor right = fastt::flip(
      fastt::cat({one, fastt::cumprod(xf.narrow(d, 0, len - 1), d)}, d),
      IntList(d));
  return fastt::mul(left, right);
}

Tensor reverse_cumsum(const Tensor& g, int64_t d) {
  return fastt::flip(fastt::cumsum(fastt::flip(g, IntList(d)), d),
                     IntList(d));
}

void matmul_backward(const Tensor& g, const Tensor& a, const Tensor& b,
                     bool need_a, bool need_b, Tensor& ga, Tensor& gb) {
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  Tensor A = a1 ? a.unsqueeze(0) : a;
  Tensor B = b1 ? b.unsqueeze(1) : b;
  Tensor G = g;
  if (a1) G = G.unsqueeze(G.dim() - (b1 ? 0 : 1));
  if (b1) G = G.unsqueeze(G.dim());
  if (need_a) {
    Tensor r = sum_to(fastt::matmul(G, B.mT()), A.sizes());
    ga = a1 ? r.squeeze(0) : r;
  }
  if (need_b) {
    Tensor r = sum_to(fastt::matmul(A.mT(), G), B.sizes());
    gb = b1 ? r.squeeze(1) : r;
  }
}

}  // namespace

// The row-declared formulas by GradFn (null: a case of the switch below).
constexpr Formula kRowFormulas[] = {
#define FASTT_GRAD_FN(name, str) nullptr,
#define FASTT_ROW_GRAD_FN(name) &formula_##name,
#include "grad_fns.def"
#undef FASTT_GRAD_FN
#undef FASTT_ROW_GRAD_FN
};

void apply_formula(Node& n, Tensor* go, Tensor* gi) {
  if (Formula f = kRowFormulas[size_t(n.fn)]) return f(n, go, gi);
  const Tensor& g = go[0];
  switch (n.fn) {
    // ---- unary ----
    case GradFn::Neg: gi[0] = fastt::neg(g); return;
    case GradFn::Abs: gi[0] = fastt::mul(g, fastt::sign(n.unpack(0))); return;
    case GradFn::Exp: gi[0] = fastt::mul(g, n.unpack(0)); return;
    case GradFn::Expm1:
      gi[0] = fastt::mul(g, fastt::add(n.unpack(0), Scalar(1)));
      return;
    case GradFn::Log: gi[0] = fastt::div(g, n.unpack(0)); return;
    case GradFn::Log1p:
      gi[0] = fastt::div(g, fastt::add(n.unpack(0), Scalar(1)));
      return;
    case GradFn::Log2:
      gi[0] = fastt::div(g, fastt::mul(n.unpack(0), Scalar(M_LN2)));
      return;
    case GradFn::Sqrt:
      gi[0] = fastt::div(g, fastt::mul(n.unpack(0), Scalar(2)));
      return;
    case GradFn::Rsqrt: {
      Tensor y = n.unpack(0);
      gi[0] = fastt::mul(fastt::mul(g, Scalar(-0.5)),
                         fastt::mul(fastt::mul(y, y), y));
      return;
    }
    case GradFn::Sin: gi[0] = fastt::mul(g, fastt::cos(n.unpack(0))); return;
    case GradFn::Cos:
      gi[0] = fastt::mul(g, fastt::neg(fastt::sin(n.unpack(0))));
      return;
    case GradFn::Tanh: {
      Tensor y = n.unpack(0);
      if (!grad_enabled() && g.dtype() == y.dtype()) {  // fused, one pass
        gi[0] = fastt::activation_backward("tanh", g, y);
        return;
      }
      gi[0] = fastt::mul(g, fastt::sub(Scalar(1), fastt::mul(y, y)));
      return;
    }
    case GradFn::Sigmoid: {
      Tensor y = n.unpack(0);
      if (!grad_enabled() && g.dtype() == y.dtype()) {
        gi[0] = fastt::activation_backward("sigmoid", g, y);
        return;
      }
      gi[0] = fastt::mul(g, fastt::mul(y, fastt::sub(Scalar(1), y)));
      return;
    }
    case GradFn::Relu: {
      Tensor y = n.unpack(0);
      if (!grad_enabled() && g.dtype() == y.dtype())
        gi[0] = fastt::activation_backward("relu", g, y);
      else
        gi[0] = fastt::where(fastt::gt(y, Scalar(0)), g, Scalar(0));
      return;
    }
    case GradFn::LeakyRelu: {
      Tensor x = n.unpack(0);
      gi[0] = fastt::where(fastt::gt(x, Scalar(0)), g,
                           fastt::mul(g, Scalar(n.f0)));
      return;
    }
    case GradFn::Gelu: {
      Tensor x = n.unpack(0);
      if (!grad_enabled() && g.dtype() == x.dtype()) {
        gi[0] = fastt::activation_backward("gelu", g, x,
                                           n.i0 ? "tanh" : "none");
        return;
      }
      if (n.i0) {  // tanh approximation
        const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
        Tensor x2 = fastt::mul(x, x);
        Tensor inner = fastt::mul(fastt::mul(x, fastt::add(fastt::mul(x2, Scalar(c)), Scalar(1))), Scalar(k));
        Tensor t = fastt::tanh(inner);
        Tensor dinner = fastt::mul(
            fastt::add(fastt::mul(x2, Scalar(3 * c)), Scalar(1)), Scalar(k));
        Tensor left = fastt::mul(fastt::add(t, Scalar(1)), Scalar(0.5));
        Tensor right = fastt::mul(
            fastt::mul(fastt::mul(x, Scalar(0.5)),
                       fastt::sub(Scalar(1), fastt::mul(t, t))),
            dinner);
        gi[0] = fastt::mul(g, fastt::add(left, right));
      } else {
        Tensor cdf = fastt::mul(
            fastt::add(fastt::erf(fastt::mul(x, Scalar(M_SQRT1_2))),
                       Scalar(1)),
            Scalar(0.5));
        Tensor pdf = fastt::mul(
            fastt::exp(fastt::mul(fastt::mul(x, x), Scalar(-0.5))),
            Scalar(0.5 * M_2_SQRTPI * M_SQRT1_2));
        gi[0] = fastt::mul(g, fastt::add(cdf, fastt::mul(x, pdf)));
      }
      return;
    }
    case GradFn::Silu: {
      Tensor x = n.unpack(0);
      if (!grad_enabled() && g.dtype() == x.dtype()) {
        gi[0] = fastt::activation_backward("silu", g, x);
        return;
      }
      Tensor s = fastt::sigmoid(x);
      gi[0] = fastt::mul(
          g, fastt::mul(s, fastt::add(fastt::mul(x, fastt::sub(Scalar(1), s)),
                                      Scalar(1))));
      return;
    }
    case GradFn::Erf: {
      Tensor x = n.unpack(0);
      gi[0] = fastt::mul(
          g, fastt::mul(fastt::exp(fastt::neg(fastt::mul(x, x))),
                        Scalar(M_2_SQRTPI)));
      return;
    }
    case GradFn::Reciprocal: {
      Tensor y = n.unpack(0);
      gi[0] = fastt::mul(fastt::neg(g), fastt::mul(y, y));
      return;
    }
    case GradFn::Square:
      gi[0] = fastt::mul(g, fastt::mul(n.unpack(0), Scalar(2)));
      return;
    case GradFn::ZeroGrad:
      for (size_t k = 0; k < n.next.size(); ++k)
        if (n.needs(k)) gi[k] = fastt::zeros_like(g).to(n.dtypes[k]);
      return;
    case GradFn::PowScalar: {
      Tensor x = n.unpack(0);
      const double e = n.s0.to<double>();
      if (e == 0) {
        gi[0] = fastt::zeros_like(x);
      } else {
        gi[0] = fastt::mul(fastt::mul(g, Scalar(e)),
                           fastt::pow(x, Scalar(e - 1)));
      }
      return;
    }
    case GradFn::RPow: {  // c ** y: g * out * ln(c)
      const double c = n.s0.to<double>();
      gi[0] = fastt::mul(fastt::mul(g, n.unpack(0)), Scalar(std::log(c)));
      if (c == 0) gi[0] = fastt::zeros_like(gi[0]);  // torch masks c == 0
      return;
    }
    case GradFn::ClampScalar: {
      Tensor x = n.unpack(0);
      Tensor keep;
      if (n.i0 & 1) keep = fastt::ge(x, Scalar(n.f0));
      if (n.i0 & 2) {
        Tensor hi = fastt::le(x, Scalar(n.f1));
        keep = keep.defined() ? fastt::logical_and(keep, hi) : hi;
      }
      gi[0] = fastt::where(keep, g, Scalar(0));
      return;
    }

    // ---- binary ----
    case GradFn::Add:
    case GradFn::Sub: {
      const bool sub = n.fn == GradFn::Sub;
      if (n.needs(0)) {
        gi[0] = fit(n.i0 == 2 ? fastt::mul(g, n.s0) : g, n.shape0(),
                    n.dtypes[0]);
        if (n.i0 == 2 && sub) gi[0] = fastt::neg(gi[0]);
      }
      if (n.needs(1)) {
        Tensor gb = n.s0.to<double>() == 1 ? g : fastt::mul(g, n.s0);
        if (sub) gb = fastt::neg(gb);
        gi[1] = fit(gb, n.shape1(), n.dtypes[1]);
      }
      return;
    }
    case GradFn::Mul: {
      if (n.i0 == 1) {  // tensor * scalar
        gi[0] = fit(fastt::mul(g, Scalar(n.f0)), n.shape0(), n.dtypes[0]);
        return;
      }
      if (n.i0 == 2) {
        gi[1] = fit(fastt::mul(g, Scalar(n.f0)), n.shape1(), n.dtypes[1]);
        return;
      }
      if (n.needs(0))
        gi[0] = fit(fastt::mul(g, n.unpack(FASTT_MUTANT(MulGradSwap) ? 0 : 1)),
                    n.shape0(), n.dtypes[0]);
      if (n.needs(1))
        gi[1] = fit(fastt::mul(g, n.unpack(0)), n.shape1(), n.dtypes[1]);
      return;
    }
    case GradFn::Div: {
      if (n.i0 == 1) {
        gi[0] = fit(fastt::div(g, Scalar(n.f0)), n.shape0(), n.dtypes[0]);
        return;
      }
      Tensor b = n.unpack(1);
      if (n.i0 == 2) {  // c / b
        gi[1] = fit(fastt::mul(fastt::neg(g),
                               fastt::div(Scalar(n.f0), fastt::mul(b, b))),
                    n.shape1(), n.dtypes[1]);
        return;
      }
      if (n.needs(0)) gi[0] = fit(fastt::div(g, b), n.shape0(), n.dtypes[0]);
      if (n.needs(1)) {
        Tensor a = n.unpack(0);
        gi[1] = fit(fastt::neg(fastt::div(fastt::mul(g, a), fastt::mul(b, b))),
                    n.shape1(), n.dtypes[1]);
      }
      return;
    }
    case GradFn::Pow: {
      Tensor a = n.unpack(0), b = n.unpack(1);
      if (n.needs(0)) {
        Tensor r = fastt::mul(fastt::mul(g, b),
                              fastt::pow(a, fastt::sub(b, Scalar(1))));
        r = fastt::where(fastt::logical_and(fastt::eq(b, Scalar(0)),
                                            fastt::ge(a, Scalar(0))),
                         Scalar(0), r);
        gi[0] = fit(r, n.shape0(), n.dtypes[0]);
      }
      if (n.needs(1)) {
        Tensor out = n.unpack(2);
        Tensor r = fastt::mul(fastt::mul(g, out), fastt::log(a));
        r = fastt::where(fastt::logical_and(fastt::eq(a, Scalar(0)),
                                            fastt::ge(b, Scalar(0))),
                         Scalar(0), r);
        gi[1] = fit(r, n.shape1(), n.dtypes[1]);
      }
      return;
    }
    case GradFn::Maximum:
    case GradFn::Minimum: {
      Tensor a = n.unpack(0), b = n.unpack(1);
      // A Python-scalar operand is not saved: rebuild it as a 0-d tensor.
      if (n.i0 == 1) b = fastt::full({}, Scalar(n.f0), a.dtype(), a.device());
      if (n.i0 == 2) a = fastt::full({}, Scalar(n.f0), b.dtype(), b.device());
      Tensor wins = n.fn == GradFn::Maximum ? fastt::gt(a, b) : fastt::lt(a, b);
      Tensor tie = fastt::eq(a, b);
      Tensor half = fastt::mul(g, Scalar(0.5));
      if (n.needs(0))
        gi[0] = fit(fastt::where(wins, g, fastt::where(tie, half, Scalar(0))),
                    n.shape0(), n.dtypes[0]);
      if (n.needs(1)) {
        Tensor loses = fastt::logical_not(fastt::logical_or(wins, tie));
        gi[1] = fit(fastt::where(loses, g, fastt::where(tie, half, Scalar(0))),
                    n.shape1(), n.dtypes[1]);
      }
      return;
    }
    case GradFn::Atan2: {
      Tensor a = n.unpack(0), b = n.unpack(1);
      if (n.i0 == 1) b = fastt::full({}, Scalar(n.f0), a.dtype(), a.device());
      if (n.i0 == 2) a = fastt::full({}, Scalar(n.f0), b.dtype(), b.device());
      Tensor den = fastt::add(fastt::mul(a, a), fastt::mul(b, b));
      if (n.needs(0))
        gi[0] = fit(fastt::div(fastt::mul(g, b), den), n.shape0(), n.dtypes[0]);
      if (n.needs(1))
        gi[1] = fit(fastt::div(fastt::mul(fastt::neg(g), a), den), n.shape1(),
                    n.dtypes[1]);
      return;
    }
    case GradFn::Remainder:
    case GradFn::Fmod: {
      if (n.i0 == 1) {
        gi[0] = fit(g, n.shape0(), n.dtypes[0]);
        return;
      }
      if (n.needs(0)) gi[0] = fit(g, n.shape0(), n.dtypes[0]);
      if (n.needs(1)) {
        Tensor a = n.unpack(0), b = n.unpack(1);
        if (n.i0 == 2)  // scalar % tensor: the scalar was not saved
          a = fastt::full({}, Scalar(n.f0), b.dtype(), b.device());
        Tensor q = n.fn == GradFn::Remainder
                       ? fastt::div(a, b, "floor")
                       : fastt::div(a, b, "trunc");
        gi[1] = fit(fastt::mul(fastt::neg(g), q), n.shape1(), n.dtypes[1]);
      }
      return;
    }
    case GradFn::Where: {
      Tensor c = n.unpack(0);
      if (n.needs(0))
        gi[0] = fit(fastt::where(c, g, Scalar(0)), n.shape0(), n.dtypes[0]);
      if (n.needs(1))
        gi[1] = fit(fastt::where(c, Scalar(0), g), n.shape1(), n.dtypes[1]);
      return;
    }
    case GradFn::Clamp: {
      Tensor x = n.unpack(0), lo = n.unpack(1), hi = n.unpack(2);
      Tensor keep;
      Tensor below, above;
      if (lo.defined()) {
        below = fastt::lt(x, lo);
        keep = fastt::logical_not(below);
      }
      if (hi.defined()) {
        above = fastt::gt(x, hi);
        Tensor k = fastt::logical_not(above);
        keep = keep.defined() ? fastt::logical_and(keep, k) : k;
      }
      if (n.needs(0))
        gi[0] = fit(fastt::where(keep, g, Scalar(0)), n.shape0(), n.dtypes[0]);
      if (n.needs(1))
        gi[1] = fit(fastt::where(below, g, Scalar(0)), lo.sizes(), lo.dtype());
      if (n.needs(2))
        gi[2] = fit(fastt::where(above, g, Scalar(0)), hi.sizes(), hi.dtype());
      return;
    }
    case GradFn::Lerp: {
      Tensor a = n.unpack(0), e = n.unpack(1);
      Tensor w = n.saved.size() > 2 ? n.unpack(2) : Tensor();
      if (w.defined()) {
        if (n.needs(0))
          gi[0] = fit(fastt::mul(g, fastt::sub(Scalar(1), w)), n.shape0(),
                      n.dtypes[0]);
        if (n.needs(1)) gi[1] = fit(fastt::mul(g, w), n.shape1(), n.dtypes[1]);
        if (n.needs(2))
          gi[2] = fit(fastt::mul(g, fastt::sub(e, a)), w.sizes(), w.dtype());
      } else {
        if (n.needs(0))
          gi[0] = fit(fastt::mul(g, Scalar(1 - n.f0)), n.shape0(), n.dtypes[0]);
        if (n.needs(1))
          gi[1] = fit(fastt::mul(g, Scalar(n.f0)), n.shape1(), n.dtypes[1]);
      }
      return;
    }
    case GradFn::Addcmul:
    case GradFn::Addcdiv: {
      Tensor t1 = n.unpack(0), t2 = n.unpack(1);
      if (n.needs(0)) gi[0] = fit(g, n.shape0(), n.dtypes[0]);
      Tensor gv = fastt::mul(g, n.s0);
      if (n.fn == GradFn::Addcmul) {
        if (n.needs(1)) gi[1] = fit(fastt::mul(gv, t2), t1.sizes(), t1.dtype());
        if (n.needs(2)) gi[2] = fit(fastt::mul(gv, t1), t2.sizes(), t2.dtype());
      } else {
        if (n.needs(1)) gi[1] = fit(fastt::div(gv, t2), t1.sizes(), t1.dtype());
        if (n.needs(2))
          gi[2] = fit(fastt::neg(fastt::div(fastt::mul(gv, t1),
                                            fastt::mul(t2, t2))),
                      t2.sizes(), t2.dtype());
      }
      return;
    }
    case GradFn::MaskedFill:
      gi[0] = fit(fastt::where(n.unpack(0), Scalar(0), g), n.shape0(),
                  n.dtypes[0]);
      return;

    // ---- reductions ----
    case GradFn::Sum:
    case GradFn::SumAll:
      gi[0] = expand_reduced(g, n, n.i0);
      if (gi[0].dtype() != n.dtypes[0]) gi[0] = gi[0].to(n.dtypes[0]);
      return;
    case GradFn::Mean:
    case GradFn::MeanAll:
      gi[0] = fastt::div(expand_reduced(g, n, n.i0),
                         Scalar(reduced_count(n)));
      if (gi[0].dtype() != n.dtypes[0]) gi[0] = gi[0].to(n.dtypes[0]);
      return;
    case GradFn::Prod: {
      Tensor x = n.unpack(0);
      Tensor ge = expand_reduced(g, n, n.i0);
      if (x.dim() == 0) {
        gi[0] = g;
      } else if (n.i1) {
        gi[0] = fastt::mul(ge, prod_others(x, n.a1[0]));
      } else {
        Tensor flat = x.reshape({-1});
        gi[0] = fastt::mul(ge, prod_others(flat, 0).reshape(x.sizes()));
      }
      return;
    }
    case GradFn::Amax:
    case GradFn::Amin: {
      Tensor x = n.unpack(0), out = n.unpack(1);
      Tensor mask = fastt::eq(x, expand_reduced(out, n, n.i0));
      Tensor count = fastt::sum(mask, IntList(n.a1, size_t(n.nd1)), true);
      gi[0] = fastt::div(fastt::where(mask, expand_reduced(g, n, n.i0),
                                      Scalar(0)),
                         count);
      return;
    }
    case GradFn::MaxDim:
    case GradFn::MinDim: {
      Tensor idx = n.unpack(0);
      Tensor gk = g;
      const int64_t d = n.nd1 ? n.a1[0] : 0;
      if (!n.i0 && n.nd0 > 0) {
        idx = idx.unsqueeze(d);
        gk = gk.unsqueeze(d);
      }
      if (n.nd0 == 0) {
        gi[0] = g;
        return;
      }
      gi[0] = fastt::scatter(zeros_of(n.shape0(), n).to(g.dtype()), d, idx,
                             gk);
      return;
    }
    case GradFn::Var:
    case GradFn::Std:
    case GradFn::VarMean:
    case GradFn::StdMean: {
      Tensor x = n.unpack(0);
      const IntList dims(n.a1, size_t(n.nd1));
      const double N = double(reduced_count(n));
      const bool is_std = n.fn == GradFn::Std || n.fn == GradFn::StdMean;
      Tensor total;
      if (g.defined()) {
        Tensor centered = fastt::sub(x, fastt::mean(x, dims, true));
        Tensor ge = expand_reduced(g, n, n.i0);
        if (is_std) {
          Tensor out = expand_reduced(n.unpack(1), n, n.i0);
          total = fastt::div(fastt::mul(ge, centered),
                             fastt::mul(out, Scalar(N - n.f0)));
          total = fastt::where(fastt::eq(out, Scalar(0)), Scalar(0), total);
        } else {
          total = fastt::mul(fastt::mul(ge, centered),
                             Scalar(2.0 / (N - n.f0)));
        }
      }
      if (n.num_outputs > 1 && go[1].defined()) {
        Tensor gm = fastt::div(expand_reduced(go[1], n, n.i0), Scalar(N));
        total = total.defined() ? fastt::add(total, gm) : gm;
      }
      gi[0] = total;
      return;
    }
    case GradFn::Norm: {
      Tensor x = n.unpack(0), out = expand_reduced(n.unpack(1), n, n.i0);
      Tensor ge = expand_reduced(g, n, n.i0);
      const double p = n.f0;
      Tensor r;
      if (p == 0) {
        r = fastt::zeros_like(x);
      } else if (p == 1) {
        r = fastt::mul(ge, fastt::sign(x));
      } else if (p == 2) {
        r = fastt::where(fastt::eq(out, Scalar(0)), Scalar(0),
                         fastt::div(fastt::mul(ge, x), out));
      } else if (std::isinf(p)) {
        Tensor mask = fastt::eq(fastt::abs(x), out);
        Tensor count = fastt::sum(mask, IntList(n.a1, size_t(n.nd1)), true);
        r = fastt::div(fastt::where(mask, fastt::mul(ge, fastt::sign(x)),
                                    Scalar(0)),
                       count);
      } else {
        Tensor num = fastt::mul(
            fastt::mul(ge, x), fastt::pow(fastt::abs(x), Scalar(p - 2)));
        r = fastt::where(fastt::eq(out, Scalar(0)), Scalar(0),
                         fastt::div(num, fastt::pow(out, Scalar(p - 1))));
      }
      gi[0] = r;
      return;
    }
    case GradFn::Logsumexp: {
      Tensor x = n.unpack(0), out = expand_reduced(n.unpack(1), n, n.i0);
      gi[0] = fastt::mul(expand_reduced(g, n, n.i0),
                         fastt::exp(fastt::sub(x, out)));
      return;
    }
    case GradFn::Cumsum:
      gi[0] = g.dim() == 0 ? g : reverse_cumsum(g, n.i0);
      if (gi[0].dtype() != n.dtypes[0]) gi[0] = gi[0].to(n.dtypes[0]);
      return;
    case GradFn::Cumprod: {
      Tensor x = n.unpack(0), out = n.unpack(1);
      if (x.dim() == 0) {
        gi[0] = g;
        return;
      }
      if (!fastt::any(fastt::eq(x, Scalar(0))).item<bool>()) {
        gi[0] = fastt::div(reverse_cumsum(fastt::mul(g, out), n.i0), x);
        return;
      }
      // Zeros make the division above 0/0. Exact form, O(len^2) per row:
      // gx[i] = prod_{k<i} x[k] * sum_{j>=i} g[j] prod_{i<k<=j} x[k].
      const int64_t d = n.i0, len = x.sizes()[size_t(d)];
      Tensor xl = x.transpose(d, -1), gl = g.transpose(d, -1);
      Tensor idx = fastt::arange(Scalar(len), DType::Int64, x.device());
      Tensor row = idx.view({len, 1}), col = idx.view({1, len});
      Tensor after = fastt::where(fastt::gt(col, row), xl.unsqueeze(-2),
                                  Scalar(1));  // [..., i, j]
      Tensor span = fastt::cumprod(after, -1);  // prod_{i<k<=j} x[k]
      Tensor s = fastt::sum(
          fastt::where(fastt::ge(col, row),
                       fastt::mul(gl.unsqueeze(-2), span), Scalar(0)),
          IntList(-1));
      Tensor ones = fastt::ones_like(xl.narrow(-1, 0, 1));
      Tensor left = len == 1 ? ones
                             : fastt::cat({ones, fastt::cumprod(
                                                     xl.narrow(-1, 0, len - 1),
                                                     -1)},
                                          -1);
      gi[0] = fastt::mul(left, s).transpose(d, -1);
      return;
    }
    case GradFn::Softmax: {
      Tensor y = n.unpack(0);
      if (!grad_enabled() && g.dtype() == y.dtype()) {  // one fused pass
        gi[0] = fastt::softmax_backward(g, y, n.i0);
        return;
      }
      Tensor s = fastt::sum(fastt::mul(g, y), IntList(n.i0), true);
      gi[0] = fastt::mul(y, fastt::sub(g, s));
      return;
    }
    case GradFn::LogSoftmax: {
      Tensor y = n.unpack(0);
      if (!grad_enabled() && g.dtype() == y.dtype()) {
        gi[0] = fastt::log_softmax_backward(g, y, n.i0);
        return;
      }
      Tensor s = fastt::sum(g, IntList(n.i0), true);
      gi[0] = fastt::sub(g, fastt::mul(fastt::exp(y), s));
      return;
    }

    // ---- linear algebra ----
    case GradFn::Matmul: {
      Tensor a = n.unpack(0), b = n.unpack(1);
      matmul_backward(g, a, b, n.needs(0), n.needs(1), gi[0], gi[1]);
      return;
    }
    case GradFn::Addmm: {
      Tensor m1 = n.unpack(0), m2 = n.unpack(1);
      if (n.needs(0))
        gi[0] = fit(n.f0 == 1 ? g : fastt::mul(g, Scalar(n.f0)), n.shape0(),
                    n.dtypes[0]);
      Tensor ga = n.f1 == 1 ? g : fastt::mul(g, Scalar(n.f1));
      if (n.needs(1)) gi[1] = fastt::matmul(ga, m2.mT());
      if (n.needs(2)) gi[2] = fastt::matmul(m1.mT(), ga);
      return;
    }
    case GradFn::Linear: {
      Tensor x = n.unpack(0), w = n.unpack(1);
      const int64_t N = w.sizes()[0];
      if (n.needs(0)) gi[0] = fastt::matmul(g, w);
      Tensor g2 = g.dim() == 2 ? g : g.reshape({-1, N});
      if (n.needs(1)) {
        Tensor x2 = x.dim() == 2 ? x : x.reshape({-1, x.sizes()[size_t(x.dim() - 1)]});
        gi[1] = fastt::mm(g2.t(), x2);
      }
      if (n.needs(2)) gi[2] = sum_to(g2, n.shape0());
      return;
    }

    // ---- copies and views ----
    case GradFn::Clone: gi[0] = g; return;
    case GradFn::Alias: gi[0] = g; return;
    case GradFn::ToCopy: {
      Tensor r = g.device() == n.device ? g : g.to(n.device);
      gi[0] = r.dtype() == n.dtypes[0] ? r : r.to(n.dtypes[0]);
      return;
    }
    case GradFn::Copy:
      gi[0] = fit(g, n.shape0(), n.dtypes[0]);
      return;
    case GradFn::Reshape: gi[0] = g.reshape(n.shape0()); return;
    case GradFn::Transpose: gi[0] = g.transpose(n.i0, n.i1); return;
    case GradFn::Permute: {
      int64_t inv[kMaxDims];
      for (int d = 0; d < n.nd1; ++d) inv[n.a1[d]] = d;
      gi[0] = g.permute(IntList(inv, size_t(n.nd1)));
      return;
    }
    case GradFn::Expand: gi[0] = sum_to(g, n.shape0()); return;
    case GradFn::Slice: {
      const int64_t len = g.sizes()[size_t(n.i0)];
      gi[0] = scatter_into(n.shape0(), g, [&](const Tensor& z) {
        return z.slice(n.i0, n.i1, n.i1 + (len - 1) * n.i2 + 1, n.i2);
      });
      return;
    }
    case GradFn::Select:
      gi[0] = scatter_into(n.shape0(), g, [&](const Tensor& z) {
        return z.select(n.i0, n.i1);
      });
      return;
    case GradFn::Diagonal:
      gi[0] = scatter_into(n.shape0(), g, [&](const Tensor& z) {
        return z.diagonal(n.i0, n.i1, n.i2);
      });
      return;
    case GradFn::AsStrided:
      gi[0] = as_strided_backward(g, n);
      return;
    case GradFn::CopySlices: {
      // go[0] is the gradient of the whole base after the write.
      const size_t nd = n.ints.size() / 2;
      Tensor gb = g.contiguous().clone();
      Tensor region = gb.as_strided(
          IntList(n.ints.data(), nd), IntList(n.ints.data() + nd, nd),
          gb.storage_offset() + n.i0);
      if (n.needs(1)) gi[1] = region.clone();
      region.zero_();
      gi[0] = gb;
      return;
    }
    case GradFn::AccumulateGrad:
      return;  // handled by the engine
    default:
      if (apply_index_formula(n, go, gi)) return;
      if (apply_nn_formula(n, go, gi)) return;
  }
  throw NotImplementedError(fmt::format(
      "autograd: no backward formula for {}", grad_fn_name(n.fn)));
}

}  // namespace autograd
}  // namespace fastt

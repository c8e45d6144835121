// The recording side of the core differentiable ops (declared in
// functions.h), sum_to, and apply_formula(), which runs a node's backward
// formula. Recording functions run the op with grad mode off (so composite
// internals do not record) and build one node saving what its formula
// needs. Every GradFn's formula is a FASTT_FORMULA(Name) (formulas.h) in
// its family's file: formulas_elementwise.cpp, formulas_reduce.cpp,
// formulas_linalg.cpp, formulas_view.cpp, formulas_index.cpp,
// formulas_nn.cpp. A formula turns the gradients of a node's outputs into
// gradients of its inputs, using fastt ops only, so with create_graph the
// backward pass records itself (double backward). apply_formula() is one
// lookup in a table built from grad_fns.def. To add an op: a row in
// grad_fns.def, a recording function below (declared in functions.h), a
// FASTT_FORMULA(Name) in the family's formulas_<family>.cpp.
#include <algorithm>

#include "autograd/formulas.h"
#include "autograd/functions.h"
#include "autograd/node.h"
#include "csrc/ops.h"

namespace fastt {
namespace autograd {
namespace {

template <class F>
Tensor no_grad(F&& f) {
  GradModeGuard guard(false);
  return f();
}

bool differentiable(const Tensor& out) {
  if (!out.defined()) return false;
  // Complex results are recorded too; make_node refuses the formulas
  // that are real-only (engine.cpp's complex_formula).
  return is_floating(out.dtype()) || is_complex(out.dtype());
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
  if (a.to_double() == 0 && a.imag() == 0) n->save(1, e);  // the 0^y mask
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
  n->f1 = sa ? sa->imag() : sb ? sb->imag() : 0;  // a complex scalar
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
  if (!w) n->s0 = ws;
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
  FASTT_CHECK(impl->dtype == impl->view_base->dtype, NotImplementedError,
              "in-place write through view_as_real/view_as_complex of a "
              "tensor that takes part in autograd (write to the complex "
              "tensor, or to a copy of the view)");
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
  FASTT_CHECK(impl->dtype == base->dtype, NotImplementedError,
              "a view_as_real/view_as_complex view used after an in-place "
              "write to its base, which takes part in autograd: take the "
              "view again after the write");
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
  // A real result written into a complex tensor: its history goes
  // through the recorded cast, whose backward takes the real part.
  if (is_complex(self.dtype()) && !is_complex(r.dtype()))
    r = r.to(self.dtype());
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
// Every GradFn's formula, by GradFn: every row of grad_fns.def, the GradFns
// of the Grad(...) rows of csrc/ops/elementwise.def included. A GradFn
// without its FASTT_FORMULA(Name) does not link.
constexpr Formula kFormulas[] = {
#define FASTT_GRAD_FN(name, str) &formula_##name,
#include "grad_fns.def"
#undef FASTT_GRAD_FN
};

void apply_formula(Node& n, Tensor* go, Tensor* gi) {
  kFormulas[size_t(n.fn)](n, go, gi);
}

}  // namespace autograd
}  // namespace fastt

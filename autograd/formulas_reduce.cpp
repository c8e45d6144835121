// Backward formulas of the reductions, scans and softmax (recorded by
// sum, mean, prod, amax/amin, max/min(dim), var/std(_mean), norm,
// logsumexp, cumsum/cumprod, softmax/log_softmax in formulas.cpp). A
// reduction's record keeps the input's shape in a0, the reduced dims,
// sorted, in a1 (nd1 of them) and keepdim in i0; a scan's or softmax's
// keeps its dim in i0.
#include <cmath>

#include "autograd/formulas.h"
#include "csrc/ops.h"
#include "csrc/ops/nn.h"

namespace fastt {
namespace autograd {
namespace {

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

Tensor zeros_of(IntList shape, const Node& n, int k = 0) {
  return fastt::zeros(shape, n.dtypes[k], n.device);
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

}  // namespace

// ---- reductions ----
// Formulas of GradFns that share a body call one helper, which tests n.fn.
static void sum_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  gi[0] = expand_reduced(g, n, n.i0);
  if (gi[0].dtype() != n.dtypes[0]) gi[0] = gi[0].to(n.dtypes[0]);
}
FASTT_FORMULA(Sum) { sum_grad(n, go, gi); }
FASTT_FORMULA(SumAll) { sum_grad(n, go, gi); }
static void mean_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  gi[0] = fastt::div(expand_reduced(g, n, n.i0),
                     Scalar(reduced_count(n)));
  if (gi[0].dtype() != n.dtypes[0]) gi[0] = gi[0].to(n.dtypes[0]);
}
FASTT_FORMULA(Mean) { mean_grad(n, go, gi); }
FASTT_FORMULA(MeanAll) { mean_grad(n, go, gi); }
// prod, cumprod: polynomials in x, so the complex gradient is the real
// formula's with x (and the result) conjugated.
FASTT_FORMULA(Prod) {
  const Tensor& g = go[0];
  Tensor x = conj_physical(n.unpack(0));
  Tensor ge = expand_reduced(g, n, n.i0);
  if (x.dim() == 0) {
    gi[0] = g;
  } else if (n.i1) {
    gi[0] = fastt::mul(ge, prod_others(x, n.a1[0]));
  } else {
    Tensor flat = x.reshape({-1});
    gi[0] = fastt::mul(ge, prod_others(flat, 0).reshape(x.sizes()));
  }
}
// amax, amin: the gradient split evenly among tied extremes.
static void amax_amin_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0), out = n.unpack(1);
  Tensor mask = fastt::eq(x, expand_reduced(out, n, n.i0));
  Tensor count = fastt::sum(mask, IntList(n.a1, size_t(n.nd1)), true);
  gi[0] = fastt::div(fastt::where(mask, expand_reduced(g, n, n.i0),
                                  Scalar(0)),
                     count);
}
FASTT_FORMULA(Amax) { amax_amin_grad(n, go, gi); }
FASTT_FORMULA(Amin) { amax_amin_grad(n, go, gi); }
// max/min(dim) values: scattered back through the saved indices.
static void max_min_dim_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
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
}
FASTT_FORMULA(MaxDim) { max_min_dim_grad(n, go, gi); }
FASTT_FORMULA(MinDim) { max_min_dim_grad(n, go, gi); }
// var, std and var_mean, std_mean (go[1]: the mean's gradient).
static void var_std_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
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
}
FASTT_FORMULA(Var) { var_std_grad(n, go, gi); }
FASTT_FORMULA(Std) { var_std_grad(n, go, gi); }
FASTT_FORMULA(VarMean) { var_std_grad(n, go, gi); }
FASTT_FORMULA(StdMean) { var_std_grad(n, go, gi); }
FASTT_FORMULA(Norm) {
  const Tensor& g = go[0];
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
}
FASTT_FORMULA(Logsumexp) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0), out = expand_reduced(n.unpack(1), n, n.i0);
  gi[0] = fastt::mul(expand_reduced(g, n, n.i0),
                     conj_physical(fastt::exp(fastt::sub(x, out))));
}
FASTT_FORMULA(Cumsum) {
  const Tensor& g = go[0];
  gi[0] = g.dim() == 0 ? g : reverse_cumsum(g, n.i0);
  if (gi[0].dtype() != n.dtypes[0]) gi[0] = gi[0].to(n.dtypes[0]);
}
FASTT_FORMULA(Cumprod) {
  const Tensor& g = go[0];
  Tensor x = conj_physical(n.unpack(0)), out = conj_physical(n.unpack(1));
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
}
// softmax(x, dtype=...): the gradient in x's dtype, as torch's.
static Tensor in_input_dtype(const Node& n, Tensor g) {
  return g.dtype() == n.dtypes[0] ? g : g.to(n.dtypes[0]);
}
// A complex input reaches these through softmax(x, dtype=<real>) (the
// result is real; in_input_dtype makes the gradient complex with a zero
// imaginary part, as torch's cast); a complex result takes conj(y), the
// holomorphic rule (torch's CPU has no complex softmax kernel).
FASTT_FORMULA(Softmax) {
  const Tensor& g = go[0];
  Tensor y = n.unpack(0);
  if (!grad_enabled() && g.dtype() == y.dtype() && !is_complex(y.dtype())) {
    gi[0] = in_input_dtype(n, fastt::softmax_backward(g, y, n.i0));
    return;
  }
  if (is_complex(y.dtype())) y = conj_physical(y);
  Tensor s = fastt::sum(fastt::mul(g, y), IntList(n.i0), true);
  gi[0] = in_input_dtype(n, fastt::mul(y, fastt::sub(g, s)));
}
FASTT_FORMULA(LogSoftmax) {
  const Tensor& g = go[0];
  Tensor y = n.unpack(0);
  if (!grad_enabled() && g.dtype() == y.dtype() && !is_complex(y.dtype())) {
    gi[0] = in_input_dtype(n, fastt::log_softmax_backward(g, y, n.i0));
    return;
  }
  Tensor s = fastt::sum(g, IntList(n.i0), true);
  Tensor e = fastt::exp(y);
  if (is_complex(e.dtype())) e = conj_physical(e);
  gi[0] = in_input_dtype(n, fastt::sub(g, fastt::mul(e, s)));
}

}  // namespace autograd
}  // namespace fastt

// The fused nn ops (csrc/ops/nn.h) against naive double references written
// here, plus central-difference gradients in float64 for every backward.
// Add a case per op: reference, odd shapes, layouts, dtypes, errors.
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/nn.h"
#include "csrc/parallel.h"

using namespace fastt;
using fastt::test::values;

namespace {

using Vec = std::vector<double>;

Tensor rand_t(IntList shape, DType dt, unsigned seed, double lo = -2,
              double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Vec v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return test::make(v, shape, dt);
}

Tensor targets(IntList shape, int64_t classes, unsigned seed,
               int64_t ignore = -100, int every = 0) {
  std::mt19937 rng(seed);
  Tensor t = Tensor::empty(shape, DType::Int64);
  int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = (every && i % every == 1) ? ignore
                                      : int64_t(rng() % uint32_t(classes));
  return t;
}

double tol(DType dt) {
  switch (dt) {
    case DType::Float16: return 4e-3;
    case DType::BFloat16: return 3e-2;
    case DType::Float32: return 2e-5;
    default: return 1e-10;
  }
}

void check_close(const Tensor& got, const Vec& want, double rtol,
                 double atol) {
  Vec g = values(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    REQUIRE(test::close(g[i], want[i], rtol, atol));
  }
}

// d/dx sum(f(x) * probe) by central differences, x float64 (dense copy).
Vec numeric_grad(const std::function<Tensor(const Tensor&)>& f,
                 const Tensor& x, const Vec& probe) {
  Tensor xc = x.to(DType::Float64, true).contiguous();
  double* p = xc.data_ptr<double>();
  Vec g(static_cast<size_t>(xc.numel()));
  const double h = 1e-6;
  for (int64_t i = 0; i < xc.numel(); ++i) {
    const double keep = p[i];
    p[i] = keep + h;
    Vec up = values(f(xc));
    p[i] = keep - h;
    Vec dn = values(f(xc));
    p[i] = keep;
    double s = 0;
    for (size_t k = 0; k < up.size(); ++k)
      s += (up[k] - dn[k]) * (probe.empty() ? 1.0 : probe[k]);
    g[size_t(i)] = s / (2 * h);
  }
  return g;
}

// ---- references ----
struct LnRef {
  Vec out, mean, rstd;
};
LnRef ref_layer_norm(const Vec& x, int64_t rows, int64_t cols, const Vec& w,
                     const Vec& b, double eps) {
  LnRef r;
  for (int64_t i = 0; i < rows; ++i) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < cols; ++j) m += x[size_t(i * cols + j)];
    m /= double(cols);
    for (int64_t j = 0; j < cols; ++j) {
      double d = x[size_t(i * cols + j)] - m;
      v += d * d;
    }
    v /= double(cols);
    const double rs = 1 / std::sqrt(v + eps);
    r.mean.push_back(m);
    r.rstd.push_back(rs);
    for (int64_t j = 0; j < cols; ++j) {
      double y = (x[size_t(i * cols + j)] - m) * rs;
      if (!w.empty()) y *= w[size_t(j)];
      if (!b.empty()) y += b[size_t(j)];
      r.out.push_back(y);
    }
  }
  return r;
}

// Per position loss terms, torch's definition: nll and smoothing sums from
// log_softmax computed naively.
struct CeRef {
  Vec loss;  // per position (reduction none)
  Vec lse;
  double total = 0, weight = 0;
  double reduced(int64_t reduction) const {
    return reduction == kReductionMean ? total / weight : total;
  }
};
CeRef ref_cross_entropy(const Vec& x, const std::vector<int64_t>& tgt,
                        int64_t n, int64_t c, int64_t inner, const Vec& w,
                        int64_t ignore, double ls) {
  CeRef r;
  for (int64_t a = 0; a < n; ++a)
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return x[size_t((a * c + k) * inner + j)]; };
      double m = -INFINITY;
      for (int64_t k = 0; k < c; ++k) m = std::max(m, at(k));
      double s = 0;
      for (int64_t k = 0; k < c; ++k) s += std::exp(at(k) - m);
      const double lse = m + std::log(s);
      r.lse.push_back(lse);
      const int64_t t = tgt[size_t(a * inner + j)];
      if (t == ignore) {
        r.loss.push_back(0);
        continue;
      }
      const double wt = w.empty() ? 1 : w[size_t(t)];
      double smooth = 0;
      for (int64_t k = 0; k < c; ++k)
        smooth -= (w.empty() ? 1 : w[size_t(k)]) * (at(k) - lse);
      const double l =
          (1 - ls) * wt * (lse - at(t)) + ls / double(c) * smooth;
      r.loss.push_back(l);
      r.total += l;
      r.weight += wt;
    }
  return r;
}

std::vector<int64_t> ints(const Tensor& t) {
  Vec v = values(t);
  return std::vector<int64_t>(v.begin(), v.end());
}

// torch.finfo(dt).eps, rms_norm's default.
double finfo_eps(DType dt) {
  switch (dt) {
    case DType::Float16: return 0.0009765625;
    case DType::BFloat16: return 0.0078125;
    case DType::Float64: return 2.220446049250313e-16;
    default: return 1.1920928955078125e-07;
  }
}

const DType kFloatTypes[] = {DType::Float32, DType::Float64, DType::Float16,
                             DType::BFloat16};

}  // namespace

// ---------------------------------------------------------------------------
TEST_CASE("nn: softmax and log_softmax backward", "[nn]") {
  for (DType dt : kFloatTypes) {
    for (int64_t dim : {-1, 0, 1}) {
      Tensor x = rand_t({45, 65}, dt, 3);
      Tensor g = rand_t({45, 65}, dt, 4);
      const int64_t d = dim < 0 ? 1 : dim;
      const int64_t rows = d == 1 ? 45 : 65, len = d == 1 ? 65 : 45;
      Vec xv = values(x), gv = values(g);
      auto idx = [&](int64_t r, int64_t k) {
        return size_t(d == 1 ? r * 65 + k : k * 65 + r);
      };
      // Forward softmax/log_softmax of x in double, then the backward.
      Vec y(xv.size()), ly(xv.size()), gs(xv.size()), gl(xv.size());
      for (int64_t r = 0; r < rows; ++r) {
        double m = -INFINITY, s = 0;
        for (int64_t k = 0; k < len; ++k) m = std::max(m, xv[idx(r, k)]);
        for (int64_t k = 0; k < len; ++k) s += std::exp(xv[idx(r, k)] - m);
        for (int64_t k = 0; k < len; ++k) {
          y[idx(r, k)] = test::round_to(dt, std::exp(xv[idx(r, k)] - m) / s);
          ly[idx(r, k)] =
              test::round_to(dt, xv[idx(r, k)] - m - std::log(s));
        }
        double sgy = 0, sg = 0;
        for (int64_t k = 0; k < len; ++k) {
          sgy += gv[idx(r, k)] * y[idx(r, k)];
          sg += gv[idx(r, k)];
        }
        for (int64_t k = 0; k < len; ++k) {
          gs[idx(r, k)] = y[idx(r, k)] * (gv[idx(r, k)] - sgy);
          gl[idx(r, k)] = gv[idx(r, k)] - std::exp(ly[idx(r, k)]) * sg;
        }
      }
      Tensor yt = test::make(y, {45, 65}, dt);
      Tensor lyt = test::make(ly, {45, 65}, dt);
      const double rt = tol(dt) * 4;
      check_close(softmax_backward(g, yt, dim), gs, rt, rt);
      check_close(log_softmax_backward(g, lyt, dim), gl, rt, rt);
      // Non-contiguous grad/output give the same values.
      Tensor gt = g.t().contiguous().t();
      REQUIRE_FALSE(gt.is_contiguous());
      check_close(softmax_backward(gt, yt.t().contiguous().t(), dim), gs, rt,
                  rt);
    }
  }
  // 3-D, middle dim, against numeric gradients of softmax itself.
  Tensor x = rand_t({3, 5, 4}, DType::Float64, 9);
  Vec probe = values(rand_t({3, 5, 4}, DType::Float64, 10));
  Tensor probe_t = test::make(probe, {3, 5, 4}, DType::Float64);
  auto sm = [](const Tensor& v) {  // softmax over dim 1 in double
    Vec a = values(v), o(a.size());
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 4; ++k) {
        double s = 0;
        auto at = [&](int j) { return size_t(i * 20 + j * 4 + k); };
        for (int j = 0; j < 5; ++j) s += std::exp(a[at(j)]);
        for (int j = 0; j < 5; ++j) o[at(j)] = std::exp(a[at(j)]) / s;
      }
    return test::make(o, {3, 5, 4}, DType::Float64);
  };
  Vec num = numeric_grad(sm, x, probe);
  check_close(softmax_backward(probe_t, sm(x), 1), num, 1e-6, 1e-8);
  auto lsm = [&](const Tensor& v) {
    Vec o = values(sm(v));
    for (auto& e : o) e = std::log(e);
    return test::make(o, {3, 5, 4}, DType::Float64);
  };
  num = numeric_grad(lsm, x, probe);
  check_close(log_softmax_backward(probe_t, lsm(x), -2), num, 1e-6, 1e-8);
  // 0-d, empty, errors.
  Tensor s0 = test::scalar_tensor(0.5, DType::Float32);
  check_close(softmax_backward(s0, test::scalar_tensor(1, DType::Float32), 0),
              {0.0}, 0, 1e-7);
  REQUIRE(softmax_backward(Tensor::empty({0, 3}, DType::Float32),
                           Tensor::empty({0, 3}, DType::Float32), 1)
              .numel() == 0);
  REQUIRE_THROWS_AS(softmax_backward(x, x, 3), IndexError);
  REQUIRE_THROWS_AS(softmax_backward(x, x.narrow(0, 0, 2), 1), RuntimeError);
  REQUIRE_THROWS_AS(softmax_backward(x, x.to(DType::Float32), 1),
                    RuntimeError);
  Tensor xi = Tensor::empty({2, 3}, DType::Int64);
  REQUIRE_THROWS_AS(log_softmax_backward(xi, xi, 1), NotImplementedError);
}

TEST_CASE("nn: layer_norm forward against a naive reference", "[nn]") {
  for (DType dt : kFloatTypes) {
    Tensor x = rand_t({45, 65}, dt, 1, -3, 5);
    Tensor w = rand_t({65}, dt, 2);
    Tensor b = rand_t({65}, dt, 3);
    for (int variant = 0; variant < 4; ++variant) {
      Tensor wv = variant & 1 ? w : Tensor();
      Tensor bv = variant & 2 ? b : Tensor();
      auto [out, mean, rstd] = layer_norm(x, {65}, wv, bv, 1e-5);
      LnRef r = ref_layer_norm(values(x), 45, 65,
                               wv.defined() ? values(w) : Vec(),
                               bv.defined() ? values(b) : Vec(), 1e-5);
      REQUIRE(out.dtype() == dt);
      REQUIRE(mean.sizes().equals({45, 1}));
      REQUIRE(rstd.sizes().equals({45, 1}));
      REQUIRE(mean.dtype() == dt);
      check_close(out, r.out, tol(dt) * 4, tol(dt) * 4);
      check_close(mean, r.mean, tol(dt), tol(dt));
      check_close(rstd, r.rstd, tol(dt), tol(dt));
    }
  }
  // Several normalized dims, non-contiguous input, big offset (stability).
  Tensor x = rand_t({7, 3, 5}, DType::Float32, 5);
  Tensor xt = x.transpose(0, 2).contiguous().transpose(0, 2);
  REQUIRE_FALSE(xt.is_contiguous());
  Tensor w = rand_t({3, 5}, DType::Float32, 6);
  auto [out, mean, rstd] = layer_norm(xt, {3, 5}, w, Tensor(), 1e-3);
  REQUIRE(mean.sizes().equals({7, 1, 1}));
  LnRef r = ref_layer_norm(values(x), 7, 15, values(w), Vec(), 1e-3);
  check_close(out, r.out, 1e-5, 1e-5);
  Vec big = values(x);
  for (auto& v : big) v = 1e4 + v;
  Tensor xb = test::make(big, {7, 3, 5}, DType::Float32);
  auto [ob, mb, rb] = layer_norm(xb, {3, 5}, Tensor(), Tensor(), 1e-5);
  r = ref_layer_norm(values(xb), 7, 15, Vec(), Vec(), 1e-5);
  check_close(ob, r.out, 2e-3, 2e-3);
  // Empty batch and a 1-D input.
  auto [oe, me, re] =
      layer_norm(Tensor::empty({0, 4}, DType::Float32), {4}, Tensor(),
                 Tensor(), 1e-5);
  REQUIRE(oe.sizes().equals({0, 4}));
  REQUIRE(me.sizes().equals({0, 1}));
  Tensor x1 = rand_t({9}, DType::Float64, 8);
  auto [o1, m1, r1] = layer_norm(x1, {9}, Tensor(), Tensor(), 1e-5);
  REQUIRE(m1.sizes().equals({1}));
  check_close(o1, ref_layer_norm(values(x1), 1, 9, {}, {}, 1e-5).out, 1e-12,
              1e-12);
}

TEST_CASE("nn: layer_norm backward", "[nn]") {
  // float64: against central differences of the forward.
  Tensor x = rand_t({6, 2, 7}, DType::Float64, 11);
  Tensor w = rand_t({2, 7}, DType::Float64, 12);
  Tensor b = rand_t({2, 7}, DType::Float64, 13);
  Vec probe = values(rand_t({6, 2, 7}, DType::Float64, 14));
  Tensor dy = test::make(probe, {6, 2, 7}, DType::Float64);
  auto [out, mean, rstd] = layer_norm(x, {2, 7}, w, b, 1e-5);
  auto [dx, dw, db] = layer_norm_backward(dy, x, {2, 7}, mean, rstd, w, b,
                                          {true, true, true});
  auto fx = [&](const Tensor& v) {
    return std::get<0>(layer_norm(v, {2, 7}, w, b, 1e-5));
  };
  auto fw = [&](const Tensor& v) {
    return std::get<0>(layer_norm(x, {2, 7}, v, b, 1e-5));
  };
  auto fb = [&](const Tensor& v) {
    return std::get<0>(layer_norm(x, {2, 7}, w, v, 1e-5));
  };
  check_close(dx, numeric_grad(fx, x, probe), 1e-6, 1e-7);
  check_close(dw, numeric_grad(fw, w, probe), 1e-6, 1e-7);
  check_close(db, numeric_grad(fb, b, probe), 1e-6, 1e-7);
  REQUIRE(dw.sizes().equals({2, 7}));
  // Masks and absent weight/bias.
  auto [dx2, dw2, db2] = layer_norm_backward(dy, x, {2, 7}, mean, rstd, w, b,
                                             {false, true, false});
  REQUIRE_FALSE(dx2.defined());
  REQUIRE_FALSE(db2.defined());
  check_close(dw2, values(dw), 1e-12, 1e-12);
  auto [o3, m3, r3] = layer_norm(x, {2, 7}, Tensor(), Tensor(), 1e-5);
  auto [dx3, dw3, db3] = layer_norm_backward(
      dy, x, {2, 7}, m3, r3, Tensor(), Tensor(), {true, true, true});
  REQUIRE_FALSE(dw3.defined());
  REQUIRE_FALSE(db3.defined());
  auto f3 = [&](const Tensor& v) {
    return std::get<0>(layer_norm(v, {2, 7}, Tensor(), Tensor(), 1e-5));
  };
  check_close(dx3, numeric_grad(f3, x, probe), 1e-6, 1e-7);

  // Lower precisions and odd shapes against the float64 result.
  for (DType dt : kFloatTypes) {
    Tensor x45 = rand_t({45, 65}, dt, 21);
    Tensor w45 = rand_t({65}, dt, 22);
    Tensor b45 = rand_t({65}, dt, 23);
    Tensor g45 = rand_t({45, 65}, dt, 24);
    auto [o, m, r] = layer_norm(x45, {65}, w45, b45, 1e-5);
    auto [gx, gw, gb] = layer_norm_backward(g45.t().contiguous().t(), x45,
                                            {65}, m, r, w45, b45,
                                            {true, true, true});
    Tensor X = x45.to(DType::Float64), W = w45.to(DType::Float64);
    Tensor Bv = b45.to(DType::Float64), G = g45.to(DType::Float64);
    auto [O, M, R] = layer_norm(X, {65}, W, Bv, 1e-5);
    auto [GX, GW, GB] =
        layer_norm_backward(G, X, {65}, M, R, W, Bv, {true, true, true});
    const double t = dt == DType::BFloat16 ? 0.1 : tol(dt) * 20;
    check_close(gx, values(GX), t, t);
    check_close(gw, values(GW), t, t * 10);
    check_close(gb, values(GB), t, t * 10);
  }
  // Empty batch: zero weight/bias grads.
  Tensor xe = Tensor::empty({0, 3}, DType::Float32);
  Tensor we = rand_t({3}, DType::Float32, 1);
  auto [oe, me, re] = layer_norm(xe, {3}, we, we, 1e-5);
  auto [gxe, gwe, gbe] =
      layer_norm_backward(xe, xe, {3}, me, re, we, we, {true, true, true});
  check_close(gwe, {0, 0, 0}, 0, 0);
  check_close(gbe, {0, 0, 0}, 0, 0);
}

TEST_CASE("nn: layer_norm errors", "[nn]") {
  Tensor x = rand_t({4, 3}, DType::Float32, 1);
  REQUIRE_THROWS_AS(layer_norm(x, {4}, Tensor(), Tensor()), RuntimeError);
  REQUIRE_THROWS_AS(layer_norm(x, IntList(), Tensor(), Tensor()),
                    RuntimeError);
  REQUIRE_THROWS_AS(layer_norm(x, {3}, rand_t({4}, DType::Float32, 2),
                               Tensor()),
                    RuntimeError);
  REQUIRE_THROWS_AS(layer_norm(x, {3}, Tensor(),
                               rand_t({3}, DType::Float64, 2)),
                    RuntimeError);
  REQUIRE_THROWS_AS(layer_norm(x, {2, 4, 3}, Tensor(), Tensor()),
                    RuntimeError);
  Tensor xi = Tensor::empty({4, 3}, DType::Int64);
  REQUIRE_THROWS_AS(layer_norm(xi, {3}, Tensor(), Tensor()),
                    NotImplementedError);
  REQUIRE_THROWS_AS(layer_norm(Tensor(), {3}, Tensor(), Tensor()),
                    ValueError);
  auto [o, m, r] = layer_norm(x, {3}, Tensor(), Tensor());
  REQUIRE_THROWS_AS(layer_norm_backward(x.narrow(0, 0, 2), x, {3}, m, r,
                                        Tensor(), Tensor(),
                                        {true, false, false}),
                    RuntimeError);
  REQUIRE_THROWS_AS(layer_norm_backward(x, x, {3}, m.narrow(0, 0, 2), r,
                                        Tensor(), Tensor(),
                                        {true, false, false}),
                    RuntimeError);
  std::string msg;
  try {
    layer_norm(x, {4}, Tensor(), Tensor());
  } catch (const RuntimeError& e) {
    msg = e.what();
  }
  REQUIRE(msg.find("normalized_shape=[4]") != std::string::npos);
}

TEST_CASE("nn: rms_norm forward and backward", "[nn]") {
  for (DType dt : kFloatTypes) {
    Tensor x = rand_t({45, 65}, dt, 31);
    Tensor w = rand_t({65}, dt, 32);
    for (bool with_w : {false, true}) {
      Tensor wv = with_w ? w : Tensor();
      auto [out, rstd] = rms_norm(x, {65}, wv, std::nullopt);
      const double eps = finfo_eps(dt);
      Vec xv = values(x), wvv = values(w), ro, rr;
      for (int64_t i = 0; i < 45; ++i) {
        double s = 0;
        for (int64_t j = 0; j < 65; ++j)
          s += xv[size_t(i * 65 + j)] * xv[size_t(i * 65 + j)];
        const double rs = 1 / std::sqrt(s / 65 + eps);
        rr.push_back(rs);
        for (int64_t j = 0; j < 65; ++j)
          ro.push_back(xv[size_t(i * 65 + j)] * rs *
                       (with_w ? wvv[size_t(j)] : 1));
      }
      REQUIRE(rstd.sizes().equals({45, 1}));
      REQUIRE(rstd.dtype() == (dt == DType::Float64 ? DType::Float64
                                                    : DType::Float32));
      check_close(out, ro, tol(dt) * 4, tol(dt) * 4);
      check_close(rstd, rr, tol(dt), tol(dt));
    }
  }
  // Backward: float64 numeric gradients, with and without weight.
  Tensor x = rand_t({5, 3, 4}, DType::Float64, 41);
  Tensor w = rand_t({3, 4}, DType::Float64, 42);
  Vec probe = values(rand_t({5, 3, 4}, DType::Float64, 43));
  Tensor dy = test::make(probe, {5, 3, 4}, DType::Float64);
  for (bool with_w : {false, true}) {
    Tensor wv = with_w ? w : Tensor();
    auto [out, rstd] = rms_norm(x, {3, 4}, wv, 1e-6);
    auto [dx, dw] = rms_norm_backward(dy, x.transpose(0, 1).contiguous()
                                              .transpose(0, 1),
                                      {3, 4}, rstd, wv, {true, true});
    auto fx = [&](const Tensor& v) {
      return std::get<0>(rms_norm(v, {3, 4}, wv, 1e-6));
    };
    check_close(dx, numeric_grad(fx, x, probe), 1e-6, 1e-7);
    if (with_w) {
      auto fw = [&](const Tensor& v) {
        return std::get<0>(rms_norm(x, {3, 4}, v, 1e-6));
      };
      check_close(dw, numeric_grad(fw, w, probe), 1e-6, 1e-7);
    } else {
      REQUIRE_FALSE(dw.defined());
    }
  }
  // 16-bit inputs against the float64 result.
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32}) {
    Tensor xh = rand_t({45, 65}, dt, 51), wh = rand_t({65}, dt, 52);
    Tensor gh = rand_t({45, 65}, dt, 53);
    auto [o, r] = rms_norm(xh, {65}, wh);
    auto [gx, gw] = rms_norm_backward(gh, xh, {65}, r, wh, {true, true});
    Tensor X = xh.to(DType::Float64), W = wh.to(DType::Float64);
    auto [O, R] = rms_norm(X, {65}, W, finfo_eps(dt));
    auto [GX, GW] = rms_norm_backward(gh.to(DType::Float64), X, {65}, R, W,
                                      {true, true});
    const double t = dt == DType::BFloat16 ? 0.1 : tol(dt) * 20;
    check_close(gx, values(GX), t, t);
    check_close(gw, values(GW), t, t * 10);
  }
  Tensor x2 = rand_t({4, 3}, DType::Float32, 1);
  REQUIRE_THROWS_AS(rms_norm(x2, {4}, Tensor()), RuntimeError);
  auto [o2, r2] = rms_norm(x2, {3}, Tensor());
  REQUIRE_THROWS_AS(rms_norm_backward(x2, x2, {3}, r2.to(DType::Float64),
                                      Tensor(), {true, false}),
                    RuntimeError);
}

TEST_CASE("nn: cross_entropy forward", "[nn]") {
  struct Case {
    std::vector<int64_t> shape;  // logits
    bool weighted;
    int64_t reduction, ignore;
    double ls;
    int ignore_every;
  };
  const Case cases[] = {
      {{45, 65}, false, kReductionMean, -100, 0.0, 0},
      {{45, 65}, true, kReductionMean, -100, 0.0, 0},
      {{45, 65}, true, kReductionMean, 3, 0.1, 4},
      {{45, 65}, false, kReductionSum, -100, 0.25, 3},
      {{45, 65}, true, kReductionNone, -1, 0.3, 5},
      {{7, 10}, false, kReductionNone, -100, 0.0, 0},
      {{3, 5, 4, 2}, true, kReductionMean, -100, 0.2, 3},
      {{3, 5, 70}, false, kReductionNone, 0, 0.1, 0},
      {{2, 6, 130}, true, kReductionSum, -100, 0.0, 7},
  };
  for (DType dt : kFloatTypes) {
    for (const Case& c : cases) {
      IntList shape(c.shape);
      const int64_t n = c.shape[0], C = c.shape[1];
      int64_t inner = 1;
      std::vector<int64_t> tshape{n};
      for (size_t d = 2; d < c.shape.size(); ++d) {
        inner *= c.shape[d];
        tshape.push_back(c.shape[d]);
      }
      Tensor x = rand_t(shape, dt, 61, -4, 4);
      Tensor t = targets(tshape, C, 62, c.ignore, c.ignore_every);
      Tensor w = c.weighted ? rand_t({C}, dt, 63, 0.1, 2) : Tensor();
      auto [loss, lse] =
          cross_entropy(x, t, w, c.reduction, c.ignore, c.ls);
      CeRef r = ref_cross_entropy(values(x), ints(t), n, C, inner,
                                  c.weighted ? values(w) : Vec(), c.ignore,
                                  c.ls);
      INFO("dtype " << dtype_name(dt) << " shape " << shape_str(shape)
                    << " reduction " << c.reduction);
      const double tl = tol(dt) * 10;
      check_close(lse, r.lse, tol(dt), tol(dt));
      REQUIRE(lse.sizes().equals(tshape));
      if (c.reduction == kReductionNone) {
        REQUIRE(loss.sizes().equals(tshape));
        check_close(loss, r.loss, tl, tl);
      } else {
        REQUIRE(loss.dim() == 0);
        check_close(loss, {r.reduced(c.reduction)}, tl, tl);
      }
    }
  }
  // 1-D logits with a 0-d target; non-contiguous logits.
  Tensor x1 = rand_t({9}, DType::Float32, 70);
  Tensor t1 = Tensor::empty({}, DType::Int64);
  t1.data_ptr<int64_t>()[0] = 4;
  auto [l1, s1] = cross_entropy(x1, t1, Tensor());
  check_close(l1, {ref_cross_entropy(values(x1), {4}, 1, 9, 1, {}, -100, 0)
                       .total},
              1e-5, 1e-5);
  Tensor xt = rand_t({65, 45}, DType::Float32, 71).t();
  Tensor tt = targets({45}, 65, 72);
  auto [lt, st] = cross_entropy(xt, tt, Tensor(), kReductionSum);
  check_close(lt, {ref_cross_entropy(values(xt), ints(tt), 45, 65, 1, {},
                                     -100, 0).total},
              1e-5, 1e-4);
  // Huge logits stay finite and exact.
  Vec big(30);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = (i % 2 ? 1e4 : -1e4) + double(i);
  Tensor xb = test::make(big, {3, 10}, DType::Float32);
  Tensor tb = targets({3}, 10, 73);
  auto [lb, sb] = cross_entropy(xb, tb, Tensor(), kReductionNone, -100, 0.1);
  check_close(lb, ref_cross_entropy(values(xb), ints(tb), 3, 10, 1, {}, -100,
                                    0.1).loss,
              1e-5, 1e-3);
  // Empty batch: mean is NaN, sum is 0; all ignored: NaN.
  Tensor xe = Tensor::empty({0, 5}, DType::Float32);
  Tensor te = Tensor::empty({0}, DType::Int64);
  REQUIRE(std::isnan(values(std::get<0>(cross_entropy(xe, te, Tensor())))[0]));
  check_close(std::get<0>(cross_entropy(xe, te, Tensor(), kReductionSum)),
              {0}, 0, 0);
  Tensor ti = targets({4}, 5, 1);
  for (int i = 0; i < 4; ++i) ti.data_ptr<int64_t>()[i] = -100;
  REQUIRE(std::isnan(values(std::get<0>(
      cross_entropy(rand_t({4, 5}, DType::Float32, 2), ti, Tensor())))[0]));
}

TEST_CASE("nn: cross_entropy backward", "[nn]") {
  struct Case {
    std::vector<int64_t> shape;
    bool weighted;
    int64_t reduction;
    double ls;
    int ignore_every;
  };
  const Case cases[] = {
      {{4, 5}, false, kReductionMean, 0.0, 0},
      {{4, 5}, true, kReductionMean, 0.2, 3},
      {{4, 5}, true, kReductionSum, 0.0, 0},
      {{4, 5}, false, kReductionNone, 0.3, 3},
      {{2, 3, 3, 2}, true, kReductionMean, 0.1, 4},
      {{2, 4, 3}, false, kReductionNone, 0.0, 0},
  };
  for (const Case& c : cases) {
    IntList shape(c.shape);
    const int64_t n = c.shape[0], C = c.shape[1];
    std::vector<int64_t> tshape{n};
    for (size_t d = 2; d < c.shape.size(); ++d) tshape.push_back(c.shape[d]);
    Tensor x = rand_t(shape, DType::Float64, 81, -3, 3);
    Tensor t = targets(tshape, C, 82, -100, c.ignore_every);
    Tensor w = c.weighted ? rand_t({C}, DType::Float64, 83, 0.1, 2) : Tensor();
    auto f = [&](const Tensor& v) {
      return std::get<0>(cross_entropy(v, t, w, c.reduction, -100, c.ls));
    };
    auto [loss, lse] = cross_entropy(x, t, w, c.reduction, -100, c.ls);
    Tensor g = c.reduction == kReductionNone
                   ? rand_t(tshape, DType::Float64, 84)
                   : test::scalar_tensor(0.75, DType::Float64);
    Vec probe = values(g);
    Tensor dx =
        cross_entropy_backward(g, x, t, w, c.reduction, -100, c.ls, lse);
    INFO("shape " << shape_str(shape) << " reduction " << c.reduction);
    REQUIRE(dx.sizes().equals(shape));
    check_close(dx, numeric_grad(f, x, probe), 1e-6, 1e-8);
  }
  // float32 / 16-bit, 45x65 and a strided class dim, against float64.
  for (DType dt : kFloatTypes) {
    for (auto shape : {std::vector<int64_t>{45, 65},
                       std::vector<int64_t>{3, 7, 70}}) {
      std::vector<int64_t> tshape{shape[0]};
      if (shape.size() == 3) tshape.push_back(shape[2]);
      Tensor x = rand_t(shape, dt, 91, -4, 4);
      Tensor t = targets(tshape, shape[1], 92, -100, 5);
      Tensor w = rand_t({shape[1]}, dt, 93, 0.1, 2);
      Tensor g = test::scalar_tensor(1.5, dt);
      auto [l, s] = cross_entropy(x, t, w, kReductionMean, -100, 0.15);
      Tensor dx = cross_entropy_backward(g, x, t, w, kReductionMean, -100,
                                         0.15, s);
      Tensor X = x.to(DType::Float64), W = w.to(DType::Float64);
      auto [L, S] = cross_entropy(X, t, W, kReductionMean, -100, 0.15);
      Tensor DX = cross_entropy_backward(g.to(DType::Float64), X, t, W,
                                         kReductionMean, -100, 0.15, S);
      const double tl = dt == DType::BFloat16 ? 2e-2 : tol(dt) * 10;
      check_close(dx, values(DX), tl, tl * 1e-2);
    }
  }
  // Huge logits: the gradient is softmax - onehot, exactly.
  Vec big{1e4, -1e4, 1e4 - 1};
  Tensor xb = test::make(big, {1, 3}, DType::Float32);
  Tensor tb = targets({1}, 1, 1);  // target 0
  auto [lb, sb] = cross_entropy(xb, tb, Tensor(), kReductionSum);
  Tensor gb = cross_entropy_backward(test::scalar_tensor(1, DType::Float32),
                                     xb, tb, Tensor(), kReductionSum, -100, 0,
                                     sb);
  const double e1 = std::exp(-1.0);
  check_close(gb, {1 / (1 + e1) - 1, 0, e1 / (1 + e1)}, 1e-5, 1e-6);
}

TEST_CASE("nn: cross_entropy and nll_loss errors", "[nn]") {
  Tensor x = rand_t({4, 3}, DType::Float32, 1);
  Tensor t = targets({4}, 3, 2);
  t.data_ptr<int64_t>()[2] = 7;
  REQUIRE_THROWS_AS(cross_entropy(x, t, Tensor()), IndexError);
  std::string msg;
  try {
    cross_entropy(x, t, Tensor());
  } catch (const IndexError& e) {
    msg = e.what();
  }
  REQUIRE(msg == "Target 7 is out of bounds.");
  t.data_ptr<int64_t>()[2] = -1;
  REQUIRE_THROWS_AS(nll_loss(x, t, Tensor()), IndexError);
  REQUIRE_NOTHROW(nll_loss(x, t, Tensor(), kReductionMean, -1));
  Tensor ok = targets({4}, 3, 2);
  REQUIRE_THROWS_AS(cross_entropy(x, targets({3}, 3, 2), Tensor()),
                    ValueError);
  REQUIRE_THROWS_AS(cross_entropy(x, ok.to(DType::Int32), Tensor()),
                    RuntimeError);
  REQUIRE_NOTHROW(cross_entropy(x, ok.to(DType::UInt8), Tensor()));
  REQUIRE_THROWS_AS(cross_entropy(x, ok, rand_t({4}, DType::Float32, 3)),
                    RuntimeError);
  REQUIRE_THROWS_AS(cross_entropy(x, ok, rand_t({3}, DType::Float64, 3)),
                    RuntimeError);
  REQUIRE_THROWS_AS(cross_entropy(x, ok, Tensor(), 3), ValueError);
  REQUIRE_THROWS_AS(cross_entropy(x, ok, Tensor(), 1, -100, 1.5),
                    RuntimeError);
  REQUIRE_THROWS_AS(cross_entropy(rand_t({2, 3, 4}, DType::Float32, 1),
                                  targets({2, 5}, 3, 1), Tensor()),
                    RuntimeError);
  REQUIRE_THROWS_AS(cross_entropy(test::scalar_tensor(1, DType::Float32), ok,
                                  Tensor()),
                    RuntimeError);
  REQUIRE_THROWS_AS(cross_entropy(Tensor::empty({4, 3}, DType::Int64), ok,
                                  Tensor()),
                    NotImplementedError);
  REQUIRE_THROWS_AS(reduction_from_name("avg"), ValueError);
  REQUIRE(reduction_from_name("none") == kReductionNone);
  auto [l, s] = cross_entropy(x, ok, Tensor(), kReductionNone);
  REQUIRE_THROWS_AS(cross_entropy_backward(
                        test::scalar_tensor(1, DType::Float32), x, ok,
                        Tensor(), kReductionNone, -100, 0, s),
                    RuntimeError);
  REQUIRE_THROWS_AS(cross_entropy_backward(l, x, ok, Tensor(), kReductionNone,
                                           -100, 0, s.to(DType::Float32)),
                    RuntimeError);
  Tensor bad = targets({4}, 3, 2);
  bad.data_ptr<int64_t>()[0] = 3;
  REQUIRE_THROWS_AS(cross_entropy_backward(l, x, bad, Tensor(),
                                           kReductionNone, -100, 0, s),
                    IndexError);
}

TEST_CASE("nn: nll_loss forward and backward", "[nn]") {
  for (DType dt : kFloatTypes) {
    for (int64_t red : {kReductionNone, kReductionMean, kReductionSum}) {
      for (bool weighted : {false, true}) {
        Tensor x = rand_t({45, 65}, dt, 101, -5, 0);
        Tensor t = targets({45}, 65, 102, 2, 6);
        Tensor w = weighted ? rand_t({65}, dt, 103, 0.1, 2) : Tensor();
        auto [loss, tw] = nll_loss(x, t, w, red, 2);
        Vec xv = values(x), wv = weighted ? values(w) : Vec();
        auto tv = ints(t);
        Vec per;
        double total = 0, wsum = 0;
        for (int64_t i = 0; i < 45; ++i) {
          const int64_t c = tv[size_t(i)];
          if (c == 2) {
            per.push_back(0);
            continue;
          }
          const double wt = weighted ? wv[size_t(c)] : 1;
          per.push_back(-wt * xv[size_t(i * 65 + c)]);
          total += per.back();
          wsum += wt;
        }
        const double tl = tol(dt) * 10;
        if (red == kReductionNone) {
          check_close(loss, per, tl, tl);
          check_close(tw, {0}, 0, 0);
        } else {
          check_close(loss, {red == kReductionMean ? total / wsum : total},
                      tl, tl);
          check_close(tw, {wsum}, tl, tl);
        }
      }
    }
  }
  // Backward: numeric gradients over extra dims.
  for (int64_t red : {kReductionNone, kReductionMean, kReductionSum}) {
    Tensor x = rand_t({2, 4, 3}, DType::Float64, 111);
    Tensor t = targets({2, 3}, 4, 112, -100, 4);
    Tensor w = rand_t({4}, DType::Float64, 113, 0.5, 2);
    auto [loss, tw] = nll_loss(x, t, w, red);
    Tensor g = red == kReductionNone ? rand_t({2, 3}, DType::Float64, 114)
                                     : test::scalar_tensor(2, DType::Float64);
    auto f = [&](const Tensor& v) {
      return std::get<0>(nll_loss(v, t, w, red));
    };
    Tensor dx = nll_loss_backward(g, x, t, w, red, -100, tw);
    check_close(dx, numeric_grad(f, x, values(g)), 1e-6, 1e-8);
  }
  REQUIRE_THROWS_AS(
      nll_loss_backward(test::scalar_tensor(1, DType::Float32),
                        rand_t({2, 3}, DType::Float32, 1), targets({2}, 3, 1),
                        Tensor(), kReductionMean, -100,
                        rand_t({2}, DType::Float32, 1)),
      RuntimeError);
}

TEST_CASE("nn: embedding_backward", "[nn]") {
  for (DType dt : kFloatTypes) {
    Tensor idx = targets({5, 9}, 7, 121);  // duplicates guaranteed
    Tensor g = rand_t({5, 9, 6}, dt, 122);
    for (int64_t pad : {-1, 3}) {
      Tensor out = embedding_backward(g, idx, 7, pad);
      REQUIRE(out.sizes().equals({7, 6}));
      Vec gv = values(g), want(42, 0.0);
      auto iv = ints(idx);
      for (size_t p = 0; p < iv.size(); ++p)
        if (iv[p] != pad)
          for (size_t d = 0; d < 6; ++d)
            want[size_t(iv[p]) * 6 + d] += gv[p * 6 + d];
      check_close(out, want, tol(dt) * 4, tol(dt) * 4);
    }
  }
  // int32 indices, non-contiguous grad, empty indices.
  Tensor idx = targets({4}, 3, 131);
  Tensor g = rand_t({6, 4}, DType::Float32, 132).t();
  Tensor o = embedding_backward(g, idx.to(DType::Int32), 3, -1);
  Vec want(18, 0.0), gv = values(g);
  auto iv = ints(idx);
  for (size_t p = 0; p < 4; ++p)
    for (size_t d = 0; d < 6; ++d) want[size_t(iv[p]) * 6 + d] += gv[p * 6 + d];
  check_close(o, want, 1e-6, 1e-6);
  Tensor oe = embedding_backward(Tensor::empty({0, 5}, DType::Float32),
                                 Tensor::empty({0}, DType::Int64), 4, -1);
  check_close(oe, Vec(20, 0.0), 0, 0);
  REQUIRE_THROWS_AS(embedding_backward(g, idx, 2, -1), IndexError);
  REQUIRE_THROWS_AS(embedding_backward(g, idx.to(DType::Float32), 3, -1),
                    RuntimeError);
  REQUIRE_THROWS_AS(embedding_backward(g.narrow(0, 0, 3), idx, 3, -1),
                    RuntimeError);
}

TEST_CASE("nn: multi-threaded chunks agree with one thread", "[nn]") {
  // Sizes above the grain so rows split over threads and the backward
  // column sums / loss sums are reduced across chunks.
  const int saved = get_num_threads();
  Tensor x = rand_t({700, 100}, DType::Float32, 141, -3, 3);
  Tensor w = rand_t({100}, DType::Float32, 142, 0.1, 2);
  Tensor g = rand_t({700, 100}, DType::Float32, 143);
  Tensor t = targets({700}, 100, 144, -100, 7);
  Tensor x3 = rand_t({4, 100, 90}, DType::Float32, 145);
  Tensor t3 = targets({4, 90}, 100, 146);
  Tensor one = test::scalar_tensor(1, DType::Float32);
  std::vector<std::vector<Vec>> runs;
  for (int threads : {1, 4}) {
    set_num_threads(threads);
    std::vector<Vec> r;
    auto [o, m, rs] = layer_norm(x, {100}, w, w, 1e-5);
    auto [dx, dw, db] = layer_norm_backward(g, x, {100}, m, rs, w, w,
                                            {true, true, true});
    auto [ro, rr] = rms_norm(x, {100}, w);
    auto [rdx, rdw] = rms_norm_backward(g, x, {100}, rr, w, {true, true});
    auto [l, lse] = cross_entropy(x, t, w, kReductionMean, -100, 0.1);
    Tensor cdx = cross_entropy_backward(one, x, t, w, kReductionMean, -100,
                                        0.1, lse);
    auto [l3, lse3] = cross_entropy(x3, t3, Tensor(), kReductionSum);
    Tensor cdx3 = cross_entropy_backward(one, x3, t3, Tensor(),
                                         kReductionSum, -100, 0, lse3);
    for (const Tensor* v : {&o, &dx, &dw, &db, &ro, &rdx, &rdw, &l, &cdx,
                            &l3, &cdx3})
      r.push_back(values(*v));
    r.push_back(values(softmax_backward(g, x, 0)));
    runs.push_back(r);
  }
  set_num_threads(saved);
  for (size_t k = 0; k < runs[0].size(); ++k) {
    INFO("output " << k);
    REQUIRE(runs[0][k].size() == runs[1][k].size());
    for (size_t i = 0; i < runs[0][k].size(); ++i)
      REQUIRE(test::close(runs[1][k][i], runs[0][k][i], 1e-4, 1e-4));
  }
}

// Tests for the fused optimizer steps (csrc/ops/optim.h): every algorithm
// and option against a naive per-element reference in doubles (rounded to
// the dtype wherever torch stores a tensor), over several dtypes, odd,
// 0-d and empty shapes, strided and mixed-dtype lists, the threaded path,
// per-parameter step counts, version bumps and every error path.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/optim.h"
#include "csrc/parallel.h"

using namespace fastt;
using namespace fastt::test;

// Substring matcher under both Catch2 2 and 3.
#if defined(FASTT_CATCH2_V3)
#define HAS_TEXT(s) Catch::Matchers::ContainsSubstring(s)
#else
#define HAS_TEXT(s) Catch::Contains(s)
#endif

namespace {

enum class Algo { Sgd, Adam, Rmsprop, Adagrad };

struct Hyper {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, alpha = 0.99;
  double lr_decay = 0, init_acc = 0;
  bool nesterov = false, maximize = false, amsgrad = false;
  bool decoupled = false, centered = false;
};

// Number of state tensors per parameter (in the kernels' order).
int num_states(Algo a, const Hyper& h) {
  switch (a) {
    case Algo::Sgd: return h.momentum != 0 ? 1 : 0;
    case Algo::Adam: return h.amsgrad ? 3 : 2;
    case Algo::Rmsprop: return 3;  // square_avg, grad_avg, momentum_buffer
    case Algo::Adagrad: return 1;
  }
  return 0;
}
bool state_used(Algo a, const Hyper& h, int s) {
  if (a == Algo::Rmsprop)
    return s == 0 || (s == 1 && h.centered) || (s == 2 && h.momentum > 0);
  return s < num_states(a, h);
}

// One parameter of the reference: values in doubles.
struct RefParam {
  std::vector<double> p, s[3];
  double step = 0;
  bool fresh = true;  // SGD: no momentum buffer yet
};

double lerp_ref(double self, double end, double w) {
  return std::fabs(w) < 0.5 ? self + w * (end - self)
                            : end - (end - self) * (1 - w);
}

// torch.optim's single-tensor step for one parameter, element by element.
void ref_step(Algo algo, const Hyper& h, DType dt, RefParam& r,
              const std::vector<double>& grad) {
  auto R = [dt](double x) { return round_to(dt, x); };
  // torch rounds add()'s alpha to the dtype (matters for the 16-bit ones).
  auto A = [dt](double x) { return round_to(dt, x); };
  r.step += 1;
  const double bc1 = 1 - std::pow(h.beta1, r.step);
  const double bc2 = 1 - std::pow(h.beta2, r.step);
  for (size_t k = 0; k < r.p.size(); ++k) {
    double p = r.p[k], g = h.maximize ? -grad[k] : grad[k];
    switch (algo) {
      case Algo::Sgd:
        if (h.weight_decay != 0) g = R(g + A(h.weight_decay) * p);
        if (h.momentum != 0) {
          double b;
          if (r.fresh) {
            b = g;
          } else {
            b = R(r.s[0][k] * h.momentum);
            b = R(b + A(1 - h.dampening) * g);
          }
          r.s[0][k] = b;
          g = h.nesterov ? R(g + A(h.momentum) * b) : b;
        }
        r.p[k] = R(p + A(-h.lr) * g);
        break;
      case Algo::Adam: {
        if (h.weight_decay != 0) {
          if (h.decoupled) p = R(p * (1 - h.lr * h.weight_decay));
          else g = R(g + A(h.weight_decay) * p);
        }
        double& m = r.s[0][k];
        double& v = r.s[1][k];
        m = R(lerp_ref(m, g, 1 - h.beta1));
        v = R(v * h.beta2);
        v = R(v + (1 - h.beta2) * g * g);
        double vd = v;
        if (h.amsgrad) {
          // torch.maximum propagates NaN.
          const double old = r.s[2][k];
          r.s[2][k] = std::isnan(old) || std::isnan(v) ? NAN : std::max(old, v);
          vd = r.s[2][k];
        }
        double denom = R(std::sqrt(vd));
        denom = R(denom / std::sqrt(bc2));
        denom = R(denom + h.eps);
        r.p[k] = R(p - (h.lr / bc1) * m / denom);
        break;
      }
      case Algo::Rmsprop: {
        if (h.weight_decay != 0) g = R(g + A(h.weight_decay) * p);
        double& sq = r.s[0][k];
        sq = R(sq * h.alpha);
        sq = R(sq + (1 - h.alpha) * g * g);
        double avg;
        if (h.centered) {
          double& ga = r.s[1][k];
          ga = R(lerp_ref(ga, g, 1 - h.alpha));
          avg = R(std::sqrt(R(sq - ga * ga)));
        } else {
          avg = R(std::sqrt(sq));
        }
        avg = R(avg + h.eps);
        if (h.momentum > 0) {
          double& b = r.s[2][k];
          b = R(b * h.momentum);
          b = R(b + g / avg);
          r.p[k] = R(p + A(-h.lr) * b);
        } else {
          r.p[k] = R(p - h.lr * g / avg);
        }
        break;
      }
      case Algo::Adagrad: {
        if (h.weight_decay != 0) g = R(g + A(h.weight_decay) * p);
        const double clr = h.lr / (1 + (r.step - 1) * h.lr_decay);
        double& sum = r.s[0][k];
        sum = R(sum + g * g);
        const double sd = R(R(std::sqrt(sum)) + h.eps);
        r.p[k] = R(p - clr * g / sd);
        break;
      }
    }
  }
  r.fresh = false;
}

std::vector<double> random_values(DType dt, int64_t n, std::mt19937& rng,
                                  double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = round_to(dt, u(rng));
  return v;
}

// A tensor holding `vals`, optionally as a transposed (non-contiguous)
// view of a dense buffer with the same logical layout.
Tensor make_param(const std::vector<double>& vals, IntList shape, DType dt,
                  bool strided) {
  if (!strided || shape.size() != 2) return make(vals, shape, dt);
  const int64_t r = shape[0], c = shape[1];
  std::vector<double> tv(vals.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      tv[size_t(j * r + i)] = vals[size_t(i * c + j)];
  return make(tv, {c, r}, dt).t();
}

void call_step(Algo algo, const Hyper& h, const std::vector<Tensor>& params,
               const std::vector<Tensor>& grads,
               std::vector<Tensor> (&states)[3],
               const std::vector<Tensor>& steps, bool first) {
  switch (algo) {
    case Algo::Sgd:
      sgd_step_(params, grads, states[0], h.lr, h.momentum, h.dampening,
                h.weight_decay, h.nesterov, h.maximize, first);
      break;
    case Algo::Adam:
      adam_step_(params, grads, states[0], states[1], states[2], steps, h.lr,
                 h.beta1, h.beta2, h.eps, h.weight_decay, h.amsgrad,
                 h.maximize, h.decoupled);
      break;
    case Algo::Rmsprop:
      rmsprop_step_(params, grads, states[0], states[1], states[2], steps,
                    h.lr, h.alpha, h.eps, h.weight_decay, h.momentum,
                    h.centered, h.maximize);
      break;
    case Algo::Adagrad:
      adagrad_step_(params, grads, states[0], steps, h.lr, h.lr_decay,
                    h.weight_decay, h.eps, h.maximize);
      break;
  }
}

// One check per tensor, naming the first element that differs.
void expect_close(const std::vector<double>& got,
                  const std::vector<double>& want, double rtol, double atol,
                  const char* what) {
  REQUIRE(got.size() == want.size());
  size_t bad = got.size();
  for (size_t k = 0; k < got.size() && bad == got.size(); ++k)
    if (!close(got[k], want[k], rtol, atol)) bad = k;
  INFO(what << " element " << bad << " got "
            << (bad < got.size() ? got[bad] : 0) << " want "
            << (bad < got.size() ? want[bad] : 0));
  REQUIRE(bad == got.size());
}

struct ParamSpec {
  std::vector<int64_t> shape;
  DType dt;
  bool strided = false;
};

// Runs `nsteps` fused steps over the params and the reference beside them,
// comparing every parameter and state after each step.
void check_algo(Algo algo, const Hyper& h, const std::vector<ParamSpec>& specs,
                int nsteps = 4, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  const size_t n = specs.size();
  std::vector<Tensor> params, steps, states[3];
  std::vector<RefParam> ref(n);
  for (size_t i = 0; i < n; ++i) {
    const ParamSpec& s = specs[i];
    const int64_t numel = checked_numel(s.shape, "test");
    ref[i].p = random_values(s.dt, numel, rng);
    params.push_back(make_param(ref[i].p, s.shape, s.dt, s.strided));
    for (int k = 0; k < 3; ++k) {
      if (!state_used(algo, h, k)) continue;
      const double init = algo == Algo::Adagrad ? h.init_acc : 0.0;
      ref[i].s[k].assign(size_t(numel), round_to(s.dt, init));
      states[k].push_back(
          make_param(ref[i].s[k], s.shape, s.dt, s.strided));
    }
    steps.push_back(scalar_tensor(0, DType::Float32));
  }
  for (int it = 0; it < nsteps; ++it) {
    std::vector<Tensor> grads;
    for (size_t i = 0; i < n; ++i) {
      const ParamSpec& s = specs[i];
      std::vector<double> g =
          random_values(s.dt, int64_t(ref[i].p.size()), rng);
      grads.push_back(make_param(g, s.shape, s.dt, s.strided));
      ref_step(algo, h, s.dt, ref[i], g);
    }
    call_step(algo, h, params, grads, states, steps, it == 0);
    for (size_t i = 0; i < n; ++i) {
      const DType dt = specs[i].dt;
      // Several rounded ops per step: a few ulps of the dtype.
      const double rtol = 8 * rtol_of(dt), atol = 8 * rtol_of(dt);
      INFO("step " << it << " param " << i << " dtype " << dtype_name(dt));
      if (algo != Algo::Sgd) CHECK(steps[i].item<double>() == it + 1);
      expect_close(values(params[i]), ref[i].p, rtol, atol, "param");
      for (int s = 0; s < 3; ++s)
        if (state_used(algo, h, s))
          expect_close(values(states[s][i]), ref[i].s[s], rtol, atol,
                       "state");
    }
  }
}

const DType kFloatDTypes[] = {DType::Float32, DType::Float64, DType::Float16,
                              DType::BFloat16};

std::vector<ParamSpec> mixed_shapes(DType dt) {
  // Blocks of 32 elements and tails of every kind.
  return {{{45, 65}, dt}, {{}, dt},  {{0, 3}, dt},   {{7}, dt},
          {{32}, dt},     {{33}, dt}, {{3, 1, 5}, dt}};
}

std::vector<Hyper> sgd_options() {
  std::vector<Hyper> out;
  for (double mom : {0.0, 0.9})
    for (double wd : {0.0, 0.1})
      for (bool nest : {false, true})
        for (bool maxi : {false, true}) {
          if (nest && mom == 0) continue;
          Hyper h;
          h.lr = 0.05;
          h.momentum = mom;
          h.weight_decay = wd;
          h.nesterov = nest;
          h.maximize = maxi;
          out.push_back(h);
          if (mom != 0 && !nest) {
            h.dampening = 0.3;
            out.push_back(h);
          }
        }
  return out;
}

std::vector<Hyper> adam_options() {
  std::vector<Hyper> out;
  for (double wd : {0.0, 0.1})
    for (bool dec : {false, true})
      for (bool ams : {false, true})
        for (bool maxi : {false, true}) {
          if (dec && wd == 0) continue;
          Hyper h;
          h.lr = 0.01;
          h.weight_decay = wd;
          h.decoupled = dec;
          h.amsgrad = ams;
          h.maximize = maxi;
          out.push_back(h);
        }
  Hyper big_beta;  // 1 - beta1 >= 0.5 takes lerp's other formula
  big_beta.beta1 = 0.3;
  big_beta.beta2 = 0.5;
  out.push_back(big_beta);
  return out;
}

std::vector<Hyper> rmsprop_options() {
  std::vector<Hyper> out;
  for (double wd : {0.0, 0.1})
    for (double mom : {0.0, 0.5})
      for (bool cen : {false, true})
        for (bool maxi : {false, true}) {
          Hyper h;
          h.lr = 0.01;
          h.weight_decay = wd;
          h.momentum = mom;
          h.centered = cen;
          h.maximize = maxi;
          out.push_back(h);
        }
  Hyper low_alpha;
  low_alpha.alpha = 0.2;
  low_alpha.centered = true;
  out.push_back(low_alpha);
  return out;
}

std::vector<Hyper> adagrad_options() {
  std::vector<Hyper> out;
  for (double wd : {0.0, 0.1})
    for (double decay : {0.0, 0.05})
      for (bool maxi : {false, true}) {
        Hyper h;
        h.lr = 0.1;
        h.eps = 1e-10;
        h.weight_decay = wd;
        h.lr_decay = decay;
        h.maximize = maxi;
        h.init_acc = decay != 0 ? 0.1 : 0.0;
        out.push_back(h);
      }
  return out;
}

// Both builds of the loops (with and without fused multiply-adds).
void check_all_options(Algo algo, const std::vector<Hyper>& options) {
  const bool saved = optim_fma_enabled();
  for (bool fma : {false, true}) {
    set_optim_fma_enabled(fma);
    for (DType dt : kFloatDTypes)
      for (size_t o = 0; o < options.size(); ++o) {
        INFO("fma " << optim_fma_enabled() << " option set " << o
                    << " dtype " << dtype_name(dt));
        check_algo(algo, options[o], mixed_shapes(dt));
      }
  }
  set_optim_fma_enabled(saved);
}

Tensor zeros(IntList shape, DType dt) {
  Tensor t = Tensor::empty(shape, dt);
  t.zero_();
  return t;
}

}  // namespace

TEST_CASE("sgd_step_ matches the reference for every option", "[optim]") {
  check_all_options(Algo::Sgd, sgd_options());
}

TEST_CASE("adam_step_ matches the reference for every option", "[optim]") {
  check_all_options(Algo::Adam, adam_options());
}

TEST_CASE("rmsprop_step_ matches the reference for every option",
          "[optim]") {
  check_all_options(Algo::Rmsprop, rmsprop_options());
}

TEST_CASE("adagrad_step_ matches the reference for every option",
          "[optim]") {
  check_all_options(Algo::Adagrad, adagrad_options());
}

TEST_CASE("optimizer steps accept strided and mixed-dtype lists",
          "[optim]") {
  std::vector<ParamSpec> specs = {{{5, 7}, DType::Float32, true},
                                  {{4}, DType::Float64},
                                  {{6, 3}, DType::Float32},
                                  {{2, 9}, DType::Float64, true},
                                  {{3}, DType::Float16}};
  check_algo(Algo::Sgd, sgd_options()[3], specs);
  for (const Hyper& h : adam_options()) check_algo(Algo::Adam, h, specs);
  for (const Hyper& h : rmsprop_options())
    check_algo(Algo::Rmsprop, h, specs);
  check_algo(Algo::Adagrad, adagrad_options()[5], specs);
}

TEST_CASE("optimizer steps split large lists across threads", "[optim]") {
  const int saved = get_num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    INFO("threads " << threads);
    // Above the grain in total, with chunk boundaries inside tensors and
    // small and empty tensors between the big ones.
    std::vector<ParamSpec> specs = {{{300, 170}, DType::Float32},
                                    {{3}, DType::Float32},
                                    {{0}, DType::Float32},
                                    {{257, 129}, DType::Float32},
                                    {{11}, DType::Float32}};
    Hyper adamw;
    adamw.weight_decay = 0.01;
    adamw.decoupled = true;
    check_algo(Algo::Adam, adamw, specs, 2);
    check_algo(Algo::Sgd, sgd_options()[5], specs, 2);
    check_algo(Algo::Rmsprop, rmsprop_options()[7], specs, 2);
    check_algo(Algo::Adagrad, adagrad_options()[3], specs, 2);
  }
  set_num_threads(saved);
}

TEST_CASE("adam_step_ uses each parameter's own step count", "[optim]") {
  Tensor p0 = make({1.0, 2.0}, {2}, DType::Float64);
  Tensor p1 = make({1.0, 2.0}, {2}, DType::Float64);
  Tensor g = make({0.5, -0.25}, {2}, DType::Float64);
  std::vector<Tensor> m = {zeros({2}, DType::Float64),
                           zeros({2}, DType::Float64)};
  std::vector<Tensor> v = {zeros({2}, DType::Float64),
                           zeros({2}, DType::Float64)};
  std::vector<Tensor> steps = {scalar_tensor(0, DType::Float32),
                               scalar_tensor(4, DType::Float64)};
  adam_step_({p0, p1}, {g, g}, m, v, {}, steps, 0.1, 0.9, 0.999, 1e-8, 0,
             false, false, false);
  CHECK(steps[0].item<double>() == 1);
  CHECK(steps[1].item<double>() == 5);
  // Reference for p1 at step 5 from zero moments.
  RefParam r;
  r.p = {1.0, 2.0};
  r.s[0] = {0, 0};
  r.s[1] = {0, 0};
  r.step = 4;
  Hyper h;
  h.lr = 0.1;
  ref_step(Algo::Adam, h, DType::Float64, r, {0.5, -0.25});
  std::vector<double> got = values(p1);
  CHECK(close(got[0], r.p[0], 1e-14, 0));
  CHECK(close(got[1], r.p[1], 1e-14, 0));
  // Step 1 moves each element by lr (bias-corrected Adam's first step).
  std::vector<double> got0 = values(p0);
  CHECK(close(got0[0], 0.9, 1e-6, 0));
  CHECK(close(got0[1], 2.1, 1e-6, 0));
}

TEST_CASE("optimizer steps bump versions of what they write", "[optim]") {
  Tensor p = zeros({3}, DType::Float32), g = zeros({3}, DType::Float32);
  Tensor m = zeros({3}, DType::Float32), v = zeros({3}, DType::Float32);
  Tensor s = scalar_tensor(0, DType::Float32);
  const uint32_t pv = p.storage()->version(), gv = g.storage()->version();
  const uint32_t mv = m.storage()->version(), vv = v.storage()->version();
  const uint32_t sv = s.storage()->version();
  adam_step_({p}, {g}, {m}, {v}, {}, {s}, 0.1, 0.9, 0.999, 1e-8, 0, false,
             false, false);
  CHECK(p.storage()->version() > pv);
  CHECK(m.storage()->version() > mv);
  CHECK(v.storage()->version() > vv);
  CHECK(s.storage()->version() > sv);
  CHECK(g.storage()->version() == gv);
  Tensor buf = zeros({3}, DType::Float32);
  const uint32_t bv = buf.storage()->version();
  sgd_step_({p}, {g}, {buf}, 0.1, 0.9, 0, 0, false, false, true);
  CHECK(buf.storage()->version() > bv);
}

TEST_CASE("optimizer steps on empty lists do nothing", "[optim]") {
  CHECK_NOTHROW(sgd_step_({}, {}, {}, 0.1, 0, 0, 0, false, false, false));
  CHECK_NOTHROW(adam_step_({}, {}, {}, {}, {}, {}, 0.1, 0.9, 0.999, 1e-8,
                           0, false, false, false));
  CHECK_NOTHROW(rmsprop_step_({}, {}, {}, {}, {}, {}, 0.1, 0.99, 1e-8, 0, 0,
                              false, false));
  CHECK_NOTHROW(adagrad_step_({}, {}, {}, {}, 0.1, 0, 0, 1e-10, false));
}

TEST_CASE("optimizer step errors", "[optim]") {
  const DType f = DType::Float32;
  Tensor p = zeros({2, 3}, f), g = zeros({2, 3}, f);
  Tensor m = zeros({2, 3}, f), v = zeros({2, 3}, f);
  Tensor s = scalar_tensor(0, f);
  auto adam = [&](std::vector<Tensor> ps, std::vector<Tensor> gs,
                  std::vector<Tensor> ms, std::vector<Tensor> vs,
                  std::vector<Tensor> ss) {
    adam_step_(ps, gs, ms, vs, {}, ss, 0.1, 0.9, 0.999, 1e-8, 0, false,
               false, false);
  };
  // List lengths.
  CHECK_THROWS_AS(adam({p}, {}, {m}, {v}, {s}), RuntimeError);
  CHECK_THROWS_AS(adam({p}, {g}, {m, m}, {v}, {s}), RuntimeError);
  CHECK_THROWS_AS(adam({p}, {g}, {m}, {v}, {}), RuntimeError);
  CHECK_THROWS_WITH(adam({p}, {g}, {m}, {}, {s}),
                    HAS_TEXT("exp_avg_sqs"));
  // Shapes, dtypes, undefined tensors.
  Tensor g_bad = zeros({3, 2}, f);
  CHECK_THROWS_WITH(adam({p}, {g_bad}, {m}, {v}, {s}),
                    HAS_TEXT("grads[0] has shape [3, 2]"));
  CHECK_THROWS_AS(adam({p}, {zeros({2, 3}, DType::Float64)}, {m}, {v}, {s}),
                  RuntimeError);
  CHECK_THROWS_AS(adam({p}, {g}, {zeros({6}, f)}, {v}, {s}), RuntimeError);
  CHECK_THROWS_AS(adam({p}, {Tensor()}, {m}, {v}, {s}), ValueError);
  CHECK_THROWS_AS(adam({Tensor()}, {g}, {m}, {v}, {s}), ValueError);
  // Integer parameters.
  Tensor pi = zeros({2, 3}, DType::Int64);
  CHECK_THROWS_WITH(adam({pi}, {pi}, {pi}, {pi}, {s}),
                    HAS_TEXT("floating point"));
  // Step counters: one floating element on the CPU.
  CHECK_THROWS_AS(adam({p}, {g}, {m}, {v}, {zeros({2}, f)}), RuntimeError);
  CHECK_THROWS_AS(adam({p}, {g}, {m}, {v}, {scalar_tensor(0, DType::Int64)}),
                  RuntimeError);
  // Expanded (self-overlapping) parameters cannot be written.
  Tensor row = zeros({1, 3}, f);
  Tensor expanded = row.expand({2, 3});
  CHECK_THROWS_AS(adam({expanded}, {g}, {m}, {v}, {s}), RuntimeError);
  // Lists that must be empty for the options given.
  CHECK_THROWS_AS(adam_step_({p}, {g}, {m}, {v}, {m}, {s}, 0.1, 0.9, 0.999,
                             1e-8, 0, false, false, false),
                  RuntimeError);
  CHECK_THROWS_AS(sgd_step_({p}, {g}, {m}, 0.1, 0, 0, 0, false, false,
                            false),
                  RuntimeError);
  CHECK_THROWS_AS(sgd_step_({p}, {g}, {}, 0.1, 0.9, 0, 0, false, false,
                            false),
                  RuntimeError);
  CHECK_THROWS_AS(rmsprop_step_({p}, {g}, {m}, {v}, {}, {s}, 0.1, 0.99,
                                1e-8, 0, 0, false, false),
                  RuntimeError);
  CHECK_THROWS_AS(adagrad_step_({p}, {g}, {m, v}, {s}, 0.1, 0, 0, 1e-10,
                                false),
                  RuntimeError);
  // A failed call changes nothing: the step counter and the values stay.
  Tensor s2 = scalar_tensor(3, f);
  CHECK_THROWS(adam({p, p}, {g, g_bad}, {m, m}, {v, v}, {s2, s2}));
  CHECK(s2.item<double>() == 3);
  CHECK(values(p) == std::vector<double>(6, 0.0));
}

// Samplers built on the uniform and normal kernels of factory.cpp:
// exponential_, cauchy_, log_normal_, geometric_ (inverse CDFs of uniform
// draws), normal with tensor parameters, multinomial, poisson. torch's
// checks and
// messages; draws are computed in float32 (float64 for float64 and for
// integer geometric_) and written into the target with copy_.
#include <cmath>
#include <limits>

#include "../autograd.h"
#include "elementwise.h"
#include "factory.h"
#include "index.h"
#include "reduce.h"

namespace fastt {
namespace {

// A uniform [0, 1) tensor of t's shape in the dtype the transform runs in.
Tensor uniform_like(const Tensor& t, bool wide, Generator* g) {
  DType dt = wide || t.dtype() == DType::Float64 ? DType::Float64
                                                  : DType::Float32;
  Tensor u = Tensor::empty(t.sizes(), dt, t.device());
  return uniform_(u, 0.0, 1.0, g);
}

Tensor& write(Tensor& t, const Tensor& v) {
  NoGradGuard ng;
  return t.copy_(v);
}

void require_floating(const Tensor& t, const char* op) {
  require_defined(t, op);
  FASTT_CHECK(is_floating(t.dtype()), RuntimeError,
              "{}(): expected a floating point tensor, but got {}", op,
              dtype_name(t.dtype()));
}

void check_std(const Tensor& std) {
  NoGradGuard ng;
  FASTT_CHECK(std.numel() == 0 || !any(lt(std, Scalar(0))).item<bool>(),
              RuntimeError, "normal expects all elements of std >= 0.0");
}

}  // namespace

Tensor& exponential_(Tensor& t, double lambd, Generator* g) {
  require_floating(t, "exponential_");
  FASTT_CHECK(lambd > 0.0, RuntimeError,
              "exponential_ expects lambda > 0.0, but found lambda={}", lambd);
  if (t.numel() == 0) return t;
  // -log(1 - u) / lambda, u in [0, 1): finite and >= 0.
  Tensor u = uniform_like(t, false, g);
  Tensor x = div(neg(log1p(neg(u))), Scalar(lambd));
  return write(t, x);
}

Tensor& cauchy_(Tensor& t, double median, double sigma, Generator* g) {
  require_floating(t, "cauchy_");
  FASTT_CHECK(sigma > 0.0, RuntimeError,
              "cauchy_ expects sigma > 0.0, but found sigma={}", sigma);
  if (t.numel() == 0) return t;
  Tensor u = uniform_like(t, false, g);
  Tensor x = add(mul(tan(mul(sub(u, Scalar(0.5)), Scalar(M_PI))),
                     Scalar(sigma)),
                 Scalar(median));
  return write(t, x);
}

Tensor& log_normal_(Tensor& t, double mean, double std, Generator* g) {
  require_floating(t, "log_normal_");
  FASTT_CHECK(std > 0.0, RuntimeError,
              "log_normal_ expects std > 0.0, but found std={}", std);
  if (t.numel() == 0) return t;
  DType dt = t.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor z = Tensor::empty(t.sizes(), dt, t.device());
  normal_(z, mean, std, g);
  return write(t, exp(z));
}

Tensor& geometric_(Tensor& t, double p, Generator* g) {
  require_defined(t, "geometric_");
  FASTT_CHECK(p > 0.0 && p < 1.0, RuntimeError,
              "geometric_ expects p to be in (0, 1), got p = {}", p);
  if (t.numel() == 0) return t;
  // The number of trials to the first success: ceil(log(1 - u) /
  // log(1 - p)), at least 1.
  Tensor u = uniform_like(t, true, g);
  Tensor k = ceil(div(log1p(neg(u)), Scalar(std::log1p(-p))));
  return write(t, clamp_min(k, Scalar(1)));
}

Tensor normal(const Tensor& mean, const Tensor& std, Generator* g) {
  require_defined(mean, "normal");
  require_defined(std, "normal");
  DType dt = promote_types(mean.dtype(), std.dtype());
  FASTT_CHECK(is_floating(dt), RuntimeError,
              "normal expects floating point mean and std, but got {} and {}",
              dtype_name(mean.dtype()), dtype_name(std.dtype()));
  check_std(std);
  std::vector<int64_t> shape = broadcast_shapes(mean.sizes(), std.sizes());
  Tensor z = Tensor::empty(IntList(shape), dt, mean.device());
  normal_(z, 0.0, 1.0, g);
  return add(mul(z, std), mean);
}

Tensor normal(const Tensor& mean, double std, Generator* g) {
  require_defined(mean, "normal");
  FASTT_CHECK(is_floating(mean.dtype()), RuntimeError,
              "normal expects a floating point mean, but got {}",
              dtype_name(mean.dtype()));
  FASTT_CHECK(std >= 0.0, RuntimeError,
              "normal expects std >= 0.0, but found std {}", std);
  Tensor z = Tensor::empty(mean.sizes(), mean.dtype(), mean.device());
  normal_(z, 0.0, std, g);
  return add(z, mean);
}

Tensor normal(double mean, const Tensor& std, Generator* g) {
  require_defined(std, "normal");
  FASTT_CHECK(is_floating(std.dtype()), RuntimeError,
              "normal expects a floating point std, but got {}",
              dtype_name(std.dtype()));
  check_std(std);
  Tensor z = Tensor::empty(std.sizes(), std.dtype(), std.device());
  normal_(z, 0.0, 1.0, g);
  return add(mul(z, std), Scalar(mean));
}

Tensor normal(double mean, double std, IntList sizes,
              std::optional<DType> dtype, Device device, Generator* g) {
  Tensor z = empty(sizes, dtype, device);
  return normal_(z, mean, std, g);
}

Tensor multinomial(const Tensor& probs, int64_t n, bool replacement,
                   Generator* g) {
  const char* op = "multinomial";
  require_defined(probs, op);
  FASTT_CHECK(probs.dim() == 1 || probs.dim() == 2, RuntimeError,
              "prob_dist must be 1 or 2 dim");
  FASTT_CHECK(is_floating(probs.dtype()), RuntimeError,
              "multinomial only supports floating-point dtypes for input, "
              "got: {}",
              dtype_name(probs.dtype()));
  FASTT_CHECK(n > 0, RuntimeError, "cannot sample n_sample <= 0 samples");
  int64_t cats = probs.size(-1);
  FASTT_CHECK(replacement || n <= cats, RuntimeError,
              "cannot sample n_sample > prob_dist.size(-1) samples without "
              "replacement");
  FASTT_CHECK(cats <= (int64_t(1) << 24), RuntimeError,
              "number of categories cannot exceed 2^24");
  NoGradGuard ng;
  Tensor p = probs.dim() == 1 ? probs.unsqueeze(0) : probs;
  DType wide = DType::Float64;
  Tensor pw = p.to(wide);
  FASTT_CHECK(all(isfinite(pw)).item<bool>() &&
                  !any(lt(pw, Scalar(0))).item<bool>(),
              RuntimeError,
              "probability tensor contains either `inf`, `nan` or element < 0");
  int64_t rows = p.size(0);
  Tensor total = sum(pw, {-1}, true);  // [rows, 1]
  if (rows > 0) {
    FASTT_CHECK(all(gt(total, Scalar(0))).item<bool>(), RuntimeError,
                "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  Tensor out;
  if (rows == 0) {
    out = Tensor::empty({0, n}, DType::Int64, probs.device());
  } else if (replacement) {
    // Inverse CDF: the category of u * total is the number of cumulative
    // sums below it (zero-probability categories are never chosen).
    Tensor cdf = cumsum(pw, -1);                          // [rows, cats]
    Tensor u = Tensor::empty({rows, n}, wide, probs.device());
    uniform_(u, 0.0, 1.0, g);
    Tensor target = mul(u, total).unsqueeze(2);            // [rows, n, 1]
    Tensor below = le(cdf.unsqueeze(1), target);           // [rows, n, cats]
    out = clamp_max(sum(below, {-1}, false, DType::Int64), Scalar(cats - 1));
    // A category with p = 0 at the end can only be reached through
    // rounding: step back to the last positive one.
    Tensor last_pos = sub(Scalar(cats - 1),
                          argmax(flip(gt(pw, Scalar(0)).to(DType::Int64),
                                      {-1}),
                                 -1, true));
    out = minimum(out, last_pos);
  } else {
    Tensor nonzero_count = sum(gt(pw, Scalar(0)), {-1}, false, DType::Int64);
    FASTT_CHECK(!any(lt(nonzero_count, Scalar(n))).item<bool>(), RuntimeError,
                "invalid multinomial distribution (with replacement=False, "
                "not enough non-negative category to sample)");
    // Sampling without replacement in order: the n largest p / e with e
    // exponential draws (the exponential-race form of sequential draws).
    Tensor e = Tensor::empty(pw.sizes(), wide, probs.device());
    exponential_(e, 1.0, g);
    Tensor keys = div(pw, e);
    out = std::get<1>(topk(keys, n, -1, true, true));
  }
  return probs.dim() == 1 ? out.squeeze(0) : out;
}

namespace {
// Rates below 10: inversion, one uniform per element and a sequential
// search of the CDF, all pending elements one step per round.
Tensor poisson_small(const Tensor& lam, Generator* g) {
  Tensor u = uniform_like(lam, true, g);
  Tensor p = exp(neg(lam));
  Tensor cdf = p.clone();
  Tensor k = zeros_like(lam);
  Tensor active = gt(u, cdf);
  for (int round = 0; round < 1000 && any(active).item<bool>(); ++round) {
    k = add(k, active.to(DType::Float64));
    p = div(mul(p, lam), clamp_min(k, Scalar(1)));
    cdf = add(cdf, p);
    active = logical_and(active, gt(u, cdf));
  }
  return k;
}

// Rates of 10 and more: Hormann's PTRS ("The transformed rejection method
// for generating Poisson random variables", 1993): a transformed
// uniform proposal accepted by a squeeze or the exact log density;
// rejected elements draw again next round (about 1.1 rounds on average).
Tensor poisson_large(const Tensor& lam, Generator* g) {
  Tensor slam = sqrt(lam), loglam = log(lam);
  Tensor b = add(mul(slam, Scalar(2.53)), Scalar(0.931));
  Tensor a = add(mul(b, Scalar(0.02483)), Scalar(-0.059));
  Tensor invalpha = add(div(Scalar(1.1328), sub(b, Scalar(3.4))),
                        Scalar(1.1239));
  Tensor vr = sub(Scalar(0.9277), div(Scalar(3.6224), sub(b, Scalar(2))));
  Tensor out = zeros_like(lam);
  Tensor pending = ones_like(lam, DType::Bool);
  for (int round = 0; round < 1000 && any(pending).item<bool>(); ++round) {
    Tensor U = sub(uniform_like(lam, true, g), Scalar(0.5));
    Tensor V = uniform_like(lam, true, g);
    Tensor us = sub(Scalar(0.5), abs(U));
    Tensor k = floor(add(mul(add(div(mul(a, Scalar(2)), us), b), U),
                         add(lam, Scalar(0.43))));
    Tensor quick = logical_and(ge(us, Scalar(0.07)), le(V, vr));
    Tensor reject = logical_or(lt(k, Scalar(0)),
                               logical_and(lt(us, Scalar(0.013)), gt(V, us)));
    Tensor lhs = sub(add(log(V), log(invalpha)),
                     log(add(div(a, mul(us, us)), b)));
    Tensor rhs = sub(sub(mul(k, loglam), lam), lgamma(add(k, Scalar(1))));
    Tensor ok = logical_or(
        quick, logical_and(logical_not(reject), le(lhs, rhs)));
    Tensor take = logical_and(pending, ok);
    out = where(take, k, out);
    pending = logical_and(pending, logical_not(take));
  }
  return out;
}
}  // namespace

Tensor poisson(const Tensor& rates, Generator* g) {
  require_defined(rates, "poisson");
  FASTT_CHECK(is_floating(rates.dtype()), NotImplementedError,
              "\"poisson_cpu\" not implemented for '{}'",
              torch_type_name(rates.dtype()));
  Tensor out;
  {
    NoGradGuard ng;
    Tensor lam = rates.to(DType::Float64);
    FASTT_CHECK(lam.numel() == 0 ||
                    !any(logical_or(lt(lam, Scalar(0)), isnan(lam)))
                         .item<bool>(),
                RuntimeError,
                "invalid Poisson rate, expected rate to be non-negative");
    Tensor small = lt(lam, Scalar(10));
    // Each sampler sees rates in its own range (the others replaced by a
    // harmless value) and the mask picks per element.
    Tensor k = zeros_like(lam);
    if (lam.numel() > 0 && any(small).item<bool>())
      k = where(small, poisson_small(where(small, lam, Scalar(1.0)), g), k);
    if (lam.numel() > 0 && !all(small).item<bool>())
      k = where(small, k, poisson_large(where(small, Scalar(10.0), lam), g));
    out = k.to(rates.dtype());
  }
  if (!autograd::should_record(rates)) return out;
  // A function of rates with a zero gradient (torch's derivative).
  return where(zeros({}, DType::Bool, rates.device()), rates, out);
}

}  // namespace fastt

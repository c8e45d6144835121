// Reductions, scans and softmax against naive references written here:
// the input is read back as doubles, grouped per output element in
// row-major order, and each group reduced by a plain loop.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "catch.h"
#include "csrc/ops/reduce.h"

using namespace fastt;

namespace {

using Group = std::vector<double>;
using RefFn = std::function<double(const Group&)>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor from_doubles(const std::vector<double>& v, IntList shape, DType dt) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  REQUIRE(size_t(t.numel()) == v.size());
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t.to(dt);
}

// Random values in [lo, hi]; integers for integer dtypes, 0/1 for bool.
Tensor rand_tensor(IntList shape, DType dt, double lo = -2, double hi = 2,
                   unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    x = u(rng);
    if (dt == DType::Bool) x = x > (lo + hi) / 2 ? 1 : 0;
    else if (dt == DType::UInt8) x = std::round(std::fabs(x));
    else if (!is_floating(dt)) x = std::round(x);
  }
  return from_doubles(v, shape, dt);
}

std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(DType::Float64, true).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

std::vector<int64_t> shape_of(const Tensor& t) { return t.sizes().vec(); }

// The elements of t grouped by output position (dims empty = all dims),
// each group in row-major order of the reduced dims.
std::vector<Group> groups(const Tensor& t, std::vector<int64_t> dims) {
  const int nd = int(t.dim());
  if (nd == 0) dims.clear();
  std::vector<bool> red(size_t(nd), dims.empty());
  for (int64_t d : dims) red[size_t(d < 0 ? d + nd : d)] = true;
  int64_t n_out = 1;
  for (int d = 0; d < nd; ++d)
    if (!red[d]) n_out *= t.sizes()[d];
  std::vector<Group> out(static_cast<size_t>(n_out));
  std::vector<double> v = values(t);
  std::vector<int64_t> idx(size_t(nd), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t o = 0;
    for (int d = 0; d < nd; ++d)
      if (!red[d]) o = o * t.sizes()[d] + idx[d];
    out[size_t(o)].push_back(v[i]);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> out_shape(const Tensor& t, std::vector<int64_t> dims,
                               bool keepdim) {
  const int nd = int(t.dim());
  if (nd == 0) dims.clear();
  std::vector<bool> red(size_t(nd), dims.empty());
  for (int64_t d : dims) red[size_t(d < 0 ? d + nd : d)] = true;
  std::vector<int64_t> s;
  for (int d = 0; d < nd; ++d) {
    if (!red[d]) s.push_back(t.sizes()[d]);
    else if (keepdim) s.push_back(1);
  }
  return s;
}

std::vector<double> reference(const Tensor& t, std::vector<int64_t> dims,
                              const RefFn& f) {
  std::vector<double> r;
  for (const Group& g : groups(t, dims)) r.push_back(f(g));
  return r;
}

bool same(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

void check_values(const Tensor& got, const std::vector<double>& want,
                  double rtol, double atol) {
  std::vector<double> g = values(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    CHECK(same(g[i], want[i], rtol, atol));
  }
}

// Tolerances for a result stored in dtype dt.
double rtol_for(DType dt) {
  switch (dt) {
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    case DType::Float32: return 2e-6;
    case DType::Float64: return 1e-12;
    default: return 0;
  }
}

// ---- naive references ----
double ref_sum(const Group& g) {
  double s = 0;
  for (double x : g) s += x;
  return s;
}
double ref_prod(const Group& g) {
  double s = 1;
  for (double x : g) s *= x;
  return s;
}
double ref_mean(const Group& g) { return ref_sum(g) / double(g.size()); }
double ref_max(const Group& g) {
  double m = -kInf;
  for (double x : g) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}
double ref_min(const Group& g) {
  double m = kInf;
  for (double x : g) {
    if (std::isnan(x)) return x;
    m = std::min(m, x);
  }
  return m;
}
double ref_argmax(const Group& g) {
  size_t best = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i])) return double(i);
    if (g[i] > g[best]) best = i;
  }
  return double(best);
}
double ref_argmin(const Group& g) {
  size_t best = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i])) return double(i);
    if (g[i] < g[best]) best = i;
  }
  return double(best);
}
RefFn ref_var(double correction, bool take_sqrt) {
  return [=](const Group& g) {
    double m = ref_mean(g), s = 0;
    for (double x : g) s += (x - m) * (x - m);
    double v = s / std::max(0.0, double(g.size()) - correction);
    return take_sqrt ? std::sqrt(v) : v;
  };
}
RefFn ref_norm(double p) {
  return [=](const Group& g) {
    if (std::isinf(p)) {
      double m = p > 0 ? 0 : kInf;
      for (double x : g) m = p > 0 ? std::max(m, std::fabs(x))
                                   : std::min(m, std::fabs(x));
      return m;
    }
    double s = 0;
    for (double x : g) s += p == 0 ? (x != 0) : std::pow(std::fabs(x), p);
    return p == 0 ? s : std::pow(s, 1 / p);
  };
}
double ref_lse(const Group& g) {
  double m = ref_max(g);
  if (g.empty()) return -kInf;
  if (std::isinf(m)) return m;
  double s = 0;
  for (double x : g) s += std::exp(x - m);
  return m + std::log(s);
}
double ref_all(const Group& g) {
  for (double x : g)
    if (x == 0) return 0;
  return 1;
}
double ref_any(const Group& g) {
  for (double x : g)
    if (x != 0) return 1;
  return 0;
}

// The inputs each reduction test runs over: dense, 0-d, empty, odd, 4-d,
// transposed and step-sliced.
struct Case {
  const char* name;
  Tensor t;
  std::vector<std::vector<int64_t>> dim_lists;
};
std::vector<Case> cases(DType dt, double lo = -2, double hi = 2) {
  std::vector<Case> c;
  c.push_back({"45x65", rand_tensor({45, 65}, dt, lo, hi, 1),
               {{}, {0}, {1}, {-1}, {0, 1}}});
  c.push_back({"0-d", rand_tensor({}, dt, lo, hi, 2), {{}, {0}, {-1}}});
  c.push_back({"3x0x4", rand_tensor({3, 0, 4}, dt, lo, hi, 3),
               {{}, {1}, {0, 1}, {0, 2}}});
  c.push_back({"2x3x4x5", rand_tensor({2, 3, 4, 5}, dt, lo, hi, 4),
               {{}, {0}, {1, 3}, {0, 2}, {-1, -3}, {2}, {0, 1, 2, 3}}});
  c.push_back({"transposed 65x45",
               rand_tensor({45, 65}, dt, lo, hi, 5).transpose(0, 1),
               {{}, {0}, {1}}});
  c.push_back({"sliced step 3",
               rand_tensor({7, 40, 6}, dt, lo, hi, 6).slice(1, 1, 40, 3),
               {{}, {1}, {0, 2}, {2}}});
  c.push_back({"size-1 dims", rand_tensor({1, 9, 1, 5}, dt, lo, hi, 8),
               {{}, {0}, {2}, {1}, {0, 2}, {1, 3}}});
  c.push_back({"permuted 3-d",
               rand_tensor({4, 5, 6}, dt, lo, hi, 9).permute({2, 0, 1}),
               {{}, {1}, {0, 1}, {1, 2}, {0, 2}}});
  c.push_back({"expanded", rand_tensor({1, 5}, dt, lo, hi, 10).expand({4, 5}),
               {{}, {0}, {1}}});
  return c;
}

using ReduceOp = std::function<Tensor(const Tensor&, IntList, bool)>;

void check_reduction(const char* opname, DType dt, const ReduceOp& op,
                     const RefFn& ref, DType want_dtype, double rtol,
                     double atol, bool nonempty_only = false,
                     double lo = -2, double hi = 2) {
  for (Case& c : cases(dt, lo, hi)) {
    for (auto& dims : c.dim_lists) {
      for (bool keepdim : {false, true}) {
        if (nonempty_only && c.t.numel() == 0) continue;
        INFO(opname << " dtype " << dtype_name(dt) << " on " << c.name
                    << " dims " << shape_str(IntList(dims)) << " keepdim "
                    << keepdim);
        Tensor r = op(c.t, IntList(dims), keepdim);
        CHECK(r.dtype() == want_dtype);
        auto want_shape = c.t.dim() == 0 ? std::vector<int64_t>{}
                                         : out_shape(c.t, dims, keepdim);
        CHECK(shape_of(r) == want_shape);
        // The reference rounded to the result dtype (overflow gives inf).
        std::vector<double> want = reference(c.t, dims, ref);
        if (is_floating(want_dtype))
          want = values(from_doubles(want, {int64_t(want.size())},
                                     want_dtype));
        check_values(r, want, rtol, atol);
      }
    }
  }
}

const DType kFloatTypes[] = {DType::Float32, DType::Float64, DType::Float16,
                             DType::BFloat16};
const DType kIntTypes[] = {DType::Int32, DType::Int64, DType::UInt8,
                           DType::Int8, DType::Int16, DType::Bool};

}  // namespace

TEST_CASE("reduce: sum and mean over dims, dtypes and layouts", "[reduce]") {
  auto sum_op = [](const Tensor& t, IntList d, bool k) {
    return sum(t, d, k);
  };
  auto mean_op = [](const Tensor& t, IntList d, bool k) {
    return mean(t, d, k);
  };
  for (DType dt : kFloatTypes) {
    check_reduction("sum", dt, sum_op, ref_sum, dt, rtol_for(dt),
                    rtol_for(dt) * 8);
    check_reduction("mean", dt, mean_op, ref_mean, dt, rtol_for(dt),
                    rtol_for(dt));
  }
  for (DType dt : kIntTypes)
    check_reduction("sum", dt, sum_op, ref_sum, DType::Int64, 0, 0);
}

TEST_CASE("reduce: full sum fast path and dtype argument", "[reduce]") {
  Tensor a = from_doubles({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                           16},
                          {16}, DType::Float32);
  Tensor s = sum(a);
  CHECK(s.dim() == 0);
  CHECK(s.dtype() == DType::Float32);
  CHECK(s.item<double>() == 136);
  CHECK(mean(a).item<double>() == 8.5);
  // dtype converts the input first.
  Tensor s64 = sum(a, DType::Float64);
  CHECK(s64.dtype() == DType::Float64);
  CHECK(s64.item<double>() == 136);
  Tensor i = rand_tensor({5, 7}, DType::Int32);
  CHECK(sum(i).dtype() == DType::Int64);
  CHECK(sum(i, {1}, false, DType::Int32).dtype() == DType::Int32);
  CHECK(sum(i, DType::Float32).dtype() == DType::Float32);
  CHECK(mean(i, DType::Float64).dtype() == DType::Float64);
  check_values(mean(i, {0}, true, DType::Float64),
               reference(i, {0}, ref_mean), 1e-12, 0);
  // Float32 sums accumulate in double: 1e8 + many ones is not lost.
  std::vector<double> v(10001, 1.0);
  v[0] = 1e8;
  CHECK(sum(from_doubles(v, {10001}, DType::Float32)).item<double>() ==
        100010000.0);
  // Empty: sum 0, prod 1, mean nan.
  Tensor e = Tensor::empty({0}, DType::Float32);
  CHECK(sum(e).item<double>() == 0);
  CHECK(prod(e).item<double>() == 1);
  CHECK(std::isnan(mean(e).item<double>()));
  // Large enough to split across threads; integers stay exact.
  Tensor big = rand_tensor({1 << 20}, DType::Int32, -100, 100, 11);
  check_values(sum(big), reference(big, {}, ref_sum), 0, 0);
  Tensor bigf = rand_tensor({1000, 300}, DType::Float32, -1, 1, 12);
  check_values(sum(bigf, {0}), reference(bigf, {0}, ref_sum), 1e-5, 1e-5);
  check_values(sum(bigf, {1}), reference(bigf, {1}, ref_sum), 1e-5, 1e-5);
  check_values(sum(bigf), reference(bigf, {}, ref_sum), 1e-5, 1e-3);
  // Integer sums wrap like int64 (no UB): int64 max + 1.
  Tensor w = from_doubles({0, 1}, {2}, DType::Int64);
  w.data_ptr<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  CHECK(sum(w).item<int64_t>() == std::numeric_limits<int64_t>::min());
}

TEST_CASE("reduce: prod", "[reduce]") {
  auto op = [](const Tensor& t, IntList d, bool k) {
    if (d.size() == 1) return prod(t, d[0], k);
    REQUIRE((d.empty() || t.dim() == 0 || int64_t(d.size()) == t.dim()));
    Tensor r = prod(t);
    return k ? r.reshape(std::vector<int64_t>(size_t(t.dim()), 1)) : r;
  };
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (Case& c : cases(dt, 0.9, 1.1)) {
      for (auto& dims : c.dim_lists) {
        if (dims.size() > 1 && int64_t(dims.size()) != c.t.dim()) continue;
        INFO("prod on " << c.name << " dims " << dims.size());
        Tensor r = op(c.t, IntList(dims), false);
        CHECK(r.dtype() == dt);
        check_values(r, reference(c.t, dims, ref_prod), rtol_for(dt) * 10,
                     1e-12);
      }
    }
  }
  Tensor h = rand_tensor({6, 5}, DType::Float16, 0.9, 1.1);
  check_values(prod(h, 1), reference(h, {1}, ref_prod), 5e-3, 0);
  Tensor i = rand_tensor({4, 6}, DType::Int16, -3, 3);
  CHECK(prod(i).dtype() == DType::Int64);
  check_values(prod(i, 0, true), reference(i, {0}, ref_prod), 0, 0);
  CHECK(shape_of(prod(i, 0, true)) == std::vector<int64_t>{1, 6});
  CHECK(prod(i, 1, false, DType::Float64).dtype() == DType::Float64);
}

TEST_CASE("reduce: amax, amin, max() and min()", "[reduce]") {
  auto amax_op = [](const Tensor& t, IntList d, bool k) {
    return amax(t, d, k);
  };
  auto amin_op = [](const Tensor& t, IntList d, bool k) {
    return amin(t, d, k);
  };
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16,
                   DType::BFloat16, DType::Int32, DType::UInt8, DType::Int64,
                   DType::Bool}) {
    check_reduction("amax", dt, amax_op, ref_max, dt, 0, 0, true);
    check_reduction("amin", dt, amin_op, ref_min, dt, 0, 0, true);
  }
  Tensor a = from_doubles({1, 5, -3, 2}, {2, 2}, DType::Float32);
  CHECK(max(a).item<double>() == 5);
  CHECK(min(a).item<double>() == -3);
  CHECK(max(a).dim() == 0);
  // NaN propagates.
  Tensor n = from_doubles({1, kNaN, 7, 2, 3, 4}, {2, 3}, DType::Float32);
  CHECK(std::isnan(max(n).item<double>()));
  CHECK(std::isnan(amin(n).item<double>()));
  check_values(amax(n, {1}), {kNaN, 4}, 0, 0);
  check_values(amax(n, {0}), {2, kNaN, 7}, 0, 0);
  // Empty along the reduced dim: no identity.
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  REQUIRE_THROWS_AS(amax(e, {0}), IndexError);
  REQUIRE_THROWS_AS(amax(e), RuntimeError);
  REQUIRE_THROWS_AS(max(e), RuntimeError);
  CHECK(shape_of(amax(e, {1})) == std::vector<int64_t>{0});
}

TEST_CASE("reduce: max/min over a dim and argmax/argmin", "[reduce]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16,
                   DType::Int32, DType::Int8, DType::UInt8}) {
    for (Case& c : cases(dt)) {
      if (c.t.numel() == 0) continue;
      const int64_t nd = std::max<int64_t>(c.t.dim(), 1);
      for (int64_t d = -nd; d < nd; ++d) {
        for (bool keepdim : {false, true}) {
          INFO(dtype_name(dt) << " " << c.name << " dim " << d << " keepdim "
                              << keepdim);
          std::vector<int64_t> dims =
              c.t.dim() == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{d};
          auto mx = max(c.t, d, keepdim);
          auto mn = min(c.t, d, keepdim);
          CHECK(mx.first.dtype() == dt);
          CHECK(mx.second.dtype() == DType::Int64);
          auto ws = c.t.dim() == 0 ? std::vector<int64_t>{}
                                   : out_shape(c.t, dims, keepdim);
          CHECK(shape_of(mx.first) == ws);
          CHECK(shape_of(mx.second) == ws);
          check_values(mx.first, reference(c.t, dims, ref_max), 0, 0);
          check_values(mx.second, reference(c.t, dims, ref_argmax), 0, 0);
          check_values(mn.first, reference(c.t, dims, ref_min), 0, 0);
          check_values(mn.second, reference(c.t, dims, ref_argmin), 0, 0);
          check_values(argmax(c.t, d, keepdim),
                       reference(c.t, dims, ref_argmax), 0, 0);
          check_values(argmin(c.t, d, keepdim),
                       reference(c.t, dims, ref_argmin), 0, 0);
        }
      }
      // No dim: index into the flattened tensor.
      INFO(dtype_name(dt) << " " << c.name << " flattened");
      Tensor am = argmax(c.t);
      CHECK(am.dim() == 0);
      CHECK(am.dtype() == DType::Int64);
      check_values(am, reference(c.t, {}, ref_argmax), 0, 0);
      check_values(argmin(c.t), reference(c.t, {}, ref_argmin), 0, 0);
      Tensor amk = argmax(c.t, std::nullopt, true);
      CHECK(shape_of(amk) ==
            std::vector<int64_t>(size_t(c.t.dim()), int64_t(1)));
    }
  }
  // Ties report the first index; NaN wins.
  Tensor t = from_doubles({3, 1, 3, 2, 2, 0}, {2, 3}, DType::Float32);
  check_values(argmax(t, 1), {0, 0}, 0, 0);
  check_values(argmin(t, 0), {1, 0, 1}, 0, 0);
  Tensor n = from_doubles({1, kNaN, 5, kNaN}, {4}, DType::Float64);
  CHECK(argmax(n).item<int64_t>() == 1);
  CHECK(argmin(n).item<int64_t>() == 1);
  auto mx = max(n, 0);
  CHECK(std::isnan(mx.first.item<double>()));
  CHECK(mx.second.item<int64_t>() == 1);
  // Bool works for max over a dim (values stay bool).
  Tensor b = from_doubles({0, 1, 0, 0}, {2, 2}, DType::Bool);
  auto bm = max(b, 1);
  CHECK(bm.first.dtype() == DType::Bool);
  check_values(bm.first, {1, 0}, 0, 0);
  check_values(bm.second, {1, 0}, 0, 0);
  // Large strided argmax over dim 0 (column path, split across threads).
  Tensor big = rand_tensor({300, 700}, DType::Float32, -1, 1, 21);
  check_values(argmax(big, 0), reference(big, {0}, ref_argmax), 0, 0);
  check_values(argmin(big.transpose(0, 1), 1),
               reference(big.transpose(0, 1), {1}, ref_argmin), 0, 0);
  // Errors.
  Tensor e = Tensor::empty({2, 0}, DType::Float32);
  REQUIRE_THROWS_AS(max(e, 1), IndexError);
  REQUIRE_THROWS_AS(argmax(e), RuntimeError);
  REQUIRE_THROWS_AS(argmax(e, 1), IndexError);
  CHECK(shape_of(argmax(e, 0)) == std::vector<int64_t>{0});
  REQUIRE_THROWS_AS(max(t, 2), IndexError);
  REQUIRE_THROWS_AS(argmin(t, -3), IndexError);
  REQUIRE_THROWS_AS(argmax(b), NotImplementedError);
}

TEST_CASE("reduce: var, std, var_mean, std_mean", "[reduce]") {
  for (double corr : {1.0, 0.0, 2.0}) {
    for (DType dt : kFloatTypes) {
      auto var_op = [corr](const Tensor& t, IntList d, bool k) {
        return var(t, d, corr, k);
      };
      auto std_op = [corr](const Tensor& t, IntList d, bool k) {
        return fastt::std(t, d, corr, k);
      };
      double tol = dt == DType::Float32 ? 1e-5 : rtol_for(dt) * 2;
      check_reduction("var", dt, var_op, ref_var(corr, false), dt, tol, tol);
      check_reduction("std", dt, std_op, ref_var(corr, true), dt, tol, tol);
    }
  }
  Tensor a = rand_tensor({45, 65}, DType::Float64, -3, 3, 31);
  auto vm = var_mean(a, {1}, 1, true);
  check_values(vm.first, reference(a, {1}, ref_var(1, false)), 1e-12, 1e-12);
  check_values(vm.second, reference(a, {1}, ref_mean), 1e-12, 1e-12);
  CHECK(shape_of(vm.second) == std::vector<int64_t>{45, 1});
  auto sm = std_mean(a.transpose(0, 1));
  check_values(sm.first, reference(a, {}, ref_var(1, true)), 1e-12, 0);
  check_values(sm.second, reference(a, {}, ref_mean), 1e-12, 1e-15);
  // Large values: Welford keeps precision where sum-of-squares would not.
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(1e4 + (i % 2));
  Tensor big = from_doubles(v, {1000}, DType::Float32);
  CHECK(std::fabs(var(big, {}, 0).item<double>() - 0.25) < 1e-6);
  // A single element has no unbiased variance.
  CHECK(std::isnan(var(from_doubles({3}, {1}, DType::Float32)).item<double>()));
  REQUIRE_THROWS_AS(var(rand_tensor({3}, DType::Int64)), RuntimeError);
  REQUIRE_THROWS_AS(fastt::std(rand_tensor({3}, DType::Bool)), RuntimeError);
  REQUIRE_THROWS_AS(var(a, {0, 0}), RuntimeError);
  REQUIRE_THROWS_AS(var(a, {2}), IndexError);
}

TEST_CASE("reduce: norm", "[reduce]") {
  for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, kInf, -kInf, -1.0}) {
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
      auto op = [p](const Tensor& t, IntList d, bool k) {
        return norm(t, p, d, k);
      };
      bool no_identity = p < 0 || std::isinf(p);
      double tol = dt == DType::Float32 ? 1e-5 : rtol_for(dt) * 2;
      check_reduction("norm", dt, op, ref_norm(p), dt, tol, tol, no_identity);
    }
  }
  Tensor a = from_doubles({3, -4, 0}, {3}, DType::Float32);
  CHECK(norm(a).item<double>() == 5);
  CHECK(norm(a, 0).item<double>() == 2);
  CHECK(norm(a, kInf).item<double>() == 4);
  CHECK(norm(a, -kInf).item<double>() == 0);
  Tensor i = rand_tensor({4}, DType::Int32);
  REQUIRE_THROWS_AS(norm(i), RuntimeError);
  REQUIRE_THROWS_AS(norm(a, 2, {}, false, DType::Int32), RuntimeError);
  CHECK(norm(a, 2, {}, false, DType::Float64).dtype() == DType::Float64);
  Tensor e = Tensor::empty({0, 2}, DType::Float32);
  REQUIRE_THROWS_AS(norm(e, kInf), RuntimeError);
  REQUIRE_THROWS_AS(norm(e, kInf, {0}), RuntimeError);
  CHECK(shape_of(norm(e, kInf, {1})) == std::vector<int64_t>{0});
  CHECK(norm(e, 2).item<double>() == 0);
}

TEST_CASE("reduce: all and any", "[reduce]") {
  auto all_op = [](const Tensor& t, IntList d, bool k) {
    return all(t, d, k);
  };
  auto any_op = [](const Tensor& t, IntList d, bool k) {
    return any(t, d, k);
  };
  for (DType dt : {DType::Bool, DType::Int32, DType::UInt8, DType::Float32,
                   DType::Float16}) {
    // torch: uint8 inputs give uint8 results, every other dtype bool.
    const DType rd = dt == DType::UInt8 ? DType::UInt8 : DType::Bool;
    // Mostly nonzero so `all` is sometimes true.
    check_reduction("all", dt, all_op, ref_all, rd, 0, 0, false, 0, 1.2);
    check_reduction("any", dt, any_op, ref_any, rd, 0, 0, false, -0.6, 0.6);
  }
  Tensor u = from_doubles({3, 0, 200}, {3}, DType::UInt8);
  CHECK(all(u).dtype() == DType::UInt8);
  CHECK(any(u, {0}, true).dtype() == DType::UInt8);
  CHECK(all(u).item<int64_t>() == 0);
  CHECK(any(u).item<int64_t>() == 1);
  CHECK(all(from_doubles({3, 1}, {2}, DType::Int8)).dtype() == DType::Bool);
  Tensor e = Tensor::empty({0}, DType::Float32);
  CHECK(all(e).item<bool>() == true);
  CHECK(any(e).item<bool>() == false);
  Tensor n = from_doubles({0, kNaN}, {2}, DType::Float32);
  CHECK(any(n).item<bool>() == true);
}

TEST_CASE("reduce: logsumexp", "[reduce]") {
  auto op = [](const Tensor& t, IntList d, bool k) {
    return logsumexp(t, d, k);
  };
  for (DType dt : kFloatTypes) {
    double tol = dt == DType::Float32 ? 1e-5 : rtol_for(dt) * 2;
    check_reduction("logsumexp", dt, op, ref_lse, dt, tol, tol);
  }
  // Stable with large magnitudes.
  Tensor big = from_doubles({1e4, 1e4, -1e4, 1e4 - 1}, {4}, DType::Float32);
  double want = 1e4 + std::log(2 + std::exp(-1.0));
  CHECK(std::fabs(logsumexp(big, {}).item<double>() - want) < 1e-2);
  Tensor neg = from_doubles({-1e4, -1e4 + 1}, {2}, DType::Float32);
  CHECK(std::fabs(logsumexp(neg, {0}).item<double>() -
                  (-1e4 + 1 + std::log1p(std::exp(-1.0)))) < 1e-2);
  // Infinities and NaN.
  check_values(logsumexp(from_doubles({-kInf, -kInf}, {2}, DType::Float32),
                         {}),
               {-kInf}, 0, 0);
  check_values(logsumexp(from_doubles({kInf, 1, kInf}, {3}, DType::Float32),
                         {}),
               {kInf}, 0, 0);
  check_values(logsumexp(from_doubles({kInf, kNaN}, {2}, DType::Float32),
                         {}),
               {kNaN}, 0, 0);
  check_values(logsumexp(from_doubles({-kInf, 0}, {2}, DType::Float64), {}),
               {0}, 0, 1e-15);
  // Integers give the default float dtype.
  Tensor i = rand_tensor({3, 4}, DType::Int64);
  Tensor li = logsumexp(i, {1});
  CHECK(li.dtype() == default_dtype());
  check_values(li, reference(i, {1}, ref_lse), 1e-6, 1e-6);
  CHECK(logsumexp(Tensor::empty({0}, DType::Float32), {0}).item<double>() ==
        -kInf);
}

TEST_CASE("reduce: dim errors", "[reduce]") {
  Tensor a = rand_tensor({3, 4}, DType::Float32);
  REQUIRE_THROWS_AS(sum(a, {2}), IndexError);
  REQUIRE_THROWS_AS(sum(a, {-3}), IndexError);
  REQUIRE_THROWS_AS(sum(a, {0, 0}), RuntimeError);
  REQUIRE_THROWS_AS(sum(a, {1, -1}), RuntimeError);
  REQUIRE_THROWS_AS(mean(a, {0, -2}), RuntimeError);
  REQUIRE_THROWS_AS(amax(a, {5}), IndexError);
  REQUIRE_THROWS_AS(all(a, {2}), IndexError);
  REQUIRE_THROWS_AS(prod(a, 2), IndexError);
  REQUIRE_THROWS_AS(logsumexp(a, {0, 0}), RuntimeError);
  // 0-d tensors accept dims 0 and -1 only.
  Tensor z = rand_tensor({}, DType::Float32);
  REQUIRE_THROWS_AS(sum(z, {1}), IndexError);
  CHECK(sum(z, {-1}, true).dim() == 0);
  // mean needs a floating dtype.
  Tensor i = rand_tensor({3}, DType::Int64);
  try {
    mean(i);
    FAIL("mean of int64 should throw");
  } catch (const RuntimeError& e) {
    CHECK(std::string(e.what()) ==
          "mean(): could not infer output dtype. Input dtype must be either "
          "a floating point or complex dtype. Got: Long");
  }
  REQUIRE_THROWS_AS(mean(a, DType::Int32), RuntimeError);
  REQUIRE_THROWS_AS(sum(Tensor()), ValueError);
  REQUIRE_THROWS_AS(amax(Tensor()), ValueError);
}

TEST_CASE("reduce: cumsum and cumprod", "[reduce]") {
  auto ref_scan = [](const Tensor& t, int64_t dim, bool is_sum) {
    // Runs along dim over the row-major element order.
    std::vector<double> v = values(t);
    const int nd = int(t.dim());
    if (nd == 0) return v;
    if (dim < 0) dim += nd;
    int64_t inner = 1;
    for (int d = int(dim) + 1; d < nd; ++d) inner *= t.sizes()[d];
    const int64_t n = t.sizes()[dim];
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t pos = (int64_t(i) / inner) % n;
      out[i] = pos == 0 ? v[i]
                        : (is_sum ? out[i - inner] + v[i]
                                  : out[i - inner] * v[i]);
    }
    return out;
  };
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16,
                   DType::Int32, DType::UInt8, DType::Bool, DType::Int64}) {
    for (Case& c : cases(dt, dt == DType::Bool ? 0 : -1.5, 1.5)) {
      const int64_t nd = std::max<int64_t>(c.t.dim(), 1);
      for (int64_t d = -nd; d < nd; ++d) {
        INFO(dtype_name(dt) << " " << c.name << " dim " << d);
        DType want = is_floating(dt) ? dt : DType::Int64;
        Tensor s = cumsum(c.t, d);
        CHECK(s.dtype() == want);
        CHECK(shape_of(s) == shape_of(c.t));
        double tol = is_floating(dt) ? rtol_for(dt) * 4 : 0;
        check_values(s, ref_scan(c.t, d, true), tol, tol * 10);
        Tensor small = c.t.numel() > 0 && c.t.dim() > 0 && c.t.size(d) > 20
                           ? c.t.narrow(d, 0, 20)
                           : c.t;
        Tensor p = cumprod(small, d);
        CHECK(p.dtype() == want);
        check_values(p, ref_scan(small, d, false), tol, tol);
      }
    }
  }
  Tensor i = from_doubles({1, 2, 3}, {3}, DType::Int32);
  Tensor f = cumsum(i, 0, DType::Float32);
  CHECK(f.dtype() == DType::Float32);
  check_values(f, {1, 3, 6}, 0, 0);
  CHECK(cumprod(i, 0, DType::Int32).dtype() == DType::Int32);
  check_values(cumprod(i, 0, DType::Int32), {1, 2, 6}, 0, 0);
  REQUIRE_THROWS_AS(cumsum(i, 1), IndexError);
  REQUIRE_THROWS_AS(cumprod(i, -2), IndexError);
  // Large enough for threads, scanning a non-innermost dim.
  Tensor big = rand_tensor({200, 500}, DType::Float64, -1, 1, 41);
  check_values(cumsum(big, 0), ref_scan(big, 0, true), 1e-12, 1e-12);
  check_values(cumsum(big, 1), ref_scan(big, 1, true), 1e-12, 1e-12);
}

TEST_CASE("reduce: softmax and log_softmax", "[reduce]") {
  auto ref_soft = [](const Tensor& t, int64_t dim, bool log) {
    std::vector<double> v = values(t);
    const int nd = int(t.dim());
    if (nd == 0) return std::vector<double>{log ? 0.0 : 1.0};
    if (dim < 0) dim += nd;
    int64_t inner = 1;
    for (int d = int(dim) + 1; d < nd; ++d) inner *= t.sizes()[d];
    const int64_t n = t.sizes()[dim];
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t pos = (int64_t(i) / inner) % n;
      size_t first = i - size_t(pos * inner);
      double m = -kInf;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, v[first + k * inner]);
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(v[first + k * inner] - m);
      out[i] = log ? v[i] - m - std::log(s) : std::exp(v[i] - m) / s;
    }
    return out;
  };
  for (DType dt : kFloatTypes) {
    for (Case& c : cases(dt, -5, 5)) {
      const int64_t nd = std::max<int64_t>(c.t.dim(), 1);
      for (int64_t d = -nd; d < nd; ++d) {
        INFO(dtype_name(dt) << " " << c.name << " dim " << d);
        Tensor s = softmax(c.t, d);
        CHECK(s.dtype() == dt);
        CHECK(shape_of(s) == shape_of(c.t));
        double tol = dt == DType::Float32 ? 1e-6 : rtol_for(dt) * 2;
        check_values(s, ref_soft(c.t, d, false), tol, tol);
        Tensor l = log_softmax(c.t, d);
        check_values(l, ref_soft(c.t, d, true), tol, tol * 4);
      }
    }
  }
  // Stability: +-1e4 stays finite and correct.
  Tensor big = from_doubles({1e4, 1e4 - 1, -1e4, 1e4}, {4}, DType::Float32);
  check_values(softmax(big, 0), ref_soft(big, 0, false), 1e-6, 1e-7);
  check_values(log_softmax(big, 0), ref_soft(big, 0, true), 1e-6, 1e-3);
  Tensor neg = from_doubles({-1e4, -1e4 + 2, -1e4 + 1}, {1, 3},
                            DType::Float32);
  check_values(softmax(neg, 1), ref_soft(neg, 1, false), 1e-6, 1e-7);
  check_values(log_softmax(neg, -1), ref_soft(neg, 1, true), 1e-6, 1e-5);
  // dtype converts first; integer input without dtype has no kernel.
  Tensor i = from_doubles({1, 2, 3}, {3}, DType::Int64);
  Tensor si = softmax(i, 0, DType::Float64);
  CHECK(si.dtype() == DType::Float64);
  check_values(si, ref_soft(i, 0, false), 1e-12, 1e-15);
  REQUIRE_THROWS_AS(softmax(i, 0), NotImplementedError);
  REQUIRE_THROWS_AS(log_softmax(i, 0), NotImplementedError);
  REQUIRE_THROWS_AS(softmax(big, 1), IndexError);
  Tensor h = rand_tensor({4, 6}, DType::Float16, -3, 3);
  Tensor hf = log_softmax(h, 1, DType::Float32);
  CHECK(hf.dtype() == DType::Float32);
  check_values(hf, ref_soft(h, 1, true), 1e-6, 1e-6);
  // Large, split across threads, softmax along a strided dim.
  Tensor large = rand_tensor({300, 400}, DType::Float32, -4, 4, 51);
  check_values(softmax(large, 0), ref_soft(large, 0, false), 1e-5, 1e-7);
  check_values(softmax(large.transpose(0, 1), 1),
               ref_soft(large.transpose(0, 1), 1, false), 1e-5, 1e-7);
}

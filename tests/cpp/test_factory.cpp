// Factories and random numbers: Philox known answers, generator state,
// determinism, sample statistics with generous bounds, exact arange /
// linspace / eye values against references written here, error paths.
// Add a case per new factory, tagged [factory].
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/factory.h"
#include "csrc/parallel.h"
#include "kernels/philox.h"

using namespace fastt;
using fastt::test::error_of;
using fastt::test::get;
using fastt::test::values;

namespace {

struct Moments {
  double mean, var, min, max;
};
Moments moments(const Tensor& t) {
  std::vector<double> v = values(t);
  double s = 0, mn = 1e300, mx = -1e300;
  for (double x : v) {
    s += x;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  double mean = s / double(v.size()), ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, ss / double(v.size() - 1), mn, mx};
}

// Restores the default dtype when a test changes it.
struct DefaultDTypeGuard {
  DType saved = default_dtype();
  ~DefaultDTypeGuard() { set_default_dtype(saved); }
};

constexpr DType kFloatDTypes[] = {DType::Float16, DType::BFloat16,
                                  DType::Float32, DType::Float64};

}  // namespace

TEST_CASE("philox4x32-10 matches the Random123 known answers", "[factory]") {
  struct Kat {
    uint32_t ctr[4], key[2], want[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    philox::Block b = philox::philox4x32_10(k.ctr, k.key[0], k.key[1]);
    for (int j = 0; j < 4; ++j) CHECK(b.v[j] == k.want[j]);
  }
  // fastt's layout: seed -> key, block index -> low counter words.
  philox::Block b0 = philox::block(0, 0);
  CHECK(b0.v[0] == 0x6627e8d5u);
  // The uniform maps stay inside [0, 1).
  CHECK(philox::uniform_float(0xffffffffu) < 1.0f);
  CHECK(philox::uniform_float(0) == 0.0f);
  CHECK(philox::uniform_double(0xffffffffu, 0xffffffffu) < 1.0);
}

TEST_CASE("generator: seeding, state blobs and reservation",
          "[factory][threads]") {
  Generator g(123);
  CHECK(g.initial_seed() == 123);
  Generator::Range r0 = g.reserve(5);
  Generator::Range r1 = g.reserve(3);
  CHECK(r0.seed == 123);
  CHECK(r0.offset == 0);
  CHECK(r1.offset == 5);
  CHECK(g.state().offset == 8);

  std::vector<uint8_t> blob = g.get_state();
  REQUIRE(blob.size() == Generator::kStateBytes);
  Tensor a = rand({100}, std::nullopt, kCPU, &g);
  g.set_state(blob);
  Tensor b = rand({100}, std::nullopt, kCPU, &g);
  CHECK(values(a) == values(b));

  Generator h;
  h.set_state(g.state());
  CHECK(values(rand({7}, std::nullopt, kCPU, &g)) ==
        values(rand({7}, std::nullopt, kCPU, &h)));

  g.manual_seed(9);
  CHECK(g.state().offset == 0);
  CHECK(g.initial_seed() == 9);
  uint64_t s = g.seed();
  CHECK(g.initial_seed() == s);

  REQUIRE_THROWS_AS(g.set_state(std::vector<uint8_t>(3)), RuntimeError);

  // Concurrent reservations get disjoint ranges.
  Generator c(1);
  std::vector<uint64_t> offs[2];
  auto worker = [&](int w) {
    for (int k = 0; k < 1000; ++k) offs[w].push_back(c.reserve(3).offset);
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  std::set<uint64_t> all(offs[0].begin(), offs[0].end());
  all.insert(offs[1].begin(), offs[1].end());
  CHECK(all.size() == 2000);
  CHECK(c.state().offset == 6000);
  for (uint64_t o : all) CHECK(o % 3 == 0);

  manual_seed(77);
  CHECK(initial_seed() == 77);
  CHECK(default_generator().state().offset == 0);
  rand({10});  // 10 floats: 3 blocks of 4
  CHECK(default_generator().state().offset == 3);
  rand({10}, DType::Float64);  // 2 per block: 5 blocks
  CHECK(default_generator().state().offset == 8);
  rand({0, 4});  // empty: nothing reserved
  CHECK(default_generator().state().offset == 8);
}

TEST_CASE("random ops are deterministic per seed", "[factory]") {
  manual_seed(42);
  Tensor a = rand({1000});
  Tensor an = randn({1000});
  Tensor ai = randint(0, 1000, {1000});
  Tensor ap = randperm(1000);
  manual_seed(42);
  Tensor b = rand({1000});
  Tensor bn = randn({1000});
  Tensor bi = randint(0, 1000, {1000});
  Tensor bp = randperm(1000);
  CHECK(values(a) == values(b));
  CHECK(values(an) == values(bn));
  CHECK(values(ai) == values(bi));
  CHECK(values(ap) == values(bp));
  // The next draw continues the stream, so it differs.
  CHECK(values(rand({1000})) != values(a));
  manual_seed(43);
  CHECK(values(rand({1000})) != values(a));

  // A private generator does not touch the default one.
  manual_seed(5);
  Generator g(5);
  Tensor x = rand({50}, std::nullopt, kCPU, &g);
  CHECK(default_generator().state().offset == 0);
  CHECK(values(x) == values(rand({50})));
}

TEST_CASE("random values do not depend on the thread count", "[factory]") {
  const int saved = get_num_threads();
  std::vector<double> one[3], many[3];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    manual_seed(2024);
    auto& dst = threads == 1 ? one : many;
    dst[0] = values(rand({100003}));
    dst[1] = values(randn({100003}, DType::Float64));
    Tensor p = full({100003}, 0.5);
    dst[2] = values(bernoulli(p));
  }
  set_num_threads(saved);
  for (int k = 0; k < 3; ++k) CHECK(one[k] == many[k]);
}

TEST_CASE("in-place random ops follow the logical order", "[factory]") {
  // A transposed (non-contiguous) target gets the values a contiguous
  // tensor of its shape would get, element by logical index.
  for (DType dt : kFloatDTypes) {
    Tensor base = Tensor::empty({45, 65}, dt);
    Tensor t = base.t();  // 65 x 45, non-contiguous
    REQUIRE(!t.is_contiguous());
    manual_seed(11);
    uint32_t v0 = t.storage()->version();
    uniform_(t, -1, 3);
    CHECK(t.storage()->version() > v0);
    manual_seed(11);
    Tensor ref = Tensor::empty({65, 45}, dt);
    uniform_(ref, -1, 3);
    CHECK(values(t) == values(ref));

    manual_seed(12);
    normal_(t, 2, 0.5);
    manual_seed(12);
    normal_(ref, 2, 0.5);
    CHECK(values(t) == values(ref));

    // A slice with a step: only the selected elements are written.
    Tensor z = zeros({10, 9}, dt);
    Tensor s = z.slice(1, 0, 9, 2);  // columns 0, 2, 4, 6, 8
    uniform_(s, 5, 6);
    for (int64_t i = 0; i < 10; ++i)
      for (int64_t j = 0; j < 9; ++j) {
        double v = get(z, i * 9 + j);
        if (j % 2 == 0) CHECK((v >= 5 && v < 6));
        else CHECK(v == 0);
      }
  }
}

TEST_CASE("rand / uniform_: range and moments", "[factory]") {
  const int64_t n = 100000;
  for (DType dt : kFloatDTypes) {
    manual_seed(1);
    Tensor t = rand({n}, dt);
    CHECK(t.dtype() == dt);
    Moments m = moments(t);
    // Standard error of the mean: sqrt(1/12 / n) ~ 0.0009.
    CHECK(std::fabs(m.mean - 0.5) < 0.006);
    CHECK(std::fabs(m.var - 1.0 / 12) < 0.003);
    CHECK(m.min >= 0.0);
    CHECK(m.max < 1.0);
    // Ten equal bins, each within 5% of n / 10.
    std::vector<int> bins(10);
    for (double v : values(t)) bins[size_t(std::min(9.0, v * 10))]++;
    for (int c : bins) CHECK(std::abs(c - n / 10) < n / 200);

    Tensor u = Tensor::empty({n}, dt);
    uniform_(u, -2, 5);
    Moments mu = moments(u);
    CHECK(std::fabs(mu.mean - 1.5) < 0.05);
    CHECK(std::fabs(mu.var - 49.0 / 12) < 0.15);
    CHECK(mu.min >= -2);
    CHECK(mu.max < 5);
  }
  // float16 rounds about 1 in 4096 draws of [0, 1) up to 1.0; those must be
  // pulled back below the bound.
  manual_seed(3);
  Tensor h = rand({400000}, DType::Float16);
  CHECK(moments(h).max < 1.0);
  Tensor hb = Tensor::empty({400000}, DType::BFloat16);
  uniform_(hb, 1, 2);
  CHECK(moments(hb).max < 2.0);
  CHECK(moments(hb).min >= 1.0);
  // from == to is allowed and fills the bound.
  Tensor c = Tensor::empty({5}, DType::Float32);
  uniform_(c, 3, 3);
  for (double v : values(c)) CHECK(v == 3);
  // 0-d and empty.
  Tensor z = rand({});
  CHECK(z.dim() == 0);
  CHECK((z.item<double>() >= 0 && z.item<double>() < 1));
  CHECK(rand({3, 0}).numel() == 0);
}

TEST_CASE("randn / normal_: moments and tails", "[factory]") {
  const int64_t n = 100000;
  for (DType dt : kFloatDTypes) {
    manual_seed(2);
    Tensor t = randn({n}, dt);
    Moments m = moments(t);
    // SE of the mean 0.0032, of the variance ~0.0045.
    CHECK(std::fabs(m.mean) < 0.02);
    CHECK(std::fabs(m.var - 1) < 0.03);
    CHECK(m.min < -3.5);
    CHECK(m.max > 3.5);
    for (double v : values(t)) CHECK(std::isfinite(v));
    // A fraction within one sigma of ~0.6827.
    int64_t inside = 0;
    for (double v : values(t)) inside += std::fabs(v) < 1;
    CHECK(std::fabs(double(inside) / double(n) - 0.6827) < 0.01);

    Tensor u = Tensor::empty({n}, dt);
    normal_(u, 3, 2);
    Moments mu = moments(u);
    CHECK(std::fabs(mu.mean - 3) < 0.05);
    CHECK(std::fabs(mu.var - 4) < 0.15);
  }
  // std == 0 gives the mean exactly.
  Tensor c = Tensor::empty({9}, DType::Float64);
  normal_(c, -1.5, 0);
  for (double v : values(c)) CHECK(v == -1.5);
  // Odd sizes use every slot of the last block.
  CHECK(randn({45, 65}).numel() == 45 * 65);
  CHECK(randn({}).dim() == 0);
}

TEST_CASE("randint: ranges, dtypes and coverage", "[factory]") {
  manual_seed(4);
  Tensor t = randint(3, 7, {40000});
  CHECK(t.dtype() == DType::Int64);
  std::map<int64_t, int> counts;
  for (double v : values(t)) counts[int64_t(v)]++;
  REQUIRE(counts.size() == 4);
  for (auto& kv : counts) {
    CHECK((kv.first >= 3 && kv.first < 7));
    CHECK(std::abs(kv.second - 10000) < 500);
  }
  Tensor h = randint(10, {1000});  // low defaults to 0
  Moments mh = moments(h);
  CHECK(mh.min == 0);
  CHECK(mh.max == 9);

  struct Case {
    DType dt;
    int64_t lo, hi;
  };
  const Case cases[] = {{DType::Int8, -128, 128},  {DType::UInt8, 0, 256},
                        {DType::Int16, -5, 5},     {DType::Int32, -1000, 1},
                        {DType::Bool, 0, 2},       {DType::Float32, -7, 8},
                        {DType::Float16, 0, 2048}, {DType::BFloat16, -3, 3},
                        {DType::Float64, 100, 200}};
  for (const Case& c : cases) {
    Tensor r = randint(c.lo, c.hi, {45, 65}, c.dt);
    CHECK(r.dtype() == c.dt);
    Moments m = moments(r);
    CHECK(m.min >= double(c.lo));
    CHECK(m.max <= double(c.hi - 1));
    CHECK(m.min < m.max);  // not constant
    for (double v : values(r)) CHECK(v == std::floor(v));
  }
  // The full int64 range and a range wider than int64 max.
  Tensor w = randint(std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), {1000});
  Moments mw = moments(w);
  CHECK(mw.min < -1e17);
  CHECK(mw.max > 1e17);
  Tensor w2 = randint(-5, std::numeric_limits<int64_t>::max(), {1000});
  CHECK(moments(w2).min >= -5);

  // random_ in place over a non-contiguous target, and randint_like.
  Tensor z = zeros({6, 8}, DType::Int32);
  Tensor zt = z.t();
  random_(zt, 1, 4);
  for (double v : values(z)) CHECK((v >= 1 && v < 4));
  Tensor l = randint_like(z, 5);
  CHECK(l.dtype() == DType::Int32);
  CHECK(l.sizes().equals(z.sizes()));
  CHECK(moments(l).max <= 4);
  Tensor l2 = randint_like(z, -3, -1, DType::Int64);
  CHECK(l2.dtype() == DType::Int64);
  for (double v : values(l2)) CHECK((v == -3 || v == -2));
}

TEST_CASE("randperm: permutations, uniformity, dtypes", "[factory]") {
  manual_seed(6);
  for (int64_t n : {0, 1, 2, 5, 1000}) {
    Tensor p = randperm(n);
    CHECK(p.dtype() == DType::Int64);
    CHECK(p.numel() == n);
    std::vector<double> v = values(p);
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; ++i) CHECK(v[size_t(i)] == double(i));
  }
  // Not the identity (probability 1/1000! otherwise).
  std::vector<double> v = values(randperm(1000));
  bool moved = false;
  for (size_t i = 0; i < v.size(); ++i) moved |= v[i] != double(i);
  CHECK(moved);
  // Each of the 6 orders of 3 elements about equally often.
  std::map<std::vector<double>, int> orders;
  for (int k = 0; k < 6000; ++k) orders[values(randperm(3))]++;
  REQUIRE(orders.size() == 6);
  for (auto& kv : orders) CHECK(std::abs(kv.second - 1000) < 160);
  for (DType dt : {DType::Int32, DType::UInt8, DType::Float32, DType::Float16,
                   DType::Float64}) {
    Tensor p = randperm(200, dt);
    CHECK(p.dtype() == dt);
    std::vector<double> s = values(p);
    std::sort(s.begin(), s.end());
    for (int i = 0; i < 200; ++i) CHECK(s[size_t(i)] == double(i));
  }
  CHECK(randperm(256, DType::UInt8).numel() == 256);
  CHECK(randperm(2049, DType::Float16).numel() == 2049);
}

TEST_CASE("bernoulli: probabilities, broadcasting, dtypes", "[factory]") {
  manual_seed(8);
  const int64_t n = 100000;
  Tensor t = Tensor::empty({n}, DType::Float32);
  bernoulli_(t, 0.3);
  Moments m = moments(t);
  CHECK(std::fabs(m.mean - 0.3) < 0.008);  // SE 0.0015
  CHECK(m.min == 0);
  CHECK(m.max == 1);
  for (DType dt : test::kAllDTypes) {
    Tensor b = Tensor::empty({45, 65}, dt);
    bernoulli_(b, 0.5);
    for (double x : values(b)) CHECK((x == 0 || x == 1));
    bernoulli_(b, 0.0);
    for (double x : values(b)) CHECK(x == 0);
    bernoulli_(b, 1.0);
    for (double x : values(b)) CHECK(x == 1);
  }
  // p tensor: rows of p = 0, 1 and 0.5, in every floating dtype.
  for (DType dt : kFloatDTypes) {
    std::vector<double> pv;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4000; ++c)
        pv.push_back(r == 0 ? 0 : r == 1 ? 1 : 0.5);
    Tensor p = test::make(pv, {3, 4000}, dt);
    Tensor out = bernoulli(p);
    CHECK(out.dtype() == dt);
    CHECK(out.sizes().equals(p.sizes()));
    double sum_half = 0;
    for (int64_t c = 0; c < 4000; ++c) {
      CHECK(get(out, c) == 0);
      CHECK(get(out, 4000 + c) == 1);
      sum_half += get(out, 8000 + c);
    }
    CHECK(std::fabs(sum_half / 4000 - 0.5) < 0.04);
  }
  // Broadcast p over the rows of an integer, transposed target.
  Tensor p = test::make({0, 1, 0, 1, 1}, {5}, DType::Float64);
  Tensor base = Tensor::empty({5, 7}, DType::Int32);
  Tensor tt = base.t();  // 7 x 5
  bernoulli_(tt, p);
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 5; ++j)
      CHECK(get(tt, i * 5 + j) == get(p, j));
  // 0-d p.
  Tensor p0 = test::scalar_tensor(1.0, DType::Float32);
  CHECK(bernoulli(p0).item<double>() == 1);
}

TEST_CASE("arange: sizes and exact values", "[factory]") {
  DefaultDTypeGuard guard;
  // Reference: torch's size rule and start + step * i in double.
  auto ref = [](double start, double end, double step) {
    std::vector<double> v;
    int64_t n = int64_t(std::ceil((end - start) / step));
    for (int64_t i = 0; i < n; ++i) v.push_back(start + step * double(i));
    return v;
  };
  Tensor a = arange(10);
  CHECK(a.dtype() == DType::Int64);
  CHECK(values(a) == ref(0, 10, 1));
  CHECK(values(arange(-3, 3)) == ref(-3, 3, 1));
  CHECK(values(arange(0, 10, 3)) == std::vector<double>{0, 3, 6, 9});
  CHECK(values(arange(10, 0, -3)) == std::vector<double>{10, 7, 4, 1});
  CHECK(values(arange(10, 1, -3)) == std::vector<double>{10, 7, 4});
  CHECK(arange(5, 5).numel() == 0);
  CHECK(arange(0).numel() == 0);

  Tensor f = arange(0, 1, 0.1);
  CHECK(f.dtype() == DType::Float32);
  REQUIRE(f.numel() == 10);
  std::vector<double> r = ref(0, 1, 0.1);
  for (int64_t i = 0; i < 10; ++i) CHECK(get(f, i) == double(float(r[i])));
  Tensor g = arange(1, -1, -0.25);
  REQUIRE(g.numel() == 8);
  CHECK(get(g, 7) == -0.75);
  CHECK(arange(0.5).numel() == 1);
  CHECK(arange(0, 1.0000001, 0.5).numel() == 3);

  Tensor d = arange(0, 1, 0.1, DType::Float64);
  for (int64_t i = 0; i < 10; ++i) CHECK(get(d, i) == r[size_t(i)]);
  Tensor i32 = arange(2, 20, 4, DType::Int32);
  CHECK(i32.dtype() == DType::Int32);
  CHECK(values(i32) == std::vector<double>{2, 6, 10, 14, 18});
  Tensor hf = arange(0, 3, 0.5, DType::Float16);
  CHECK(values(hf) == std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5});
  // Integer dtype with float bounds: torch truncates the bounds first.
  CHECK(values(arange(0.5, 5, 1.5, DType::Int32)) ==
        std::vector<double>{0, 1, 2});
  Tensor big = arange(45 * 65);
  CHECK(get(big, 45 * 65 - 1) == 45 * 65 - 1);

  set_default_dtype(DType::Float64);
  CHECK(arange(0.0, 2.0).dtype() == DType::Float64);
  CHECK(arange(2).dtype() == DType::Int64);
}

TEST_CASE("linspace: symmetric values and endpoints", "[factory]") {
  // Reference: torch's CPU kernel in float.
  auto ref = [](float start, float end, int64_t steps) {
    std::vector<double> v;
    float step = (end - start) / float(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      v.push_back(i < steps / 2 ? start + step * float(i)
                                : end - step * float(steps - i - 1));
    return v;
  };
  Tensor a = linspace(0, 1, 5);
  CHECK(a.dtype() == DType::Float32);
  CHECK(values(a) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  for (int64_t steps : {2, 3, 7, 100, 1001}) {
    Tensor t = linspace(-1.3, 2.7, steps);
    std::vector<double> want = ref(-1.3f, 2.7f, steps);
    CHECK(values(t) == want);
    CHECK(get(t, 0) == double(-1.3f));
    CHECK(get(t, steps - 1) == double(2.7f));
  }
  Tensor rev = linspace(5, -5, 11);
  CHECK(values(rev) ==
        std::vector<double>{5, 4, 3, 2, 1, 0, -1, -2, -3, -4, -5});
  CHECK(linspace(0, 1, 0).numel() == 0);
  CHECK(values(linspace(3, 9, 1)) == std::vector<double>{3});
  CHECK(values(linspace(0, 10, 4, DType::Int64)) ==
        std::vector<double>{0, 3, 6, 10});
  Tensor d = linspace(0, 1, 3, DType::Float64);
  CHECK(values(d) == std::vector<double>{0, 0.5, 1});
  Tensor h = linspace(0, 1, 5, DType::BFloat16);
  CHECK(values(h) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
}

TEST_CASE("eye, zeros, ones, full and the _like factories", "[factory]") {
  Tensor e = eye(3);
  CHECK(e.dtype() == DType::Float32);
  CHECK(e.sizes().equals({3, 3}));
  for (int64_t i = 0; i < 9; ++i) CHECK(get(e, i) == (i % 4 == 0 ? 1 : 0));
  Tensor r = eye(2, 4, DType::Int64);
  CHECK(r.sizes().equals({2, 4}));
  CHECK(values(r) == std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0});
  Tensor tall = eye(4, 2, DType::Bool);
  CHECK(values(tall) == std::vector<double>{1, 0, 0, 1, 0, 0, 0, 0});
  CHECK(eye(0).sizes().equals({0, 0}));
  CHECK(eye(3, 0).sizes().equals({3, 0}));
  for (DType dt : test::kAllDTypes) {
    Tensor x = eye(45, 65, dt);
    double trace = 0, total = 0;
    for (int64_t i = 0; i < 45 * 65; ++i) {
      total += get(x, i);
      if (i % 65 == i / 65) trace += get(x, i);
    }
    CHECK(trace == 45);
    CHECK(total == 45);
  }

  CHECK(full({2}, true).dtype() == DType::Bool);
  CHECK(full({2}, 3).dtype() == DType::Int64);
  CHECK(full({2}, 2.5).dtype() == DType::Float32);
  Tensor fh = full({2, 3}, 7, DType::Float16);
  CHECK(fh.dtype() == DType::Float16);
  CHECK(values(fh) == std::vector<double>(6, 7));
  CHECK(values(full({}, -4)) == std::vector<double>{-4});
  CHECK(zeros({2, 3}).dtype() == DType::Float32);
  CHECK(values(zeros({2, 3})) == std::vector<double>(6, 0));
  CHECK(values(ones({4}, DType::Int8)) == std::vector<double>(4, 1));
  CHECK(empty({0}).numel() == 0);
  CHECK(zeros({}).dim() == 0);
  {
    DefaultDTypeGuard guard;
    set_default_dtype(DType::Float64);
    CHECK(zeros({1}).dtype() == DType::Float64);
    CHECK(full({1}, 1.5).dtype() == DType::Float64);
    CHECK(rand({1}).dtype() == DType::Float64);
  }

  Tensor base = Tensor::empty({45, 65}, DType::Int16).t();
  Tensor zl = zeros_like(base);
  CHECK(zl.dtype() == DType::Int16);
  CHECK(zl.sizes().equals({65, 45}));
  CHECK(zl.is_contiguous());
  CHECK(values(ones_like(base, DType::Float64)) ==
        std::vector<double>(45 * 65, 1));
  CHECK(values(full_like(base, 3)) == std::vector<double>(45 * 65, 3));
  CHECK(empty_like(base).sizes().equals(base.sizes()));
  Tensor fl = Tensor::empty({3, 2}, DType::Float64);
  CHECK(rand_like(fl).dtype() == DType::Float64);
  CHECK(randn_like(fl, DType::Float16).dtype() == DType::Float16);
  CHECK(randn_like(fl).sizes().equals({3, 2}));
}

TEST_CASE("factory and random errors", "[factory]") {
  REQUIRE_THROWS_AS(zeros({2, -1}), RuntimeError);
  REQUIRE_THROWS_AS(rand({-3}), RuntimeError);
  // Floating-only ops reject other dtypes.
  REQUIRE_THROWS_AS(randn({3}, DType::Int64), TypeError);
  CHECK(error_of([] { randn({3}, DType::Int64); }).find("normal_ expects "
                                                        "floating point") !=
        std::string::npos);
  REQUIRE_THROWS_AS(rand({3}, DType::Bool), TypeError);
  Tensor it = Tensor::empty({4}, DType::Int32);
  REQUIRE_THROWS_AS(uniform_(it), TypeError);
  REQUIRE_THROWS_AS(normal_(it), TypeError);
  REQUIRE_THROWS_AS(rand_like(it), TypeError);
  REQUIRE_THROWS_AS(randn_like(it), TypeError);
  REQUIRE_THROWS_AS(bernoulli(it), TypeError);
  Tensor ft = Tensor::empty({4}, DType::Float32);
  REQUIRE_THROWS_AS(bernoulli_(ft, it), TypeError);
  // Bad parameters.
  REQUIRE_THROWS_AS(normal_(ft, 0, -1), RuntimeError);
  REQUIRE_THROWS_AS(uniform_(ft, 2, 1), RuntimeError);
  REQUIRE_THROWS_AS(uniform_(ft, 0, INFINITY), RuntimeError);
  REQUIRE_THROWS_AS(uniform_(ft, -3e38, 3e38), RuntimeError);
  Tensor ht = Tensor::empty({4}, DType::Float16);
  REQUIRE_THROWS_AS(uniform_(ht, 0, 70000), RuntimeError);
  REQUIRE_THROWS_AS(bernoulli_(ft, 1.5), RuntimeError);
  REQUIRE_THROWS_AS(bernoulli_(ft, -0.1), RuntimeError);
  Tensor badp = test::make({0.5, 2.0, 0.1, 0.2}, {4}, DType::Float32);
  REQUIRE_THROWS_AS(bernoulli_(ft, badp), RuntimeError);
  REQUIRE_THROWS_AS(bernoulli(badp), RuntimeError);
  Tensor p3 = test::make({0.5, 0.5, 0.5}, {3}, DType::Float32);
  REQUIRE_THROWS_AS(bernoulli_(ft, p3), RuntimeError);
  Tensor p8 = Tensor::empty({2, 4}, DType::Float32);
  REQUIRE_THROWS_AS(bernoulli_(ft, p8), RuntimeError);  // p larger than t
  // Writing through an expanded (overlapping) view.
  Tensor ex = zeros({1}).expand({5});
  REQUIRE_THROWS_AS(uniform_(ex), RuntimeError);
  REQUIRE_THROWS_AS(normal_(ex), RuntimeError);
  REQUIRE_THROWS_AS(bernoulli_(ex, 0.5), RuntimeError);
  // randint ranges.
  REQUIRE_THROWS_AS(randint(5, 5, {3}), RuntimeError);
  CHECK(error_of([] { randint(5, 5, {3}); })
            .find("random_ expects 'from' to be less than 'to', but got "
                  "from=5 >= to=5") != std::string::npos);
  REQUIRE_THROWS_AS(randint(0, {3}), RuntimeError);
  CHECK(error_of([] { randint(0, 300, {3}, DType::UInt8); })
            .find("to - 1 is out of bounds for uint8") != std::string::npos);
  CHECK(error_of([] { randint(-1, 3, {3}, DType::UInt8); })
            .find("from is out of bounds for uint8") != std::string::npos);
  REQUIRE_THROWS_AS(randint(0, 3, {3}, DType::Bool), RuntimeError);
  REQUIRE_THROWS_AS(randint(0, 5000, {3}, DType::Float16), RuntimeError);
  // randperm.
  REQUIRE_THROWS_AS(randperm(-1), RuntimeError);
  REQUIRE_THROWS_AS(randperm(300, DType::UInt8), RuntimeError);
  REQUIRE_THROWS_AS(randperm(2050, DType::Float16), RuntimeError);
  REQUIRE_THROWS_AS(randperm(3, DType::Bool), NotImplementedError);
  // arange.
  REQUIRE_THROWS_AS(arange(0, 5, 0), RuntimeError);
  REQUIRE_THROWS_AS(arange(0.0, 5.0, 0.0), RuntimeError);
  CHECK(error_of([] { arange(0, 5, -1); })
            .find("upper bound and lower bound inconsistent with step "
                  "sign") != std::string::npos);
  REQUIRE_THROWS_AS(arange(5.0, 0.0, 0.5), RuntimeError);
  REQUIRE_THROWS_AS(arange(0.0, INFINITY, 1.0), RuntimeError);
  REQUIRE_THROWS_AS(arange(0, 10, 0.5, DType::Int64), RuntimeError);
  REQUIRE_THROWS_AS(arange(3, DType::Bool), NotImplementedError);
  REQUIRE_THROWS_AS(arange(0, 1e30, 1, DType::Int64), RuntimeError);
  REQUIRE_THROWS_AS(linspace(0, -1e30, 3, DType::Int32), RuntimeError);
  // linspace and eye.
  REQUIRE_THROWS_AS(linspace(0, 1, -1), RuntimeError);
  REQUIRE_THROWS_AS(linspace(0, 1, 3, DType::Bool), NotImplementedError);
  REQUIRE_THROWS_AS(eye(-1), RuntimeError);
  REQUIRE_THROWS_AS(eye(2, -3), RuntimeError);
  // Failed calls reserve nothing.
  manual_seed(1);
  REQUIRE_THROWS(normal_(ft, 0, -1));
  REQUIRE_THROWS(randint(3, 1, {5}));
  CHECK(default_generator().state().offset == 0);
}

// Gradients of the indexing/shape ops (csrc/ops/index.h) checked against
// central finite differences in float64: loss = sum(f(inputs) * w) for a
// fixed w, fastt::grad vs (loss(x + e) - loss(x - e)) / 2e per element.
// Add a case: a TEST_CASE calling gradcheck with the op under a lambda.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops.h"

using namespace fastt;

namespace {

using Inputs = std::vector<Tensor>;
using Fn = std::function<Tensor(const Inputs&)>;

Tensor f64(IntList shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<double> v(size_t(checked_numel(shape, "test")));
  for (double& x : v) x = nd(rng);
  return test::make(v, shape, DType::Float64);
}

Tensor i64(const std::vector<double>& v, IntList shape) {
  return test::make(v, shape, DType::Int64);
}

Tensor mask_of(const std::vector<double>& v, IntList shape) {
  return test::make(v, shape, DType::Bool);
}

// A float64 pointer to element `linear` (row-major) of t, any strides.
double* element(const Tensor& t, int64_t linear) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t s = t.sizes()[size_t(d)];
    off += (linear % s) * t.strides()[size_t(d)];
    linear /= s;
  }
  return static_cast<double*>(t.data_ptr()) + off;
}

double loss_value(const Fn& f, const Inputs& in) {
  NoGradGuard guard;
  Tensor out = f(in);
  double s = 0;
  for (int64_t i = 0; i < out.numel(); ++i)
    s += test::get(out, i) * std::cos(double(i) + 0.5);
  return s;
}

// Checks the gradient of every input marked in `diff` (float64 leaves).
// Returns the output so callers can check more (grad_fn name, ...).
Tensor gradcheck(const Fn& f, Inputs in, const std::vector<bool>& diff) {
  Inputs leaves;
  for (size_t k = 0; k < in.size(); ++k)
    if (diff[k]) {
      requires_grad_(in[k], true);
      leaves.push_back(in[k]);
    }
  Tensor out = f(in);
  REQUIRE(fastt::requires_grad(out));
  std::vector<double> w(size_t(out.numel()));
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(double(i) + 0.5);
  Tensor wt = test::make(w, out.sizes(), out.dtype());
  Tensor loss = fastt::sum(fastt::mul(out, wt));
  std::vector<Tensor> grads = fastt::grad({loss}, leaves, {}, false, false,
                                          /*allow_unused=*/true);
  const double eps = 1e-6;
  size_t li = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    if (!diff[k]) continue;
    const Tensor& x = in[k];
    const Tensor& g = grads[li++];
    if (g.defined()) {
      REQUIRE(g.sizes().equals(x.sizes()));
      REQUIRE(g.dtype() == x.dtype());
    }
    for (int64_t j = 0; j < x.numel(); ++j) {
      double* p = element(x, j);
      const double orig = *p;
      *p = orig + eps;
      const double up = loss_value(f, in);
      *p = orig - eps;
      const double down = loss_value(f, in);
      *p = orig;
      const double numeric = (up - down) / (2 * eps);
      const double analytic = g.defined() ? test::get(g, j) : 0.0;
      INFO("input " << k << " element " << j);
      REQUIRE(analytic == Approx(numeric).margin(1e-6).epsilon(1e-6));
    }
  }
  return out;
}

std::string name_of(const Tensor& t) { return grad_fn_name(t); }

}  // namespace

TEST_CASE("cat: gradients are the input slices", "[autograd_index]") {
  Fn f = [](const Inputs& v) { return fastt::cat({v[0], v[1], v[0]}, 1); };
  Tensor out = gradcheck(f, {f64({3, 2}, 1), f64({3, 4}, 2)}, {true, true});
  CHECK(name_of(out) == "CatBackward0");
  // Negative dim, a transposed input, an input that needs no gradient.
  gradcheck([](const Inputs& v) { return fastt::cat({v[0].t(), v[1]}, -2); },
            {f64({4, 3}, 3), f64({2, 4}, 4)}, {true, false});
  gradcheck([](const Inputs& v) { return fastt::cat({v[0].t(), v[1]}, -2); },
            {f64({4, 3}, 3), f64({2, 4}, 4)}, {false, true});
  // A legacy 1-D empty input is skipped by cat and gets an empty gradient.
  gradcheck([](const Inputs& v) { return fastt::cat({v[0], v[1]}, 1); },
            {f64({0}, 5), f64({2, 3}, 6)}, {true, true});
}

TEST_CASE("cat: gradients come back in each input's dtype",
          "[autograd_index]") {
  Tensor a = test::make({1, 2, 3}, {3}, DType::Float32);
  Tensor b = f64({2}, 7);
  requires_grad_(a, true);
  requires_grad_(b, true);
  Tensor out = fastt::cat({a, b});
  REQUIRE(out.dtype() == DType::Float64);
  auto g = fastt::grad({fastt::sum(fastt::mul(out, Scalar(2.0)))}, {a, b});
  CHECK(g[0].dtype() == DType::Float32);
  CHECK(g[1].dtype() == DType::Float64);
  CHECK(test::values(g[0]) == std::vector<double>{2, 2, 2});
}

TEST_CASE("stack records one node", "[autograd_index]") {
  Fn f = [](const Inputs& v) {
    return fastt::stack({v[0], fastt::mul(v[1], Scalar(3.0)), v[0]}, -1);
  };
  Tensor out = gradcheck(f, {f64({2, 3}, 8), f64({2, 3}, 9)}, {true, true});
  CHECK(name_of(out) == "StackBackward0");
  gradcheck([](const Inputs& v) { return fastt::stack({v[0].t(), v[0]}, 0); },
            {f64({3, 3}, 10)}, {true});
}

TEST_CASE("split, chunk and unbind record as views", "[autograd_index]") {
  gradcheck(
      [](const Inputs& v) {
        auto parts = fastt::split(v[0], 2, 1);  // widths 2, 2, 1
        return fastt::cat({fastt::mul(parts[2], Scalar(3.0)), parts[0],
                           fastt::mul(parts[0], parts[1])},
                          1);
      },
      {f64({3, 5}, 11)}, {true});
  gradcheck(
      [](const Inputs& v) {
        auto parts = fastt::split_with_sizes(v[0], {1, 3}, -2);
        return fastt::mul(parts[1], parts[1]);
      },
      {f64({4, 2}, 12)}, {true});
  gradcheck(
      [](const Inputs& v) { return fastt::chunk(v[0].t(), 2, -1)[1]; },
      {f64({3, 4}, 13)}, {true});
  gradcheck(
      [](const Inputs& v) {
        auto rows = fastt::unbind(v[0], 1);
        return fastt::mul(rows[0], rows[2]);
      },
      {f64({2, 3}, 14)}, {true});
}

TEST_CASE("repeat sums the tiles", "[autograd_index]") {
  Tensor out = gradcheck(
      [](const Inputs& v) { return fastt::repeat(v[0], {2, 1, 3}); },
      {f64({3, 2}, 15)}, {true});
  CHECK(name_of(out) == "RepeatBackward0");
  gradcheck([](const Inputs& v) { return fastt::repeat(v[0].t(), {2, 2}); },
            {f64({3, 2}, 16)}, {true});
  gradcheck([](const Inputs& v) { return fastt::repeat(v[0], {4}); },
            {f64({}, 17)}, {true});
  gradcheck([](const Inputs& v) { return fastt::repeat(v[0], {0, 2}); },
            {f64({2}, 18)}, {true});
  // More than 8 repeat dims: the dim-by-dim path.
  gradcheck(
      [](const Inputs& v) {
        return fastt::repeat(v[0], {1, 2, 1, 1, 1, 1, 1, 1, 3, 2});
      },
      {f64({2, 1}, 19)}, {true});
}

TEST_CASE("index_select and gather", "[autograd_index]") {
  Tensor idx = i64({4, 0, 4, 2, 4}, {5});
  Tensor out = gradcheck(
      [&](const Inputs& v) { return fastt::index_select(v[0], 1, idx); },
      {f64({3, 5}, 20)}, {true});
  CHECK(name_of(out) == "IndexSelectBackward0");
  Tensor idx32 = test::make({2, 2, 0}, {3}, DType::Int32);
  gradcheck(
      [&](const Inputs& v) {
        return fastt::index_select(v[0].t(), -1, idx32);
      },
      {f64({3, 5}, 21)}, {true});
  gradcheck(
      [&](const Inputs& v) {
        return fastt::index_select(v[0], 0, i64({0}, {1}));
      },
      {f64({}, 22)}, {true});

  Tensor gi = i64({0, 0, 1, 4, 4, 4, 2, 1, 0}, {3, 3});
  out = gradcheck([&](const Inputs& v) { return fastt::gather(v[0], 1, gi); },
                  {f64({3, 5}, 23)}, {true});
  CHECK(name_of(out) == "GatherBackward0");
  Tensor gi2 = i64({0, 4, 4, 1, 1, 1, 2, 0}, {2, 4});
  gradcheck([&](const Inputs& v) { return fastt::gather(v[0].t(), -2, gi2); },
            {f64({4, 5}, 24)}, {true});
}

TEST_CASE("scatter, scatter_add and index_add", "[autograd_index]") {
  // Distinct targets per column for scatter (duplicates keep one writer).
  Tensor si = i64({0, 1, 2, 3, 1, 2, 3, 0, 1, 0}, {2, 5});
  Tensor out = gradcheck(
      [&](const Inputs& v) { return fastt::scatter(v[0], 0, si, v[1]); },
      {f64({4, 5}, 25), f64({2, 5}, 26)}, {true, true});
  CHECK(name_of(out) == "ScatterBackward0");
  // src larger than index: only its leading block is read.
  gradcheck([&](const Inputs& v) { return fastt::scatter(v[0], 0, si, v[1]); },
            {f64({4, 5}, 27), f64({3, 6}, 28)}, {true, true});
  out = gradcheck(
      [&](const Inputs& v) {
        return fastt::scatter(v[0].t(), -1, i64({1, 0, 3, 2}, {4, 1}),
                              Scalar(2.5));
      },
      {f64({4, 4}, 29)}, {true});
  CHECK(name_of(out) == "ScatterBackward1");

  Tensor dup = i64({0, 0, 0, 1, 1, 4, 2, 3, 2}, {3, 3});
  out = gradcheck(
      [&](const Inputs& v) { return fastt::scatter_add(v[0], 1, dup, v[1]); },
      {f64({3, 5}, 30), f64({3, 4}, 31)}, {true, true});
  CHECK(name_of(out) == "ScatterAddBackward0");

  out = gradcheck(
      [&](const Inputs& v) {
        return fastt::index_add(v[0], 0, i64({1, 3, 1}, {3}), v[1],
                                Scalar(-1.5));
      },
      {f64({4, 5}, 32), f64({3, 5}, 33)}, {true, true});
  CHECK(name_of(out) == "IndexAddBackward0");
  gradcheck(
      [&](const Inputs& v) {
        return fastt::index_add(v[0].t(), -1, i64({2, 2}, {2}), v[1]);
      },
      {f64({3, 4}, 34), f64({4, 2}, 35)}, {true, true});
}

TEST_CASE("embedding: duplicates add up, padding row gets nothing",
          "[autograd_index]") {
  Tensor ids = i64({1, 5, 1, 0, 2, 1}, {2, 3});
  Tensor out = gradcheck(
      [&](const Inputs& v) { return fastt::embedding(v[0], ids, -1); },
      {f64({6, 3}, 36)}, {true});
  CHECK(name_of(out) == "EmbeddingBackward0");
  // With padding_idx the forward is unchanged, the gradient is the same
  // but for the padding row, which is zero.
  Tensor w = f64({6, 3}, 37);
  requires_grad_(w, true);
  Tensor up = test::make({1, 2, 3}, {1, 3}, DType::Float64);
  auto grad_with = [&](int64_t pad) {
    return fastt::grad({fastt::sum(fastt::mul(fastt::embedding(w, ids, pad),
                                              up))},
                       {w})[0];
  };
  Tensor full = grad_with(-1);
  for (int64_t pad : {int64_t(1), int64_t(5), int64_t(4)}) {
    Tensor g = grad_with(pad);
    for (int64_t r = 0; r < 6; ++r)
      CHECK(test::values(g.select(0, r)) ==
            (r == pad ? std::vector<double>{0, 0, 0}
                      : test::values(full.select(0, r))));
  }
}

TEST_CASE("advanced indexing: index", "[autograd_index]") {
  Tensor dup = i64({3, 0, 3, 3}, {4});
  Tensor out = gradcheck(
      [&](const Inputs& v) { return fastt::index(v[0], {dup}); },
      {f64({4, 5}, 40)}, {true});
  CHECK(name_of(out) == "IndexBackward0");
  // Two broadcast indices; a slice between two indices (moved to front).
  Tensor r = i64({0, 1, 3, 3}, {2, 2}), c = i64({4, 0}, {2});
  gradcheck([&](const Inputs& v) { return fastt::index(v[0], {r, c}); },
            {f64({4, 5}, 41)}, {true});
  gradcheck(
      [&](const Inputs& v) {
        return fastt::index(v[0], {i64({0, 2, 2}, {3}), Tensor(),
                                   i64({-1, 4, -1}, {3})});
      },
      {f64({3, 2, 5}, 42)}, {true});
  // Non-contiguous self, a leading slice, negative indices.
  gradcheck(
      [&](const Inputs& v) {
        return fastt::index(v[0].t(), {Tensor(), i64({-1, -4, -1}, {3})});
      },
      {f64({4, 3}, 43)}, {true});
  Tensor m = mask_of({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1}, {3, 4});
  gradcheck([&](const Inputs& v) { return fastt::index(v[0], {m}); },
            {f64({3, 4}, 44)}, {true});
}

TEST_CASE("advanced indexing: index_put and index_put_", "[autograd_index]") {
  Tensor rows = i64({0, 2}, {2});
  Tensor out = gradcheck(
      [&](const Inputs& v) { return fastt::index_put(v[0], {rows}, v[1]); },
      {f64({4, 5}, 50), f64({2, 5}, 51)}, {true, true});
  CHECK(name_of(out) == "IndexPutBackward0");
  // Values broadcast over the indexed rows: their gradient sums.
  gradcheck(
      [&](const Inputs& v) {
        return fastt::index_put(v[0], {i64({0, 2, 3}, {3})}, v[1]);
      },
      {f64({4, 5}, 52), f64({5}, 53)}, {true, true});
  // Accumulate with duplicate indices.
  gradcheck(
      [&](const Inputs& v) {
        return fastt::index_put(v[0], {i64({1, 1, 3}, {3})}, v[1], true);
      },
      {f64({4, 5}, 54), f64({3, 5}, 55)}, {true, true});
  // In place on a non-leaf, two indices, a bool mask, a view (CopySlices).
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        fastt::index_put_(y, {i64({0, 3}, {2}), i64({4, 1}, {2})}, v[1]);
        return y;
      },
      {f64({4, 5}, 56), f64({2}, 57)}, {true, true});
  Tensor m = mask_of({1, 0, 0, 1, 1, 0}, {2, 3});
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(2.0));
        fastt::index_put_(y, {m}, v[1]);
        return y;
      },
      {f64({2, 3}, 58), f64({}, 59)}, {true, true});
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        Tensor view = y.narrow(1, 1, 3);
        fastt::index_put_(view, {i64({2, 0}, {2})}, v[1], true);
        return y;
      },
      {f64({3, 5}, 60), f64({2, 3}, 61)}, {true, true});
}

TEST_CASE("masked_select and masked_scatter", "[autograd_index]") {
  Tensor m = mask_of({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1}, {3, 4});
  Tensor out = gradcheck(
      [&](const Inputs& v) { return fastt::masked_select(v[0], m); },
      {f64({3, 4}, 70)}, {true});
  CHECK(name_of(out) == "MaskedSelectBackward0");
  // self broadcast against the mask: its gradient sums over the copies.
  gradcheck([&](const Inputs& v) { return fastt::masked_select(v[0], m); },
            {f64({1, 4}, 71)}, {true});
  gradcheck([&](const Inputs& v) { return fastt::masked_select(v[0].t(), m); },
            {f64({4, 3}, 72)}, {true});

  out = gradcheck(
      [&](const Inputs& v) { return fastt::masked_scatter(v[0], m, v[1]); },
      {f64({3, 4}, 73), f64({3, 3}, 74)}, {true, true});
  CHECK(name_of(out) == "MaskedScatterBackward0");
  Tensor row = mask_of({0, 1, 1, 0}, {4});
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        fastt::masked_scatter_(y, row, v[1]);
        return y;
      },
      {f64({3, 4}, 75), f64({7}, 76)}, {true, true});
}

TEST_CASE("tril, triu, flip, roll", "[autograd_index]") {
  Tensor out = gradcheck([](const Inputs& v) { return fastt::tril(v[0]); },
                         {f64({4, 3}, 80)}, {true});
  CHECK(name_of(out) == "TrilBackward0");
  out = gradcheck(
      [](const Inputs& v) { return fastt::triu(v[0].transpose(1, 2), 1); },
      {f64({2, 3, 4}, 81)}, {true});
  CHECK(name_of(out) == "TriuBackward0");
  gradcheck(
      [](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        fastt::tril_(y, -1);
        return y;
      },
      {f64({3, 4}, 82)}, {true});
  gradcheck(
      [](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0)).t();  // non-contiguous
        fastt::triu_(y);
        return y;
      },
      {f64({3, 4}, 83)}, {true});

  out = gradcheck([](const Inputs& v) { return fastt::flip(v[0], {0, -1}); },
                  {f64({2, 3, 4}, 84)}, {true});
  CHECK(name_of(out) == "FlipBackward0");
  out = gradcheck(
      [](const Inputs& v) { return fastt::roll(v[0].t(), {1, -2}, {0, 1}); },
      {f64({4, 5}, 85)}, {true});
  CHECK(name_of(out) == "RollBackward0");
  gradcheck([](const Inputs& v) { return fastt::roll(v[0], {3}); },
            {f64({4, 5}, 86)}, {true});
  gradcheck([](const Inputs& v) { return fastt::roll(v[0], {1, 2}, {1, -1}); },
            {f64({4, 5}, 87)}, {true});
  gradcheck([](const Inputs& v) { return fastt::roll(v[0], {5}, {1}); },
            {f64({4, 5}, 88)}, {true});
}

TEST_CASE("sort and topk: values only", "[autograd_index]") {
  Tensor out = gradcheck(
      [](const Inputs& v) { return std::get<0>(fastt::sort(v[0], 1)); },
      {f64({3, 5}, 90)}, {true});
  CHECK(name_of(out) == "SortBackward0");
  gradcheck(
      [](const Inputs& v) {
        return std::get<0>(fastt::sort(v[0].t(), -2, true));
      },
      {f64({3, 5}, 91)}, {true});
  gradcheck([](const Inputs& v) { return std::get<0>(fastt::sort(v[0])); },
            {f64({}, 92)}, {true});
  out = gradcheck(
      [](const Inputs& v) { return std::get<0>(fastt::topk(v[0], 2)); },
      {f64({3, 5}, 93)}, {true});
  CHECK(name_of(out) == "TopkBackward0");
  gradcheck(
      [](const Inputs& v) {
        return std::get<0>(fastt::topk(v[0].t(), 3, 0, false));
      },
      {f64({3, 5}, 94)}, {true});

  Tensor x = f64({3, 4}, 95);
  requires_grad_(x, true);
  auto [values, indices] = fastt::sort(x);
  CHECK(fastt::requires_grad(values));
  CHECK_FALSE(fastt::requires_grad(indices));
  CHECK_FALSE(fastt::requires_grad(fastt::argsort(x)));
}

TEST_CASE("in-place scatter, scatter_add_, index_add_", "[autograd_index]") {
  Tensor si = i64({4, 3, 0, 1}, {4, 1});
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        fastt::scatter_(y, 1, si, v[1]);
        return y;
      },
      {f64({4, 5}, 100), f64({4, 1}, 101)}, {true, true});
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        fastt::scatter_(y, 1, si, Scalar(-1.0));
        return y;
      },
      {f64({4, 5}, 102)}, {true});
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        fastt::scatter_add_(y, 0, i64({0, 0, 3, 3, 2, 0, 1, 1, 2, 2}, {2, 5}),
                            v[1]);
        return y;
      },
      {f64({4, 5}, 103), f64({2, 5}, 104)}, {true, true});
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::mul(v[0], Scalar(1.0));
        fastt::index_add_(y, 1, i64({4, 4, 0}, {3}), v[1], Scalar(2.0));
        return y;
      },
      {f64({4, 5}, 105), f64({4, 3}, 106)}, {true, true});
  // A tensor that needs no gradient takes history from src.
  gradcheck(
      [&](const Inputs& v) {
        Tensor y = fastt::zeros({4, 5}, DType::Float64);
        fastt::scatter_add_(y, 1, i64({0, 0, 1, 4}, {4, 1}), v[0]);
        return y;
      },
      {f64({4, 1}, 107)}, {true});
}

TEST_CASE("in-place index ops on a leaf that requires grad raise",
          "[autograd_index]") {
  Tensor x = f64({3, 4}, 110);
  requires_grad_(x, true);
  Tensor idx = i64({0}, {1});
  REQUIRE_THROWS_AS(fastt::index_put_(x, {idx}, f64({}, 111)), RuntimeError);
  REQUIRE_THROWS_AS(fastt::tril_(x), RuntimeError);
  REQUIRE_THROWS_AS(fastt::scatter_(x, 0, i64({0, 1, 2, 0}, {1, 4}),
                                    Scalar(1.0)),
                    RuntimeError);
  REQUIRE_THROWS_AS(
      fastt::index_add_(x, 0, idx, f64({1, 4}, 112)), RuntimeError);
  // Under no_grad nothing is recorded and in-place is allowed.
  {
    NoGradGuard guard;
    Tensor y = fastt::index_select(x, 0, idx);
    CHECK_FALSE(fastt::requires_grad(y));
    fastt::tril_(x);
  }
}

TEST_CASE("a saved index modified in place is caught", "[autograd_index]") {
  Tensor x = f64({3, 4}, 120);
  requires_grad_(x, true);
  Tensor idx = i64({0, 2}, {2});
  Tensor y = fastt::gather(x, 0, i64({0, 1, 2, 0}, {1, 4}));
  Tensor z = fastt::index_select(x, 0, idx);
  fastt::add_(idx, Scalar(0));
  REQUIRE_THROWS_AS(fastt::backward(fastt::sum(z)), RuntimeError);
  fastt::backward(fastt::sum(y));  // gather's own index is intact
  CHECK(fastt::grad(x).defined());
}

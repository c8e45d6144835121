// Autograd from C++ (csrc/autograd.h) and the tape itself (autograd/node.h):
// requires_grad_, backward, .grad, NoGradGuard, std::function hooks,
// retain_graph and version-counter errors, graph lifetime (long chains,
// graphs freed with their outputs) and double backward. Tag: [autograd].
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "autograd/node.h"
#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops.h"

using namespace fastt;
using namespace fastt::test;

namespace {

Tensor leaf(const std::vector<double>& v, IntList sizes,
            DType dt = DType::Float64) {
  Tensor t = make(v, sizes, dt);
  requires_grad_(t);
  return t;
}

void check_values(const Tensor& t, const std::vector<double>& want,
                  double tol = 1e-12) {
  REQUIRE(t.defined());
  std::vector<double> got = values(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("requires_grad_, leaves and recording", "[autograd]") {
  Tensor x = make({1, 2, 3}, {3}, DType::Float64);
  CHECK_FALSE(requires_grad(x));
  CHECK(is_leaf(x));
  requires_grad_(x);
  CHECK(requires_grad(x));
  CHECK(is_leaf(x));
  CHECK(std::string(grad_fn_name(x)).empty());
  Tensor y = fastt::mul(x, x);
  CHECK(requires_grad(y));
  CHECK_FALSE(is_leaf(y));
  CHECK(std::string(grad_fn_name(y)) == "MulBackward0");
  // Only leaves may drop requires_grad; integers may never ask for it.
  REQUIRE_THROWS_AS(requires_grad_(y, false), RuntimeError);
  Tensor i = make({1, 2}, {2}, DType::Int64);
  REQUIRE_THROWS_AS(requires_grad_(i), RuntimeError);
  // Inputs without grad record nothing.
  Tensor c = fastt::mul(make({1, 2}, {2}, DType::Float32), 2.0);
  CHECK_FALSE(requires_grad(c));
  CHECK(c.impl()->grad_fn == nullptr);
}

TEST_CASE("backward fills .grad and accumulates", "[autograd]") {
  Tensor x = leaf({1, -2, 3}, {3});
  CHECK_FALSE(grad(x).defined());
  backward(fastt::sum(fastt::mul(x, x)));
  check_values(grad(x), {2, -4, 6});
  backward(fastt::sum(fastt::mul(x, 3.0)));
  check_values(grad(x), {5, -1, 9});
  set_grad(x, Tensor());
  CHECK_FALSE(grad(x).defined());
  // A non-scalar root needs its gradient.
  Tensor y = fastt::exp(x);
  std::string e = error_of([&] { backward(y); });
  CHECK(contains(e, "grad can be implicitly created only for scalar"));
  backward(y, make({1, 0, 2}, {3}, DType::Float64));
  check_values(grad(x), {std::exp(1.0), 0, 2 * std::exp(3.0)});
  // Gradients are summed over broadcast dims and keep the leaf's dtype.
  Tensor a = leaf({1, 2, 3}, {3, 1}, DType::Float32);
  Tensor b = leaf({1, 10, 100, 1000}, {1, 4});
  backward(fastt::sum(fastt::mul(a, b)));
  CHECK(grad(a).dtype() == DType::Float32);
  CHECK(grad(b).dtype() == DType::Float64);
  check_values(grad(a), {1111, 1111, 1111});
  check_values(grad(b), {6, 6, 6, 6});
}

TEST_CASE("NoGradGuard and thread-local grad mode", "[autograd][threads]") {
  Tensor x = leaf({1, 2}, {2});
  CHECK(autograd::grad_enabled());
  {
    NoGradGuard guard;
    CHECK_FALSE(autograd::grad_enabled());
    Tensor y = fastt::mul(x, 2.0);
    CHECK_FALSE(requires_grad(y));
    {
      autograd::GradModeGuard on(true);
      CHECK(requires_grad(fastt::mul(x, 2.0)));
    }
    CHECK_FALSE(autograd::grad_enabled());
    bool other_thread_records = false;
    std::thread t([&] {
      other_thread_records = requires_grad(fastt::mul(x, 2.0));
    });
    t.join();
    CHECK(other_thread_records);
    // In-place on a leaf is allowed (and unrecorded) without grad.
    fastt::add_(x, 1.0);
  }
  CHECK(autograd::grad_enabled());
  {
    autograd::InferenceModeGuard inference;
    CHECK(autograd::inference_mode_enabled());
    CHECK_FALSE(requires_grad(fastt::mul(x, 2.0)));
  }
  CHECK(autograd::grad_enabled());
  CHECK_FALSE(autograd::inference_mode_enabled());
}

TEST_CASE("hooks through std::function", "[autograd]") {
  Tensor x = leaf({1, 2}, {2});
  int calls = 0;
  int64_t h = register_hook(x, [&](const Tensor& g) {
    ++calls;
    return fastt::mul(g, 10.0);
  });
  backward(fastt::sum(fastt::mul(x, 3.0)));
  CHECK(calls == 1);
  check_values(grad(x), {30, 30});
  remove_hook(x, h);
  set_grad(x, Tensor());
  backward(fastt::sum(fastt::mul(x, 3.0)));
  CHECK(calls == 1);
  check_values(grad(x), {3, 3});

  // On a non-leaf: sees the incoming gradient; undefined keeps it.
  set_grad(x, Tensor());
  Tensor y = fastt::mul(x, x);
  std::vector<double> seen;
  register_hook(y, [&](const Tensor& g) {
    seen = values(g);
    return Tensor();
  });
  register_hook(y, [](const Tensor& g) { return fastt::neg(g); });
  backward(fastt::sum(fastt::mul(y, 2.0)));
  CHECK(seen == std::vector<double>{2, 2});
  check_values(grad(x), {-4, -8});
  // A throwing hook propagates out of backward.
  Tensor z = leaf({1}, {1});
  register_hook(z, [](const Tensor&) -> Tensor {
    throw ValueError("hook failed");
  });
  REQUIRE_THROWS_AS(backward(fastt::sum(z)), ValueError);
  Tensor n = make({1}, {1}, DType::Float32);
  REQUIRE_THROWS_AS(register_hook(n, [](const Tensor& g) { return g; }),
                    RuntimeError);
}

TEST_CASE("retain_graph and freed saved tensors", "[autograd]") {
  Tensor x = leaf({0.5, -1}, {2});
  Tensor y = fastt::sum(fastt::mul(fastt::tanh(x), x));
  backward(y, Tensor(), /*retain_graph=*/true);
  std::vector<double> g1 = values(grad(x));
  backward(y);
  std::vector<double> g2 = values(grad(x));
  for (size_t i = 0; i < g1.size(); ++i) CHECK(g2[i] == Approx(2 * g1[i]));
  std::string e = error_of([&] { backward(y); });
  CHECK(contains(e, "backward through the graph a second time"));
  CHECK_THROWS_AS(backward(y), RuntimeError);
}

TEST_CASE("version counter rejects modified saved tensors", "[autograd]") {
  Tensor x = leaf({1, 2, 3}, {3});
  // A saved output modified in place.
  Tensor y = fastt::exp(x);
  fastt::add_(y, 1.0);
  std::string e = error_of([&] { backward(fastt::sum(y)); });
  CHECK(contains(e, "modified by an inplace operation"));
  // A saved input (a view of it, here) modified in place.
  Tensor h = fastt::mul(x, 1.0);
  Tensor z = fastt::mul(h, h);
  Tensor part = h.narrow(0, 1, 1);
  fastt::mul_(part, 2.0);
  REQUIRE_THROWS_AS(backward(fastt::sum(z)), RuntimeError);
  // A leaf that requires grad may not be modified in place.
  e = error_of([&] { fastt::add_(x, 1.0); });
  CHECK(contains(e, "a leaf Variable that requires grad is being used in "
                    "an in-place operation."));
  // A non-leaf may: y = 2x; y += 1; y *= x -> dy/dx = 4x + 1
  Tensor w = fastt::mul(x, 2.0);
  fastt::add_(w, 1.0);
  fastt::mul_(w, x);
  backward(fastt::sum(w));
  check_values(grad(x), {5, 9, 13});
}

TEST_CASE("in-place through a view of a non-leaf (CopySlices)",
          "[autograd]") {
  Tensor x = leaf({1, 2, 3, 4}, {4});
  Tensor z = leaf({10, 20}, {2});
  Tensor y = fastt::mul(x, 1.0);
  Tensor v = y.slice(0, 1, 3);
  v.copy_(z);
  CHECK(std::string(grad_fn_name(y)) == "CopySlices");
  backward(fastt::sum(fastt::mul(y, make({1, 2, 3, 4}, {4},
                                         DType::Float64))));
  check_values(grad(x), {1, 0, 0, 4});
  check_values(grad(z), {2, 3});
  check_values(y, {1, 10, 20, 4});
}

TEST_CASE("a 100k-node chain is freed and differentiated iteratively",
          "[autograd]") {
  Tensor x = leaf({1, 2}, {2});
  {
    Tensor y = x;
    for (int i = 0; i < 100000; ++i) y = fastt::add(y, 1.0);
    CHECK(std::string(grad_fn_name(y)) == "AddBackward0");
  }  // dropping y frees the chain without recursion
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = fastt::mul(y, 1.0);
  backward(fastt::sum(y));
  check_values(grad(x), {1, 1});
}

TEST_CASE("a graph is freed when its outputs are dropped", "[autograd]") {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor w = leaf({0.5, 0.25, 2}, {3});
  auto token = std::make_shared<int>(0);
  {
    Tensor y = fastt::exp(fastt::mul(x, w));  // exp saves its output
    register_hook(y, [token](const Tensor&) { return Tensor(); });
    CHECK(token.use_count() == 2);
    Tensor z = fastt::sin(y);
    y = Tensor();
    CHECK(token.use_count() == 2);  // z still reaches y's node
  }
  CHECK(token.use_count() == 1);

  // Steady state (the autograd issue's long runs): a million forward passes
  // without backward, then 100,000 training steps, allocate nothing new.
  auto step = [&] {
    Tensor h = fastt::tanh(fastt::add(fastt::mul(x, w), 1.0));
    return fastt::sum(fastt::mul(h, h));
  };
  for (int i = 0; i < 100; ++i) step();
  const AllocatorStats before = CachingAllocator::stats();
  for (int i = 0; i < 1000000; ++i) step();
  const AllocatorStats after = CachingAllocator::stats();
  CHECK(after.allocated_bytes == before.allocated_bytes);
  CHECK(after.system_allocs == before.system_allocs);

  // Training steps too (backward + update under no_grad).
  auto train = [&] {
    backward(step());
    NoGradGuard g;
    fastt::sub_(w, fastt::mul(grad(w), 0.01));
    set_grad(w, Tensor());
    set_grad(x, Tensor());
  };
  for (int i = 0; i < 100; ++i) train();
  const AllocatorStats b2 = CachingAllocator::stats();
  for (int i = 0; i < 100000; ++i) train();
  const AllocatorStats a2 = CachingAllocator::stats();
  CHECK(a2.allocated_bytes == b2.allocated_bytes);
  CHECK(a2.system_allocs == b2.system_allocs);
}

TEST_CASE("double backward (create_graph)", "[autograd]") {
  Tensor x = leaf({1, 2, -3}, {3});
  Tensor y = fastt::sum(fastt::pow(x, 3.0));
  std::vector<Tensor> g = grad({y}, {x}, {}, false, /*create_graph=*/true);
  REQUIRE(g.size() == 1);
  check_values(g[0], {3, 12, 27});
  CHECK(requires_grad(g[0]));
  backward(fastt::sum(g[0]));
  check_values(grad(x), {6, 12, -18});

  // Through matmul and sigmoid: d/dA sum(d/dA sum(sigmoid(A B)))
  Tensor a = leaf({0.1, -0.2, 0.3, 0.4}, {2, 2});
  Tensor b = make({1, 2, -1, 0.5}, {2, 2}, DType::Float64);
  Tensor s = fastt::sum(fastt::sigmoid(fastt::matmul(a, b)));
  std::vector<Tensor> ga = grad({s}, {a}, {}, false, true);
  std::vector<Tensor> gga = grad({fastt::sum(ga[0])}, {a});
  // Reference: with P = A B, dS/dA = s'(P) B^T and
  // d/dA sum(s'(P) B^T) = s''(P) (1 B^T) ... computed by hand below.
  std::vector<double> A = values(a), B = values(b), want(4);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) {
      double acc = 0;
      for (int j = 0; j < 2; ++j) {
        double p = A[i * 2] * B[j] + A[i * 2 + 1] * B[2 + j];
        double sg = 1 / (1 + std::exp(-p));
        double s2 = sg * (1 - sg) * (1 - 2 * sg);
        double rowsum = B[0 * 2 + j] + B[1 * 2 + j];  // sum_k' B[k', j]
        acc += s2 * rowsum * B[k * 2 + j];
      }
      want[size_t(i * 2 + k)] = acc;
    }
  check_values(gga[0], want, 1e-10);
}

TEST_CASE("autograd::grad options, retain_grad and detach", "[autograd]") {
  Tensor x = leaf({1, 2}, {2});
  Tensor unused = leaf({5}, {1});
  Tensor y = fastt::mul(x, x);
  retain_grad(y);
  CHECK(retains_grad(y));
  Tensor loss = fastt::sum(fastt::mul(y, 3.0));
  CHECK_THROWS_AS(grad({loss}, {x, unused}, {}, true), RuntimeError);
  std::vector<Tensor> g =
      grad({loss}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  check_values(g[0], {6, 12});
  CHECK_FALSE(g[1].defined());
  CHECK_FALSE(grad(x).defined());  // grad() does not accumulate
  backward(loss);
  // Like torch: retain_grad targets also fill during the two grad() walks
  // (the first one raised only after walking).
  check_values(grad(y), {9, 9});
  check_values(grad(x), {6, 12});

  Tensor d = detach(y);
  CHECK_FALSE(requires_grad(d));
  CHECK(d.data_ptr() == y.data_ptr());
  Tensor e = fastt::mul(x, 2.0);
  detach_(e);
  CHECK_FALSE(requires_grad(e));
  CHECK(is_leaf(e));
}

TEST_CASE("the tape: node kinds, edges and order", "[autograd]") {
  Tensor x = leaf({1, 2}, {2});
  Tensor w = make({3, 4}, {2}, DType::Float64);  // no grad: no edge
  Tensor p = fastt::mul(x, w);
  Tensor q = fastt::exp(p);
  Tensor s = fastt::sum(q);
  autograd::Node* ns = s.impl()->grad_fn;
  autograd::Node* nq = q.impl()->grad_fn;
  autograd::Node* np = p.impl()->grad_fn;
  REQUIRE(ns);
  CHECK(std::string(autograd::grad_fn_name(ns->fn)) == "SumBackward0");
  REQUIRE(ns->next.size() == 1);
  CHECK(ns->next[0].node == nq);
  REQUIRE(np->next.size() == 2);
  CHECK(np->next[0].valid());
  CHECK(np->next[0].node->fn == autograd::GradFn::AccumulateGrad);
  CHECK_FALSE(np->next[1].valid());
  CHECK(np->seq < nq->seq);
  CHECK(nq->seq < ns->seq);
  // Two uses of one leaf share its AccumulateGrad node.
  Tensor r = fastt::add(x, 1.0);
  CHECK(r.impl()->grad_fn->next[0].node == np->next[0].node);
  // Recording costs no node when grad mode is off.
  NoGradGuard g;
  CHECK(fastt::mul(x, w).impl()->grad_fn == nullptr);
}

// Each output of a two-output node (var_mean) alone: the engine must hand
// the formula every output's gradient as one array (it once read past a
// SmallVec's inline slot and crashed).
TEST_CASE("a two-output node with one output used", "[autograd]") {
  Tensor x = leaf({1, 2, 4, 8, 3, 5}, {2, 3});
  auto vm = var_mean(x, {1});
  backward(fastt::sum(vm.first), Tensor(), true);
  backward(fastt::sum(vm.second));
  std::vector<double> g = values(grad(x));
  // d var/dx = 2 (x - mean) / (n - 1); d mean/dx = 1/n
  const double m0 = 7.0 / 3, m1 = 16.0 / 3;
  CHECK(g[0] == Approx((1 - m0) + 1.0 / 3));
  CHECK(g[5] == Approx((5 - m1) + 1.0 / 3));
}

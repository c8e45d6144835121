// Concurrency: std::threads running ops, autograd, the caching allocator
// and the RNG at once. Tag: [threads] (scripts/sanitize.sh runs these under
// TSan). Each test compares with results computed on one thread first.
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops.h"
#include "kernels/cpu/reduce_impl.h"

using namespace fastt;
using namespace fastt::test;

namespace {

constexpr int kThreads = 4;

// Deterministic, thread-specific inputs: sin-shaped values in [-1, 1].
Tensor pattern(IntList sizes, int seed, DType dt = DType::Float32) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Tensor t = arange(Scalar(int64_t(0)), Scalar(n), DType::Float64);
  t = sin(mul(add(t, Scalar(double(seed) * 0.37)), Scalar(0.013)));
  return t.reshape(sizes).to(dt);
}

bool close(const Tensor& a, const Tensor& b, double tol) {
  if (a.dim() != b.dim() || a.numel() != b.numel()) return false;
  std::vector<double> x = values(a), y = values(b);
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x[i] - y[i]) <= tol * (1 + std::abs(y[i])))) return false;
  return true;
}

// What one thread computes: elementwise, reductions and matmul over a big
// input (above the OpenMP grain, so nested parallel regions run inside each
// std::thread), a small one, and a transposed (strided) view.
std::vector<Tensor> workload(int seed) {
  Tensor big = pattern({256, 160}, seed);     // 40960 elements > grain
  Tensor small = pattern({5, 7}, seed + 1);
  Tensor w = pattern({160, 33}, seed + 2);
  std::vector<Tensor> out;
  out.push_back(add(mul(big, big), tanh(big)));
  out.push_back(exp(small.t()));
  out.push_back(sum(big, {1}));
  out.push_back(mean(big));
  out.push_back(amax(big.t(), {1}));
  out.push_back(var(big, {0}));
  out.push_back(matmul(big, w));
  out.push_back(softmax(big, 1));
  out.push_back(logsumexp(small, {0}));
  return out;
}

// Starts n threads at one time (a spin barrier) and joins them.
template <class F>
void run_threads(int n, F&& body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < n; ++t)
    ts.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      body(t);
    });
  for (auto& th : ts) th.join();
}

}  // namespace

TEST_CASE("ops on independent tensors from many threads", "[threads]") {
  std::vector<std::vector<Tensor>> want;
  for (int t = 0; t < kThreads; ++t) want.push_back(workload(t));
  std::atomic<int> mismatches{0};
  std::atomic<int> errors{0};
  run_threads(kThreads, [&](int t) {
    try {
      for (int it = 0; it < 3; ++it) {
        std::vector<Tensor> got = workload(t);
        for (size_t k = 0; k < got.size(); ++k)
          if (!close(got[k], want[size_t(t)][k], 1e-5)) ++mismatches;
      }
    } catch (...) {
      ++errors;
    }
  });
  CHECK(errors.load() == 0);
  CHECK(mismatches.load() == 0);
}

TEST_CASE("in-place ops and views on per-thread tensors", "[threads]") {
  std::atomic<int> bad{0};
  run_threads(kThreads, [&](int t) {
    Tensor acc = zeros({300, 200}, DType::Float64);  // 60000 > grain
    for (int i = 0; i < 20; ++i) {
      add_(acc, Scalar(double(t + 1)));
      Tensor row = acc.select(0, i % 300);
      mul_(row, Scalar(1.0));
    }
    // Every element is 20 * (t + 1).
    if (get(amax(acc), 0) != 20.0 * (t + 1) ||
        get(amin(acc), 0) != 20.0 * (t + 1))
      ++bad;
    if (acc.impl()->storage->version() < 20) ++bad;
  });
  CHECK(bad.load() == 0);
}

TEST_CASE("grad mode is thread-local", "[threads]") {
  // Thread 0 sits in NoGradGuard while thread 1 records and runs backward;
  // the barrier steps make the two scopes overlap for sure.
  std::atomic<int> phase{0};
  std::atomic<int> bad{0};
  std::string err;
  std::mutex err_mu;
  auto wait_for = [&](int p) {
    while (phase.load() < p) std::this_thread::yield();
  };
  std::thread no_grad([&] {
    try {
      Tensor x = pattern({64, 64}, 3, DType::Float64);
      requires_grad_(x);
      NoGradGuard guard;
      phase.store(1);  // no-grad scope open
      wait_for(2);     // the other thread recorded meanwhile
      Tensor y = mul(x, x);
      if (requires_grad(y) || !is_leaf(y)) ++bad;
      if (autograd::grad_enabled()) ++bad;
      phase.store(3);
      wait_for(4);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> l(err_mu);
      err = e.what();
      phase.store(99);
    }
  });
  std::thread record([&] {
    try {
      wait_for(1);
      if (!autograd::grad_enabled()) ++bad;
      Tensor x = pattern({64, 64}, 4, DType::Float64);
      requires_grad_(x);
      Tensor y = sum(mul(x, x));
      if (!requires_grad(y) || std::string(grad_fn_name(y)).empty()) ++bad;
      phase.store(2);
      wait_for(3);  // the no-grad thread ran its op
      backward(y);
      Tensor g = grad(x);
      if (!g.defined() || !close(g, mul(detach(x), Scalar(2.0)), 1e-12))
        ++bad;
      phase.store(4);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> l(err_mu);
      err = e.what();
      phase.store(99);
    }
  });
  no_grad.join();
  record.join();
  CHECK(err.empty());
  CHECK(bad.load() == 0);
  // The main thread's mode was never touched.
  CHECK(autograd::grad_enabled());
}

TEST_CASE("forward and backward of independent graphs concurrently",
          "[threads]") {
  // A two-layer net per thread: loss = sum(tanh(x @ w1) @ w2)^2 / n.
  auto train_step = [](int seed, Tensor* gw1, Tensor* gw2) {
    Tensor x = pattern({32, 48}, seed, DType::Float64);
    Tensor w1 = pattern({48, 40}, seed + 10, DType::Float64);
    Tensor w2 = pattern({40, 3}, seed + 20, DType::Float64);
    requires_grad_(w1);
    requires_grad_(w2);
    Tensor h = tanh(matmul(x, w1));
    Tensor out = matmul(h, w2);
    Tensor loss = mean(mul(out, out));
    backward(loss);
    *gw1 = grad(w1);
    *gw2 = grad(w2);
  };
  std::vector<Tensor> want1(kThreads), want2(kThreads);
  for (int t = 0; t < kThreads; ++t)
    train_step(t, &want1[size_t(t)], &want2[size_t(t)]);
  std::atomic<int> bad{0};
  run_threads(kThreads, [&](int t) {
    try {
      for (int it = 0; it < 5; ++it) {
        Tensor g1, g2;
        // Half the threads toggle their own grad mode around the step: a
        // no-grad op must not leak into the other threads' recording.
        if (t % 2 == 1) {
          NoGradGuard guard;
          Tensor z = mul(pattern({8, 8}, t), Scalar(2.0));
          if (requires_grad(z)) ++bad;
        }
        train_step(t, &g1, &g2);
        if (!close(g1, want1[size_t(t)], 1e-10) ||
            !close(g2, want2[size_t(t)], 1e-10))
          ++bad;
      }
    } catch (...) {
      ++bad;
    }
  });
  CHECK(bad.load() == 0);
}

TEST_CASE("tensors allocated in one thread and freed in another",
          "[threads]") {
  CachingAllocator::empty_cache();
  int64_t before = CachingAllocator::stats().allocated_bytes;
  // Producers make tensors of many sizes; consumers check and drop them,
  // so every block is returned by a thread that did not allocate it.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<Tensor, double>> queue;
  int producers_left = 2;
  std::atomic<int> bad{0};
  std::atomic<int> consumed{0};
  std::vector<std::thread> ts;
  for (int p = 0; p < 2; ++p)
    ts.emplace_back([&, p] {
      for (int i = 0; i < 400; ++i) {
        int64_t n = 1 + (i * 131 + p * 17) % 9000;
        if (i % 50 == 0) n = 70000;  // a big block too
        double v = double(p * 1000 + i);
        Tensor t = full({n}, Scalar(v), DType::Float32);
        std::lock_guard<std::mutex> l(mu);
        queue.emplace_back(std::move(t), v);
        cv.notify_one();
      }
      std::lock_guard<std::mutex> l(mu);
      --producers_left;
      cv.notify_all();
    });
  for (int c = 0; c < 2; ++c)
    ts.emplace_back([&] {
      for (;;) {
        std::pair<Tensor, double> item;
        {
          std::unique_lock<std::mutex> l(mu);
          cv.wait(l, [&] { return !queue.empty() || producers_left == 0; });
          if (queue.empty()) return;
          item = std::move(queue.front());
          queue.pop_front();
        }
        Tensor& t = item.first;
        int64_t n = t.numel();
        if (get(t, 0) != item.second || get(t, n - 1) != item.second) ++bad;
        // Allocate here too, so the freed blocks get reused across threads.
        Tensor u = add(t, Scalar(1.0));
        if (get(u, n - 1) != item.second + 1) ++bad;
        ++consumed;
      }  // item and u die here, on the consumer thread
    });
  for (auto& th : ts) th.join();
  CHECK(bad.load() == 0);
  CHECK(consumed.load() == 800);
  CHECK(CachingAllocator::stats().allocated_bytes == before);
  CachingAllocator::empty_cache();
}

TEST_CASE("manual_seed and concurrent randn on the default generator",
          "[threads]") {
  // Racing manual_seed against sampling must neither crash nor produce
  // garbage; which values each thread sees is not specified.
  std::atomic<int> bad{0};
  run_threads(kThreads, [&](int t) {
    for (int i = 0; i < 30; ++i) {
      if (t == 0 && i % 5 == 0) manual_seed(uint64_t(1234 + i));
      Tensor r = randn({i % 2 ? 40000 : 17}, DType::Float32);
      double m = get(amax(abs(r)), 0);
      if (!std::isfinite(m) || m > 10) ++bad;
    }
  });
  CHECK(bad.load() == 0);
  // After the race the default generator still works and reseeds exactly.
  manual_seed(77);
  Tensor a = randn({100}, DType::Float64);
  manual_seed(77);
  Tensor b = randn({100}, DType::Float64);
  CHECK(values(a) == values(b));
}

TEST_CASE("per-thread generators are reproducible under concurrency",
          "[threads]") {
  auto sample = [](int t) {
    Generator g(uint64_t(1000 + t));
    std::vector<Tensor> out;
    out.push_back(randn({50000}, DType::Float32, kCPU, &g));  // parallel
    out.push_back(rand({7, 3}, DType::Float64, kCPU, &g));
    out.push_back(randint(0, 100, {33}, std::nullopt, kCPU, &g));
    return out;
  };
  std::vector<std::vector<Tensor>> want;
  for (int t = 0; t < kThreads; ++t) want.push_back(sample(t));
  std::atomic<int> bad{0};
  run_threads(kThreads, [&](int t) {
    // The default generator is hammered meanwhile; it must not matter.
    for (int it = 0; it < 3; ++it) {
      Tensor noise = randn({1000});
      std::vector<Tensor> got = sample(t);
      for (size_t k = 0; k < got.size(); ++k)
        if (values(got[k]) != values(want[size_t(t)][k])) ++bad;
    }
  });
  CHECK(bad.load() == 0);
  // Different seeds give different streams (the test can fail).
  CHECK(values(want[0][0]) != values(want[1][0]));
}

TEST_CASE("a whole-tensor bool reduction's parts do not share a word",
          "[threads]") {
  // all() / any() fold their parts in fold_split; the parts once lived in
  // a std::vector<bool>, whose bits two threads wrote at once (a lost
  // update turned all() False now and then under load). Here the parts'
  // folds meet at a spin barrier so that their writes collide every time.
  // The configured thread count, not a forced one: scripts/sanitize.sh
  // runs [threads] under TSan with OMP_NUM_THREADS=1 and no suppressions,
  // where libgomp's (uninstrumented) workers would be reported.
  const int64_t n = 4 * cpu::kGrainSize;
  std::atomic<int64_t> arrived{0};
  int lost = 0, split = 0;
  for (int it = 0; it < 20000; ++it) {
    const int64_t target = 2 * (it + 1);
    auto fold = [&](int64_t b, int64_t e) {
      if (e - b < n) {  // a part: wait (bounded) for the other one
        arrived.fetch_add(1);
        for (int spin = 0; spin < 100000 && arrived.load() < target; ++spin) {
        }
      }
      return true;
    };
    if (arrived.load() != 2 * it) arrived.store(2 * it);
    const bool r = reduce_impl::fold_split<bool>(
        n, fold, [](bool a, bool b) { return a && b; });
    // Two or more parts arrived (4 with 16 threads: the split is by size).
    if (arrived.load() >= target) ++split;
    if (!r) ++lost;
  }
  CHECK(lost == 0);
  // With two or more threads the parts really ran at once.
  if (get_num_threads() >= 2) CHECK(split > 0);
}

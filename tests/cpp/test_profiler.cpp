// fastt::profiler: events for each kernel call (names, order, per-thread
// ids, timestamps, allocation counts), nothing recorded while off, and the
// errors of unbalanced start/stop.
#include <string>
#include <thread>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/dispatch.h"
#include "csrc/ops/elementwise.h"
#include "csrc/ops/loop_builder.h"
#include "csrc/ops/reduce.h"
#include "csrc/profiler.h"

using namespace fastt;
namespace prof = fastt::profiler;

namespace {
Tensor filled(std::initializer_list<int64_t> shape, double v) {
  Tensor t = Tensor::empty(shape, DType::Float32);
  t.fill_(v);
  return t;
}
std::vector<std::string> names(const std::vector<prof::ProfileEvent>& ev) {
  std::vector<std::string> out;
  for (const auto& e : ev) out.push_back(prof::op_name(e.op));
  return out;
}
}  // namespace

TEST_CASE("profiler records each kernel call in order", "[profiler]") {
  Tensor a = filled({4, 5}, 1.0), b = filled({4, 5}, -2.0);
  REQUIRE_FALSE(prof::is_enabled());
  const int64_t t_before = prof::now_ns();
  prof::start();
  REQUIRE(prof::is_enabled());
  Tensor c = add(a, b);
  Tensor d = relu(c);
  Tensor e = mul(d, a);
  Tensor s = sum(e);
  auto ev = prof::stop();
  REQUIRE_FALSE(prof::is_enabled());
  // The results are those of the real kernels.
  CHECK(test::values(c)[0] == -1.0);
  CHECK(test::values(d)[0] == 0.0);
  CHECK(test::get(s, 0) == 0.0);

  REQUIRE(names(ev) == std::vector<std::string>{"add", "relu", "mul", "sum"});
  int64_t prev = t_before;
  for (const auto& x : ev) {
    CHECK(x.thread == prof::current_thread_id());
    CHECK(x.prev_end >= prev);
    CHECK(x.t_lookup >= x.prev_end);
    CHECK(x.t_start >= x.t_lookup);
    CHECK(x.t_end >= x.t_start);
    CHECK(x.tax_ns() >= 0);
    CHECK(x.kernel_ns() >= 0);
    // Every op here allocates its output before its kernel runs.
    CHECK(x.allocs >= 1);
    prev = x.t_end;
  }
  for (size_t i = 1; i < ev.size(); ++i)
    CHECK(ev[i].prev_end == ev[i - 1].t_end);
  CHECK(prev <= prof::now_ns());
}

TEST_CASE("profiler records nothing while off", "[profiler]") {
  Tensor a = filled({3}, 1.0);
  KernelFn real = lookup_kernel(Op::add, DeviceType::CPU, DType::Float32);
  CHECK(real == registered_kernel(Op::add, DeviceType::CPU, DType::Float32));
  Tensor c = add(a, a);
  prof::start();
  // While on, the lookup hands out a trampoline, not the table entry.
  CHECK(lookup_kernel(Op::add, DeviceType::CPU, DType::Float32) != real);
  auto ev = prof::stop();
  CHECK(ev.empty());  // a lookup alone is not an event
  add(a, a);
  relu(a);
  CHECK(lookup_kernel(Op::add, DeviceType::CPU, DType::Float32) == real);
  prof::start();
  CHECK(prof::stop().empty());  // ops of the previous, stopped run are gone
}

TEST_CASE("profiler trampolines survive interleaved lookups", "[profiler]") {
  // Two entries of one op looked up before either is called: each
  // trampoline must still run its own (dtype's) kernel.
  Tensor f = Tensor::empty({5}, DType::Float32);
  Tensor g = Tensor::empty({7}, DType::Float64);
  KernelArgs af, ag;
  const Tensor* tf[1] = {&f};
  const Tensor* tg[1] = {&g};
  build_dense_loop(af, tf, 1);
  build_dense_loop(ag, tg, 1);
  af.s0 = Scalar(1.5);
  ag.s0 = Scalar(-2.25);
  prof::start();
  KernelFn kf = lookup_kernel(Op::fill, DeviceType::CPU, DType::Float32);
  KernelFn kg = lookup_kernel(Op::fill, DeviceType::CPU, DType::Float64);
  for (int i = 0; i < 40; ++i)
    lookup_kernel(Op::add, DeviceType::CPU, DType::Int64);
  kf(af);
  kg(ag);
  kf(af);
  auto ev = prof::stop();
  CHECK(test::values(f) == std::vector<double>(5, 1.5));
  CHECK(test::values(g) == std::vector<double>(7, -2.25));
  CHECK(names(ev) == std::vector<std::string>{"fill", "fill", "fill"});
  // Calling a trampoline after stop still runs the kernel, unrecorded.
  af.s0 = Scalar(4.0);
  kf(af);
  CHECK(test::get(f, 4) == 4.0);
}

TEST_CASE("profiler keeps events of other threads apart",
          "[profiler][threads]") {
  prof::start();
  int32_t other = 0;
  std::thread t([&] {
    Tensor x = filled({8}, 1.0);
    add(x, x);
    relu(x);
    other = prof::current_thread_id();
  });
  t.join();
  Tensor y = filled({8}, 2.0);
  mul(y, y);
  auto ev = prof::stop();
  int n_other = 0, n_main = 0;
  for (const auto& x : ev) {
    if (x.thread == other) ++n_other;
    if (x.thread == prof::current_thread_id()) ++n_main;
  }
  CHECK(other != prof::current_thread_id());
  // fill_ may or may not go through a kernel; add and relu do.
  CHECK(n_other >= 2);
  CHECK(n_main >= 1);
  CHECK(n_other + n_main == int(ev.size()));
}

TEST_CASE("profiler start/stop must be balanced", "[profiler]") {
  REQUIRE_THROWS_AS(prof::stop(), RuntimeError);
  prof::start();
  REQUIRE_THROWS_AS(prof::start(), RuntimeError);
  CHECK(prof::is_enabled());  // the failed start left the session running
  prof::stop();
  REQUIRE_THROWS_AS(prof::stop(), RuntimeError);
  CHECK_FALSE(prof::is_enabled());
  CHECK(std::string(prof::op_name(uint16_t(Op::relu))) == "relu");
  REQUIRE_THROWS_AS(prof::op_name(uint16_t(kNumOps)), IndexError);
}

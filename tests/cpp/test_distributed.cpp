// csrc/distributed from C++: the stores (HashStore, TCPStore's server and
// clients, timeouts and reconnecting after one) and a Gloo group whose
// ranks are threads of this process. Tags: [distributed][threads] (the
// store server and Gloo's pairs run threads, so TSan checks them too).
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/autograd.h"
#include "csrc/distributed/process_group.h"
#include "csrc/distributed/reducer.h"
#include "csrc/ops.h"

using namespace fastt;
using namespace fastt::distributed;

namespace {

Bytes b(const std::string& s) { return Bytes(s.begin(), s.end()); }

void roundtrip(Store& s) {
  s.set("k", b("v"));
  CHECK(s.get("k") == b("v"));
  CHECK(s.add("n", 3) == 3);
  CHECK(s.add("n", 4) == 7);
  CHECK(s.check({"k", "n"}));
  CHECK_FALSE(s.check({"k", "missing"}));
  CHECK(s.compare_set("c", {}, b("1")) == b("1"));
  CHECK(s.compare_set("c", b("0"), b("2")) == b("1"));
  CHECK(s.num_keys() == 3);
  CHECK(s.delete_key("c"));
  CHECK_THROWS_AS(s.wait({"missing"}, Millis(50)), DistStoreError);
  CHECK(s.get("k") == b("v"));  // still usable after a timed-out wait
  CHECK_THROWS_AS(s.add("k", 1), DistStoreError);
}

}  // namespace

TEST_CASE("stores: hash and TCP", "[distributed][threads]") {
  auto h = make_hash_store(Millis(2000));
  roundtrip(*h);

  auto master = make_tcp_store("127.0.0.1", 0, 2, true, Millis(5000), false);
  int port = tcp_store_port(*master);
  REQUIRE(port > 0);
  auto client = make_tcp_store("127.0.0.1", port, 2, false, Millis(5000),
                               false);
  roundtrip(*client);
  CHECK(master->get("k") == b("v"));

  // A wait released by another thread's set.
  std::thread t([&] { master->set("late", b("x")); });
  client->wait({"late"}, Millis(5000));
  t.join();
  auto p = make_prefix_store("pre", client);
  p->set("a", b("1"));
  CHECK(master->get("pre/a") == b("1"));
}

TEST_CASE("a Gloo group of threads", "[distributed][threads]") {
  if (!gloo_available()) {
    CHECK_THROWS_AS(make_gloo_group(make_hash_store(Millis(100)), 0, 1,
                                    Millis(100), "127.0.0.1", ""),
                    DistBackendError);
    return;
  }
  constexpr int kRanks = 2;
  auto store = make_hash_store(Millis(20000));
  std::vector<std::vector<float>> sums(kRanks), gathered(kRanks);
  std::vector<float> got(kRanks);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      auto g = make_gloo_group(store, r, kRanks, Millis(20000), "127.0.0.1",
                               "");
      Tensor x = full({4}, Scalar(double(r + 1)), DType::Float32);
      g->allreduce(x, ReduceOp::Sum)->wait();
      Tensor in = full({2}, Scalar(double(r)), DType::Float32);
      Tensor out = zeros({2 * kRanks}, DType::Float32);
      g->allgather(out, in)->wait();
      Tensor msg = full({3}, Scalar(double(10 + r)), DType::Float32);
      Tensor recv = zeros({3}, DType::Float32);
      auto s = g->send(msg, 1 - r, 7);
      g->recv(recv, 1 - r, 7)->wait();
      s->wait();
      g->barrier()->wait();
      const float* px = x.data_ptr<float>();
      sums[r].assign(px, px + 4);
      const float* po = out.data_ptr<float>();
      gathered[r].assign(po, po + 2 * kRanks);
      got[r] = recv.data_ptr<float>()[0];
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kRanks; ++r) {
    CHECK(sums[r] == std::vector<float>(4, 3.0f));
    CHECK(gathered[r] == std::vector<float>{0, 0, 1, 1});
    CHECK(got[r] == float(10 + (1 - r)));
  }
}

TEST_CASE("GradCounter: DDP's per-parameter hooks", "[distributed]") {
  // Three parameters in two groups; their bucket views live in one flat
  // buffer. A backward fills the views and calls on_ready once per group.
  std::vector<Tensor> ps;
  for (int i = 0; i < 3; ++i) {
    Tensor p = full({2}, Scalar(double(i + 1)), DType::Float32);
    requires_grad_(p);
    ps.push_back(p);
  }
  Tensor flat = zeros({6}, DType::Float32);
  std::vector<Tensor> views;
  for (int64_t i = 0; i < 3; ++i)
    views.push_back(flat.slice(0, 2 * i, 2 * i + 2));
  std::vector<int64_t> ready;
  int twice = -1;
  GradCounter c(ps, {0, 0, 1}, views, true, false,
                [&](int64_t g) { ready.push_back(g); },
                [&](int64_t i) { twice = int(i); });
  auto loss = [&] {
    return fastt::sum(add(add(mul(ps[0], Scalar(2.0)), mul(ps[1], Scalar(3.0))),
                   mul(ps[2], Scalar(4.0))));
  };
  CHECK_FALSE(c.begin(true));
  backward(loss());
  std::sort(ready.begin(), ready.end());
  CHECK(ready == std::vector<int64_t>{0, 1});
  CHECK_FALSE(c.expecting());  // the last group disarmed it
  const float* f = flat.data_ptr<float>();
  CHECK(std::vector<float>(f, f + 6) == std::vector<float>{2, 2, 3, 3, 4,
                                                           4});
  // Disarmed (no_sync): hooks do nothing.
  ready.clear();
  c.arm(false);
  backward(loss());
  CHECK(ready.empty());
  // A step whose backward reached only some parameters is reported at
  // the next begin; marking one twice calls on_twice.
  CHECK_FALSE(c.begin(true));
  backward(fastt::sum(ps[0]));
  CHECK(c.begin(true));
  c.arm(true);
  c.mark(1, 2);
  c.mark(1, 2);
  CHECK(twice == 1);
  c.remove_hooks();
}

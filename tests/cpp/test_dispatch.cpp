// Dispatch table coverage: every (op, device, dtype) in ops.def has a
// kernel or an explicit "unsupported" mark, and calling a missing entry
// raises NotImplementedError naming op, device and dtype.
#include <string>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/dispatch.h"
#include "csrc/ops/elementwise.h"
#include "csrc/ops/nn.h"
#include "csrc/ops/reduce.h"
#include "kernels/cpu/cpu_isa.h"

using namespace fastt;
using namespace fastt::test;

TEST_CASE("every op/device/dtype has a kernel or an explicit mark",
          "[dispatch]") {
  std::string missing;
  int n_missing = 0;
  for (int op = 0; op < kNumOps; ++op)
    for (int dev = 0; dev < kNumDeviceTypes; ++dev)
      for (DType dt : kAllDTypes) {
        Op o = Op(op);
        DeviceType d = DeviceType(dev);
        bool has = registered_kernel(o, d, dt) != nullptr;
        Unsupported why = unsupported_reason(o, d, dt);
        // Exactly one of the two: a kernel, or a reason.
        CHECK_FALSE((has && why != Unsupported::None));
        if (!has && why == Unsupported::None) {
          if (n_missing++ < 400)
            missing += fmt::format("({}, {}, {}) ", op_name(o),
                                   device_type_name(d), dtype_name(dt));
        }
      }
  INFO("entries with neither a kernel nor a mark: " << missing);
  CHECK(n_missing == 0);
}

TEST_CASE("op names come from ops.def", "[dispatch]") {
  CHECK(std::string(op_name(Op::add)) == "add");
  CHECK(std::string(op_name(Op::copy)) == "copy");
  CHECK(std::string(op_name(Op(kNumOps - 1))).size() > 0);
}

TEST_CASE("core families cover the dtypes torch supports",
          "[dispatch]") {
  auto has = [](Op op, DType dt) {
    return registered_kernel(op, DeviceType::CPU, dt) != nullptr;
  };
  for (DType dt : kAllDTypes) {
    INFO(dtype_name(dt));
    CHECK(has(Op::copy, dt));
    CHECK(has(Op::fill, dt));
    CHECK(has(Op::add, dt));
    CHECK(has(Op::mul, dt));
    CHECK(has(Op::eq, dt));
    CHECK(has(Op::where, dt));
    CHECK(has(Op::exp, dt) == is_floating(dt));
    CHECK(has(Op::bitwise_and, dt) == !is_floating(dt));
    CHECK(has(Op::sub, dt) == (dt != DType::Bool));
  }
}

TEST_CASE("an unsupported combination raises NotImplementedError",
          "[dispatch]") {
  // dtype not supported by the op.
  Tensor f = make({1, 2}, {2}, DType::Float32);
  try {
    bitwise_and(f, f);
    FAIL("expected NotImplementedError");
  } catch (const NotImplementedError& e) {
    std::string m = e.what();
    CHECK(m.find("bitwise_and") != std::string::npos);
    CHECK(m.find("float32") != std::string::npos);
    CHECK(m.find("cpu") != std::string::npos);
  }
  try {
    lookup_kernel(Op::neg, DeviceType::CPU, DType::Bool);
    FAIL("expected NotImplementedError");
  } catch (const NotImplementedError& e) {
    std::string m = e.what();
    CHECK(m.find("neg") != std::string::npos);
    CHECK(m.find("bool") != std::string::npos);
  }
  // A device without a backend in this build.
  if (registered_kernel(Op::add, DeviceType::CUDA, DType::Float32) ==
      nullptr) {
    try {
      lookup_kernel(Op::add, DeviceType::CUDA, DType::Float32);
      FAIL("expected NotImplementedError");
    } catch (const NotImplementedError& e) {
      std::string m = e.what();
      CHECK(m.find("add") != std::string::npos);
      CHECK(m.find("cuda") != std::string::npos);
      CHECK(m.find("float32") != std::string::npos);
    }
  }
}

// The per-ISA kernel families (kernels/registry.def): every level the
// build has and this CPU runs registers exactly the same (op, dtype)
// entries, with its own functions, and computes the same values.
TEST_CASE("every instruction-set level registers the same kernels",
          "[dispatch][isa]") {
  using Table = std::vector<std::pair<KernelFn, Unsupported>>;
  auto snapshot = [] {
    Table t;
    for (int op = 0; op < kNumOps; ++op)
      for (DType dt : kAllDTypes)
        t.emplace_back(registered_kernel(Op(op), DeviceType::CPU, dt),
                       unsupported_reason(Op(op), DeviceType::CPU, dt));
    return t;
  };
  auto restore = [](const Table& t) {
    size_t i = 0;
    for (int op = 0; op < kNumOps; ++op)
      for (DType dt : kAllDTypes) {
        const auto& [fn, why] = t[i++];
        if (fn) register_kernel(Op(op), DeviceType::CPU, dt, fn);
        else mark_unsupported(Op(op), DeviceType::CPU, dt, why);
      }
  };
  const Table saved = snapshot();
  std::vector<int> levels;
  for (int l = cpu_isa::kSse2; l <= cpu_isa::supported(); ++l)
    if ((cpu_isa::built_mask() >> l) & 1) levels.push_back(l);
  if (levels.size() < 2) {
    WARN("fewer than two levels built or runnable here: nothing to compare");
    return;
  }
  const Tensor x = make(sample(DType::Float32, 300, 7, false, -3, 3), {3, 100},
                        DType::Float32);
  std::vector<std::vector<KernelFn>> owned;  // the families' entries per level
  std::vector<std::vector<double>> results;
  for (int l : levels) {
    INFO(cpu_isa::name(l));
    // Only the families' entries: clear the column, register one level.
    for (int op = 0; op < kNumOps; ++op)
      for (DType dt : kAllDTypes)
        mark_unsupported(Op(op), DeviceType::CPU, dt, Unsupported::DType);
    REQUIRE(register_isa_kernel_families(l));
    std::vector<KernelFn> fns;
    for (int op = 0; op < kNumOps; ++op)
      for (DType dt : kAllDTypes)
        fns.push_back(registered_kernel(Op(op), DeviceType::CPU, dt));
    owned.push_back(fns);
    // The full table with this level's families: a few values.
    restore(saved);
    REQUIRE(register_isa_kernel_families(l));
    std::vector<double> r;
    for (const Tensor& t : {exp(x), tanh(x), add(x, x), sum(x, {1}),
                            softmax(x, 1), mul(x, x)})
      for (double v : values(t)) r.push_back(v);
    results.push_back(r);
  }
  restore(saved);
  size_t n_entries = 0;
  for (KernelFn f : owned[0]) n_entries += f != nullptr;
  CHECK(n_entries > 1000);
  for (size_t i = 1; i < levels.size(); ++i) {
    INFO(cpu_isa::name(levels[i]) << " against " << cpu_isa::name(levels[0]));
    size_t same_set = 0, distinct = 0;
    for (size_t k = 0; k < owned[0].size(); ++k) {
      same_set += (owned[0][k] == nullptr) == (owned[i][k] == nullptr);
      distinct += owned[0][k] && owned[0][k] != owned[i][k];
    }
    CHECK(same_set == owned[0].size());
    CHECK(distinct == n_entries);  // every kernel is the level's own copy
    REQUIRE(results[i].size() == results[0].size());
    for (size_t k = 0; k < results[0].size(); ++k)
      CHECK(close(results[i][k], results[0][k], 1e-5, 1e-6));
  }
}

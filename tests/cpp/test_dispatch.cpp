// Dispatch table coverage: every (op, device, dtype) in ops.def has a
// kernel or an explicit "unsupported" mark, and calling a missing entry
// raises NotImplementedError naming op, device and dtype.
#include <string>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/dispatch.h"
#include "csrc/ops/elementwise.h"

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

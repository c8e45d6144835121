// Each error class is thrown by the inputs that should raise it, with a
// message naming the op and the offending sizes/dtypes.
#include <cmath>
#include <limits>
#include <string>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/elementwise.h"
#include "csrc/ops/factory.h"
#include "csrc/ops/reduce.h"

using namespace fastt;
using namespace fastt::test;

namespace {
// Runs f, requires an exception of class E whose message holds each of
// `parts`.
template <class E, class F>
void require_error(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    FAIL("no exception");
  } catch (const E& e) {
    std::string m = e.what();
    for (const char* p : parts) {
      INFO("message: " << m);
      CHECK(m.find(p) != std::string::npos);
    }
  }
}
}  // namespace

TEST_CASE("error classes derive from fastt::Error", "[errors]") {
  CHECK_THROWS_AS(throw IndexError("x"), Error);
  CHECK_THROWS_AS(throw OutOfMemoryError("x"), Error);
  CHECK_THROWS_AS(throw NotImplementedError("x"), std::runtime_error);
}

TEST_CASE("IndexError: dims and indices out of range", "[errors]") {
  Tensor x = Tensor::empty({2, 3}, DType::Float32);
  require_error<IndexError>([&] { x.transpose(0, 2); },
                            {"transpose", "[-2, 1]", "2"});
  require_error<IndexError>([&] { x.select(1, 3); },
                            {"index 3", "dimension 1", "size 3"});
  require_error<IndexError>([&] { x.size(-3); }, {"-3"});
  require_error<IndexError>([&] { x.unsqueeze(3); }, {"unsqueeze"});
  require_error<IndexError>([&] { wrap_dim(5, 2, "myop"); },
                            {"myop", "5"});
  CHECK(wrap_dim(-1, 0, "op") == 0);  // 0-d accepts -1 and 0
}

TEST_CASE("TypeError: wrong dtypes", "[errors]") {
  Tensor x = Tensor::empty({2}, DType::Float32);
  require_error<TypeError>([&] { x.data_ptr<int>(); },
                           {"int32", "float32"});
  require_error<TypeError>(
      [&] { where(x, x, x); }, {"where", "float32"});
  require_error<TypeError>(
      [&] { masked_fill(x, x, Scalar(1)); }, {"mask", "float32"});
  require_error<TypeError>([&] { set_default_dtype(DType::Int64); },
                           {"int64"});
}

TEST_CASE("ValueError: bad arguments", "[errors]") {
  Tensor x = Tensor::empty({4}, DType::Float32);
  require_error<ValueError>([&] { x.slice(0, 0, 4, 0); }, {"step"});
  require_error<ValueError>([&] { div(x, x, "nearest"); },
                            {"rounding_mode", "nearest"});
  require_error<RuntimeError>([&] { gelu(x, "cubic"); }, {"gelu", "cubic"});
  std::vector<int64_t> too_many(kMaxDims + 1, 1);
  require_error<ValueError>(
      [&] { Tensor::empty(too_many, DType::Float32); }, {"dimensions"});
  require_error<ValueError>([&] { add(Tensor(), x); }, {"add"});
}

TEST_CASE("RuntimeError: shapes that do not fit", "[errors]") {
  Tensor a = Tensor::empty({2, 3}, DType::Float32);
  Tensor b = Tensor::empty({4}, DType::Float32);
  require_error<RuntimeError>([&] { mul(a, b); },
                              {"mul", "(3)", "(4)", "[2, 3]", "[4]"});
  require_error<RuntimeError>([&] { a.view({5}); }, {"[5]", "6"});
  require_error<RuntimeError>([&] { a.expand({3, 3}); },
                              {"(3)", "(2)", "[3, 3]", "[2, 3]"});
  require_error<RuntimeError>([&] { Tensor::empty({2, -3}, DType::Int8); },
                              {"negative dimension", "-3"});
  require_error<RuntimeError>([&] { b.item(); }, {"4 elements"});
  Tensor o = Tensor::empty({3}, DType::Float32);
  require_error<RuntimeError>([&] { add_out(o, a, a); },
                              {"add", "[3]", "[2, 3]"});
  // An element count that overflows int64 is a size error (like torch's
  // "Storage size calculation overflowed"), not a crash.
  CHECK_THROWS_AS(Tensor::empty({int64_t(1) << 40, int64_t(1) << 30},
                                DType::Float32),
                  RuntimeError);
  require_error<RuntimeError>(
      [&] {
        Tensor::empty({int64_t(1) << 40, int64_t(1) << 30}, DType::Float32);
      },
      {"[1099511627776, 1073741824]"});
}

TEST_CASE("NotImplementedError: no kernel for the dtype", "[errors]") {
  Tensor f = Tensor::empty({2}, DType::Float16);
  require_error<NotImplementedError>([&] { bitwise_xor(f, f); },
                                     {"bitwise_xor", "float16", "cpu"});
  Tensor b = Tensor::empty({2}, DType::Bool);
  require_error<NotImplementedError>([&] { neg(b); }, {"neg", "bool"});
}

TEST_CASE("OutOfMemoryError: requests the machine cannot satisfy",
          "[errors]") {
  require_error<OutOfMemoryError>(
      [&] { Tensor::empty({int64_t(1) << 50}, DType::Float64); },
      {"out of memory"});
  require_error<OutOfMemoryError>(
      [&] { Tensor::empty({int64_t(1) << 55}, DType::Float64); },
      {"out of memory"});
  // The process keeps working afterwards.
  Tensor t = Tensor::empty({3}, DType::Float32);
  t.fill_(Scalar(1));
  CHECK(get(add(t, t), 2) == 2);
}

// torch's checked_convert: a value written into a tensor must fit its dtype.
TEST_CASE("RuntimeError: scalar values that overflow the dtype they fill",
          "[errors]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  require_error<RuntimeError>(
      [] { full({2}, Scalar(300), DType::UInt8); },
      {"fill_", "uint8", "without overflow", "300"});
  CHECK_THROWS_AS(full({2}, Scalar(-129), DType::Int8), RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(1e6), DType::Float16), RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(70000), DType::Float16), RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(1e39), DType::Float32), RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(nan), DType::Int32), RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(9.3e18), DType::Int64), RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(int64_t(1) << 31), DType::Int32),
                  RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(-256), DType::UInt8), RuntimeError);
  CHECK_THROWS_AS(full({2}, Scalar(-0.5 - 1), DType::UInt8), RuntimeError);
  Tensor u = full({2}, Scalar(0), DType::UInt8);
  CHECK_THROWS_AS(u.fill_(Scalar(256)), RuntimeError);
  Tensor m = full({2}, Scalar(true), DType::Bool);
  CHECK_THROWS_AS(masked_fill(u, m, Scalar(300)), RuntimeError);
  CHECK_THROWS_AS(where(m, u, Scalar(300)), RuntimeError);
  CHECK_THROWS_AS(clamp(u, Scalar(0), Scalar(300)), RuntimeError);
  CHECK_THROWS_AS(linspace(Scalar(0), Scalar(300), 4, DType::Int8),
                  RuntimeError);
  // What does fit: the range ends, infinities and NaN in floats, -255..-1
  // wrapping into uint8, anything into bool, fractions into integers.
  CHECK(values(full({1}, Scalar(255), DType::UInt8)) ==
        std::vector<double>{255});
  CHECK(values(full({1}, Scalar(-1), DType::UInt8)) ==
        std::vector<double>{255});
  CHECK(values(full({1}, Scalar(-128), DType::Int8)) ==
        std::vector<double>{-128});
  CHECK(values(full({1}, Scalar(65504.0), DType::Float16)) ==
        std::vector<double>{65504});
  CHECK(std::isinf(values(full({1}, Scalar(INFINITY), DType::Float16))[0]));
  CHECK(std::isnan(values(full({1}, Scalar(nan), DType::BFloat16))[0]));
  CHECK(values(full({1}, Scalar(1e300), DType::Float64))[0] == 1e300);
  CHECK(values(full({1}, Scalar(7), DType::Bool)) == std::vector<double>{1});
  CHECK(values(full({1}, Scalar(2.7), DType::Int32)) == std::vector<double>{2});
  CHECK(values(full({1}, Scalar(int64_t(INT64_MIN)), DType::Int64))[0] ==
        -9223372036854775808.0);
  // Arithmetic scalars wrap rather than raise (torch does the same).
  CHECK(values(add(u, Scalar(300))) == std::vector<double>{44, 44});
  // A bound that promotes the result is checked against the result dtype.
  CHECK(clamp(u, Scalar(0.5), Scalar(300.5)).dtype() == DType::Float32);
}

// A default-constructed Tensor handed to an op or method raises instead of
// dereferencing a null handle.
TEST_CASE("ValueError: undefined tensors", "[errors]") {
  Tensor u;
  Tensor a = full({2, 3}, Scalar(1.0), DType::Float32);
  Tensor m = full({2, 3}, Scalar(true), DType::Bool);
  CHECK_THROWS_AS(where(u, a, a), ValueError);
  CHECK_THROWS_AS(where(m, u, a), ValueError);
  CHECK_THROWS_AS(where(m, a, u), ValueError);
  CHECK_THROWS_AS(where(m, u, Scalar(1)), ValueError);
  CHECK_THROWS_AS(clamp(u, Scalar(0), Scalar(1)), ValueError);
  CHECK_THROWS_AS(clamp(u, a, a), ValueError);
  CHECK_THROWS_AS(lerp(u, a, Scalar(0.5)), ValueError);
  CHECK_THROWS_AS(lerp(a, u, Scalar(0.5)), ValueError);
  CHECK_THROWS_AS(masked_fill(a, u, Scalar(1)), ValueError);
  Tensor v;
  CHECK_THROWS_AS(masked_fill_(v, m, Scalar(1)), ValueError);
  CHECK_THROWS_AS(uniform_(v), ValueError);
  CHECK_THROWS_AS(normal_(v), ValueError);
  CHECK_THROWS_AS(random_(v, 0, 2), ValueError);
  CHECK_THROWS_AS(bernoulli_(v, 0.5), ValueError);
  CHECK_THROWS_AS(u.view({1}), ValueError);
  CHECK_THROWS_AS(u.reshape({1}), ValueError);
  CHECK_THROWS_AS(u.transpose(0, 1), ValueError);
  CHECK_THROWS_AS(u.permute({0}), ValueError);
  CHECK_THROWS_AS(u.t(), ValueError);
  CHECK_THROWS_AS(u.mT(), ValueError);
  CHECK_THROWS_AS(u.squeeze(), ValueError);
  CHECK_THROWS_AS(u.unsqueeze(0), ValueError);
  CHECK_THROWS_AS(u.expand({2}), ValueError);
  CHECK_THROWS_AS(u.flatten(), ValueError);
  CHECK_THROWS_AS(u.narrow(0, 0, 1), ValueError);
  CHECK_THROWS_AS(u.select(0, 0), ValueError);
  CHECK_THROWS_AS(u.slice(0, 0, 1), ValueError);
  CHECK_THROWS_AS(u.as_strided({1}, {1}), ValueError);
  CHECK_THROWS_AS(u.contiguous(), ValueError);
  CHECK_THROWS_AS(u.clone(), ValueError);
  CHECK_THROWS_AS(u.to(DType::Float64), ValueError);
  CHECK_THROWS_AS(u.item(), ValueError);
  CHECK_THROWS_AS(v.fill_(Scalar(1)), ValueError);
  CHECK_THROWS_AS(v.copy_(a), ValueError);
  CHECK_THROWS_AS(a.clone().copy_(u), ValueError);
  CHECK_THROWS_AS(neg(u), ValueError);
  CHECK_THROWS_AS(add(u, a), ValueError);
  CHECK_THROWS_AS(sum(u), ValueError);
}

// Each error class is thrown by the inputs that should raise it, with a
// message naming the op and the offending sizes/dtypes.
#include <string>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/elementwise.h"

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
  require_error<ValueError>([&] { gelu(x, "cubic"); }, {"gelu", "cubic"});
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

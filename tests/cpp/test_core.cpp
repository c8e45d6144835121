// Core tensor behaviour: creation, refcounts, item, fill_, to(dtype),
// copy_ with broadcasting and every dtype conversion (bool, truncation,
// half/bfloat16 rounding, NaN/inf), and printing.
#include <limits>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/elementwise.h"

using namespace fastt;
using namespace fastt::test;
using V = std::vector<int64_t>;
using D = std::vector<double>;

TEST_CASE("empty: shapes, strides, dtypes", "[core]") {
  for (DType dt : kAllDTypes) {
    Tensor t = Tensor::empty({2, 3, 5}, dt);
    CHECK(t.dtype() == dt);
    CHECK(t.numel() == 30);
    CHECK(t.nbytes() == 30 * itemsize(dt));
    CHECK(t.strides().vec() == V{15, 5, 1});
    CHECK(t.is_contiguous());
    CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  }
  Tensor s = Tensor::empty({}, DType::Float32);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  Tensor e = Tensor::empty({3, 0, 2}, DType::Int64);
  CHECK(e.numel() == 0);
  CHECK(e.strides().vec() == V{2, 2, 1});
  CHECK(e.size(-1) == 2);
  CHECK(e.stride(0) == 2);
  CHECK_THROWS_AS(e.size(3), IndexError);
  CHECK_THROWS_AS(Tensor::empty({2, -1}, DType::Float32), RuntimeError);
}

TEST_CASE("refcounts and aliasing", "[core]") {
  Tensor a = Tensor::empty({4}, DType::Float32);
  CHECK(a.use_count() == 1);
  {
    Tensor b = a;
    CHECK(a.use_count() == 2);
    Tensor c = std::move(b);
    CHECK(a.use_count() == 2);
    CHECK_FALSE(b.defined());
  }
  CHECK(a.use_count() == 1);
  Tensor v = a.alias();
  CHECK_FALSE(v.is_same(a));
  CHECK(v.storage() == a.storage());
  CHECK(a.storage()->use_count() == 2);
  a = Tensor();
  // A view keeps its base tensor (and so the storage) alive, like torch's
  // ._base: in-place writes through it reach the base's autograd history.
  CHECK(v.impl()->view_base != nullptr);
  CHECK(v.storage()->use_count() == 2);
}

TEST_CASE("item and fill_", "[core]") {
  for (DType dt : kAllDTypes) {
    Tensor t = Tensor::empty({2, 3}, dt);
    t.fill_(Scalar(1));
    for (double x : values(t)) CHECK(x == 1);
    Tensor s = scalar_tensor(dt == DType::Bool ? 1 : 3, dt);
    Scalar v = s.item();
    CHECK(v.to_double() == (dt == DType::Bool ? 1 : 3));
    CHECK(v.is_floating() == is_floating(dt));
    CHECK(v.is_bool() == (dt == DType::Bool));
  }
  Tensor f = Tensor::empty({3}, DType::Float32);
  f.fill_(Scalar(2.5));
  CHECK(values(f) == D{2.5, 2.5, 2.5});
  Tensor i = Tensor::empty({3}, DType::Int32);
  i.fill_(Scalar(-2.7));  // truncates like torch
  CHECK(values(i) == D{-2, -2, -2});
  Tensor b = Tensor::empty({2}, DType::Bool);
  b.fill_(Scalar(0.5));
  CHECK(values(b) == D{1, 1});
  // Non-contiguous fill only touches the view.
  Tensor m = make(D(12, 0), {3, 4}, DType::Int64);
  m.slice(1, 0, 4, 2).fill_(Scalar(7));
  CHECK(values(m) == D{7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0});
  Tensor e = Tensor::empty({0}, DType::Float32);
  e.fill_(Scalar(1));  // no-op
  CHECK(make({1.5}, {1}, DType::Float64).item<double>() == 1.5);
  CHECK(make({1.5}, {1, 1}, DType::Float64).item<int>() == 1);
  CHECK_THROWS_AS(Tensor::empty({2}, DType::Float32).item(), RuntimeError);
  CHECK_THROWS_AS(Tensor::empty({0}, DType::Float32).item(), RuntimeError);
  CHECK_THROWS_AS(make({1}, {1}, DType::Float32).expand({3}).fill_(Scalar(1)),
                  RuntimeError);
}

TEST_CASE("copy_ broadcasts and converts", "[core]") {
  Tensor dst = make(D(12, 0), {3, 4}, DType::Float32);
  dst.copy_(make({1, 2, 3, 4}, {4}, DType::Int32));
  CHECK(values(dst) == D{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4});
  dst.copy_(make({1, 2, 3}, {3, 1}, DType::Float64));
  CHECK(values(dst) == D{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  dst.copy_(scalar_tensor(9, DType::Int8));
  CHECK(values(dst) == D(12, 9));
  // Into a transposed destination, from a transposed source.
  Tensor src = make({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3},
                    DType::Int16);
  Tensor dt = make(D(12, 0), {4, 3}, DType::Float64);
  dt.t().copy_(src.t());
  CHECK(values(dt) == values(src));
  // Shapes that do not broadcast to the destination.
  CHECK_THROWS_AS(dst.copy_(make({1, 2}, {2}, DType::Float32)), RuntimeError);
  CHECK_THROWS_AS(dst.slice(0, 0, 1).copy_(dst), RuntimeError);
  CHECK_THROWS_AS(
      make({1}, {1}, DType::Float32).expand({4}).copy_(
          make({1, 2, 3, 4}, {4}, DType::Float32)),
      RuntimeError);
  // Overlapping source and destination.
  Tensor y = make({1, 2, 3, 4, 5}, {5}, DType::Float32);
  CHECK_THROWS_AS(y.slice(0, 1, 5).copy_(y.slice(0, 0, 4)), RuntimeError);
  y.slice(0, 0, 2).copy_(y.slice(0, 3, 5));  // disjoint parts are fine
  CHECK(values(y) == D{4, 5, 3, 4, 5});
  y.copy_(y);
  CHECK(values(y) == D{4, 5, 3, 4, 5});
  // Empty.
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  e.copy_(make({1, 2, 3}, {3}, DType::Float32));
  CHECK(e.numel() == 0);
}

TEST_CASE("copy_ between every dtype pair", "[core]") {
  // Values every dtype holds: 0, 1, 3 (plus bool's 0/1).
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes) {
      INFO(dtype_name(from) << " -> " << dtype_name(to));
      D v = from == DType::Bool ? D{0, 1, 1, 0, 1} : D{0, 1, 3, 0, 2};
      Tensor s = make(v, {5}, from);
      Tensor d = Tensor::empty({5}, to);
      d.copy_(s);
      D expected;
      for (double x : v) expected.push_back(to == DType::Bool ? x != 0 : x);
      CHECK(values(d) == expected);
      // Strided source (step 2) and strided destination.
      Tensor big = make({0, 1, 1, 1, 0, 1, 1, 1, 0, 1}, {10}, from);
      Tensor db = make(D(10, 0), {10}, to);
      db.slice(0, 1, 10, 2).copy_(big.slice(0, 0, 10, 2));
      CHECK(values(db) == D{0, 0, 0, 1, 0, 0, 0, 1, 0, 0});
      CHECK(values(s.to(to)) == expected);
    }
}

TEST_CASE("conversions: bool, truncation, NaN/inf, wraparound", "[core]") {
  Tensor f = make({-2.7, -0.5, 0.0, 0.5, 2.7, 1e9}, {6}, DType::Float64);
  CHECK(values(f.to(DType::Int32)) == D{-2, 0, 0, 0, 2, 1e9});
  CHECK(values(f.to(DType::Bool)) == D{1, 1, 0, 1, 1, 1});
  CHECK(values(f.to(DType::Int64)) == D{-2, 0, 0, 0, 2, 1e9});
  Tensor nz = make({-0.0, 0.0}, {2}, DType::Float32);
  CHECK(values(nz.to(DType::Bool)) == D{0, 0});
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  Tensor special = make({nan, inf, -inf}, {3}, DType::Float64);
  CHECK(values(special.to(DType::Bool)) == D{1, 1, 1});
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32}) {
    D got = values(special.to(dt));
    CHECK(std::isnan(got[0]));
    CHECK(got[1] == inf);
    CHECK(got[2] == -inf);
  }
  // Integer narrowing wraps like a C cast.
  Tensor i = make({300, -129, 65535}, {3}, DType::Int64);
  CHECK(values(i.to(DType::UInt8)) == D{44, 127, 255});
  CHECK(values(i.to(DType::Int8)) == D{44, 127, -1});
  CHECK(values(i.to(DType::Int16)) == D{300, -129, -1});
  // Bool -> numbers is 0/1.
  Tensor b = make({1, 0}, {2}, DType::Bool);
  CHECK(values(b.to(DType::Float16)) == D{1, 0});
  CHECK(values(b.to(DType::Int64)) == D{1, 0});
  // to() without a change returns self; copy=true forces a copy.
  CHECK(f.to(DType::Float64).is_same(f));
  CHECK(f.to(DType::Float64, true).data_ptr() != f.data_ptr());
  CHECK(f.to(kCPU).is_same(f));
}

TEST_CASE("half: exact bit patterns and round-to-nearest-even", "[core]") {
  auto bits = [](float f) { return Half(f).bits; };
  CHECK(bits(0.0f) == 0x0000);
  CHECK(bits(-0.0f) == 0x8000);
  CHECK(bits(1.0f) == 0x3c00);
  CHECK(bits(-2.0f) == 0xc000);
  CHECK(bits(65504.0f) == 0x7bff);
  CHECK(bits(65520.0f) == 0x7c00);  // rounds up to inf
  CHECK(bits(65519.0f) == 0x7bff);
  CHECK(bits(1e6f) == 0x7c00);
  CHECK(bits(-1e6f) == 0xfc00);
  CHECK(bits(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK((bits(std::numeric_limits<float>::quiet_NaN()) & 0x7c00) == 0x7c00);
  CHECK((bits(std::numeric_limits<float>::quiet_NaN()) & 0x3ff) != 0);
  // Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  CHECK(bits(1.0f + 0x1p-11f) == 0x3c00);
  CHECK(bits(1.0f + 3 * 0x1p-11f) == 0x3c02);
  CHECK(bits(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);
  // Subnormals: smallest is 2^-24; 2^-25 ties to 0, 3*2^-25 to 2*2^-24.
  CHECK(bits(0x1p-24f) == 0x0001);
  CHECK(bits(0x1p-25f) == 0x0000);
  CHECK(bits(0x1p-25f * 1.01f) == 0x0001);
  CHECK(bits(3 * 0x1p-25f) == 0x0002);
  CHECK(bits(0x1p-14f) == 0x0400);       // smallest normal
  CHECK(bits(0x1p-14f - 0x1p-24f) == 0x03ff);
  // Every half value round-trips through float exactly.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    Half x = Half::from_bits(uint16_t(h));
    float f = float(x);
    if (f != f) continue;
    REQUIRE(Half(f).bits == h);
  }
  // Through tensors too.
  Tensor t = make({1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11, 65520.0}, {3},
                  DType::Float64);
  CHECK(values(t.to(DType::Float16)) == D{1.0, 1.0 + 0x1p-9, INFINITY});
}

TEST_CASE("bfloat16: exact bit patterns and round-to-nearest-even",
          "[core]") {
  auto bits = [](float f) { return BFloat16(f).bits; };
  CHECK(bits(1.0f) == 0x3f80);
  CHECK(bits(-1.0f) == 0xbf80);
  CHECK(bits(1.0f + 0x1p-8f) == 0x3f80);       // tie, stays even
  CHECK(bits(1.0f + 3 * 0x1p-8f) == 0x3f82);   // tie, rounds up to even
  CHECK(bits(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);
  CHECK(bits(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(bits(3.4e38f) == 0x7f80);  // rounds past the largest to inf
  uint16_t nb = bits(std::numeric_limits<float>::quiet_NaN());
  CHECK((nb & 0x7f80) == 0x7f80);
  CHECK((nb & 0x7f) != 0);
  // A signalling NaN whose payload sits in the low bits stays NaN.
  uint32_t snan = 0x7f800001u;
  float fs;
  std::memcpy(&fs, &snan, 4);
  CHECK(float(BFloat16(fs)) != float(BFloat16(fs)));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    BFloat16 x = BFloat16::from_bits(uint16_t(h));
    float f = float(x);
    if (f != f) continue;
    REQUIRE(BFloat16(f).bits == h);
  }
  // float16 <-> bfloat16 through tensors.
  Tensor h = make({0.1, 1000, -3.5}, {3}, DType::Float16);
  D hv = values(h);
  D bv = values(h.to(DType::BFloat16));
  for (int i = 0; i < 3; ++i)
    CHECK(bv[size_t(i)] == round_to(DType::BFloat16, hv[size_t(i)]));
}

TEST_CASE("str prints like torch", "[core]") {
  Tensor a = make({1.5, 2, 3.25, 4}, {2, 2}, DType::Float32);
  CHECK(a.str() ==
        "tensor([[1.5000, 2.0000],\n        [3.2500, 4.0000]])");
  CHECK(make({1, 2}, {2}, DType::Int64).str() == "tensor([1, 2])");
  CHECK(make({1, 0}, {2}, DType::Bool).str() == "tensor([ True, False])");
  CHECK(scalar_tensor(3, DType::Float32).str() == "tensor(3.)");
  CHECK(make({1, 2}, {2}, DType::Int32).str() ==
        "tensor([1, 2], dtype=fastt.int32)");
  CHECK(Tensor::empty({0}, DType::Float32).str() == "tensor([])");
}

TEST_CASE("smoke: add and print", "[core]") {
  Tensor a = Tensor::empty({2, 2}, DType::Float32);
  Tensor b = Tensor::empty({2, 2}, DType::Float32);
  a.fill_(1.5);
  b.fill_(2.0);
  Tensor c = add(a, b);
  REQUIRE(c.data_ptr<float>()[3] == 3.5f);
  Tensor d = add(a, 2, 3);
  REQUIRE(d.data_ptr<float>()[0] == 7.5f);
  REQUIRE(c.str() == "tensor([[3.5000, 3.5000],\n        [3.5000, 3.5000]])");
  CHECK_THROWS_AS(c.data_ptr<double>(), TypeError);
}

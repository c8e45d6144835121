// Views and strides: every Tensor view method checked for sizes, strides,
// storage sharing and the values it reads, plus each method's errors.
#include <numeric>

#include "catch.h"
#include "core_test_util.h"

using namespace fastt;
using namespace fastt::test;
using V = std::vector<int64_t>;

namespace {

// 0, 1, 2, ... as float32 in `sizes`.
Tensor iota(IntList sizes, DType dt = DType::Float32) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return make(v, sizes, dt);
}

V vec(IntList l) { return l.vec(); }

bool shares(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage();
}

}  // namespace

TEST_CASE("view: -1 inference, sharing and errors", "[views]") {
  Tensor x = iota({2, 3, 4});
  Tensor v = x.view({6, -1});
  CHECK(vec(v.sizes()) == V{6, 4});
  CHECK(vec(v.strides()) == V{4, 1});
  CHECK(v.data_ptr() == x.data_ptr());
  CHECK(shares(v, x));
  CHECK(values(v) == values(x));
  CHECK(vec(x.view({-1}).sizes()) == V{24});
  CHECK(vec(x.view({1, -1, 1}).sizes()) == V{1, 24, 1});
  CHECK_THROWS_AS(x.view({-1, -1}), RuntimeError);
  CHECK_THROWS_AS(x.view({5, -1}), RuntimeError);
  CHECK_THROWS_AS(x.view({7, 3}), RuntimeError);
  CHECK_THROWS_AS(x.view({-2, 12}), RuntimeError);
  // 0-d <-> [1].
  Tensor s = scalar_tensor(5, DType::Float32);
  CHECK(vec(s.view({1}).sizes()) == V{1});
  CHECK(s.view({1}).view({}).dim() == 0);
  CHECK(vec(s.view({-1}).sizes()) == V{1});
  // Empty tensors.
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  CHECK(vec(e.view({3, 0}).sizes()) == V{3, 0});
  CHECK(vec(e.view({-1, 3}).sizes()) == V{0, 3});
}

TEST_CASE("view of non-contiguous tensors", "[views]") {
  // Transposed (4, 6) -> viewable dims that stay within one chunk.
  Tensor x = iota({2, 3, 4});
  Tensor p = x.permute({1, 0, 2});  // (3, 2, 4) with strides (4, 12, 1)
  Tensor v = p.view({3, 2, 2, 2});  // splitting the last dim is fine
  CHECK(vec(v.strides()) == V{4, 12, 2, 1});
  CHECK(values(v) == values(p));
  CHECK(v.data_ptr() == x.data_ptr());
  // Merging dims 0 and 1 of p crosses chunks.
  try {
    p.view({6, 4});
    FAIL("view should fail");
  } catch (const RuntimeError& e) {
    CHECK(std::string(e.what()).find("reshape") != std::string::npos);
  }
  // A step-sliced tensor: (4, 3) rows with stride 2: merging fails,
  // splitting the contiguous inner dim works.
  Tensor y = iota({8, 6}).slice(0, 0, 8, 2);  // (4, 6), strides (12, 1)
  Tensor w = y.view({4, 2, 3});
  CHECK(vec(w.strides()) == V{12, 3, 1});
  CHECK(values(w) == values(y));
  CHECK_THROWS_AS(y.view({24}), RuntimeError);
  // Expanded dims with size 1 insertions.
  Tensor z = iota({3}).unsqueeze(1).expand({3, 4});
  Tensor zv = z.view({3, 1, 4});
  CHECK(vec(zv.strides())[2] == 0);
  CHECK(values(zv) == values(z));
}

TEST_CASE("reshape: view when possible, copy otherwise", "[views]") {
  Tensor x = iota({4, 6});
  Tensor r = x.reshape({2, 12});
  CHECK(r.data_ptr() == x.data_ptr());
  Tensor t = x.t();
  Tensor r2 = t.reshape({24});
  CHECK(r2.data_ptr() != x.data_ptr());
  CHECK(r2.is_contiguous());
  CHECK(values(r2) == values(t));
  Tensor r3 = t.reshape({6, 2, 2});  // splitting a dim of t: still a view
  CHECK(r3.data_ptr() == x.data_ptr());
  CHECK(values(r3) == values(t));
  CHECK(vec(x.reshape({-1, 3}).sizes()) == V{8, 3});
  CHECK_THROWS_AS(x.reshape({5, 5}), RuntimeError);
  Tensor s = scalar_tensor(2, DType::Int32);
  CHECK(s.reshape({1, 1}).numel() == 1);
}

TEST_CASE("transpose, permute, t, mT", "[views]") {
  Tensor x = iota({2, 3, 4});
  Tensor tr = x.transpose(0, -1);
  CHECK(vec(tr.sizes()) == V{4, 3, 2});
  CHECK(vec(tr.strides()) == V{1, 4, 12});
  CHECK_FALSE(tr.is_contiguous());
  CHECK(get(tr, 1) == 12);  // tr[0][0][1] = x[1][0][0]
  CHECK(x.transpose(1, 1).is_contiguous());
  CHECK_THROWS_AS(x.transpose(0, 3), IndexError);

  Tensor p = x.permute({2, 0, 1});
  CHECK(vec(p.sizes()) == V{4, 2, 3});
  CHECK(vec(p.strides()) == V{1, 12, 4});
  CHECK(get(p, 1) == 4);
  CHECK(vec(x.permute({-1, -2, -3}).sizes()) == V{4, 3, 2});
  CHECK_THROWS_AS(x.permute({0, 1}), RuntimeError);
  CHECK_THROWS_AS(x.permute({0, 1, 1}), RuntimeError);
  CHECK_THROWS_AS(x.permute({0, 1, 3}), IndexError);

  Tensor m = iota({2, 3});
  CHECK(vec(m.t().sizes()) == V{3, 2});
  CHECK(vec(iota({5}).t().sizes()) == V{5});
  CHECK(scalar_tensor(1, DType::Float32).t().dim() == 0);
  CHECK_THROWS_AS(x.t(), RuntimeError);
  CHECK(vec(x.mT().sizes()) == V{2, 4, 3});
  CHECK(vec(x.mT().strides()) == V{12, 1, 4});
  CHECK_THROWS_AS(iota({3}).mT(), RuntimeError);
  // 0-d transpose(0, 0) and transpose(-1, 0) are allowed.
  CHECK(scalar_tensor(1, DType::Float32).transpose(0, -1).dim() == 0);
}

TEST_CASE("squeeze and unsqueeze", "[views]") {
  Tensor x = iota({1, 3, 1, 2});
  CHECK(vec(x.squeeze().sizes()) == V{3, 2});
  CHECK(vec(x.squeeze(0).sizes()) == V{3, 1, 2});
  CHECK(vec(x.squeeze(1).sizes()) == V{1, 3, 1, 2});  // not size 1: no-op
  CHECK(vec(x.squeeze(-2).sizes()) == V{1, 3, 2});
  CHECK_THROWS_AS(x.squeeze(4), IndexError);
  CHECK(scalar_tensor(1, DType::Float32).squeeze().dim() == 0);
  CHECK(scalar_tensor(1, DType::Float32).squeeze(0).dim() == 0);
  CHECK(iota({1, 1}).squeeze().dim() == 0);
  // squeeze(dims): the listed size-1 dims, as one view (torch).
  CHECK(vec(x.squeeze(IntList{0, 2}).sizes()) == V{3, 2});
  CHECK(vec(x.squeeze(IntList{0, 1}).sizes()) == V{3, 1, 2});
  CHECK(vec(x.squeeze(IntList{-2, 0}).strides()) == V{2, 1});
  CHECK(vec(x.squeeze(IntList{}).sizes()) == V{1, 3, 1, 2});
  CHECK(x.squeeze(IntList{0, 2}).storage() == x.storage());
  CHECK_THROWS_AS(x.squeeze(IntList{0, 0}), RuntimeError);
  CHECK_THROWS_AS(x.squeeze(IntList{0, -4}), RuntimeError);
  CHECK_THROWS_AS(x.squeeze(IntList{5}), IndexError);
  CHECK(scalar_tensor(1, DType::Float32).squeeze(IntList{0}).dim() == 0);

  Tensor y = iota({3, 2});
  CHECK(vec(y.unsqueeze(0).sizes()) == V{1, 3, 2});
  CHECK(vec(y.unsqueeze(0).strides()) == V{6, 2, 1});
  CHECK(vec(y.unsqueeze(2).sizes()) == V{3, 2, 1});
  CHECK(vec(y.unsqueeze(2).strides()) == V{2, 1, 1});
  CHECK(vec(y.unsqueeze(-1).sizes()) == V{3, 2, 1});
  CHECK(vec(y.unsqueeze(-3).sizes()) == V{1, 3, 2});
  CHECK(y.unsqueeze(1).is_contiguous());
  CHECK_THROWS_AS(y.unsqueeze(3), IndexError);
  CHECK_THROWS_AS(y.unsqueeze(-4), IndexError);
  CHECK(vec(scalar_tensor(1, DType::Float32).unsqueeze(0).sizes()) == V{1});
  // The kMaxDims limit is an error, not an overflow.
  Tensor deep = iota({1});
  for (int i = 1; i < kMaxDims; ++i) deep = deep.unsqueeze(0);
  CHECK(deep.dim() == kMaxDims);
  CHECK_THROWS_AS(deep.unsqueeze(0), ValueError);
}

TEST_CASE("expand and its errors", "[views]") {
  Tensor x = iota({3, 1});
  Tensor e = x.expand({2, 3, 4});
  CHECK(vec(e.sizes()) == V{2, 3, 4});
  CHECK(vec(e.strides()) == V{0, 1, 0});
  CHECK(e.data_ptr() == x.data_ptr());
  CHECK(get(e, 5) == 1);  // e[0][1][1] = x[1][0]
  CHECK(vec(x.expand({-1, 5}).sizes()) == V{3, 5});
  CHECK(vec(x.expand({3, 0}).sizes()) == V{3, 0});
  CHECK(vec(scalar_tensor(7, DType::Float32).expand({2, 2}).sizes()) ==
        V{2, 2});
  CHECK(x.expand_as(iota({3, 7})).numel() == 21);
  CHECK_THROWS_AS(x.expand({4, 4}), RuntimeError);
  CHECK_THROWS_AS(x.expand({4}), RuntimeError);
  CHECK_THROWS_AS(x.expand({-1, 3, 4}), RuntimeError);
  CHECK_THROWS_AS(x.expand({3, -2}), RuntimeError);
  try {
    x.expand({4, 4});
  } catch (const RuntimeError& e) {
    std::string m = e.what();
    CHECK(m.find("(4)") != std::string::npos);
    CHECK(m.find("(3)") != std::string::npos);
  }
}

TEST_CASE("flatten and unflatten", "[views]") {
  Tensor x = iota({2, 3, 4});
  CHECK(vec(x.flatten().sizes()) == V{24});
  CHECK(x.flatten().data_ptr() == x.data_ptr());
  CHECK(vec(x.flatten(1).sizes()) == V{2, 12});
  CHECK(vec(x.flatten(0, 1).sizes()) == V{6, 4});
  CHECK(vec(x.flatten(-1).sizes()) == V{2, 3, 4});
  CHECK(vec(scalar_tensor(1, DType::Float32).flatten().sizes()) == V{1});
  CHECK_THROWS_AS(x.flatten(2, 1), RuntimeError);
  CHECK_THROWS_AS(x.flatten(0, 3), IndexError);
  Tensor t = x.transpose(0, 2);
  Tensor f = t.flatten();  // copies
  CHECK(values(f) == values(t));

  CHECK(vec(x.unflatten(2, {2, 2}).sizes()) == V{2, 3, 2, 2});
  CHECK(vec(x.unflatten(-1, {-1, 2}).sizes()) == V{2, 3, 2, 2});
  CHECK(vec(x.unflatten(0, {1, 2}).sizes()) == V{1, 2, 3, 4});
  CHECK_THROWS_AS(x.unflatten(2, {3, -1}), RuntimeError);
  CHECK_THROWS_AS(x.unflatten(2, {3, 3}), RuntimeError);
}

TEST_CASE("narrow, select", "[views]") {
  Tensor x = iota({4, 5});
  Tensor n = x.narrow(1, 1, 3);
  CHECK(vec(n.sizes()) == V{4, 3});
  CHECK(n.storage_offset() == 1);
  CHECK(get(n, 3) == 6);
  CHECK(vec(x.narrow(0, -2, 2).sizes()) == V{2, 5});
  CHECK(x.narrow(0, -2, 2).storage_offset() == 10);
  CHECK(x.narrow(1, 5, 0).numel() == 0);
  CHECK_THROWS_AS(x.narrow(1, 3, 3), RuntimeError);
  CHECK_THROWS_AS(x.narrow(1, 6, 0), IndexError);
  CHECK_THROWS_AS(x.narrow(1, 0, -1), RuntimeError);
  CHECK_THROWS_AS(scalar_tensor(1, DType::Float32).narrow(0, 0, 1),
                  RuntimeError);

  Tensor s = x.select(0, 2);
  CHECK(vec(s.sizes()) == V{5});
  CHECK(get(s, 0) == 10);
  Tensor s2 = x.select(1, -1);
  CHECK(vec(s2.strides()) == V{5});
  CHECK(get(s2, 3) == 19);
  CHECK(x.select(0, 1).select(0, 2).dim() == 0);
  CHECK(x.select(0, 1).select(0, 2).item<double>() == 7);
  CHECK_THROWS_AS(x.select(0, 4), IndexError);
  CHECK_THROWS_AS(x.select(1, -6), IndexError);
  CHECK_THROWS_AS(x.select(2, 0), IndexError);
  CHECK_THROWS_AS(scalar_tensor(1, DType::Float32).select(0, 0), IndexError);
}

TEST_CASE("slice with steps and negative/clamped bounds", "[views]") {
  Tensor x = iota({10});
  auto sl = [&](int64_t a, int64_t b, int64_t st) {
    return values(x.slice(0, a, b, st));
  };
  using D = std::vector<double>;
  CHECK(sl(0, 10, 3) == D{0, 3, 6, 9});
  CHECK(sl(1, 10, 3) == D{1, 4, 7});
  CHECK(sl(-3, 10, 1) == D{7, 8, 9});
  CHECK(sl(-100, 2, 1) == D{0, 1});
  CHECK(sl(8, 100, 1) == D{8, 9});
  CHECK(sl(5, 2, 1).empty());
  CHECK(sl(-1, -5, 1).empty());
  CHECK(sl(0, -1, 4) == D{0, 4, 8});
  CHECK(sl(100, 200, 1).empty());
  CHECK(sl(2, 3, 5) == D{2});
  Tensor e = x.slice(0, 20, 30);
  CHECK(e.numel() == 0);
  CHECK(e.storage_offset() <= 10);
  CHECK(x.slice(0, 2, 8, 2).stride(0) == 2);
  CHECK(x.slice(0, 2, 8, 2).storage_offset() == 2);
  CHECK_THROWS_AS(x.slice(0, 0, 5, 0), ValueError);
  CHECK_THROWS_AS(x.slice(0, 0, 5, -1), ValueError);
  CHECK_THROWS_AS(x.slice(1, 0, 5), IndexError);
  Tensor m = iota({4, 6}).slice(1, 1, 6, 2);
  CHECK(vec(m.sizes()) == V{4, 3});
  CHECK(values(m) == D{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23});
}

TEST_CASE("as_strided and its bounds check", "[views]") {
  Tensor x = iota({12});
  Tensor a = x.as_strided({3, 3}, {3, 1}, 1);
  CHECK(values(a) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = x.as_strided({5, 4}, {2, 1}, 0);  // overlapping windows
  CHECK(get(w, 4) == 2);
  CHECK(x.as_strided({2, 2}, {0, 0}).numel() == 4);
  CHECK(x.as_strided({0, 5}, {100, 100}, 0).numel() == 0);
  CHECK(x.as_strided({4}, {3}, 2).storage_offset() == 2);
  Tensor v = x.slice(0, 4, 12);
  CHECK(v.as_strided({2}, {1}).storage_offset() == 4);  // keeps offset
  CHECK_THROWS_AS(x.as_strided({4, 4}, {4, 1}), RuntimeError);
  CHECK_THROWS_AS(x.as_strided({3}, {1}, 10), RuntimeError);
  CHECK_THROWS_AS(x.as_strided({3}, {1, 1}), RuntimeError);
  CHECK_THROWS_AS(x.as_strided({3}, {-1}), RuntimeError);
  try {
    x.as_strided({13}, {1}, 0);
    FAIL("expected out of bounds");
  } catch (const RuntimeError& e) {
    CHECK(std::string(e.what()).find("out of bounds") != std::string::npos);
  }
}

TEST_CASE("diagonal", "[views]") {
  Tensor x = iota({3, 4});
  CHECK(values(x.diagonal()) == std::vector<double>{0, 5, 10});
  CHECK(values(x.diagonal(1)) == std::vector<double>{1, 6, 11});
  CHECK(values(x.diagonal(-1)) == std::vector<double>{4, 9});
  CHECK(values(x.diagonal(3)) == std::vector<double>{3});
  CHECK(x.diagonal(4).numel() == 0);
  CHECK(x.diagonal(-3).numel() == 0);
  CHECK(x.diagonal(-30).numel() == 0);
  CHECK(values(x.diagonal(0, 1, 0)) == std::vector<double>{0, 5, 10});
  Tensor b = iota({2, 3, 3});
  Tensor d = b.diagonal(0, 1, 2);
  CHECK(vec(d.sizes()) == V{2, 3});
  CHECK(values(d) == std::vector<double>{0, 4, 8, 9, 13, 17});
  CHECK(vec(b.diagonal(0, 0, 2).sizes()) == V{3, 2});
  CHECK_THROWS_AS(iota({3}).diagonal(), RuntimeError);
  CHECK_THROWS_AS(x.diagonal(0, 1, 1), RuntimeError);
  CHECK_THROWS_AS(x.diagonal(0, 0, 2), IndexError);
}

TEST_CASE("unfold", "[views]") {
  Tensor x = iota({7});
  Tensor u = x.unfold(0, 3, 2);
  CHECK(vec(u.sizes()) == V{3, 3});
  CHECK(vec(u.strides()) == V{2, 1});
  CHECK(values(u) == std::vector<double>{0, 1, 2, 2, 3, 4, 4, 5, 6});
  Tensor m = iota({2, 5});
  Tensor um = m.unfold(1, 2, 3);
  CHECK(vec(um.sizes()) == V{2, 2, 2});
  CHECK(values(um) == std::vector<double>{0, 1, 3, 4, 5, 6, 8, 9});
  CHECK(vec(x.unfold(0, 7, 1).sizes()) == V{1, 7});
  CHECK(vec(x.unfold(0, 0, 1).sizes()) == V{8, 0});
  CHECK(vec(scalar_tensor(1, DType::Float32).unfold(0, 1, 1).sizes()) ==
        V{1});
  CHECK_THROWS_AS(x.unfold(0, 8, 1), RuntimeError);
  CHECK_THROWS_AS(x.unfold(0, 2, 0), RuntimeError);
  CHECK_THROWS_AS(x.unfold(1, 2, 1), IndexError);
}

TEST_CASE("contiguous and clone", "[views]") {
  Tensor x = iota({3, 4});
  CHECK(x.contiguous().is_same(x));
  Tensor t = x.t();
  Tensor c = t.contiguous();
  CHECK(c.is_contiguous());
  CHECK_FALSE(c.is_same(t));
  CHECK(values(c) == values(t));
  CHECK(vec(c.strides()) == V{3, 1});
  Tensor k = x.clone();
  CHECK(k.data_ptr() != x.data_ptr());
  CHECK(values(k) == values(x));
  Tensor k2 = t.clone();
  CHECK(values(k2) == values(t));
  // Size-1 dims with odd strides are still contiguous.
  Tensor odd = iota({3, 1}).as_strided({3, 1}, {1, 17});
  CHECK(odd.is_contiguous());
  // Writes through a view reach the base.
  x.select(0, 1).fill_(Scalar(-1));
  CHECK(get(x, 4) == -1);
  CHECK(get(x, 7) == -1);
  CHECK(get(x, 8) == 8);
  // Views keep the storage alive after the base dies.
  Tensor v;
  {
    Tensor base = iota({5});
    v = base.slice(0, 1, 4);
  }
  CHECK(values(v) == std::vector<double>{1, 2, 3});
  CHECK(v.impl()->view_base != nullptr);  // the base lives on as v's base
  CHECK(v.storage()->use_count() == 2);
}

TEST_CASE("views share the version counter", "[views]") {
  Tensor x = iota({4});
  Tensor v = x.slice(0, 0, 2);
  uint32_t before = x.storage()->version();
  v.fill_(Scalar(3));
  CHECK(x.storage()->version() > before);
  uint32_t mid = x.storage()->version();
  x.copy_(iota({4}));
  CHECK(v.storage()->version() > mid);
}

// Sizes and strides near int64's limits must not wrap into "valid" views.
TEST_CASE("views whose extent or element count overflows int64",
          "[views][errors]") {
  const int64_t H = int64_t(1) << 62;
  Tensor x = iota({12});
  // (3 - 1) * 2^62 wraps negative and used to pass the bounds check.
  CHECK_THROWS_AS(x.as_strided({3}, {H}), RuntimeError);
  CHECK_THROWS_AS(x.as_strided({5}, {int64_t(1) << 61}), RuntimeError);
  CHECK_THROWS_AS(x.as_strided({2, 2}, {H, H}), RuntimeError);
  CHECK_THROWS_AS(x.as_strided({1}, {1}, H * 2 - 1 + H), RuntimeError);
  // Only -1 means "keep the offset"; other negatives are errors.
  CHECK_THROWS_AS(x.as_strided({1}, {1}, -5), RuntimeError);
  CHECK(x.slice(0, 3, 12).as_strided({1}, {1}, -1).storage_offset() == 3);
  // expand through stride-0 dims: 2^40 * 2^40 * 4 elements overflow.
  Tensor v = iota({4});
  CHECK_THROWS_AS(v.expand({int64_t(1) << 40, int64_t(1) << 40, 4}),
                  RuntimeError);
  CHECK_THROWS_AS(x.slice(0, 0, 1).expand({H, H}), RuntimeError);
  // Large but representable is still a valid (stride-0) view.
  Tensor big = v.expand({int64_t(1) << 40, 4});
  CHECK(big.numel() == (int64_t(1) << 42));
  CHECK(big.strides()[0] == 0);
}

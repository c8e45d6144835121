// The C++ forms of three Python semantics: t[...] (Tensor::index /
// index_put_ with TensorIndex items, csrc/ops/indexing.h), view(dtype)
// and out= (assign_out / resize_out, csrc/ops/out.h), each against values
// worked out by hand and torch's errors.
#include <numeric>
#include <string>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/autograd.h"
#include "csrc/ops.h"

using namespace fastt;
using namespace fastt::indexing;
using namespace fastt::test;
using V = std::vector<int64_t>;
using D = std::vector<double>;

namespace {

// 0, 1, 2, ... in `sizes`.
Tensor iota(IntList sizes, DType dt = DType::Float32) {
  std::vector<double> v(size_t(checked_numel(sizes, "iota")));
  std::iota(v.begin(), v.end(), 0.0);
  return make(v, sizes, dt);
}

Tensor ints(const std::vector<double>& v, DType dt = DType::Int64) {
  return make(v, {int64_t(v.size())}, dt);
}

V vec(IntList l) { return l.vec(); }

}  // namespace

TEST_CASE("Tensor::index: ints, slices, None, Ellipsis, bools", "[indexing]") {
  Tensor x = iota({2, 3, 4});
  Tensor r = x.index({1});  // x[1]
  CHECK(vec(r.sizes()) == V{3, 4});
  CHECK(r.storage() == x.storage());
  CHECK(values(r) == D{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  CHECK(values(x.index({-1, Slice(1, None), 2})) == D{18, 22});
  CHECK(vec(x.index({Slice(None, None, 2)}).sizes()) == V{1, 3, 4});
  CHECK(vec(x.index({Slice(-2, 100)}).sizes()) == V{2, 3, 4});  // clamps
  CHECK(vec(x.index({Slice(5)}).sizes()) == V{0, 3, 4});
  Tensor e = x.index({None, Ellipsis, 0});  // x[None, ..., 0]
  CHECK(vec(e.sizes()) == V{1, 2, 3});
  CHECK(values(e) == D{0, 4, 8, 12, 16, 20});
  CHECK(values(x.index({"...", 1})) == D{1, 5, 9, 13, 17, 21});
  CHECK(values(x.index({0, Slice(), Slice(1, None, 2)})) ==
        D{1, 3, 5, 7, 9, 11});
  // A bool is a new dim of size 1 (true) or 0 (false).
  CHECK(vec(x.index({true}).sizes()) == V{1, 2, 3, 4});
  CHECK(vec(x.index({false}).sizes()) == V{0, 2, 3, 4});
  CHECK(vec(x.index({0, true, false}).sizes()) == V{0, 3, 4});
  // x[...] and x[()] are new tensors over the same data.
  for (const Tensor& a : {x.index({Ellipsis}), x.index({})}) {
    CHECK_FALSE(a.is_same(x));
    CHECK(a.data_ptr() == x.data_ptr());
    CHECK(vec(a.sizes()) == V{2, 3, 4});
  }
}

TEST_CASE("Tensor::index: tensor items are advanced indices", "[indexing]") {
  Tensor x = iota({2, 3, 4});
  Tensor i = ints({1, 0, 1});
  Tensor c = x.index({Slice(), i});  // x[:, [1, 0, 1]]
  CHECK(vec(c.sizes()) == V{2, 3, 4});
  CHECK(values(c) == values(fastt::index(x, {Tensor(), i})));
  CHECK(c.storage() != x.storage());
  // Adjacent advanced dims stay in place ...
  Tensor a = x.index({i, Slice(), 0});
  CHECK(vec(a.sizes()) == V{3, 3});
  CHECK(values(a) == D{12, 16, 20, 0, 4, 8, 12, 16, 20});
  // ... separated ones move to the front.
  Tensor s = x.index({ints({1, 0}), Slice(), ints({3, 0}, DType::Int32)});
  CHECK(vec(s.sizes()) == V{2, 3});
  CHECK(values(s) == D{15, 19, 23, 0, 4, 8});
  // A mask consumes as many dims as it has.
  Tensor m = x.index({Slice(), ints({1, 0, 1}, DType::Bool)});
  CHECK(vec(m.sizes()) == V{2, 2, 4});
  CHECK(values(m) == D{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22,
                       23});
  CHECK(vec(x.index({make({1, 0, 1, 0, 0, 1}, {2, 3}, DType::Bool)})
                .sizes()) == V{3, 4});
  // A 0-d integer tensor selects like an int: a view.
  Tensor z = x.index({Slice(), scalar_tensor(2, DType::Int32)});
  CHECK(vec(z.sizes()) == V{2, 4});
  CHECK(z.storage() == x.storage());
  CHECK(values(z) == D{8, 9, 10, 11, 20, 21, 22, 23});
  // A 0-d mask is a bool.
  CHECK(vec(x.index({scalar_tensor(0, DType::Bool)}).sizes()) ==
        V{0, 2, 3, 4});
}

TEST_CASE("Tensor::index: errors", "[indexing][errors]") {
  Tensor x = iota({2, 3, 4});
  CHECK(error_of([&] { x.index({0, 0, 0, 0}); }) ==
        "too many indices for tensor of dimension 3");
  CHECK_THROWS_AS(x.index({0, 0, 0, 0}), IndexError);
  CHECK(error_of([&] { x.index({Ellipsis, 0, Ellipsis}); }) ==
        "an index can only have a single ellipsis ('...')");
  CHECK_THROWS_AS(x.index({Ellipsis, Ellipsis}), IndexError);
  CHECK(error_of([&] { x.index({ints({0.5}, DType::Float32)}); }) ==
        "tensors used as indices must be long, int, byte or bool tensors");
  CHECK_THROWS_AS(x.index({ints({0}, DType::Float32)}), IndexError);
  CHECK(error_of([&] { x.index({Slice(None, None, 0)}); }) ==
        "step must be greater than zero");
  CHECK_THROWS_AS(x.index({0, Slice(None, None, -1)}), ValueError);
  CHECK(error_of([&] { x.index({5}); }) ==
        "index 5 is out of bounds for dimension 0 with size 2");
  CHECK_THROWS_AS(x.index({0, -4}), IndexError);
  CHECK_THROWS_AS(x.index({ints({2})}), IndexError);  // advanced, too
  CHECK(error_of([&] { x.index({"..x"}); }) ==
        "index: expected \"...\" to represent an ellipsis index, but got "
        "\"..x\"");
  CHECK_THROWS_AS(x.index({static_cast<const char*>(nullptr)}), ValueError);
  CHECK_THROWS_AS(x.index({Tensor()}), ValueError);
  CHECK_THROWS_AS(Tensor().index({0}), ValueError);
  CHECK_THROWS_AS(Tensor().index({0, 0}), ValueError);
  CHECK_THROWS_AS(scalar_tensor(1, DType::Float32).index({0}), IndexError);
}

TEST_CASE("Tensor::index_put_: basic and advanced assignment", "[indexing]") {
  Tensor y = Tensor::empty({2, 3}, DType::Float32);
  y.zero_();
  CHECK(&y.index_put_({0}, 5.0) == &y);  // y[0] = 5
  CHECK(values(y) == D{5, 5, 5, 0, 0, 0});
  // The value's leading size-1 dims are dropped: y[:, 1] = [[7, 8]].
  y.index_put_({Slice(), 1}, make({7, 8}, {1, 2}, DType::Float32));
  CHECK(values(y) == D{5, 7, 5, 0, 8, 0});
  y.index_put_({Ellipsis, ints({0, 2})}, -1.0);
  CHECK(values(y) == D{-1, 7, -1, -1, 8, -1});
  y.index_put_({ints({1, 0}, DType::Bool)}, ints({1, 2, 3}, DType::Float32));
  CHECK(values(y) == D{1, 2, 3, -1, 8, -1});
  y.index_put_({1, ints({2, 0})}, ints({9, 6}, DType::Int64));  // converts
  CHECK(values(y) == D{1, 2, 3, 6, 8, 9});
  y.index_put_({false}, 4.0);  // selects nothing
  CHECK(values(y) == D{1, 2, 3, 6, 8, 9});
  y.index_put_({}, 0.5);
  CHECK(values(y) == D{0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  // Errors.
  CHECK_THROWS_AS(
      y.index_put_({ints({0, 1})}, ints({1, 2, 3, 4}, DType::Float32)),
      RuntimeError);
  CHECK_THROWS_AS(y.index_put_({0}, ints({1, 2}, DType::Float32)),
                  RuntimeError);
  CHECK_THROWS_AS(y.index_put_({0, 0, 0}, 1.0), IndexError);
  CHECK_THROWS_AS(y.index_put_({0}, Tensor()), ValueError);
  Tensor b = Tensor::empty({2}, DType::UInt8);
  CHECK_THROWS_AS(b.index_put_({0}, 300), RuntimeError);  // fill_'s check
}

TEST_CASE("view(dtype): torch's rules", "[indexing][views]") {
  Tensor t = make({1.0, 2.0}, {2}, DType::Float32);
  Tensor v = t.view(DType::Int32);
  CHECK(v.dtype() == DType::Int32);
  CHECK(v.storage() == t.storage());
  CHECK(values(v) == D{1065353216, 1073741824});
  Tensor a = iota({2, 4});
  Tensor h = a.view(DType::Float16);
  CHECK(vec(h.sizes()) == V{2, 8});
  CHECK(vec(h.strides()) == V{8, 1});
  Tensor d = a.view(DType::Float64);
  CHECK(vec(d.sizes()) == V{2, 2});
  CHECK(vec(d.strides()) == V{2, 1});
  Tensor s = a.index({Slice(), Slice(1, None)}).view(DType::Int16);
  CHECK(vec(s.sizes()) == V{2, 6});
  CHECK(vec(s.strides()) == V{8, 1});
  CHECK(s.storage_offset() == 2);
  CHECK(scalar_tensor(1, DType::Float32).view(DType::Int32).dim() == 0);
  CHECK(values(make({1}, {1}, DType::Bool).view(DType::UInt8)) == D{1});
  // view({}) is still the 0-d shape, not a dtype.
  CHECK(make({5}, {1}, DType::Float32).view({}).dim() == 0);
  // Errors.
  CHECK(error_of([&] {
          make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32)
              .view(DType::Float64);
        }) == "self.size(-1) must be divisible by 2 to view float32 as "
              "float64 (different element sizes), but got 3");
  CHECK(error_of([&] { a.t().view(DType::Float16); }) ==
        "self.stride(-1) must be 1 to view float32 as float16 (different "
        "element sizes), but got 4");
  CHECK(error_of([&] {
          scalar_tensor(1, DType::Float32).view(DType::Float16);
        }) == "self.dim() cannot be 0 to view float32 as float16 (different "
              "element sizes)");
  CHECK(error_of([&] {
          a.index({Slice(), Slice(1, 3)}).view(DType::Float64);
        }) == "self.storage_offset() must be divisible by 2 to view float32 "
              "as float64 (different element sizes), but got 1");
  CHECK(error_of([&] {
          iota({2, 3}).index({Slice(), Slice(0, 2)}).view(DType::Float64);
        }) == "self.stride(0) must be divisible by 2 to view float32 as "
              "float64 (different element sizes), but got 3");
  CHECK_THROWS_AS(Tensor().view(DType::Int32), ValueError);
}

TEST_CASE("assign_out and resize_out: torch's out= rules", "[out]") {
  Tensor r = make({1, 2, 3}, {3}, DType::Float32);
  Tensor out = Tensor::empty({0}, DType::Float32);
  CHECK(&assign_out(out, r, "sum") == &out);  // an empty out is resized
  CHECK(vec(out.sizes()) == V{3});
  CHECK(values(out) == D{1, 2, 3});
  Tensor wide = Tensor::empty({3}, DType::Float64);
  assign_out(wide, r, "sum");  // float32 -> float64 is a safe cast
  CHECK(values(wide) == D{1, 2, 3});
  Tensor same = Tensor::empty({3}, DType::Float32);
  Tensor alias = same;
  assign_out(same, r, "sum");  // the right shape is written in place
  CHECK(alias.is_same(same));
  CHECK(values(alias) == D{1, 2, 3});
  // Errors.
  Tensor small = Tensor::empty({2}, DType::Float32);
  CHECK(error_of([&] { assign_out(small, r, "sum"); }) ==
        "sum: output with shape [2] doesn't match the result shape [3]");
  Tensor longs = Tensor::empty({3}, DType::Int64);
  CHECK(error_of([&] { assign_out(longs, r, "sum"); }) ==
        "sum: result type float32 can't be cast to the desired output type "
        "int64");
  Tensor g = fake_cuda({3}, DType::Float32);
  CHECK(error_of([&] { assign_out(g, r, "sum"); }) ==
        "sum: Expected all tensors to be on the same device, but found at "
        "least two devices, cpu and cuda:0!");
  Tensor leaf = make({1, 2, 3}, {3}, DType::Float32);
  requires_grad_(leaf);
  CHECK(error_of([&] { assign_out(same, leaf, "sum"); }) ==
        "sum(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad.");
  {
    NoGradGuard no_grad;
    assign_out(same, leaf, "sum");  // fine without grad mode
  }
  CHECK_THROWS_AS(assign_out(same, Tensor(), "sum"), ValueError);

  // resize_out: only an empty out of another shape is replaced.
  Tensor o = Tensor::empty({0}, DType::Int32);
  resize_out(o, {2, 3});
  CHECK(vec(o.sizes()) == V{2, 3});
  CHECK(o.dtype() == DType::Int32);
  Tensor kept = o;
  resize_out(o, {5});
  CHECK(o.is_same(kept));
  Tensor b = Tensor::empty({0}, DType::Float32);
  resize_out(b, iota({2, 1}), iota({3}), "add");
  CHECK(vec(b.sizes()) == V{2, 3});
  Tensor bad = Tensor::empty({0}, DType::Float32);
  CHECK_THROWS_AS(resize_out(bad, iota({2}), iota({3}), "add"),
                  RuntimeError);
  Tensor full = Tensor::empty({4}, DType::Float32);
  resize_out(full, iota({2}), iota({3}), "add");  // not empty: untouched
  CHECK(vec(full.sizes()) == V{4});
}

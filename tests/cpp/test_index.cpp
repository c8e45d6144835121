// Tests for the indexing/shape/sort family (csrc/ops/index.h): each op
// against a naive reference written here, over several dtypes, odd shapes,
// non-contiguous and empty inputs, negative indices and every error path.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/index.h"

using namespace fastt;
using fastt::test::error_of;

namespace {

// ---- element access for any dtype (as double) ----
double read_at(const Tensor& t, int64_t offset) {
  return visit_dtype(t.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    return double(static_cast<opmath_t<T>>(
        reinterpret_cast<const T*>(t.data_ptr())[offset]));
  });
}
void write_at(const Tensor& t, int64_t offset, double v) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    reinterpret_cast<T*>(t.data_ptr())[offset] =
        static_cast<T>(static_cast<opmath_t<T>>(v));
  });
}
int64_t offset_of(const Tensor& t, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides()[d];
  return off;
}
double at(const Tensor& t, const std::vector<int64_t>& idx) {
  REQUIRE(int64_t(idx.size()) == t.dim());
  return read_at(t, offset_of(t, idx));
}
// Row-major multi-index of linear position i.
std::vector<int64_t> unravel(IntList sizes, int64_t i) {
  std::vector<int64_t> idx(sizes.size());
  for (int d = int(sizes.size()) - 1; d >= 0; --d) {
    idx[size_t(d)] = i % sizes[size_t(d)];
    i /= sizes[size_t(d)];
  }
  return idx;
}
std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(at(t, unravel(t.sizes(), i)));
  return v;
}
Tensor from_values(const std::vector<double>& v, IntList shape, DType dt) {
  Tensor t = Tensor::empty(shape, dt);
  REQUIRE(size_t(t.numel()) == v.size());
  for (size_t i = 0; i < v.size(); ++i) write_at(t, int64_t(i), v[i]);
  return t;
}
Tensor ints(const std::vector<int64_t>& v, IntList shape,
            DType dt = DType::Int64) {
  return from_values(std::vector<double>(v.begin(), v.end()), shape, dt);
}
Tensor ints(const std::vector<int64_t>& v) {
  const int64_t n = int64_t(v.size());
  return ints(v, IntList(n));
}

// Random values representable in every dtype (small integers; bool 0/1).
Tensor random_tensor(IntList shape, DType dt, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(dt == DType::Bool ? 0 : -20,
                                          dt == DType::Bool ? 1 : 20);
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int v = dist(gen);
    if (dt == DType::UInt8) v = std::abs(v);
    write_at(t, i, double(v));
  }
  return t;
}
Tensor random_index(IntList shape, int64_t size, uint32_t seed,
                    bool negative = true) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> dist(negative ? -size : 0, size - 1);
  Tensor t = Tensor::empty(shape, DType::Int64);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data_ptr<int64_t>()[i] = dist(gen);
  return t;
}
// A non-contiguous tensor with the given 2-D shape (a transposed buffer).
Tensor transposed(IntList shape, DType dt, uint32_t seed) {
  Tensor base = random_tensor({shape[1], shape[0]}, dt, seed);
  Tensor t = base.t();
  REQUIRE(!t.is_contiguous());
  return t;
}

void require_same(const Tensor& got, const std::vector<double>& want,
                  IntList shape) {
  REQUIRE(got.sizes().equals(shape));
  std::vector<double> g = values(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(want[i]))
      REQUIRE(std::isnan(g[i]));
    else
      REQUIRE(g[i] == want[i]);
  }
}
void require_equal(const Tensor& a, const Tensor& b) {
  REQUIRE(a.dtype() == b.dtype());
  require_same(a, values(b), b.sizes());
}

int64_t wrap(int64_t v, int64_t n) { return v < 0 ? v + n : v; }

const DType kSomeDTypes[] = {DType::Float32, DType::Float64, DType::Int64,
                             DType::Int32,   DType::Float16, DType::BFloat16,
                             DType::UInt8,   DType::Int8,    DType::Bool};

}  // namespace

// ------------------------------------------------------------------ cat --
TEST_CASE("cat: dtypes, odd shapes, non-contiguous inputs", "[index]") {
  for (DType dt : kSomeDTypes) {
    INFO(dtype_name(dt));
    Tensor a = random_tensor({45, 7}, dt, 1);
    Tensor b = transposed({45, 13}, dt, 2);
    Tensor c = random_tensor({45, 1}, dt, 3);
    Tensor r = cat({a, b, c}, 1);
    REQUIRE(r.dtype() == dt);
    std::vector<double> want;
    for (int64_t i = 0; i < 45; ++i) {
      for (int64_t j = 0; j < 7; ++j) want.push_back(at(a, {i, j}));
      for (int64_t j = 0; j < 13; ++j) want.push_back(at(b, {i, j}));
      want.push_back(at(c, {i, 0}));
    }
    require_same(r, want, {45, 21});
    // dim 0 and negative dims
    Tensor r0 = cat({a.t(), b.t()}, -2);
    std::vector<double> w0 = values(a.t()), wb = values(b.t());
    w0.insert(w0.end(), wb.begin(), wb.end());
    require_same(r0, w0, {20, 45});
  }
}

TEST_CASE("cat: promotion, legacy empty inputs, empty results", "[index]") {
  Tensor i = ints({1, 2, 3});
  Tensor f = from_values({0.5, 1.5}, {2}, DType::Float32);
  Tensor r = cat({i, f});
  REQUIRE(r.dtype() == DType::Float32);
  require_same(r, {1, 2, 3, 0.5, 1.5}, {5});
  // A 1-D empty tensor is skipped whatever the other shapes.
  Tensor m = random_tensor({2, 3}, DType::Float32, 4);
  Tensor e = Tensor::empty({0}, DType::Float64);
  Tensor r2 = cat({e, m, e}, 1);
  REQUIRE(r2.dtype() == DType::Float64);
  require_same(r2, values(m), {2, 3});
  REQUIRE(cat({e, e}).sizes().equals({0}));
  // Empty non-legacy inputs take part in shape checks.
  Tensor z = Tensor::empty({2, 0}, DType::Float32);
  require_same(cat({z, m, z}, 1), values(m), {2, 3});
  REQUIRE(cat({z, z}, 0).sizes().equals({4, 0}));
}

TEST_CASE("cat/stack: errors", "[index]") {
  Tensor a = Tensor::empty({2, 3}, DType::Float32);
  Tensor b = Tensor::empty({2, 4}, DType::Float32);
  Tensor c = Tensor::empty({2, 3, 1}, DType::Float32);
  REQUIRE_THROWS_AS(cat({}, 0), ValueError);
  REQUIRE_THROWS_AS(cat({a, b}, 0), RuntimeError);
  REQUIRE(error_of([&] { cat({a, b}, 0); }) ==
          "Sizes of tensors must match except in dimension 0. Expected size "
          "3 but got size 4 for tensor number 1 in the list.");
  REQUIRE_THROWS_AS(cat({a, c}, 0), RuntimeError);
  REQUIRE_THROWS_AS(cat({a, a}, 2), IndexError);
  REQUIRE_THROWS_AS(cat({Tensor::empty({}, DType::Float32)}), RuntimeError);
  REQUIRE_THROWS_AS(cat({a, Tensor()}), ValueError);
  REQUIRE_THROWS_AS(stack({}, 0), RuntimeError);
  REQUIRE_THROWS_AS(stack({a, b}, 0), RuntimeError);
  REQUIRE_THROWS_AS(stack({a, a}, 3), IndexError);
}

TEST_CASE("stack: new dim at each position", "[index]") {
  Tensor a = random_tensor({3, 5}, DType::Int32, 5);
  Tensor b = transposed({3, 5}, DType::Int32, 6);
  for (int64_t dim : {0, 1, 2, -1}) {
    Tensor r = stack({a, b}, dim);
    const int64_t d = dim < 0 ? dim + 3 : dim;
    REQUIRE(r.dim() == 3);
    REQUIRE(r.sizes()[size_t(d)] == 2);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j)
        for (int64_t k = 0; k < 2; ++k) {
          std::vector<int64_t> idx = {i, j};
          idx.insert(idx.begin() + d, k);
          REQUIRE(at(r, idx) == at(k ? b : a, {i, j}));
        }
  }
  Tensor s = stack({Tensor::empty({}, DType::Float32).fill_(2.0),
                    Tensor::empty({}, DType::Float32).fill_(3.0)});
  require_same(s, {2, 3}, {2});
}

// ------------------------------------------------------------ splitting --
TEST_CASE("split/chunk/unbind return views", "[index]") {
  Tensor t = random_tensor({7, 4}, DType::Float32, 7);
  auto parts = split(t, 3);
  REQUIRE(parts.size() == 3);
  REQUIRE(parts[0].sizes().equals({3, 4}));
  REQUIRE(parts[2].sizes().equals({1, 4}));
  REQUIRE(parts[1].storage() == t.storage());
  REQUIRE(at(parts[2], {0, 3}) == at(t, {6, 3}));
  auto p2 = split_with_sizes(t, {1, 0, 6}, 0);
  REQUIRE(p2.size() == 3);
  REQUIRE(p2[1].sizes().equals({0, 4}));
  REQUIRE(at(p2[2], {5, 1}) == at(t, {6, 1}));
  auto p3 = split(t, IntList({2, 2}), -1);
  REQUIRE(p3[1].sizes().equals({7, 2}));
  REQUIRE(at(p3[1], {4, 0}) == at(t, {4, 2}));
  auto c = chunk(t, 3, 0);  // 7 -> 3, 3, 1
  REQUIRE(c.size() == 3);
  REQUIRE(c[2].sizes().equals({1, 4}));
  REQUIRE(chunk(t, 4, 1).size() == 4);
  REQUIRE(chunk(t, 10, 1).size() == 4);  // like torch: ceil-sized chunks
  REQUIRE(chunk(Tensor::empty({0}, DType::Float32), 3).size() == 3);
  REQUIRE(split(Tensor::empty({0}, DType::Float32), 2).size() == 1);
  auto u = unbind(t, 1);
  REQUIRE(u.size() == 4);
  REQUIRE(u[3].sizes().equals({7}));
  REQUIRE(at(u[3], {5}) == at(t, {5, 3}));
  // errors
  REQUIRE_THROWS_AS(split(t, -1), RuntimeError);
  REQUIRE_THROWS_AS(split(t, 0), RuntimeError);
  REQUIRE_THROWS_AS(split_with_sizes(t, {3, 3}), RuntimeError);
  REQUIRE_THROWS_AS(split_with_sizes(t, {8, -1}), RuntimeError);
  REQUIRE_THROWS_AS(chunk(t, 0), RuntimeError);
  REQUIRE_THROWS_AS(split(Tensor::empty({}, DType::Float32), 1), RuntimeError);
  REQUIRE_THROWS_AS(unbind(Tensor::empty({}, DType::Float32)), IndexError);
  REQUIRE_THROWS_AS(split(t, 2, 2), IndexError);
}

TEST_CASE("repeat", "[index]") {
  for (DType dt : {DType::Float32, DType::Int16, DType::Bool}) {
    Tensor t = transposed({2, 3}, dt, 8);
    Tensor r = repeat(t, {2, 1, 2});
    REQUIRE(r.sizes().equals({2, 2, 6}));
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 6; ++j)
          REQUIRE(at(r, {a, i, j}) == at(t, {i, j % 3}));
  }
  Tensor s = Tensor::empty({}, DType::Float32).fill_(4.0);
  require_same(repeat(s, {3}), {4, 4, 4}, {3});
  REQUIRE(repeat(s, {}).dim() == 0);
  REQUIRE(repeat(random_tensor({2}, DType::Float32, 1), {0, 2})
              .sizes()
              .equals({0, 4}));
  // More than 8 dims takes the one-dim-at-a-time path.
  Tensor big = random_tensor({2, 1, 1, 1, 1, 1, 1, 1, 3}, DType::Int64, 9);
  Tensor rb = repeat(big, {1, 2, 1, 1, 1, 1, 1, 1, 1, 2});
  REQUIRE(rb.sizes().equals({1, 4, 1, 1, 1, 1, 1, 1, 1, 6}));
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t j = 0; j < 6; ++j)
      REQUIRE(at(rb, {0, a, 0, 0, 0, 0, 0, 0, 0, j}) ==
              at(big, {a % 2, 0, 0, 0, 0, 0, 0, 0, j % 3}));
  Tensor m = Tensor::empty({2, 3}, DType::Float32);
  REQUIRE_THROWS_AS(repeat(m, {2}), RuntimeError);
  REQUIRE_THROWS_AS(repeat(m, {2, -1}), RuntimeError);
}

// ---------------------------------------------------- indexing along dim --
TEST_CASE("index_select: dims, dtypes, negative and non-contiguous",
          "[index]") {
  for (DType dt : kSomeDTypes) {
    INFO(dtype_name(dt));
    Tensor self = transposed({45, 65}, dt, 10);
    for (int64_t dim : {0, 1, -1}) {
      const int64_t d = dim < 0 ? dim + 2 : dim;
      const int64_t size = self.sizes()[size_t(d)];
      // A strided index: every other element of a longer one.
      Tensor base = random_index({38}, size, 11);
      Tensor index = base.slice(0, 0, 38, 2);
      REQUIRE(!index.is_contiguous());
      Tensor r = index_select(self, dim, index);
      std::vector<double> want;
      const int64_t rows = d == 0 ? 19 : 45, cols = d == 0 ? 65 : 19;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          int64_t k = wrap(int64_t(at(index, {d == 0 ? i : j})), size);
          want.push_back(d == 0 ? at(self, {k, j}) : at(self, {i, k}));
        }
      require_same(r, want, {rows, cols});
    }
  }
  // int32 index, 0-d self and index, empty index
  Tensor v = from_values({1, 2, 3, 4}, {4}, DType::Float32);
  require_same(index_select(v, 0, ints({3, -4, 1}, {3}, DType::Int32)),
               {4, 1, 2}, {3});
  Tensor s = Tensor::empty({}, DType::Float32).fill_(7.0);
  require_same(index_select(s, 0, ints({0})), {7}, {});
  require_same(index_select(s, 0, ints({0}, {})), {7}, {});
  Tensor m = random_tensor({3, 4}, DType::Float32, 12);
  REQUIRE(index_select(m, 1, Tensor::empty({0}, DType::Int64))
              .sizes()
              .equals({3, 0}));
  REQUIRE(index_select(Tensor::empty({0, 4}, DType::Float32), 1, ints({2}))
              .sizes()
              .equals({0, 1}));
}

TEST_CASE("index_select: errors", "[index]") {
  Tensor m = random_tensor({3, 4}, DType::Float32, 12);
  REQUIRE_THROWS_AS(index_select(m, 0, ints({0, 1}, {1, 2})), IndexError);
  REQUIRE_THROWS_AS(index_select(m, 0, from_values({0}, {1}, DType::Float32)),
                    RuntimeError);
  REQUIRE_THROWS_AS(index_select(m, 2, ints({0})), IndexError);
  REQUIRE_THROWS_AS(index_select(m, 0, ints({3})), IndexError);
  REQUIRE(error_of([&] { index_select(m, 0, ints({0, 5})); }) ==
          "index_select(): index 5 is out of bounds for dimension 0 with "
          "size 3");
  REQUIRE_THROWS_AS(index_select(m, 1, ints({-5})), IndexError);
  REQUIRE_THROWS_AS(index_select(Tensor::empty({0}, DType::Float32), 0,
                                 ints({0})),
                    IndexError);
  REQUIRE_THROWS_AS(index_select(Tensor::empty({}, DType::Float32), 0,
                                 ints({0, 0})),
                    IndexError);
}

TEST_CASE("gather: 3-D, smaller index, negative indices", "[index]") {
  for (DType dt : {DType::Float32, DType::Int64, DType::Float16, DType::Bool}) {
    INFO(dtype_name(dt));
    Tensor self = random_tensor({5, 6, 7}, dt, 13).permute({2, 0, 1});  // 7,5,6
    for (int64_t dim = 0; dim < 3; ++dim) {
      const int64_t size = self.sizes()[size_t(dim)];
      Tensor index = random_index({4, 5, 3}, size, 14 + uint32_t(dim));
      if (dim == 1) index = random_index({9, 5, 3}, size, 15).narrow(0, 2, 4);
      Tensor r = gather(self, dim, index);
      REQUIRE(r.sizes().equals({4, 5, 3}));
      for (int64_t i = 0; i < r.numel(); ++i) {
        std::vector<int64_t> p = unravel(r.sizes(), i);
        std::vector<int64_t> q = p;
        q[size_t(dim)] = wrap(int64_t(at(index, p)), size);
        REQUIRE(at(r, p) == at(self, q));
      }
    }
  }
  Tensor s = Tensor::empty({}, DType::Float64).fill_(2.5);
  require_same(gather(s, 0, ints({0}, {})), {2.5}, {});
  REQUIRE(gather(random_tensor({3, 4}, DType::Float32, 1), 1,
                 Tensor::empty({3, 0}, DType::Int64))
              .sizes()
              .equals({3, 0}));
  // errors
  Tensor m = random_tensor({3, 4}, DType::Float32, 16);
  REQUIRE_THROWS_AS(gather(m, 0, ints({0})), RuntimeError);  // ndim
  REQUIRE_THROWS_AS(gather(m, 0, ints({0, 0, 0, 0, 0}, {1, 5})), RuntimeError);
  REQUIRE_THROWS_AS(gather(m, 0, ints({3}, {1, 1})), RuntimeError);  // as torch
  REQUIRE(error_of([&] { gather(m, 1, ints({-5}, {1, 1})); }) ==
          "gather(): index -5 is out of bounds for dimension 1 with size 4");
  REQUIRE_THROWS_AS(gather(m, 0, from_values({0}, {1, 1}, DType::Float32)),
                    RuntimeError);
  REQUIRE_THROWS_AS(gather(m, 2, ints({0}, {1, 1})), IndexError);
}

TEST_CASE("scatter, scatter_add, scalar scatter", "[index]") {
  for (DType dt : {DType::Float32, DType::Int32, DType::BFloat16,
                   DType::Float64}) {
    INFO(dtype_name(dt));
    Tensor self = transposed({6, 8}, dt, 17);
    Tensor src = random_tensor({5, 9}, dt, 18);
    for (int64_t dim : {0, 1}) {
      const int64_t size = self.sizes()[size_t(dim)];
      Tensor index = random_index({4, 8}, size, 19);
      // scatter_add: duplicates accumulate.
      Tensor r = scatter_add(self, dim, index, src);
      std::vector<double> want = values(self);
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 8; ++j) {
          int64_t k = wrap(int64_t(at(index, {i, j})), size);
          int64_t pos = dim == 0 ? k * 8 + j : i * 8 + k;
          want[size_t(pos)] += at(src, {i, j});
        }
      require_same(r, want, {6, 8});
      // scatter with distinct targets per destination line (expanded,
      // stride-0 index tensors)
      Tensor idx = dim == 0 ? ints({3, 0, 5, 1}, {4, 1}).expand({4, 8})
                            : ints({7, 2, -1, 4}, {1, 4}).expand({3, 4});
      Tensor r2 = scatter(self, dim, idx, src);
      std::vector<double> w2 = values(self);
      for (int64_t i = 0; i < idx.sizes()[0]; ++i)
        for (int64_t j = 0; j < idx.sizes()[1]; ++j) {
          int64_t k = wrap(int64_t(at(idx, {i, j})), size);
          w2[size_t(dim == 0 ? k * 8 + j : i * 8 + k)] = at(src, {i, j});
        }
      require_same(r2, w2, {6, 8});
      // scalar value
      Tensor r3 = scatter(self, dim, index, Scalar(3));
      std::vector<double> w3 = values(self);
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 8; ++j) {
          int64_t k = wrap(int64_t(at(index, {i, j})), size);
          w3[size_t(dim == 0 ? k * 8 + j : i * 8 + k)] = 3;
        }
      require_same(r3, w3, {6, 8});
    }
  }
  // In place: writes self and bumps its version.
  Tensor t = from_values({0, 0, 0, 0}, {4}, DType::Float32);
  const uint32_t v0 = t.storage()->version();
  scatter_add_(t, 0, ints({1, 1, 3}), from_values({1, 2, 3}, {3},
                                                  DType::Float32));
  require_same(t, {0, 3, 0, 3}, {4});
  REQUIRE(t.storage()->version() > v0);
  scatter_(t, 0, ints({0}), Scalar(9.5));
  require_same(t, {9.5, 3, 0, 3}, {4});
  // src aliasing self is read before it is written.
  Tensor u = from_values({1, 2, 3}, {3}, DType::Float32);
  scatter_(u, 0, ints({2, 1, 0}), u);
  require_same(u, {3, 2, 1}, {3});
  // so is an index aliasing self (int64 self used as its own index)
  Tensor w = ints({1, 0, 0});
  scatter_(w, 0, w, Scalar(2));
  require_same(w, {2, 2, 0}, {3});
  Tensor w2 = ints({2, 0, 1});
  index_put_(w2, {w2}, ints({7, 8, 9}));
  require_same(w2, {8, 9, 7}, {3});
  Tensor w3 = ints({1, 0});
  index_add_(w3, 0, w3, ints({5, 6}));
  require_same(w3, {7, 5}, {2});
}

TEST_CASE("scatter: errors", "[index]") {
  Tensor self = Tensor::empty({3, 4}, DType::Float32);
  Tensor src = Tensor::empty({3, 4}, DType::Float32);
  REQUIRE_THROWS_AS(scatter(self, 0, ints({0}), src), RuntimeError);
  REQUIRE_THROWS_AS(scatter(self, 0, ints({0}, {1, 1}),
                            Tensor::empty({3, 4}, DType::Float64)),
                    RuntimeError);
  REQUIRE_THROWS_AS(scatter(self, 0, ints({0, 0, 0, 0, 0}, {1, 5}), src),
                    RuntimeError);
  REQUIRE_THROWS_AS(scatter(self, 0, ints({3}, {1, 1}), src), RuntimeError);
  REQUIRE_THROWS_AS(scatter_add(self, 1, ints({-5}, {1, 1}), src),
                    RuntimeError);
  REQUIRE_THROWS_AS(scatter(self, 0, ints({0}, {1, 1}),
                            Tensor::empty({1}, DType::Float32)),
                    RuntimeError);
  Tensor expanded = Tensor::empty({1, 4}, DType::Float32).expand({3, 4});
  REQUIRE_THROWS_AS(scatter_(expanded, 0, ints({0}, {1, 1}), src),
                    RuntimeError);
}

TEST_CASE("index_add: alpha, dims, duplicates", "[index]") {
  for (DType dt : {DType::Float32, DType::Int64, DType::Float16}) {
    INFO(dtype_name(dt));
    Tensor self = transposed({5, 7}, dt, 20);
    for (int64_t dim : {0, 1}) {
      const int64_t size = self.sizes()[size_t(dim)];
      Tensor index = random_index({6}, size, 21);
      Tensor source = dim == 0 ? random_tensor({6, 7}, dt, 22)
                               : transposed({5, 6}, dt, 23);
      Tensor r = index_add(self, dim, index, source, 2);
      std::vector<double> want = values(self);
      for (int64_t i = 0; i < source.sizes()[0]; ++i)
        for (int64_t j = 0; j < source.sizes()[1]; ++j) {
          int64_t k = wrap(int64_t(at(index, {dim == 0 ? i : j})), size);
          want[size_t(dim == 0 ? k * 7 + j : i * 7 + k)] +=
              2 * at(source, {i, j});
        }
      require_same(r, want, {5, 7});
    }
  }
  Tensor t = from_values({1, 1}, {2}, DType::Float32);
  index_add_(t, 0, ints({1, 1}), from_values({1, 2}, {2}, DType::Float32),
             0.5);
  require_same(t, {1, 2.5}, {2});
  // errors
  // like torch, a float alpha on an integer tensor truncates
  Tensor i32 = ints({1, 2}, {2}, DType::Int32);
  require_same(index_add(i32, 0, ints({0}), ints({1}, {1}, DType::Int32), 2.5),
               {3, 2}, {2});
  REQUIRE_THROWS_AS(index_add(t, 0, ints({0}),
                              Tensor::empty({1}, DType::Float64)),
                    RuntimeError);
  REQUIRE_THROWS_AS(index_add(t, 0, ints({0, 1}),
                              Tensor::empty({1}, DType::Float32)),
                    RuntimeError);
  REQUIRE_THROWS_AS(index_add(t, 0, ints({2}),
                              Tensor::empty({1}, DType::Float32)),
                    IndexError);
  REQUIRE_THROWS_AS(index_add(t, 0, ints({0}, {1, 1}),
                              Tensor::empty({1}, DType::Float32)),
                    IndexError);
  Tensor m = Tensor::empty({2, 3}, DType::Float32);
  REQUIRE_THROWS_AS(index_add(m, 0, ints({0}),
                              Tensor::empty({1, 4}, DType::Float32)),
                    RuntimeError);
}

TEST_CASE("embedding and one_hot", "[index]") {
  Tensor w = random_tensor({10, 3}, DType::Float32, 24);
  Tensor idx = ints({1, 9, 0, 4, 4, 2}, {2, 3});
  Tensor e = embedding(w, idx);
  REQUIRE(e.sizes().equals({2, 3, 3}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 3; ++k)
        REQUIRE(at(e, {i, j, k}) == at(w, {int64_t(at(idx, {i, j})), k}));
  REQUIRE(embedding(w, ints({3}, {}, DType::Int32)).sizes().equals({3}));
  REQUIRE_THROWS_AS(embedding(w, ints({10})), IndexError);
  REQUIRE_THROWS_AS(embedding(w, from_values({1}, {1}, DType::Float32)),
                    RuntimeError);
  REQUIRE_THROWS_AS(embedding(Tensor::empty({3}, DType::Float32), ints({0})),
                    RuntimeError);

  Tensor oh = one_hot(ints({2, 0, 1, 2}, {2, 2}));
  REQUIRE(oh.dtype() == DType::Int64);
  require_same(oh, {0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}, {2, 2, 3});
  REQUIRE(one_hot(ints({1}), 4).sizes().equals({1, 4}));
  REQUIRE(one_hot(Tensor::empty({0}, DType::Int64), 3).sizes().equals({0, 3}));
  REQUIRE_THROWS_AS(one_hot(Tensor::empty({0}, DType::Int64)), RuntimeError);
  REQUIRE_THROWS_AS(one_hot(ints({-1})), RuntimeError);
  REQUIRE_THROWS_AS(one_hot(ints({3}), 3), RuntimeError);
  REQUIRE_THROWS_AS(one_hot(ints({1}, {1}, DType::Int32)), RuntimeError);
}

// --------------------------------------------------- advanced indexing --
namespace {

// Naive aten::index for int64 (or undefined) indices, one per leading dim:
// returns the result shape and values in row-major order.
std::pair<std::vector<int64_t>, std::vector<double>> ref_index(
    const Tensor& self, std::vector<Tensor> idx) {
  const int64_t nd = self.dim();
  idx.resize(size_t(nd));
  std::vector<int64_t> bshape;
  std::vector<int64_t> defined;
  for (int64_t d = 0; d < nd; ++d) {
    if (!idx[size_t(d)].defined()) continue;
    bshape = defined.empty() ? idx[size_t(d)].sizes().vec()
                             : broadcast_shapes(bshape, idx[size_t(d)].sizes());
    defined.push_back(d);
  }
  bool adjacent = true;
  for (size_t i = 1; i < defined.size(); ++i)
    adjacent &= defined[i] == defined[i - 1] + 1;
  // result dims: each is either ("slice", self dim) or ("b", b position)
  std::vector<std::pair<bool, int64_t>> dims;  // (is_b, which)
  auto add_slices = [&](int64_t from, int64_t to) {
    for (int64_t d = from; d < to; ++d)
      if (!idx[size_t(d)].defined()) dims.push_back({false, d});
  };
  auto add_b = [&] {
    for (size_t i = 0; i < bshape.size(); ++i)
      dims.push_back({true, int64_t(i)});
  };
  if (defined.empty()) {
    add_slices(0, nd);
  } else if (adjacent) {
    add_slices(0, defined.front());
    add_b();
    add_slices(defined.back() + 1, nd);
  } else {
    add_b();
    add_slices(0, nd);
  }
  std::vector<int64_t> shape;
  for (auto& d : dims)
    shape.push_back(d.first ? bshape[size_t(d.second)]
                            : self.sizes()[size_t(d.second)]);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> r = unravel(shape, i);
    std::vector<int64_t> b(bshape.size()), coord(static_cast<size_t>(nd));
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k].first)
        b[size_t(dims[k].second)] = r[k];
      else
        coord[size_t(dims[k].second)] = r[k];
    }
    for (int64_t d : defined) {
      const Tensor& t = idx[size_t(d)];
      std::vector<int64_t> ti(static_cast<size_t>(t.dim()));
      for (int64_t j = 0; j < t.dim(); ++j) {
        int64_t bj = int64_t(bshape.size()) - t.dim() + j;
        ti[size_t(j)] = t.sizes()[size_t(j)] == 1 ? 0 : b[size_t(bj)];
      }
      coord[size_t(d)] = wrap(int64_t(at(t, ti)), self.sizes()[size_t(d)]);
    }
    out.push_back(at(self, coord));
  }
  return {shape, out};
}

void check_index(const Tensor& self, const std::vector<Tensor>& idx) {
  auto want = ref_index(self, idx);
  Tensor got = index(self, idx);
  REQUIRE(got.dtype() == self.dtype());
  require_same(got, want.second, want.first);
}

// The int64 columns a bool mask stands for (naive nonzero).
std::vector<Tensor> mask_columns(const Tensor& mask) {
  std::vector<std::vector<int64_t>> cols(static_cast<size_t>(mask.dim()));
  for (int64_t i = 0; i < mask.numel(); ++i) {
    std::vector<int64_t> p = unravel(mask.sizes(), i);
    if (at(mask, p) != 0)
      for (size_t d = 0; d < p.size(); ++d) cols[d].push_back(p[d]);
  }
  std::vector<Tensor> out;
  for (auto& c : cols) out.push_back(ints(c));
  return out;
}

}  // namespace

TEST_CASE("index: integer indices, adjacency rule, broadcasting", "[index]") {
  for (DType dt : {DType::Float32, DType::Int64, DType::Float16, DType::Bool}) {
    INFO(dtype_name(dt));
    Tensor x = random_tensor({6, 7, 5}, dt, 30).permute({2, 0, 1});  // 5,6,7
    Tensor none;
    // one index on dim 0 / dim 1 (adjacent: the index shape stays in place)
    check_index(x, {random_index({2, 3}, 5, 31)});               // [2,3,6,7]
    check_index(x, {none, random_index({4, 1}, 6, 32)});         // [5,4,1,7]
    // two adjacent indices, broadcast [4,1] x [3]
    check_index(x, {random_index({4, 1}, 5, 33), random_index({3}, 6, 34)});
    check_index(x, {none, random_index({4, 1}, 6, 35),
                    random_index({3}, 7, 36)});                  // [5,4,3]
    // separated by a slice: the broadcast dims go first
    check_index(x, {random_index({4, 1}, 5, 37), none,
                    random_index({3}, 7, 38)});                  // [4,3,6]
    // 0-d index, non-contiguous index, int32 index
    check_index(x, {ints({-2}, {})});
    check_index(x, {none, ints({5}, {}), random_index({2}, 7, 39)});
    check_index(x, {random_index({3, 8}, 5, 40).t()});
    Tensor i32 = ints({4, -5, 0}, {3}, DType::Int32);
    require_equal(index(x, {i32}), index(x, {ints({4, -5, 0})}));
    // empty index and all-slice index
    check_index(x, {Tensor::empty({0}, DType::Int64)});
    check_index(x, {none, none});
    check_index(x, {});
  }
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  REQUIRE(index(e, {Tensor(), ints({2, 1})}).sizes().equals({0, 2}));
}

TEST_CASE("index: bool masks", "[index]") {
  Tensor x = random_tensor({5, 6, 7}, DType::Float32, 41);
  Tensor none;
  Tensor m2 = random_tensor({5, 6}, DType::Bool, 42);
  std::vector<Tensor> cols = mask_columns(m2);
  auto want = ref_index(x, cols);
  require_same(index(x, {m2}), want.second, want.first);  // [n, 7]
  Tensor m1 = random_tensor({6}, DType::Bool, 43);
  auto w1 = ref_index(x, {none, mask_columns(m1)[0]});
  require_same(index(x, {none, m1}), w1.second, w1.first);  // [5, n, 7]
  // mask and int index together (adjacent), uint8 mask
  Tensor m7 = random_tensor({7}, DType::UInt8, 44);
  Tensor m7b = from_values(values(m7), {7}, DType::Bool);
  std::vector<Tensor> c7 = mask_columns(m7b);
  if (c7[0].numel() > 0) {
    Tensor i = random_index({c7[0].numel()}, 6, 45);
    auto w = ref_index(x, {none, i, c7[0]});
    require_same(index(x, {none, i, m7}), w.second, w.first);
  }
  // non-contiguous mask
  Tensor mt = random_tensor({6, 5}, DType::Bool, 46).t();
  auto wt = ref_index(x, mask_columns(mt));
  require_same(index(x, {mt}), wt.second, wt.first);
  // all-false and full masks
  Tensor f = Tensor::empty({5}, DType::Bool).fill_(false);
  REQUIRE(index(x, {f}).sizes().equals({0, 6, 7}));
  Tensor tr = Tensor::empty({5, 6, 7}, DType::Bool).fill_(true);
  require_same(index(x, {tr}), values(x), {210});
  // 0-d bool masks add a unit (or empty) dim
  Tensor yes = Tensor::empty({}, DType::Bool).fill_(true);
  Tensor no = Tensor::empty({}, DType::Bool).fill_(false);
  require_same(index(x, {yes}), values(x), {1, 5, 6, 7});
  REQUIRE(index(x, {no}).sizes().equals({0, 5, 6, 7}));
  Tensor s = Tensor::empty({}, DType::Float32).fill_(3.0);
  require_same(index(s, {yes}), {3}, {1});
  REQUIRE(index(s, {no}).sizes().equals({0}));
}

TEST_CASE("index: errors", "[index]") {
  Tensor x = random_tensor({3, 4}, DType::Float32, 47);
  Tensor none;
  REQUIRE_THROWS_AS(index(x, {ints({0}), ints({0}), ints({0})}), IndexError);
  REQUIRE_THROWS_AS(index(x, {random_tensor({3, 4, 1}, DType::Bool, 1)}),
                    IndexError);
  REQUIRE(error_of([&] { index(x, {ints({0, 5})}); }) ==
          "index 5 is out of bounds for dimension 0 with size 3");
  REQUIRE(error_of([&] { index(x, {none, ints({-5})}); }) ==
          "index -5 is out of bounds for dimension 1 with size 4");
  REQUIRE_THROWS_AS(index(x, {random_tensor({3, 3}, DType::Bool, 1)}),
                    IndexError);
  REQUIRE_THROWS_AS(index(x, {ints({0, 1}), ints({0, 1, 2})}), IndexError);
  REQUIRE_THROWS_AS(index(x, {from_values({0}, {1}, DType::Float32)}),
                    IndexError);
  REQUIRE_THROWS_AS(index(Tensor::empty({}, DType::Float32), {ints({0})}),
                    IndexError);
  REQUIRE_THROWS_AS(index(Tensor(), {ints({0})}), ValueError);
}

TEST_CASE("index_put_: assign, accumulate, masks, broadcast values",
          "[index]") {
  for (DType dt : {DType::Float32, DType::Int32, DType::Float64}) {
    INFO(dtype_name(dt));
    Tensor x = transposed({5, 6}, dt, 50);
    Tensor none;
    // accumulate with duplicates
    Tensor i = ints({1, -4, 3, 0, 1});
    Tensor v = random_tensor({5, 6}, dt, 51);
    Tensor r = index_put(x, {i}, v, true);
    std::vector<double> want = values(x);
    for (int64_t a = 0; a < 5; ++a)
      for (int64_t j = 0; j < 6; ++j)
        want[size_t(wrap(int64_t(at(i, {a})), 5) * 6 + j)] += at(v, {a, j});
    require_same(r, want, {5, 6});
    // assign with broadcast values, two separated-by-nothing indices
    Tensor r2 = index_put(x, {ints({0, 4}), ints({5, -6})},
                          from_values({7}, {1}, dt));
    std::vector<double> w2 = values(x);
    w2[0 * 6 + 5] = 7;
    w2[4 * 6 + 0] = 7;
    require_same(r2, w2, {5, 6});
    // slice then index: x[:, [1, 2]] = v[5, 2] (values converted)
    Tensor v3 = random_tensor({5, 2}, DType::Float64, 52);
    Tensor r3 = index_put(x, {none, ints({1, 2})}, v3);
    std::vector<double> w3 = values(x);
    for (int64_t a = 0; a < 5; ++a)
      for (int64_t j = 0; j < 2; ++j)
        w3[size_t(a * 6 + 1 + j)] = at(v3, {a, j});
    require_same(r3, w3, {5, 6});
    // bool mask with a 0-d value
    Tensor m = random_tensor({5, 6}, DType::Bool, 53);
    Tensor r4 = index_put(x, {m}, Tensor::empty({}, dt).fill_(0));
    std::vector<double> w4 = values(x);
    for (int64_t k = 0; k < 30; ++k)
      if (at(m, unravel(m.sizes(), k)) != 0) w4[size_t(k)] = 0;
    require_same(r4, w4, {5, 6});
  }
  // in place on a non-contiguous view writes through to the base
  Tensor base = Tensor::empty({4, 4}, DType::Float32).fill_(0.0);
  Tensor col = base.select(1, 2);
  const uint32_t v0 = base.storage()->version();
  index_put_(col, {ints({3, 0})}, from_values({1, 2}, {2}, DType::Float32));
  REQUIRE(at(base, {3, 2}) == 1);
  REQUIRE(at(base, {0, 2}) == 2);
  REQUIRE(base.storage()->version() > v0);
  // errors
  Tensor x = Tensor::empty({3, 4}, DType::Float32);
  REQUIRE_THROWS_AS(index_put_(x, {ints({0, 1})},
                               Tensor::empty({3}, DType::Float32)),
                    RuntimeError);
  REQUIRE_THROWS_AS(index_put_(x, {ints({3})},
                               Tensor::empty({1}, DType::Float32)),
                    IndexError);
  Tensor ex = Tensor::empty({1, 4}, DType::Float32).expand({3, 4});
  REQUIRE_THROWS_AS(index_put_(ex, {ints({0})},
                               Tensor::empty({1}, DType::Float32)),
                    RuntimeError);
}

// ---------------------------------------------------------------- masks --
TEST_CASE("masked_select, masked_scatter, nonzero", "[index]") {
  for (DType dt : {DType::Float32, DType::Int8, DType::BFloat16, DType::Bool}) {
    INFO(dtype_name(dt));
    Tensor x = transposed({5, 7}, dt, 60);
    Tensor m = random_tensor({1, 7}, DType::Bool, 61);
    std::vector<double> want;
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 7; ++j)
        if (at(m, {0, j}) != 0) want.push_back(at(x, {i, j}));
    require_same(masked_select(x, m), want, {int64_t(want.size())});
    // self broadcast against a larger mask
    Tensor row = random_tensor({7}, dt, 62);
    Tensor m3 = random_tensor({3, 7}, DType::Bool, 63);
    std::vector<double> w3;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 7; ++j)
        if (at(m3, {i, j}) != 0) w3.push_back(at(row, {j}));
    require_same(masked_select(row, m3), w3, {int64_t(w3.size())});
    // masked_scatter: source consumed in row-major mask order
    Tensor src = random_tensor({40}, dt, 64);
    Tensor ms = masked_scatter(x, m, src);
    std::vector<double> w4 = values(x);
    int64_t k = 0;
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 7; ++j)
        if (at(m, {0, j}) != 0) w4[size_t(i * 7 + j)] = at(src, {k++});
    require_same(ms, w4, {5, 7});
    // nonzero
    Tensor nz = nonzero(x);
    REQUIRE(nz.dtype() == DType::Int64);
    std::vector<double> w5;
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 7; ++j)
        if (at(x, {i, j}) != 0) {
          w5.push_back(double(i));
          w5.push_back(double(j));
        }
    require_same(nz, w5, {int64_t(w5.size() / 2), 2});
  }
  Tensor s = Tensor::empty({}, DType::Float32).fill_(2.0);
  REQUIRE(nonzero(s).sizes().equals({1, 0}));
  REQUIRE(nonzero(s.zero_()).sizes().equals({0, 0}));
  REQUIRE(
      nonzero(Tensor::empty({0, 3}, DType::Float32)).sizes().equals({0, 2}));
  REQUIRE(masked_select(Tensor::empty({0, 3}, DType::Float32),
                        Tensor::empty({3}, DType::Bool).fill_(true))
              .sizes()
              .equals({0}));
  Tensor yes = Tensor::empty({}, DType::Bool).fill_(true);
  require_same(masked_select(s.fill_(5.0), yes), {5}, {1});
  require_same(masked_scatter(s, yes, from_values({8, 9}, {2}, DType::Float32)),
               {8}, {});
  // errors
  Tensor x = Tensor::empty({2, 3}, DType::Float32);
  REQUIRE_THROWS_AS(masked_select(x, Tensor::empty({2, 3}, DType::UInt8)),
                    RuntimeError);
  REQUIRE_THROWS_AS(masked_select(x, Tensor::empty({4}, DType::Bool)),
                    RuntimeError);
  Tensor all = Tensor::empty({2, 3}, DType::Bool).fill_(true);
  REQUIRE_THROWS_AS(masked_scatter(x, all, Tensor::empty({5}, DType::Float32)),
                    RuntimeError);
  REQUIRE_THROWS_AS(masked_scatter(x, all, Tensor::empty({6}, DType::Float64)),
                    RuntimeError);
  // out of place, self broadcasts with the mask (as torch); in place it
  // cannot grow
  REQUIRE(masked_scatter(Tensor::empty({3}, DType::Float32), all,
                         Tensor::empty({6}, DType::Float32))
              .sizes()
              .equals({2, 3}));
  Tensor small = Tensor::empty({3}, DType::Float32);
  REQUIRE_THROWS_AS(
      masked_scatter_(small, all, Tensor::empty({6}, DType::Float32)),
      RuntimeError);
}

// ---------------------------------------------- triangles, flips, rolls --
TEST_CASE("tril/triu: diagonals, batches, non-contiguous, in place",
          "[index]") {
  for (DType dt : {DType::Float32, DType::Int64, DType::Bool, DType::Float16}) {
    INFO(dtype_name(dt));
    Tensor x = random_tensor({3, 7, 5}, dt, 70).transpose(1, 2);  // 3,5,7
    for (int64_t k : {-6, -2, -1, 0, 1, 3, 8}) {
      Tensor lo = tril(x, k), up = triu(x, k);
      for (int64_t i = 0; i < x.numel(); ++i) {
        std::vector<int64_t> p = unravel(x.sizes(), i);
        const bool keep_lo = p[2] - p[1] <= k, keep_up = p[2] - p[1] >= k;
        REQUIRE(at(lo, p) == (keep_lo ? at(x, p) : 0));
        REQUIRE(at(up, p) == (keep_up ? at(x, p) : 0));
      }
    }
    Tensor c = x.contiguous().clone();
    tril_(c, 1);
    require_equal(c, tril(x, 1));
    Tensor nc = x.clone().transpose(0, 1);  // non-contiguous in-place
    triu_(nc, -1);
    require_equal(nc, triu(x.transpose(0, 1), -1));
  }
  REQUIRE(tril(Tensor::empty({0, 3}, DType::Float32)).sizes().equals({0, 3}));
  REQUIRE_THROWS_AS(tril(Tensor::empty({3}, DType::Float32)), RuntimeError);
  Tensor scalar = Tensor::empty({}, DType::Float32);
  REQUIRE_THROWS_AS(triu_(scalar), RuntimeError);
}

TEST_CASE("flip and roll", "[index]") {
  for (DType dt : {DType::Float32, DType::Int16, DType::Bool, DType::Float64}) {
    INFO(dtype_name(dt));
    Tensor x = random_tensor({4, 5, 3}, dt, 80).permute({1, 2, 0});  // 5,3,4
    for (std::vector<int64_t> dims :
         {std::vector<int64_t>{0}, {2}, {-1, 0}, {0, 1, 2}, {}}) {
      Tensor r = flip(x, dims);
      for (int64_t i = 0; i < x.numel(); ++i) {
        std::vector<int64_t> p = unravel(x.sizes(), i), q = p;
        for (int64_t d : dims) {
          const int64_t w = d < 0 ? d + 3 : d;
          q[size_t(w)] = x.sizes()[size_t(w)] - 1 - p[size_t(w)];
        }
        REQUIRE(at(r, p) == at(x, q));
      }
    }
    struct Case {
      std::vector<int64_t> shifts, dims;
    };
    for (const Case& c : {Case{{2}, {0}}, Case{{-1}, {2}}, Case{{7, 1}, {0, 1}},
                          Case{{1, -2, 5}, {0, 1, 2}}, Case{{1, 1}, {2, 2}},
                          Case{{0}, {1}}}) {
      Tensor r = roll(x, c.shifts, c.dims);
      for (int64_t i = 0; i < x.numel(); ++i) {
        std::vector<int64_t> p = unravel(x.sizes(), i), q = p;
        for (size_t k = 0; k < c.dims.size(); ++k) {
          const int64_t d = c.dims[k], n = x.sizes()[size_t(d)];
          q[size_t(d)] = ((q[size_t(d)] - c.shifts[k]) % n + n) % n;
        }
        REQUIRE(at(r, p) == at(x, q));
      }
    }
    // flattened roll
    Tensor r = roll(x, {4});
    std::vector<double> flat = values(x), want(flat.size());
    for (size_t i = 0; i < flat.size(); ++i)
      want[(i + 4) % flat.size()] = flat[i];
    require_same(r, want, {5, 3, 4});
  }
  Tensor s = Tensor::empty({}, DType::Float32).fill_(1.5);
  require_same(flip(s, {0}), {1.5}, {});
  require_same(roll(s, {3}), {1.5}, {});
  REQUIRE(roll(Tensor::empty({0, 2}, DType::Float32), {1}, {0})
              .sizes()
              .equals({0, 2}));
  Tensor x = Tensor::empty({2, 3}, DType::Float32);
  REQUIRE_THROWS_AS(flip(x, {0, 0}), RuntimeError);
  REQUIRE_THROWS_AS(flip(x, {2}), IndexError);
  REQUIRE_THROWS_AS(roll(x, {1, 2}, {0}), RuntimeError);
  REQUIRE_THROWS_AS(roll(x, {1, 2}), RuntimeError);
  REQUIRE_THROWS_AS(roll(x, {1}, {3}), IndexError);
}

// -------------------------------------------------------------- sorting --
namespace {
// Reference: a stable sort of (value, index) pairs with NaN largest.
void check_sort(const Tensor& x, int64_t dim, bool descending) {
  auto [vals, idx] = sort(x, dim, descending, true);
  REQUIRE(idx.dtype() == DType::Int64);
  REQUIRE(vals.sizes().equals(x.sizes()));
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  const int64_t n = x.sizes()[size_t(d)];
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> p = unravel(x.sizes(), i);
    if (p[size_t(d)] != 0) continue;  // once per row
    std::vector<std::pair<double, int64_t>> row;
    for (int64_t j = 0; j < n; ++j) {
      p[size_t(d)] = j;
      row.push_back({at(x, p), j});
    }
    auto less = [&](const std::pair<double, int64_t>& a,
                    const std::pair<double, int64_t>& b) {
      const bool an = std::isnan(a.first), bn = std::isnan(b.first);
      if (an || bn) return !an && bn;
      return a.first < b.first;
    };
    if (descending)
      std::stable_sort(row.begin(), row.end(),
                       [&](auto& a, auto& b) { return less(b, a); });
    else
      std::stable_sort(row.begin(), row.end(), less);
    for (int64_t j = 0; j < n; ++j) {
      p[size_t(d)] = j;
      INFO("row element " << j);
      if (std::isnan(row[size_t(j)].first))
        REQUIRE(std::isnan(at(vals, p)));
      else
        REQUIRE(at(vals, p) == row[size_t(j)].first);
      REQUIRE(at(idx, p) == double(row[size_t(j)].second));
    }
  }
}
}  // namespace

TEST_CASE("sort/argsort: stable, NaN largest, dims, dtypes", "[index]") {
  for (DType dt : kSomeDTypes) {
    INFO(dtype_name(dt));
    Tensor x = random_tensor({9, 13, 4}, dt, 90).permute({2, 0, 1});  // ties
    for (int64_t dim : {0, 1, -1})
      for (bool desc : {false, true}) check_sort(x, dim, desc);
  }
  Tensor f = from_values({3, NAN, -1, 2, NAN, -INFINITY, 2, INFINITY}, {8},
                         DType::Float32);
  check_sort(f, 0, false);
  check_sort(f, 0, true);
  auto [sv, si] = sort(f);
  require_same(sv, {-INFINITY, -1, 2, 2, 3, INFINITY, NAN, NAN}, {8});
  require_same(si, {5, 2, 3, 6, 0, 7, 1, 4}, {8});
  require_equal(argsort(f, 0, true),
                ints({1, 4, 7, 0, 3, 6, 2, 5}));
  // 0-d and empty
  Tensor s = Tensor::empty({}, DType::Float32).fill_(4.0);
  auto [v0, i0] = sort(s);
  REQUIRE(v0.dim() == 0);
  REQUIRE(at(v0, {}) == 4);
  REQUIRE(at(i0, {}) == 0);
  auto [ve, ie] = sort(Tensor::empty({3, 0}, DType::Float32), 0);
  REQUIRE(ve.sizes().equals({3, 0}));
  REQUIRE_THROWS_AS(sort(f, 1), IndexError);
}

TEST_CASE("topk: largest/smallest, k edge cases, errors", "[index]") {
  for (DType dt :
       {DType::Float32, DType::Int32, DType::Float16, DType::UInt8}) {
    INFO(dtype_name(dt));
    Tensor x = transposed({7, 11}, dt, 91);
    for (int64_t dim : {0, 1})
      for (bool largest : {true, false})
        for (int64_t k : {int64_t(0), int64_t(1), int64_t(3),
                          x.sizes()[size_t(dim)]}) {
          auto [v, i] = topk(x, k, dim, largest);
          auto [sv, si] = sort(x, dim, largest, true);
          // With ties broken by index, topk equals the first k of a stable
          // sort.
          require_equal(v, sv.narrow(dim, 0, k).contiguous());
          require_equal(i, si.narrow(dim, 0, k).contiguous());
        }
  }
  Tensor f = from_values({1, NAN, 5, 3}, {4}, DType::Float64);
  auto [v, i] = topk(f, 2);
  require_same(v, {NAN, 5}, {2});
  require_same(i, {1, 2}, {2});
  auto [v2, i2] = topk(f, 2, 0, false);
  require_same(v2, {1, 3}, {2});
  require_same(i2, {0, 3}, {2});
  REQUIRE_THROWS_AS(topk(f, 5), RuntimeError);
  REQUIRE_THROWS_AS(topk(f, -1), RuntimeError);
  REQUIRE_THROWS_AS(topk(f, 1, 1), IndexError);
  Tensor s = Tensor::empty({}, DType::Float32).fill_(2.0);
  REQUIRE(std::get<0>(topk(s, 1)).dim() == 0);
}

// ------------------------------------------- large inputs (threaded paths) --
TEST_CASE("large inputs take the threaded paths correctly", "[index]") {
  const int64_t R = 300, C = 257;  // > kGrainSize elements
  Tensor x = random_tensor({R, C}, DType::Float32, 100);
  // index_select on dim 1 and gather on dim 0
  Tensor idx = random_index({C}, C, 101);
  Tensor r = index_select(x, 1, idx);
  for (int64_t i = 0; i < R; i += 37)
    for (int64_t j = 0; j < C; ++j)
      REQUIRE(at(r, {i, j}) == at(x, {i, wrap(int64_t(at(idx, {j})), C)}));
  // scatter_add along dim 1 (parallel over rows) vs a serial reference
  Tensor gi = random_index({R, 100}, C, 102, false);
  Tensor src = random_tensor({R, 100}, DType::Float32, 103);
  Tensor sa = scatter_add(x, 1, gi, src);
  std::vector<double> want = values(x);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < 100; ++j)
      want[size_t(i * C + int64_t(at(gi, {i, j})))] += at(src, {i, j});
  require_same(sa, want, {R, C});
  // index_add along dim 0 with duplicates (threads split the other dim)
  Tensor ai = random_index({400}, R, 105);
  Tensor asrc = random_tensor({400, C}, DType::Float32, 106);
  Tensor ia = index_add(x, 0, ai, asrc);
  std::vector<double> wa = values(x);
  for (int64_t i = 0; i < 400; ++i)
    for (int64_t j = 0; j < C; ++j)
      wa[size_t(wrap(int64_t(at(ai, {i})), R) * C + j)] += at(asrc, {i, j});
  require_same(ia, wa, {R, C});
  // sort many rows, nonzero and masked_select over many chunks
  check_sort(x, 1, true);
  Tensor m = random_tensor({R, C}, DType::Bool, 104);
  Tensor ms = masked_select(x, m);
  std::vector<double> wm, xs = values(x), ms_mask = values(m);
  for (int64_t i = 0; i < R * C; ++i)
    if (ms_mask[size_t(i)] != 0) wm.push_back(xs[size_t(i)]);
  require_same(ms, wm, {int64_t(wm.size())});
  Tensor nz = nonzero(m);
  REQUIRE(nz.sizes()[0] == int64_t(wm.size()));
  int64_t k = 0;
  for (int64_t i = 0; i < R * C; ++i)
    if (ms_mask[size_t(i)] != 0) {
      REQUIRE(at(nz, {k, 0}) == double(i / C));
      REQUIRE(at(nz, {k, 1}) == double(i % C));
      ++k;
    }
  // cat/flip/roll/tril at size
  Tensor c = cat({x, x.narrow(0, 0, 7)}, 0);
  REQUIRE(at(c, {R + 6, 100}) == at(x, {6, 100}));
  Tensor fl = flip(x, {1});
  REQUIRE(at(fl, {5, 0}) == at(x, {5, C - 1}));
  Tensor ro = roll(x, {5, -3}, {0, 1});
  REQUIRE(at(ro, {7, 0}) == at(x, {2, 3}));
  Tensor tl = tril(x);
  REQUIRE(at(tl, {3, 4}) == 0);
  REQUIRE(at(tl, {200, 4}) == at(x, {200, 4}));
}

TEST_CASE("cat: a total size that overflows int64 is an error",
          "[index][errors]") {
  Tensor v = Tensor::empty({1, 1}, DType::Float32);
  v.fill_(Scalar(1));
  Tensor e = v.expand({int64_t(1) << 62, 1});  // a valid stride-0 view
  try {
    cat({e, e});  // 2^63 rows
    FAIL("expected an overflow error");
  } catch (const RuntimeError& err) {
    // Raised by cat's own size check, before any input is copied.
    CHECK(std::string(err.what()).find("cat: the total size along "
                                       "dimension 0 overflows") !=
          std::string::npos);
  }
}

// Dense CPU inputs take direct paths (no strided views) in index_select,
// gather, embedding, x[idx], cat and small sort/topk; check them against
// the naive references and the general paths.
TEST_CASE("direct paths for dense inputs match the references", "[index]") {
  for (DType dt : kSomeDTypes) {
    INFO(dtype_name(dt));
    Tensor x = random_tensor({5, 6, 7}, dt, 200);  // dense
    REQUIRE(x.is_contiguous());
    for (int64_t dim : {0, 1, 2, -1}) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      const int64_t size = x.sizes()[size_t(d)];
      Tensor dense = random_index({9}, size, 201 + uint32_t(d));
      Tensor strided = random_index({18}, size, 205).slice(0, 0, 18, 2);
      for (const Tensor& idx : {dense, strided}) {
        Tensor r = index_select(x, dim, idx);
        // The same op through the general path (non-contiguous self).
        Tensor xt = x.transpose(0, 2).contiguous().transpose(0, 2);
        REQUIRE(!xt.is_contiguous());
        require_equal(r, index_select(xt, dim, idx));
        std::vector<double> want;
        int64_t shape[3] = {5, 6, 7};
        shape[d] = 9;
        for (int64_t i = 0; i < 5 * 6 * 7 / size * 9; ++i) {
          std::vector<int64_t> p = unravel(IntList(shape, 3), i);
          p[size_t(d)] = wrap(int64_t(at(idx, {p[size_t(d)]})), size);
          want.push_back(at(x, p));
        }
        require_same(r, want, IntList(shape, 3));
      }
    }
    // x[idx] with a dense 2-D, a 0-d and a strided index
    check_index(x, {random_index({2, 3}, 5, 210)});
    check_index(x, {ints({-1}, {})});
    check_index(x, {random_index({4, 2}, 5, 211).t()});
    check_index(random_tensor({8}, dt, 212), {random_index({3, 2}, 8, 213)});
    // 1-D gather, dense and strided index
    Tensor v = random_tensor({11}, dt, 214);
    for (const Tensor& idx : {random_index({15}, 11, 215),
                              random_index({30}, 11, 216).slice(0, 0, 30, 2)}) {
      std::vector<double> want;
      for (int64_t i = 0; i < 15; ++i)
        want.push_back(at(v, {wrap(int64_t(at(idx, {i})), 11)}));
      require_same(gather(v, 0, idx), want, {15});
      require_same(gather(v, -1, idx), want, {15});
    }
    // embedding: dense 2-D indices, int32 indices, strided indices
    Tensor w = random_tensor({10, 4}, dt, 217);
    for (const Tensor& idx :
         {random_index({2, 3}, 10, 218, false),
          ints({9, 0, 3}, {3}, DType::Int32),
          random_index({3, 2}, 10, 219, false).t()}) {
      Tensor e = embedding(w, idx);
      std::vector<double> want;
      for (int64_t i = 0; i < idx.numel(); ++i) {
        const int64_t row =
            int64_t(at(idx, unravel(idx.sizes(), i)));
        for (int64_t k = 0; k < 4; ++k) want.push_back(at(w, {row, k}));
      }
      std::vector<int64_t> shape = idx.sizes().vec();
      shape.push_back(4);
      require_same(e, want, IntList(shape.data(), shape.size()));
    }
    // cat of dense same-dtype inputs, 2 and 4 of them, along each dim
    Tensor a = random_tensor({3, 4}, dt, 220), b = random_tensor({3, 4}, dt, 221);
    require_equal(cat({a, b}, 0), cat({a.t().contiguous().t(), b}, 0));
    require_equal(cat({a, b, a, b}, 1),
                  cat({a, b.t().contiguous().t(), a, b}, 1));
    std::vector<double> w0 = values(a), wb = values(b);
    w0.insert(w0.end(), wb.begin(), wb.end());
    require_same(cat({a, b}, 0), w0, {6, 4});
  }
  // Out-of-range values raise on every direct path.
  Tensor x = random_tensor({4, 3}, DType::Float32, 230);
  REQUIRE_THROWS_AS(index_select(x, 1, ints({0, 3})), IndexError);
  REQUIRE_THROWS_AS(index_select(x, 0, ints({-5})), IndexError);
  REQUIRE(error_of([&] { index(x, {ints({1, 4})}); }) ==
          "index 4 is out of bounds for dimension 0 with size 4");
  REQUIRE_THROWS_AS(gather(ints({1, 2}), 0, ints({2})), RuntimeError);
  REQUIRE_THROWS_AS(embedding(x, ints({4}, {1, 1})), IndexError);
  REQUIRE_THROWS_AS(embedding(x, ints({-5})), IndexError);
  // sort/topk rows on both sides of the short-row limit, with ties and NaN
  for (int64_t n : {1, 2, 16, 64, 65, 200}) {
    INFO(n);
    Tensor t = random_tensor({n}, DType::Float32, 231);
    if (n > 2) write_at(t, 1, NAN);
    for (bool desc : {false, true}) check_sort(t, 0, desc);
    for (int64_t k : {int64_t(0), int64_t(1), n / 2, n}) {
      auto [tv, ti] = topk(t, k, 0, true);
      auto [sv, si] = sort(t, 0, true, true);
      require_equal(tv, sv.narrow(0, 0, k).contiguous());
      require_equal(ti, si.narrow(0, 0, k).contiguous());
      auto [lv, li] = topk(t, k, 0, false);
      auto [av, ai] = sort(t, 0, false, true);
      require_equal(lv, av.narrow(0, 0, k).contiguous());
      require_equal(li, ai.narrow(0, 0, k).contiguous());
    }
  }
}

// Tests for the matrix products (csrc/ops/linalg.h) against a naive triple
// loop in doubles: every dtype, odd / tiny / BLAS-sized shapes, 1-D and
// batched-broadcast operands, strided inputs, empty dims and error paths.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/linalg.h"

using namespace fastt;
using namespace fastt::test;

// Substring matcher under both Catch2 2 and 3.
#if defined(FASTT_CATCH2_V3)
#define HAS_TEXT(s) Catch::Matchers::ContainsSubstring(s)
#else
#define HAS_TEXT(s) Catch::Contains(s)
#endif

namespace {

constexpr DType kGemmDTypes[] = {DType::UInt8,    DType::Int8,
                                 DType::Int16,    DType::Int32,
                                 DType::Int64,    DType::Float16,
                                 DType::BFloat16, DType::Float32,
                                 DType::Float64};

struct Ref {
  std::vector<int64_t> shape;
  std::vector<double> v;
};

// torch.matmul on doubles: 1-D promotion, broadcast batch dims, then
// out = beta * addend + alpha * sum_k a*b (addend already at out's shape).
Ref ref_matmul(const Tensor& a, const Tensor& b, double alpha = 1,
               double beta = 0, const std::vector<double>* addend = nullptr) {
  std::vector<int64_t> as = a.sizes().vec(), bs = b.sizes().vec();
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  std::vector<int64_t> ab(as.begin(), as.end() - 2);
  std::vector<int64_t> bb(bs.begin(), bs.end() - 2);
  const size_t nb = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), nb - ab.size(), 1);
  bb.insert(bb.begin(), nb - bb.size(), 1);
  std::vector<int64_t> batch(nb);
  int64_t nbatch = 1;
  for (size_t i = 0; i < nb; ++i) {
    batch[i] = ab[i] == 1 ? bb[i] : ab[i];
    nbatch *= batch[i];
  }
  const std::vector<double> av = values(a), bv = values(b);
  Ref r;
  r.shape = batch;
  if (!a1) r.shape.push_back(M);
  if (!b1) r.shape.push_back(N);
  r.v.assign(size_t(nbatch * M * N), 0.0);
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    int64_t rem = bi, la = 0, lb = 0, sa = 1, sb = 1;
    for (int64_t d = int64_t(nb) - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[size_t(d)];
      rem /= batch[size_t(d)];
      la += (ab[size_t(d)] == 1 ? 0 : idx) * sa;
      lb += (bb[size_t(d)] == 1 ? 0 : idx) * sb;
      sa *= ab[size_t(d)];
      sb *= bb[size_t(d)];
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += av[size_t((la * M + m) * K + k)] *
                 bv[size_t((lb * K + k) * N + n)];
        const size_t o = size_t((bi * M + m) * N + n);
        double v = alpha * acc;
        if (beta != 0) v += beta * (*addend)[o];
        r.v[o] = v;
      }
  }
  return r;
}

// Compares every element (values are exact in every dtype's accumulator,
// so one final rounding to the dtype is all that may differ).
void check(const Tensor& out, const Ref& r, DType dt) {
  REQUIRE(out.dtype() == dt);
  REQUIRE(out.sizes().vec() == r.shape);
  const std::vector<double> got = values(out);
  REQUIRE(got.size() == r.v.size());
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!close(got[i], round_to(dt, r.v[i]), rtol_of(dt), 1e-9)) {
      if (first < 0) first = int64_t(i);
      ++bad;
    }
  }
  INFO("dtype " << dtype_name(dt) << ", first mismatch at " << first
                << (first >= 0 ? ": got " + std::to_string(got[size_t(first)]) +
                                     " want " +
                                     std::to_string(round_to(
                                         dt, r.v[size_t(first)]))
                               : std::string()));
  REQUIRE(bad == 0);
}

Tensor rand_t(IntList sizes, DType dt, uint32_t seed) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return make(sample(dt, n, seed), sizes, dt);
}

std::vector<double> broadcast_vals(const Tensor& t, IntList shape) {
  return values(t.expand(shape));
}

}  // namespace

TEST_CASE("linalg: mm matches a naive loop for every dtype", "[linalg]") {
  struct Shape {
    int64_t M, K, N;
  };
  // Tiny (loop path), odd and BLAS-sized, row / column vectors (gemv, dot).
  const Shape shapes[] = {{4, 4, 4},   {2, 3, 5},  {45, 65, 33}, {1, 64, 70},
                          {70, 64, 1}, {1, 300, 1}, {9, 1, 7},   {1, 1, 1},
                          {33, 20, 40}};
  for (DType dt : kGemmDTypes) {
    for (const Shape& s : shapes) {
      INFO(dtype_name(dt) << " " << s.M << "x" << s.K << " @ " << s.K << "x"
                          << s.N);
      Tensor a = rand_t({s.M, s.K}, dt, 1), b = rand_t({s.K, s.N}, dt, 2);
      check(mm(a, b), ref_matmul(a, b), dt);
      check(matmul(a, b), ref_matmul(a, b), dt);
    }
  }
}

TEST_CASE("linalg: transposed and sliced operands", "[linalg]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32,
                   DType::Float16, DType::BFloat16}) {
    INFO(dtype_name(dt));
    // Transposes (BLAS reads them with Trans flags, no copy).
    Tensor at = rand_t({65, 45}, dt, 3).t();  // 45x65, column-major
    Tensor bt = rand_t({33, 65}, dt, 4).t();  // 65x33
    check(mm(at, bt), ref_matmul(at, bt), dt);
    // Step-2 slices: neither dim has unit stride, so float gets a copy.
    Tensor as = rand_t({45, 130}, dt, 5).slice(1, 0, 130, 2);
    Tensor bs = rand_t({130, 66}, dt, 6).slice(0, 0, 130, 2).slice(1, 1, 66, 2);
    check(mm(as, bs), ref_matmul(as, bs), dt);
    // Row-strided (lda > K) and a narrow column window.
    Tensor an = rand_t({45, 80}, dt, 7).narrow(1, 5, 65);
    check(mm(an, bt), ref_matmul(an, bt), dt);
    // Expanded (zero-stride) operand.
    Tensor row = rand_t({1, 65}, dt, 8).expand({45, 65});
    check(mm(row, bt), ref_matmul(row, bt), dt);
    // Vector forms with strided vectors: row @ matrix^T, matrix^T @ column.
    Tensor v = rand_t({130}, dt, 9).slice(0, 0, 130, 2);  // 65, stride 2
    check(matmul(v, bt), ref_matmul(v, bt), dt);
    check(matmul(at, v), ref_matmul(at, v), dt);
    check(mv(at, v), ref_matmul(at, v), dt);
    check(dot(v, v), ref_matmul(v, v), dt);
    // Tiny transposed.
    Tensor t4 = rand_t({4, 4}, dt, 10).t();
    check(mm(t4, t4), ref_matmul(t4, t4), dt);
  }
}

TEST_CASE("linalg: matmul 1-D and N-D semantics", "[linalg]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64,
                   DType::Float16}) {
    INFO(dtype_name(dt));
    // 1-D . 1-D -> 0-d
    Tensor v = rand_t({7}, dt, 1), w = rand_t({7}, dt, 2);
    Tensor d = matmul(v, w);
    REQUIRE(d.dim() == 0);
    check(d, ref_matmul(v, w), dt);
    Tensor big = rand_t({500}, dt, 3), big2 = rand_t({500}, dt, 4);
    check(matmul(big, big2), ref_matmul(big, big2), dt);
    // 1-D @ 2-D, 2-D @ 1-D
    Tensor m = rand_t({7, 5}, dt, 5);
    check(matmul(v, m), ref_matmul(v, m), dt);
    Tensor m2 = rand_t({6, 7}, dt, 6);
    check(matmul(m2, v), ref_matmul(m2, v), dt);
    // Batched with broadcast batch dims: (2,1,3,4) @ (5,4,2) -> (2,5,3,2)
    Tensor a = rand_t({2, 1, 3, 4}, dt, 7), b = rand_t({5, 4, 2}, dt, 8);
    Tensor c = matmul(a, b);
    REQUIRE(c.sizes().vec() == std::vector<int64_t>{2, 5, 3, 2});
    check(c, ref_matmul(a, b), dt);
    // Larger batched broadcast (BLAS path per matrix).
    Tensor a2 = rand_t({3, 1, 20, 30}, dt, 9), b2 = rand_t({4, 30, 25}, dt, 10);
    check(matmul(a2, b2), ref_matmul(a2, b2), dt);
    // N-D @ 2-D folds into one product; N-D @ 1-D; 1-D @ N-D; 2-D @ N-D.
    Tensor x = rand_t({2, 3, 4, 9}, dt, 11), W = rand_t({9, 6}, dt, 12);
    check(matmul(x, W), ref_matmul(x, W), dt);
    Tensor u = rand_t({9}, dt, 13);
    check(matmul(x, u), ref_matmul(x, u), dt);
    Tensor y = rand_t({3, 4, 9, 5}, dt, 14);
    check(matmul(u, y), ref_matmul(u, y), dt);
    Tensor p = rand_t({6, 9}, dt, 15);
    check(matmul(p, y), ref_matmul(p, y), dt);
    // Batch dims that do not merge (transposed batch): no fold.
    Tensor xt = x.transpose(0, 1);  // (3, 2, 4, 9)
    check(matmul(xt, W), ref_matmul(xt, W), dt);
    // Batch-transposed inner matrices.
    Tensor yt = rand_t({3, 4, 5, 9}, dt, 16).transpose(-1, -2);  // (3,4,9,5)
    Tensor q = rand_t({3, 1, 7, 9}, dt, 18);
    check(matmul(q, yt), ref_matmul(q, yt), dt);
    check(bmm(rand_t({4, 3, 9}, dt, 17), yt.select(0, 0)),
          ref_matmul(rand_t({4, 3, 9}, dt, 17), yt.select(0, 0)), dt);
  }
}

TEST_CASE("linalg: many small matrices and large integer products",
          "[linalg]") {
  // A large batch of 4x4s (threads over the batch) and of 24x24s (BLAS
  // called from several threads), plus an int matrix split by rows.
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32}) {
    INFO(dtype_name(dt));
    Tensor a = rand_t({3000, 4, 4}, dt, 1), b = rand_t({3000, 4, 4}, dt, 2);
    check(bmm(a, b), ref_matmul(a, b), dt);
    Tensor c = rand_t({300, 24, 24}, dt, 3), e = rand_t({24, 24}, dt, 4);
    check(matmul(c.transpose(0, 1), e), ref_matmul(c.transpose(0, 1), e), dt);
    Tensor f = rand_t({200, 24, 3}, dt, 5), g = rand_t({200, 3, 24}, dt, 6);
    check(matmul(f, g), ref_matmul(f, g), dt);
  }
  Tensor a = rand_t({200, 150}, DType::Int32, 7);
  Tensor b = rand_t({150, 120}, DType::Int32, 8);
  check(mm(a, b), ref_matmul(a, b), DType::Int32);
  // Integer overflow wraps like a C++ cast (torch does the same).
  Tensor big = make(std::vector<double>(8, 100), {2, 4}, DType::Int8);
  Tensor big2 = make(std::vector<double>(8, 3), {4, 2}, DType::Int8);
  Tensor r = mm(big, big2);
  REQUIRE(get(r, 0) == double(int8_t(int64_t(1200))));
}

TEST_CASE("linalg: empty dims", "[linalg]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int16,
                   DType::BFloat16}) {
    INFO(dtype_name(dt));
    // K == 0: zeros, also at sizes that would go to BLAS.
    for (int64_t n : {3, 50}) {
      Tensor a = Tensor::empty({n, 0}, dt), b = Tensor::empty({0, n + 1}, dt);
      Tensor c = mm(a, b);
      REQUIRE(c.sizes().vec() == std::vector<int64_t>{n, n + 1});
      for (double x : values(c)) REQUIRE(x == 0);
    }
    // M == 0 / N == 0: empty results.
    Tensor e = mm(Tensor::empty({0, 5}, dt), rand_t({5, 3}, dt, 1));
    REQUIRE(e.sizes().vec() == std::vector<int64_t>{0, 3});
    Tensor e2 = matmul(rand_t({2, 5}, dt, 1), Tensor::empty({5, 0}, dt));
    REQUIRE(e2.sizes().vec() == std::vector<int64_t>{2, 0});
    // Empty batch, empty vector dot.
    Tensor e3 = matmul(Tensor::empty({0, 2, 3}, dt), rand_t({3, 4}, dt, 2));
    REQUIRE(e3.sizes().vec() == std::vector<int64_t>{0, 2, 4});
    Tensor e4 = bmm(Tensor::empty({0, 2, 3}, dt), Tensor::empty({0, 3, 4}, dt));
    REQUIRE(e4.sizes().vec() == std::vector<int64_t>{0, 2, 4});
    Tensor z = dot(Tensor::empty({0}, dt), Tensor::empty({0}, dt));
    REQUIRE(z.dim() == 0);
    REQUIRE(z.item<double>() == 0);
    // K == 0 with an addend: beta * input.
    Tensor in = rand_t({3, 4}, dt, 3);
    Tensor s = addmm(in, Tensor::empty({3, 0}, dt), Tensor::empty({0, 4}, dt),
                     2, 1);
    std::vector<double> want = values(in);
    for (double& x : want) x *= 2;
    check(s, Ref{{3, 4}, want}, dt);
    // linear with K == 0 gives the bias.
    Tensor bias = rand_t({4}, dt, 4);
    Tensor l = linear(Tensor::empty({2, 0}, dt), Tensor::empty({4, 0}, dt),
                      bias);
    check(l, Ref{{2, 4}, broadcast_vals(bias, {2, 4})}, dt);
    Tensor l3 = linear(Tensor::empty({2, 3, 0}, dt).transpose(0, 1),
                       Tensor::empty({4, 0}, dt), bias);
    check(l3, Ref{{3, 2, 4}, broadcast_vals(bias, {3, 2, 4})}, dt);
    Tensor l0 = linear(Tensor::empty({0, 3, 5}, dt), rand_t({4, 5}, dt, 5));
    REQUIRE(l0.sizes().vec() == std::vector<int64_t>{0, 3, 4});
  }
}

TEST_CASE("linalg: addmm and baddbmm alpha, beta and broadcasting",
          "[linalg]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32,
                   DType::Float16}) {
    const bool fl = is_floating(dt);
    const Scalar beta = fl ? Scalar(0.5) : Scalar(2);
    const Scalar alpha = fl ? Scalar(1.5) : Scalar(-3);
    for (int64_t n : {3, 40}) {  // loop and BLAS paths
      INFO(dtype_name(dt) << " n=" << n);
      Tensor m1 = rand_t({n, n + 2}, dt, 1), m2 = rand_t({n + 2, n + 1}, dt, 2);
      const std::vector<int64_t> oshape{n, n + 1};
      for (Tensor input : {rand_t({n, n + 1}, dt, 3), rand_t({n + 1}, dt, 4),
                           rand_t({n, 1}, dt, 5), rand_t({}, dt, 6),
                           rand_t({n + 1, n}, dt, 7).t()}) {
        std::vector<double> add = broadcast_vals(input, oshape);
        check(addmm(input, m1, m2, beta, alpha),
              ref_matmul(m1, m2, alpha.to_double(), beta.to_double(), &add),
              dt);
        check(addmm(input, m1, m2),
              ref_matmul(m1, m2, 1, 1, &add), dt);
      }
      // alpha == 0: beta * input only.
      Tensor input = rand_t({n, n + 1}, dt, 8);
      std::vector<double> add = values(input);
      check(addmm(input, m1, m2, beta, 0),
            ref_matmul(m1, m2, 0, beta.to_double(), &add), dt);
      // baddbmm with a broadcast input.
      Tensor b1 = rand_t({3, n, 5}, dt, 9), b2 = rand_t({3, 5, n}, dt, 10);
      Tensor bin = rand_t({n, 1}, dt, 11);
      std::vector<double> badd = broadcast_vals(bin, {3, n, n});
      check(baddbmm(bin, b1, b2, beta, alpha),
            ref_matmul(b1, b2, alpha.to_double(), beta.to_double(), &badd),
            dt);
    }
  }
}

TEST_CASE("linalg: beta = 0 ignores NaN and inf in input", "[linalg]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    for (int64_t n : {1, 3, 40}) {  // dot, loop, BLAS
      INFO(dtype_name(dt) << " n=" << n);
      Tensor input = make(std::vector<double>(size_t(n * n), nan), {n, n}, dt);
      input.narrow(0, 0, 1).fill_(inf);
      Tensor a = rand_t({n, 7}, dt, 1), b = rand_t({7, n}, dt, 2);
      Tensor r = addmm(input, a, b, 0, 1);
      check(r, ref_matmul(a, b), dt);
      Tensor v = rand_t({7}, dt, 3);  // N == 1: the gemv form
      Tensor col = make(std::vector<double>(size_t(n), nan), {n, 1}, dt);
      check(addmm(col, a, v.unsqueeze(1), 0, 2),
            ref_matmul(a, v.unsqueeze(1), 2), dt);
      Tensor r3 = baddbmm(input.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0),
                          0, 1);
      check(r3, ref_matmul(a.unsqueeze(0), b.unsqueeze(0)), dt);
    }
  }
}

TEST_CASE("linalg: bmm, dot, mv and outer", "[linalg]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int8,
                   DType::BFloat16}) {
    INFO(dtype_name(dt));
    Tensor a = rand_t({5, 45, 13}, dt, 1), b = rand_t({5, 13, 33}, dt, 2);
    check(bmm(a, b), ref_matmul(a, b), dt);
    Tensor v = rand_t({65}, dt, 3), w = rand_t({65}, dt, 4);
    check(dot(v, w), ref_matmul(v, w), dt);
    Tensor m = rand_t({45, 65}, dt, 5);
    check(mv(m, v), ref_matmul(m, v), dt);
    Tensor o = outer(rand_t({4}, dt, 6), rand_t({3}, dt, 7));
    REQUIRE(o.sizes().vec() == std::vector<int64_t>{4, 3});
    check(o, ref_matmul(rand_t({4, 1}, dt, 6), rand_t({1, 3}, dt, 7)), dt);
  }
  // outer promotes like mul.
  Tensor o = outer(make({1, 2}, {2}, DType::Int32),
                   make({0.5, 1.5}, {2}, DType::Float32));
  REQUIRE(o.dtype() == DType::Float32);
  REQUIRE(values(o) == std::vector<double>{0.5, 1.5, 1, 3});
}

TEST_CASE("linalg: linear with and without bias", "[linalg]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32,
                   DType::Float16, DType::BFloat16}) {
    for (int64_t n : {2, 33}) {  // loop and BLAS sizes
      INFO(dtype_name(dt) << " n=" << n);
      const int64_t in = n + 3, outf = n + 1;
      Tensor W = rand_t({outf, in}, dt, 1), bias = rand_t({outf}, dt, 2);
      Tensor Wt = W.t();
      for (Tensor x : {rand_t({n, in}, dt, 3), rand_t({in}, dt, 4),
                       rand_t({2, n, in}, dt, 5),
                       rand_t({n, 2, in}, dt, 6).transpose(0, 1),
                       rand_t({in, n}, dt, 7).t()}) {
        Ref plain = ref_matmul(x, Wt);
        check(linear(x, W), plain, dt);
        std::vector<double> add = broadcast_vals(bias, plain.shape);
        check(linear(x, W, bias), ref_matmul(x, Wt, 1, 1, &add), dt);
      }
      // A transposed weight and a full-shape bias.
      Tensor Wc = rand_t({in, outf}, dt, 8).t();
      Tensor x = rand_t({n, in}, dt, 9);
      Tensor full = rand_t({n, outf}, dt, 10);
      std::vector<double> add = values(full);
      check(linear(x, Wc, full), ref_matmul(x, Wc.t(), 1, 1, &add), dt);
      Tensor x3 = rand_t({2, n, in}, dt, 11), b3 = rand_t({n, 1}, dt, 12);
      std::vector<double> add3 = broadcast_vals(b3, {2, n, outf});
      check(linear(x3, W, b3), ref_matmul(x3, Wt, 1, 1, &add3), dt);
      // 1-D weight: x @ w (+ b).
      Tensor w1 = rand_t({in}, dt, 13);
      check(linear(x, w1), ref_matmul(x, w1), dt);
    }
  }
}

TEST_CASE("linalg: error paths", "[linalg]") {
  const DType f = DType::Float32;
  Tensor m23 = rand_t({2, 3}, f, 1), m45 = rand_t({4, 5}, f, 2);
  Tensor s = rand_t({}, f, 3), v3 = rand_t({3}, f, 4), v4 = rand_t({4}, f, 5);
  // 0-d operands.
  REQUIRE_THROWS_AS(matmul(s, m23), RuntimeError);
  REQUIRE_THROWS_WITH(matmul(s, m23),
                      "both arguments to matmul need to be at least 1D, but "
                      "they are 0D and 2D");
  // Shape mismatches.
  REQUIRE_THROWS_WITH(mm(m23, m45),
                      HAS_TEXT("mat1 and mat2 shapes cannot be "
                                      "multiplied (2x3 and 4x5)"));
  REQUIRE_THROWS_WITH(matmul(m23, m45),
                      HAS_TEXT("(2x3 and 4x5)"));
  REQUIRE_THROWS_WITH(matmul(v4, m23.t()),
                      HAS_TEXT("(1x4 and 3x2)"));
  REQUIRE_THROWS_AS(matmul(m23, v4), RuntimeError);
  REQUIRE_THROWS_WITH(matmul(v3, v4),
                      HAS_TEXT("inconsistent tensor size"));
  REQUIRE_THROWS_AS(matmul(rand_t({2, 2, 3}, f, 6), rand_t({2, 4, 5}, f, 7)),
                    RuntimeError);
  REQUIRE_THROWS_AS(matmul(rand_t({2, 2, 3}, f, 6), rand_t({3, 3, 5}, f, 7)),
                    RuntimeError);  // batch dims do not broadcast
  REQUIRE_THROWS_WITH(mm(v3, m23), HAS_TEXT("self must be a matrix"));
  REQUIRE_THROWS_WITH(mm(m23, v3), HAS_TEXT("mat2 must be a matrix"));
  REQUIRE_THROWS_WITH(bmm(m23, m23),
                      HAS_TEXT("batch1 must be a 3D tensor"));
  REQUIRE_THROWS_WITH(
      bmm(rand_t({2, 2, 3}, f, 1), rand_t({3, 3, 4}, f, 2)),
      HAS_TEXT("Expected size for first two dimensions of batch2 "
                      "tensor to be: [2, 3] but got: [3, 3]."));
  REQUIRE_THROWS_WITH(dot(m23, v3), HAS_TEXT("1D tensors expected"));
  REQUIRE_THROWS_WITH(mv(m23, v4), HAS_TEXT("size mismatch"));
  REQUIRE_THROWS_AS(mv(v3, v3), RuntimeError);
  REQUIRE_THROWS_AS(outer(m23, v3), RuntimeError);
  REQUIRE_THROWS_WITH(linear(m23, m45),
                      HAS_TEXT("(2x3 and 5x4)"));
  REQUIRE_THROWS_AS(linear(m23, rand_t({2, 3, 3}, f, 1)), RuntimeError);
  REQUIRE_THROWS_AS(linear(s, m23), RuntimeError);
  REQUIRE_THROWS_AS(linear(m23, rand_t({4, 3}, f, 1), rand_t({3}, f, 2)),
                    RuntimeError);  // bias does not broadcast
  REQUIRE_THROWS_AS(addmm(rand_t({3}, f, 1), m23, rand_t({3, 5}, f, 2)),
                    RuntimeError);  // input does not broadcast to [2, 5]
  // Dtypes must match (no promotion), like torch.
  Tensor d23 = rand_t({3, 2}, DType::Float64, 1);
  REQUIRE_THROWS_WITH(mm(m23, d23),
                      HAS_TEXT("expected m1 and m2 to have the same "
                                      "dtype, but got: float32 != float64"));
  REQUIRE_THROWS_AS(matmul(m23, d23), RuntimeError);
  REQUIRE_THROWS_AS(bmm(m23.unsqueeze(0), d23.unsqueeze(0)), RuntimeError);
  REQUIRE_THROWS_AS(dot(v3, rand_t({3}, DType::Float64, 1)), RuntimeError);
  REQUIRE_THROWS_AS(addmm(rand_t({2, 2}, DType::Float64, 1), m23, m23.t()),
                    RuntimeError);
  REQUIRE_THROWS_AS(linear(m23, rand_t({4, 3}, DType::Float64, 1)),
                    RuntimeError);
  REQUIRE_THROWS_AS(linear(m23, rand_t({4, 3}, f, 1),
                           rand_t({4}, DType::Float64, 2)),
                    RuntimeError);
  // Integer products take float alpha / beta truncated, as torch's CPU
  // addmm: beta 0.5 is 0 (the addend is skipped), alpha 0.5 is 0.
  Tensor i23 = rand_t({2, 3}, DType::Int32, 1);
  Tensor i22 = rand_t({2, 2}, DType::Int32, 2);
  REQUIRE(values(addmm(i22, i23, i23.t(), 0.5)) ==
          values(mm(i23, i23.t())));
  REQUIRE(values(addmm(i22, i23, i23.t(), 1, 0.5)) == values(i22));
  // bool has no gemm kernel (explicitly unsupported).
  Tensor b23 = rand_t({2, 3}, DType::Bool, 1);
  REQUIRE_THROWS_AS(mm(b23, b23.t()), NotImplementedError);
  REQUIRE_THROWS_AS(matmul(rand_t({3}, DType::Bool, 1),
                           rand_t({3}, DType::Bool, 2)),
                    NotImplementedError);
  // Undefined tensors.
  REQUIRE_THROWS_AS(matmul(Tensor(), m23), ValueError);
  REQUIRE_THROWS_AS(linear(m23, Tensor()), ValueError);
}

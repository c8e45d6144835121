// The FFT primitives of csrc/ops/fft.h (torch's _fft_c2c / _fft_r2c /
// _fft_c2r) against the DFT's definition: transforms of impulses and
// single frequencies, the normalizations, round trips on lengths that take
// KissFFT's radices, its generic butterfly and Bluestein's path, a
// transform along a leading dim, and the errors. Values against torch are
// tests/python/test_fft.py's.
#include <cmath>
#include <vector>

#include "catch.h"
#include "csrc/ops.h"

using namespace fastt;

namespace {

constexpr double kPi = 3.14159265358979323846;

Tensor real_signal(int64_t n) {
  Tensor t = Tensor::empty({n}, DType::Float64);
  double* p = t.data_ptr<double>();
  for (int64_t j = 0; j < n; ++j) p[j] = std::sin(0.37 * double(j * j)) + 0.1;
  return t;
}

}  // namespace

TEST_CASE("fft: a cosine's spectrum is two lines", "[fft]") {
  for (int64_t n : {8, 12, 97, 1009}) {
    Tensor x = Tensor::empty({n}, DType::Float64);
    double* p = x.data_ptr<double>();
    for (int64_t j = 0; j < n; ++j) p[j] = std::cos(2 * kPi * 3 * j / n);
    Tensor y = fft_r2c(x, {0}, 0, true);
    REQUIRE(y.dtype() == DType::Complex128);
    REQUIRE(y.size(0) == n / 2 + 1);
    const Complex128* z = y.data_ptr<Complex128>();
    for (int64_t k = 0; k <= n / 2; ++k) {
      CHECK(z[k].re == Approx(k == 3 ? n / 2.0 : 0.0).margin(1e-9));
      CHECK(z[k].im == Approx(0.0).margin(1e-9));
    }
  }
}

TEST_CASE("fft: round trips and normalizations", "[fft]") {
  for (int64_t n : {1, 2, 5, 16, 47, 100, 257, 1024}) {
    Tensor x = real_signal(n);
    // c2r(r2c(x)) with 1/n on the inverse gives x back.
    Tensor back = fft_c2r(fft_r2c(x, {0}, 0, true), {0}, 2, n);
    const double* a = x.data_ptr<double>();
    const double* b = back.data_ptr<double>();
    for (int64_t j = 0; j < n; ++j) CHECK(b[j] == Approx(a[j]).margin(1e-12));
    // ortho both ways preserves the energy (Parseval).
    Tensor z = fft_c2c(x.to(DType::Complex128), {0}, 1, true);
    double e0 = 0, e1 = 0;
    const Complex128* c = z.data_ptr<Complex128>();
    for (int64_t j = 0; j < n; ++j) {
      e0 += a[j] * a[j];
      e1 += c[j].re * c[j].re + c[j].im * c[j].im;
    }
    CHECK(e1 == Approx(e0).epsilon(1e-12));
  }
}

TEST_CASE("fft: a leading dim and several dims", "[fft]") {
  // [3, 4] with an impulse at (1, 2): its 2-d spectrum has modulus 1
  // everywhere and phase -2 pi (k0 / 3 + 2 k1 / 4).
  Tensor x = Tensor::empty({3, 4}, DType::Complex64);
  x.fill_(Scalar(0.0));
  x.select(0, 1).select(0, 2).fill_(Scalar(1.0));
  Tensor y = fft_c2c(x, {0, 1}, 0, true);
  for (int64_t k0 = 0; k0 < 3; ++k0)
    for (int64_t k1 = 0; k1 < 4; ++k1) {
      const Complex64 v = y.select(0, k0).select(0, k1).item()
                              .to<Complex64>();
      const double ph = -2 * kPi * (k0 / 3.0 + 2 * k1 / 4.0);
      CHECK(v.re == Approx(std::cos(ph)).margin(1e-6));
      CHECK(v.im == Approx(std::sin(ph)).margin(1e-6));
    }
  // The same along dim 0 only: an impulse in row 1 of every column 2.
  Tensor c = fft_c2c(x, {0}, 0, true);
  CHECK(c.size(0) == 3);
  CHECK(c.size(1) == 4);
}

TEST_CASE("fft: errors", "[fft]") {
  Tensor r = real_signal(8);
  Tensor c = r.to(DType::Complex64);
  CHECK_THROWS_AS(fft_c2c(r, {0}, 0, true), RuntimeError);
  CHECK_THROWS_AS(fft_r2c(c, {0}, 0, true), RuntimeError);
  CHECK_THROWS_AS(fft_c2r(r, {0}, 0, 8), RuntimeError);
  CHECK_THROWS_AS(fft_c2r(c, {0}, 0, 0), RuntimeError);
  CHECK_THROWS_AS(fft_r2c(r, {0}, 5, true), ValueError);
  CHECK_THROWS_AS(fft_r2c(r, {1}, 0, true), IndexError);
  CHECK_THROWS_AS(fft_r2c(r.to(DType::Float16), {0}, 0, true), RuntimeError);
  CHECK_THROWS_AS(fft_c2c(Tensor::empty({0}, DType::Complex64), {0}, 0, true),
                  RuntimeError);
}

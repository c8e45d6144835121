// complex64 / complex128 in the core: Complex<T>'s arithmetic (Smith's
// division and its zero-divisor cases, as torch's c10::complex), complex
// Scalars, the elementwise rows with complex kernels, sums, the real
// views, printing and autograd (test_complex_autograd.py has the rest).
// Promotion is test_promotion.cpp's.
#include <cmath>
#include <limits>
#include <string>

#include "catch.h"
#include "csrc/ops.h"

using namespace fastt;

namespace {

template <class T>
Tensor make(std::initializer_list<Complex<T>> v) {
  Tensor t = Tensor::empty({int64_t(v.size())}, dtype_of<Complex<T>>);
  Complex<T>* p = static_cast<Complex<T>*>(t.data_ptr());
  for (const Complex<T>& z : v) *p++ = z;
  return t;
}

template <class T>
Complex<T> at(const Tensor& t, int64_t i) {
  return t.select(0, i).item().to<Complex<T>>();
}

}  // namespace

TEST_CASE("Complex arithmetic", "[complex]") {
  using C = Complex128;
  const C a(1, 2), b(3, -4);
  CHECK((a + b) == C(4, -2));
  CHECK((a - b) == C(-2, 6));
  CHECK((a * b) == C(11, 2));
  const C q = a / b;  // (1+2j)/(3-4j) = -0.2+0.4j
  CHECK(q.re == Approx(-0.2));
  CHECK(q.im == Approx(0.4));
  CHECK(-a == C(-1, -2));
  CHECK(conj(a) == C(1, -2));
  CHECK(complex_abs(C(3, 4)) == 5.0);
  // Smith's scaling: |b|^2 would overflow double here
  const C big = C(1e300, 1e300) / C(1e300, -1e300);
  CHECK(big.re == Approx(0.0).margin(1e-12));
  CHECK(big.im == Approx(1.0));
  // zero divisors, as torch: 1/0 = inf+nanj, (1+1j)/0 = inf+infj
  const C z1 = C(1, 0) / C(0, 0);
  CHECK(std::isinf(z1.re));
  CHECK(std::isnan(z1.im));
  const C z2 = C(1, 1) / C(0, 0);
  CHECK((std::isinf(z2.re) && std::isinf(z2.im)));
  const C z3 = C(0, 0) / C(0, 0);
  CHECK((std::isnan(z3.re) && std::isnan(z3.im)));
  // conversions: real part to a real type, either part to bool
  CHECK(static_cast<double>(C(2.5, 7)) == 2.5);
  CHECK(static_cast<bool>(C(0, 1)));
  CHECK(!static_cast<bool>(C(0, 0)));
  CHECK(Complex64(C(1.5, -2)) == Complex64(1.5f, -2.f));
}

TEST_CASE("complex Scalars", "[complex]") {
  const Scalar s(Complex128(1.5, -2));
  CHECK(s.is_complex());
  CHECK(!s.is_floating());
  CHECK(s.to_double() == 1.5);
  CHECK(s.imag() == -2);
  CHECK(s.to_bool());
  CHECK(s.to<Complex64>() == Complex64(1.5f, -2.f));
  CHECK(Scalar(2.5).to<Complex128>() == Complex128(2.5, 0));
  CHECK(Scalar(int64_t(3)).to<Complex64>() == Complex64(3, 0));
  CHECK(s.natural_dtype() == DType::Complex64);
}

TEST_CASE("complex elementwise rows", "[complex]") {
  const Tensor a = make<double>({{1, 2}, {3, -4}, {0, 1}});
  const Tensor b = make<double>({{3, -4}, {1, 1}, {0, 1}});
  CHECK(at<double>(add(a, b), 0) == Complex128(4, -2));
  CHECK(at<double>(sub(a, b), 1) == Complex128(2, -5));
  CHECK(at<double>(mul(a, b), 0) == Complex128(11, 2));
  const Complex128 q = at<double>(div(a, b), 0);
  CHECK(q.re == Approx(-0.2));
  CHECK(q.im == Approx(0.4));
  CHECK(at<double>(neg(a), 1) == Complex128(-3, 4));
  const Tensor e = eq(a, b);
  CHECK(e.dtype() == DType::Bool);
  CHECK(!e.select(0, 0).item().to_bool());
  CHECK(e.select(0, 2).item().to_bool());
  // a complex alpha: a + (2-1j) b
  CHECK(at<double>(add(a, b, Scalar(Complex128(2, -1))), 0) ==
        Complex128(1 + 2, 2 - 11));
  // with a real tensor: promoted (float64 -> complex128)
  Tensor r = Tensor::empty({3}, DType::Float64);
  r.fill_(Scalar(2.0));
  const Tensor m = mul(a, r);
  CHECK(m.dtype() == DType::Complex128);
  CHECK(at<double>(m, 1) == Complex128(6, -8));
  // with a Python complex number: float32 * 1j -> complex64
  Tensor f = Tensor::empty({2}, DType::Float32);
  f.fill_(Scalar(3.0));
  const Tensor fj = mul(f, Scalar(Complex128(0, 1)));
  CHECK(fj.dtype() == DType::Complex64);
  CHECK(at<float>(fj, 0) == Complex64(0, 3));
  // the library's complex functions: exp(i) = cos 1 + i sin 1
  const Complex128 ei = at<double>(exp(a), 2);
  CHECK(ei.re == std::cos(1.0));
  CHECK(ei.im == std::sin(1.0));
  // 2^i = exp(i ln 2)
  const Complex128 e2 = at<double>(exp2(a), 2);
  CHECK(std::abs(e2.re - std::cos(M_LN2)) < 1e-15);
  CHECK(std::abs(e2.im - std::sin(M_LN2)) < 1e-15);
  // ops without complex kernels raise, naming op and dtype
  bool raised = false;
  try {
    erf(a);
  } catch (const Error& err) {
    raised = std::string(err.what()).find("complex128") != std::string::npos;
  }
  CHECK(raised);
}

TEST_CASE("complex sums, views and printing", "[complex]") {
  const Tensor a = make<float>({{1, 2}, {3, -4}, {0.5f, 0}});
  const Tensor s = sum(a);
  CHECK(s.dtype() == DType::Complex64);
  CHECK(s.item().to<Complex64>() == Complex64(4.5f, -2));
  CHECK(mean(a).item().to<Complex64>() == Complex64(1.5f, -2.f / 3));
  const Tensor r = view_as_real(a);
  CHECK(r.dtype() == DType::Float32);
  CHECK(r.dim() == 2);
  CHECK(r.sizes()[1] == 2);
  CHECK(r.strides()[0] == 2);
  CHECK(r.data_ptr() == a.data_ptr());
  CHECK(view_as_complex(r).data_ptr() == a.data_ptr());
  CHECK(imag_part(a).select(0, 1).item().to_double() == -4);
  CHECK(real_part(a).select(0, 2).item().to_double() == 0.5);
  CHECK(a.str() == "tensor([1.0000+2.j, 3.0000-4.j, 0.5000+0.j])");
  CHECK(make<double>({{1, 0}}).str() ==
        "tensor([1.+0.j], dtype=fastt.complex128)");
  Tensor odd = Tensor::empty({3}, DType::Float32);
  CHECK_THROWS_AS(view_as_complex(odd), RuntimeError);
  CHECK_THROWS_AS(imag_part(odd), RuntimeError);
}

TEST_CASE("complex autograd through the C++ API", "[complex][autograd]") {
  // L = Re(sum(conj(w) * z * w)) = sum |w|^2 Re(z): dL/dz = |w|^2 (torch's
  // convention, dL/dRe z + i dL/dIm z), dL/dw = 2 Re(z) w.
  Tensor z = make<double>({{1, 2}, {-3, 0.5}});
  Tensor w = make<double>({{0.5, -1}, {2, 3}});
  requires_grad_(z);
  requires_grad_(w);
  Tensor y = mul(mul(conj_physical(w), z), w);
  CHECK(std::string(grad_fn_name(y)) == "MulBackward0");
  backward(real_part(sum(y)));
  CHECK(at<double>(grad(z), 0) == Complex128(1.25, 0));
  CHECK(at<double>(grad(z), 1) == Complex128(13, 0));
  CHECK(at<double>(grad(w), 0) == Complex128(1, -2));
  CHECK(at<double>(grad(w), 1) == Complex128(-12, -18));
  // |z| is real; its gradient z / |z| (0 at 0).
  Tensor u = make<double>({{3, 4}, {0, 0}});
  requires_grad_(u);
  backward(sum(abs(u)));
  const Complex128 g0 = at<double>(grad(u), 0);
  CHECK(std::abs(g0.re - 0.6) < 1e-15);
  CHECK(std::abs(g0.im - 0.8) < 1e-15);
  CHECK(at<double>(grad(u), 1) == Complex128(0, 0));
  // A formula that is still real-only refuses instead of recording.
  CHECK_THROWS_AS(embedding(u.reshape({2, 1}), arange(Scalar(int64_t(2)))),
                  NotImplementedError);
}

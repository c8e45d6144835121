// CPU kernels of the discrete Fourier transforms (ops.def's fft rows). Each
// transforms the rows of a dense [B, n] buffer along its last dim; the op
// layer (csrc/ops/fft.cpp) moves the transformed dim last, pads or trims to
// n and folds several dims into one call each. Unnormalized DFTs times f0:
//
//   fft_c2c  out complex [B, n] = f0 * DFT_n(in0 complex [B, n]); i0 = n,
//            i1 = 1 forward (exp(-2 pi i jk / n)), 0 inverse (exp(+...))
//   fft_r2c  out complex [B, n/2+1] (i1 = 1, onesided) or [B, n] = f0 *
//            forward DFT_n(in0 real [B, n]); i0 = n
//   fft_c2r  out real [B, n] = f0 * inverse DFT_n of the Hermitian signal
//            whose first n/2+1 values are in0 [B, n/2+1]; i0 = n. As
//            pocketfft (NumPy's, torch's), the imaginary parts of the zero-
//            frequency and (n even) Nyquist values are not read.
//
// Complex transforms of power-of-two length are fastt's own radix-4
// Stockham loops (Pow2Dft, about twice KissFFT's speed there); the other
// lengths are KissFFT's (kissfft.hh, the header-only template: float and
// double, any length, BSD-3; README's dependency table says why this
// library). Where n has a large prime factor p, KissFFT's generic
// butterfly costs O(n p); those lengths go through Bluestein's chirp-z
// algorithm instead, a cyclic convolution of power-of-two length. Real
// transforms of even length run as a complex transform of half the length
// (the even and odd samples as real and imaginary parts) plus one pass
// that separates the two spectra.
//
// Plans (twiddles, Bluestein's filter, scratch) are cached per thread, so
// the rows of one call run in parallel and a repeated length costs no setup.
#include <kissfft/kissfft.hh>

#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/cpu/loop.h"

namespace fastt {
namespace {
using namespace cpu;

constexpr double kPi = 3.14159265358979323846;

// exp(sign * 2 pi i * num / den), the angle reduced exactly first.
template <class R>
std::complex<R> unit_root(int64_t num, int64_t den, int sign) {
  num %= den;
  const double a = sign * 2.0 * kPi * double(num) / double(den);
  return {R(std::cos(a)), R(std::sin(a))};
}

int64_t largest_prime_factor(int64_t n) {
  int64_t p = 1;
  for (int64_t f = 2; f * f <= n; ++f)
    while (n % f == 0) {
      p = f;
      n /= f;
    }
  return n > 1 ? n : p;
}

// KissFFT's cost for n: its radix-2..5 butterflies cost about their radix
// per element; larger factors go through the generic one (about 2p).
double direct_cost(int64_t n) {
  double c = 0;
  int64_t r = n;
  for (int64_t f = 2; f * f <= r; ++f)
    while (r % f == 0) {
      c += f <= 5 ? double(f) : 2.0 * double(f);
      r /= f;
    }
  if (r > 1) c += r <= 5 ? double(r) : 2.0 * double(r);
  return double(n) * c;
}

// A complex DFT of power-of-two length: Stockham's autosort algorithm,
// radix 4 (one radix-2 stage last where log2 n is odd), ping-ponging
// between the output and a work buffer so that no bit reversal pass is
// needed and every stage reads and writes runs of unit stride. About twice
// KissFFT's speed at 256-64K points (its recursive decimation in time
// strides through memory); the twiddles of every stage are precomputed.
template <class R>
class Pow2Dft {
 public:
  using C = std::complex<R>;

  Pow2Dft(int64_t n, bool inverse)
      : n_(n), inverse_(inverse), work_(size_t(n)) {
    const int sign = inverse ? 1 : -1;
    for (int64_t len = n; len >= 4; len /= 4) {
      ++stages_;
      for (int64_t p = 0; p < len / 4; ++p)
        for (int64_t k = 1; k <= 3; ++k)
          tw_.push_back(unit_root<R>(k * p, len, sign));
    }
  }

  // out = DFT(in); in and out are n values each and must not overlap.
  void run(const C* in, C* out) {
    const bool radix2 = (n_ >> (2 * stages_)) == 2;
    const int total = stages_ + (radix2 ? 1 : 0);
    if (total == 0) {
      out[0] = in[0];
      return;
    }
    const C* src = in;
    const C* t = tw_.data();
    int64_t m = n_ / 4, s = 1;
    for (int st = 0; st < stages_; ++st, m /= 4, s *= 4) {
      // The last stage writes out; the ones before alternate back from it.
      C* dst = (total - 1 - st) % 2 == 0 ? out : work_.data();
      if (inverse_)
        stage<true>(src, dst, t, m, s);
      else
        stage<false>(src, dst, t, m, s);
      t += 3 * m;
      src = dst;
    }
    if (radix2)
      for (int64_t q = 0; q < s; ++q) {
        const C a = src[q], b = src[q + s];
        out[q] = a + b;
        out[q + s] = a - b;
      }
  }

 private:
  // One radix-4 stage: m butterflies of s columns each, x[q + s (p + k m)]
  // -> y[q + s (4 p + k)] with the twiddles w^kp of the stage's length.
  template <bool Inverse>
  static void stage(const C* x, C* y, const C* t, int64_t m, int64_t s) {
    auto butterfly = [](C a, C b, C c, C d, C w1, C w2, C w3, C* o,
                        int64_t s) {
      const C apc = a + c, amc = a - c, bpd = b + d, bmd = b - d;
      // (b - d) times -i (forward) or +i (inverse)
      const C jb = Inverse ? C(-bmd.imag(), bmd.real())
                           : C(bmd.imag(), -bmd.real());
      o[0] = apc + bpd;
      o[s] = w1 * (amc + jb);
      o[2 * s] = w2 * (apc - bpd);
      o[3 * s] = w3 * (amc - jb);
    };
    if (s == 1) {  // the first stage: unit-stride runs over p instead
      for (int64_t p = 0; p < m; ++p)
        butterfly(x[p], x[p + m], x[p + 2 * m], x[p + 3 * m], t[3 * p],
                  t[3 * p + 1], t[3 * p + 2], y + 4 * p, 1);
      return;
    }
    for (int64_t p = 0; p < m; ++p) {
      const C w1 = t[3 * p], w2 = t[3 * p + 1], w3 = t[3 * p + 2];
      const C* a = x + s * p;
      const C* b = x + s * (p + m);
      const C* c = x + s * (p + 2 * m);
      const C* d = x + s * (p + 3 * m);
      C* o = y + 4 * s * p;
      for (int64_t q = 0; q < s; ++q)
        butterfly(a[q], b[q], c[q], d[q], w1, w2, w3, o + q, s);
    }
  }

  int64_t n_;
  bool inverse_;
  int stages_ = 0;
  std::vector<C> tw_;  // per stage, per p: w^p, w^2p, w^3p
  std::vector<C> work_;
};

// One complex DFT of a fixed length and direction.
template <class R>
class ComplexPlan {
 public:
  using C = std::complex<R>;

  ComplexPlan(int64_t n, bool inverse) : n_(n) {
    if ((n & (n - 1)) == 0) {
      pow2_ = std::make_unique<Pow2Dft<R>>(n, inverse);
      return;
    }
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    const double lg = std::log2(double(m));
    // Two power-of-two transforms of length m and three pointwise passes.
    const double bluestein = 2.0 * double(m) * 2.0 * lg + 3.0 * double(m);
    if (largest_prime_factor(n) <= 5 || direct_cost(n) <= 1.5 * bluestein) {
      direct_ = std::make_unique<kissfft<R>>(size_t(n), inverse);
      return;
    }
    // Bluestein: with w_k = exp(-+ i pi k^2 / n), X_k = w_k * sum_j
    // (x_j w_j) conj(w_{k-j}): a convolution with the chirp, done cyclically
    // over m >= 2n - 1 points.
    m_ = m;
    const int sign = inverse ? 1 : -1;
    chirp_.resize(size_t(n));
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n, exactly (k^2 itself may not fit in 64 bits).
      const int64_t k2 = int64_t((unsigned __int128)(k) * k % (2 * n));
      chirp_[size_t(k)] = unit_root<R>(k2, 2 * n, sign);
    }
    fwd_ = std::make_unique<Pow2Dft<R>>(m, false);
    inv_ = std::make_unique<Pow2Dft<R>>(m, true);
    std::vector<C> b(size_t(m), C(0, 0));
    b[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k)
      b[size_t(k)] = b[size_t(m - k)] = std::conj(chirp_[size_t(k)]);
    filter_.resize(size_t(m));
    fwd_->run(b.data(), filter_.data());
    const R inv_m = R(1) / R(m);
    for (C& f : filter_) f *= inv_m;
    a_.resize(size_t(m));
    fa_.resize(size_t(m));
  }

  // out = DFT(in); in and out are n values each and must not overlap.
  void run(const C* in, C* out) {
    if (pow2_) {
      pow2_->run(in, out);
      return;
    }
    if (direct_) {
      direct_->transform(in, out);
      return;
    }
    const size_t n = size_t(n_), m = size_t(m_);
    for (size_t k = 0; k < n; ++k) a_[k] = in[k] * chirp_[k];
    for (size_t k = n; k < m; ++k) a_[k] = C(0, 0);
    fwd_->run(a_.data(), fa_.data());
    for (size_t k = 0; k < m; ++k) fa_[k] *= filter_[k];
    inv_->run(fa_.data(), a_.data());
    for (size_t k = 0; k < n; ++k) out[k] = a_[k] * chirp_[k];
  }

 private:
  int64_t n_;
  std::unique_ptr<Pow2Dft<R>> pow2_;     // n a power of two
  std::unique_ptr<kissfft<R>> direct_;  // n of small prime factors
  int64_t m_ = 0;                       // Bluestein's: the rest
  std::unique_ptr<Pow2Dft<R>> fwd_, inv_;
  std::vector<C> chirp_, filter_, a_, fa_;
};

enum class Kind { Forward, Inverse, R2c, C2r };

// Everything one thread needs for one (length, kind): the complex plan (of
// n, or of n/2 for real transforms of even length), the twiddles that
// separate or join the half-length spectra, and row-sized scratch.
template <class R>
struct Plan {
  using C = std::complex<R>;
  Plan(int64_t n, Kind kind)
      : real(kind == Kind::R2c || kind == Kind::C2r),
        half(real && n % 2 == 0),
        dft(half ? n / 2 : n, kind == Kind::Inverse || kind == Kind::C2r),
        buf(real ? size_t(n) : 0, C(0, 0)),
        buf2(real ? size_t(n) : 0, C(0, 0)) {
    if (half) {
      tw.resize(size_t(n / 2 + 1));
      for (int64_t k = 0; k <= n / 2; ++k)
        tw[size_t(k)] = unit_root<R>(k, n, -1);
    }
  }
  bool real;  // r2c or c2r (the rows go through buf / buf2)
  bool half;  // a real transform through a complex one of length n/2
  ComplexPlan<R> dft;
  std::vector<C> tw;  // exp(-2 pi i k / n), k <= n/2 (half only)
  std::vector<C> buf, buf2;  // row scratch (real kinds only)
};

template <class R>
using PlanCache =
    std::map<std::pair<int64_t, Kind>, std::unique_ptr<Plan<R>>>;

// The calling thread's plans: one pointer per R in the TLS block (its
// budget: tests/python/test_static_tls.py), the map on the heap.
template <class R>
Plan<R>& plan_for(int64_t n, Kind kind) {
  thread_local std::unique_ptr<PlanCache<R>> owner;
  if (!owner) owner = std::make_unique<PlanCache<R>>();
  PlanCache<R>& cache = *owner;
  auto key = std::make_pair(n, kind);
  auto it = cache.find(key);
  if (it != cache.end()) return *it->second;
  if (cache.size() >= 16) cache.clear();  // bound a thread's memory
  auto p = std::make_unique<Plan<R>>(n, kind);
  Plan<R>& ref = *p;
  cache.emplace(key, std::move(p));
  return ref;
}

// Rows per thread: about 32K complex values of work each.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, 32768 / n); }

template <class C, class R>
void scale_row(C* x, int64_t count, R s) {
  if (s == R(1)) return;
  for (int64_t k = 0; k < count; ++k) x[k] *= s;
}

template <class T>  // T = Complex<R>
struct FftC2cK {
  static void run(KernelArgs& a) {
    using R = typename T::value_type;
    using C = std::complex<R>;
    const int64_t n = a.i0;
    const Kind kind = a.i1 ? Kind::Forward : Kind::Inverse;
    const C* in = reinterpret_cast<const C*>(
        a.in[0]->template data_ptr<T>());
    C* out = reinterpret_cast<C*>(a.out->template data_ptr<T>());
    const int64_t rows = n > 0 ? a.out->numel() / n : 0;
    const R s = R(a.f0);
    parallel_for(0, rows, row_grain(n), [&](int64_t b0, int64_t b1) {
      Plan<R>& p = plan_for<R>(n, kind);
      for (int64_t b = b0; b < b1; ++b) {
        p.dft.run(in + b * n, out + b * n);
        scale_row(out + b * n, n, s);
      }
    });
  }
};

// One row of fft_r2c: y = s * DFT_n(x), n_out values (n/2 + 1 or n).
template <class R>
void r2c_row(Plan<R>& p, int64_t n, const R* x, std::complex<R>* y,
             bool onesided, R s) {
  using C = std::complex<R>;
  const int64_t N = n / 2;
  if (p.half) {
    // z = x[2j] + i x[2j+1]; Z = DFT_N(z); the spectra of the even and odd
    // samples are E = (Z_k + conj Z_{N-k}) / 2 and O = (Z_k - conj
    // Z_{N-k}) / 2i, and X_k = E_k + w^k O_k.
    C* z = p.buf.data();
    p.dft.run(reinterpret_cast<const C*>(x), z);
    for (int64_t k = 0; k <= N; ++k) {
      const C zk = z[k == N ? 0 : k];
      const C zc = std::conj(z[k == 0 ? 0 : N - k]);
      const C e = (zk + zc) * R(0.5);
      const C d = zk - zc;
      const C o(d.imag() * R(0.5), -d.real() * R(0.5));
      y[k] = (e + p.tw[size_t(k)] * o) * s;
    }
  } else {
    C* z = p.buf.data();
    for (int64_t k = 0; k < n; ++k) z[k] = C(x[k], 0);
    p.dft.run(z, p.buf2.data());
    for (int64_t k = 0; k <= N; ++k) y[k] = p.buf2[size_t(k)] * s;
  }
  if (!onesided)
    for (int64_t k = N + 1; k < n; ++k) y[k] = std::conj(y[n - k]);
}

// One row of fft_c2r: y = s * inverse DFT_n of the Hermitian signal whose
// first n/2 + 1 values are x.
template <class R>
void c2r_row(Plan<R>& p, int64_t n, const std::complex<R>* x, R* y, R s) {
  using C = std::complex<R>;
  const int64_t N = n / 2;
  // The zero-frequency value (and the Nyquist one) read as real.
  const C x0(x[0].real(), 0);
  if (p.half) {
    // The inverse of r2c's split: Z_k = (X_k + conj X_{N-k}) + i (X_k -
    // conj X_{N-k}) conj(w^k), z = inverse DFT_N(Z), and the real output
    // interleaves z's real and imaginary parts.
    const C xn(x[N].real(), 0);
    C* zin = p.buf.data();
    for (int64_t k = 0; k < N; ++k) {
      const C xk = k == 0 ? x0 : x[k];
      const C xc = std::conj(k == 0 ? xn : x[N - k]);
      const C d = (xk - xc) * std::conj(p.tw[size_t(k)]);
      zin[k] = (xk + xc) + C(-d.imag(), d.real());
    }
    C* z = p.buf2.data();
    p.dft.run(zin, z);
    for (int64_t j = 0; j < N; ++j) {
      y[2 * j] = z[j].real() * s;
      y[2 * j + 1] = z[j].imag() * s;
    }
  } else {
    C* full = p.buf.data();
    full[0] = x0;
    for (int64_t k = 1; k <= N; ++k) {
      full[k] = x[k];
      full[n - k] = std::conj(x[k]);
    }
    C* z = p.buf2.data();
    p.dft.run(full, z);
    for (int64_t j = 0; j < n; ++j) y[j] = z[j].real() * s;
  }
}

template <class R>
struct FftR2cK {
  static void run(KernelArgs& a) {
    using C = std::complex<R>;
    const int64_t n = a.i0;
    const bool onesided = a.i1 != 0;
    const int64_t n_out = onesided ? n / 2 + 1 : n;
    const R* in = a.in[0]->template data_ptr<R>();
    C* out = reinterpret_cast<C*>(a.out->template data_ptr<Complex<R>>());
    const int64_t rows = n > 0 ? a.out->numel() / n_out : 0;
    const R s = R(a.f0);
    parallel_for(0, rows, row_grain(n), [&](int64_t b0, int64_t b1) {
      Plan<R>& p = plan_for<R>(n, Kind::R2c);
      for (int64_t b = b0; b < b1; ++b)
        r2c_row(p, n, in + b * n, out + b * n_out, onesided, s);
    });
  }
};

template <class T>  // T = Complex<R>
struct FftC2rK {
  static void run(KernelArgs& a) {
    using R = typename T::value_type;
    using C = std::complex<R>;
    const int64_t n = a.i0, n_in = n / 2 + 1;
    const C* in = reinterpret_cast<const C*>(a.in[0]->template data_ptr<T>());
    R* out = a.out->template data_ptr<R>();
    const int64_t rows = n > 0 ? a.out->numel() / n : 0;
    const R s = R(a.f0);
    parallel_for(0, rows, row_grain(n), [&](int64_t b0, int64_t b1) {
      Plan<R>& p = plan_for<R>(n, Kind::C2r);
      for (int64_t b = b0; b < b1; ++b)
        c2r_row(p, n, in + b * n_in, out + b * n, s);
    });
  }
};

}  // namespace

void register_fft_kernels() {
#define FASTT_KERNELS_fft
#include "kernels/kernels.def"
}

}  // namespace fastt

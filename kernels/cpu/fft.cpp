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
// Stockham loops (Pow2Dft, about twice KissFFT's speed there; batches of
// rows of one length run 4, 8 or 16 at a time in SIMD lanes through
// radix-8 passes, lane_rows); the other
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
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/cpu/loop.h"
#include "kernels/cpu/vec_clones.h"

namespace fastt {
namespace {
using namespace cpu;

constexpr double kPi = 3.14159265358979323846;

// The loop that follows carries no dependence (its pointers' runs never
// overlap): GCC vectorizes it without runtime alias checks (it gives up
// on them past ten pointers). Clang (the fuzz build) goes without: its
// assume_safety form warns on the radix-8 loop it unrolls instead.
#if defined(__GNUC__) && !defined(__clang__)
#define FASTT_IVDEP _Pragma("GCC ivdep")
#else
#define FASTT_IVDEP
#endif

// The longest complex transform the lane path takes (use_lanes).
constexpr int64_t kMaxLaneLength = 4096;

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

  // lanes: also the radix-8 twiddles of the lane path (lane_dft).
  Pow2Dft(int64_t n, bool inverse, bool lanes = false)
      : n_(n), inverse_(inverse), work_(size_t(n)) {
    const int sign = inverse ? 1 : -1;
    for (int64_t len = n; len >= 4; len /= 4) {
      ++stages_;
      for (int64_t p = 0; p < len / 4; ++p)
        for (int64_t k = 1; k <= 3; ++k)
          tw_.push_back(unit_root<R>(k * p, len, sign));
    }
    // The lane path's radix-8 stages (lane_stage8), then one of radix 4
    // (its twiddles all 1) or 2 for what is left.
    if (!lanes) return;
    for (int64_t len = n; len >= 8; len /= 8) {
      ++stages8_;
      for (int64_t p = 0; p < len / 8; ++p)
        for (int64_t k = 1; k <= 7; ++k)
          tw8_.push_back(unit_root<R>(k * p, len, sign));
    }
    tw8_.insert(tw8_.end(), 3, C(1, 0));
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

  int64_t size() const { return n_; }
  bool inverse() const { return inverse_; }
  int stages8() const { return stages8_; }
  const C* twiddles8() const { return tw8_.data(); }

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
  int stages_ = 0, stages8_ = 0;
  std::vector<C> tw_;   // per stage, per p: w^p, w^2p, w^3p
  std::vector<C> tw8_;  // per radix-8 stage, per p: w^p ... w^7p
  std::vector<C> work_;
};

// One complex DFT of a fixed length and direction.
template <class R>
class ComplexPlan {
 public:
  using C = std::complex<R>;

  ComplexPlan(int64_t n, bool inverse) : n_(n) {
    if ((n & (n - 1)) == 0) {
      pow2_ = std::make_unique<Pow2Dft<R>>(n, inverse,
                                           n <= kMaxLaneLength);
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

  // The power-of-two transform, or null.
  const Pow2Dft<R>* pow2() const { return pow2_.get(); }

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

// ---- Many rows at once: the lane layout ----
// A batch of rows of one power-of-two length runs L rows (lanes) at once.
// Value k of lane (row) l lives at [k * L + l], real and imaginary parts
// in separate arrays, so one Stockham butterfly of the rows' values is a
// run of s * L contiguous parts: every pass vectorizes, the first (s = 1)
// included, with the twiddles broadcast. Row at a time, the interleaved
// parts and the first passes' short runs left the loops scalar: 64 rows
// of 1024 points took 4.9x torch's time. L is 4, 8 or 16 (lane_count):
// the passes read and write the whole layout, 2 c L values, and more
// lanes than the L1 cache holds made them L2-bound (8 and 16 lanes were
// no faster than 4 at 512 points; at 64, 16 lanes took a 64 x 64 fft2
// from 16 to 12 us). The rows go
// into and out of the layout through transposed tiles (lanes_in,
// lanes_out). The entry point is FASTT_VEC_CLONES: AVX-512, AVX2 and
// baseline clones, one picked at load.
template <class R>
constexpr int64_t kMaxLanes = 64 / int64_t(sizeof(R));

// Lanes per group (lane_count): as many as keep the Stockham passes' two
// arrays of 2 c L parts within 32 KB (the L1 cache; more lanes were no
// faster once L2-bound), between 4 and one 64-byte register's worth, and
// above 4 no more than the rows: floats 16 up to 128 values, 8 at 256, 4
// from 512; doubles 8 up to 128, then 4.
template <class R>
int64_t lane_count(int64_t c, int64_t rows) {
  int64_t L = 4;
  while (2 * L <= kMaxLanes<R> && 2 * L <= rows &&
         4 * c * 2 * L * int64_t(sizeof(R)) <= 32768)
    L *= 2;
  return L;
}

// Rows that take the lane path: a power-of-two complex length (the real
// kinds': n / 2, n even) of at most 4096 values (longer rows' layout
// outgrows the L2 cache), at least two of them (one row alone runs faster
// in the row loops: 4 vs 5 us at 1024 points, 15 vs 28 at 4096).
template <class R>
bool use_lanes(int64_t n, Kind kind, int64_t rows) {
  const bool real = kind == Kind::R2c || kind == Kind::C2r;
  if (real && n % 2 != 0) return false;
  const int64_t c = real ? n / 2 : n;
  return c >= 1 && (c & (c - 1)) == 0 && c <= kMaxLaneLength && rows >= 2;
}

// One radix-4 Stockham stage over the lane layout (Pow2Dft::stage's
// indices, each value a run of L lanes): run = s * L.
template <class R, int64_t L, bool Inverse>
FASTT_VEC_INLINE void lane_stage(const R* __restrict xr,
                                 const R* __restrict xi, R* __restrict yr,
                                 R* __restrict yi, const std::complex<R>* t,
                                 int64_t m, int64_t run) {
  const int64_t q = run * m;  // from one input quarter to the next
  for (int64_t p = 0; p < m; ++p) {
    const R w1r = t[3 * p].real(), w1i = t[3 * p].imag();
    const R w2r = t[3 * p + 1].real(), w2i = t[3 * p + 1].imag();
    const R w3r = t[3 * p + 2].real(), w3i = t[3 * p + 2].imag();
    for (int64_t j0 = 0; j0 < run; j0 += L) {
      const int64_t x = run * p + j0, y = 4 * run * p + j0;
      // One vector (or two, four) of lanes: a fixed trip count.
      FASTT_IVDEP
      for (int64_t l = 0; l < L; ++l) {
        const R ar = xr[x + l], ai = xi[x + l];
        const R br = xr[x + q + l], bi = xi[x + q + l];
        const R cr = xr[x + 2 * q + l], ci = xi[x + 2 * q + l];
        const R dr = xr[x + 3 * q + l], di = xi[x + 3 * q + l];
        const R apcr = ar + cr, apci = ai + ci;
        const R amcr = ar - cr, amci = ai - ci;
        const R bpdr = br + dr, bpdi = bi + di;
        const R bmdr = br - dr, bmdi = bi - di;
        // (b - d) times -i (forward) or +i (inverse)
        const R jr = Inverse ? -bmdi : bmdi, ji = Inverse ? bmdr : -bmdr;
        const R t1r = amcr + jr, t1i = amci + ji;
        const R t2r = apcr - bpdr, t2i = apci - bpdi;
        const R t3r = amcr - jr, t3i = amci - ji;
        yr[y + l] = apcr + bpdr;
        yi[y + l] = apci + bpdi;
        yr[y + run + l] = w1r * t1r - w1i * t1i;
        yi[y + run + l] = w1r * t1i + w1i * t1r;
        yr[y + 2 * run + l] = w2r * t2r - w2i * t2i;
        yi[y + 2 * run + l] = w2r * t2i + w2i * t2r;
        yr[y + 3 * run + l] = w3r * t3r - w3i * t3i;
        yi[y + 3 * run + l] = w3r * t3i + w3i * t3r;
      }
    }
  }
}

// One radix-8 Stockham stage over the lane layout: m butterflies of run
// = s * L lanes each, x[q + s (p + k m)] -> y[q + s (8 p + k)] times
// w^kp. Each butterfly is a radix-2 step (a_j +- a_{j+4}), the differences
// turned by W8^j, and two 4-point DFTs (the even and the odd outputs).
// Fewer passes over the layout than radix 4: 3 instead of 5 at 512.
template <class R, int64_t L, bool Inverse>
FASTT_VEC_INLINE void lane_stage8(const R* __restrict xr,
                                  const R* __restrict xi, R* __restrict yr,
                                  R* __restrict yi, const std::complex<R>* t,
                                  int64_t m, int64_t run) {
  constexpr R h = R(0.70710678118654752440);  // sqrt(1/2)
  const int64_t q = run * m;
  for (int64_t p = 0; p < m; ++p) {
    const R* w = reinterpret_cast<const R*>(t + 7 * p);  // w^kp: w[2k - 2]
    for (int64_t j0 = 0; j0 < run; j0 += L) {
      const int64_t x = run * p + j0, y = 8 * run * p + j0;
      FASTT_IVDEP
      for (int64_t l = 0; l < L; ++l) {
        R br[4], bi[4], cr[4], ci[4];
        for (int j = 0; j < 4; ++j) {
          const R ar = xr[x + j * q + l], ai = xi[x + j * q + l];
          const R er = xr[x + (j + 4) * q + l];
          const R ei = xi[x + (j + 4) * q + l];
          br[j] = ar + er;
          bi[j] = ai + ei;
          cr[j] = ar - er;
          ci[j] = ai - ei;
        }
        // c_j times W8^j: forward W8 = (1 - i) / sqrt 2, inverse its
        // conjugate.
        {
          const R r1 = cr[1], i1 = ci[1], r2 = cr[2], i2 = ci[2];
          const R r3 = cr[3], i3 = ci[3];
          if (Inverse) {
            cr[1] = (r1 - i1) * h;
            ci[1] = (r1 + i1) * h;
            cr[2] = -i2;
            ci[2] = r2;
            cr[3] = -(r3 + i3) * h;
            ci[3] = (r3 - i3) * h;
          } else {
            cr[1] = (r1 + i1) * h;
            ci[1] = (i1 - r1) * h;
            cr[2] = i2;
            ci[2] = -r2;
            cr[3] = (i3 - r3) * h;
            ci[3] = -(r3 + i3) * h;
          }
        }
        R orr[8], oi[8];
        // 4-point DFTs: b gives the even outputs, c the odd ones.
        for (int half = 0; half < 2; ++half) {
          const R* vr = half ? cr : br;
          const R* vi = half ? ci : bi;
          const R apcr = vr[0] + vr[2], apci = vi[0] + vi[2];
          const R amcr = vr[0] - vr[2], amci = vi[0] - vi[2];
          const R bpdr = vr[1] + vr[3], bpdi = vi[1] + vi[3];
          const R bmdr = vr[1] - vr[3], bmdi = vi[1] - vi[3];
          const R jr = Inverse ? -bmdi : bmdi, ji = Inverse ? bmdr : -bmdr;
          orr[half] = apcr + bpdr;
          oi[half] = apci + bpdi;
          orr[2 + half] = amcr + jr;
          oi[2 + half] = amci + ji;
          orr[4 + half] = apcr - bpdr;
          oi[4 + half] = apci - bpdi;
          orr[6 + half] = amcr - jr;
          oi[6 + half] = amci - ji;
        }
        yr[y + l] = orr[0];
        yi[y + l] = oi[0];
        for (int k = 1; k < 8; ++k) {
          const R wr = w[2 * k - 2], wi = w[2 * k - 1];
          yr[y + k * run + l] = wr * orr[k] - wi * oi[k];
          yi[y + k * run + l] = wr * oi[k] + wi * orr[k];
        }
      }
    }
  }
}

// out = DFT(in) of every lane: radix-8 stages, then one radix-4 or
// radix-2 stage for what is left, ping-ponging between out and work (n L
// parts per array each) as Pow2Dft::run; in is not written.
template <class R, int64_t L>
FASTT_VEC_INLINE void lane_dft(const Pow2Dft<R>& d, const R* inr,
                               const R* ini, R* outr, R* outi, R* wr,
                               R* wi) {
  const int64_t n = d.size();
  const int stages = d.stages8();
  const int64_t tail = n >> (3 * stages);  // 1, 2 or 4
  const int total = stages + (tail > 1 ? 1 : 0);
  if (total == 0) {
    for (int64_t j = 0; j < L; ++j) {
      outr[j] = inr[j];
      outi[j] = ini[j];
    }
    return;
  }
  const R *sr = inr, *si = ini;
  const std::complex<R>* t = d.twiddles8();
  int64_t m = n / 8, s = 1;
  for (int st = 0; st < stages; ++st, m /= 8, s *= 8) {
    const bool last = (total - 1 - st) % 2 == 0;
    R* dr = last ? outr : wr;
    R* di = last ? outi : wi;
    if (d.inverse())
      lane_stage8<R, L, true>(sr, si, dr, di, t, m, s * L);
    else
      lane_stage8<R, L, false>(sr, si, dr, di, t, m, s * L);
    t += 7 * m;
    sr = dr;
    si = di;
  }
  if (tail == 4) {
    if (d.inverse())
      lane_stage<R, L, true>(sr, si, outr, outi, t, 1, s * L);
    else
      lane_stage<R, L, false>(sr, si, outr, outi, t, 1, s * L);
  } else if (tail == 2) {
    const int64_t run = s * L;
    FASTT_IVDEP
    for (int64_t j = 0; j < run; ++j) {
      const R ar = sr[j], ai = si[j], br = sr[j + run], bi = si[j + run];
      outr[j] = ar + br;
      outi[j] = ai + bi;
      outr[j + run] = ar - br;
      outi[j + run] = ai - bi;
    }
  }
}

// The lane layout's transposes work on L x L tiles held as L vectors of L
// values (GCC's generic vectors, lowered to each clone's instructions),
// transposed by Eklundh's exchanges: log2 L rounds in which rows i and
// i + h swap blocks of h values, each a two-source shuffle. Value by value
// the tiles took longer than the transform's stages.
template <class R, int64_t L>
struct LaneVec {
  typedef R V __attribute__((vector_size(L * sizeof(R))));
};

// Shuffle indices over the pair (a, b) (b's elements from L on): Eklundh's
// round h (Part 0 row i's new value, 1 row i + h's), and the even / odd
// elements of a then b (Part 2 / 3; the parts of L interleaved complex
// values) and the interleave of a's and b's first / second halves (Part
// 4 / 5).
template <int64_t L, int64_t H, int Part>
constexpr int lane_index(int64_t p) {
  switch (Part) {
    case 0: return int(p % (2 * H) < H ? p : L + p - H);
    case 1: return int(p % (2 * H) < H ? p + H : L + p);
    case 2: return int(2 * p);
    case 3: return int(2 * p + 1);
    case 4: return int(p / 2 + (p % 2) * L);
    default: return int(L / 2 + p / 2 + (p % 2) * L);
  }
}

// __builtin_shufflevector (GCC 12 and Clang) takes the indices as
// constants. Through a reference: a vector returned by value draws GCC's
// ABI note in the clones without AVX.
template <class R, int64_t L, int64_t H, int Part, std::size_t... P>
FASTT_VEC_INLINE void lane_shuffle_at(const typename LaneVec<R, L>::V& a,
                                      const typename LaneVec<R, L>::V& b,
                                      typename LaneVec<R, L>::V& out,
                                      std::index_sequence<P...>) {
  out = __builtin_shufflevector(a, b,
                                lane_index<L, H, Part>(int64_t(P))...);
}

template <class R, int64_t L, int64_t H, int Part>
FASTT_VEC_INLINE void lane_shuffle(const typename LaneVec<R, L>::V& a,
                                   const typename LaneVec<R, L>::V& b,
                                   typename LaneVec<R, L>::V& out) {
  lane_shuffle_at<R, L, H, Part>(a, b, out,
                                 std::make_index_sequence<size_t(L)>());
}

template <class R, int64_t L, int64_t H>
FASTT_VEC_INLINE void eklundh_round(typename LaneVec<R, L>::V* v) {
  for (int64_t i = 0; i < L; ++i)
    if ((i & H) == 0) {
      const typename LaneVec<R, L>::V a = v[i], b = v[i + H];
      lane_shuffle<R, L, H, 0>(a, b, v[i]);
      lane_shuffle<R, L, H, 1>(a, b, v[i + H]);
    }
}

template <class R, int64_t L, int64_t H = L / 2>
FASTT_VEC_INLINE void transpose_tile(typename LaneVec<R, L>::V* v) {
  eklundh_round<R, L, H>(v);
  if constexpr (H > 1) transpose_tile<R, L, H / 2>(v);
}

// Into the lane layout: values [0, width) of rows [0, cnt) (row r at
// rows + r * stride), through L x L tiles; lanes past cnt are zero.
template <class R, int64_t L>
FASTT_VEC_INLINE void lanes_in(const std::complex<R>* rows, int64_t stride,
                               int64_t cnt, int64_t width, R* __restrict re,
                               R* __restrict im) {
  using V = typename LaneVec<R, L>::V;
  for (int64_t k0 = 0; k0 < width; k0 += L) {
    const int64_t kn = std::min(L, width - k0);
    if (kn == L) {
      V vr[L], vi[L];
      for (int64_t l = 0; l < L; ++l) {
        if (l < cnt) {
          V a, b;  // row l's values k0 ... k0 + L - 1, parts interleaved
          std::memcpy(&a, rows + l * stride + k0, sizeof(V));
          std::memcpy(&b, rows + l * stride + k0 + L / 2, sizeof(V));
          lane_shuffle<R, L, 1, 2>(a, b, vr[l]);
          lane_shuffle<R, L, 1, 3>(a, b, vi[l]);
        } else {
          vr[l] = vi[l] = V{};
        }
      }
      transpose_tile<R, L>(vr);
      transpose_tile<R, L>(vi);
      for (int64_t k = 0; k < L; ++k) {
        std::memcpy(re + (k0 + k) * L, &vr[k], sizeof(V));
        std::memcpy(im + (k0 + k) * L, &vi[k], sizeof(V));
      }
      continue;
    }
    for (int64_t l = 0; l < L; ++l) {
      if (l < cnt) {
        const R* src = reinterpret_cast<const R*>(rows + l * stride + k0);
        for (int64_t k = 0; k < kn; ++k) {
          re[(k0 + k) * L + l] = src[2 * k];
          im[(k0 + k) * L + l] = src[2 * k + 1];
        }
      } else {
        for (int64_t k = 0; k < kn; ++k)
          re[(k0 + k) * L + l] = im[(k0 + k) * L + l] = R(0);
      }
    }
  }
}

// Out of the lane layout, times s: lanes [0, cnt) to rows of width values.
template <class R, int64_t L>
FASTT_VEC_INLINE void lanes_out(const R* __restrict re,
                                const R* __restrict im, int64_t cnt,
                                int64_t width, R s, std::complex<R>* rows,
                                int64_t stride) {
  using V = typename LaneVec<R, L>::V;
  for (int64_t k0 = 0; k0 < width; k0 += L) {
    const int64_t kn = std::min(L, width - k0);
    if (kn == L) {
      V vr[L], vi[L];
      for (int64_t k = 0; k < L; ++k) {
        std::memcpy(&vr[k], re + (k0 + k) * L, sizeof(V));
        std::memcpy(&vi[k], im + (k0 + k) * L, sizeof(V));
        vr[k] *= s;
        vi[k] *= s;
      }
      transpose_tile<R, L>(vr);
      transpose_tile<R, L>(vi);
      for (int64_t l = 0; l < cnt; ++l) {
        V a, b;
        lane_shuffle<R, L, 1, 4>(vr[l], vi[l], a);
        lane_shuffle<R, L, 1, 5>(vr[l], vi[l], b);
        std::memcpy(static_cast<void*>(rows + l * stride + k0), &a,
                    sizeof(V));
        std::memcpy(static_cast<void*>(rows + l * stride + k0 + L / 2), &b,
                    sizeof(V));
      }
      continue;
    }
    for (int64_t l = 0; l < cnt; ++l) {
      R* dst = reinterpret_cast<R*>(rows + l * stride + k0);
      for (int64_t k = 0; k < kn; ++k) {
        dst[2 * k] = re[(k0 + k) * L + l] * s;
        dst[2 * k + 1] = im[(k0 + k) * L + l] * s;
      }
    }
  }
}

// A range of rows for the lane path, in groups of `lanes`. dft has the
// complex length: n, or n / 2 for the real kinds (whose tw is Plan::tw);
// scratch holds 6 arrays of (dft->size() + 1) lanes parts.
template <class R>
struct LaneJob {
  Kind kind;
  const Pow2Dft<R>* dft;
  const std::complex<R>* tw;
  int64_t n, rows;
  const void* in;  // the first row's
  void* out;
  R scale;
  bool onesided;
  R* scratch;
  int64_t lanes;
};

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
  std::vector<R> lane_scratch;  // the lane path's (LaneJob::scratch)

  // The lane path's job for `rows` rows of length n (use_lanes), its
  // scratch made, the rows and the scale left to fill in; dft null where
  // the rows take the row loops.
  LaneJob<R> lane_job(int64_t n, Kind kind, int64_t rows) {
    LaneJob<R> j{};
    if (!use_lanes<R>(n, kind, rows)) return j;
    j.kind = kind;
    j.dft = dft.pow2();
    j.tw = half ? tw.data() : nullptr;
    j.n = n;
    j.rows = rows;
    const int64_t c = j.dft->size();
    j.lanes = lane_count<R>(c, rows);
    if (lane_scratch.empty())
      lane_scratch.resize(
          size_t(6 * (c + 1) * lane_count<R>(c, kMaxLanes<R>)));
    j.scratch = lane_scratch.data();
    return j;
  }
};


// r2c's split for one k (r2c_row's formulas, lane by lane): a = Z_k, c =
// Z_{N-k} (each index mod N) into y = X_k, with w = exp(-2 pi i k / n).
template <class R, int64_t L>
FASTT_VEC_INLINE void split_lanes(const R* __restrict ar,
                                  const R* __restrict ai,
                                  const R* __restrict cr,
                                  const R* __restrict ci, std::complex<R> w,
                                  R* __restrict yr, R* __restrict yi) {
  const R wr = w.real(), wi = w.imag();
  FASTT_IVDEP
  for (int64_t l = 0; l < L; ++l) {
    const R er = (ar[l] + cr[l]) * R(0.5), ei = (ai[l] - ci[l]) * R(0.5);
    const R orr = (ai[l] + ci[l]) * R(0.5);
    const R oi = (cr[l] - ar[l]) * R(0.5);
    yr[l] = er + wr * orr - wi * oi;
    yi[l] = ei + wr * oi + wi * orr;
  }
}

// r2c's split of the half-length spectrum Z (lane layout) into X_k, k <=
// N.
template <class R, int64_t L>
FASTT_VEC_INLINE void lanes_split(const R* zr, const R* zi,
                                  const std::complex<R>* tw, int64_t N,
                                  R* xr, R* xi) {
  split_lanes<R, L>(zr, zi, zr, zi, tw[0], xr, xi);
  for (int64_t k = 1; k < N; ++k)
    split_lanes<R, L>(zr + k * L, zi + k * L, zr + (N - k) * L,
                zi + (N - k) * L, tw[k], xr + k * L, xi + k * L);
  split_lanes<R, L>(zr, zi, zr, zi, tw[N], xr + N * L, xi + N * L);
}

// c2r's join: the half-length input Z_k, k < N, of X_k, k <= N (lane
// layout, the zero-frequency and Nyquist imaginary parts already zero).
template <class R, int64_t L>
FASTT_VEC_INLINE void lanes_join(const R* xr, const R* xi,
                                 const std::complex<R>* tw, int64_t N,
                                 R* zr, R* zi) {
  for (int64_t k = 0; k < N; ++k) {
    const R* __restrict ar = xr + k * L;
    const R* __restrict ai = xi + k * L;
    const R* __restrict cr = xr + (N - k) * L;
    const R* __restrict ci = xi + (N - k) * L;
    R* __restrict yr = zr + k * L;
    R* __restrict yi = zi + k * L;
    // conj(w^k)
    const R wr = tw[k].real(), wi = -tw[k].imag();
    FASTT_IVDEP
    for (int64_t l = 0; l < L; ++l) {
      // xk + conj(x_{N-k}) and (xk - conj(x_{N-k})) * conj(w^k)
      const R sr = ar[l] + cr[l], si = ai[l] - ci[l];
      const R dr0 = ar[l] - cr[l], di0 = ai[l] + ci[l];
      const R dr = dr0 * wr - di0 * wi, di = dr0 * wi + di0 * wr;
      yr[l] = sr - di;
      yi[l] = si + dr;
    }
  }
}

template <class R, int64_t L>
FASTT_VEC_INLINE void lane_groups(const LaneJob<R>& j) {
  using C = std::complex<R>;
  const Pow2Dft<R>& d = *j.dft;
  const int64_t c = d.size(), part = (c + 1) * L;
  R* ar = j.scratch;
  R* ai = ar + part;
  R* br = ai + part;
  R* bi = br + part;
  R* wr = bi + part;
  R* wi = wr + part;
  for (int64_t b = 0; b < j.rows; b += L) {
    const int64_t cnt = std::min(L, j.rows - b);
    switch (j.kind) {
      case Kind::Forward:
      case Kind::Inverse: {
        const C* in = static_cast<const C*>(j.in) + b * c;
        C* out = static_cast<C*>(j.out) + b * c;
        lanes_in<R, L>(in, c, cnt, c, ar, ai);
        lane_dft<R, L>(d, ar, ai, br, bi, wr, wi);
        lanes_out<R, L>(br, bi, cnt, c, j.scale, out, c);
        break;
      }
      case Kind::R2c: {
        // the real rows as c = n / 2 complex values each
        const C* in = static_cast<const C*>(j.in) + b * c;
        const int64_t n_out = j.onesided ? c + 1 : j.n;
        C* out = static_cast<C*>(j.out) + b * n_out;
        lanes_in<R, L>(in, c, cnt, c, ar, ai);
        lane_dft<R, L>(d, ar, ai, br, bi, wr, wi);
        lanes_split<R, L>(br, bi, j.tw, c, ar, ai);
        lanes_out<R, L>(ar, ai, cnt, c + 1, j.scale, out, n_out);
        if (!j.onesided)
          for (int64_t l = 0; l < cnt; ++l)
            for (int64_t k = c + 1; k < j.n; ++k)
              out[l * n_out + k] = std::conj(out[l * n_out + j.n - k]);
        break;
      }
      case Kind::C2r: {
        const C* in = static_cast<const C*>(j.in) + b * (c + 1);
        C* out = static_cast<C*>(j.out) + b * c;  // n reals a row
        lanes_in<R, L>(in, c + 1, cnt, c + 1, ar, ai);
        for (int64_t l = 0; l < L; ++l) ai[l] = ai[c * L + l] = R(0);
        lanes_join<R, L>(ar, ai, j.tw, c, br, bi);
        lane_dft<R, L>(d, br, bi, ar, ai, wr, wi);
        lanes_out<R, L>(ar, ai, cnt, c, j.scale, out, c);
        break;
      }
    }
  }
}

template <class R>
FASTT_VEC_INLINE void lane_rows_impl(const LaneJob<R>& j) {
  if constexpr (kMaxLanes<R> >= 16)
    if (j.lanes == 16) return lane_groups<R, 16>(j);
  if (j.lanes == 8) return lane_groups<R, 8>(j);
  lane_groups<R, 4>(j);
}

// The clones' entry points: a whole range of rows per call.
FASTT_VEC_CLONES void lane_rows(const LaneJob<float>& j) {
  lane_rows_impl(j);
}
FASTT_VEC_CLONES void lane_rows(const LaneJob<double>& j) {
  lane_rows_impl(j);
}

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

// Runs f(b0, b1) over ranges of the rows [0, rows) in parallel, about 32K
// complex values of work each; on the lane path ranges of whole groups,
// so that only the last thread's last group runs part empty.
template <class R, class F>
void for_rows(int64_t n, Kind kind, int64_t rows, const F& f) {
  const int64_t g = std::max<int64_t>(1, 32768 / n);
  if (!use_lanes<R>(n, kind, rows)) {
    parallel_for(0, rows, g, f);
    return;
  }
  const bool real = kind == Kind::R2c || kind == Kind::C2r;
  const int64_t L = lane_count<R>(real ? n / 2 : n, rows);
  parallel_for(0, (rows + L - 1) / L, std::max<int64_t>(1, g / L),
               [&](int64_t g0, int64_t g1) {
                 f(g0 * L, std::min(rows, g1 * L));
               });
}

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
    for_rows<R>(n, kind, rows, [&](int64_t b0, int64_t b1) {
      Plan<R>& p = plan_for<R>(n, kind);
      LaneJob<R> j = p.lane_job(n, kind, b1 - b0);
      if (j.dft) {
        j.in = in + b0 * n;
        j.out = out + b0 * n;
        j.scale = s;
        lane_rows(j);
        return;
      }
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
    for_rows<R>(n, Kind::R2c, rows, [&](int64_t b0, int64_t b1) {
      Plan<R>& p = plan_for<R>(n, Kind::R2c);
      LaneJob<R> j = p.lane_job(n, Kind::R2c, b1 - b0);
      if (j.dft) {
        j.in = in + b0 * n;
        j.out = out + b0 * n_out;
        j.scale = s;
        j.onesided = onesided;
        lane_rows(j);
        return;
      }
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
    for_rows<R>(n, Kind::C2r, rows, [&](int64_t b0, int64_t b1) {
      Plan<R>& p = plan_for<R>(n, Kind::C2r);
      LaneJob<R> j = p.lane_job(n, Kind::C2r, b1 - b0);
      if (j.dft) {
        j.in = in + b0 * n_in;
        j.out = out + b0 * n;
        j.scale = s;
        lane_rows(j);
        return;
      }
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

// Tests for convolution and pooling (csrc/ops/conv.h) against naive direct
// loops in doubles: forward and backward, groups / stride / padding /
// dilation, odd shapes, chunked batches, non-contiguous and unbatched
// inputs, every float dtype, empty tensors and the error paths.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/conv.h"

using namespace fastt;
using namespace fastt::test;

// Substring matcher under both Catch2 2 and 3.
#if defined(FASTT_CATCH2_V3)
#define HAS_TEXT(s) Catch::Matchers::ContainsSubstring(s)
#else
#define HAS_TEXT(s) Catch::Contains(s)
#endif

namespace {

constexpr DType kFloatDTypes[] = {DType::Float32, DType::Float64,
                                  DType::Float16, DType::BFloat16};

Tensor rand_t(IntList sizes, DType dt, uint32_t seed) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return make(sample(dt, n, seed), sizes, dt);
}

// Tolerance of a dtype's results (inputs are exact; the 16-bit types also
// round once per add in col2im and the pools' backward).
double tol_of(DType dt) {
  switch (dt) {
    case DType::Float16: return 4e-3;
    case DType::BFloat16: return 3e-2;
    case DType::Float32: return 1e-5;
    default: return 1e-12;
  }
}

void check_vals(const Tensor& out, const std::vector<int64_t>& shape,
                const std::vector<double>& ref, DType dt,
                double scale = 1.0) {
  REQUIRE(out.dtype() == dt);
  REQUIRE(out.sizes().vec() == shape);
  const std::vector<double> got = values(out);
  REQUIRE(got.size() == ref.size());
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i)
    if (!close(got[i], ref[i], tol_of(dt), tol_of(dt) * scale)) {
      if (first < 0) first = int64_t(i);
      ++bad;
    }
  INFO("dtype " << dtype_name(dt) << ", " << bad << " mismatches, first at "
                << first
                << (first >= 0 ? ": got " + std::to_string(got[size_t(first)]) +
                                     " want " +
                                     std::to_string(ref[size_t(first)])
                               : std::string()));
  REQUIRE(bad == 0);
}

struct Conv {
  int64_t N, C, H, W, O, kh, kw;
  int64_t sh = 1, sw = 1, ph = 1, pw = 1, dh = 1, dw = 1, groups = 1;
  int64_t ph1 = -1, pw1 = -1;  // after-pads, -1: same as before
  int64_t oh() const {
    return (H + ph + (ph1 < 0 ? ph : ph1) - dh * (kh - 1) - 1) / sh + 1;
  }
  int64_t ow() const {
    return (W + pw + (pw1 < 0 ? pw : pw1) - dw * (kw - 1) - 1) / sw + 1;
  }
};

// Visits every (output, input, weight) index triple of a convolution:
// f(y_index, x_index, w_index, o) over valid taps.
template <class F>
void conv_taps(const Conv& c, F&& f) {
  const int64_t Cg = c.C / c.groups, Og = c.O / c.groups;
  const int64_t OH = c.oh(), OW = c.ow();
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t o = 0; o < c.O; ++o) {
      const int64_t g = o / Og;
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t yi = ((n * c.O + o) * OH + oy) * OW + ox;
          for (int64_t cg = 0; cg < Cg; ++cg)
            for (int64_t i = 0; i < c.kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t iy = oy * c.sh - c.ph + i * c.dh;
                const int64_t ix = ox * c.sw - c.pw + j * c.dw;
                if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W) continue;
                const int64_t ci = g * Cg + cg;
                f(yi, ((n * c.C + ci) * c.H + iy) * c.W + ix,
                  ((o * Cg + cg) * c.kh + i) * c.kw + j, o);
              }
        }
    }
}

std::vector<double> ref_conv(const Conv& c, const std::vector<double>& x,
                             const std::vector<double>& w,
                             const std::vector<double>* b) {
  std::vector<double> y(size_t(c.N * c.O * c.oh() * c.ow()), 0.0);
  if (b) {
    const int64_t L = c.oh() * c.ow();
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = (*b)[size_t((int64_t(i) / L) % c.O)];
  }
  conv_taps(c, [&](int64_t yi, int64_t xi, int64_t wi, int64_t) {
    y[size_t(yi)] += x[size_t(xi)] * w[size_t(wi)];
  });
  return y;
}

struct Grads {
  std::vector<double> gx, gw, gb;
};
Grads ref_conv_backward(const Conv& c, const std::vector<double>& gy,
                        const std::vector<double>& x,
                        const std::vector<double>& w) {
  Grads r;
  r.gx.assign(x.size(), 0.0);
  r.gw.assign(w.size(), 0.0);
  r.gb.assign(size_t(c.O), 0.0);
  conv_taps(c, [&](int64_t yi, int64_t xi, int64_t wi, int64_t) {
    r.gx[size_t(xi)] += gy[size_t(yi)] * w[size_t(wi)];
    r.gw[size_t(wi)] += gy[size_t(yi)] * x[size_t(xi)];
  });
  const int64_t L = c.oh() * c.ow();
  for (size_t i = 0; i < gy.size(); ++i)
    r.gb[size_t((int64_t(i) / L) % c.O)] += gy[i];
  return r;
}

std::vector<int64_t> padding_of(const Conv& c) {
  if (c.ph1 < 0 && c.pw1 < 0) return {c.ph, c.pw};
  return {c.ph, c.pw, c.ph1 < 0 ? c.ph : c.ph1, c.pw1 < 0 ? c.pw : c.pw1};
}

// Runs conv2d and its backward on `c` in dtype dt and checks both.
void check_conv2d(const Conv& c, DType dt, bool with_bias = true) {
  INFO("N" << c.N << " C" << c.C << " " << c.H << "x" << c.W << " O" << c.O
           << " k" << c.kh << "x" << c.kw << " s" << c.sh << "," << c.sw
           << " p" << c.ph << "," << c.pw << " d" << c.dh << "," << c.dw
           << " g" << c.groups << " " << dtype_name(dt));
  Tensor x = rand_t({c.N, c.C, c.H, c.W}, dt, 1);
  Tensor w = rand_t({c.O, c.C / c.groups, c.kh, c.kw}, dt, 2);
  Tensor b = rand_t({c.O}, dt, 3);
  const std::vector<double> xv = values(x), wv = values(w), bv = values(b);
  const std::vector<int64_t> pad = padding_of(c);
  Tensor y = conv2d(x, w, with_bias ? b : Tensor(), {c.sh, c.sw}, pad,
                    {c.dh, c.dw}, c.groups);
  const double scale = double(c.C / c.groups * c.kh * c.kw) * 16;
  check_vals(y, {c.N, c.O, c.oh(), c.ow()},
             ref_conv(c, xv, wv, with_bias ? &bv : nullptr), dt, scale);

  Tensor gy = rand_t({c.N, c.O, c.oh(), c.ow()}, dt, 4);
  auto [gx, gw, gb] = conv2d_backward(gy, x, w, {c.sh, c.sw}, pad,
                                      {c.dh, c.dw}, c.groups,
                                      {true, true, true});
  const Grads r = ref_conv_backward(c, values(gy), xv, wv);
  check_vals(gx, x.sizes().vec(), r.gx, dt, double(c.O * c.kh * c.kw) * 16);
  check_vals(gw, w.sizes().vec(), r.gw, dt,
             double(c.N * c.oh() * c.ow()) * 16);
  check_vals(gb, {c.O}, r.gb, dt, double(c.N * c.oh() * c.ow()) * 4);
}

}  // namespace

TEST_CASE("conv: conv2d forward and backward match direct loops", "[conv]") {
  std::vector<Conv> cases;
  // Odd sizes, rectangular kernels, stride, padding, dilation, groups.
  cases.push_back({2, 3, 7, 9, 4, 3, 3});
  Conv c{3, 4, 11, 6, 6, 2, 3};
  c.sh = 2, c.sw = 1, c.ph = 0, c.pw = 2, c.dh = 1, c.dw = 2, c.groups = 2;
  cases.push_back(c);
  c = Conv{1, 6, 5, 8, 3, 3, 1};
  c.groups = 3, c.ph = 2, c.pw = 0, c.dh = 2;
  cases.push_back(c);
  c = Conv{2, 4, 9, 9, 4, 3, 3};  // depthwise
  c.groups = 4, c.sh = c.sw = 3;
  cases.push_back(c);
  c = Conv{3, 5, 6, 7, 2, 1, 1};  // pointwise (no im2col)
  c.ph = c.pw = 0;
  cases.push_back(c);
  c = Conv{2, 3, 6, 7, 2, 1, 1};  // 1x1 with stride and padding
  c.sh = 2, c.sw = 3, c.ph = 1, c.pw = 0;
  cases.push_back(c);
  c = Conv{2, 2, 20, 19, 3, 5, 4};  // L >= 256: one product per sample
  c.ph = 2, c.pw = 1;
  cases.push_back(c);
  c = Conv{4, 3, 5, 5, 2, 5, 5};  // kernel = padded input, 1x1 output
  c.ph = c.pw = 0;
  cases.push_back(c);
  c = Conv{3, 2, 6, 5, 3, 2, 2};  // asymmetric padding (fastt extension)
  c.ph = 0, c.pw = 1, c.ph1 = 1, c.pw1 = 0;
  cases.push_back(c);
  for (DType dt : kFloatDTypes)
    for (const Conv& cc : cases) check_conv2d(cc, dt);
  check_conv2d(cases[1], DType::Float32, false);
}

TEST_CASE("conv: batches over the column budget run in chunks", "[conv]") {
  // C * k * k * L = 16 * 9 * 4096 per sample: a few samples per chunk.
  Conv c{9, 16, 64, 64, 4, 3, 3};
  check_conv2d(c, DType::Float32);
  // Small planes in several chunks take the merged product.
  Conv m{40, 64, 15, 15, 3, 3, 3};
  m.ph = m.pw = 0;  // 13x13 = 169 < 256 outputs per plane
  check_conv2d(m, DType::Float64);
}

TEST_CASE("conv: integer conv2d through the gemm loop", "[conv]") {
  Conv c{2, 3, 6, 5, 4, 3, 2};
  Tensor x = rand_t({2, 3, 6, 5}, DType::Int64, 1);
  Tensor w = rand_t({4, 3, 3, 2}, DType::Int64, 2);
  Tensor y = conv2d(x, w, Tensor(), {1}, {1}, {1}, 1);
  check_vals(y, {2, 4, c.oh(), c.ow()}, ref_conv(c, values(x), values(w),
                                                  nullptr),
             DType::Int64);
}

TEST_CASE("conv: non-contiguous, unbatched and masked", "[conv]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Conv c{2, 4, 7, 6, 6, 3, 2};
    c.groups = 2, c.sw = 2;
    // x built transposed (H and W swapped in memory) and w sliced.
    Tensor xt = rand_t({2, 4, 6, 7}, dt, 5).transpose(2, 3);
    Tensor wbig = rand_t({6, 4, 3, 2}, dt, 6);
    Tensor w = wbig.narrow(1, 1, 2);
    Tensor b = rand_t({12}, dt, 7).slice(0, 0, 12, 2);
    REQUIRE(!xt.is_contiguous());
    REQUIRE(!w.is_contiguous());
    const std::vector<double> xv = values(xt), wv = values(w),
                              bv = values(b);
    Tensor y = conv2d(xt, w, b, {c.sh, c.sw}, {c.ph, c.pw}, {1}, 2);
    check_vals(y, {2, 6, c.oh(), c.ow()}, ref_conv(c, xv, wv, &bv), dt);

    Tensor gy_big = rand_t({2, 6, c.oh(), c.ow() * 2}, dt, 8);
    Tensor gy = gy_big.slice(3, 0, c.ow() * 2, 2);
    auto [gx, gw, gb] = conv2d_backward(gy, xt, w, {c.sh, c.sw},
                                        {c.ph, c.pw}, {1}, 2,
                                        {true, false, true});
    const Grads r = ref_conv_backward(c, values(gy), xv, wv);
    check_vals(gx, {2, 4, 7, 6}, r.gx, dt);
    REQUIRE(!gw.defined());
    check_vals(gb, {6}, r.gb, dt);

    // Unbatched [C, H, W]: the result has no batch dim either.
    Conv u = c;
    u.N = 1;
    Tensor x3 = rand_t({4, 7, 6}, dt, 9);
    Tensor y3 = conv2d(x3, w, Tensor(), {c.sh, c.sw}, {c.ph, c.pw}, {1}, 2);
    check_vals(y3, {6, u.oh(), u.ow()}, ref_conv(u, values(x3), wv, nullptr),
               dt);
    Tensor gy3 = rand_t({6, u.oh(), u.ow()}, dt, 10);
    auto [gx3, gw3, gb3] = conv2d_backward(gy3, x3, w, {c.sh, c.sw},
                                           {c.ph, c.pw}, {1}, 2,
                                           {true, true, false});
    const Grads r3 = ref_conv_backward(u, values(gy3), values(x3), wv);
    check_vals(gx3, {4, 7, 6}, r3.gx, dt);
    check_vals(gw3, {6, 2, 3, 2}, r3.gw, dt);
    REQUIRE(!gb3.defined());
  }
}

TEST_CASE("conv: conv1d forward and backward", "[conv]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    // conv1d == conv2d with H = 1.
    Conv c{3, 4, 1, 13, 6, 1, 3};
    c.ph = 0, c.pw = 2, c.sw = 2, c.dw = 2, c.groups = 2;
    Tensor x = rand_t({3, 4, 13}, dt, 11);
    Tensor w = rand_t({6, 2, 3}, dt, 12);
    Tensor b = rand_t({6}, dt, 13);
    const std::vector<double> xv = values(x), wv = values(w), bv = values(b);
    Tensor y = conv1d(x, w, b, {2}, {2}, {2}, 2);
    check_vals(y, {3, 6, c.ow()}, ref_conv(c, xv, wv, &bv), dt, 100);
    Tensor gy = rand_t({3, 6, c.ow()}, dt, 14);
    auto [gx, gw, gb] =
        conv1d_backward(gy, x, w, {2}, {2}, {2}, 2, {true, true, true});
    const Grads r = ref_conv_backward(c, values(gy), xv, wv);
    check_vals(gx, {3, 4, 13}, r.gx, dt, 100);
    check_vals(gw, {6, 2, 3}, r.gw, dt, 200);
    check_vals(gb, {6}, r.gb, dt, 100);
    // Unbatched [C, L].
    Tensor y2 = conv1d(x.select(0, 1), w, b, {2}, {2}, {2}, 2);
    REQUIRE(y2.sizes().vec() == std::vector<int64_t>{6, c.ow()});
    check_vals(y2, {6, c.ow()}, values(y.select(0, 1)), dt);
  }
}

TEST_CASE("conv: padding same and valid", "[conv]") {
  Tensor x = rand_t({2, 3, 7, 8}, DType::Float64, 15);
  // Odd kernel: symmetric; even kernel: one more pad after.
  for (int64_t k : {3, 4}) {
    Tensor w = rand_t({5, 3, k, k}, DType::Float64, 16);
    Tensor y = conv2d(x, w, Tensor(), {1}, ConvPadding::Same, {1}, 1);
    REQUIRE(y.sizes().vec() == std::vector<int64_t>{2, 5, 7, 8});
    Conv c{2, 3, 7, 8, 5, k, k};
    c.ph = c.pw = (k - 1) / 2;
    c.ph1 = c.pw1 = k / 2;
    check_vals(y, {2, 5, 7, 8}, ref_conv(c, values(x), values(w), nullptr),
               DType::Float64);
    const std::vector<int64_t> pad =
        conv_padding(ConvPadding::Same, w, {1}, {1}, 2, "conv2d");
    auto [gx, gw, gb] = conv2d_backward(y, x, w, {1}, pad, {1}, 1,
                                        {true, true, true});
    const Grads r = ref_conv_backward(c, values(y), values(x), values(w));
    check_vals(gx, {2, 3, 7, 8}, r.gx, DType::Float64);
    check_vals(gw, {5, 3, k, k}, r.gw, DType::Float64);
  }
  Tensor w = rand_t({5, 3, 3, 2}, DType::Float64, 17);
  Tensor valid = conv2d(x, w, Tensor(), {1}, ConvPadding::Valid, {1}, 1);
  REQUIRE(valid.sizes().vec() == std::vector<int64_t>{2, 5, 5, 7});
  Tensor x1 = rand_t({2, 3, 9}, DType::Float32, 18);
  Tensor w1 = rand_t({4, 3, 4}, DType::Float32, 19);
  Tensor same1 = conv1d(x1, w1, Tensor(), {1}, ConvPadding::Same, {2}, 1);
  REQUIRE(same1.sizes().vec() == std::vector<int64_t>{2, 4, 9});
  REQUIRE_THROWS_AS(conv2d(x, w, Tensor(), {2}, ConvPadding::Same, {1}, 1),
                    RuntimeError);
  REQUIRE_THROWS_WITH(conv_padding_from_string("full"),
                      HAS_TEXT("Invalid padding string"));
}

namespace {

struct Transposed {
  int64_t N, Cin, H, W, Cout, kh, kw;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, oph = 0, opw = 0, dh = 1, dw = 1,
          groups = 1;
  int64_t OH() const {
    return (H - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1;
  }
  int64_t OW() const {
    return (W - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1;
  }
};

// f(out_index, x_index, w_index, co) for every tap of a transposed conv.
template <class F>
void transposed_taps(const Transposed& t, F&& f) {
  const int64_t Cig = t.Cin / t.groups, Cog = t.Cout / t.groups;
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t ci = 0; ci < t.Cin; ++ci) {
      const int64_t g = ci / Cig;
      for (int64_t y = 0; y < t.H; ++y)
        for (int64_t x = 0; x < t.W; ++x)
          for (int64_t cog = 0; cog < Cog; ++cog)
            for (int64_t i = 0; i < t.kh; ++i)
              for (int64_t j = 0; j < t.kw; ++j) {
                const int64_t Y = y * t.sh - t.ph + i * t.dh;
                const int64_t X = x * t.sw - t.pw + j * t.dw;
                if (Y < 0 || Y >= t.OH() || X < 0 || X >= t.OW()) continue;
                const int64_t co = g * Cog + cog;
                f(((n * t.Cout + co) * t.OH() + Y) * t.OW() + X,
                  ((n * t.Cin + ci) * t.H + y) * t.W + x,
                  ((ci * Cog + cog) * t.kh + i) * t.kw + j, co);
              }
    }
}

}  // namespace

TEST_CASE("conv: conv_transpose2d forward and backward", "[conv]") {
  std::vector<Transposed> cases;
  cases.push_back({2, 3, 4, 5, 4, 3, 3});
  Transposed t{3, 4, 5, 3, 6, 3, 2};
  t.sh = 2, t.sw = 3, t.ph = 1, t.pw = 0, t.oph = 1, t.opw = 2, t.groups = 2;
  cases.push_back(t);
  t = Transposed{1, 2, 6, 6, 2, 2, 3};
  t.dh = 2, t.dw = 3, t.ph = 2, t.pw = 1, t.oph = 1, t.sh = 1;
  t.groups = 2;
  cases.push_back(t);
  t = Transposed{2, 2, 17, 16, 3, 3, 3};  // L >= 256 path
  t.ph = t.pw = 1;
  cases.push_back(t);
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16})
    for (const Transposed& c : cases) {
      INFO("case Cin" << c.Cin << " " << c.H << "x" << c.W << " "
                      << dtype_name(dt));
      Tensor x = rand_t({c.N, c.Cin, c.H, c.W}, dt, 21);
      Tensor w = rand_t({c.Cin, c.Cout / c.groups, c.kh, c.kw}, dt, 22);
      Tensor b = rand_t({c.Cout}, dt, 23);
      const std::vector<double> xv = values(x), wv = values(w),
                                bv = values(b);
      std::vector<double> ref(size_t(c.N * c.Cout * c.OH() * c.OW()));
      const int64_t L = c.OH() * c.OW();
      for (size_t i = 0; i < ref.size(); ++i)
        ref[i] = bv[size_t((int64_t(i) / L) % c.Cout)];
      transposed_taps(c, [&](int64_t oi, int64_t xi, int64_t wi, int64_t) {
        ref[size_t(oi)] += xv[size_t(xi)] * wv[size_t(wi)];
      });
      Tensor y = conv_transpose2d(x, w, b, {c.sh, c.sw}, {c.ph, c.pw},
                                  {c.oph, c.opw}, c.groups, {c.dh, c.dw});
      check_vals(y, {c.N, c.Cout, c.OH(), c.OW()}, ref, dt, 200);

      Tensor gy = rand_t({c.N, c.Cout, c.OH(), c.OW()}, dt, 24);
      const std::vector<double> gyv = values(gy);
      std::vector<double> rgx(xv.size()), rgw(wv.size()),
          rgb(size_t(c.Cout));
      transposed_taps(c, [&](int64_t oi, int64_t xi, int64_t wi, int64_t) {
        rgx[size_t(xi)] += gyv[size_t(oi)] * wv[size_t(wi)];
        rgw[size_t(wi)] += gyv[size_t(oi)] * xv[size_t(xi)];
      });
      for (size_t i = 0; i < gyv.size(); ++i)
        rgb[size_t((int64_t(i) / L) % c.Cout)] += gyv[i];
      auto [gx, gw, gb] = conv_transpose2d_backward(
          gy, x, w, {c.sh, c.sw}, {c.ph, c.pw}, {c.oph, c.opw}, c.groups,
          {c.dh, c.dw}, {true, true, true});
      check_vals(gx, x.sizes().vec(), rgx, dt, 200);
      check_vals(gw, w.sizes().vec(), rgw, dt, double(c.N * L) * 16);
      check_vals(gb, {c.Cout}, rgb, dt, double(c.N * L) * 4);
    }
  // Unbatched.
  Tensor x = rand_t({3, 4, 4}, DType::Float32, 25);
  Tensor w = rand_t({3, 2, 3, 3}, DType::Float32, 26);
  Tensor y = conv_transpose2d(x, w, Tensor(), {2}, {1}, {1}, 1, {1});
  REQUIRE(y.sizes().vec() == std::vector<int64_t>{2, 8, 8});
  Tensor y4 = conv_transpose2d(x.unsqueeze(0), w, Tensor(), {2}, {1}, {1}, 1,
                               {1});
  check_vals(y, {2, 8, 8}, values(y4), DType::Float32);
}

TEST_CASE("conv: empty batch and empty channels", "[conv]") {
  Tensor w = rand_t({4, 3, 3, 3}, DType::Float32, 1);
  Tensor x0 = Tensor::empty({0, 3, 8, 8}, DType::Float32);
  Tensor y0 = conv2d(x0, w, Tensor(), {1}, {1}, {1}, 1);
  REQUIRE(y0.sizes().vec() == std::vector<int64_t>{0, 4, 8, 8});
  auto [gx, gw, gb] = conv2d_backward(y0, x0, w, {1}, {1}, {1}, 1,
                                      {true, true, true});
  REQUIRE(gx.sizes().vec() == std::vector<int64_t>{0, 3, 8, 8});
  check_vals(gw, {4, 3, 3, 3}, std::vector<double>(108, 0.0),
             DType::Float32);
  check_vals(gb, {4}, std::vector<double>(4, 0.0), DType::Float32);
  // Zero input channels: the output is the bias.
  Tensor xc = Tensor::empty({2, 0, 5, 5}, DType::Float32);
  Tensor wc = Tensor::empty({3, 0, 3, 3}, DType::Float32);
  Tensor b = rand_t({3}, DType::Float32, 2);
  Tensor yc = conv2d(xc, wc, b, {1}, {0}, {1}, 1);
  std::vector<double> ref;
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < 3; ++o)
      for (int i = 0; i < 9; ++i) ref.push_back(get(b, o));
  check_vals(yc, {2, 3, 3, 3}, ref, DType::Float32);
  REQUIRE(max_pool2d(Tensor::empty({0, 2, 4, 4}, DType::Float32), {2})
              .sizes()
              .vec() == std::vector<int64_t>{0, 2, 2, 2});
  REQUIRE(adaptive_avg_pool2d(Tensor::empty({0, 2, 4, 4}, DType::Float32),
                              {3, 2})
              .sizes()
              .vec() == std::vector<int64_t>{0, 2, 3, 2});
}

TEST_CASE("conv: convolution error paths", "[conv]") {
  Tensor x = rand_t({2, 3, 8, 8}, DType::Float32, 1);
  Tensor w = rand_t({4, 3, 3, 3}, DType::Float32, 2);
  Tensor none;
  // Wrong dims.
  REQUIRE_THROWS_AS(conv2d(x.select(0, 0).select(0, 0), w, none),
                    RuntimeError);
  REQUIRE_THROWS_AS(conv2d(x.unsqueeze(0), w, none), RuntimeError);
  REQUIRE_THROWS_AS(conv2d(x, w.select(0, 0), none), RuntimeError);
  REQUIRE_THROWS_AS(conv1d(x, w, none), RuntimeError);
  // Channel mismatch, groups not dividing, non-positive groups.
  REQUIRE_THROWS_WITH(conv2d(x.narrow(1, 0, 2), w, none),
                      HAS_TEXT("to have 3 channels, but got 2"));
  REQUIRE_THROWS_AS(conv2d(x, w, none, {1}, {0}, {1}, 3), RuntimeError);
  REQUIRE_THROWS_WITH(
      conv2d(x, rand_t({3, 1, 3, 3}, DType::Float32, 3), none, {1}, {0}, {1},
             2),
      HAS_TEXT("divisible by 2"));
  REQUIRE_THROWS_WITH(conv2d(x, w, none, {1}, {0}, {1}, 0),
                      HAS_TEXT("non-positive groups"));
  // Output size < 1 (kernel bigger than the padded input).
  REQUIRE_THROWS_WITH(conv2d(x.narrow(2, 0, 2), w, none),
                      HAS_TEXT("Kernel size can't be greater"));
  REQUIRE_THROWS_AS(conv2d(x, w, none, {1}, {0}, {4}), RuntimeError);
  // Bad stride / padding / dilation values and list lengths.
  REQUIRE_THROWS_WITH(conv2d(x, w, none, {0}),
                      HAS_TEXT("non-positive stride"));
  REQUIRE_THROWS_WITH(conv2d(x, w, none, {1}, {-1}),
                      HAS_TEXT("negative padding"));
  REQUIRE_THROWS_WITH(conv2d(x, w, none, {1}, {0}, {0}),
                      HAS_TEXT("non-positive dilation"));
  REQUIRE_THROWS_WITH(conv2d(x, w, none, {1, 1, 1}),
                      HAS_TEXT("list of 2 values"));
  REQUIRE_THROWS_AS(conv2d(x, w, none, {1}, {1, 1, 1}), RuntimeError);
  // Bias shape, dtype mismatches, undefined operands, bool input.
  REQUIRE_THROWS_WITH(conv2d(x, w, rand_t({3}, DType::Float32, 4)),
                      HAS_TEXT("expected bias to be 1-dimensional"));
  REQUIRE_THROWS_AS(conv2d(x, w.to(DType::Float64), none), RuntimeError);
  REQUIRE_THROWS_AS(conv2d(x, w, rand_t({4}, DType::Float64, 4)),
                    RuntimeError);
  REQUIRE_THROWS_AS(conv2d(Tensor(), w, none), ValueError);
  REQUIRE_THROWS_AS(conv2d(x.to(DType::Bool), w.to(DType::Bool), none),
                    NotImplementedError);
  // Backward: grad_output of the wrong shape.
  Tensor gy = rand_t({2, 4, 6, 5}, DType::Float32, 5);
  REQUIRE_THROWS_WITH(conv2d_backward(gy, x, w, {1}, {0}, {1}, 1),
                      HAS_TEXT("expected grad_output of size"));
  // Transposed: channels, groups, output_padding, output too small.
  Tensor wt = rand_t({3, 2, 3, 3}, DType::Float32, 6);
  REQUIRE_THROWS_WITH(conv_transpose2d(x.narrow(1, 0, 2), wt, none),
                      HAS_TEXT("transposed=1"));
  REQUIRE_THROWS_AS(conv_transpose2d(x, wt, none, {1}, {0}, {0}, 2),
                    RuntimeError);
  REQUIRE_THROWS_WITH(conv_transpose2d(x, wt, none, {1}, {0}, {1}),
                      HAS_TEXT("output padding must be smaller"));
  REQUIRE_THROWS_WITH(
      conv_transpose2d(x.narrow(2, 0, 1).narrow(3, 0, 1), wt, none, {1}, {2}),
      HAS_TEXT("Output size is too small"));
}

namespace {

struct PoolCase {
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil;
};

int64_t pool_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d,
                 bool ceil_mode) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

}  // namespace

TEST_CASE("conv: max_pool2d values, indices and backward", "[conv]") {
  const PoolCase cases[] = {
      {2, 3, 7, 9, 2, 2, 2, 2, 0, 0, 1, 1, false},
      {2, 3, 7, 9, 3, 2, 2, 1, 1, 1, 1, 1, true},
      {1, 2, 11, 10, 3, 3, 2, 3, 1, 0, 2, 2, false},
      {1, 2, 11, 10, 3, 3, 2, 3, 1, 1, 2, 1, true},
      {3, 1, 5, 5, 5, 5, 1, 1, 2, 2, 1, 1, false},
  };
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16,
                   DType::Int32}) {
    for (const PoolCase& c : cases) {
      INFO("case " << c.H << "x" << c.W << " k" << c.kh << " ceil " << c.ceil
                   << " " << dtype_name(dt));
      // Transposed storage: the kernel reads strides.
      Tensor x = rand_t({c.N, c.C, c.W, c.H}, dt, 31).transpose(2, 3);
      const int64_t OH = pool_out(c.H, c.kh, c.ph, c.sh, c.dh, c.ceil);
      const int64_t OW = pool_out(c.W, c.kw, c.pw, c.sw, c.dw, c.ceil);
      const std::vector<double> xv = values(x);
      std::vector<double> rv, ri;
      for (int64_t p = 0; p < c.N * c.C; ++p)
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox) {
            double best = -INFINITY;
            int64_t bi = -1;
            for (int64_t i = 0; i < c.kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t iy = oy * c.sh - c.ph + i * c.dh;
                const int64_t ix = ox * c.sw - c.pw + j * c.dw;
                if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W) continue;
                const double v = xv[size_t((p * c.H + iy) * c.W + ix)];
                if (bi < 0 || v > best) best = v, bi = iy * c.W + ix;
              }
            rv.push_back(best);
            ri.push_back(double(bi));
          }
      auto [out, idx] = max_pool2d_with_indices(
          x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, c.ceil);
      check_vals(out, {c.N, c.C, OH, OW}, rv, dt);
      REQUIRE(idx.dtype() == DType::Int64);
      REQUIRE(values(idx) == ri);
      if (!is_floating(dt)) continue;
      Tensor gy = rand_t({c.N, c.C, OH, OW}, dt, 32);
      std::vector<double> rg(xv.size(), 0.0);
      const std::vector<double> gyv = values(gy);
      for (size_t k = 0; k < gyv.size(); ++k) {
        const int64_t p = int64_t(k) / (OH * OW);
        rg[size_t(p * c.H * c.W + int64_t(ri[k]))] += gyv[k];
      }
      check_vals(max_pool2d_backward(gy, x, idx), {c.N, c.C, c.H, c.W}, rg,
                 dt, 8);
    }
  }
  // NaN wins; unbatched; default stride = kernel.
  Tensor x = make({1, NAN, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3}, DType::Float32);
  auto [o, i] = max_pool2d_with_indices(x, {2}, {1});
  REQUIRE(o.sizes().vec() == std::vector<int64_t>{1, 2, 2});
  REQUIRE(std::isnan(get(o, 0)));
  REQUIRE(std::isnan(get(o, 1)));
  REQUIRE(get(i, 0) == 1);
  REQUIRE(get(o, 3) == 9);
  REQUIRE(max_pool2d(x, {2}).sizes().vec() == std::vector<int64_t>{1, 1, 1});
}

TEST_CASE("conv: avg_pool2d forward and backward", "[conv]") {
  struct AvgCase {
    int64_t H, W, kh, kw, sh, sw, ph, pw;
    bool ceil, count_pad;
    int64_t divisor;  // 0: none
  };
  const AvgCase cases[] = {
      {7, 9, 2, 2, 2, 2, 0, 0, false, true, 0},
      {7, 9, 3, 2, 2, 1, 1, 1, true, true, 0},
      {7, 9, 3, 2, 2, 1, 1, 1, true, false, 0},
      {8, 5, 3, 3, 3, 2, 1, 1, true, false, 0},
      {6, 6, 3, 3, 2, 2, 1, 0, false, true, 5},
  };
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
    for (const AvgCase& c : cases) {
      INFO("case " << c.H << "x" << c.W << " k" << c.kh << "x" << c.kw
                   << " ceil " << c.ceil << " " << dtype_name(dt));
      Tensor x = rand_t({2, 3, c.H, c.W}, dt, 41);
      const int64_t OH = pool_out(c.H, c.kh, c.ph, c.sh, 1, c.ceil);
      const int64_t OW = pool_out(c.W, c.kw, c.pw, c.sw, 1, c.ceil);
      Tensor gy = rand_t({2, 3, OH, OW}, dt, 42);
      const std::vector<double> xv = values(x), gyv = values(gy);
      std::vector<double> ref, rg(xv.size(), 0.0);
      for (int64_t p = 0; p < 6; ++p)
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox) {
            int64_t y0 = oy * c.sh - c.ph, x0 = ox * c.sw - c.pw;
            int64_t y1 = std::min(y0 + c.kh, c.H + c.ph);
            int64_t x1 = std::min(x0 + c.kw, c.W + c.pw);
            const int64_t pool = (y1 - y0) * (x1 - x0);
            y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
            y1 = std::min(y1, c.H), x1 = std::min(x1, c.W);
            const double div = c.divisor  ? double(c.divisor)
                               : c.count_pad ? double(pool)
                                             : double((y1 - y0) * (x1 - x0));
            double s = 0;
            for (int64_t iy = y0; iy < y1; ++iy)
              for (int64_t ix = x0; ix < x1; ++ix)
                s += xv[size_t((p * c.H + iy) * c.W + ix)];
            ref.push_back(s / div);
            const double g = gyv[size_t((p * OH + oy) * OW + ox)] / div;
            for (int64_t iy = y0; iy < y1; ++iy)
              for (int64_t ix = x0; ix < x1; ++ix)
                rg[size_t((p * c.H + iy) * c.W + ix)] += g;
          }
      std::optional<int64_t> div;
      if (c.divisor) div = c.divisor;
      Tensor out = avg_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw},
                              c.ceil, c.count_pad, div);
      check_vals(out, {2, 3, OH, OW}, ref, dt, 4);
      Tensor gx = avg_pool2d_backward(gy, x, {c.kh, c.kw}, {c.sh, c.sw},
                                      {c.ph, c.pw}, c.ceil, c.count_pad, div);
      check_vals(gx, {2, 3, c.H, c.W}, rg, dt, 4);
    }
  }
  // int64 means truncate; non-contiguous and unbatched input.
  Tensor xi = make({1, 2, 4, 7}, {1, 2, 2}, DType::Int64);
  REQUIRE(get(avg_pool2d(xi, {2}), 0) == 3);
  Tensor xt = rand_t({3, 6, 5}, DType::Float64, 43).transpose(1, 2);
  Tensor a = avg_pool2d(xt, {2});
  Tensor b = avg_pool2d(xt.contiguous(), {2});
  check_vals(a, {3, 2, 3}, values(b), DType::Float64);
}

TEST_CASE("conv: adaptive_avg_pool2d forward and backward", "[conv]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    for (auto os : std::vector<std::vector<int64_t>>{
             {3, 4}, {1, 1}, {7, 9}, {5, 2}, {10, 11}, {0, 3}}) {
      INFO(dtype_name(dt) << " out " << os[0] << "x" << os[1]);
      const int64_t H = 7, W = 9, OH = os[0], OW = os[1];
      Tensor x = rand_t({2, 3, W, H}, dt, 51).transpose(2, 3);
      Tensor gy = rand_t({2, 3, OH, OW}, dt, 52);
      const std::vector<double> xv = values(x), gyv = values(gy);
      std::vector<double> ref, rg(xv.size(), 0.0);
      for (int64_t p = 0; p < 6; ++p)
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox) {
            const int64_t y0 = int64_t(std::floor(double(oy * H) / OH));
            const int64_t y1 = int64_t(std::ceil(double((oy + 1) * H) / OH));
            const int64_t x0 = int64_t(std::floor(double(ox * W) / OW));
            const int64_t x1 = int64_t(std::ceil(double((ox + 1) * W) / OW));
            const double area = double((y1 - y0) * (x1 - x0));
            double s = 0;
            for (int64_t iy = y0; iy < y1; ++iy)
              for (int64_t ix = x0; ix < x1; ++ix)
                s += xv[size_t((p * H + iy) * W + ix)];
            ref.push_back(s / area);
            for (int64_t iy = y0; iy < y1; ++iy)
              for (int64_t ix = x0; ix < x1; ++ix)
                rg[size_t((p * H + iy) * W + ix)] +=
                    gyv[size_t((p * OH + oy) * OW + ox)] / area;
          }
      check_vals(adaptive_avg_pool2d(x, {OH, OW}), {2, 3, OH, OW}, ref, dt,
                 4);
      check_vals(adaptive_avg_pool2d_backward(gy, x), {2, 3, H, W}, rg, dt,
                 4);
    }
  }
  // -1 keeps the input size; one value for both; unbatched.
  Tensor x = rand_t({3, 5, 6}, DType::Float32, 53);
  REQUIRE(adaptive_avg_pool2d(x, {-1, 2}).sizes().vec() ==
          std::vector<int64_t>{3, 5, 2});
  REQUIRE(adaptive_avg_pool2d(x, {4}).sizes().vec() ==
          std::vector<int64_t>{3, 4, 4});
}

TEST_CASE("conv: pooling error paths", "[conv]") {
  Tensor x = rand_t({2, 3, 8, 8}, DType::Float32, 1);
  REQUIRE_THROWS_AS(max_pool2d(x.select(0, 0).select(0, 0), {2}),
                    RuntimeError);
  REQUIRE_THROWS_AS(max_pool2d(x.narrow(1, 0, 0), {2}), RuntimeError);
  REQUIRE_THROWS_WITH(max_pool2d(x, {3}, {}, {2}),
                      HAS_TEXT("pad should be at most half"));
  REQUIRE_THROWS_WITH(max_pool2d(x, {0}, {1}),
                      HAS_TEXT("kernel size should be greater"));
  REQUIRE_THROWS_WITH(max_pool2d(x, {2}, {0}),
                      HAS_TEXT("stride should be greater"));
  REQUIRE_THROWS_WITH(max_pool2d(x, {2}, {}, {0}, {0}),
                      HAS_TEXT("dilation should be greater"));
  REQUIRE_THROWS_WITH(max_pool2d(x, {2, 2, 2}),
                      HAS_TEXT("kernel_size must either be"));
  REQUIRE_THROWS_WITH(max_pool2d(x.narrow(2, 0, 1), {2}),
                      HAS_TEXT("Output size is too small"));
  REQUIRE_THROWS_AS(max_pool2d(x.to(DType::Bool), {2}), NotImplementedError);
  REQUIRE_THROWS_WITH(avg_pool2d(x, {2}, {}, {0}, false, true, 0),
                      HAS_TEXT("divisor must be not zero"));
  REQUIRE_THROWS_AS(avg_pool2d(x, {3}, {}, {2}), RuntimeError);
  REQUIRE_THROWS_AS(avg_pool2d(x.to(DType::Int32), {2}), NotImplementedError);
  REQUIRE_THROWS_WITH(adaptive_avg_pool2d(x, {2, 2, 2}),
                      HAS_TEXT("output_size must be 2"));
  REQUIRE_THROWS_WITH(adaptive_avg_pool2d(x.narrow(2, 0, 0), {2}),
                      HAS_TEXT("non-zero size for non-batch"));
  REQUIRE_THROWS_AS(adaptive_avg_pool2d(x.select(0, 0).select(0, 0), {2}),
                    RuntimeError);
  REQUIRE_THROWS_AS(adaptive_avg_pool2d(x.to(DType::Int64), {2}),
                    NotImplementedError);
  // Backward shape checks.
  auto [o, i] = max_pool2d_with_indices(x, {2});
  REQUIRE_THROWS_AS(max_pool2d_backward(o, x, i.to(DType::Int32)),
                    RuntimeError);
  REQUIRE_THROWS_AS(max_pool2d_backward(o, x, i.narrow(2, 0, 2)),
                    RuntimeError);
  REQUIRE_THROWS_AS(max_pool2d_backward(o.narrow(1, 0, 2), x, i),
                    RuntimeError);
  REQUIRE_THROWS_WITH(
      avg_pool2d_backward(o.narrow(2, 0, 3), x, {2}, {}, {0}, false, true,
                          std::nullopt),
      HAS_TEXT("expected grad_output of size"));
  REQUIRE_THROWS_AS(adaptive_avg_pool2d_backward(o.narrow(0, 0, 1), x),
                    RuntimeError);
}

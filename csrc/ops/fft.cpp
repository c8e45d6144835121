#include "fft.h"

#include <cmath>
#include <vector>

#include "../autograd.h"
#include "autograd/functions_lapack.h"
#include "../errors.h"
#include "factory.h"
#include "lapack_util.h"
#include "shape.h"

namespace fastt {
using lapack::back;
using lapack::host;
using lapack::kernel_args;
using lapack::run_kernel;

namespace {

// Checks dims (wrapped, distinct) and x; returns the wrapped dims.
std::vector<int64_t> prepare(const char* op, const Tensor& x, IntList dims) {
  FASTT_CHECK(x.defined(), ValueError, "{}: got an undefined tensor", op);
  FASTT_CHECK(!dims.empty(), RuntimeError,
              "{}: must transform at least one dimension", op);
  FASTT_CHECK(x.dim() > 0, IndexError,
              "{}: Dimension specified as {} but tensor has no dimensions",
              op, dims[0]);
  std::vector<int64_t> d;
  for (int64_t v : dims) {
    const int64_t w = wrap_dim(v, x.dim(), op);
    for (int64_t u : d)
      FASTT_CHECK(u != w, RuntimeError, "{}: dims must be unique", op);
    d.push_back(w);
  }
  return d;
}

void check_complex(const char* op, const Tensor& x) {
  FASTT_CHECK(is_complex(x.dtype()), RuntimeError,
              "{}: expected a complex input, got {}", op,
              torch_type_name(x.dtype()));
}

void check_points(int64_t n) {
  FASTT_CHECK(n >= 1, RuntimeError,
              "Invalid number of data points ({}) specified", n);
}

double scale_of(int64_t normalization, double signal_numel) {
  FASTT_CHECK(normalization >= 0 && normalization <= 2, ValueError,
              "fft: normalization must be 0 (none), 1 (1/sqrt(n)) or 2 "
              "(1/n), got {}",
              normalization);
  if (normalization == 0) return 1.0;
  return normalization == 1 ? 1.0 / std::sqrt(signal_numel)
                            : 1.0 / signal_numel;
}

// x's size along `dim` made n: trimmed (a view) or zero-padded (a copy).
Tensor resized(const Tensor& x, int64_t dim, int64_t n) {
  const int64_t have = x.size(dim);
  if (have == n) return x;
  if (have > n) return x.narrow(dim, 0, n);
  std::vector<int64_t> shape = x.sizes().vec();
  shape[size_t(dim)] = n;
  Tensor z = zeros(shape, x.dtype());
  z.narrow(dim, 0, have).copy_(x);
  return z;
}

// One transform along `dim` of a host tensor: the dim moved last and made
// dense as [B, len], the kernel writes [B, n_out], the dim moved back.
Tensor along(Op op, const Tensor& x, int64_t dim, int64_t n, int64_t n_out,
             DType out_dtype, int64_t i1, double scale) {
  const int64_t last = x.dim() - 1;
  Tensor xl = (dim == last ? x : movedim(x, dim, last)).contiguous();
  std::vector<int64_t> shape = xl.sizes().vec();
  shape.back() = n_out;
  Tensor out = empty(shape, out_dtype);
  if (out.numel() > 0) {
    KernelArgs a = kernel_args(&out, nullptr, &xl);
    a.i0 = n;
    a.i1 = i1;
    a.f0 = scale;
    run_kernel(op, xl.dtype(), a);
  }
  return dim == last ? out : movedim(out, last, dim);
}

// The signal's element count along d[0, count) (each at least one point).
double signal_numel(const Tensor& x, const std::vector<int64_t>& d,
                    size_t count) {
  double numel = 1;
  for (size_t i = 0; i < count; ++i) {
    check_points(x.size(d[i]));
    numel *= double(x.size(d[i]));
  }
  return numel;
}

// Complex transforms along d[0, count), the scale folded into the last.
Tensor c2c_along(Tensor y, const std::vector<int64_t>& d, size_t count,
                 bool forward, double scale) {
  for (size_t i = 0; i < count; ++i)
    y = along(Op::fft_c2c, y, d[i], y.size(d[i]), y.size(d[i]), y.dtype(),
              forward, i + 1 == count ? scale : 1.0);
  return y;
}

}  // namespace

Tensor fft_c2c(const Tensor& x, IntList dims, int64_t normalization,
               bool forward) {
  const std::vector<int64_t> d = prepare("fft_c2c", x, dims);
  check_complex("fft_c2c", x);
  if (autograd::should_record(x))
    return autograd::fft(autograd::GradFn::FftC2c, x, d, normalization,
                         forward, [&] {
                           return fft_c2c(x, dims, normalization, forward);
                         });
  const double scale =
      scale_of(normalization, signal_numel(x, d, d.size()));
  Tensor y = c2c_along(host(x), d, d.size(), forward, scale);
  return back(y.contiguous(), x.device());
}

Tensor fft_r2c(const Tensor& x, IntList dims, int64_t normalization,
               bool onesided) {
  const std::vector<int64_t> d = prepare("fft_r2c", x, dims);
  const DType dt = x.dtype();
  FASTT_CHECK(dt == DType::Float32 || dt == DType::Float64, RuntimeError,
              "fft_r2c: expected a float or double input, got {}",
              torch_type_name(dt));
  if (autograd::should_record(x))
    return autograd::fft(autograd::GradFn::FftR2c, x, d, normalization,
                         onesided, [&] {
                           return fft_r2c(x, dims, normalization, onesided);
                         });
  const double scale =
      scale_of(normalization, signal_numel(x, d, d.size()));
  // The real transform along the last of dims, then complex ones.
  const int64_t last = d.back(), n = x.size(last);
  Tensor y = along(Op::fft_r2c, host(x), last, n, onesided ? n / 2 + 1 : n,
                   to_complex(dt), onesided, d.size() == 1 ? scale : 1.0);
  y = c2c_along(y, d, d.size() - 1, true, scale);
  return back(y.contiguous(), x.device());
}

Tensor fft_c2r(const Tensor& x, IntList dims, int64_t normalization,
               int64_t last_dim_size) {
  const std::vector<int64_t> d = prepare("fft_c2r", x, dims);
  check_complex("fft_c2r", x);
  check_points(last_dim_size);
  if (autograd::should_record(x))
    return autograd::fft(autograd::GradFn::FftC2r, x, d, normalization,
                         last_dim_size, [&] {
                           return fft_c2r(x, dims, normalization,
                                          last_dim_size);
                         });
  const double scale = scale_of(
      normalization, double(last_dim_size) * signal_numel(x, d, d.size() - 1));
  // Complex inverse transforms first, the real one along the last dim.
  Tensor y = c2c_along(host(x), d, d.size() - 1, false, 1.0);
  const int64_t last = d.back();
  y = resized(y, last, last_dim_size / 2 + 1);
  y = along(Op::fft_c2r, y, last, last_dim_size, last_dim_size,
            to_real(y.dtype()), 0, scale);
  return back(y.contiguous(), x.device());
}

}  // namespace fastt

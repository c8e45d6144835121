// Discrete Fourier transforms: torch's three primitives (_fft_c2c,
// _fft_r2c, _fft_c2r), which fastt.fft (python/fastt/fft.py) composes into
// fft, rfft, irfft, hfft, their 2-d and n-d forms and the rest. Each
// transforms x along `dims` at x's own sizes there (the caller pads or
// trims first) and multiplies by the normalization: 0 none, 1 by
// 1/sqrt(n), 2 by 1/n, n the product of the signal's sizes along dims.
// Kernels: kernels/cpu/fft.cpp (CUDA tensors are transformed on the host).
#pragma once
#include "../tensor.h"

namespace fastt {

// Complex to complex; forward uses exp(-2 pi i jk / n), inverse exp(+...).
Tensor fft_c2c(const Tensor& x, IntList dims, int64_t normalization,
               bool forward);
// Real (float32/float64) to complex, forward. The last of dims keeps
// n/2 + 1 values when onesided (rfft), all n otherwise.
Tensor fft_r2c(const Tensor& x, IntList dims, int64_t normalization,
               bool onesided);
// Hermitian complex to real, inverse; the last of dims gives
// last_dim_size real values from its first last_dim_size/2 + 1 (padded
// with zeros or trimmed to that).
Tensor fft_c2r(const Tensor& x, IntList dims, int64_t normalization,
               int64_t last_dim_size);

}  // namespace fastt

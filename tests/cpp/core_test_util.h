// Helpers for the core tests: build tensors from double values, read any
// tensor (strided, any dtype) back as doubles, and round doubles the way a
// dtype stores them. Add helpers here only when two test files need them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "csrc/tensor.h"

namespace fastt {
namespace test {

constexpr DType kAllDTypes[] = {
    DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int16,
    DType::Int32,   DType::Int64,    DType::Float16, DType::BFloat16,
    DType::Float32, DType::Float64};

// Element at a logical (row-major) linear index, respecting strides.
inline double get(const Tensor& t, int64_t linear) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    int64_t s = t.sizes()[size_t(d)];
    off += (linear % s) * t.strides()[size_t(d)];
    linear /= s;
  }
  const char* p = static_cast<const char*>(t.data_ptr()) +
                  off * int64_t(t.itemsize());
  return visit_dtype(t.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, p, sizeof(T));
    return double(static_cast<opmath_t<T>>(v));
  });
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> out(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[size_t(i)] = get(t, i);
  return out;
}

// What storing `v` in `dt` yields (integers wrap like a C++ cast of the
// int64 value; the 16-bit floats round to nearest even).
inline double round_to(DType dt, double v) {
  switch (dt) {
    case DType::Bool: return v != 0 ? 1 : 0;
    case DType::UInt8: return double(uint8_t(int64_t(v)));
    case DType::Int8: return double(int8_t(int64_t(v)));
    case DType::Int16: return double(int16_t(int64_t(v)));
    case DType::Int32: return double(int32_t(int64_t(v)));
    case DType::Int64: return double(int64_t(v));
    case DType::Float16: return double(float(Half(float(v))));
    case DType::BFloat16: return double(float(BFloat16(float(v))));
    case DType::Float32: return double(float(v));
    case DType::Float64: return v;
  }
  return v;
}

// A tensor of `sizes` holding `vals` (row-major), each stored as `dt`.
inline Tensor make(const std::vector<double>& vals, IntList sizes, DType dt) {
  Tensor t = Tensor::empty(sizes, dt);
  visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.data_ptr());
    for (size_t i = 0; i < vals.size(); ++i) {
      if constexpr (std::is_same<T, bool>::value) p[i] = vals[i] != 0;
      else if constexpr (std::is_integral<T>::value)
        p[i] = static_cast<T>(int64_t(vals[i]));
      else p[i] = static_cast<T>(float(vals[i]));
      if constexpr (std::is_same<T, double>::value) p[i] = vals[i];
    }
  });
  return t;
}

inline Tensor scalar_tensor(double v, DType dt) {
  return make({v}, IntList(), dt);
}

// Values every dtype holds exactly: bool 0/1, small integers (non-negative
// for uint8), multiples of 0.25 for floats. `nonzero` avoids 0.
inline std::vector<double> sample(DType dt, int64_t n, uint32_t seed,
                                  bool nonzero = false, double lo = -4,
                                  double hi = 4) {
  std::mt19937 rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if (dt == DType::Bool) {
      x = nonzero ? 1 : double(rng() % 2);
      continue;
    }
    double l = dt == DType::UInt8 ? std::max(lo, 0.0) : lo;
    do {
      if (is_floating(dt))
        x = l + 0.25 * double(rng() % uint32_t((hi - l) * 4 + 1));
      else
        x = std::ceil(l) + double(rng() % uint32_t(hi - std::ceil(l) + 1));
    } while (nonzero && x == 0);
  }
  return v;
}

inline double rtol_of(DType dt) {
  switch (dt) {
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    case DType::Float32: return 2e-6;
    case DType::Float64: return 1e-12;
    default: return 0;
  }
}

// |a - b| <= atol + rtol * |b| with NaNs equal and infinities exact.
inline bool close(double a, double b, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

// A tensor that claims to live on cuda:0 over a host buffer kept alive by
// the test (never freed through a device allocator): device checks can be
// tested on a CPU-only build.
inline void keep_buffer(void*, void*, size_t) {}  // the test owns the buffers
inline Tensor fake_cuda(IntList sizes, DType dt) {
  static std::vector<std::vector<char>> buffers;
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  buffers.emplace_back(size_t(std::max<int64_t>(n, 1)) * itemsize(dt) + 64,
                       0);
  Storage* st = Storage::wrap(buffers.back().data(), buffers.back().size(),
                              Device(DeviceType::CUDA), keep_buffer, nullptr);
  std::vector<int64_t> strides(sizes.size());
  contiguous_strides(sizes, strides.data());
  Tensor t = Tensor::from_storage(st, sizes, strides, 0, dt);
  st->decref();
  return t;
}

// The message of the fastt error f() throws, or "<no error>".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace test
}  // namespace fastt

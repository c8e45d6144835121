// Shared by the LAPACK entry points (lapack.cpp, lapack_qr.cpp,
// lapack_spectral.cpp): torch's input checks, the batch/shape helpers, the
// column-major work copies the kernels read (see kernels/cpu/lapack.cpp)
// and the host round trip of CUDA operands. Internal to csrc/ops.
#pragma once
#include <vector>

#include "../dispatch.h"
#include "../tensor.h"
#include "complex.h"
#include "factory.h"

namespace fastt {
namespace lapack {

// The dtypes every LAPACK row has.
inline bool lapack_dtype(DType t) {
  return t == DType::Float32 || t == DType::Float64 || is_complex(t);
}

// A float32/float64/complex64/complex128 tensor with >= 2 dims (torch's
// messages).
inline void check_matrix(const char* op, const Tensor& t, const char* name) {
  require_defined(t, op);
  FASTT_CHECK(t.dim() >= 2, RuntimeError,
              "{}: The input tensor {} must have at least 2 dimensions.", op,
              name);
  FASTT_CHECK(lapack_dtype(t.dtype()), RuntimeError,
              "{}: Expected a floating point or complex tensor as input. "
              "Got {}",
              op, torch_type_name(t.dtype()));
}

inline void check_square(const char* op, const Tensor& t, const char* name) {
  check_matrix(op, t, name);
  FASTT_CHECK(t.size(-2) == t.size(-1), RuntimeError,
              "{}: {} must be batches of square matrices, but they are {} by "
              "{} matrices",
              op, name, t.size(-2), t.size(-1));
}

inline void check_same_dtype_device(const char* op, const Tensor& a,
                                    const Tensor& b, const char* an,
                                    const char* bn) {
  FASTT_CHECK(a.dtype() == b.dtype(), RuntimeError,
              "{}: Expected {} and {} to have the same dtype, but found {} "
              "of type {} and {} of type {} instead",
              op, an, bn, an, torch_type_name(a.dtype()), bn,
              torch_type_name(b.dtype()));
  FASTT_CHECK(a.device() == b.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, a.device().str(), b.device().str());
}

inline std::vector<int64_t> batch_of(const Tensor& t, int64_t trailing = 2) {
  return {t.sizes().begin(), t.sizes().end() - trailing};
}
inline std::vector<int64_t> with(std::vector<int64_t> b, int64_t r) {
  b.push_back(r);
  return b;
}
inline std::vector<int64_t> with(std::vector<int64_t> b, int64_t r,
                                 int64_t c) {
  b.push_back(r);
  b.push_back(c);
  return b;
}

// CUDA operands are factorized on the host (no cuSOLVER rows yet).
inline Tensor host(const Tensor& t) {
  return t.is_cuda() ? t.to(Device(kCPU)) : t;
}
inline Tensor back(const Tensor& t, Device d) {
  return d.is_cuda() && t.defined() ? t.to(d) : t;
}

// A dense host copy of A [..., m, n] laid out column-major for LAPACK: the
// row-major buffer [..., n, m]; from_colmajor views it as [..., m, n]
// again (Fortran strides, as torch's LAPACK results have).
inline Tensor colmajor_copy(const Tensor& A) {
  std::vector<int64_t> shape = with(batch_of(A), A.size(-1), A.size(-2));
  Tensor w = empty(shape, A.dtype());
  w.copy_(host(A).mT());
  return w;
}
inline Tensor from_colmajor(const Tensor& w) { return w.mT(); }

// The kernel of `op` for A's dtype, called on prepared operands.
inline KernelArgs kernel_args(Tensor* out, Tensor* out2 = nullptr,
                              const Tensor* in0 = nullptr,
                              const Tensor* in1 = nullptr,
                              const Tensor* in2 = nullptr) {
  KernelArgs a;
  a.out = out;
  a.out2 = out2;
  for (int i = 0; i < kMaxOperands; ++i) a.in[i] = nullptr;
  a.in[0] = in0;
  a.in[1] = in1;
  a.in[2] = in2;
  a.f0 = a.f1 = 0;
  a.i0 = a.i1 = a.i2 = 0;
  return a;
}
inline void run_kernel(Op op, DType dtype, KernelArgs& args) {
  lookup_kernel(op, DeviceType::CPU, dtype)(args);
}

// torch's "(Batch element i): " prefix for the first failing matrix of a
// batch (empty for an unbatched one); -1 when every info is 0.
int64_t first_failure(const Tensor& info, int64_t* value);
std::string batch_prefix(const Tensor& info, int64_t index);

}  // namespace lapack
}  // namespace fastt

#include "complex.h"

#include "../autograd.h"
#include "../errors.h"

namespace fastt {
namespace {
// The views below are not recorded on the tape: a gradient through them
// would be lost silently, so an input that requires grad is refused.
void check_no_grad(const Tensor& t, const char* op) {
  FASTT_CHECK(!autograd::should_record(t), NotImplementedError,
              "{}: the input requires grad, and fastt has no complex "
              "autograd yet",
              op);
}
}  // namespace

Tensor view_as_real(const Tensor& z) {
  FASTT_CHECK(z.defined(), ValueError, "view_as_real: got an undefined tensor");
  FASTT_CHECK(is_complex(z.dtype()), RuntimeError,
              "view_as_real is only supported for complex tensors");
  check_no_grad(z, "view_as_real");
  const int nd = int(z.dim());
  FASTT_CHECK(nd < kMaxDims, RuntimeError,
              "view_as_real: tensors with more than {} dimensions are not "
              "supported",
              kMaxDims - 1);
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (int d = 0; d < nd; ++d) {
    sizes[d] = z.sizes()[size_t(d)];
    strides[d] = 2 * z.strides()[size_t(d)];
  }
  sizes[nd] = 2;
  strides[nd] = 1;
  return Tensor::from_storage(z.impl()->storage, IntList(sizes, size_t(nd + 1)),
                              IntList(strides, size_t(nd + 1)),
                              2 * z.storage_offset(), to_real(z.dtype()));
}

Tensor view_as_complex(const Tensor& x) {
  FASTT_CHECK(x.defined(), ValueError,
              "view_as_complex: got an undefined tensor");
  const DType dt = x.dtype();
  FASTT_CHECK(dt == DType::Float32 || dt == DType::Float64, RuntimeError,
              "view_as_complex is only supported for float and double "
              "tensors, but got a tensor of scalar type: {}",
              torch_type_name(dt));
  check_no_grad(x, "view_as_complex");
  const int nd = int(x.dim());
  FASTT_CHECK(nd > 0, RuntimeError,
              "Input tensor must have one or more dimensions");
  FASTT_CHECK(x.sizes()[size_t(nd - 1)] == 2, RuntimeError,
              "Tensor must have a last dimension of size 2");
  FASTT_CHECK(x.strides()[size_t(nd - 1)] == 1, RuntimeError,
              "Tensor must have a last dimension with stride 1");
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (int d = 0; d < nd - 1; ++d) {
    FASTT_CHECK(x.strides()[size_t(d)] % 2 == 0, RuntimeError,
                "Tensor must have a stride divisible by 2 for all but last "
                "dimension");
    sizes[d] = x.sizes()[size_t(d)];
    strides[d] = x.strides()[size_t(d)] / 2;
  }
  FASTT_CHECK(x.storage_offset() % 2 == 0, RuntimeError,
              "Tensor must have a storage_offset divisible by 2");
  return Tensor::from_storage(x.impl()->storage, IntList(sizes, size_t(nd - 1)),
                              IntList(strides, size_t(nd - 1)),
                              x.storage_offset() / 2, to_complex(dt));
}

Tensor real_part(const Tensor& t) {
  if (!is_complex(t.dtype())) return t;
  return view_as_real(t).select(-1, 0);
}

Tensor imag_part(const Tensor& t) {
  FASTT_CHECK(t.defined() && is_complex(t.dtype()), RuntimeError,
              "imag is not implemented for tensors with non-complex dtypes.");
  return view_as_real(t).select(-1, 1);
}

}  // namespace fastt

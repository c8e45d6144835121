#include "complex.h"

#include "../autograd.h"
#include "../errors.h"
#include "autograd/functions.h"
#include "elementwise.h"

namespace fastt {
namespace {
// A view of `of`'s storage with another dtype, as a view of `of`'s base
// (so autograd's in-place checks see it; commit_inplace refuses to write
// through it, as a view's history assumes the base's dtype), recorded as
// `fn` when `of` takes part in autograd.
Tensor dtype_view(autograd::GradFn fn, const Tensor& of, int nd,
                  const int64_t* sizes, const int64_t* strides,
                  int64_t offset, DType dtype) {
  Tensor v = Tensor::from_storage(of.impl()->storage,
                                  IntList(sizes, size_t(nd)),
                                  IntList(strides, size_t(nd)), offset, dtype);
  TensorImpl* self = of.impl();
  TensorImpl* base = self->view_base ? self->view_base : self;
  base->refcount.fetch_add(1, std::memory_order_relaxed);
  v.impl()->is_view = true;
  v.impl()->view_base = base;
  if (autograd::should_record(of)) autograd::view_of(fn, of, v);
  return v;
}
}  // namespace

Tensor view_as_real(const Tensor& z) {
  FASTT_CHECK(z.defined(), ValueError, "view_as_real: got an undefined tensor");
  FASTT_CHECK(is_complex(z.dtype()), RuntimeError,
              "view_as_real is only supported for complex tensors");
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
  return dtype_view(autograd::GradFn::ViewAsReal, z, nd + 1, sizes, strides,
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
  return dtype_view(autograd::GradFn::ViewAsComplex, x, nd - 1, sizes,
                    strides, x.storage_offset() / 2, to_complex(dt));
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

Tensor conj_physical(const Tensor& t) {
  FASTT_CHECK(t.defined(), ValueError, "conj: got an undefined tensor");
  if (!is_complex(t.dtype())) return t;
  // (re, im) * (1, -1) over the real view: one pass, recorded through the
  // real mul when t takes part in autograd.
  Tensor sign = Tensor::empty({2}, to_real(t.dtype()), t.device());
  sign.select(0, 0).fill_(Scalar(1));
  sign.select(0, 1).fill_(Scalar(-1));
  const Tensor r = mul(view_as_real(t), sign);
  // r's storage seen as complex: a new tensor, not a view (r is a
  // temporary no one else sees), so in-place ops on it record as usual.
  const int nd = int(r.dim()) - 1;
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (int d = 0; d < nd; ++d) {
    sizes[d] = r.sizes()[size_t(d)];
    strides[d] = r.strides()[size_t(d)] / 2;
  }
  Tensor out = Tensor::from_storage(
      r.impl()->storage, IntList(sizes, size_t(nd)),
      IntList(strides, size_t(nd)), r.storage_offset() / 2, t.dtype());
  if (autograd::should_record(r))
    autograd::view_of(autograd::GradFn::ViewAsComplex, r, out);
  return out;
}

Tensor adjoint(const Tensor& t) { return conj_physical(t.mT()); }

}  // namespace fastt

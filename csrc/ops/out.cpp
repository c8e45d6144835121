// out= semantics shared by every op that takes an out tensor (see out.h).
#include "out.h"

#include "autograd/functions.h"
#include "csrc/autograd.h"
#include "elementwise.h"

namespace fastt {

Tensor& resize_out(Tensor& out, IntList shape) {
  if (out.numel() == 0 && !out.sizes().equals(shape))
    out = Tensor::empty(shape, out.dtype(), out.device());
  return out;
}

Tensor& resize_out(Tensor& out, const Tensor& a, const Tensor& b,
                   const char* op) {
  if (out.numel() != 0) return out;
  int64_t shape[kMaxDims];
  int n = broadcast_shapes(a.sizes(), b.sizes(), shape, op);
  return resize_out(out, IntList(shape, size_t(n)));
}

Tensor& assign_out(Tensor& out, const Tensor& result, const char* op) {
  require_defined(out, op);
  require_defined(result, op);
  autograd::check_out(op, autograd::should_record(result, out));
  FASTT_CHECK(out.device() == result.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, result.device().str(), out.device().str());
  FASTT_CHECK(can_cast(result.dtype(), out.dtype()), RuntimeError,
              "{}: result type {} can't be cast to the desired output type {}",
              op, dtype_name(result.dtype()), dtype_name(out.dtype()));
  FASTT_CHECK(out.numel() == 0 || out.sizes().equals(result.sizes()),
              RuntimeError,
              "{}: output with shape {} doesn't match the result shape {}", op,
              shape_str(out.sizes()), shape_str(result.sizes()));
  check_no_internal_overlap(out, op);
  resize_out(out, result.sizes()).copy_(result);
  return out;
}

}  // namespace fastt

// Entry points of the fused attention (kernels/cpu/attention.cpp): check
// the shapes, dtypes and devices as torch's flash kernel does, give the
// kernel q, k, v as BLAS can read them (in place when their rows are),
// broadcast the mask as a view, allocate the outputs, one kernel call. fastt.nn.functional.scaled_dot_product_attention routes CPU float
// inputs here and keeps the composed path for the rest (dropout, a mask
// that needs its gradient, CUDA).
#include <algorithm>

#include "autograd/functions_nn.h"
#include "csrc/autograd.h"
#include "csrc/dispatch.h"
#include "nn.h"

namespace fastt {
namespace {

using namespace nn_args;  // the kernel's tensor slots

// Checks q, k, v (and the mask) and returns the mask as an [N, H, L, S]
// view (undefined when there is none).
Tensor check_qkv(const Tensor& q, const Tensor& k, const Tensor& v,
                 const Tensor& mask, const char* op) {
  FASTT_CHECK(q.defined() && k.defined() && v.defined(), ValueError,
              "{}(): got an undefined query, key or value", op);
  FASTT_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, RuntimeError,
              "{}: expected 4-D query, key and value [N, H, L, E], but got "
              "{}, {} and {}",
              op, shape_str(q.sizes()), shape_str(k.sizes()),
              shape_str(v.sizes()));
  FASTT_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), RuntimeError,
              "{}: Expected query, key, and value to have the same dtype, "
              "but got query.dtype: {} key.dtype: {} and value.dtype: {} "
              "instead.",
              op, dtype_name(q.dtype()), dtype_name(k.dtype()),
              dtype_name(v.dtype()));
  FASTT_CHECK(q.device() == k.device() && q.device() == v.device(),
              RuntimeError,
              "{}: Expected query, key, and value to have the same device "
              "type, but got {}, {} and {}",
              op, q.device().str(), k.device().str(), v.device().str());
  const int64_t N = q.size(0), H = q.size(1), L = q.size(2), E = q.size(3);
  const int64_t Hk = k.size(1), S = k.size(2);
  FASTT_CHECK(k.size(0) == N && v.size(0) == N && v.size(1) == Hk &&
                  v.size(2) == S && k.size(3) == E,
              RuntimeError,
              "{}: query {}, key {} and value {} do not fit [N, H, L, E], "
              "[N, Hk, S, E], [N, Hk, S, Ev]",
              op, shape_str(q.sizes()), shape_str(k.sizes()),
              shape_str(v.sizes()));
  FASTT_CHECK(Hk > 0 && H % Hk == 0, RuntimeError,
              "{}: number of heads in query ({}) must be a multiple of the "
              "heads in key/value ({})",
              op, H, Hk);
  if (!mask.defined()) return Tensor();
  FASTT_CHECK(mask.dtype() == q.dtype() && mask.device() == q.device(),
              RuntimeError,
              "{}: expected an additive attn_mask of dtype {} on {}, but "
              "got {} on {}",
              op, dtype_name(q.dtype()), q.device().str(),
              dtype_name(mask.dtype()), mask.device().str());
  FASTT_CHECK(mask.dim() <= 4, RuntimeError,
              "{}: attn_mask of shape {} does not broadcast to [N, H, L, S] "
              "= [{}, {}, {}, {}]",
              op, shape_str(mask.sizes()), N, H, L, S);
  return mask.expand({N, H, L, S});
}

// t itself when the kernel can read it in place (unit stride along the
// last dim, rows at least a row apart: a BLAS operand), else a dense copy.
Tensor blas_rows(const Tensor& t) {
  const int64_t cols = t.size(3);
  const bool ok = (t.stride(3) == 1 || cols <= 1) &&
                  (t.size(2) <= 1 || t.stride(2) >= std::max<int64_t>(1, cols));
  return ok ? t : t.contiguous();
}

}  // namespace

std::tuple<Tensor, Tensor> flash_attention(const Tensor& q, const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& mask, double scale,
                                           bool causal) {
  const char* op = "_scaled_dot_product_flash_attention_for_cpu";
  if (autograd::should_record(q, k, v))
    return autograd::flash_attention(q, k, v, mask, scale, causal);
  Tensor t[kFaFwdN];
  t[kFaMask] = check_qkv(q, k, v, mask, op);
  KernelFn fn = lookup_kernel(Op::flash_attention, q.device().type, q.dtype());
  t[kFaQ] = blas_rows(q);
  t[kFaK] = blas_rows(k);
  t[kFaV] = blas_rows(v);
  const int64_t N = q.size(0), H = q.size(1), L = q.size(2);
  t[kFaOut] = Tensor::empty({N, H, L, v.size(3)}, q.dtype(), q.device());
  t[kFaLse] = Tensor::empty({N, H, L}, q.dtype(), q.device());
  KernelArgs a;
  a.in[0] = t;
  a.f0 = scale;
  a.i0 = causal;
  fn(a);
  return {std::move(t[kFaOut]), std::move(t[kFaLse])};
}

std::tuple<Tensor, Tensor, Tensor> flash_attention_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
    const Tensor& mask, const Tensor& out, const Tensor& lse, double scale,
    bool causal) {
  const char* op = "_scaled_dot_product_flash_attention_for_cpu_backward";
  Tensor t[kFbN];
  t[kFbMask] = check_qkv(q, k, v, mask, op);
  const int64_t N = q.size(0), H = q.size(1), L = q.size(2);
  const int64_t Ev = v.size(3);
  for (const Tensor* x : {&grad_out, &out})
    FASTT_CHECK(x->defined() && x->sizes().equals({N, H, L, Ev}) &&
                    x->dtype() == q.dtype() && x->device() == q.device(),
                RuntimeError,
                "{}: expected grad_out and out of shape [{}, {}, {}, {}] and "
                "dtype {}",
                op, N, H, L, Ev, dtype_name(q.dtype()));
  FASTT_CHECK(lse.defined() && lse.sizes().equals({N, H, L}) &&
                  lse.dtype() == q.dtype() && lse.device() == q.device(),
              RuntimeError,
              "{}: expected the logsumexp of shape [{}, {}, {}] the forward "
              "returned",
              op, N, H, L);
  KernelFn fn = lookup_kernel(Op::flash_attention_backward, q.device().type,
                              q.dtype());
  t[kFbGrad] = grad_out.contiguous();
  t[kFbQ] = blas_rows(q);
  t[kFbK] = blas_rows(k);
  t[kFbV] = blas_rows(v);
  t[kFbOut] = out.contiguous();
  t[kFbLse] = lse.contiguous();
  t[kFbDq] = Tensor::empty(q.sizes(), q.dtype(), q.device());
  t[kFbDk] = Tensor::empty(k.sizes(), k.dtype(), k.device());
  t[kFbDv] = Tensor::empty(v.sizes(), v.dtype(), v.device());
  KernelArgs a;
  a.in[0] = t;
  a.f0 = scale;
  a.i0 = causal;
  fn(a);
  return {std::move(t[kFbDq]), std::move(t[kFbDk]), std::move(t[kFbDv])};
}

}  // namespace fastt

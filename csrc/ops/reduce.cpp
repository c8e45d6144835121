// Reduction, scan and softmax entry points: resolve dims (wrap, reject
// repeats, build the output shape), apply torch's dtype rules, allocate the
// output and make one kernel call. Kernels get the reduced dims ascending in
// args.dims, or an empty list for "every dim".
#include "csrc/autocast.h"
#include "reduce.h"

#include <cmath>

#include "../dispatch.h"
#include "complex.h"
#include "elementwise.h"
#include "index.h"
#include "../mutation.h"

#include "autograd/functions.h"
#include "csrc/autograd.h"

namespace fastt {
namespace {


inline void check_defined(const Tensor& a, const char* op) {
  FASTT_CHECK(a.defined(), ValueError, "{}(): got an undefined tensor", op);
}

struct ReduceDims {
  int64_t dims[kMaxDims];
  int ndims = 0;  // 0: every dim
  int64_t shape[kMaxDims];
  int out_ndim = 0;
  IntList list() const { return IntList(dims, size_t(ndims)); }
  IntList out_shape() const { return IntList(shape, size_t(out_ndim)); }
  bool reduces(int d) const {
    if (ndims == 0) return true;
    for (int i = 0; i < ndims; ++i)
      if (dims[i] == d) return true;
    return false;
  }
};

void resolve_dims(const Tensor& a, IntList dims, bool keepdim, const char* op,
                  ReduceDims& r) {
  const int nd = int(a.dim());
  uint32_t mask = 0;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, nd, op);
    FASTT_CHECK(!((mask >> w) & 1u), RuntimeError,
                "{}(): dim {} appears multiple times in the list of dims", op,
                w);
    mask |= 1u << w;
  }
  const uint32_t all = nd == 0 ? 0u : (nd >= 32 ? ~0u : (1u << nd) - 1u);
  const bool full = dims.empty() || nd == 0 || mask == all;
  r.ndims = 0;
  r.out_ndim = 0;
  for (int d = 0; d < nd; ++d) {
    bool red = full || ((mask >> d) & 1u);
    if (red && !full) r.dims[r.ndims++] = d;
    if (!red) r.shape[r.out_ndim++] = a.sizes()[d];
    else if (keepdim && !(full && FASTT_MUTANT(KeepdimFullDrop)))
      r.shape[r.out_ndim++] = 1;
  }
}

// Ops without an identity (max, argmax, ...) reject empty reductions.
void check_nonempty(const Tensor& a, const ReduceDims& r, const char* op) {
  if (a.numel() != 0) return;
  FASTT_CHECK(r.ndims != 0, RuntimeError,
              "{}(): Expected reduction dim to be specified for "
              "input.numel() == 0. Specify the reduction dim with the 'dim' "
              "argument.",
              op);
  for (int i = 0; i < r.ndims; ++i)
    FASTT_CHECK(a.sizes()[r.dims[i]] != 0, IndexError,
                "{}(): Expected reduction dim {} to have non-zero size.", op,
                r.dims[i]);
}

// Allocates the output (and out2 when given a dtype) and runs the kernel
// for the input's dtype.
Tensor run_reduce(Op op, const Tensor& in, const ReduceDims& r,
                  DType out_dtype, double f0 = 0, int64_t i0 = 0,
                  Tensor* out2 = nullptr, DType out2_dtype = DType::Int64) {
  KernelFn fn = lookup_kernel(op, in.device().type, in.dtype());
  Tensor out = Tensor::empty(r.out_shape(), out_dtype, in.device());
  if (out2) *out2 = Tensor::empty(r.out_shape(), out2_dtype, in.device());
  KernelArgs args;
  args.in[0] = &in;
  args.out = &out;
  args.out2 = out2;
  args.dims = r.list();
  args.f0 = f0;
  args.i0 = i0;
  fn(args);
  return out;
}

// Full reduction to a 0-d tensor: the hot path of sum(a) and friends.
inline Tensor run_full(Op op, const Tensor& in, DType out_dtype) {
  KernelFn fn = lookup_kernel(op, in.device().type, in.dtype());
  Tensor out = Tensor::empty(IntList(), out_dtype, in.device());
  KernelArgs args;
  args.in[0] = &in;
  args.out = &out;
  args.out2 = nullptr;
  args.dims = IntList();
  fn(args);
  return out;
}

// The dims a reduction of a over `dims` covers, listed (all of a's where
// none are given) into d; their count. Checks them as every reduction.
int listed_dims(const Tensor& a, IntList dims, bool keepdim,
                const char* name, int64_t* d) {
  ReduceDims r;
  resolve_dims(a, dims, keepdim, name, r);
  int n = r.ndims;
  for (int i = 0; i < n; ++i) d[i] = r.dims[i];
  if (n == 0)
    for (; n < a.dim(); ++n) d[n] = n;
  return n;
}

// A complex sum or mean. Over the last dim: the complex sum kernel (dense
// runs fold as pairs of real lanes), the mean divided after. Otherwise
// the same reduction of the real view over the same dims, viewed back:
// the kept last dim and its parts read as dense columns there.
Tensor complex_reduce(Op op, const char* name, const Tensor& a, IntList dims,
                      bool keepdim) {
  int64_t d[kMaxDims];
  const int n = listed_dims(a, dims, keepdim, name, d);
  if (a.dim() == 0) return a.clone();
  bool last = false;
  for (int i = 0; i < n; ++i) last = last || d[i] == a.dim() - 1;
  if (last) {
    ReduceDims r;
    resolve_dims(a, dims, keepdim, name, r);
    Tensor s = run_reduce(Op::sum, a, r, a.dtype());
    if (op != Op::mean) return s;
    const int64_t count = s.numel() ? a.numel() / s.numel() : 0;
    return div(s, Scalar(double(count)));  // 0 / 0: NaN, as torch's
  }
  const Tensor parts = view_as_real(a);
  const IntList rd(d, size_t(n));
  Tensor s = op == Op::mean ? mean(parts, rd, keepdim, std::nullopt)
                            : sum(parts, rd, keepdim, std::nullopt);
  return view_as_complex(s.contiguous());
}

// sum and prod: int64 for integer/bool inputs; `dtype` converts first.
Tensor sum_like(Op op, const char* name, const Tensor& a, IntList dims,
                bool keepdim, std::optional<DType> dtype) {
  check_defined(a, name);
  ReduceDims r;
  resolve_dims(a, dims, keepdim, name, r);
  Tensor in = dtype ? a.to(*dtype) : a;
  if (op == Op::sum && is_complex(in.dtype()))
    return complex_reduce(op, name, in, dims, keepdim);
  // complex stays complex (its kernels come op by op: no kernel, an error)
  DType natural = is_inexact(in.dtype()) ? in.dtype() : DType::Int64;
  Tensor out = run_reduce(op, in, r, natural);
  if (dtype && *dtype != natural) out = out.to(*dtype);
  return out;
}

// var/std/mean-style ops need a floating dtype.
void check_floating(DType t, const char* op, bool from_dtype_arg) {
  FASTT_CHECK(!is_complex(t), NotImplementedError,
              "{}(): {} tensors are not supported yet", op, dtype_name(t));
  FASTT_CHECK(is_floating(t), RuntimeError,
              "{}(): could not infer output dtype. {} dtype must be either a "
              "floating point or complex dtype. Got: {}",
              op, from_dtype_arg ? "Optional" : "Input", torch_type_name(t));
}

// torch's variance of complex z: var(Re z) + var(Im z), real (the mean
// of |z - mean z|^2, corrected), from the real view's per-part variances
// over the same dims; std its root; the mean complex.
std::pair<Tensor, Tensor> complex_var(const char* name, const Tensor& a,
                                      IntList dims, double correction,
                                      bool keepdim, bool take_sqrt,
                                      bool with_mean) {
  int64_t d[kMaxDims];
  int n = listed_dims(a, dims, keepdim, name, d);
  if (a.dim() == 0) d[n++] = 0;  // the one element, seen as [1]
  const Tensor parts = view_as_real(a.dim() == 0 ? a.reshape({1}) : a);
  Tensor v = sum(var(parts, IntList(d, size_t(n)), correction,
                     keepdim && a.dim() > 0),
                 IntList(-1), false, std::nullopt);
  if (take_sqrt) v = fastt::sqrt(v);
  Tensor m;
  if (with_mean) m = complex_reduce(Op::mean, name, a, dims, keepdim);
  return {v, m};
}

std::pair<Tensor, Tensor> var_impl(const char* name, const Tensor& a,
                                   IntList dims, double correction,
                                   bool keepdim, bool take_sqrt,
                                   bool with_mean) {
  check_defined(a, name);
  if (FASTT_UNLIKELY(is_complex(a.dtype())))
    return complex_var(name, a, dims, correction, keepdim, take_sqrt,
                       with_mean);
  check_floating(a.dtype(), name, false);
  ReduceDims r;
  resolve_dims(a, dims, keepdim, name, r);
  Tensor mean;
  Tensor v = run_reduce(Op::var, a, r, a.dtype(), correction,
                        take_sqrt ? 1 : 0, with_mean ? &mean : nullptr,
                        a.dtype());
  return {v, mean};
}

Tensor extreme(Op op, const char* name, const Tensor& a, IntList dims,
               bool keepdim) {
  check_defined(a, name);
  ReduceDims r;
  resolve_dims(a, dims, keepdim, name, r);
  check_nonempty(a, r, name);
  return run_reduce(op, a, r, a.dtype());
}

std::pair<Tensor, Tensor> extreme_dim(Op op, const char* name,
                                      const Tensor& a, int64_t dim,
                                      bool keepdim) {
  check_defined(a, name);
  ReduceDims r;
  resolve_dims(a, IntList(dim), keepdim, name, r);
  check_nonempty(a, r, name);
  Tensor indices;
  Tensor values = run_reduce(op, a, r, a.dtype(), 0, 0, &indices);
  return {values, indices};
}

Tensor arg_extreme(Op op, const char* name, const Tensor& a,
                   std::optional<int64_t> dim, bool keepdim) {
  check_defined(a, name);
  ReduceDims r;
  if (dim)
    resolve_dims(a, IntList(*dim), keepdim, name, r);
  else
    resolve_dims(a, IntList(), keepdim, name, r);
  check_nonempty(a, r, name);
  return run_reduce(op, a, r, DType::Int64);
}

Tensor logical(Op op, const char* name, const Tensor& a, IntList dims,
               bool keepdim) {
  check_defined(a, name);
  ReduceDims r;
  resolve_dims(a, dims, keepdim, name, r);
  Tensor out = run_reduce(op, a, r, DType::Bool);
  // torch keeps uint8 for uint8 inputs (a legacy rule its docs state).
  return a.dtype() == DType::UInt8 ? out.to(DType::UInt8) : out;
}

// cumsum/cumprod/softmax see a contiguous input and the wrapped dim.
Tensor run_along(Op op, const Tensor& in, int64_t dim, DType out_dtype) {
  KernelFn fn = lookup_kernel(op, in.device().type, in.dtype());
  Tensor src = in.contiguous();
  Tensor out = Tensor::empty(src.sizes(), out_dtype, src.device());
  if (src.numel() == 0) return out;
  KernelArgs args;
  args.in[0] = &src;
  args.out = &out;
  args.out2 = nullptr;
  args.i0 = dim;
  fn(args);
  return out;
}

Tensor scan(Op op, const char* name, const Tensor& a, int64_t dim,
            std::optional<DType> dtype) {
  check_defined(a, name);
  int64_t d = wrap_dim(dim, a.dim(), name);
  if (a.dim() == 0) d = 0;
  Tensor in = dtype ? a.to(*dtype) : a;
  DType natural = is_inexact(in.dtype()) ? in.dtype() : DType::Int64;
  Tensor out = run_along(op, in, d, natural);
  if (dtype && *dtype != natural) out = out.to(*dtype);
  return out;
}

Tensor softmax_like(Op op, const char* name, const Tensor& a, int64_t dim,
                    std::optional<DType> dtype) {
  check_defined(a, name);
  int64_t d = wrap_dim(dim, a.dim(), name);
  Tensor in = dtype ? a.to(*dtype) : a;
  return run_along(op, in, d, in.dtype());
}

}  // namespace

// ---- sum / prod / mean ----
Tensor sum(const Tensor& a, std::optional<DType> dtype) {
  FASTT_AUTOCAST(CudaFp32, a, sum(C(a), dtype));
  if (autograd::should_record(a))
    return autograd::sum(a, {}, false, true, [&] { return sum(a, dtype); });
  if (FASTT_LIKELY(a.defined() && !dtype && a.is_floating_point()))
    return run_full(Op::sum, a, a.dtype());
  return sum_like(Op::sum, "sum", a, IntList(), false, dtype);
}
Tensor sum(const Tensor& a, IntList dims, bool keepdim,
           std::optional<DType> dtype) {
  FASTT_AUTOCAST(CudaFp32, a, sum(C(a), dims, keepdim, dtype));
  if (autograd::should_record(a))
    return autograd::sum(a, dims, keepdim, false,
                         [&] { return sum(a, dims, keepdim, dtype); });
  return sum_like(Op::sum, "sum", a, dims, keepdim, dtype);
}
Tensor prod(const Tensor& a, std::optional<DType> dtype) {
  FASTT_AUTOCAST(Fp32, a, prod(C(a), dtype));
  if (autograd::should_record(a))
    return autograd::prod(a, std::nullopt, false,
                          [&] { return prod(a, dtype); });
  return sum_like(Op::prod, "prod", a, IntList(), false, dtype);
}
Tensor prod(const Tensor& a, int64_t dim, bool keepdim,
            std::optional<DType> dtype) {
  FASTT_AUTOCAST(Fp32, a, prod(C(a), dim, keepdim, dtype));
  if (autograd::should_record(a))
    return autograd::prod(a, dim, keepdim,
                          [&] { return prod(a, dim, keepdim, dtype); });
  return sum_like(Op::prod, "prod", a, IntList(dim), keepdim, dtype);
}

Tensor mean(const Tensor& a, IntList dims, bool keepdim,
            std::optional<DType> dtype) {
  if (autograd::should_record(a))
    return autograd::mean(a, dims, keepdim, false,
                          [&] { return mean(a, dims, keepdim, dtype); });
  check_defined(a, "mean");
  DType t = dtype ? *dtype : a.dtype();
  if (is_complex(t)) return complex_reduce(Op::mean, "mean", a.to(t), dims,
                                           keepdim);
  check_floating(t, "mean", dtype.has_value());
  ReduceDims r;
  resolve_dims(a, dims, keepdim, "mean", r);
  Tensor in = a.to(t);
  return run_reduce(Op::mean, in, r, t);
}
Tensor mean(const Tensor& a, std::optional<DType> dtype) {
  if (autograd::should_record(a))
    return autograd::mean(a, {}, false, true, [&] { return mean(a, dtype); });
  if (FASTT_LIKELY(a.defined() && !dtype && a.is_floating_point()))
    return run_full(Op::mean, a, a.dtype());
  return mean(a, IntList(), false, dtype);
}

// ---- extremes ----
Tensor amax(const Tensor& a, IntList dims, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::amax_amin(true, a, dims, keepdim,
                               [&] { return amax(a, dims, keepdim); });
  return extreme(Op::amax, "amax", a, dims, keepdim);
}
Tensor amin(const Tensor& a, IntList dims, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::amax_amin(false, a, dims, keepdim,
                               [&] { return amin(a, dims, keepdim); });
  return extreme(Op::amin, "amin", a, dims, keepdim);
}
Tensor max(const Tensor& a) {
  if (autograd::should_record(a))
    return autograd::amax_amin(true, a, {}, false, [&] { return max(a); });
  return extreme(Op::amax, "max", a, IntList(), false);
}
Tensor min(const Tensor& a) {
  if (autograd::should_record(a))
    return autograd::amax_amin(false, a, {}, false, [&] { return min(a); });
  return extreme(Op::amin, "min", a, IntList(), false);
}
std::pair<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::max_min_dim(true, a, dim, keepdim);
  return extreme_dim(Op::max_dim, "max", a, dim, keepdim);
}
std::pair<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::max_min_dim(false, a, dim, keepdim);
  return extreme_dim(Op::min_dim, "min", a, dim, keepdim);
}
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(Op::argmax, "argmax", a, dim, keepdim);
}
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(Op::argmin, "argmin", a, dim, keepdim);
}

// ---- moments ----
Tensor var(const Tensor& a, IntList dims, double correction, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::var_std(false, a, dims, correction, keepdim);
  return var_impl("var", a, dims, correction, keepdim, false, false).first;
}
Tensor std(const Tensor& a, IntList dims, double correction, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::var_std(true, a, dims, correction, keepdim);
  return var_impl("std", a, dims, correction, keepdim, true, false).first;
}
std::pair<Tensor, Tensor> var_mean(const Tensor& a, IntList dims,
                                   double correction, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::var_std_mean(false, a, dims, correction, keepdim);
  return var_impl("var_mean", a, dims, correction, keepdim, false, true);
}
std::pair<Tensor, Tensor> std_mean(const Tensor& a, IntList dims,
                                   double correction, bool keepdim) {
  if (autograd::should_record(a))
    return autograd::var_std_mean(true, a, dims, correction, keepdim);
  return var_impl("std_mean", a, dims, correction, keepdim, true, true);
}

// ---- norm ----
Tensor norm(const Tensor& a, double p, IntList dims, bool keepdim,
            std::optional<DType> dtype) {
  // complex: the norm of |z| (its gradient through abs), as torch
  if (FASTT_UNLIKELY(a.defined() && is_complex(a.dtype()))) {
    FASTT_CHECK(!dtype || is_complex(*dtype), RuntimeError,
                "linalg.vector_norm: dtype should be complex for complex "
                "inputs, but got {}",
                torch_type_name(*dtype));
    return norm(abs(dtype ? a.to(*dtype) : a), p, dims, keepdim,
                std::nullopt);
  }
  if (autograd::should_record(a))
    return autograd::norm(a, p, dims, keepdim,
                          [&] { return norm(a, p, dims, keepdim, dtype); });
  check_defined(a, "linalg.vector_norm");
  if (dtype)
    FASTT_CHECK(is_floating(*dtype), RuntimeError,
                "linalg.vector_norm: dtype should be floating point, but got "
                "{}",
                torch_type_name(*dtype));
  FASTT_CHECK(is_floating(a.dtype()), RuntimeError,
              "linalg.vector_norm: Expected a floating point or complex "
              "tensor as input. Got {}",
              torch_type_name(a.dtype()));
  ReduceDims r;
  resolve_dims(a, dims, keepdim, "linalg.vector_norm", r);
  if (a.numel() == 0 && (p < 0 || p == INFINITY)) {
    bool empty_reduced = r.ndims == 0;
    for (int i = 0; i < r.ndims; ++i)
      empty_reduced |= a.sizes()[r.dims[i]] == 0;
    FASTT_CHECK(!empty_reduced, RuntimeError,
                "linalg.vector_norm cannot compute the {} norm on an empty "
                "tensor because the operation does not have an identity",
                p);
  }
  Tensor in = dtype ? a.to(*dtype) : a;
  return run_reduce(Op::norm, in, r, in.dtype(), p);
}

// ---- logical ----
Tensor all(const Tensor& a) { return logical(Op::all, "all", a, {}, false); }
Tensor all(const Tensor& a, IntList dims, bool keepdim) {
  return logical(Op::all, "all", a, dims, keepdim);
}
Tensor any(const Tensor& a) { return logical(Op::any, "any", a, {}, false); }
Tensor any(const Tensor& a, IntList dims, bool keepdim) {
  return logical(Op::any, "any", a, dims, keepdim);
}

// ---- logsumexp ----
// Complex (torch's): the real parts' max m (0 where infinite) shifts the
// exponentials: log(sum exp(a - m)) + m.
static Tensor complex_logsumexp(const Tensor& a, IntList dims,
                                bool keepdim) {
  int64_t d[kMaxDims];
  const int n = listed_dims(a, dims, keepdim, "logsumexp", d);
  const IntList rd(d, size_t(n));
  if (a.numel() == 0)
    return log(sum(exp(a), rd, keepdim, std::nullopt));
  Tensor m = amax(real_part(a), rd, true);
  m = where(isinf(m), Scalar(0.0), m);
  Tensor s = sum(exp(sub(a, m)), rd, keepdim, std::nullopt);
  return add(log(s), keepdim ? m : m.reshape(s.sizes()));
}

Tensor logsumexp(const Tensor& a, IntList dims, bool keepdim) {
  if (autograd::should_record(a)) return autograd::logsumexp(a, dims, keepdim);
  check_defined(a, "logsumexp");
  if (is_complex(a.dtype())) return complex_logsumexp(a, dims, keepdim);
  ReduceDims r;
  resolve_dims(a, dims, keepdim, "logsumexp", r);
  Tensor in = is_inexact(a.dtype()) ? a : a.to(default_dtype());
  return run_reduce(Op::logsumexp, in, r, in.dtype());
}

// ---- scans and softmax ----
namespace {
// The indices; with `values` (CPU only) the values too, in the same pass.
Tensor cum_extreme_run(const Tensor& a, int64_t dim, bool is_max,
                       Tensor* values) {
  const char* name = is_max ? "cummax" : "cummin";
  check_defined(a, name);
  const int64_t d = a.dim() == 0 ? 0 : wrap_dim(dim, a.dim(), name);
  KernelFn fn = lookup_kernel(Op::cum_extreme_index, a.device().type,
                              a.dtype());
  Tensor src = a.contiguous();
  Tensor out = Tensor::empty(src.sizes(), DType::Int64, src.device());
  if (values) *values = Tensor::empty(src.sizes(), src.dtype(), src.device());
  if (src.numel() == 0) return out;
  KernelArgs args;
  args.in[0] = &src;
  args.out = &out;
  args.out2 = values;
  args.i0 = d;
  args.i1 = is_max;
  fn(args);
  return out;
}
}  // namespace

Tensor cum_extreme_index(const Tensor& a, int64_t dim, bool is_max) {
  return cum_extreme_run(a, dim, is_max, nullptr);
}

std::tuple<Tensor, Tensor> cum_extreme(const Tensor& a, int64_t dim,
                                       bool is_max) {
  Tensor values;
  if (a.defined() && a.is_cpu()) {
    Tensor idx = cum_extreme_run(a, dim, is_max, &values);
    return {values, idx};
  }
  Tensor idx = cum_extreme_run(a, dim, is_max, nullptr);  // (checks dim)
  NoGradGuard no_grad;
  return {gather(a, a.dim() == 0 ? 0 : wrap_dim(dim, a.dim(), "cummax"), idx),
          idx};
}

Tensor cumsum(const Tensor& a, int64_t dim, std::optional<DType> dtype) {
  FASTT_AUTOCAST(CudaFp32, a, cumsum(C(a), dim, dtype));
  if (autograd::should_record(a))
    return autograd::cumsum_cumprod(true, a, dim,
                                    [&] { return cumsum(a, dim, dtype); });
  return scan(Op::cumsum, "cumsum", a, dim, dtype);
}
Tensor cumprod(const Tensor& a, int64_t dim, std::optional<DType> dtype) {
  FASTT_AUTOCAST(CudaFp32, a, cumprod(C(a), dim, dtype));
  if (autograd::should_record(a))
    return autograd::cumsum_cumprod(false, a, dim,
                                    [&] { return cumprod(a, dim, dtype); });
  return scan(Op::cumprod, "cumprod", a, dim, dtype);
}
Tensor softmax(const Tensor& a, int64_t dim, std::optional<DType> dtype) {
  FASTT_AUTOCAST(CudaFp32, a, softmax(C(a), dim, dtype));
  if (autograd::should_record(a))
    return autograd::softmax(false, a, dim,
                             [&] { return softmax(a, dim, dtype); });
  return softmax_like(Op::softmax, "softmax", a, dim, dtype);
}
Tensor log_softmax(const Tensor& a, int64_t dim, std::optional<DType> dtype) {
  FASTT_AUTOCAST(CudaFp32, a, log_softmax(C(a), dim, dtype));
  if (autograd::should_record(a))
    return autograd::softmax(true, a, dim,
                             [&] { return log_softmax(a, dim, dtype); });
  return softmax_like(Op::log_softmax, "log_softmax", a, dim, dtype);
}

}  // namespace fastt

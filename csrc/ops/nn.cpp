// Entry points of the fused nn ops: validate like torch (shapes, dtypes,
// devices, target ranges), make inputs dense, allocate the outputs and make
// one kernel call. Kernels read the nn_args layouts of nn.h and never see
// an invalid target or index.
#include "csrc/autocast.h"
#include "nn.h"

#include "autograd/functions_nn.h"
#include "csrc/autograd.h"

#include <cstring>

#include "../capture.h"
#include "../dispatch.h"
#include "elementwise.h"
#include "reduce.h"

namespace fastt {
namespace {
using namespace nn_args;


inline void check_defined(const Tensor& t, const char* op, const char* what) {
  FASTT_CHECK(t.defined(), ValueError, "{}(): got an undefined tensor for '{}'",
              op, what);
}

// An optional tensor argument: same device and dtype as the main input.
void check_companion(const Tensor& t, const Tensor& x, const char* op,
                     const char* what) {
  if (!t.defined()) return;
  FASTT_CHECK(t.device() == x.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}! ({})",
              op, x.device().str(), t.device().str(), what);
  FASTT_CHECK(t.dtype() == x.dtype(), RuntimeError,
              "{}: expected {} to have dtype {} like the input, but got {}",
              op, what, dtype_name(x.dtype()), dtype_name(t.dtype()));
}

// The dtype norms keep statistics in (float for the 16-bit floats).
DType opmath_dtype(DType t) {
  return (t == DType::Float16 || t == DType::BFloat16) ? DType::Float32 : t;
}

// ---- norms ----
// Rows and columns of x under normalized_shape, checked like torch.
struct NormShape {
  int64_t rows = 1, cols = 1;
  int64_t stat_shape[kMaxDims];  // x.shape[:axis] + [1] * len(shape)
  int ndim = 0;
  IntList stats() const { return {stat_shape, size_t(ndim)}; }
};

NormShape norm_shape(const Tensor& x, IntList shape, const Tensor& weight,
                     const Tensor& bias, const char* op) {
  const int64_t k = int64_t(shape.size());
  FASTT_CHECK(k >= 1, RuntimeError,
              "{}: Expected normalized_shape to be at least 1-dimensional, "
              "i.e., containing at least one element, but got "
              "normalized_shape = {}",
              op, shape_str(shape));
  FASTT_CHECK(!weight.defined() || weight.sizes().equals(shape), RuntimeError,
              "{}: Expected weight to be of same shape as normalized_shape, "
              "but got weight of shape {} and normalized_shape = {}",
              op, shape_str(weight.sizes()), shape_str(shape));
  FASTT_CHECK(!bias.defined() || bias.sizes().equals(shape), RuntimeError,
              "{}: Expected bias to be of same shape as normalized_shape, "
              "but got bias of shape {} and normalized_shape = {}",
              op, shape_str(bias.sizes()), shape_str(shape));
  const int64_t nd = x.dim(), axis = nd - k;
  bool ok = axis >= 0;
  for (int64_t i = 0; ok && i < k; ++i)
    ok = x.sizes()[size_t(axis + i)] == shape[size_t(i)];
  FASTT_CHECK(ok, RuntimeError,
              "{}: Given normalized_shape={}, expected input with shape [*, "
              "{}], but got input of size{}",
              op, shape_str(shape),
              fmt::join(shape.begin(), shape.end(), ", "),
              shape_str(x.sizes()));
  check_companion(weight, x, op, "weight");
  check_companion(bias, x, op, "bias");
  NormShape r;
  r.ndim = int(nd);
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t s = x.sizes()[size_t(d)];
    if (d < axis) {
      r.rows *= s;
      r.stat_shape[d] = s;
    } else {
      r.cols *= s;
      r.stat_shape[d] = 1;
    }
  }
  return r;
}

// Saved statistics handed back to a backward: `n` elements of dtype `dt`.
Tensor check_stat(const Tensor& s, const Tensor& x, int64_t n, DType dt,
                  const char* op, const char* what) {
  check_defined(s, op, what);
  FASTT_CHECK(s.numel() == n && s.dtype() == dt && s.device() == x.device(),
              RuntimeError,
              "{}: expected {} to hold {} {} values (one per normalized row), "
              "but got a {} tensor of shape {}",
              op, what, n, dtype_name(dt), dtype_name(s.dtype()),
              shape_str(s.sizes()));
  return s.contiguous();
}

void check_grad_like(const Tensor& g, const Tensor& x, const char* op) {
  FASTT_CHECK(g.sizes().equals(x.sizes()), RuntimeError,
              "{}: expected grad_out of shape {} like the input, but got {}",
              op, shape_str(x.sizes()), shape_str(g.sizes()));
  check_companion(g, x, op, "grad_out");
}

inline Tensor dense_or_none(const Tensor& t) {
  return t.defined() ? t.contiguous() : Tensor();
}

// ---- losses ----
// Fills dims [N, C, inner, reduction, ignore_index] from input and target,
// checking their shapes like torch.
void loss_dims(const Tensor& input, const Tensor& target, int64_t reduction,
               int64_t ignore_index, const char* op, int64_t* dims) {
  FASTT_CHECK(reduction >= kReductionNone && reduction <= kReductionSum,
              ValueError, "{}: {} is not a valid value for reduction", op,
              reduction);
  const int64_t nd = input.dim();
  FASTT_CHECK(nd >= 1, RuntimeError,
              "{}: input must have at least one dimension (classes), but got "
              "a 0-d tensor",
              op);
  FASTT_CHECK(target.dtype() == DType::Int64, RuntimeError,
              "{}: expected target dtype to be Long or Byte, but got {}", op,
              torch_type_name(target.dtype()));
  FASTT_CHECK(target.device() == input.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, input.device().str(), target.device().str());
  if (nd == 1) {
    FASTT_CHECK(target.dim() == 0, RuntimeError,
                "{}: 1D input of shape {} expects a 0-d target, but got "
                "target of shape {}",
                op, shape_str(input.sizes()), shape_str(target.sizes()));
    dims[kDimN] = 1;
    dims[kDimC] = input.size(0);
    dims[kDimInner] = 1;
  } else {
    FASTT_CHECK(target.dim() >= 1 && target.size(0) == input.size(0),
                ValueError,
                "{}: Expected input batch_size ({}) to match target "
                "batch_size ({}).",
                op, input.size(0), target.dim() ? target.size(0) : 0);
    bool ok = target.dim() == nd - 1;
    int64_t inner = 1;
    for (int64_t d = 2; d < nd; ++d) {
      inner *= input.size(d);
      ok = ok && target.size(d - 1) == input.size(d);
    }
    if (!ok) {
      std::vector<int64_t> want{input.size(0)};
      for (int64_t d = 2; d < nd; ++d) want.push_back(input.size(d));
      throw RuntimeError(fmt::format("{}: Expected target size {}, got {}",
                                     op, shape_str(want),
                                     shape_str(target.sizes())));
    }
    dims[kDimN] = input.size(0);
    dims[kDimC] = input.size(1);
    dims[kDimInner] = inner;
  }
  dims[kDimReduction] = reduction;
  dims[kDimIgnore] = ignore_index;
}

// uint8 targets are accepted like torch (as int64); others must be int64.
Tensor as_index_target(const Tensor& target, const char* op) {
  check_defined(target, op, "target");
  if (target.dtype() == DType::UInt8) return target.to(DType::Int64);
  return target.contiguous();
}

// Host-side range check of class targets (IndexError like torch's CPU
// kernels). CUDA targets are not read here: that would cost a device
// sync per loss call (torch itself only device-asserts, which poisons the
// CUDA context). The CUDA kernels never index memory with a bad target;
// they report it through the device error slot, raised as the same
// IndexError at the next synchronization (kernels/cuda/device_error.h).
FASTT_NOINLINE void check_targets(const Tensor& target, int64_t classes,
                                  int64_t ignore_index) {
  if (!target.device().is_cpu()) return;
  const int64_t* t = static_cast<const int64_t*>(target.data_ptr());
  const int64_t n = target.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = t[i];
    if (FASTT_UNLIKELY((v < 0 || v >= classes) && v != ignore_index))
      throw IndexError(fmt::format("Target {} is out of bounds.", v));
  }
}

void check_class_weight(const Tensor& weight, const Tensor& input,
                        int64_t classes, const char* op) {
  if (!weight.defined()) return;
  FASTT_CHECK(weight.dim() == 1 && weight.numel() == classes, RuntimeError,
              "{}: weight tensor should be defined either for all {} classes "
              "or no classes but got weight tensor of shape: {}",
              op, classes, shape_str(weight.sizes()));
  check_companion(weight, input, op, "weight");
}

// Everything a loss forward or backward checks; returns the dense target.
Tensor check_loss_args(const Tensor& input, const Tensor& target,
                       const Tensor& weight, int64_t reduction,
                       int64_t ignore_index, const char* op, int64_t* dims) {
  Tensor tgt = as_index_target(target, op);
  loss_dims(input, tgt, reduction, ignore_index, op, dims);
  check_class_weight(weight, input, dims[kDimC], op);
  check_targets(tgt, dims[kDimC], ignore_index);
  // A replay checks its targets too (CUDA targets: the kernel does).
  if (FASTT_UNLIKELY(g_capturing) && tgt.device().is_cpu()) {
    const int64_t classes = dims[kDimC];
    capture::host_step({tgt}, [classes, ignore_index](Tensor* t) {
      check_targets(t[0], classes, ignore_index);
    });
  }
  return tgt;
}

void check_smoothing(double ls, const char* op) {
  FASTT_CHECK(ls >= 0.0 && ls <= 1.0, RuntimeError,
              "{}: label_smoothing must be between 0.0 and 1.0. Got: {}", op,
              ls);
}

// The incoming gradient of a loss: the target's shape for reduction none,
// one element otherwise.
Tensor check_loss_grad(const Tensor& g, const Tensor& input,
                       const Tensor& target, int64_t reduction,
                       const char* op) {
  check_defined(g, op, "grad");
  if (reduction == kReductionNone)
    FASTT_CHECK(g.sizes().equals(target.sizes()), RuntimeError,
                "{}: expected grad of shape {} (reduction='none'), but got {}",
                op, shape_str(target.sizes()), shape_str(g.sizes()));
  else
    FASTT_CHECK(g.numel() == 1, RuntimeError,
                "{}: expected a one-element grad for a reduced loss, but got "
                "shape {}",
                op, shape_str(g.sizes()));
  check_companion(g, input, op, "grad");
  return g.contiguous();
}

}  // namespace

int64_t reduction_from_name(const char* name) {
  if (std::strcmp(name, "mean") == 0) return kReductionMean;
  if (std::strcmp(name, "sum") == 0) return kReductionSum;
  if (std::strcmp(name, "none") == 0) return kReductionNone;
  throw ValueError(fmt::format("{} is not a valid value for reduction", name));
}

// ---- softmax backward ----
namespace {
Tensor softmax_backward_impl(Op op, const char* name, const Tensor& grad_out,
                             const Tensor& out, int64_t dim) {
  check_defined(grad_out, name, "grad_output");
  check_defined(out, name, "output");
  FASTT_CHECK(grad_out.sizes().equals(out.sizes()), RuntimeError,
              "{}: grad_output of shape {} does not match output of shape {}",
              name, shape_str(grad_out.sizes()), shape_str(out.sizes()));
  check_companion(grad_out, out, name, "grad_output");
  const int64_t d = wrap_dim(dim, out.dim(), name);
  KernelFn fn = lookup_kernel(op, out.device().type, out.dtype());
  Tensor g = grad_out.contiguous();
  Tensor y = out.contiguous();
  Tensor r = Tensor::empty(out.sizes(), out.dtype(), out.device());
  if (r.numel() == 0) return r;
  KernelArgs a;
  a.in[0] = &g;
  a.in[1] = &y;
  a.out = &r;
  a.out2 = nullptr;
  a.i0 = d;
  fn(a);
  return r;
}
}  // namespace

Tensor softmax_backward(const Tensor& grad_out, const Tensor& out,
                        int64_t dim) {
  return softmax_backward_impl(Op::softmax_backward, "softmax_backward",
                               grad_out, out, dim);
}
Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& out,
                            int64_t dim) {
  return softmax_backward_impl(Op::log_softmax_backward,
                               "log_softmax_backward", grad_out, out, dim);
}

// ---- layer norm ----
std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x,
                                              IntList normalized_shape,
                                              const Tensor& weight,
                                              const Tensor& bias, double eps) {
  FASTT_AUTOCAST(CudaFp32, x, layer_norm(C(x), normalized_shape, C(weight), C(bias), eps));
  if (autograd::should_record(x, weight, bias))
    return autograd::layer_norm(x, normalized_shape, weight, bias, eps);
  const char* op = "layer_norm";
  check_defined(x, op, "input");
  const NormShape s = norm_shape(x, normalized_shape, weight, bias, op);
  KernelFn fn = lookup_kernel(Op::layer_norm, x.device().type, x.dtype());
  Tensor t[kLnN];
  t[kLnX] = x.contiguous();
  t[kLnWeight] = dense_or_none(weight);
  t[kLnBias] = dense_or_none(bias);
  t[kLnOut] = Tensor::empty(x.sizes(), x.dtype(), x.device());
  t[kLnMean] = Tensor::empty(s.stats(), x.dtype(), x.device());
  t[kLnRstd] = Tensor::empty(s.stats(), x.dtype(), x.device());
  KernelArgs a;
  a.in[0] = t;
  a.i0 = s.rows;
  a.i1 = s.cols;
  a.f0 = eps;
  fn(a);
  return {std::move(t[kLnOut]), std::move(t[kLnMean]),
          std::move(t[kLnRstd])};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(
    const Tensor& grad_out, const Tensor& x, IntList normalized_shape,
    const Tensor& mean, const Tensor& rstd, const Tensor& weight,
    const Tensor& bias, std::array<bool, 3> mask) {
  const char* op = "layer_norm_backward";
  check_defined(x, op, "input");
  check_defined(grad_out, op, "grad_out");
  const NormShape s = norm_shape(x, normalized_shape, weight, bias, op);
  check_grad_like(grad_out, x, op);
  KernelFn fn =
      lookup_kernel(Op::layer_norm_backward, x.device().type, x.dtype());
  Tensor t[kLnbN];
  t[kLnbMean] = check_stat(mean, x, s.rows, x.dtype(), op, "mean");
  t[kLnbRstd] = check_stat(rstd, x, s.rows, x.dtype(), op, "rstd");
  t[kLnbGrad] = grad_out.contiguous();
  t[kLnbX] = x.contiguous();
  t[kLnbWeight] = dense_or_none(weight);
  if (mask[0]) t[kLnbDx] = Tensor::empty(x.sizes(), x.dtype(), x.device());
  if (mask[1] && weight.defined())
    t[kLnbDweight] = Tensor::empty(normalized_shape, x.dtype(), x.device());
  if (mask[2] && bias.defined())
    t[kLnbDbias] = Tensor::empty(normalized_shape, x.dtype(), x.device());
  KernelArgs a;
  a.in[0] = t;
  a.i0 = s.rows;
  a.i1 = s.cols;
  fn(a);
  return {std::move(t[kLnbDx]), std::move(t[kLnbDweight]),
          std::move(t[kLnbDbias])};
}

// ---- RMS norm ----
static double rms_eps(DType dt, std::optional<double> eps) {
  if (eps) return *eps;
  switch (dt) {  // torch.finfo(dtype).eps
    case DType::Float16: return 0.0009765625;
    case DType::BFloat16: return 0.0078125;
    case DType::Float64: case DType::Complex128:
      return 2.220446049250313e-16;
    default: return 1.1920928955078125e-07;
  }
}

// Complex input: torch's composition, x rsqrt(mean(x * x) + eps) (the
// square, not |x|^2); its gradient is the composition's. The weight's
// dtype promotes with the result's (a real weight too), as torch's.
static std::tuple<Tensor, Tensor> complex_rms_norm(
    const Tensor& x, IntList normalized_shape, const Tensor& weight,
    std::optional<double> eps) {
  const bool same = !weight.defined() || weight.dtype() == x.dtype();
  norm_shape(x, normalized_shape, same ? weight : weight.to(x.dtype()),
             Tensor(), "rms_norm");  // shapes and devices
  int64_t d[kMaxDims];
  const int n = int(normalized_shape.size());
  for (int i = 0; i < n; ++i) d[i] = i - n;
  Tensor r = rsqrt(add(mean(mul(x, x), IntList(d, size_t(n)), true,
                            std::nullopt),
                       Scalar(rms_eps(x.dtype(), eps))));
  Tensor out = mul(x, r);
  if (weight.defined()) out = mul(out, weight);
  return {out, r};
}

std::tuple<Tensor, Tensor> rms_norm(const Tensor& x, IntList normalized_shape,
                                    const Tensor& weight,
                                    std::optional<double> eps) {
  if (FASTT_UNLIKELY(x.defined() && is_complex(x.dtype())))
    return complex_rms_norm(x, normalized_shape, weight, eps);
  if (autograd::should_record(x, weight))
    return autograd::rms_norm(x, normalized_shape, weight, eps);
  const char* op = "rms_norm";
  check_defined(x, op, "input");
  const NormShape s = norm_shape(x, normalized_shape, weight, Tensor(), op);
  KernelFn fn = lookup_kernel(Op::rms_norm, x.device().type, x.dtype());
  const double e = rms_eps(x.dtype(), eps);
  Tensor t[kRmsN];
  t[kRmsX] = x.contiguous();
  t[kRmsWeight] = dense_or_none(weight);
  t[kRmsOut] = Tensor::empty(x.sizes(), x.dtype(), x.device());
  t[kRmsRstd] =
      Tensor::empty(s.stats(), opmath_dtype(x.dtype()), x.device());
  KernelArgs a;
  a.in[0] = t;
  a.i0 = s.rows;
  a.i1 = s.cols;
  a.f0 = e;
  fn(a);
  return {std::move(t[kRmsOut]), std::move(t[kRmsRstd])};
}

std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_out,
                                             const Tensor& x,
                                             IntList normalized_shape,
                                             const Tensor& rstd,
                                             const Tensor& weight,
                                             std::array<bool, 2> mask) {
  const char* op = "rms_norm_backward";
  check_defined(x, op, "input");
  check_defined(grad_out, op, "grad_out");
  const NormShape s = norm_shape(x, normalized_shape, weight, Tensor(), op);
  check_grad_like(grad_out, x, op);
  KernelFn fn =
      lookup_kernel(Op::rms_norm_backward, x.device().type, x.dtype());
  Tensor t[kRmsbN];
  t[kRmsbRstd] =
      check_stat(rstd, x, s.rows, opmath_dtype(x.dtype()), op, "rstd");
  t[kRmsbGrad] = grad_out.contiguous();
  t[kRmsbX] = x.contiguous();
  t[kRmsbWeight] = dense_or_none(weight);
  if (mask[0]) t[kRmsbDx] = Tensor::empty(x.sizes(), x.dtype(), x.device());
  if (mask[1] && weight.defined())
    t[kRmsbDweight] = Tensor::empty(normalized_shape, x.dtype(), x.device());
  KernelArgs a;
  a.in[0] = t;
  a.i0 = s.rows;
  a.i1 = s.cols;
  fn(a);
  return {std::move(t[kRmsbDx]), std::move(t[kRmsbDweight])};
}

// ---- cross-entropy ----
std::tuple<Tensor, Tensor> cross_entropy(const Tensor& logits,
                                         const Tensor& target,
                                         const Tensor& weight,
                                         int64_t reduction,
                                         int64_t ignore_index,
                                         double label_smoothing) {
  FASTT_AUTOCAST(Fp32, logits, cross_entropy(C(logits), target, C(weight), reduction, ignore_index, label_smoothing));
  if (autograd::should_record(logits))
    return autograd::cross_entropy(logits, target, weight, reduction,
                                   ignore_index, label_smoothing);
  const char* op = "cross_entropy";
  int64_t dims[kDimCount];
  check_defined(logits, op, "input");
  KernelFn fn =
      lookup_kernel(Op::cross_entropy, logits.device().type, logits.dtype());
  Tensor t[kLossN];
  t[kLossTarget] = check_loss_args(logits, target, weight, reduction,
                                   ignore_index, op, dims);
  check_smoothing(label_smoothing, op);
  const DType dt = logits.dtype();
  t[kLossInput] = logits.contiguous();
  t[kLossWeight] = dense_or_none(weight);
  t[kLossOut] = reduction == kReductionNone
                    ? Tensor::empty(target.sizes(), dt, logits.device())
                    : Tensor::empty({}, dt, logits.device());
  t[kLossAux] = Tensor::empty(target.sizes(), DType::Float64, logits.device());
  KernelArgs a;
  a.in[0] = t;
  a.dims = IntList(dims, kDimCount);
  a.f0 = label_smoothing;
  fn(a);
  return {std::move(t[kLossOut]), std::move(t[kLossAux])};
}

Tensor cross_entropy_backward(const Tensor& grad_loss, const Tensor& logits,
                              const Tensor& target, const Tensor& weight,
                              int64_t reduction, int64_t ignore_index,
                              double label_smoothing, const Tensor& lse) {
  const char* op = "cross_entropy_backward";
  int64_t dims[kDimCount];
  check_defined(logits, op, "input");
  KernelFn fn = lookup_kernel(Op::cross_entropy_backward,
                              logits.device().type, logits.dtype());
  Tensor t[kLbN];
  t[kLbTarget] = check_loss_args(logits, target, weight, reduction,
                                 ignore_index, op, dims);
  check_smoothing(label_smoothing, op);
  t[kLbGrad] = check_loss_grad(grad_loss, logits, target, reduction, op);
  const DType dt = logits.dtype();
  check_defined(lse, op, "lse");
  FASTT_CHECK(lse.sizes().equals(target.sizes()) &&
                  lse.dtype() == DType::Float64 &&
                  lse.device() == logits.device(),
              RuntimeError,
              "{}: expected lse to be the float64 tensor of shape {} that "
              "cross_entropy returned, but got {} of shape {}",
              op, shape_str(target.sizes()), dtype_name(lse.dtype()),
              shape_str(lse.sizes()));
  t[kLbInput] = logits.contiguous();
  t[kLbWeight] = dense_or_none(weight);
  t[kLbAux] = lse.contiguous();
  t[kLbOut] = Tensor::empty(logits.sizes(), dt, logits.device());
  KernelArgs a;
  a.in[0] = t;
  a.dims = IntList(dims, kDimCount);
  a.f0 = label_smoothing;
  fn(a);
  return std::move(t[kLbOut]);
}

// ---- NLL ----
std::tuple<Tensor, Tensor> nll_loss(const Tensor& input, const Tensor& target,
                                    const Tensor& weight, int64_t reduction,
                                    int64_t ignore_index) {
  FASTT_AUTOCAST(Fp32, input, nll_loss(C(input), target, C(weight), reduction, ignore_index));
  if (autograd::should_record(input))
    return autograd::nll_loss(input, target, weight, reduction, ignore_index);
  const char* op = "nll_loss";
  int64_t dims[kDimCount];
  check_defined(input, op, "input");
  KernelFn fn = lookup_kernel(Op::nll_loss, input.device().type, input.dtype());
  Tensor t[kLossN];
  t[kLossTarget] = check_loss_args(input, target, weight, reduction,
                                   ignore_index, op, dims);
  const DType dt = input.dtype();
  t[kLossInput] = input.contiguous();
  t[kLossWeight] = dense_or_none(weight);
  t[kLossOut] = reduction == kReductionNone
                    ? Tensor::empty(target.sizes(), dt, input.device())
                    : Tensor::empty({}, dt, input.device());
  t[kLossAux] = Tensor::empty({}, dt, input.device());
  KernelArgs a;
  a.in[0] = t;
  a.dims = IntList(dims, kDimCount);
  fn(a);
  return {std::move(t[kLossOut]), std::move(t[kLossAux])};
}

Tensor nll_loss_backward(const Tensor& grad_loss, const Tensor& input,
                         const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  const char* op = "nll_loss_backward";
  int64_t dims[kDimCount];
  check_defined(input, op, "input");
  KernelFn fn = lookup_kernel(Op::nll_loss_backward, input.device().type,
                              input.dtype());
  Tensor t[kLbN];
  t[kLbTarget] = check_loss_args(input, target, weight, reduction,
                                 ignore_index, op, dims);
  t[kLbGrad] = check_loss_grad(grad_loss, input, target, reduction, op);
  check_defined(total_weight, op, "total_weight");
  FASTT_CHECK(total_weight.numel() == 1, RuntimeError,
              "{}: expected total_weight to be a single element tensor, got: "
              "{} ({} elements)",
              op, shape_str(total_weight.sizes()), total_weight.numel());
  check_companion(total_weight, input, op, "total_weight");
  const DType dt = input.dtype();
  t[kLbInput] = input;
  t[kLbWeight] = dense_or_none(weight);
  t[kLbAux] = total_weight.contiguous();
  t[kLbOut] = Tensor::empty(input.sizes(), dt, input.device());
  KernelArgs a;
  a.in[0] = t;
  a.dims = IntList(dims, kDimCount);
  fn(a);
  return std::move(t[kLbOut]);
}

// ---- embedding ----
Tensor embedding_backward(const Tensor& grad, const Tensor& indices,
                          int64_t num_weights, int64_t padding_idx) {
  const char* op = "embedding_backward";
  check_defined(grad, op, "grad");
  check_defined(indices, op, "indices");
  FASTT_CHECK(indices.dtype() == DType::Int64 ||
                  indices.dtype() == DType::Int32,
              RuntimeError,
              "{}: Expected tensor for argument #1 'indices' to have one of "
              "the following scalar types: Long, Int; but got {} instead",
              op, dtype_name(indices.dtype()));
  FASTT_CHECK(num_weights >= 0, RuntimeError,
              "{}: num_weights must be non-negative, got {}", op,
              num_weights);
  bool ok = grad.dim() == indices.dim() + 1;
  for (int64_t d = 0; ok && d < indices.dim(); ++d)
    ok = grad.size(d) == indices.size(d);
  FASTT_CHECK(ok, RuntimeError,
              "{}: expected grad of shape indices.shape + [embedding_dim] "
              "(indices {}), but got {}",
              op, shape_str(indices.sizes()), shape_str(grad.sizes()));
  FASTT_CHECK(grad.device() == indices.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, grad.device().str(), indices.device().str());
  KernelFn fn =
      lookup_kernel(Op::embedding_backward, grad.device().type, grad.dtype());
  Tensor idx = indices.dtype() == DType::Int64 ? indices.contiguous()
                                               : indices.to(DType::Int64);
  // CUDA indices are not read on the host (no device sync); the kernel
  // lets an index outside [0, num_weights) match no row and reports it,
  // raised at the next synchronization (kernels/cuda/device_error.h).
  if (idx.device().is_cpu()) {
    auto check = [num_weights, op](const Tensor* t) {
      const int64_t* p = static_cast<const int64_t*>(t->data_ptr());
      for (int64_t i = 0, n = t->numel(); i < n; ++i)
        FASTT_CHECK(p[i] >= 0 && p[i] < num_weights, IndexError,
                    "{}: index out of range in self (index {}, num_weights "
                    "{})",
                    op, p[i], num_weights);
    };
    check(&idx);
    if (FASTT_UNLIKELY(g_capturing)) capture::host_step({idx}, check);
  }
  Tensor g = grad.contiguous();
  const int64_t dim = grad.size(grad.dim() - 1);
  Tensor out = Tensor::empty({num_weights, dim}, grad.dtype(), grad.device());
  KernelArgs a;
  a.in[0] = &g;
  a.in[1] = &idx;
  a.out = &out;
  a.out2 = nullptr;
  a.i0 = padding_idx;
  fn(a);
  return out;
}

}  // namespace fastt

// Elementwise entry points. Every op funnels into `elementwise()`, which
// promotes (PyTorch rules), broadcasts, allocates or checks the output,
// builds the loop and makes one table call; the two-tensor case with equal
// shapes, dtypes and dense layouts takes `binary_fast` first.
#include "elementwise.h"

#include <cstring>
#include <type_traits>

#include "complex.h"
#include "factory.h"
#include "loop_builder.h"
#include "../capture.h"
#include "../mutation.h"
#include "autograd/functions.h"
#include "csrc/autograd.h"

namespace fastt {
namespace {

// How the result dtype follows from the promoted input dtype.
enum class Rule : uint8_t {
  Same,   // result = promoted inputs
  Float,  // integer/bool promote to the default float dtype
  Bool,   // computed in the promoted dtype, result is bool
};

struct Operand {
  const Tensor* t = nullptr;
  const Scalar* s = nullptr;
  Operand(const Tensor& x) : t(&x) {}
  Operand(const Scalar& x) : s(&x) {}
};

struct Params {
  double f0 = 1.0;
  int64_t i0 = 1;
  // f1: a complex alpha's imaginary part (add/sub), nan_to_num's posinf;
  // f2: nan_to_num's neginf, passed by the general path only (the one
  // nan_to_num_kernel calls).
  double f1 = 0.0, f2 = 0.0;
  void apply(KernelArgs& args) const {
    args.f0 = f0;
    args.f1 = f1;
    args.i0 = i0;
  }
};

// Scalars that an op writes as values (where, clamp bounds) must fit the
// result dtype, like torch's checked_convert; arithmetic operands wrap.
FASTT_NOINLINE void check_value_scalars(const char* op, const Operand* ins,
                                        int n) {
  ResultTypeState st;
  for (int k = 0; k < n; ++k) {
    if (ins[k].t) st.add(*ins[k].t);
    else st.add(*ins[k].s);
  }
  const DType r = st.result();
  for (int k = 0; k < n; ++k)
    if (ins[k].s) check_scalar_fits(*ins[k].s, r, op);
}

inline bool cpu_scalar_tensor(const Tensor& t) {
  return t.dim() == 0 && t.is_cpu();
}

[[noreturn]] FASTT_NOINLINE void throw_device_mismatch(Op op, Device a,
                                                       Device b) {
  throw RuntimeError(fmt::format(
      "{}: Expected all tensors to be on the same device, but found at "
      "least two devices, {} and {}!",
      op_name(op), a.str(), b.str()));
}

// Integer division ops raise on a zero divisor, like torch's
// "ZeroDivisionError"; float division follows IEEE (inf / nan).
constexpr bool is_int_division(Op op) {
  return op == Op::div_floor || op == Op::div_trunc || op == Op::remainder ||
         op == Op::fmod;
}

[[noreturn]] FASTT_NOINLINE void throw_zero_division(Op op) {
  throw RuntimeError(fmt::format(
      "{}: ZeroDivisionError (integer division or modulo by zero)",
      op_name(op)));
}

// Whether a CPU tensor of an integral dtype holds a zero (any layout).
FASTT_NOINLINE bool has_zero(const Tensor& t) {
  if (t.numel() == 0) return false;
  return visit_dtype(t.dtype(), [&](auto tag) -> bool {
    using T = decltype(tag);
    if constexpr (!std::is_integral<T>::value) {
      return false;
    } else {
      const T* base = static_cast<const T*>(t.data_ptr());
      const int64_t n = t.numel();
      if (t.is_contiguous()) {
        for (int64_t i = 0; i < n; ++i)
          if (base[i] == T(0)) return true;
        return false;
      }
      const int nd = int(t.dim());
      int64_t idx[kMaxDims] = {};
      int64_t off = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (base[off] == T(0)) return true;
        for (int d = nd - 1; d >= 0; --d) {  // odometer step
          off += t.strides()[size_t(d)];
          if (++idx[d] < t.sizes()[size_t(d)]) break;
          off -= idx[d] * t.strides()[size_t(d)];
          idx[d] = 0;
        }
      }
      return false;
    }
  });
}

// Divisor operand k of a built (or scalar-filled) KernelArgs: a tensor
// `t`, or the scalar stored in args.scalar_buf[k] in dtype `dt`.
void check_divisor(Op op, DType dt, const Tensor* t, const KernelArgs& args,
                   int k) {
  if (!is_int_division(op) || !is_integral(dt, true)) return;
  bool zero;
  if (t) {
    // A device divisor is not scanned: that would be a reduction plus a
    // host sync on every integer division. The functors give 0 for a zero
    // divisor instead of raising (torch's CUDA does not raise either).
    if (!t->is_cpu()) return;
    zero = has_zero(*t);
    if (FASTT_UNLIKELY(g_capturing)) {  // a replay checks its divisor too
      capture::host_step({*t}, [op](Tensor* divisor) {
        if (has_zero(divisor[0])) throw_zero_division(op);
      });
    }
  } else {
    zero = visit_dtype(dt, [&](auto tag) -> bool {
      using T = decltype(tag);
      T v;
      std::memcpy(&v, args.scalar_buf[k], sizeof(T));
      return static_cast<opmath_t<T>>(v) == opmath_t<T>(0);
    });
  }
  if (zero) throw_zero_division(op);
}

// The general path. `first_promoted` skips inputs before it in promotion
// (where's condition). `out` may alias an input (in-place).
Tensor elementwise(Op op, Rule rule, const Operand* ins, int nin, Tensor* out,
                   const Params& p, int first_promoted = 0,
                   DType forced_compute = DType(255)) {
  // Device, promotion, broadcast shape. Like torch, a 0-d CPU tensor may
  // join an op on another device: it promotes as a tensor and rides into
  // the kernel as a scalar (no copy to the device).
  Device device = kCPU;
  bool have_device = false;
  for (int k = 0; k < nin && !have_device; ++k)
    if (ins[k].t && ins[k].t->defined() && !cpu_scalar_tensor(*ins[k].t)) {
      device = ins[k].t->device();
      have_device = true;
    }
  ResultTypeState state;
  int64_t shape[kMaxDims];
  int ndim = 0;
  for (int k = 0; k < nin; ++k) {
    if (ins[k].t) {
      const Tensor& t = *ins[k].t;
      FASTT_CHECK(t.defined(), ValueError, "{}: got an undefined tensor",
                  op_name(op));
      if (!have_device) {
        device = t.device();
        have_device = true;
      } else if (t.device() != device && !cpu_scalar_tensor(t)) {
        throw_device_mismatch(op, device, t.device());
      }
      if (k >= first_promoted) state.add(t);
      ndim = broadcast_shapes(IntList(shape, ndim), t.sizes(), shape,
                              op_name(op));
    } else if (k >= first_promoted) {
      state.add(*ins[k].s);
    }
  }
  if (out && out->defined() && out->device() != device)
    throw_device_mismatch(op, device, out->device());
  DType compute = forced_compute != DType(255) ? forced_compute
                                               : state.result();
  if (rule == Rule::Float && !is_inexact(compute)) compute = default_dtype();
  DType result = rule == Rule::Bool ? DType::Bool : compute;

  Tensor fresh;
  Tensor* dst = out;
  Tensor staging;  // when out's dtype differs from the result dtype
  if (dst && dst->defined()) {
    FASTT_CHECK(dst->sizes().equals(IntList(shape, ndim)), RuntimeError,
                "{}: output with shape {} doesn't match the broadcast shape {}",
                op_name(op), shape_str(dst->sizes()),
                shape_str(IntList(shape, ndim)));
    FASTT_CHECK(can_cast(result, dst->dtype()), RuntimeError,
                "{}: result type {} can't be cast to the desired output type "
                "{}",
                op_name(op), dtype_name(result), dtype_name(dst->dtype()));
    check_no_internal_overlap(*dst, op_name(op));
    for (int k = 0; k < nin; ++k)
      if (ins[k].t) check_no_partial_overlap(*dst, *ins[k].t, op_name(op));
    if (dst->dtype() != result) {
      staging = Tensor::empty(IntList(shape, ndim), result, device);
      dst = &staging;
    }
  } else {
    fresh = Tensor::empty(IntList(shape, ndim), result, device);
    dst = &fresh;
  }

  // Inputs in the compute dtype (a copy only when they differ).
  Tensor converted[kMaxOperands];
  const Tensor* tensors[kMaxOperands + 1];
  KernelArgs args;
  tensors[0] = dst;
  for (int k = 0; k < nin; ++k) {
    if (ins[k].t && ins[k].t->device() != device) {  // a 0-d CPU tensor
      tensors[k + 1] = nullptr;
      store_scalar(args, k + 1, ins[k].t->item(),
                   k < first_promoted ? ins[k].t->dtype() : compute);
    } else if (ins[k].t) {
      const Tensor& t = *ins[k].t;
      bool keep = k < first_promoted || t.dtype() == compute;
      if (!keep) converted[k] = t.to(compute);
      tensors[k + 1] = keep ? &t : &converted[k];
    } else {
      tensors[k + 1] = nullptr;
      store_scalar(args, k + 1, *ins[k].s,
                   k < first_promoted ? ins[k].s->natural_dtype() : compute);
    }
  }
  p.apply(args);
  args.f1 = p.f1;
  args.s0 = Scalar(p.f2);
  KernelFn fn = lookup_kernel(op, device.type, compute);
  if (dst->numel() > 0) {
    if (is_int_division(op)) check_divisor(op, compute, tensors[2], args, 2);
    build_loop(args, tensors, nin + 1);
    fn(args);
  }
  if (out && out->defined()) {
    if (dst != out) out->copy_(*dst);
    if (!FASTT_MUTANT(InplaceNoVersionBump)) out->bump_version();
    return *out;
  }
  return fresh;
}

// Same shape, dtype and dense layout: no promotion or broadcasting work.
inline bool dense_pair(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.is_contiguous() && b.is_contiguous() &&
         a.device() == b.device() && a.sizes().equals(b.sizes());
}

inline Tensor binary(Op op, Rule rule, const Tensor& a, const Tensor& b,
                     const Params& p = {}) {
  if (FASTT_LIKELY(a.defined() && b.defined() && dense_pair(a, b) &&
                   (rule != Rule::Float || a.is_floating_point()))) {
    KernelFn fn = lookup_kernel(op, a.device().type, a.dtype());
    if (is_int_division(op) && is_integral(a.dtype(), true) && a.numel() > 0)
      check_divisor(op, a.dtype(), &b, KernelArgs(), 2);
    Tensor out = Tensor::empty(a.sizes(), rule == Rule::Bool ? DType::Bool
                                                             : a.dtype(),
                               a.device());
    KernelArgs args;
    const Tensor* ts[3] = {&out, &a, &b};
    build_dense_loop(args, ts, 3);
    p.apply(args);
    fn(args);
    return out;
  }
  Operand ins[2] = {a, b};
  return elementwise(op, rule, ins, 2, nullptr, p);
}

// Tensor-scalar: the scalar rides in args.scalar_buf with stride 0.
inline Tensor binary(Op op, Rule rule, const Tensor& a, const Scalar& b,
                     const Params& p = {}) {
  if (FASTT_LIKELY(a.defined() && a.is_contiguous() &&
                   (is_complex(a.dtype()) ||
                    (!b.is_complex() &&
                     (is_floating(a.dtype()) || !b.is_floating()))) &&
                   (rule != Rule::Float || a.is_floating_point()) &&
                   a.dtype() != DType::Bool && !b.is_bool())) {
    DType t = a.dtype();
    KernelFn fn = lookup_kernel(op, a.device().type, t);
    Tensor out =
        Tensor::empty(a.sizes(), rule == Rule::Bool ? DType::Bool : t,
                      a.device());
    KernelArgs args;
    args.nops = 3;
    args.ndim = 1;
    args.numel = a.numel();
    args.sizes[0] = args.numel;
    args.contiguous = false;
    args.data[0] = static_cast<char*>(out.data_ptr());
    args.data[1] = static_cast<char*>(a.data_ptr());
    args.strides[0][0] = int64_t(out.itemsize());
    args.strides[1][0] = int64_t(a.itemsize());
    args.strides[2][0] = 0;
    args.dtypes[0] = out.dtype();
    args.dtypes[1] = t;
    store_scalar(args, 2, b, t);
    if (is_int_division(op) && args.numel > 0)
      check_divisor(op, t, nullptr, args, 2);
    p.apply(args);
    if (args.numel > 0) fn(args);
    return out;
  }
  Operand ins[2] = {a, b};
  return elementwise(op, rule, ins, 2, nullptr, p);
}

inline Tensor binary(Op op, Rule rule, const Scalar& a, const Tensor& b,
                     const Params& p = {}) {
  Operand ins[2] = {a, b};
  return elementwise(op, rule, ins, 2, nullptr, p);
}

template <class B>
inline Tensor& binary_inplace(Op op, Rule rule, Tensor& a, const B& b,
                              const Params& p = {}) {
  Operand ins[2] = {Operand(a), Operand(b)};
  elementwise(op, rule, ins, 2, &a, p);
  return a;
}

inline Tensor& binary_out(Op op, Rule rule, Tensor& out, const Tensor& a,
                          const Tensor& b, const Params& p = {}) {
  Operand ins[2] = {a, b};
  elementwise(op, rule, ins, 2, &out, p);
  return out;
}

inline Tensor unary(Op op, Rule rule, const Tensor& a, const Params& p = {}) {
  if (FASTT_LIKELY(a.defined() && a.is_contiguous() &&
                   (rule != Rule::Float || a.is_floating_point()))) {
    KernelFn fn = lookup_kernel(op, a.device().type, a.dtype());
    Tensor out = Tensor::empty(
        a.sizes(), rule == Rule::Bool ? DType::Bool : a.dtype(), a.device());
    KernelArgs args;
    const Tensor* ts[2] = {&out, &a};
    build_dense_loop(args, ts, 2);
    p.apply(args);
    fn(args);
    return out;
  }
  Operand ins[1] = {a};
  return elementwise(op, rule, ins, 1, nullptr, p);
}

inline Tensor& unary_out(Op op, Rule rule, Tensor& out, const Tensor& a,
                         const Params& p = {}) {
  Operand ins[1] = {a};
  elementwise(op, rule, ins, 1, &out, p);
  return out;
}

Params alpha_params(const Scalar& alpha) {
  Params p;
  p.f0 = alpha.to_double();
  p.f1 = alpha.imag();
  p.i0 = alpha.to_int();
  return p;
}

// torch's alpha_check: no float alpha for integral results, and a bool
// alpha only for bool results.
FASTT_NOINLINE void check_alpha(Op op, DType result, const Scalar& alpha) {
  FASTT_CHECK(!alpha.is_bool() || result == DType::Bool, RuntimeError,
              "{}: Boolean alpha only supported for Boolean results.",
              op_name(op));
  FASTT_CHECK(is_complex(result) || !alpha.is_complex(), RuntimeError,
              "{}: For non-complex input tensors, argument alpha must not "
              "be a complex number.",
              op_name(op));
  FASTT_CHECK(is_inexact(result) || !alpha.is_floating(), RuntimeError,
              "{}: For integral input tensors, argument alpha must not be a "
              "floating point number.",
              op_name(op));
}
// torch's sub_check: bool operands (tensor or scalar) are rejected by sub;
// `~` or logical_not is what the user wants.
FASTT_NOINLINE void throw_sub_bool() {
  throw RuntimeError(
      "Subtraction, the `-` operator, with a bool tensor is not supported. "
      "If you are trying to invert a mask, use the `~` or `logical_not()` "
      "operator instead.");
}
inline bool is_bool_operand(const Tensor& t) {
  return t.defined() && t.dtype() == DType::Bool;
}
inline bool is_bool_operand(const Scalar& s) { return s.is_bool(); }
template <class A, class B>
inline void check_alpha_op(Op op, const A& a, const B& b) {
  if (op == Op::sub && FASTT_UNLIKELY(is_bool_operand(a) ||
                                      is_bool_operand(b)))
    throw_sub_bool();
}

template <class A, class B>
inline Params checked_alpha(Op op, const A& a, const B& b,
                            const Scalar& alpha) {
  check_alpha_op(op, a, b);
  // An integral alpha is valid for every result dtype: skip promotion.
  if (FASTT_UNLIKELY(!alpha.is_integral())) {
    ResultTypeState s;
    s.add(a);
    s.add(b);
    check_alpha(op, s.result(), alpha);
  }
  return alpha_params(alpha);
}

void check_pow_scalar(const Tensor& a, const Scalar& e) {
  FASTT_CHECK(is_inexact(a.dtype()) || e.is_floating() || e.is_complex() ||
                  e.to_int() >= 0,
              RuntimeError,
              "pow: integers to negative integer powers are not allowed.");
}

}  // namespace

// torch's canCast: never complex to real, floating to integral or a
// number to bool.
bool can_cast(DType from, DType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && !is_inexact(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

// ---- the per-op facts of the rows (elementwise.def), indexed by Op ----
using autograd::GradFn;
using autograd::Save;
constexpr GradFn kNotDifferentiable = GradFn::AccumulateGrad;
struct OpFacts {
  Rule rule;      // how the result dtype follows from the promoted inputs
  GradFn grad;    // the formula it records (kNotDifferentiable: none)
  Save save;      // what the recording keeps for it
};
#define FASTT_EW_FACT_NotDiff kNotDifferentiable, Save::None
#define FASTT_EW_FACT_Uses(fn, s) GradFn::fn, Save::s
#define FASTT_EW_FACT_Grad(fn, s) GradFn::fn, Save::s
constexpr OpFacts kOpFacts[] = {
#define FASTT_OP(name, family) {Rule::Same, kNotDifferentiable, Save::None},
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  {Rule::rule, FASTT_EW_FACT_##grad},
#include "../ops.def"
#undef FASTT_EW
#undef FASTT_OP
};
#undef FASTT_EW_FACT_NotDiff
#undef FASTT_EW_FACT_Uses
#undef FASTT_EW_FACT_Grad
static_assert(sizeof(kOpFacts) / sizeof(kOpFacts[0]) == kNumOps,
              "one fact row per op");
constexpr Rule rule_of(Op op) { return kOpFacts[size_t(op)].rule; }
constexpr GradFn grad_fn_of(Op op) { return kOpFacts[size_t(op)].grad; }
constexpr Save save_of(Op op) { return kOpFacts[size_t(op)].save; }
#define FASTT_RECORDS(op, ...) \
  (grad_fn_of(op) != kNotDifferentiable && autograd::should_record(__VA_ARGS__))

// |z| of a complex tensor, a real one: hypot of its parts (views), so
// neither part's square overflows or underflows (torch's std::abs).
static Tensor complex_abs(const Tensor& z) {
  return fastt::hypot(real_part(z), imag_part(z));
}

// ---- unary: the entry points of the Unary rows ----
// square of bool is int64 in torch (it is pow(x, 2)), abs of complex its
// magnitude (complex_abs); the tests fold away for every other op.
#define FASTT_DEFINE_UNARY(name, python)                             \
  Tensor name(const Tensor& a) {                                     \
    if (FASTT_RECORDS(Op::name, a))                                  \
      return autograd::unary(grad_fn_of(Op::name), save_of(Op::name), \
                             static_cast<Tensor (*)(const Tensor&)>(  \
                                 &name),                             \
                             a);                                     \
    if (Op::name == Op::square && a.defined() &&                     \
        FASTT_UNLIKELY(a.dtype() == DType::Bool))                    \
      return unary(Op::name, rule_of(Op::name), a.to(DType::Int64)); \
    if (Op::name == Op::abs && a.defined() &&                        \
        FASTT_UNLIKELY(is_complex(a.dtype())))                       \
      return complex_abs(a);                                         \
    return unary(Op::name, rule_of(Op::name), a);                    \
  }                                                                  \
  FASTT_EW_INPLACE_##python(                                         \
  Tensor& name##_(Tensor& a) {                                       \
    if (Op::name == Op::abs && a.defined() &&                        \
        FASTT_UNLIKELY(is_complex(a.dtype())))                       \
      throw RuntimeError(                                            \
          "In-place abs is not supported for complex tensors.");     \
    if (FASTT_RECORDS(Op::name, a))                                  \
      return autograd::inplace(a, #name "_", [](const Tensor& s) {   \
        return name(s);                                              \
      });                                                            \
    return unary_out(Op::name, rule_of(Op::name), a, a);             \
  })                                                                 \
  Tensor& name##_out(Tensor& out, const Tensor& a) {                 \
    autograd::check_out(#name, autograd::should_record(a, out));     \
    return unary_out(Op::name, rule_of(Op::name), out, a);           \
  }

static Op gelu_op(const char* approximate) {
  if (!approximate || std::strcmp(approximate, "none") == 0) return Op::gelu;
  FASTT_CHECK(std::strcmp(approximate, "tanh") == 0, RuntimeError,
              "gelu(): approximate argument must be either none or tanh, got "
              "'{}'",
              approximate);
  return Op::gelu_tanh;
}
Tensor gelu(const Tensor& a, const char* approximate) {
  if (autograd::should_record(a)) {
    gelu_op(approximate);  // validates before recording
    return autograd::gelu(a, approximate);
  }
  const Op op = gelu_op(approximate);
  return unary(op, rule_of(op), a);
}
Tensor& gelu_(Tensor& a, const char* approximate) {
  if (autograd::should_record(a))
    return autograd::inplace(a, "gelu_", [&](const Tensor& s) {
      return gelu(s, approximate);
    });
  const Op op = gelu_op(approximate);
  return unary_out(op, rule_of(op), a, a);
}
Tensor leaky_relu(const Tensor& a, double slope) {
  if (autograd::should_record(a)) return autograd::leaky_relu(a, slope);
  Params p;
  p.f0 = slope;
  return unary(Op::leaky_relu, rule_of(Op::leaky_relu), a, p);
}
Tensor& leaky_relu_(Tensor& a, double slope) {
  if (autograd::should_record(a))
    return autograd::inplace(a, "leaky_relu_", [&](const Tensor& s) {
      return leaky_relu(s, slope);
    });
  Params p;
  p.f0 = slope;
  return unary_out(Op::leaky_relu, rule_of(Op::leaky_relu), a, a, p);
}

Tensor activation_backward(const char* op, const Tensor& grad,
                           const Tensor& saved, const char* approximate) {
  Op k;
  if (std::strcmp(op, "relu") == 0) k = Op::relu_backward;
  else if (std::strcmp(op, "sigmoid") == 0) k = Op::sigmoid_backward;
  else if (std::strcmp(op, "tanh") == 0) k = Op::tanh_backward;
  else if (std::strcmp(op, "silu") == 0) k = Op::silu_backward;
  else if (std::strcmp(op, "gelu") == 0)
    k = gelu_op(approximate) == Op::gelu ? Op::gelu_backward
                                         : Op::gelu_tanh_backward;
  else
    throw ValueError(fmt::format("activation_backward: unknown op '{}'", op));
  return binary(k, Rule::Float, grad, saved);
}

// ---- binary: the entry points of the Binary and BinaryAlpha rows ----
// One body per form (out of place, in place, out=) for every operand kind;
// kAlpha marks the BinaryAlpha rows, whose alpha is checked and passed to
// the kernel.
inline const Tensor* tensor_ptr(const Tensor& t) { return &t; }
inline const Tensor* tensor_ptr(const Scalar&) { return nullptr; }
inline const Scalar* scalar_ptr(const Tensor&) { return nullptr; }
inline const Scalar* scalar_ptr(const Scalar& s) { return &s; }
template <class A, class B>
FASTT_ALWAYS_INLINE bool records(Op op, const A& a, const B& b) {
  if constexpr (std::is_same<A, Scalar>::value) return FASTT_RECORDS(op, b);
  else if constexpr (std::is_same<B, Scalar>::value) return FASTT_RECORDS(op, a);
  else return FASTT_RECORDS(op, a, b);
}
template <bool kAlpha, class A, class B>
FASTT_ALWAYS_INLINE Params binary_params(Op op, const A& a, const B& b,
                            const Scalar& alpha) {
  if constexpr (kAlpha) return checked_alpha(op, a, b, alpha);
  else return {};
}
// The op without recording (grad mode is off or no input requires grad).
template <bool kAlpha, class A, class B>
FASTT_ALWAYS_INLINE Tensor binary_run(Op op, const A& a, const B& b,
                                      const Scalar& alpha) {
  return binary(op, rule_of(op), a, b, binary_params<kAlpha>(op, a, b, alpha));
}
// The recorded op's forward, out of line: the entry point's own body stays
// the unrecorded path alone.
template <bool kAlpha, class A, class B>
FASTT_NOINLINE Tensor binary_recorded(Op op, const A& a, const B& b,
                                      const Scalar& alpha) {
  return autograd::binary(grad_fn_of(op), save_of(op), tensor_ptr(a),
                          tensor_ptr(b), scalar_ptr(a), scalar_ptr(b), alpha,
                          [&] { return binary_run<kAlpha>(op, a, b, alpha); });
}
template <bool kAlpha, class A, class B>
FASTT_ALWAYS_INLINE Tensor binary_entry(Op op, const A& a, const B& b,
                                        const Scalar& alpha) {
  if (FASTT_UNLIKELY(records(op, a, b)))
    return binary_recorded<kAlpha>(op, a, b, alpha);
  return binary_run<kAlpha>(op, a, b, alpha);
}
template <bool kAlpha, class B>
FASTT_ALWAYS_INLINE Tensor& binary_entry_(Op op, const char* name, Tensor& a,
                                          const B& b, const Scalar& alpha) {
  if (records(op, a, b))
    return autograd::inplace(a, name, [&](const Tensor& s) {
      return binary_entry<kAlpha>(op, s, b, alpha);
    });
  return binary_inplace(op, rule_of(op), a, b,
                        binary_params<kAlpha>(op, a, b, alpha));
}
template <bool kAlpha>
FASTT_ALWAYS_INLINE Tensor& binary_entry_out(Op op, const char* name,
                                             Tensor& out, const Tensor& a,
                                             const Tensor& b,
                                             const Scalar& alpha) {
  autograd::check_out(name, autograd::should_record(a, b, out));
  return binary_out(op, rule_of(op), out, a, b,
                    binary_params<kAlpha>(op, a, b, alpha));
}

#define FASTT_DEFINE_BINARY_AS(name, op, python)                           \
  Tensor name(const Tensor& a, const Tensor& b) {                          \
    return binary_entry<false>(op, a, b, 1);                               \
  }                                                                        \
  Tensor name(const Tensor& a, const Scalar& b) {                          \
    return binary_entry<false>(op, a, b, 1);                               \
  }                                                                        \
  Tensor name(const Scalar& a, const Tensor& b) {                          \
    return binary_entry<false>(op, a, b, 1);                               \
  }                                                                        \
  FASTT_EW_INPLACE_##python(                                               \
  Tensor& name##_(Tensor& a, const Tensor& b) {                            \
    return binary_entry_<false>(op, #name "_", a, b, 1);                   \
  }                                                                        \
  Tensor& name##_(Tensor& a, const Scalar& b) {                            \
    return binary_entry_<false>(op, #name "_", a, b, 1);                   \
  })                                                                       \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {      \
    return binary_entry_out<false>(op, #name, out, a, b, 1);               \
  }

// Every BinaryAlpha row's entry points (add, sub).
#define FASTT_DEFINE_ALPHA(name)                                             \
  Tensor name(const Tensor& a, const Tensor& b, const Scalar& alpha) {       \
    return binary_entry<true>(Op::name, a, b, alpha);                        \
  }                                                                          \
  Tensor name(const Tensor& a, const Scalar& b, const Scalar& alpha) {       \
    return binary_entry<true>(Op::name, a, b, alpha);                        \
  }                                                                          \
  Tensor name(const Scalar& a, const Tensor& b, const Scalar& alpha) {       \
    return binary_entry<true>(Op::name, a, b, alpha);                        \
  }                                                                          \
  Tensor& name##_(Tensor& a, const Tensor& b, const Scalar& alpha) {         \
    return binary_entry_<true>(Op::name, #name "_", a, b, alpha);            \
  }                                                                          \
  Tensor& name##_(Tensor& a, const Scalar& b, const Scalar& alpha) {         \
    return binary_entry_<true>(Op::name, #name "_", a, b, alpha);            \
  }                                                                          \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b,          \
                     const Scalar& alpha) {                                  \
    return binary_entry_out<true>(Op::name, #name, out, a, b, alpha);        \
  }

// Every Unary, Binary and BinaryAlpha row's entry points.
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  FASTT_EW_DEFINE_##kind(name, python)
#define FASTT_EW_DEFINE_Unary(name, python) FASTT_DEFINE_UNARY(name, python)
#define FASTT_EW_DEFINE_Binary(name, python) \
  FASTT_DEFINE_BINARY_AS(name, Op::name, python)
#define FASTT_EW_DEFINE_UnaryKernel(name, python)
#define FASTT_EW_DEFINE_BinaryKernel(name, python)
#define FASTT_EW_DEFINE_UnaryHand(name, python)
#define FASTT_EW_DEFINE_BinaryAlpha(name, python) FASTT_DEFINE_ALPHA(name)
#include "elementwise.def"
#undef FASTT_EW
FASTT_DEFINE_BINARY_AS(floor_divide, Op::div_floor, PyAll)
#undef FASTT_DEFINE_ALPHA
#undef FASTT_DEFINE_UNARY
#undef FASTT_DEFINE_BINARY_AS

// heaviside: the Binary forms for two tensors of one dtype (torch).
static void check_heaviside(const Tensor& a, const Tensor& v) {
  require_defined(a, "heaviside");
  require_defined(v, "heaviside");
  FASTT_CHECK(a.dtype() == v.dtype(), RuntimeError,
              "heaviside is not yet implemented for tensors with different "
              "dtypes.");
}
Tensor heaviside(const Tensor& a, const Tensor& v) {
  check_heaviside(a, v);
  return binary(Op::heaviside, Rule::Same, a, v);
}
Tensor& heaviside_(Tensor& a, const Tensor& v) {
  check_heaviside(a, v);
  return binary_inplace(Op::heaviside, Rule::Same, a, v);
}
Tensor& heaviside_out(Tensor& out, const Tensor& a, const Tensor& v) {
  check_heaviside(a, v);
  autograd::check_out("heaviside", autograd::should_record(a, v, out));
  return binary_out(Op::heaviside, Rule::Same, out, a, v);
}

// pow: a negative integer exponent on an integer tensor is an error.
Tensor pow(const Tensor& a, const Tensor& b) {
  if (autograd::should_record(a, b))
    return autograd::binary(GradFn::Pow, Save::InOut, &a, &b, nullptr,
                            nullptr, 1, [&] { return pow(a, b); });
  return binary(Op::pow, Rule::Same, a, b);
}
// torch's scalar-exponent fast paths (pow_tensor_scalar_optimized):
// x*x, x*x*x, sqrt, rsqrt, 1/x, 1/(x*x) instead of a libm pow per
// element (RMSNorm's x.pow(2) ran 10x slower than square), with their
// results: pow(-0, 0.5) is -0 and pow(-inf, 0.5) NaN, as sqrt gives.
// Floating tensors only (their dtype is the result's), per dtype as torch:
// float16 only x*x and 1/x (its pow(-0, 0.5) is libm's +0), bfloat16 also
// sqrt and rsqrt, not the two-kernel forms (they would round twice).
// Complex tensors take all six with a real exponent (a complex one with
// imaginary part 0 included); complex results (a complex number on a real
// tensor too) get torch's pow(z, 0) = 1 and pow(z, 1) = z (the library's
// complex pow gives NaN for 0^0), in the result's dtype.
namespace {
enum class PowFast {
  None, Square, Cube, Sqrt, Rsqrt, Recip, RecipSquare, One, Copy
};
PowFast pow_fast(const Tensor& a, const Scalar& b) {
  if (!a.defined()) return PowFast::None;
  if (FASTT_UNLIKELY(is_complex(a.dtype()) || b.is_complex())) {
    if (b.imag() != 0) return PowFast::None;
    const double e = b.to<double>();
    if (e == 0) return PowFast::One;
    if (e == 1) return PowFast::Copy;
    if (!is_complex(a.dtype())) return PowFast::None;
  } else if (!is_floating(a.dtype())) {
    return PowFast::None;
  }
  const double e = b.to<double>();
  if (e == 2) return PowFast::Square;
  if (e == -1) return PowFast::Recip;
  if (a.dtype() == DType::Float16) return PowFast::None;
  if (e == 0.5) return PowFast::Sqrt;
  if (e == -0.5) return PowFast::Rsqrt;
  if (a.dtype() == DType::BFloat16) return PowFast::None;
  if (e == 3) return PowFast::Cube;
  if (e == -2) return PowFast::RecipSquare;
  return PowFast::None;
}
// (a's dtype but for a complex number on a real tensor)
DType pow_result(const Tensor& a, const Scalar& b) {
  if (!b.is_complex()) return a.dtype();
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}
// The fast path into `out` (a's shape and the result's dtype; it may be a
// itself).
Tensor& pow_fast_out(PowFast f, Tensor& out, const Tensor& a) {
  switch (f) {
    case PowFast::Square: return square_out(out, a);
    case PowFast::Cube: { Tensor s = square(a); return mul_out(out, s, a); }
    case PowFast::Sqrt: return sqrt_out(out, a);
    case PowFast::Rsqrt: return rsqrt_out(out, a);
    case PowFast::Recip: return reciprocal_out(out, a);
    case PowFast::RecipSquare: return reciprocal_(square_out(out, a));
    case PowFast::One: return out.fill_(Scalar(1));
    case PowFast::Copy: return out.copy_(a);
    case PowFast::None: break;
  }
  return out;
}
}  // namespace

Tensor pow(const Tensor& a, const Scalar& b) {
  check_pow_scalar(a, b);
  if (autograd::should_record(a)) return autograd::pow(a, b);
  switch (pow_fast(a, b)) {
    case PowFast::Square: return square(a);
    case PowFast::Cube: { Tensor s = square(a); return mul_(s, a); }
    case PowFast::Sqrt: return sqrt(a);
    case PowFast::Rsqrt: return rsqrt(a);
    case PowFast::Recip: return reciprocal(a);
    case PowFast::RecipSquare: { Tensor s = square(a); return reciprocal_(s); }
    case PowFast::One: return ones_like(a, pow_result(a, b));
    case PowFast::Copy: return a.to(pow_result(a, b), /*copy=*/true);
    case PowFast::None: break;
  }
  return binary(Op::pow, Rule::Same, a, b);
}
Tensor pow(const Scalar& a, const Tensor& b) {
  if (autograd::should_record(b)) return autograd::pow(a, b);
  return binary(Op::pow, Rule::Same, a, b);
}
Tensor& pow_(Tensor& a, const Tensor& b) {
  if (autograd::should_record(a, b))
    return autograd::inplace(a, "pow_",
                             [&](const Tensor& s) { return pow(s, b); });
  return binary_inplace(Op::pow, Rule::Same, a, b);
}
Tensor& pow_(Tensor& a, const Scalar& b) {
  check_pow_scalar(a, b);
  if (autograd::should_record(a))
    return autograd::inplace(a, "pow_",
                             [&](const Tensor& s) { return pow(s, b); });
  const PowFast fast = pow_fast(a, b);
  // (a complex number on a real tensor: the generic path raises)
  if (fast != PowFast::None && pow_result(a, b) == a.dtype())
    return pow_fast_out(fast, a, a);
  return binary_inplace(Op::pow, Rule::Same, a, b);
}
Tensor& pow_out(Tensor& out, const Tensor& a, const Tensor& b) {
  autograd::check_out("pow", autograd::should_record(a, b, out));
  return binary_out(Op::pow, Rule::Same, out, a, b);
}
// pow(a, number, out=): torch's Tensor_Scalar_out, with the same fast
// paths (a 0-d tensor exponent takes the Tensor form above, as in torch).
Tensor& pow_out(Tensor& out, const Tensor& a, const Scalar& b) {
  check_pow_scalar(a, b);
  autograd::check_out("pow", autograd::should_record(a, out));
  // The fast kernels write out directly when it has the result's dtype and
  // a's shape; a castable dtype gets the result computed, then cast (as
  // torch); anything else takes the generic path, which raises as pow.
  const PowFast fast = pow_fast(a, b);
  const IntList os = out.sizes(), as = a.sizes();
  const bool same_shape = out.defined() && os.size() == as.size() &&
                          std::equal(os.begin(), os.end(), as.begin());
  const DType result = pow_result(a, b);
  const bool direct = same_shape && out.dtype() == result;
  if (fast != PowFast::None && same_shape && !direct &&
      can_cast(result, out.dtype()))
    return out.copy_(pow(a, b));
  if (direct && fast != PowFast::None) return pow_fast_out(fast, out, a);
  Operand ins[2] = {Operand(a), Operand(b)};
  elementwise(Op::pow, Rule::Same, ins, 2, &out, Params{});
  return out;
}


static Op div_op(const char* mode) {
  if (!mode) return Op::div;
  if (std::strcmp(mode, "trunc") == 0) return Op::div_trunc;
  if (std::strcmp(mode, "floor") == 0) return Op::div_floor;
  throw ValueError(fmt::format(
      "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
      "found '{}'",
      mode));
}
// Rounded division is piecewise constant: its gradient is zero, and its
// result still requires grad where an input does (torch's).
Tensor div(const Tensor& a, const Tensor& b, const char* mode) {
  Op op = div_op(mode);
  if (op != Op::div && autograd::should_record(a, b))
    return autograd::binary(GradFn::ZeroGrad, Save::None, &a, &b, nullptr,
                            nullptr, 1, [&] { return div(a, b, mode); });
  return binary(op, rule_of(op), a, b);
}
Tensor div(const Tensor& a, const Scalar& b, const char* mode) {
  Op op = div_op(mode);
  if (op != Op::div && autograd::should_record(a))
    return autograd::binary(GradFn::ZeroGrad, Save::None, &a, nullptr,
                            nullptr, &b, 1, [&] { return div(a, b, mode); });
  return binary(op, rule_of(op), a, b);
}

// ---- ternary ----
static Tensor where_impl(const Operand& c, const Operand& a,
                         const Operand& b) {
  require_defined(*c.t, "where");
  if (a.t) require_defined(*a.t, "where");
  if (b.t) require_defined(*b.t, "where");
  FASTT_CHECK(c.t->dtype() == DType::Bool, TypeError,
              "where expected condition to be a boolean tensor, but got a "
              "tensor with dtype {}",
              dtype_name(c.t->dtype()));
  Operand ins[3] = {c, a, b};
  if (a.s || b.s) check_value_scalars("where", ins + 1, 2);
  return elementwise(Op::where, Rule::Same, ins, 3, nullptr, {}, 1);
}
// torch still takes a uint8 condition (deprecated, nonzero is true): made
// bool here, before autograd saves it for the backward.
static Tensor bool_condition(const Tensor& c) {
  if (c.defined() && c.dtype() == DType::UInt8) return c.to(DType::Bool);
  return c;
}
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Tensor c = bool_condition(cond);
  if (autograd::should_record(a, b))
    return autograd::where(c, &a, &b, [&] { return where_impl(c, a, b); });
  return where_impl(c, a, b);
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  const Tensor c = bool_condition(cond);
  if (autograd::should_record(a))
    return autograd::where(c, &a, nullptr,
                           [&] { return where_impl(c, a, b); });
  return where_impl(c, a, b);
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  const Tensor c = bool_condition(cond);
  if (autograd::should_record(b))
    return autograd::where(c, nullptr, &b,
                           [&] { return where_impl(c, a, b); });
  return where_impl(c, a, b);
}
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b) {
  return where_impl(bool_condition(cond), a, b);
}

static Tensor clamp_impl(const Tensor& a, const Operand* lo,
                         const Operand* hi, Tensor* out) {
  require_defined(a, "clamp");
  FASTT_CHECK(lo || hi, RuntimeError,
              "clamp: at least one of 'min' or 'max' must not be None");
  Params p;
  p.i0 = (lo ? 1 : 0) | (hi ? 2 : 0);
  Operand ins[3] = {a, a, a};
  int n = 1;
  if (lo) ins[n++] = *lo;
  if (hi) ins[n++] = *hi;
  if (a.dtype() == DType::Bool) {  // bool only if nothing promotes it
    ResultTypeState st;
    for (int k = 0; k < n; ++k) {
      if (ins[k].t) st.add(*ins[k].t);
      else st.add(*ins[k].s);
    }
    if (st.result() == DType::Bool && n == 2 && ins[1].t) {
      // One tensor bound: torch runs maximum/minimum, which take bool.
      Tensor r = lo ? maximum(a, *ins[1].t) : minimum(a, *ins[1].t);
      if (!out) return r;
      out->copy_(r);
      return *out;
    }
    FASTT_CHECK(st.result() != DType::Bool, NotImplementedError,
                "clamp: not implemented for dtype 'bool'");
  }
  if ((lo && lo->s) || (hi && hi->s)) check_value_scalars("clamp", ins, n);
  return elementwise(Op::clamp, Rule::Same, ins, n, out, p);
}
Tensor clamp(const Tensor& a, const Tensor& min, const Tensor& max) {
  if (autograd::should_record(a, min, max))
    return autograd::clamp(a, min, max);
  Operand lo(min), hi(max);
  return clamp_impl(a, min.defined() ? &lo : nullptr,
                    max.defined() ? &hi : nullptr, nullptr);
}
Tensor clamp(const Tensor& a, const Scalar* min, const Scalar* max) {
  if (autograd::should_record(a)) return autograd::clamp(a, min, max);
  Operand lo = min ? Operand(*min) : Operand(Scalar(0));
  Operand hi = max ? Operand(*max) : Operand(Scalar(0));
  return clamp_impl(a, min ? &lo : nullptr, max ? &hi : nullptr, nullptr);
}
Tensor nan_to_num_kernel(const Tensor& a, double nan, double posinf,
                         double neginf) {
  Params p;
  p.f0 = nan;
  p.f1 = posinf;
  p.f2 = neginf;
  Operand ins[1] = {a};
  return elementwise(Op::nan_to_num, Rule::Same, ins, 1, nullptr, p);
}
Tensor clamp(const Tensor& a, const Scalar& min, const Scalar& max) {
  return clamp(a, &min, &max);
}
Tensor& clamp_(Tensor& a, const Scalar* min, const Scalar* max) {
  if (autograd::should_record(a))
    return autograd::inplace(a, "clamp_", [&](const Tensor& s) {
      return clamp(s, min, max);
    });
  Operand lo = min ? Operand(*min) : Operand(Scalar(0));
  Operand hi = max ? Operand(*max) : Operand(Scalar(0));
  clamp_impl(a, min ? &lo : nullptr, max ? &hi : nullptr, &a);
  return a;
}
Tensor& clamp_(Tensor& a, const Tensor& min, const Tensor& max) {
  if (autograd::should_record(a, min, max))
    return autograd::inplace(a, "clamp_", [&](const Tensor& s) {
      return clamp(s, min, max);
    });
  Operand lo(min), hi(max);
  clamp_impl(a, min.defined() ? &lo : nullptr, max.defined() ? &hi : nullptr,
             &a);
  return a;
}
Tensor clamp_min(const Tensor& a, const Scalar& min) {
  return clamp(a, &min, nullptr);
}
Tensor clamp_max(const Tensor& a, const Scalar& max) {
  return clamp(a, nullptr, &max);
}
Tensor& clamp_min_(Tensor& a, const Scalar& min) {
  return clamp_(a, &min, nullptr);
}
Tensor& clamp_max_(Tensor& a, const Scalar& max) {
  return clamp_(a, nullptr, &max);
}

Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight) {
  if (autograd::should_record(a, end, weight))
    return autograd::lerp(a, end, &weight, Scalar(0));
  Operand ins[3] = {a, end, weight};
  return elementwise(Op::lerp, Rule::Same, ins, 3, nullptr, {});
}
// A number weight rides in f0 (its imaginary part in f1; LerpK's i0 ==
// 2), kept in opmath. A complex weight needs a complex result.
static Params lerp_weight(const Scalar& w, DType result) {
  FASTT_CHECK(!w.is_complex() || is_complex(result), RuntimeError,
              "lerp: value cannot be converted to type {} without "
              "overflow (a complex weight)",
              torch_type_name(result));
  Params p;
  p.f0 = w.to_double();
  p.f1 = w.imag();
  p.i0 = 2;
  return p;
}
Tensor lerp(const Tensor& a, const Tensor& end, const Scalar& weight) {
  require_defined(a, "lerp");
  require_defined(end, "lerp");
  if (autograd::should_record(a, end))
    return autograd::lerp(a, end, nullptr, weight);
  Operand ins[2] = {a, end};
  const DType r = promote_types(a.dtype(), end.dtype());
  return elementwise(Op::lerp, Rule::Same, ins, 2, nullptr,
                     lerp_weight(weight, r), 0, r);
}
Tensor& lerp_(Tensor& a, const Tensor& end, const Scalar& weight) {
  if (autograd::should_record(a, end))
    return autograd::inplace(a, "lerp_", [&](const Tensor& s) {
      return lerp(s, end, weight);
    });
  Operand ins[2] = {a, end};
  elementwise(Op::lerp, Rule::Same, ins, 2, &a,
              lerp_weight(weight, a.dtype()), 0, a.dtype());
  return a;
}
Tensor& lerp_(Tensor& a, const Tensor& end, const Tensor& weight) {
  if (autograd::should_record(a, end, weight))
    return autograd::inplace(a, "lerp_", [&](const Tensor& s) {
      return lerp(s, end, weight);
    });
  Operand ins[3] = {a, end, weight};
  elementwise(Op::lerp, Rule::Same, ins, 3, &a, {});
  return a;
}

static Tensor addc(Op op, const Tensor& a, const Tensor& t1, const Tensor& t2,
                   const Scalar& value, Tensor* out) {
  // Unlike add's alpha, torch checks nothing here: any value is cast to
  // the result dtype (0.5 truncates to 0 for integers, True is 1); a
  // complex value needs a complex result (a real one would lose its
  // imaginary part).
  const DType r =
      promote_types(promote_types(a.dtype(), t1.dtype()), t2.dtype());
  const DType result = out && out->defined() ? out->dtype() : r;
  FASTT_CHECK(!value.is_complex() || is_complex(result), RuntimeError,
              "{}: value cannot be converted to type {} without overflow "
              "(a complex value)",
              op_name(op), torch_type_name(result));
  Params p = alpha_params(value);
  Operand ins[3] = {a, t1, t2};
  if (op == Op::addcdiv) {
    FASTT_CHECK(is_inexact(r), RuntimeError,
                "addcdiv: integer division with addcdiv is no longer "
                "supported; use true division of floating inputs instead");
  }
  return elementwise(op, Rule::Same, ins, 3, out, p);
}
Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2,
               const Scalar& value) {
  if (autograd::should_record(a, t1, t2))
    return autograd::addc(GradFn::Addcmul, a, t1, t2, value);
  return addc(Op::addcmul, a, t1, t2, value, nullptr);
}
Tensor& addcmul_(Tensor& a, const Tensor& t1, const Tensor& t2,
                 const Scalar& value) {
  if (autograd::should_record(a, t1, t2))
    return autograd::inplace(a, "addcmul_", [&](const Tensor& s) {
      return addcmul(s, t1, t2, value);
    });
  addc(Op::addcmul, a, t1, t2, value, &a);
  return a;
}
Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2,
               const Scalar& value) {
  if (autograd::should_record(a, t1, t2))
    return autograd::addc(GradFn::Addcdiv, a, t1, t2, value);
  return addc(Op::addcdiv, a, t1, t2, value, nullptr);
}
Tensor& addcdiv_(Tensor& a, const Tensor& t1, const Tensor& t2,
                 const Scalar& value) {
  if (autograd::should_record(a, t1, t2))
    return autograd::inplace(a, "addcdiv_", [&](const Tensor& s) {
      return addcdiv(s, t1, t2, value);
    });
  addc(Op::addcdiv, a, t1, t2, value, &a);
  return a;
}

static void check_mask(const Tensor& mask) {
  require_defined(mask, "masked_fill_");
  FASTT_CHECK(mask.dtype() == DType::Bool, TypeError,
              "masked_fill_ only supports boolean masks, but got mask with "
              "dtype {}",
              dtype_name(mask.dtype()));
}
// Out of place, self broadcasts with the mask (torch): the result has the
// broadcast shape.
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  require_defined(a, "masked_fill");
  require_defined(mask, "masked_fill");
  if (autograd::should_record(a))
    return autograd::masked_fill(a, mask, value);
  check_mask(mask);
  check_scalar_fits(value, a.dtype(), "masked_fill_");
  // One where(mask, value, a) kernel into a fresh output, not a copy of
  // `a` and then an in-place fill.
  Operand ins[3] = {mask, value, a};
  return elementwise(Op::where, Rule::Same, ins, 3, nullptr, {}, 1,
                     a.dtype());
}
Tensor& masked_fill_(Tensor& a, const Tensor& mask, const Scalar& value) {
  check_mask(mask);
  require_defined(a, "masked_fill_");
  if (autograd::should_record(a))
    return autograd::inplace(a, "masked_fill_", [&](const Tensor& s) {
      return masked_fill(s, mask, value);
    });
  check_scalar_fits(value, a.dtype(), "masked_fill_");
  Operand ins[3] = {mask, value, a};
  elementwise(Op::where, Rule::Same, ins, 3, &a, {}, 1, a.dtype());
  return a;
}
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value) {
  check_mask(mask);
  FASTT_CHECK(value.dim() == 0, RuntimeError,
              "masked_fill only supports a 0-dimensional value tensor, but "
              "got tensor with {} dimension(s).",
              value.dim());
  // The value's gradient too; a value on a's device (not the CPU) stays
  // there: item() would be a host sync.
  if (autograd::should_record(value) ||
      (!value.is_cpu() && value.device() == a.device()))
    return where(mask, value.to(a.dtype()), a);
  return masked_fill(a, mask, value.item());
}

}  // namespace fastt

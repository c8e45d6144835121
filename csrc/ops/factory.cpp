// Factory and random entry points: validate (torch's checks and messages),
// allocate, reserve the generator's counter range once, make one table
// call. Kernels live in kernels/cpu/factory.cpp; the counter layout in
// kernels/philox.h.
#include "factory.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "../dispatch.h"
#include "complex.h"
#include "loop_builder.h"

namespace fastt {
namespace {

inline Generator& pick(Generator* g) {
  return g ? *g : default_generator();
}

inline int64_t as_arg(uint64_t v) {
  int64_t i;
  std::memcpy(&i, &v, sizeof(i));
  return i;
}

// Floating or complex (a complex tensor samples its parts, as torch).
void check_floating(DType dt, const char* op, const char* what) {
  FASTT_CHECK(is_inexact(dt), TypeError,
              "{}: {} expects floating point dtype, but got {}", op, what,
              dtype_name(dt));
}

// The loop over t alone (the random kernels read the Loop fields).
inline void loop_over(KernelArgs& args, const Tensor& t) {
  const Tensor* ts[1] = {&t};
  if (t.is_contiguous())
    build_dense_loop(args, ts, 1);
  else
    build_loop(args, ts, 1);
}

inline uint64_t blocks_for(int64_t numel, int per_block) {
  return (uint64_t(numel) + uint64_t(per_block) - 1) / uint64_t(per_block);
}

// The largest integer M with every integer in [-M, M] exact in dt.
int64_t max_exact_int(DType dt) {
  switch (dt) {
    case DType::Float16: return int64_t(1) << 11;
    case DType::BFloat16: return int64_t(1) << 8;
    case DType::Float32: return int64_t(1) << 24;
    default: return int64_t(1) << 53;
  }
}

// The integer range a dtype holds exactly (torch's random_ bound checks).
void int_bounds(DType dt, int64_t* lo, int64_t* hi) {
  switch (dt) {
    case DType::Bool: *lo = 0; *hi = 1; return;
    case DType::UInt8: *lo = 0; *hi = 255; return;
    case DType::Int8: *lo = -128; *hi = 127; return;
    case DType::Int16: *lo = -32768; *hi = 32767; return;
    case DType::Int32:
      *lo = std::numeric_limits<int32_t>::min();
      *hi = std::numeric_limits<int32_t>::max();
      return;
    case DType::Int64:
      *lo = std::numeric_limits<int64_t>::min();
      *hi = std::numeric_limits<int64_t>::max();
      return;
    default: *hi = max_exact_int(dt); *lo = -*hi; return;
  }
}

double max_finite(DType dt) {
  switch (dt) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return double(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

// uniform_ after validation; `op` names the caller in errors.
// The shared tail of every in-place sampler: reject overlapping outputs,
// reserve `per_block` values per Philox block from the generator, fill the
// loop, let `set_params` add the op's parameters and run the kernel.
template <class SetParams>
Tensor& run_sampler(Tensor& t, KernelFn fn, int per_block, Generator* gen,
                    const char* op, SetParams&& set_params) {
  if (t.numel() > 0) {
    check_no_internal_overlap(t, op);
    KernelArgs args;
    loop_over(args, t);
    Generator::Range r = pick(gen).reserve(blocks_for(t.numel(), per_block));
    args.i0 = as_arg(r.seed);
    args.i1 = as_arg(r.offset);
    set_params(args);
    fn(args);
  }
  t.bump_version();
  return t;
}

Tensor& uniform_impl(Tensor& t, double from, double to, Generator* gen,
                     const char* op) {
  require_defined(t, op);
  check_floating(t.dtype(), op, "uniform_");
  if (is_complex(t.dtype())) {  // both parts in [from, to), as torch
    Tensor parts = view_as_real(t);
    uniform_impl(parts, from, to, gen, op);
    return t;
  }
  FASTT_CHECK(std::isfinite(from) && std::isfinite(to), RuntimeError,
              "{}: uniform_ expects from and to to be finite, but got from={} "
              "and to={}",
              op, from, to);
  FASTT_CHECK(from <= to, RuntimeError,
              "{}: uniform_ expects to return a [from, to) range, but found "
              "from={} > to={}",
              op, from, to);
  FASTT_CHECK(to - from <= max_finite(t.dtype()), RuntimeError,
              "{}: uniform_ expects to-from <= the largest finite {}, but "
              "found to={} and from={} which result in to-from to exceed "
              "the limit",
              op, dtype_name(t.dtype()), to, from);
  KernelFn fn = lookup_kernel(Op::uniform, t.device().type, t.dtype());
  int per_block = t.dtype() == DType::Float64 ? 2 : 4;
  return run_sampler(t, fn, per_block, gen, op, [&](KernelArgs& args) {
    args.f0 = from;
    args.f1 = to;
  });
}

Tensor& normal_impl(Tensor& t, double mean, double std, Generator* gen,
                    const char* op) {
  require_defined(t, op);
  check_floating(t.dtype(), op, "normal_");
  FASTT_CHECK(std >= 0.0, RuntimeError,
              "{}: normal expects std >= 0.0, but found std {}", op, std);
  if (is_complex(t.dtype())) {  // torch: each part N(mean, std^2 / 2)
    Tensor parts = view_as_real(t);
    normal_impl(parts, mean, std / std::sqrt(2.0), gen, op);
    return t;
  }
  KernelFn fn = lookup_kernel(Op::normal, t.device().type, t.dtype());
  int per_block = t.dtype() == DType::Float64 ? 2 : 4;
  return run_sampler(t, fn, per_block, gen, op, [&](KernelArgs& args) {
    args.f0 = mean;
    args.f1 = std;
  });
}

Tensor& random_impl(Tensor& t, int64_t low, int64_t high, Generator* gen,
                    const char* op) {
  require_defined(t, op);
  FASTT_CHECK(low < high, RuntimeError,
              "{}: random_ expects 'from' to be less than 'to', but got "
              "from={} >= to={}",
              op, low, high);
  int64_t lo, hi;
  int_bounds(t.dtype(), &lo, &hi);
  FASTT_CHECK(low >= lo && low <= hi, RuntimeError,
              "{}: from is out of bounds for {}", op, dtype_name(t.dtype()));
  FASTT_CHECK(high - 1 >= lo && high - 1 <= hi, RuntimeError,
              "{}: to - 1 is out of bounds for {}", op, dtype_name(t.dtype()));
  KernelFn fn = lookup_kernel(Op::randint, t.device().type, t.dtype());
  return run_sampler(t, fn, 2, gen, op, [&](KernelArgs& args) {
    args.s0 = Scalar(low);
    args.i2 = as_arg(uint64_t(high) - uint64_t(low));  // no overflow: mod 2^64
  });
}

// s as an int64, rejecting floats no int64 holds (the cast would be UB).
int64_t to_int64(const Scalar& s, const char* op) {
  if (s.is_floating()) {
    const double d = s.to_double();
    FASTT_CHECK(d > -9.2233720368547758e18 && d < 9.2233720368547758e18,
                RuntimeError, "{}: value {} does not fit in an integer dtype",
                op, d);
  }
  return s.to<int64_t>();
}

DType arange_dtype(std::initializer_list<const Scalar*> bounds) {
  for (const Scalar* s : bounds) {
    FASTT_CHECK(!s->is_complex(), RuntimeError,
                "value cannot be converted to type double without overflow");
    if (s->is_floating()) return default_dtype();
  }
  return DType::Int64;
}

}  // namespace

// ------------------------------------------------------------- filled --
Tensor empty(IntList sizes, std::optional<DType> dtype, Device device) {
  return Tensor::empty(sizes, dtype ? *dtype : default_dtype(), device);
}

Tensor zeros(IntList sizes, std::optional<DType> dtype, Device device) {
  Tensor t = Tensor::empty(sizes, dtype ? *dtype : default_dtype(), device);
  t.fill_(Scalar(0));
  return t;
}

Tensor ones(IntList sizes, std::optional<DType> dtype, Device device) {
  Tensor t = Tensor::empty(sizes, dtype ? *dtype : default_dtype(), device);
  t.fill_(Scalar(1));
  return t;
}

Tensor full(IntList sizes, const Scalar& value, std::optional<DType> dtype,
            Device device) {
  Tensor t =
      Tensor::empty(sizes, dtype ? *dtype : value.natural_dtype(), device);
  t.fill_(value);
  return t;
}

// --------------------------------------------------------------- like --
namespace {
struct Like {
  DType dtype;
  Device device;
};
inline Like like(const Tensor& t, std::optional<DType> dtype,
                 std::optional<Device> device, const char* op) {
  FASTT_CHECK(t.defined(), ValueError, "{}: got an undefined tensor", op);
  return {dtype ? *dtype : t.dtype(), device ? *device : t.device()};
}
}  // namespace

Tensor empty_like(const Tensor& t, std::optional<DType> dtype,
                  std::optional<Device> device) {
  Like l = like(t, dtype, device, "empty_like");
  return Tensor::empty(t.sizes(), l.dtype, l.device);
}

Tensor zeros_like(const Tensor& t, std::optional<DType> dtype,
                  std::optional<Device> device) {
  Like l = like(t, dtype, device, "zeros_like");
  return zeros(t.sizes(), l.dtype, l.device);
}

Tensor ones_like(const Tensor& t, std::optional<DType> dtype,
                 std::optional<Device> device) {
  Like l = like(t, dtype, device, "ones_like");
  return ones(t.sizes(), l.dtype, l.device);
}

Tensor full_like(const Tensor& t, const Scalar& value,
                 std::optional<DType> dtype, std::optional<Device> device) {
  Like l = like(t, dtype, device, "full_like");
  return full(t.sizes(), value, l.dtype, l.device);
}

Tensor rand_like(const Tensor& t, std::optional<DType> dtype,
                 std::optional<Device> device, Generator* generator) {
  Like l = like(t, dtype, device, "rand_like");
  check_floating(l.dtype, "rand_like", "uniform_");
  Tensor out = Tensor::empty(t.sizes(), l.dtype, l.device);
  return uniform_impl(out, 0.0, 1.0, generator, "rand_like");
}

Tensor randn_like(const Tensor& t, std::optional<DType> dtype,
                  std::optional<Device> device, Generator* generator) {
  Like l = like(t, dtype, device, "randn_like");
  check_floating(l.dtype, "randn_like", "normal_");
  Tensor out = Tensor::empty(t.sizes(), l.dtype, l.device);
  return normal_impl(out, 0.0, 1.0, generator, "randn_like");
}

Tensor randint_like(const Tensor& t, int64_t high, std::optional<DType> dtype,
                    std::optional<Device> device, Generator* generator) {
  return randint_like(t, 0, high, dtype, device, generator);
}

Tensor randint_like(const Tensor& t, int64_t low, int64_t high,
                    std::optional<DType> dtype, std::optional<Device> device,
                    Generator* generator) {
  Like l = like(t, dtype, device, "randint_like");
  Tensor out = Tensor::empty(t.sizes(), l.dtype, l.device);
  return random_impl(out, low, high, generator, "randint_like");
}

// ------------------------------------------------------------- ranges --
Tensor arange(const Scalar& end, std::optional<DType> dtype, Device device) {
  return arange(Scalar(int64_t(0)), end, Scalar(int64_t(1)), dtype, device);
}

Tensor arange(const Scalar& start, const Scalar& end,
              std::optional<DType> dtype, Device device) {
  return arange(start, end, Scalar(int64_t(1)), dtype, device);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              std::optional<DType> dtype, Device device) {
  const DType dt = dtype ? *dtype : arange_dtype({&start, &end, &step});
  KernelFn fn = lookup_kernel(Op::arange, device.type, dt);
  KernelArgs args;
  int64_t size;
  if (is_integral(dt, false)) {
    // torch casts the bounds to the integer accumulation type first.
    const int64_t xs = to_int64(start, "arange"),
                  xe = to_int64(end, "arange"),
                  xst = to_int64(step, "arange");
    // torch checks the uncast bounds and step (arange(0, 0.5, -1) raises,
    // arange(0, 5, 0.5, dtype=int32) is ten zeros: the values step by the
    // cast step); int64 also checks the cast ones and sizes from them.
    const double ds = start.to_double(), de = end.to_double(),
                 dst = step.to_double();
    FASTT_CHECK(dst != 0, RuntimeError, "arange: step must be nonzero");
    FASTT_CHECK((dst > 0 && de >= ds) || (dst < 0 && de <= ds), RuntimeError,
                "arange: upper bound and lower bound inconsistent with step "
                "sign");
    if (dt == DType::Int64) {
      FASTT_CHECK(xst != 0, RuntimeError, "arange: step must be nonzero");
      FASTT_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs),
                  RuntimeError,
                  "arange: upper bound and larger bound inconsistent with "
                  "step sign");
      const __int128 sgn = xst > 0 ? 1 : -1;
      const __int128 n = (__int128(xe) - xs + xst - sgn) / xst;
      FASTT_CHECK(n <= std::numeric_limits<int64_t>::max(), RuntimeError,
                  "arange: invalid size, possible overflow?");
      size = int64_t(n);
    } else {
      const double n = std::ceil((de - ds) / dst);
      FASTT_CHECK(n >= 0 && n <= 9.2e18, RuntimeError,
                  "arange: invalid size, possible overflow?");
      size = int64_t(n);
    }
    args.i0 = xs;
    args.i1 = xst;
  } else {
    const double xs = start.to_double(), xe = end.to_double(),
                 xst = step.to_double();
    FASTT_CHECK(xst != 0, RuntimeError, "arange: step must be nonzero");
    FASTT_CHECK(std::isfinite(xs) && std::isfinite(xe), RuntimeError,
                "arange: unsupported range: {} -> {}", xs, xe);
    FASTT_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs), RuntimeError,
                "arange: upper bound and larger bound inconsistent with step "
                "sign");
    const double n = std::ceil((xe - xs) / xst);
    FASTT_CHECK(n >= 0 && n <= 9.2e18, RuntimeError,
                "arange: invalid size, possible overflow?");
    size = int64_t(n);
    args.f0 = xs;
    args.f1 = xst;
  }
  Tensor out = Tensor::empty(IntList(size), dt, device);
  if (size > 0) {
    args.out = &out;
    fn(args);
  }
  return out;
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                std::optional<DType> dtype, Device device) {
  FASTT_CHECK(steps >= 0, RuntimeError,
              "linspace: number of steps must be non-negative");
  const DType dt = dtype ? *dtype : default_dtype();
  // As torch: the kernel (its dtype) and the bounds' range are checked only
  // when both bounds are used (one step is fill_(start), zero steps read
  // neither: linspace(0, 1, 1, dtype=bool) works).
  Tensor out = Tensor::empty(IntList(steps), dt, device);
  if (steps == 1) {
    out.fill_(start);
  } else if (steps > 1 && is_complex(dt)) {
    // Each part its own real linspace (the step is complex, the index
    // real: torch's formula part by part).
    const DType rt = to_real(dt);
    Tensor parts = view_as_real(out);
    parts.select(-1, 0).copy_(linspace(Scalar(start.to_double()),
                                       Scalar(end.to_double()), steps, rt,
                                       device));
    parts.select(-1, 1).copy_(linspace(Scalar(start.imag()),
                                       Scalar(end.imag()), steps, rt,
                                       device));
  } else if (steps > 1) {
    KernelFn fn = lookup_kernel(Op::linspace, device.type, dt);
    check_scalar_fits(start, dt, "linspace");
    check_scalar_fits(end, dt, "linspace");
    KernelArgs args;
    args.out = &out;
    args.f0 = start.to_double();
    args.f1 = end.to_double();
    if (is_integral(dt, false)) {
      args.i0 = to_int64(start, "linspace");
      args.i1 = to_int64(end, "linspace");
    }
    fn(args);
  }
  return out;
}

Tensor eye(int64_t n, std::optional<DType> dtype, Device device) {
  return eye(n, n, dtype, device);
}

Tensor eye(int64_t n, int64_t m, std::optional<DType> dtype, Device device) {
  FASTT_CHECK(n >= 0, RuntimeError,
              "eye: n must be greater or equal to 0, got {}", n);
  FASTT_CHECK(m >= 0, RuntimeError,
              "eye: m must be greater or equal to 0, got {}", m);
  const DType dt = dtype ? *dtype : default_dtype();
  KernelFn fn = lookup_kernel(Op::eye, device.type, dt);
  Tensor out = Tensor::empty({n, m}, dt, device);
  if (out.numel() > 0) {
    KernelArgs args;
    args.out = &out;
    fn(args);
  }
  return out;
}

// ------------------------------------------------------------- random --
Tensor rand(IntList sizes, std::optional<DType> dtype, Device device,
            Generator* generator) {
  const DType dt = dtype ? *dtype : default_dtype();
  check_floating(dt, "rand", "uniform_");
  Tensor out = Tensor::empty(sizes, dt, device);
  return uniform_impl(out, 0.0, 1.0, generator, "rand");
}

Tensor randn(IntList sizes, std::optional<DType> dtype, Device device,
             Generator* generator) {
  const DType dt = dtype ? *dtype : default_dtype();
  check_floating(dt, "randn", "normal_");
  Tensor out = Tensor::empty(sizes, dt, device);
  return normal_impl(out, 0.0, 1.0, generator, "randn");
}

Tensor randint(int64_t high, IntList sizes, std::optional<DType> dtype,
               Device device, Generator* generator) {
  return randint(0, high, sizes, dtype, device, generator);
}

Tensor randint(int64_t low, int64_t high, IntList sizes,
               std::optional<DType> dtype, Device device,
               Generator* generator) {
  Tensor out = Tensor::empty(sizes, dtype ? *dtype : DType::Int64, device);
  return random_impl(out, low, high, generator, "randint");
}

Tensor randperm(int64_t n, std::optional<DType> dtype, Device device,
                Generator* generator) {
  FASTT_CHECK(n >= 0, RuntimeError, "randperm: n must be non-negative, got {}",
              n);
  const DType dt = dtype ? *dtype : DType::Int64;
  KernelFn fn = lookup_kernel(Op::randperm, device.type, dt);
  int64_t lo, hi;
  int_bounds(dt, &lo, &hi);
  FASTT_CHECK(n == 0 || n - 1 <= hi, RuntimeError,
              "randperm: n is too large for result tensor type: '{}' (n - 1 "
              "= {} > {})",
              dtype_name(dt), n - 1, hi);
  Tensor out = Tensor::empty(IntList(n), dt, device);
  if (n > 0) {
    KernelArgs args;
    args.out = &out;
    // Swap k of the n - 1 draws uses word k % 2 of block offset + k / 2.
    Generator::Range r = pick(generator).reserve(uint64_t(n) / 2);
    args.i0 = as_arg(r.seed);
    args.i1 = as_arg(r.offset);
    fn(args);
  }
  return out;
}

Tensor& uniform_(Tensor& t, double from, double to, Generator* generator) {
  return uniform_impl(t, from, to, generator, "uniform_");
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* generator) {
  return normal_impl(t, mean, std, generator, "normal_");
}

Tensor& random_(Tensor& t, int64_t low, int64_t high, Generator* generator) {
  return random_impl(t, low, high, generator, "random_");
}

Tensor bernoulli(const Tensor& p, Generator* generator) {
  FASTT_CHECK(p.defined(), ValueError, "bernoulli: got an undefined tensor");
  FASTT_CHECK(is_floating(p.dtype()), TypeError,
              "bernoulli: expected a floating point probability tensor, but "
              "got {}",
              dtype_name(p.dtype()));
  Tensor out = Tensor::empty(p.sizes(), p.dtype(), p.device());
  return bernoulli_(out, p, generator);
}

Tensor& bernoulli_(Tensor& t, double p, Generator* generator) {
  require_defined(t, "bernoulli_");
  FASTT_CHECK(p >= 0.0 && p <= 1.0, RuntimeError,
              "bernoulli_ expects p to be in [0, 1], but got p={}", p);
  KernelFn fn = lookup_kernel(Op::bernoulli, t.device().type, t.dtype());
  return run_sampler(t, fn, 2, generator, "bernoulli_", [&](KernelArgs& args) {
    args.f0 = p;
    args.i2 = 0;
  });
}

Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* generator) {
  require_defined(t, "bernoulli_");
  FASTT_CHECK(p.defined(), ValueError, "bernoulli_: got an undefined tensor");
  FASTT_CHECK(is_floating(p.dtype()), TypeError,
              "bernoulli_: expected a floating point probability tensor, "
              "but got {}",
              dtype_name(p.dtype()));
  FASTT_CHECK(p.device() == t.device(), RuntimeError,
              "bernoulli_: Expected all tensors to be on the same device, but "
              "found at least two devices, {} and {}!",
              t.device().str(), p.device().str());
  int64_t shape[kMaxDims];
  int nd = broadcast_shapes(t.sizes(), p.sizes(), shape, "bernoulli_");
  FASTT_CHECK(t.sizes().equals(IntList(shape, size_t(nd))), RuntimeError,
              "bernoulli_: p of shape {} does not broadcast to self's shape "
              "{}",
              shape_str(p.sizes()), shape_str(t.sizes()));
  KernelFn fn = lookup_kernel(Op::bernoulli, t.device().type, t.dtype());
  if (t.numel() > 0) {
    check_no_internal_overlap(t, "bernoulli_");
    KernelArgs args;
    const Tensor* ts[2] = {&t, &p};
    if (t.is_contiguous() && p.is_contiguous() && p.numel() == t.numel())
      build_dense_loop(args, ts, 2);
    else
      build_loop(args, ts, 2);
    Generator::Range r = pick(generator).reserve(blocks_for(t.numel(), 2));
    args.i0 = as_arg(r.seed);
    args.i1 = as_arg(r.offset);
    args.i2 = 0;
    fn(args);
    FASTT_CHECK(args.i2 == 0, RuntimeError,
                "bernoulli_: Expected p_in >= 0 && p_in <= 1 to be true, but "
                "got false");
  }
  t.bump_version();
  return t;
}

}  // namespace fastt

// Every row of csrc/ops/elementwise.def through its C++ entry points: the
// op list is the rows themselves (FASTT_EW expanded below, as the core
// expands it), so a new row is tested here with no edit. For each row:
// its CPU kernels are exactly its dtype column; every input dtype, 45x65,
// 0-d, empty, transposed and step-sliced inputs, the scalar, in-place and
// _out forms, mixed dtypes and the result dtype of its rule column, against
// an oracle: the row's own functor (kernels/functors.h) evaluated in double
// for floating compute dtypes and in the compute dtype otherwise. So this
// file checks the machinery around the math (entry points, promotion,
// strides, casts, loops); the math itself is checked against NumPy and
// torch by the Python op table (tests/python/op_table.py, whose coverage of
// these rows tests/python/test_op_rows.py enforces). Then the op-specific
// rules (integer division by zero, pow, alpha, where, clamp, lerp,
// addcmul/addcdiv, masked_fill). A row whose entry points are hand-written
// (kinds UnaryKernel, UnaryHand, BinaryKernel) needs its adapter in
// namespace hand below: without one this file does not compile.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/dispatch.h"
#include "csrc/ops/elementwise.h"
#include "kernels/dtype_sets.h"
#include "kernels/functors.h"

using namespace fastt;
using namespace fastt::test;
using D = std::vector<double>;

namespace {

enum class Rule { Same, Float, Bool };  // the rows' rule column

DType compute_of(Rule r, DType promoted) {
  return r == Rule::Float && !is_floating(promoted) ? default_dtype()
                                                    : promoted;
}
DType result_of(Rule r, DType compute) {
  return r == Rule::Bool ? DType::Bool : compute;
}
bool has_kernel(Op op, DType dt) {
  return registered_kernel(op, DeviceType::CPU, dt) != nullptr;
}

// Checks `got` against ref applied to the inputs' values converted to the
// compute dtype, rounded to the result dtype.
void check_values(const Tensor& got, const D& ref, DType result,
                  const char* what) {
  REQUIRE(got.numel() == int64_t(ref.size()));
  double rtol = rtol_of(result);
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    double g = get(got, i), r = round_to(result, ref[size_t(i)]);
    if (!close(g, r, rtol, rtol)) {
      ++bad;
      FAIL_CHECK(what << " [" << dtype_name(result) << "] element " << i
                      << ": got " << g << " expected " << r);
    }
  }
}

// ------------------------------------------------------------ oracle --
// The functor column names kernels/functors.h's math for every kind but
// BinaryAlpha and UnaryHand, whose column names a kernel template of each
// backend; their math is spelled here from the functors (alpha 1, the
// default negative slope).
namespace oracle {
using namespace ::fastt::functors;
struct AddK : Add {};
struct SubK {
  template <class T> T operator()(T a, T b) const {
    return SubAlpha<T>{T(1)}(a, b);
  }
};
struct LeakyReluK {
  template <class T> T operator()(T a) const { return LeakyRelu{0.01}(a); }
};
}  // namespace oracle

template <class T> struct Tag { using type = T; };
template <class T>
constexpr bool kFloatLike = std::is_floating_point<T>::value ||
                            std::is_same<T, Half>::value ||
                            std::is_same<T, BFloat16>::value;

// Fn on values already rounded to the compute dtype T: in double for the
// floating dtypes (a reference more precise than the kernel's op-math
// type), in T itself otherwise (integer wrap-around as the kernel has it).
template <class Fn, class T, class... X>
double eval_in(X... x) {
  if constexpr (kFloatLike<T>) return double(Fn{}(double(x)...));
  else return double(Fn{}(static_cast<T>(x)...));
}
// Instantiated only for the row's own dtype set: a functor need not
// compile for a dtype its row does not register.
template <class Fn, class... Ts, class... X>
double oracle_of(Types<Ts...>, DType compute, X... x) {
  double r = std::numeric_limits<double>::quiet_NaN();
  bool hit = false;
  auto one = [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (hit || compute != dtype_of<T>) return;
    hit = true;
    r = eval_in<Fn, T>(x...);
  };
  (one(Tag<Ts>{}), ...);
  if (!hit) FAIL_CHECK("no kernel dtype " << dtype_name(compute));
  return r;
}
template <class... Ts>
std::vector<DType> dtypes_of(Types<Ts...>) {
  return {dtype_of<Ts>...};
}

// Which python columns give the C++ in-place form (elementwise.h).
#define T_INPLACE_PyAll(...) __VA_ARGS__
#define T_INPLACE_PyAllNum(...) __VA_ARGS__
#define T_INPLACE_PyHand(...) __VA_ARGS__
#define T_INPLACE_PyNoInplace(...) nullptr
#define T_INPLACE_PyPlain(...) nullptr
#define T_INPLACE_PyAllT(...) __VA_ARGS__
#define T_INPLACE_PyNoInplaceT(...) nullptr

// ------------------------------------------------------------- unary --
struct UnaryCase {
  const char* name;
  Op op;
  Rule rule;
  Tensor (*fn)(const Tensor&);
  Tensor& (*inplace)(Tensor&);                 // null: no in-place form
  Tensor& (*out)(Tensor&, const Tensor&);      // null: no _out form
  double (*ref)(DType compute, double);
  std::vector<DType> kernel_dtypes;            // the row's dtype column
};

// ------------------------------------------------------------ binary --
struct BinaryCase {
  const char* name;
  Op op;
  Rule rule;
  Tensor (*tt)(const Tensor&, const Tensor&);
  Tensor (*ts)(const Tensor&, const Scalar&);  // null: no such form
  Tensor (*st)(const Scalar&, const Tensor&);
  Tensor& (*inplace)(Tensor&, const Tensor&);
  Tensor& (*out)(Tensor&, const Tensor&, const Tensor&);
  double (*ref)(DType compute, double, double);
  std::vector<DType> kernel_dtypes;
  bool promotes = true;        // false: both inputs must share a dtype
  bool float_inputs = false;   // internal kernels fed only float grads
};

#define T_REF1(functor, dtypes) \
  [](DType c, double x) { return oracle_of<oracle::functor>(dtypes{}, c, x); }
#define T_REF2(functor, dtypes)                                       \
  [](DType c, double x, double y) {                                   \
    return oracle_of<oracle::functor>(dtypes{}, c, x, y);             \
  }

// The hand-written entry points of the UnaryKernel, UnaryHand and
// BinaryKernel rows: one adapter per row, named <row>_case.
namespace hand {
using R1 = double (*)(DType, double);
using R2 = double (*)(DType, double, double);
UnaryCase gelu_case(const char* n, Op op, Rule r, R1 ref,
                    std::vector<DType> k) {
  return {n, op, r, [](const Tensor& a) { return gelu(a); },
          [](Tensor& a) -> Tensor& { return gelu_(a); }, nullptr, ref, k};
}
UnaryCase gelu_tanh_case(const char* n, Op op, Rule r, R1 ref,
                         std::vector<DType> k) {
  return {n, op, r, [](const Tensor& a) { return gelu(a, "tanh"); },
          [](Tensor& a) -> Tensor& { return gelu_(a, "tanh"); }, nullptr,
          ref, k};
}
UnaryCase leaky_relu_case(const char* n, Op op, Rule r, R1 ref,
                          std::vector<DType> k) {
  return {n, op, r, [](const Tensor& a) { return leaky_relu(a); },
          [](Tensor& a) -> Tensor& { return leaky_relu_(a); }, nullptr, ref,
          k};
}
BinaryCase div_floor_case(const char* n, Op op, Rule r, R2 ref,
                          std::vector<DType> k) {
  return {n, op, r,
          [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); },
          [](const Tensor& a, const Scalar& b) { return floor_divide(a, b); },
          [](const Scalar& a, const Tensor& b) { return floor_divide(a, b); },
          [](Tensor& a, const Tensor& b) -> Tensor& {
            return floor_divide_(a, b);
          },
          [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
            return floor_divide_out(o, a, b);
          },
          ref, k};
}
BinaryCase div_trunc_case(const char* n, Op op, Rule r, R2 ref,
                          std::vector<DType> k) {
  return {n, op, r,
          [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); },
          [](const Tensor& a, const Scalar& b) { return div(a, b, "trunc"); },
          nullptr, nullptr, nullptr, ref, k};
}
BinaryCase pow_case(const char* n, Op op, Rule r, R2 ref,
                    std::vector<DType> k) {
  return {n, op, r,
          [](const Tensor& a, const Tensor& b) { return pow(a, b); },
          [](const Tensor& a, const Scalar& b) { return pow(a, b); },
          [](const Scalar& a, const Tensor& b) { return pow(a, b); },
          [](Tensor& a, const Tensor& b) -> Tensor& { return pow_(a, b); },
          [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
            return pow_out(o, a, b);
          },
          ref, k};
}
BinaryCase heaviside_case(const char* n, Op op, Rule r, R2 ref,
                          std::vector<DType> k) {
  BinaryCase c{n, op, r,
               [](const Tensor& a, const Tensor& b) { return heaviside(a, b); },
               nullptr, nullptr,
               [](Tensor& a, const Tensor& b) -> Tensor& {
                 return heaviside_(a, b);
               },
               [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
                 return heaviside_out(o, a, b);
               },
               ref, k};
  c.promotes = false;  // torch: input and values of one dtype
  return c;
}
// The fused activation gradients (in0 = grad, in1 = output or input).
#define T_ACTIVATION_BACKWARD(row, ...)                                     \
  BinaryCase row##_case(const char* n, Op op, Rule r, R2 ref,              \
                        std::vector<DType> k) {                            \
    BinaryCase c{n, op, r,                                                 \
                 [](const Tensor& g, const Tensor& s) {                    \
                   return activation_backward(__VA_ARGS__, g, s);          \
                 },                                                        \
                 nullptr, nullptr, nullptr, nullptr, ref, k};              \
    c.float_inputs = true;                                                 \
    return c;                                                              \
  }
T_ACTIVATION_BACKWARD(relu_backward, "relu")
T_ACTIVATION_BACKWARD(sigmoid_backward, "sigmoid")
T_ACTIVATION_BACKWARD(tanh_backward, "tanh")
T_ACTIVATION_BACKWARD(silu_backward, "silu")
T_ACTIVATION_BACKWARD(gelu_backward, "gelu")
#undef T_ACTIVATION_BACKWARD
BinaryCase gelu_tanh_backward_case(const char* n, Op op, Rule r, R2 ref,
                                   std::vector<DType> k) {
  BinaryCase c{n, op, r,
               [](const Tensor& g, const Tensor& x) {
                 return activation_backward("gelu", g, x, "tanh");
               },
               nullptr, nullptr, nullptr, nullptr, ref, k};
  c.float_inputs = true;
  return c;
}
}  // namespace hand

// The unary rows.
#define T_UNARY_Unary(name, functor, dtypes, rule, python)                   \
  UnaryCase{#name, Op::name, Rule::rule,                                     \
            [](const Tensor& a) { return name(a); },                         \
            T_INPLACE_##python([](Tensor& a) -> Tensor& { return name##_(a); }), \
            [](Tensor& o, const Tensor& a) -> Tensor& {                      \
              return name##_out(o, a);                                       \
            },                                                               \
            T_REF1(functor, dtypes), dtypes_of(dtypes{})},
#define T_UNARY_HAND(name, functor, dtypes, rule, python)                    \
  hand::name##_case(#name, Op::name, Rule::rule, T_REF1(functor, dtypes),    \
                    dtypes_of(dtypes{})),
#define T_UNARY_UnaryKernel T_UNARY_HAND
#define T_UNARY_UnaryHand T_UNARY_HAND
#define T_UNARY_Binary(...)
#define T_UNARY_BinaryAlpha(...)
#define T_UNARY_BinaryKernel(...)
const std::vector<UnaryCase> kUnary = {
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  T_UNARY_##kind(name, functor, dtypes, rule, python)
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
};

// The binary rows (BinaryAlpha: alpha at its default, 1).
#define T_BINARY_Binary(name, functor, dtypes, rule, python)                 \
  BinaryCase{#name, Op::name, Rule::rule,                                    \
             [](const Tensor& a, const Tensor& b) { return name(a, b); },    \
             [](const Tensor& a, const Scalar& b) { return name(a, b); },    \
             [](const Scalar& a, const Tensor& b) { return name(a, b); },    \
             T_INPLACE_##python([](Tensor& a, const Tensor& b) -> Tensor& {  \
               return name##_(a, b);                                         \
             }),                                                             \
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {    \
               return name##_out(o, a, b);                                   \
             },                                                              \
             T_REF2(functor, dtypes), dtypes_of(dtypes{})},
#define T_BINARY_BinaryAlpha(name, functor, dtypes, rule, python) \
  T_BINARY_Binary(name, functor, dtypes, rule, PyAll)
#define T_BINARY_BinaryKernel(name, functor, dtypes, rule, python)           \
  hand::name##_case(#name, Op::name, Rule::rule, T_REF2(functor, dtypes),    \
                    dtypes_of(dtypes{})),
#define T_BINARY_Unary(...)
#define T_BINARY_UnaryKernel(...)
#define T_BINARY_UnaryHand(...)
const std::vector<BinaryCase> kBinary = {
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) \
  T_BINARY_##kind(name, functor, dtypes, rule, python)
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
};

// Inputs of one dtype in several layouts, all with the same values.
struct Layout {
  const char* name;
  Tensor t;
};
std::vector<Layout> layouts(DType dt, bool nonzero, uint32_t seed) {
  std::vector<Layout> out;
  out.push_back({"45x65", make(sample(dt, 45 * 65, seed, nonzero), {45, 65},
                               dt)});
  out.push_back({"transposed",
                 make(sample(dt, 65 * 45, seed + 1, nonzero), {65, 45}, dt)
                     .t()});
  out.push_back({"step-sliced",
                 make(sample(dt, 9 * 20, seed + 2, nonzero), {9, 20}, dt)
                     .slice(1, 1, 20, 3)});
  out.push_back({"0-d", make(sample(dt, 1, seed + 3, nonzero), IntList(),
                             dt)});
  out.push_back({"empty", Tensor::empty({0, 3}, dt)});
  return out;
}

// Reference over broadcast inputs (a, b already of the output's shape).
D binary_ref(const BinaryCase& c, const Tensor& a, const Tensor& b,
             DType compute) {
  D out(size_t(a.numel()));
  for (int64_t i = 0; i < a.numel(); ++i)
    out[size_t(i)] = c.ref(compute, round_to(compute, get(a, i)),
                           round_to(compute, get(b, i)));
  return out;
}

bool in(const std::vector<DType>& v, DType d) {
  return std::find(v.begin(), v.end(), d) != v.end();
}

}  // namespace

TEST_CASE("the elementwise rows are the cases", "[elementwise]") {
  // Every row is a unary or a binary case, once.
  size_t rows = 0;
#define FASTT_EW(name, kind, functor, dtypes, rule, grad, python) ++rows;
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
  CHECK(kUnary.size() + kBinary.size() == rows);
  // Rows of every kind are among them.
  auto has = [](const auto& cases, const char* name) {
    for (const auto& c : cases)
      if (std::string(c.name) == name) return true;
    return false;
  };
  for (const char* n : {"neg", "trigamma", "gelu", "leaky_relu"})
    CHECK(has(kUnary, n));
  for (const char* n : {"add", "sub", "div", "div_floor", "pow", "heaviside",
                        "gelu_tanh_backward"})
    CHECK(has(kBinary, n));
}

TEST_CASE("each row's CPU kernels are exactly its dtype column",
          "[elementwise]") {
  auto check = [](const char* name, Op op, const std::vector<DType>& want) {
    INFO(name);
    CHECK(!want.empty());
    for (DType dt : kAllDTypes) {
      INFO(dtype_name(dt));
      CHECK(has_kernel(op, dt) == in(want, dt));
      if (!in(want, dt))
        CHECK(unsupported_reason(op, DeviceType::CPU, dt) ==
              Unsupported::DType);
    }
  };
  for (const UnaryCase& c : kUnary) check(c.name, c.op, c.kernel_dtypes);
  for (const BinaryCase& c : kBinary) check(c.name, c.op, c.kernel_dtypes);
}

TEST_CASE("unary rows against their functor, every dtype and layout",
          "[elementwise]") {
  for (const UnaryCase& c : kUnary) {
    for (DType dt : kAllDTypes) {
      DType compute = compute_of(c.rule, dt);
      DType result = result_of(c.rule, compute);
      INFO(c.name << " on " << dtype_name(dt));
      if (!in(c.kernel_dtypes, compute)) {
        CHECK(unsupported_reason(c.op, DeviceType::CPU, compute) ==
              Unsupported::DType);
        // square of bool is int64 (torch): its own test case below.
        if (c.op == Op::square && dt == DType::Bool) continue;
        CHECK_THROWS_AS(c.fn(make({1}, {1}, dt)), NotImplementedError);
        continue;
      }
      for (Layout& l : layouts(dt, false, 7)) {
        INFO(l.name);
        Tensor got = c.fn(l.t);
        CHECK(got.dtype() == result);
        CHECK(got.sizes().equals(l.t.sizes()));
        D ref;
        for (double x : values(l.t))
          ref.push_back(c.ref(compute, round_to(compute, x)));
        check_values(got, ref, result, c.name);
        if (c.out) {  // _out into a fresh tensor of the result dtype
          Tensor o = Tensor::empty(l.t.sizes(), result);
          c.out(o, l.t);
          check_values(o, ref, result, c.name);
        }
        if (c.inplace) {  // when the result fits the input's dtype
          Tensor ip = l.t.clone();
          if (can_cast(result, dt)) {
            c.inplace(ip);
            check_values(ip, ref, dt, c.name);
          } else {
            CHECK_THROWS_AS(c.inplace(ip), RuntimeError);
          }
        }
      }
    }
  }
}

TEST_CASE("gelu, leaky_relu and NaN propagation", "[elementwise]") {
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32,
                   DType::Float64}) {
    Tensor x = make(sample(dt, 45 * 65, 3), {45, 65}, dt);
    D ge, gt, lr;
    for (double v : values(x)) {
      ge.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
      gt.push_back(0.5 * v *
                   (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) *
                                  (v + 0.044715 * v * v * v))));
      lr.push_back(v > 0 ? v : 0.2 * v);
    }
    check_values(gelu(x), ge, dt, "gelu");
    check_values(gelu(x.t(), "tanh").t(), gt, dt, "gelu_tanh");
    check_values(leaky_relu(x, 0.2), lr, dt, "leaky_relu");
    Tensor y = x.clone();
    gelu_(y);
    check_values(y, ge, dt, "gelu_");
    y = x.clone();
    leaky_relu_(y, 0.2);
    check_values(y, lr, dt, "leaky_relu_");
  }
  CHECK_THROWS_AS(gelu(make({1}, {1}, DType::Float32), "fast"), RuntimeError);
  // torch: no integer gelu or leaky_relu (their rows' rule is Same).
  CHECK_THROWS_AS(gelu(make({1, 2}, {2}, DType::Int64)), NotImplementedError);
  CHECK_THROWS_AS(leaky_relu(make({1, 2}, {2}, DType::Int32), 0.1),
                  NotImplementedError);
  double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor n = make({nan, -1, 2}, {3}, DType::Float32);
  CHECK(std::isnan(get(relu(n), 0)));
  CHECK(std::isnan(get(abs(n), 0)));
  CHECK(std::isnan(get(exp(n), 0)));
  CHECK(std::isnan(get(maximum(n, make({0}, {1}, DType::Float32)), 0)));
  CHECK(std::isnan(get(minimum(make({0}, {1}, DType::Float32), n), 0)));
  CHECK(std::isnan(get(clamp(n, Scalar(0), Scalar(1)), 0)));
  CHECK(values(round(make({0.5, 1.5, 2.5, -0.5, -2.5}, {5},
                          DType::Float32))) == D{0, 2, 2, -0.0, -2});
}

TEST_CASE("binary rows against their functor, every dtype and layout",
          "[elementwise]") {
  for (const BinaryCase& c : kBinary) {
    for (DType dt : kAllDTypes) {
      DType compute = compute_of(c.rule, dt);
      DType result = result_of(c.rule, compute);
      INFO(c.name << " on " << dtype_name(dt));
      if (c.float_inputs && !is_floating(dt)) continue;  // grads are floats
      if (c.op == Op::sub && dt == DType::Bool) {  // torch's sub_check
        CHECK_THROWS_AS(c.tt(make({1}, {1}, dt), make({1}, {1}, dt)),
                        RuntimeError);
        continue;
      }
      if (!in(c.kernel_dtypes, compute)) {
        CHECK_THROWS_AS(c.tt(make({1}, {1}, dt), make({1}, {1}, dt)),
                        NotImplementedError);
        continue;
      }
      // The right-hand side never holds 0: integer division by zero
      // raises (its own test case below).
      auto la = layouts(dt, false, 11);
      auto lb = layouts(dt, true, 23);
      for (size_t i = 0; i < la.size(); ++i) {
        // Pair each layout with itself and with the contiguous 45x65.
        for (size_t j : {i, size_t(0)}) {
          const Tensor& a = la[i].t;
          const Tensor& b = lb[j].t;
          if (i != j && a.dim() != 0 && a.numel() != b.numel()) continue;
          INFO(la[i].name << " x " << lb[j].name);
          Tensor got = c.tt(a, b);
          CHECK(got.dtype() == result);
          std::vector<int64_t> shape = broadcast_shapes(a.sizes(), b.sizes());
          Tensor ea = a.expand(shape), eb = b.expand(shape);
          D ref = binary_ref(c, ea, eb, compute);
          check_values(got, ref, result, c.name);
          if (c.out) {
            Tensor o = Tensor::empty(shape, result);
            c.out(o, a, b);
            check_values(o, ref, result, c.name);
          }
          if (c.inplace && a.sizes().equals(IntList(shape)) &&
              can_cast(result, dt)) {
            Tensor ip = a.clone();
            c.inplace(ip, b);
            check_values(ip, ref, dt, c.name);
          }
        }
      }
      // Tensor-scalar and scalar-tensor with a scalar of the same category
      // (positive: integer pow raises on a negative scalar exponent).
      double sv = dt == DType::Bool ? 1 : is_floating(dt) ? 2.5 : 2;
      Scalar s = dt == DType::Bool ? Scalar(true)
                 : is_floating(dt) ? Scalar(sv)
                                   : Scalar(int64_t(sv));
      for (const Tensor* t : {&la[0].t, &la[1].t}) {
        if (!c.ts) break;
        D ref;
        for (double x : values(*t))
          ref.push_back(
              c.ref(compute, round_to(compute, x), round_to(compute, sv)));
        Tensor g = c.ts(*t, s);
        CHECK(g.dtype() == result);
        check_values(g, ref, result, c.name);
      }
      for (const Tensor* t : {&lb[0].t, &lb[1].t}) {  // t is the divisor
        if (!c.st) break;
        D ref;
        for (double x : values(*t))
          ref.push_back(
              c.ref(compute, round_to(compute, sv), round_to(compute, x)));
        Tensor g = c.st(s, *t);
        CHECK(g.dtype() == result);
        check_values(g, ref, result, c.name);
      }
    }
  }
}

TEST_CASE("mixed-dtype binary ops promote before computing",
          "[elementwise]") {
  struct Pair {
    DType a, b;
  };
  for (Pair p : {Pair{DType::Int32, DType::Float16},
                 Pair{DType::UInt8, DType::Int8},
                 Pair{DType::Bool, DType::Float32},
                 Pair{DType::Int64, DType::Float64},
                 Pair{DType::BFloat16, DType::Float16},
                 Pair{DType::Int16, DType::BFloat16}}) {
    Tensor a = make(sample(p.a, 45 * 65, 5, false, 1, 4), {45, 65}, p.a);
    Tensor b = make(sample(p.b, 65, 6, true, 1, 4), {65}, p.b);
    DType r = promote_types(p.a, p.b);
    INFO(dtype_name(p.a) << " x " << dtype_name(p.b));
    for (const BinaryCase& c : kBinary) {
      DType compute = compute_of(c.rule, r);
      if (!in(c.kernel_dtypes, compute) || !c.promotes) continue;
      if (c.float_inputs && !(is_floating(p.a) && is_floating(p.b))) continue;
      INFO(c.name);
      if (c.op == Op::sub && (p.a == DType::Bool || p.b == DType::Bool)) {
        CHECK_THROWS_AS(c.tt(a, b.t()), RuntimeError);
        continue;
      }
      Tensor got = c.tt(a, b.t());  // 1-d t() is a no-op view
      CHECK(got.dtype() == result_of(c.rule, compute));
      D ref = binary_ref(c, a, b.expand({45, 65}), compute);
      check_values(got, ref, result_of(c.rule, compute), c.name);
      Tensor got2 = c.tt(b, a);  // also the reversed order
      D ref2 = binary_ref(c, b.expand({45, 65}), a, compute);
      check_values(got2, ref2, result_of(c.rule, compute), c.name);
    }
  }
  // heaviside does not promote (torch): one dtype for input and values.
  CHECK_THROWS(heaviside(make({1}, {1}, DType::Float32),
                         make({1}, {1}, DType::Float64)));
  // A 0-d tensor of a higher category participates with its own dtype
  // (torch: int32 + 0-d float64 -> float64); a Python float gives the
  // default dtype; a 0-d tensor of the same category does not widen.
  Tensor i = make({1, 2, 3}, {3}, DType::Int32);
  CHECK(add(i, scalar_tensor(0.5, DType::Float64)).dtype() == DType::Float64);
  CHECK(add(i, Scalar(0.5)).dtype() == DType::Float32);
  CHECK(values(add(i, scalar_tensor(0.5, DType::Float64))) ==
        D{1.5, 2.5, 3.5});
  CHECK(add(i, scalar_tensor(7, DType::Int64)).dtype() == DType::Int32);
  // _out into a wider dtype; into a narrower category is an error.
  Tensor o = Tensor::empty({3}, DType::Float64);
  add_out(o, i, i);
  CHECK(values(o) == D{2, 4, 6});
  Tensor oi = Tensor::empty({3}, DType::Int64);
  CHECK_THROWS_AS(div_out(oi, i, i), RuntimeError);
  Tensor ob = Tensor::empty({3}, DType::Bool);
  CHECK_THROWS_AS(add_out(ob, i, i), RuntimeError);
  Tensor wrong = Tensor::empty({4}, DType::Int32);
  CHECK_THROWS_AS(add_out(wrong, i, i), RuntimeError);
  // In-place with an input that would need a wider result.
  Tensor ii = i.clone();
  CHECK_THROWS_AS(add_(ii, Scalar(0.5)), RuntimeError);
  CHECK_THROWS_AS(div_(ii, i), RuntimeError);
  Tensor f = make({1, 2, 3}, {3}, DType::Float16);
  add_(f, i);  // int32 into float16 is fine
  CHECK(values(f) == D{2, 4, 6});
}

TEST_CASE("broadcasting in elementwise ops", "[elementwise]") {
  Tensor a = make({0, 1, 2}, {3, 1}, DType::Float32);
  Tensor b = make({0, 10, 20, 30}, {1, 4}, DType::Float32);
  Tensor c = add(a, b);
  CHECK(c.sizes().vec() == std::vector<int64_t>{3, 4});
  CHECK(values(c) == D{0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32});
  Tensor s = scalar_tensor(5, DType::Float32);
  CHECK(values(mul(s, b)) == D{0, 50, 100, 150});
  CHECK(mul(s, s).dim() == 0);
  CHECK(get(mul(s, s), 0) == 25);
  Tensor e = add(Tensor::empty({0, 1}, DType::Float32), b);
  CHECK(e.sizes().vec() == std::vector<int64_t>{0, 4});
  CHECK(add(Tensor::empty({2, 0}, DType::Float32), s).numel() == 0);
  CHECK_THROWS_AS(add(Tensor::empty({2, 0}, DType::Float32),
                      Tensor::empty({3}, DType::Float32)),
                  RuntimeError);
  // Broadcast in-place: the output shape must be self's.
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Int64);
  add_(x, make({10, 20, 30}, {3}, DType::Int64));
  CHECK(values(x) == D{11, 22, 33, 14, 25, 36});
  Tensor small = make({1, 2, 3}, {3}, DType::Int64);
  CHECK_THROWS_AS(add_(small, x), RuntimeError);
  // Expanded (stride-0) inputs and a 3-d broadcast.
  Tensor p = make({1, 2}, {2, 1, 1}, DType::Float64);
  Tensor q = make({1, 2, 3}, {3}, DType::Float64).expand({4, 3});
  Tensor r = mul(p, q);
  CHECK(r.sizes().vec() == std::vector<int64_t>{2, 4, 3});
  CHECK(get(r, 23) == 6);
  CHECK(get(r, 2) == 3);
}

TEST_CASE("in-place ops reject outputs that overlap their inputs",
          "[elementwise]") {
  Tensor x = make({1, 2, 3, 4}, {2, 2}, DType::Float32);
  CHECK_THROWS_AS(add_(x, x.t()), RuntimeError);
  CHECK_THROWS_AS(add_(x, x.select(0, 0)), RuntimeError);
  Tensor y = make({1, 2, 3, 4, 5}, {5}, DType::Float32);
  Tensor o = y.slice(0, 1, 5);
  CHECK_THROWS_AS(add_out(o, y.slice(0, 0, 4), y.slice(0, 0, 4)),
                  RuntimeError);
  // Exactly aliasing is fine, and disjoint halves of one storage too.
  add_(x, x);
  CHECK(values(x) == D{2, 4, 6, 8});
  Tensor lo = y.slice(0, 0, 2), hi = y.slice(0, 3, 5);
  add_(lo, hi);
  CHECK(values(y) == D{5, 7, 3, 4, 5});
  uint32_t v = y.storage()->version();
  mul_(y, Scalar(2));
  CHECK(y.storage()->version() > v);
  Tensor ex = make({1}, {1}, DType::Float32).expand({3});
  CHECK_THROWS_AS(add_(ex, make({1, 2, 3}, {3}, DType::Float32)),
                  RuntimeError);
}

TEST_CASE("integer division by zero raises ZeroDivisionError",
          "[elementwise]") {
  for (DType dt : {DType::UInt8, DType::Int8, DType::Int16, DType::Int32,
                   DType::Int64}) {
    INFO(dtype_name(dt));
    Tensor a = make({5, 6, 7}, {3}, dt);
    Tensor z = make({1, 0, 2}, {3}, dt);
    Tensor zt = make({1, 2, 3, 0, 4, 5}, {3, 2}, dt).t().select(0, 1);
    for (auto f : {+[](const Tensor& x, const Tensor& y) {
                     return floor_divide(x, y);
                   },
                   +[](const Tensor& x, const Tensor& y) {
                     return remainder(x, y);
                   },
                   +[](const Tensor& x, const Tensor& y) {
                     return fmod(x, y);
                   },
                   +[](const Tensor& x, const Tensor& y) {
                     return div(x, y, "trunc");
                   },
                   +[](const Tensor& x, const Tensor& y) {
                     return div(x, y, "floor");
                   }}) {
      try {
        f(a, z);
        FAIL("expected ZeroDivisionError");
      } catch (const RuntimeError& e) {
        CHECK(std::string(e.what()).find("ZeroDivisionError") !=
              std::string::npos);
      }
      CHECK_THROWS_AS(f(a, zt), RuntimeError);  // strided divisor
      CHECK_THROWS_AS(f(a, scalar_tensor(0, dt)), RuntimeError);
      CHECK_NOTHROW(f(a, make({1, 2, 3}, {3}, dt)));
      CHECK_NOTHROW(f(Tensor::empty({0}, dt), scalar_tensor(0, dt)));
    }
    CHECK_THROWS_AS(floor_divide(a, Scalar(0)), RuntimeError);
    CHECK_THROWS_AS(remainder(a, Scalar(0)), RuntimeError);
    CHECK_THROWS_AS(fmod(a, Scalar(0)), RuntimeError);
    CHECK_THROWS_AS(div(a, Scalar(0), "trunc"), RuntimeError);
    CHECK_THROWS_AS(remainder(Scalar(3), z), RuntimeError);
    Tensor ip = a.clone();
    CHECK_THROWS_AS(remainder_(ip, z), RuntimeError);
    CHECK_THROWS_AS(fmod_(ip, Scalar(0)), RuntimeError);
    Tensor o = Tensor::empty({3}, dt);
    CHECK_THROWS_AS(floor_divide_out(o, a, z), RuntimeError);
    // A scalar that wraps to 0 in the compute dtype is a zero divisor too.
    if (itemsize(dt) == 1) {
      CHECK_THROWS_AS(remainder(a, Scalar(256)), RuntimeError);
    }
    // True division promotes to float: inf, no error.
    CHECK(std::isinf(get(div(a, z), 1)));
  }
  // Floats follow IEEE.
  Tensor f = make({1, -1, 0}, {3}, DType::Float32);
  Tensor fz = make({0, 0, 0}, {3}, DType::Float32);
  D fd = values(floor_divide(f, fz));
  CHECK(fd[0] == INFINITY);
  CHECK(fd[1] == -INFINITY);
  CHECK(std::isnan(fd[2]));
  CHECK(std::isnan(get(remainder(f, fz), 0)));
  CHECK(std::isnan(get(fmod(f, fz), 0)));
  // Negative operands: floor vs trunc semantics.
  Tensor n = make({-7, 7, -7, 7}, {4}, DType::Int32);
  Tensor d = make({2, -2, -2, 2}, {4}, DType::Int32);
  CHECK(values(floor_divide(n, d)) == D{-4, -4, 3, 3});
  CHECK(values(div(n, d, "trunc")) == D{-3, -3, 3, 3});
  CHECK(values(remainder(n, d)) == D{1, -1, -1, 1});
  CHECK(values(fmod(n, d)) == D{-1, 1, -1, 1});
  CHECK_THROWS_AS(div(n, d, "round"), ValueError);
}

TEST_CASE("pow rules", "[elementwise]") {
  Tensor i = make({2, 3, -2}, {3}, DType::Int64);
  CHECK(values(pow(i, Scalar(3))) == D{8, 27, -8});
  CHECK(values(pow(i, Scalar(0))) == D{1, 1, 1});
  CHECK_THROWS_AS(pow(i, Scalar(-1)), RuntimeError);
  Tensor ii = i.clone();
  CHECK_THROWS_AS(pow_(ii, Scalar(-2)), RuntimeError);
  // Tensor exponents follow torch: 0 for |base| > 1, +-1 for base +-1.
  Tensor base = make({2, 1, -1, -1}, {4}, DType::Int32);
  Tensor e = make({-1, -5, -3, -2}, {4}, DType::Int32);
  CHECK(values(pow(base, e)) == D{0, 1, -1, 1});
  CHECK(pow(i, Scalar(0.5)).dtype() == DType::Float32);
  D pr = values(pow(make({4, 9}, {2}, DType::Float32), Scalar(-0.5)));
  CHECK(pr[0] == 0.5);
  CHECK(close(pr[1], 1.0 / 3.0, 1e-6, 0));
  CHECK(values(pow(Scalar(2), make({0, 1, 10}, {3}, DType::Int64))) ==
        D{1, 2, 1024});
  CHECK(pow(Scalar(2.0), make({1}, {1}, DType::Int64)).dtype() ==
        DType::Float32);
  // int8 wraps.
  CHECK(get(pow(make({3}, {1}, DType::Int8), Scalar(5)), 0) ==
        double(int8_t(243)));
}

TEST_CASE("alpha rules for add and sub", "[elementwise]") {
  Tensor a = make({1, 2, 3}, {3}, DType::Int64);
  Tensor b = make({1, 1, 1}, {3}, DType::Int64);
  CHECK(values(add(a, b, 3)) == D{4, 5, 6});
  CHECK(values(sub(a, b, 2)) == D{-1, 0, 1});
  CHECK(values(add(a, Scalar(2), 3)) == D{7, 8, 9});
  CHECK(values(sub(Scalar(10), a, 2)) == D{8, 6, 4});
  CHECK(values(add(Scalar(1), a, -1)) == D{0, -1, -2});
  // Float alpha on integral results: an error in every form.
  CHECK_THROWS_AS(add(a, b, 2.5), RuntimeError);
  CHECK_THROWS_AS(sub(a, Scalar(1), 0.5), RuntimeError);
  CHECK_THROWS_AS(add(Scalar(1), a, 0.5), RuntimeError);
  Tensor c = a.clone();
  CHECK_THROWS_AS(add_(c, b, 1.5), RuntimeError);
  CHECK_THROWS_AS(sub_(c, Scalar(1), 1.5), RuntimeError);
  Tensor o = Tensor::empty({3}, DType::Int64);
  CHECK_THROWS_AS(add_out(o, a, b, 0.5), RuntimeError);
  CHECK(values(c) == D{1, 2, 3});  // untouched
  // Float alpha is fine once the result is floating.
  CHECK(values(add(a, Scalar(0.5), 2.0)) == D{2, 3, 4});
  Tensor f = make({1, 2}, {2}, DType::Float16);
  CHECK(values(add(f, f, 0.5)) == D{1.5, 3});
  CHECK(values(sub(f, f, 0.25)) == D{0.75, 1.5});
  // Bool alpha only for bool results.
  Tensor t = make({1, 0}, {2}, DType::Bool);
  CHECK(values(add(t, t, true)) == D{1, 0});
  CHECK_THROWS_AS(add(a, b, true), RuntimeError);
  // sub on bool is not supported (torch's sub_check).
  CHECK_THROWS_AS(sub(t, t), RuntimeError);
}

TEST_CASE("where", "[elementwise]") {
  Tensor c = make({1, 0, 1, 0, 0, 1}, {2, 3}, DType::Bool);
  Tensor a = make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32);
  Tensor b = make({-1, -2, -3}, {3}, DType::Int64);
  Tensor w = where(c, a, b);
  CHECK(w.dtype() == DType::Float32);
  CHECK(values(w) == D{1, -2, 3, -1, -2, 6});
  CHECK(values(where(c, a, Scalar(0))) == D{1, 0, 3, 0, 0, 6});
  CHECK(values(where(c, Scalar(9), b)) == D{9, -2, 9, -1, -2, 9});
  CHECK(where(c, Scalar(9), b).dtype() == DType::Int64);
  Tensor ws = where(c, Scalar(1.5), Scalar(2));
  CHECK(ws.dtype() == DType::Float32);
  CHECK(values(ws) == D{1.5, 2, 1.5, 2, 2, 1.5});
  // Non-contiguous condition and values, every dtype.
  for (DType dt : kAllDTypes) {
    Tensor x = make(sample(dt, 65 * 45, 1), {65, 45}, dt).t();
    Tensor y = make(sample(dt, 45 * 65, 2), {45, 65}, dt);
    Tensor m = make(sample(DType::Bool, 45 * 130, 3), {45, 130},
                    DType::Bool).slice(1, 0, 130, 2);
    Tensor r = where(m, x, y);
    CHECK(r.dtype() == dt);
    D ref;
    for (int64_t k = 0; k < r.numel(); ++k)
      ref.push_back(get(m, k) != 0 ? get(x, k) : get(y, k));
    check_values(r, ref, dt, "where");
  }
  CHECK_THROWS_AS(where(a, a, a), TypeError);
  CHECK_THROWS_AS(where(c, a, Tensor::empty({2}, DType::Float32)),
                  RuntimeError);
}

TEST_CASE("clamp", "[elementwise]") {
  for (DType dt : {DType::UInt8, DType::Int8, DType::Int32, DType::Int64,
                   DType::Float16, DType::BFloat16, DType::Float32,
                   DType::Float64}) {
    INFO(dtype_name(dt));
    Tensor x = make(sample(dt, 45 * 65, 9, false, 0, 8), {45, 65}, dt);
    Tensor xt = x.t();
    D ref, refmin, refmax;
    for (double v : values(xt)) {
      ref.push_back(std::min(std::max(v, 2.0), 5.0));
      refmin.push_back(std::max(v, 2.0));
      refmax.push_back(std::min(v, 5.0));
    }
    check_values(clamp(xt, Scalar(2), Scalar(5)), ref, dt, "clamp");
    Scalar lo(2), hi(5);
    check_values(clamp(xt, &lo, nullptr), refmin, dt, "clamp min");
    check_values(clamp(xt, nullptr, &hi), refmax, dt, "clamp max");
    check_values(clamp_min(xt, lo), refmin, dt, "clamp_min");
    check_values(clamp_max(xt, hi), refmax, dt, "clamp_max");
    Tensor y = xt.clone();
    clamp_(y, &lo, &hi);
    check_values(y, ref, dt, "clamp_");
    Tensor tl = scalar_tensor(2, dt), th = make({5}, {1}, dt);
    check_values(clamp(xt, tl, th), ref, dt, "clamp tensors");
    Tensor z = xt.clone();
    clamp_(z, tl, th);
    check_values(z, ref, dt, "clamp_ tensors");
  }
  // min > max: everything becomes max.
  Tensor x = make({1, 5, 9}, {3}, DType::Float32);
  CHECK(values(clamp(x, Scalar(6), Scalar(2))) == D{2, 2, 2});
  // A float bound promotes an integer tensor.
  Tensor i = make({1, 5, 9}, {3}, DType::Int32);
  Tensor r = clamp(i, Scalar(2.5), Scalar(7));
  CHECK(r.dtype() == DType::Float32);
  CHECK(values(r) == D{2.5, 5, 7});
  // Elementwise tensor bounds with broadcasting.
  Tensor lo = make({0, 6, 0}, {3}, DType::Int32);
  Tensor hi = make({10}, {1}, DType::Int32);
  CHECK(values(clamp(i, lo, hi)) == D{1, 6, 9});
  CHECK_THROWS_AS(clamp(i, nullptr, nullptr), RuntimeError);
  // bool input: only a bool result is unsupported (int bounds promote).
  CHECK(clamp(make({1}, {1}, DType::Bool), Scalar(0), Scalar(1)).dtype() ==
        DType::Int64);
  CHECK_THROWS_AS(
      clamp(make({1}, {1}, DType::Bool), Scalar(false), Scalar(true)),
      NotImplementedError);
}

TEST_CASE("lerp, addcmul, addcdiv", "[elementwise]") {
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32,
                   DType::Float64}) {
    INFO(dtype_name(dt));
    Tensor a = make(sample(dt, 45 * 65, 1), {45, 65}, dt);
    Tensor b = make(sample(dt, 65 * 45, 2), {65, 45}, dt).t();
    Tensor w = make(sample(dt, 65, 3, false, 0, 1), {65}, dt);
    Tensor c = make(sample(dt, 45, 4, true), {45, 1}, dt);
    D rl, rls, rm, rd;
    for (int64_t k = 0; k < a.numel(); ++k) {
      double x = get(a, k), y = get(b, k), wk = get(w, k % 65),
             ck = get(c, k / 65);
      rl.push_back(x + wk * (y - x));
      rls.push_back(x + round_to(dt, 0.75) * (y - x));
      rm.push_back(x + 0.5 * y * ck);
      rd.push_back(x + 0.5 * y / ck);
    }
    check_values(lerp(a, b, w), rl, dt, "lerp");
    check_values(lerp(a, b, Scalar(0.75)), rls, dt, "lerp scalar");
    Tensor l = a.clone();
    lerp_(l, b, Scalar(0.75));
    check_values(l, rls, dt, "lerp_");
    check_values(addcmul(a, b, c, 0.5), rm, dt, "addcmul");
    check_values(addcdiv(a, b, c, 0.5), rd, dt, "addcdiv");
    Tensor m = a.clone();
    addcmul_(m, b, c, 0.5);
    check_values(m, rm, dt, "addcmul_");
    Tensor d = a.clone();
    addcdiv_(d, b, c, 0.5);
    check_values(d, rd, dt, "addcdiv_");
  }
  Tensor i = make({1, 2, 3}, {3}, DType::Int64);
  CHECK(values(addcmul(i, i, i, 2)) == D{3, 10, 21});
  // torch checks no value: 0.5 truncates to 0 for integers.
  CHECK(values(addcmul(i, i, i, 0.5)) == D{1, 2, 3});
  CHECK_THROWS_AS(addcdiv(i, i, i), RuntimeError);
  CHECK_THROWS_AS(lerp(i, i, Scalar(0.5)), NotImplementedError);
  // lerp's two-sided form is exact at weight 1.
  Tensor s = make({1e8}, {1}, DType::Float32), e = make({1}, {1},
                                                        DType::Float32);
  CHECK(get(lerp(s, e, Scalar(1.0)), 0) == 1);
}

TEST_CASE("masked_fill", "[elementwise]") {
  Tensor a = make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Int32);
  Tensor m = make({1, 0, 1}, {3}, DType::Bool);
  Tensor r = masked_fill(a, m, Scalar(-1));
  CHECK(values(r) == D{-1, 2, -1, -1, 5, -1});
  CHECK(values(a) == D{1, 2, 3, 4, 5, 6});
  CHECK(r.dtype() == DType::Int32);
  Tensor f = make({1, 2, 3}, {3}, DType::Float16);
  CHECK(values(masked_fill(f, m, Scalar(0.5))) == D{0.5, 2, 0.5});
  CHECK(values(masked_fill(f, m, scalar_tensor(7, DType::Float64))) ==
        D{7, 2, 7});
  Tensor t = a.t();  // non-contiguous in-place
  masked_fill_(t, make({1, 0}, {2}, DType::Bool), Scalar(0));
  CHECK(values(a) == D{0, 0, 0, 4, 5, 6});
  uint32_t v = a.storage()->version();
  masked_fill_(a, m, Scalar(8));
  CHECK(a.storage()->version() > v);
  CHECK_THROWS_AS(masked_fill(a, make({1, 0, 1}, {3}, DType::Int32),
                              Scalar(0)),
                  TypeError);
  CHECK_THROWS_AS(masked_fill(a, m, make({1, 2}, {2}, DType::Float32)),
                  RuntimeError);
  // Out of place, self broadcasts with a bigger mask (torch); in place it
  // cannot grow.
  Tensor small = make({1, 2}, {2}, DType::Float32);
  Tensor big = masked_fill(small, make({1, 0, 0, 1}, {2, 2}, DType::Bool),
                           Scalar(0));
  CHECK(big.sizes().equals({2, 2}));
  CHECK(values(big) == D{0, 2, 1, 0});
  CHECK(values(small) == D{1, 2});
  Tensor col = make({1, 2}, {2, 1}, DType::Int64);
  CHECK(values(masked_fill(col, make({0, 1, 1}, {3}, DType::Bool),
                           Scalar(9))) == D{1, 9, 9, 2, 9, 9});
  CHECK_THROWS_AS(masked_fill_(small, make({1, 0, 1, 0}, {2, 2}, DType::Bool),
                               Scalar(0)),
                  RuntimeError);
  CHECK_THROWS_AS(masked_fill(small, make({1, 0, 1}, {3}, DType::Bool),
                              Scalar(0)),
                  RuntimeError);
}

// INT_MIN / -1 overflows: x86 idiv traps (SIGFPE) for int32/int64. torch
// wraps the quotient to INT_MIN and gives remainder 0.
TEST_CASE("integer division of the minimum by -1 wraps instead of trapping",
          "[elementwise]") {
  for (DType dt : {DType::Int8, DType::Int16, DType::Int32, DType::Int64}) {
    const double lo = dt == DType::Int64   ? -9223372036854775808.0
                      : dt == DType::Int32 ? -2147483648.0
                      : dt == DType::Int16 ? -32768.0
                                           : -128.0;
    Tensor a = make({lo, 7, -7}, {3}, dt);
    Tensor m1 = make({-1, -1, -1}, {3}, dt);
    CHECK(values(floor_divide(a, m1)) == D{lo, -7, 7});
    CHECK(values(div(a, m1, "trunc")) == D{lo, -7, 7});
    CHECK(values(div(a, m1, "floor")) == D{lo, -7, 7});
    CHECK(values(remainder(a, m1)) == D{0, 0, 0});
    CHECK(values(fmod(a, m1)) == D{0, 0, 0});
    CHECK(values(floor_divide(a, Scalar(-1))) == D{lo, -7, 7});
    CHECK(values(remainder(a, Scalar(-1))) == D{0, 0, 0});
    Tensor b = a.clone();
    floor_divide_(b, Scalar(-1));
    CHECK(values(b) == D{lo, -7, 7});
  }
}

TEST_CASE("in-place lerp_ with a tensor weight, clamp_min_, clamp_max_",
          "[elementwise]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    INFO(dtype_name(dt));
    Tensor a = make(sample(dt, 45 * 65, 5), {45, 65}, dt);
    Tensor b = make(sample(dt, 65 * 45, 6), {65, 45}, dt).t();
    Tensor w = make(sample(dt, 45, 7, false, 0, 1), {45, 1}, dt);
    D rl, rlo, rhi;
    for (int64_t k = 0; k < a.numel(); ++k) {
      double x = get(a, k), y = get(b, k), wk = get(w, k / 65);
      rl.push_back(x + wk * (y - x));
      rlo.push_back(std::max(x, 0.25));
      rhi.push_back(std::min(x, -0.25));
    }
    Tensor l = a.clone();
    Tensor& r = lerp_(l, b, w);
    CHECK(r.is_same(l));
    check_values(l, rl, dt, "lerp_ tensor weight");
    Tensor lo = a.clone(), hi = a.clone();
    clamp_min_(lo, Scalar(0.25));
    clamp_max_(hi, Scalar(-0.25));
    check_values(lo, rlo, dt, "clamp_min_");
    check_values(hi, rhi, dt, "clamp_max_");
  }
  // The weight may not broadcast the destination.
  Tensor s = make({1, 2}, {2}, DType::Float32);
  Tensor w2 = make({0.5, 0.5, 0.5, 0.5}, {2, 2}, DType::Float32);
  CHECK_THROWS_AS(lerp_(s, s, w2), RuntimeError);
}

TEST_CASE("sub rejects bool operands like torch", "[elementwise]") {
  Tensor b = make({1, 0}, {2}, DType::Bool);
  Tensor f = make({1, 2}, {2}, DType::Float32);
  CHECK_THROWS_AS(sub(b, b), RuntimeError);
  CHECK_THROWS_AS(sub(f, b), RuntimeError);
  CHECK_THROWS_AS(sub(b, f), RuntimeError);
  CHECK_THROWS_AS(sub(f, Scalar(true)), RuntimeError);
  CHECK_THROWS_AS(sub(Scalar(true), f), RuntimeError);
  CHECK_THROWS_AS(sub_(f, b), RuntimeError);
  Tensor o = Tensor::empty({2}, DType::Float32);
  CHECK_THROWS_AS(sub_out(o, f, b), RuntimeError);
  try {
    sub(b, b);
  } catch (const RuntimeError& e) {
    CHECK(std::string(e.what()).find("logical_not") != std::string::npos);
  }
  // add keeps accepting bools.
  CHECK(values(add(b, b)) == D{1, 0});
  CHECK(values(sub(f, f)) == D{0, 0});
}

TEST_CASE("clamp propagates NaN from the input and from either bound",
          "[elementwise]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32,
                   DType::Float64}) {
    INFO(dtype_name(dt));
    Tensor x = make({nan, INFINITY, 0.5, -3, 2}, {5}, dt);
    Tensor lo = make({0, nan, nan, -1, 0}, {5}, dt);
    Tensor hi = make({1, 1, 1, nan, 1}, {5}, dt);
    D both = values(clamp(x, lo, hi));
    CHECK(std::isnan(both[0]));
    CHECK(std::isnan(both[1]));
    CHECK(std::isnan(both[2]));
    CHECK(std::isnan(both[3]));
    CHECK(both[4] == 1);
    D mn = values(clamp(x, lo, Tensor()));
    CHECK(std::isnan(mn[1]));
    CHECK(mn[3] == -1);
    D mx = values(clamp(x, Tensor(), hi));
    CHECK(std::isnan(mx[3]));
    CHECK(mx[2] == 0.5);
    Scalar snan(nan);
    for (double v : values(clamp(x, &snan, nullptr))) CHECK(std::isnan(v));
    for (double v : values(clamp(x, nullptr, &snan))) CHECK(std::isnan(v));
    Tensor y = x.clone();
    clamp_(y, lo, hi);
    CHECK(std::isnan(values(y)[1]));
  }
}

TEST_CASE("square of bool gives int64 like torch", "[elementwise]") {
  Tensor b = make({1, 0, 1}, {3}, DType::Bool);
  Tensor r = square(b);
  CHECK(r.dtype() == DType::Int64);
  CHECK(values(r) == D{1, 0, 1});
  CHECK(values(square(b.slice(0, 0, 3, 2))) == D{1, 1});
}

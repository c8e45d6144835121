// Bindings of csrc/ops/factory.h: empty/zeros/ones/full(+_like), arange,
// linspace, eye, rand/randn/randint/randperm, the in-place samplers and
// Tensor.new_* helpers. Sizes come as varargs or one sequence, like torch.
#include <cstring>

#include "binder.h"

#include "csrc/ops/factory.h"
#include "csrc/ops/out.h"

namespace fastt {
namespace py {

static std::optional<DType> opt_dtype(PyObject* o) {
  if (!given(o)) return std::nullopt;
  return to_dtype(o, DType::Float32);
}

// Keyword-only options shared by the factories.
struct FactoryKw {
  PyObject* dtype = nullptr;
  PyObject* device = nullptr;
  PyObject* generator = nullptr;
  Generator* gen = nullptr;  // generator= read (null: the default one)
  PyObject* requires_grad = nullptr;
  PyObject* pin_memory = nullptr;
};
Tensor pinned_copy(const Tensor& t);  // cuda.cpp
// Wraps a factory's result, honouring pin_memory= and requires_grad=.
static PyObject* finish(const FactoryKw& kw, Tensor r) {
  if (given(kw.pin_memory) && PyObject_IsTrue(kw.pin_memory))
    r = pinned_copy(r);
  if (given(kw.requires_grad) && PyObject_IsTrue(kw.requires_grad))
    fastt::requires_grad_(r, true);
  return wrap(std::move(r));
}
// A factory's dtype: dtype= when given, else out='s (torch: arange(5,
// out=int32_tensor) counts in int32), else the factory's default.
static std::optional<DType> factory_dtype(const FactoryKw& kw, PyObject* out) {
  if (given(kw.dtype)) return opt_dtype(kw.dtype);
  if (given(out)) return to_tensor(out, "out").dtype();
  return std::nullopt;
}
// Writes a factory's result into out= with every check of assign_out (an
// empty out takes the result's shape; fastt refuses another non-empty
// shape, where torch resizes with a warning, as its _out ops do).
static PyObject* into_out(PyObject* out, const Tensor& r, const char* op) {
  fastt::assign_out(unwrap_mut(out), r, op);
  Py_INCREF(out);
  return out;
}
// Either of the two above.
static PyObject* finish(const FactoryKw& kw, PyObject* out, Tensor r,
                        const char* op) {
  if (given(out)) return into_out(out, r, op);
  return finish(kw, std::move(r));
}

// Parses keyword args of a factory whose positionals are handled by the
// caller. `extra` names additional keywords stored in extra_out.
static void parse_factory_kw(const char* fname, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames,
                             FactoryKw* kw, const char* const* extra = nullptr,
                             PyObject** extra_out = nullptr) {
  if (!kwnames) return;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    PyObject* v = args[nargs + k];
    if (PyUnicode_CompareWithASCIIString(key, "dtype") == 0) kw->dtype = v;
    else if (PyUnicode_CompareWithASCIIString(key, "device") == 0)
      kw->device = v;
    else if (PyUnicode_CompareWithASCIIString(key, "generator") == 0)
      kw->generator = v;
    else if (PyUnicode_CompareWithASCIIString(key, "requires_grad") == 0)
      kw->requires_grad = v;
    else if (PyUnicode_CompareWithASCIIString(key, "pin_memory") == 0)
      kw->pin_memory = v;
    else if (PyUnicode_CompareWithASCIIString(key, "layout") == 0 ||
             PyUnicode_CompareWithASCIIString(key, "memory_format") == 0) {
      // Accepted for torch compatibility; no effect yet.
    } else {
      bool found = false;
      for (int i = 0; extra && extra[i]; ++i) {
        if (PyUnicode_CompareWithASCIIString(key, extra[i]) == 0) {
          extra_out[i] = v;
          found = true;
        }
      }
      if (!found) {
        PyErr_Format(PyExc_TypeError,
                     "%s() got an unexpected keyword argument '%U'", fname,
                     key);
        throw_py();
      }
    }
  }
  if (given(kw->generator)) {
    // Only the random factories take one (torch's signatures).
    static const char* const random[] = {
        "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
        "randint_like", "bernoulli", nullptr};
    bool ok = false;
    for (int i = 0; random[i] && !ok; ++i) ok = std::strcmp(fname, random[i]) == 0;
    if (!ok)
      throw TypeError(fmt::format(
          "{}() got an unexpected keyword argument 'generator'", fname));
  }
  kw->gen = generator_arg(kw->generator, fname);
}

static void sizes_from(const char* fname, PyObject* const* args,
                       Py_ssize_t nargs, const char* const* extra,
                       PyObject** extra_out, PyObject* kwnames,
                       SmallInts* sizes) {
  if (nargs == 0 && extra_out) {
    // size=... given as a keyword
    for (int i = 0; extra && extra[i]; ++i)
      if (std::string(extra[i]) == "size" && extra_out[i]) {
        parse_ints(extra_out[i], sizes, fname);
        return;
      }
  }
  parse_varargs_ints(args, nargs, sizes, fname);
}

#define FASTT_BIND_SIZED(name)                                              \
  static PyObject* f_##name(PyObject*, PyObject* const* args,              \
                            Py_ssize_t nargs, PyObject* kwnames) {         \
    FASTT_PY_BEGIN                                                          \
    if (FASTT_LIKELY(nargs == 1 && !kwnames && PyLong_CheckExact(args[0]))) \
      return wrap(fastt::name({to_int(args[0], #name)}));                   \
    FactoryKw kw;                                                           \
    static const char* const extra[] = {"size", "out", nullptr};            \
    PyObject* ex[2] = {nullptr, nullptr};                                   \
    parse_factory_kw(#name, args, nargs, kwnames, &kw, extra, ex);          \
    SmallInts sizes;                                                        \
    sizes_from(#name, args, nargs, extra, ex, kwnames, &sizes);             \
    return finish(kw, ex[1],                                                \
                  fastt::name(sizes.list(), factory_dtype(kw, ex[1]),       \
                              to_device(kw.device, kCPU)),                  \
                  #name);                                                   \
    FASTT_PY_END                                                            \
  }
FASTT_BIND_SIZED(empty)
FASTT_BIND_SIZED(zeros)
FASTT_BIND_SIZED(ones)
#define FASTT_BIND_SIZED_RANDOM(name)                                       \
  static PyObject* f_##name(PyObject*, PyObject* const* args,              \
                            Py_ssize_t nargs, PyObject* kwnames) {         \
    FASTT_PY_BEGIN                                                          \
    if (FASTT_LIKELY(nargs == 1 && !kwnames && PyLong_CheckExact(args[0]))) \
      return wrap(fastt::name({to_int(args[0], #name)}));                   \
    FactoryKw kw;                                                           \
    static const char* const extra[] = {"size", "out", nullptr};            \
    PyObject* ex[2] = {nullptr, nullptr};                                   \
    parse_factory_kw(#name, args, nargs, kwnames, &kw, extra, ex);          \
    SmallInts sizes;                                                        \
    sizes_from(#name, args, nargs, extra, ex, kwnames, &sizes);             \
    return finish(kw, ex[1],                                                \
                  fastt::name(sizes.list(), factory_dtype(kw, ex[1]),       \
                              to_device(kw.device, kCPU), kw.gen),          \
                  #name);                                                   \
    FASTT_PY_END                                                            \
  }
FASTT_BIND_SIZED_RANDOM(rand)
FASTT_BIND_SIZED_RANDOM(randn)

static PyObject* f_full(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"size", "fill_value", nullptr};
  PyObject* ex[2] = {nargs > 0 ? args[0] : nullptr,
                     nargs > 1 ? args[1] : nullptr};
  if (nargs > 2) throw TypeError("full() takes 2 positional arguments");
  parse_factory_kw("full", args, nargs, kwnames, &kw, extra, ex);
  if (!ex[0] || !ex[1])
    throw TypeError("full() missing required argument 'size' or 'fill_value'");
  SmallInts sizes;
  parse_ints(ex[0], &sizes, "full");
  return finish(kw, fastt::full(sizes.list(), to_scalar(ex[1], "fill_value"),
                          opt_dtype(kw.dtype), to_device(kw.device, kCPU)));
  FASTT_PY_END
}

static std::optional<Device> opt_device(PyObject* o) {
  if (!given(o)) return std::nullopt;
  return to_device(o, kCPU);
}

#define FASTT_BIND_LIKE(name)                                               \
  static PyObject* f_##name(PyObject*, PyObject* const* args,              \
                            Py_ssize_t nargs, PyObject* kwnames) {         \
    FASTT_PY_BEGIN                                                          \
    FactoryKw kw;                                                           \
    static const char* const extra[] = {"input", nullptr};                  \
    PyObject* ex[1] = {nargs > 0 ? args[0] : nullptr};                      \
    if (nargs > 1) throw TypeError(#name "() takes 1 positional argument"); \
    parse_factory_kw(#name, args, nargs, kwnames, &kw, extra, ex);          \
    if (!ex[0]) throw TypeError(#name "() missing required argument 'input'"); \
    return finish(kw, fastt::name(to_tensor(ex[0], "input"), opt_dtype(kw.dtype), \
                            opt_device(kw.device)));                        \
    FASTT_PY_END                                                            \
  }
FASTT_BIND_LIKE(empty_like)
FASTT_BIND_LIKE(zeros_like)
FASTT_BIND_LIKE(ones_like)
#define FASTT_BIND_LIKE_RANDOM(name)                                        \
  static PyObject* f_##name(PyObject*, PyObject* const* args,              \
                            Py_ssize_t nargs, PyObject* kwnames) {         \
    FASTT_PY_BEGIN                                                          \
    FactoryKw kw;                                                           \
    static const char* const extra[] = {"input", nullptr};                  \
    PyObject* ex[1] = {nargs > 0 ? args[0] : nullptr};                      \
    if (nargs > 1) throw TypeError(#name "() takes 1 positional argument"); \
    parse_factory_kw(#name, args, nargs, kwnames, &kw, extra, ex);          \
    if (!ex[0]) throw TypeError(#name "() missing required argument 'input'"); \
    return finish(kw, fastt::name(to_tensor(ex[0], "input"),                \
                                  opt_dtype(kw.dtype), opt_device(kw.device), \
                                  kw.gen));                                 \
    FASTT_PY_END                                                            \
  }
FASTT_BIND_LIKE_RANDOM(rand_like)
FASTT_BIND_LIKE_RANDOM(randn_like)

static PyObject* f_full_like(PyObject*, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"input", "fill_value", nullptr};
  PyObject* ex[2] = {nargs > 0 ? args[0] : nullptr,
                     nargs > 1 ? args[1] : nullptr};
  parse_factory_kw("full_like", args, nargs, kwnames, &kw, extra, ex);
  if (!ex[0] || !ex[1])
    throw TypeError("full_like() missing required argument");
  return finish(kw, fastt::full_like(to_tensor(ex[0], "input"),
                               to_scalar(ex[1], "fill_value"),
                               opt_dtype(kw.dtype), opt_device(kw.device)));
  FASTT_PY_END
}

static PyObject* f_arange(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"start", "end", "step", "out", nullptr};
  PyObject* ex[4] = {nullptr, nullptr, nullptr, nullptr};
  if (nargs > 3) throw TypeError("arange() takes at most 3 positional arguments");
  parse_factory_kw("arange", args, nargs, kwnames, &kw, extra, ex);
  PyObject* out = ex[3];
  auto dtype = factory_dtype(kw, out);
  Device dev = to_device(kw.device, kCPU);
  PyObject* start = ex[0];
  PyObject* end = ex[1];
  PyObject* step = ex[2];
  if (nargs == 1) {  // arange(end), or arange(start, end=...)
    if (ex[1]) start = args[0];
    else end = args[0];
  }
  if (nargs >= 2) {
    start = args[0];
    end = args[1];
  }
  if (nargs == 3) step = args[2];
  if (!end) throw TypeError("arange() missing required argument 'end'");
  Scalar s0 = start ? to_scalar(start, "start") : Scalar(0);
  Scalar s1 = to_scalar(end, "end");
  Scalar st = step ? to_scalar(step, "step") : Scalar(1);
  // a fractional step that int64 truncates to 0: torch's ValueError,
  // before the range's own checks (other integer dtypes step by the cast
  // step: arange(0, 5, 0.5, dtype=int32) is ten zeros)
  if (dtype == DType::Int64 && st.is_floating() &&
      st.to_double() != 0.0 && static_cast<int64_t>(st.to_double()) == 0)
    throw ValueError("step must be nonzero");
  return finish(kw, out, fastt::arange(s0, s1, st, dtype, dev), "arange");
  FASTT_PY_END
}

static PyObject* f_linspace(PyObject*, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"start", "end", "steps", "out",
                                      nullptr};
  PyObject* ex[4] = {nargs > 0 ? args[0] : nullptr,
                     nargs > 1 ? args[1] : nullptr,
                     nargs > 2 ? args[2] : nullptr, nullptr};
  parse_factory_kw("linspace", args, nargs, kwnames, &kw, extra, ex);
  if (!ex[0] || !ex[1] || !ex[2])
    throw TypeError("linspace() missing required argument");
  // start and end: numbers or 0-d tensors (torch's Tensor overloads)
  const bool t0 = is_tensor(ex[0]), t1 = is_tensor(ex[1]);
  if ((t0 && unwrap(ex[0]).dim() != 0) || (t1 && unwrap(ex[1]).dim() != 0))
    throw RuntimeError(fmt::format(
        "linspace only supports 0-dimensional start and end tensors, but "
        "got start with {} dimension(s) and end with {} dimension(s).",
        t0 ? unwrap(ex[0]).dim() : 0, t1 ? unwrap(ex[1]).dim() : 0));
  const Scalar s0 = t0 ? unwrap(ex[0]).item() : to_scalar(ex[0], "start");
  const Scalar s1 = t1 ? unwrap(ex[1]).item() : to_scalar(ex[1], "end");
  return finish(kw, ex[3],
                fastt::linspace(s0, s1, to_int(ex[2], "steps"),
                                factory_dtype(kw, ex[3]),
                                to_device(kw.device, kCPU)),
                "linspace");
  FASTT_PY_END
}

static PyObject* f_eye(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"n", "m", nullptr};
  PyObject* ex[2] = {nargs > 0 ? args[0] : nullptr,
                     nargs > 1 ? args[1] : nullptr};
  parse_factory_kw("eye", args, nargs, kwnames, &kw, extra, ex);
  if (!ex[0]) throw TypeError("eye() missing required argument 'n'");
  int64_t n = to_int(ex[0], "n");
  if (!given(ex[1]))
    return finish(kw, fastt::eye(n, opt_dtype(kw.dtype), to_device(kw.device, kCPU)));
  return finish(kw, fastt::eye(n, to_int(ex[1], "m"), opt_dtype(kw.dtype),
                         to_device(kw.device, kCPU)));
  FASTT_PY_END
}

// randint(high, size) / randint(low, high, size)
static PyObject* f_randint(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"low", "high", "size", nullptr};
  PyObject* ex[3] = {nullptr, nullptr, nullptr};
  parse_factory_kw("randint", args, nargs, kwnames, &kw, extra, ex);
  if (nargs == 2) {
    ex[1] = args[0];
    ex[2] = args[1];
  } else if (nargs == 3) {
    ex[0] = args[0];
    ex[1] = args[1];
    ex[2] = args[2];
  } else if (nargs == 1) {
    ex[1] = args[0];
  }
  if (!ex[1] || !ex[2])
    throw TypeError("randint() missing required argument 'high' or 'size'");
  SmallInts sizes;
  parse_ints(ex[2], &sizes, "randint");
  auto dtype = opt_dtype(kw.dtype);
  Device dev = to_device(kw.device, kCPU);
  int64_t high = to_int(ex[1], "high");
  if (!ex[0])
    return finish(kw, fastt::randint(high, sizes.list(), dtype, dev, kw.gen));
  return finish(kw, fastt::randint(to_int(ex[0], "low"), high, sizes.list(),
                                   dtype, dev, kw.gen));
  FASTT_PY_END
}

// randint_like(input, high) / randint_like(input, low, high)
static PyObject* f_randint_like(PyObject*, PyObject* const* args,
                                Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"input", "low", "high", nullptr};
  PyObject* ex[3] = {nullptr, nullptr, nullptr};
  parse_factory_kw("randint_like", args, nargs, kwnames, &kw, extra, ex);
  if (nargs == 2) {
    ex[0] = args[0];
    ex[2] = args[1];
  } else if (nargs == 3) {
    ex[0] = args[0];
    ex[1] = args[1];
    ex[2] = args[2];
  } else if (nargs == 1) {
    ex[0] = args[0];
  }
  if (!ex[0] || !ex[2])
    throw TypeError("randint_like() missing required argument 'input' or "
                    "'high'");
  const Tensor& t = to_tensor(ex[0], "input");
  auto dtype = opt_dtype(kw.dtype);
  auto dev = opt_device(kw.device);
  int64_t high = to_int(ex[2], "high");
  if (!ex[1]) return wrap(fastt::randint_like(t, high, dtype, dev, kw.gen));
  return finish(kw, fastt::randint_like(t, to_int(ex[1], "low"), high, dtype,
                                        dev, kw.gen));
  FASTT_PY_END
}

static PyObject* f_randperm(PyObject*, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"n", nullptr};
  PyObject* ex[1] = {nargs > 0 ? args[0] : nullptr};
  parse_factory_kw("randperm", args, nargs, kwnames, &kw, extra, ex);
  if (!ex[0]) throw TypeError("randperm() missing required argument 'n'");
  return finish(kw, fastt::randperm(to_int(ex[0], "n"), opt_dtype(kw.dtype),
                                    to_device(kw.device, kCPU), kw.gen));
  FASTT_PY_END
}

// bernoulli(input, p=None, *, generator=None, out=None): draws with
// input's probabilities, or with probability p for each of input's
// elements.
static PyObject* f_bernoulli(PyObject*, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  FactoryKw kw;
  static const char* const extra[] = {"input", "p", "out", nullptr};
  PyObject* ex[3] = {nargs > 0 ? args[0] : nullptr,
                     nargs > 1 ? args[1] : nullptr, nullptr};
  if (nargs > 2) throw TypeError("bernoulli() takes at most 2 positional arguments");
  parse_factory_kw("bernoulli", args, nargs, kwnames, &kw, extra, ex);
  if (given(kw.dtype) || given(kw.device) || given(kw.requires_grad) ||
      given(kw.pin_memory))
    throw TypeError("bernoulli() got an unexpected keyword argument");
  if (!ex[0]) throw TypeError("bernoulli() missing required argument 'input'");
  const Tensor& input = to_tensor(ex[0], "input");
  Tensor r;
  if (given(ex[1])) {
    r = fastt::empty_like(input);
    fastt::bernoulli_(r, to_double(ex[1], "p"), kw.gen);
  } else {
    r = fastt::bernoulli(input, kw.gen);
  }
  return finish(kw, ex[2], std::move(r), "bernoulli");
  FASTT_PY_END
}

// ---- Tensor methods ----
FASTT_BIND_METHOD(uniform_, 0, fastt::uniform_(tm, from, to, generator),
                  (DoubleOr<Zero>, from), (DoubleOr<One>, to),
                  (Kw<DefaultGenerator>, generator))
FASTT_BIND_METHOD(normal_, 0, fastt::normal_(tm, mean, std, generator),
                  (DoubleOr<Zero>, mean), (DoubleOr<One>, std),
                  (Kw<DefaultGenerator>, generator))
FASTT_BIND_METHOD(random_, 2, fastt::random_(tm, from, to, generator),
                  (Int, from), (Int, to), (Kw<DefaultGenerator>, generator))
namespace rd {
// bernoulli_'s p: a probability or a tensor of them; 0.5 when not given.
struct Probability {
  static constexpr const char* kStub = "Union[Tensor, _float]";
  static Operand read(PyObject* o, const char* n) {
    if (!given(o)) {
      Operand v;
      v.scalar = fastt::Scalar(0.5);
      return v;
    }
    return TensorOrScalar::read(o, n);
  }
};
}  // namespace rd
FASTT_BIND_METHOD(bernoulli_, 0,
                  p.tensor ? fastt::bernoulli_(tm, *p.tensor, generator)
                           : fastt::bernoulli_(tm, p.scalar.to_double(),
                                               generator),
                  (Probability, p), (Kw<DefaultGenerator>, generator))
FASTT_BIND_METHOD(bernoulli, 0, fastt::bernoulli(t, generator),
                  (Kw<DefaultGenerator>, generator))
FASTT_BIND_METHOD(exponential_, 0, fastt::exponential_(tm, lambd, generator),
                  (DoubleOr<One>, lambd), (Kw<DefaultGenerator>, generator))
FASTT_BIND_METHOD(cauchy_, 0, fastt::cauchy_(tm, median, sigma, generator),
                  (DoubleOr<Zero>, median), (DoubleOr<One>, sigma),
                  (Kw<DefaultGenerator>, generator))
FASTT_BIND_METHOD(log_normal_, 0,
                  fastt::log_normal_(tm, mean ? *mean : 1.0,
                                     std ? *std : 2.0, generator),
                  (OptDouble, mean), (OptDouble, std),
                  (Kw<DefaultGenerator>, generator))
FASTT_BIND_METHOD(geometric_, 1, fastt::geometric_(tm, p, generator),
                  (DoubleOr<Zero>, p), (Kw<DefaultGenerator>, generator))
// out= must be int64 (torch: no casting into another dtype).
static PyObject* long_out(PyObject* out, const char* op) {
  if (given(out) && is_tensor(out) && unwrap(out).dtype() != DType::Int64)
    throw RuntimeError(fmt::format("{} expects Long tensor out, got: {}", op,
                                   dtype_name(unwrap(out).dtype())));
  return out;
}
FASTT_BIND(multinomial, 1,
           with_out(long_out(out, "multinomial"),
                    fastt::multinomial(t, num_samples, replacement,
                                       generator),
                    "multinomial"),
           (Int, num_samples), (BoolOr<false>, replacement),
           (Kw<DefaultGenerator>, generator), (Kw<Out>, out))
FASTT_BIND_FUNCTION(poisson, 1, fastt::poisson(input, generator),
                    (Tensor, input), (Kw<DefaultGenerator>, generator))
// normal(mean, std, size=None): tensor or number parameters; two numbers
// need a size and may take a dtype.
static Tensor normal_of(const rd::Operand& mean, const rd::Operand& std,
                        const IntsValue& size, Generator* g,
                        std::optional<DType> dtype, Device device) {
  if (mean.tensor && std.tensor) return fastt::normal(*mean.tensor, *std.tensor, g);
  if (mean.tensor) return fastt::normal(*mean.tensor, std.scalar.to_double(), g);
  if (std.tensor) return fastt::normal(mean.scalar.to_double(), *std.tensor, g);
  if (!size.given)
    throw TypeError("normal() received an invalid combination of arguments: "
                    "two numbers need a size");
  return fastt::normal(mean.scalar.to_double(), std.scalar.to_double(),
                       size.list(), dtype, device, g);
}
FASTT_BIND_FUNCTION(normal, 2,
                    with_out(out,
                             normal_of(mean, std, size, generator, dtype,
                                       device),
                             "normal"),
                    (TensorOrScalar, mean), (TensorOrScalar, std),
                    (OptInts, size), (Kw<DefaultGenerator>, generator),
                    (Kw<OptDtype>, dtype), (Kw<rd::DeviceOrCpu>, device),
                    (Kw<Out>, out))

// new_zeros(size, *, dtype=None, device=None): self's dtype/device default.
#define FASTT_BIND_NEW(name, expr)                                          \
  static PyObject* m_new_##name(PyObject* self, PyObject* const* args,     \
                                Py_ssize_t nargs, PyObject* kwnames) {     \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = unwrap(self);                                         \
    FactoryKw kw;                                                           \
    static const char* const extra[] = {"size", nullptr};                   \
    PyObject* ex[1] = {nullptr};                                            \
    parse_factory_kw("new_" #name, args, nargs, kwnames, &kw, extra, ex);   \
    SmallInts sizes;                                                        \
    sizes_from("new_" #name, args, nargs, extra, ex, kwnames, &sizes);      \
    DType dtype = to_dtype(kw.dtype, t.dtype());                            \
    Device dev = to_device(kw.device, t.device());                          \
    return finish(kw, expr);                                                      \
    FASTT_PY_END                                                            \
  }
FASTT_BIND_NEW(zeros, fastt::zeros(sizes.list(), dtype, dev))
FASTT_BIND_NEW(ones, fastt::ones(sizes.list(), dtype, dev))
FASTT_BIND_NEW(empty, fastt::empty(sizes.list(), dtype, dev))

static PyObject* m_new_full(PyObject* self, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  FactoryKw kw;
  static const char* const extra[] = {"size", "fill_value", nullptr};
  PyObject* ex[2] = {nargs > 0 ? args[0] : nullptr,
                     nargs > 1 ? args[1] : nullptr};
  parse_factory_kw("new_full", args, nargs, kwnames, &kw, extra, ex);
  if (!ex[0] || !ex[1]) throw TypeError("new_full() missing required argument");
  SmallInts sizes;
  parse_ints(ex[0], &sizes, "new_full");
  return finish(kw, fastt::full(sizes.list(), to_scalar(ex[1], "fill_value"),
                          to_dtype(kw.dtype, t.dtype()),
                          to_device(kw.device, t.device())));
  FASTT_PY_END
}

static PyObject* m_new_tensor(PyObject* self, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  static const Signature sig{"new_tensor",
                             {"data", "$dtype", "$device", "$requires_grad"},
                             1};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  PyObject* dt = given(a[1]) ? a[1] : dtype_object(t.dtype());
  if (!given(a[1])) Py_DECREF(dt);  // borrowed singleton stays alive
  PyObject* dev = given(a[2]) ? a[2] : nullptr;
  Tensor r = tensor_from_data(a[0], dt, dev, true);
  if (!given(a[2]) && r.device() != t.device()) r = r.to(t.device());
  if (given(a[3]) && PyObject_IsTrue(a[3])) fastt::requires_grad_(r, true);
  return wrap(std::move(r));
  FASTT_PY_END
}

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}

// _legacy_new(dtype, device, args, name): fastt.FloatTensor(*args) and the
// other legacy type classes (python/fastt/_legacy_types.py).
static PyObject* f_legacy_new(PyObject*, PyObject* const* a, Py_ssize_t n) {
  FASTT_PY_BEGIN
  if (n != 4 || !PyTuple_Check(a[2]) || !PyUnicode_Check(a[3])) {
    PyErr_SetString(PyExc_TypeError,
                    "_legacy_new(dtype, device, args: tuple, name: str)");
    return nullptr;
  }
  return wrap(legacy_new(to_dtype(a[0], DType::Float32),
                         to_device(a[1], Device(kCPU)), a[2],
                         PyUnicode_AsUTF8(a[3])));
  FASTT_PY_END
}

PyMethodDef g_factory_functions[] = {
    {"_legacy_new", reinterpret_cast<PyCFunction>(
                        reinterpret_cast<void (*)()>(f_legacy_new)),
     METH_FASTCALL, nullptr},
    FASTT_KW("empty", f_empty),         FASTT_KW("zeros", f_zeros),
    FASTT_KW("ones", f_ones),           FASTT_KW("full", f_full),
    FASTT_KW("rand", f_rand),           FASTT_KW("randn", f_randn),
    FASTT_KW("empty_like", f_empty_like), FASTT_KW("zeros_like", f_zeros_like),
    FASTT_KW("ones_like", f_ones_like), FASTT_KW("full_like", f_full_like),
    FASTT_KW("randint_like", f_randint_like),
    FASTT_KW("rand_like", f_rand_like), FASTT_KW("randn_like", f_randn_like),
    FASTT_KW("arange", f_arange),       FASTT_KW("linspace", f_linspace),
    FASTT_KW("eye", f_eye),             FASTT_KW("randint", f_randint),
    FASTT_KW("randperm", f_randperm),   FASTT_KW("bernoulli", f_bernoulli),
    {nullptr, nullptr, 0, nullptr},
};
PyMethodDef g_factory_methods[] = {
    FASTT_KW("new_zeros", m_new_zeros),
    FASTT_KW("new_ones", m_new_ones),     FASTT_KW("new_empty", m_new_empty),
    FASTT_KW("new_full", m_new_full),     FASTT_KW("new_tensor", m_new_tensor),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace py
}  // namespace fastt

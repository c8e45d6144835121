// The table-driven binding: a Tensor method, the fastt.* function that
// forwards to it, or a function alone, declared as one row naming the op,
// its required-argument count, the core call, and each argument's typed
// reader with torch's keyword name:
//
//   FASTT_BIND(index_select, 2, fastt::index_select(t, dim, index),
//              (Int, dim), (Tensor, index))
//
// expands to m_index_select (the method: `t` is self as a tensor, `tm` the
// same, mutable, for in-place forms) and f_index_select (fastt.f(input,
// ...), or f(input=..., ...)); FASTT_BIND_METHOD gives the method alone and
// FASTT_BIND_FUNCTION a function without self. Each generated function is
// METH_FASTCALL code: positional arguments go straight to their slots
// (nargs within range, no keywords), anything else through parse_args
// (torch's keyword names, its TypeErrors for a missing, repeated or
// unexpected argument); then every reader converts its slot (a TypeError
// naming the op's argument when the value does not fit), the call runs,
// and its result converts by type (to_py below). A reader wrapped in
// Kw<...> is keyword-only, as torch's arguments after `*`. Each row also
// registers itself (BindRow): module init adds it to Tensor / fastt._C, and
// scripts/gen_stubs.py writes its stub line from what it reports.
#pragma once
#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common.h"
#include "csrc/generator.h"

namespace fastt {
namespace py {

// ---- results: the call's value as a Python object ----
// A tensor, or None for an undefined one (an absent optional output).
inline PyObject* wrap_or_none(Tensor&& t) {
  if (!t.defined()) Py_RETURN_NONE;
  return wrap(std::move(t));
}
// A tuple of n new references (stolen; a null one fails the whole).
PyObject* pack(PyObject** items, Py_ssize_t n);
template <class... Ts>
PyObject* tuple_of(Ts&&... ts) {
  PyObject* items[] = {wrap_or_none(std::move(ts))...};
  return pack(items, Py_ssize_t(sizeof...(Ts)));
}
PyObject* tuple_of(std::vector<Tensor>&& v);
// torch.return_types-like (values, indices) named tuple.
PyObject* values_indices(Tensor&& values, Tensor&& indices);

// A result to be written into out= when given (with_out below).
struct OutResult {
  PyObject* out;
  Tensor r;
  const char* name;
};
inline OutResult with_out(PyObject* out, Tensor&& r, const char* name) {
  return {out, std::move(r), name};
}
// Before computing into out=: out may not meet an input's memory (torch's
// assert_no_overlap, for ops that cannot run in place).
inline void check_no_overlap(PyObject* out,
                             std::initializer_list<const Tensor*> in,
                             const char* name) {
  if (!given(out) || !is_tensor(out)) return;
  for (const Tensor* t : in) fastt::check_no_overlap(unwrap(out), *t, name);
}
inline void check_no_overlap(PyObject* out, const std::vector<Tensor>& in,
                             const char* name) {
  if (!given(out) || !is_tensor(out)) return;
  for (const Tensor& t : in) fastt::check_no_overlap(unwrap(out), t, name);
}

inline PyObject* to_py(PyObject*, Tensor&& r) { return wrap(std::move(r)); }
// An in-place form returns self (the core returns the same tensor).
inline PyObject* to_py(PyObject* self, Tensor&) { return return_self(self); }
inline PyObject* to_py(PyObject*, std::vector<Tensor>&& v) {
  return tuple_of(std::move(v));
}
// A (values, indices) result (sort, topk), converted by to_py.
struct ValuesIndices {
  Tensor values, indices;
};
inline ValuesIndices values_indices(std::tuple<Tensor, Tensor>&& p) {
  return {std::move(std::get<0>(p)), std::move(std::get<1>(p))};
}
inline PyObject* to_py(PyObject*, ValuesIndices&& r) {
  return values_indices(std::move(r.values), std::move(r.indices));
}
// A tuple of tensors: a plain tuple, None for an undefined tensor.
template <class... Ts>
PyObject* to_py(PyObject*, std::tuple<Ts...>&& p) {
  return std::apply([](auto&... t) { return tuple_of(std::move(t)...); }, p);
}
inline PyObject* to_py(PyObject*, OutResult&& o) {
  if (given(o.out)) return store_out(o.out, o.r, o.name);
  return wrap(std::move(o.r));
}
inline PyObject* to_py(PyObject*, PyObject* o) { return o; }  // hand-made
// The result of a call made for its effect: `(f(...), NoneResult{})`.
struct NoneResult {};
inline PyObject* to_py(PyObject*, NoneResult&&) { Py_RETURN_NONE; }

// A function row's call takes this in place of self.
struct NoSelf {};

// ---- the rows' registry: module init adds every row's method or function
// (no table entry to write), and fastt._C._bind_rows() gives the stub
// generator (scripts/gen_stubs.py) each row's arguments and result ----
enum class BindKind {
  Method,         // Tensor.name(self, ...)
  InputFunction,  // fastt.name(input, ...), forwarding to the method
  Function,       // fastt.name(...), no self
};
struct BindRow {
  PyMethodDef def;
  BindKind kind;
  const Signature* sig;
  const char* const* stubs;  // each argument's stub type
  const bool* required;      // each argument's having no default
  std::string result;        // the result's stub type
  BindRow(const char* name, BindKind kind, MethodFn fn, const Signature* sig,
          const char* const* stubs, const bool* required, std::string result);
};
// Adds every row's method to Tensor and function to the module m, and
// fastt._C._bind_rows(); false with a Python error set when a name is
// bound twice.
bool add_bind_rows(PyObject* m);

// The stub type of a row's result, from the C++ type of its call.
template <class R, class = void>
struct StubOf;
template <>
struct StubOf<Tensor> {  // Tensor, or Tensor& (in-place: self)
  static std::string get() { return "Tensor"; }
};
template <>
struct StubOf<OutResult> {
  static std::string get() { return "Tensor"; }
};
template <>
struct StubOf<ValuesIndices> {
  static std::string get() { return "_ValuesIndices"; }
};
template <>
struct StubOf<std::vector<Tensor>> {
  static std::string get() { return "Tuple[Tensor, ...]"; }
};
template <class... Ts>
struct StubOf<std::tuple<Ts...>> {
  static std::string get() {
    std::string s = "Tuple[";
    ((s += StubOf<Ts>::get() + ", "), ...);
    s.resize(s.size() - 2);
    return s + "]";
  }
};
template <>
struct StubOf<NoneResult> {
  static std::string get() { return "None"; }
};
template <>
struct StubOf<PyObject*> {  // made by hand: the stub cannot tell
  static std::string get() { return "Any"; }
};
template <class R, class... A>
std::string stub_result(R (*)(A...)) {
  return StubOf<std::decay_t<R>>::get();
}
// A function row has no self to return: its call must not be in-place.
template <class R, class... A>
constexpr bool returns_reference(R (*)(A...)) {
  return std::is_reference<R>::value;
}

// ---- argument readers: Reader::read(slot or NULL, keyword name) ----
namespace rd {

[[noreturn]] void missing(const char* fname, const char* name);

struct Tensor {
  static constexpr const char* kStub = "Tensor";
  static const fastt::Tensor& read(PyObject* o, const char* n) {
    return to_tensor(o, n);
  }
};
// A tensor, or a Python number / nested list made into one.
struct TensorLike {
  static constexpr const char* kStub = "_TensorOrNumber";
  static fastt::Tensor read(PyObject* o, const char* n) {
    return to_tensor_like(o, n);
  }
};
// A tuple or list of tensors.
struct Tensors {
  static constexpr const char* kStub = "Sequence[Tensor]";
  static std::vector<fastt::Tensor> read(PyObject* o, const char* n);
};
struct Int {
  static constexpr const char* kStub = "_int";
  static int64_t read(PyObject* o, const char* n) { return to_int(o, n); }
};
template <int64_t Default>
struct IntOr {
  static constexpr const char* kStub = "_int";
  static int64_t read(PyObject* o, const char* n) {
    return given(o) ? to_int(o, n) : Default;
  }
};
template <bool Default>
struct BoolOr {
  static constexpr const char* kStub = "_bool";
  static bool read(PyObject* o, const char* n) {
    return given(o) ? to_bool(o, n) : Default;
  }
};
struct Scalar {
  static constexpr const char* kStub = "Number";
  static fastt::Scalar read(PyObject* o, const char* n) {
    return to_scalar(o, n);
  }
};
template <int64_t Default>
struct ScalarOr {
  static constexpr const char* kStub = "Number";
  static fastt::Scalar read(PyObject* o, const char* n) {
    return given(o) ? to_scalar(o, n) : fastt::Scalar(Default);
  }
};
// A tensor or a Python number (torch's overloads on Tensor and Scalar):
// visit(f) calls f with whichever was given.
struct Operand {
  const fastt::Tensor* tensor = nullptr;
  fastt::Scalar scalar;
  template <class F>
  decltype(auto) visit(F&& f) const {
    return tensor ? f(*tensor) : f(scalar);
  }
};
struct TensorOrScalar {
  static constexpr const char* kStub = "_TensorOrNumber";
  static Operand read(PyObject* o, const char* n) {
    Operand v;
    if (!o) {  // a row places it among the required arguments
      PyErr_Format(PyExc_TypeError, "missing required argument '%s'", n);
      throw_py();
    }
    if (is_tensor(o)) {
      v.tensor = &unwrap(o);
    } else {
      v.scalar = to_scalar(o, n);
    }
    return v;
  }
};
// generator=: a fastt.Generator, or None / not given for the default one
// (read as a null Generator*).
struct DefaultGenerator {
  static constexpr const char* kStub = "Optional[Generator]";
  static fastt::Generator* read(PyObject* o, const char*, const char* fname) {
    return generator_arg(o, fname);
  }
};
// A bool, or nullopt when not given or None (a default that depends on
// another argument).
struct OptBool {
  static constexpr const char* kStub = "Optional[_bool]";
  static std::optional<bool> read(PyObject* o, const char* n) {
    if (!given(o)) return std::nullopt;
    return to_bool(o, n);
  }
};
std::vector<fastt::Tensor> tensor_seq(PyObject* o, const char* n,
                                      const char* fname, bool allow_none);
// A tensor or a sequence of tensors (None entries kept as undefined
// tensors when AllowNone); empty when not given or None.
template <bool AllowNone>
struct TensorSeq {
  static constexpr const char* kStub =
      AllowNone ? "Union[Tensor, Sequence[Optional[Tensor]], None]"
                : "Union[Tensor, Sequence[Tensor], None]";
  static std::vector<fastt::Tensor> read(PyObject* o, const char* n,
                                         const char* fname) {
    return tensor_seq(o, n, fname, AllowNone);
  }
};
// A str, or nullptr when not given or None.
struct OptStr {
  static constexpr const char* kStub = "Optional[str]";
  static const char* read(PyObject* o, const char* n) {
    if (!given(o)) return nullptr;
    const char* s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : nullptr;
    if (!s) {
      PyErr_Format(PyExc_TypeError, "%s must be None or a str, not %s", n,
                   Py_TYPE(o)->tp_name);
      throw_py();
    }
    return s;
  }
};
// An int, or nullopt when not given or None.
struct OptInt {
  static constexpr const char* kStub = "Optional[_int]";
  static std::optional<int64_t> read(PyObject* o, const char* n) {
    if (!given(o)) return std::nullopt;
    return to_int(o, n);
  }
};
// A dtype, or nullopt when not given or None.
struct OptDtype {
  static constexpr const char* kStub = "Optional[dtype]";
  static std::optional<DType> read(PyObject* o, const char*) {
    if (!given(o)) return std::nullopt;
    return to_dtype(o, DType::Float32);
  }
};
// A device (a torch.device-like object or a string); CPU when not given.
struct DeviceOrCpu {
  static constexpr const char* kStub = "_Device";
  static fastt::Device read(PyObject* o, const char*) {
    return to_device(given(o) ? o : nullptr, fastt::kCPU);
  }
};
// An int or a sequence of ints; converts to IntList at the call, and
// `given` tells an empty list from an absent argument.
struct IntsValue : SmallInts {
  bool given = false;
  operator IntList() const { return list(); }  // NOLINT: the call's view
};
struct Ints {
  static constexpr const char* kStub = "_Ints";
  static IntsValue read(PyObject* o, const char* n) {
    IntsValue v;
    if (o) parse_ints(o, &v, n);
    v.given = o != nullptr;
    return v;
  }
};
// The same, empty when not given or None.
struct OptInts {
  static constexpr const char* kStub = "_Dims";
  static IntsValue read(PyObject* o, const char* n) {
    IntsValue v;
    v.given = given(o);
    if (v.given) parse_ints(o, &v, n);
    return v;
  }
};
// output_mask: N bools, all true when not given.
template <size_t N>
struct Mask {
  static constexpr const char* kStub = "Optional[Sequence[_bool]]";
  static std::array<bool, N> read(PyObject* o, const char*) {
    std::array<bool, N> m;
    m.fill(true);
    if (!given(o)) return m;
    PyObject* seq =
        PySequence_Fast(o, "output_mask must be a sequence of bools");
    if (!seq) throw_py();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n != Py_ssize_t(N)) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError,
                   "output_mask must be a sequence of %d bools, got %zd",
                   int(N), n);
      throw_py();
    }
    for (size_t i = 0; i < N; ++i) {
      const int r = PyObject_IsTrue(PySequence_Fast_GET_ITEM(seq, i));
      if (r < 0) {
        Py_DECREF(seq);
        throw_py();
      }
      m[i] = r != 0;
    }
    Py_DECREF(seq);
    return m;
  }
};
// An int or a sequence of ints, {Default} when not given or None (torch's
// int-or-tuple size arguments).
template <int64_t Default>
struct IntsOr {
  static constexpr const char* kStub = "_Ints";
  static IntsValue read(PyObject* o, const char* n) {
    IntsValue v;
    v.given = given(o);
    if (v.given) {
      parse_ints(o, &v, n);
    } else {
      v.v[0] = Default;
      v.n = 1;
    }
    return v;
  }
};
// A tensor, or an undefined one when not given or None (optional inputs).
struct OptTensor {
  static constexpr const char* kStub = "Optional[Tensor]";
  static fastt::Tensor read(PyObject* o, const char* n) {
    return given(o) ? to_tensor(o, n) : fastt::Tensor();
  }
};
// A float with a default D::value (C++17 takes no double template
// arguments: D is a tag, e.g. rd::Zero, rd::Eps5).
template <class D>
struct DoubleOr {
  static constexpr const char* kStub = "_float";
  static double read(PyObject* o, const char* n) {
    return given(o) ? to_double(o, n) : D::value;
  }
};
struct Zero {
  static constexpr double value = 0.0;
};
struct One {
  static constexpr double value = 1.0;
};
struct Eps5 {
  static constexpr double value = 1e-5;
};
struct OptDouble {
  static constexpr const char* kStub = "Optional[_float]";
  static std::optional<double> read(PyObject* o, const char* n) {
    if (!given(o)) return std::nullopt;
    return to_double(o, n);
  }
};
// An argument torch lists after optional ones but requires (torch's
// "missing required argument" TypeError when absent).
template <class R>
struct Required : R {
  static constexpr bool kRequired = true;
};
// The out= tensor: passed through to with_out.
struct Out {
  static constexpr const char* kStub = "Optional[Tensor]";
  static PyObject* read(PyObject* o, const char*) { return o; }
};

template <class R>
struct Kw : R {
  static constexpr bool kKeywordOnly = true;
};
template <class R, class = void>
struct keyword_only {
  static constexpr bool value = false;
};
template <class R>
struct keyword_only<R, std::void_t<decltype(R::kKeywordOnly)>> {
  static constexpr bool value = R::kKeywordOnly;
};

template <class R, class = void>
struct required {
  static constexpr bool value = false;
};
template <class R>
struct required<R, std::void_t<decltype(R::kRequired)>> {
  static constexpr bool value = R::kRequired;
};
// Readers whose errors name the op take its name too.
template <class R, class = void>
struct reads_fname : std::false_type {};
template <class R>
struct reads_fname<R, std::void_t<decltype(R::read(nullptr, nullptr,
                                                   nullptr))>>
    : std::true_type {};
template <class R>
decltype(auto) read_arg(PyObject* o, const char* name, const char* fname) {
  if constexpr (required<R>::value)
    if (!o) missing(fname, name);
  if constexpr (reads_fname<R>::value) {
    return R::read(o, name, fname);
  } else {
    return R::read(o, name);
  }
}

// The slot index of the first keyword-only argument, or n.
constexpr int positional_count(std::initializer_list<bool> kw) {
  int i = 0;
  for (bool k : kw) {
    if (k) return i;
    ++i;
  }
  return i;
}

}  // namespace rd
// The readers by their names inside Kw<...> (rows name a reader without
// its namespace, the macros add it; within Kw<...> the tensor reader is
// rd::Tensor, since in fastt::py Tensor is the tensor).
using rd::BoolOr;
using rd::DefaultGenerator;
using rd::DeviceOrCpu;
using rd::DoubleOr;
using rd::Eps5;
using rd::OptBool;
using rd::OptDouble;
using rd::OptTensor;
using rd::Required;
using rd::One;
using rd::Zero;
using rd::Int;
using rd::IntOr;
using rd::IntsOr;
using rd::IntsValue;
using rd::Mask;
using rd::Ints;
using rd::Kw;
using rd::OptDtype;
using rd::OptInt;
using rd::OptInts;
using rd::OptStr;
using rd::Out;
using rd::ScalarOr;
using rd::TensorLike;
using rd::TensorSeq;
using rd::Tensors;
using rd::TensorOrScalar;

// Fills a[0..n) from a FASTCALL argument vector: positional arguments
// directly when they fit and no keyword was given, else parse_args.
inline void bind_args(const Signature& sig, int n, PyObject* const* args,
                      Py_ssize_t nargs, PyObject* kwnames, PyObject** a) {
  if (FASTT_LIKELY(!kwnames && nargs >= sig.nreq && nargs <= sig.npos)) {
    for (int i = 0; i < n; ++i) a[i] = i < nargs ? args[i] : nullptr;
    return;
  }
  parse_args(sig, args, nargs, kwnames, a);
}

}  // namespace py
}  // namespace fastt

// ---- the row macros ----
#define FASTT_PP_CAT(a, b) FASTT_PP_CAT_(a, b)
#define FASTT_PP_CAT_(a, b) a##b
#define FASTT_PP_NARG(...) \
  FASTT_PP_NARG_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define FASTT_PP_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, N, ...) N
#define FASTT_PP_EACH(M, ...) \
  FASTT_PP_CAT(FASTT_PP_EACH_, FASTT_PP_NARG(__VA_ARGS__))(M, 0, __VA_ARGS__)
#define FASTT_PP_EACH_1(M, i, x) M(i, x)
#define FASTT_PP_EACH_2(M, i, x, ...) M(i, x) FASTT_PP_EACH_1(M, i + 1, __VA_ARGS__)
#define FASTT_PP_EACH_3(M, i, x, ...) M(i, x) FASTT_PP_EACH_2(M, i + 1, __VA_ARGS__)
#define FASTT_PP_EACH_4(M, i, x, ...) M(i, x) FASTT_PP_EACH_3(M, i + 1, __VA_ARGS__)
#define FASTT_PP_EACH_5(M, i, x, ...) M(i, x) FASTT_PP_EACH_4(M, i + 1, __VA_ARGS__)
#define FASTT_PP_EACH_6(M, i, x, ...) M(i, x) FASTT_PP_EACH_5(M, i + 1, __VA_ARGS__)
#define FASTT_PP_EACH_7(M, i, x, ...) M(i, x) FASTT_PP_EACH_6(M, i + 1, __VA_ARGS__)
#define FASTT_PP_EACH_8(M, i, x, ...) M(i, x) FASTT_PP_EACH_7(M, i + 1, __VA_ARGS__)
#define FASTT_PP_EACH_9(M, i, x, ...) M(i, x) FASTT_PP_EACH_8(M, i + 1, __VA_ARGS__)
// (Reader, name) pairs
#define FASTT_ARG_NAME(i, p) FASTT_ARG_NAME_ p,
#define FASTT_ARG_NAME_(R, n) #n
#define FASTT_ARG_RD(R) ::fastt::py::rd::R
#define FASTT_ARG_KW(i, p) FASTT_ARG_KW_ p,
#define FASTT_ARG_KW_(R, n) ::fastt::py::rd::keyword_only<FASTT_ARG_RD(R)>::value
#define FASTT_ARG_STUB(i, p) FASTT_ARG_STUB_ p,
#define FASTT_ARG_STUB_(R, n) FASTT_ARG_RD(R)::kStub
#define FASTT_ARG_REQ(i, p) FASTT_ARG_REQ_ p,
#define FASTT_ARG_REQ_(R, n) ::fastt::py::rd::required<FASTT_ARG_RD(R)>::value
#define FASTT_ARG_UNPACK(...) __VA_ARGS__
// The call's parameters: each reader's value, forwarded without a copy.
#define FASTT_ARG_PARAM(i, p) FASTT_ARG_PARAM_(FASTT_ARG_UNPACK p)
#define FASTT_ARG_PARAM_(...) FASTT_ARG_PARAM__(__VA_ARGS__)
#define FASTT_ARG_PARAM__(R, n)                                       \
  , [[maybe_unused]] ::std::add_rvalue_reference_t<decltype(           \
        ::fastt::py::rd::read_arg<FASTT_ARG_RD(R)>(nullptr, nullptr,    \
                                                   nullptr))> n
#define FASTT_ARG_READ(i, p) FASTT_ARG_READ_(i, FASTT_ARG_UNPACK p)
#define FASTT_ARG_READ_(i, ...) FASTT_ARG_READ__(i, __VA_ARGS__)
#define FASTT_ARG_READ__(i, R, n) \
  decltype(auto) n =              \
      ::fastt::py::rd::read_arg<FASTT_ARG_RD(R)>(a_[i], #n, sig.fname);
#define FASTT_ARG_MOVE(i, p) FASTT_ARG_MOVE_(FASTT_ARG_UNPACK p)
#define FASTT_ARG_MOVE_(...) FASTT_ARG_MOVE__(__VA_ARGS__)
#define FASTT_ARG_MOVE__(R, n) , ::std::move(n)

// A row's pieces, named after its entry point `id` (m_name or f_name): the
// Signature sig_<id>, the stub facts, and the call as a function
// call_<id>(self, readers...) whose result type the stub reads (one caller:
// it inlines).
#define FASTT_BIND_PIECES(name, id, nreq, self_params, call, ...)            \
  static const ::fastt::py::Signature sig_##id{                              \
      #name, {FASTT_PP_EACH(FASTT_ARG_NAME, __VA_ARGS__)}, nreq,             \
      ::fastt::py::rd::positional_count(                                     \
          {FASTT_PP_EACH(FASTT_ARG_KW, __VA_ARGS__)})};                      \
  static const char* const stubs_##id[] = {                                  \
      FASTT_PP_EACH(FASTT_ARG_STUB, __VA_ARGS__)};                           \
  static const bool required_##id[] = {                                      \
      FASTT_PP_EACH(FASTT_ARG_REQ, __VA_ARGS__)};                            \
  static decltype(auto) call_##id(                                           \
      self_params FASTT_PP_EACH(FASTT_ARG_PARAM, __VA_ARGS__)) {             \
    return call;                                                             \
  }
#define FASTT_BIND_ROW(name, id, kind)                                       \
  static ::fastt::py::BindRow row_##id(                                \
      #name, ::fastt::py::BindKind::kind, id, &sig_##id, stubs_##id,         \
      required_##id, ::fastt::py::stub_result(&call_##id));

// The parsed, read arguments of a row, then its call; `self_args` are the
// call's leading arguments (self as t and tm, or a function's tag).
#define FASTT_BIND_BODY(id, self_obj, self_args, ...)                        \
  const ::fastt::py::Signature& sig = sig_##id;                              \
  PyObject* a_[FASTT_PP_NARG(__VA_ARGS__)];                                  \
  ::fastt::py::bind_args(sig, FASTT_PP_NARG(__VA_ARGS__), args, nargs,       \
                         kwnames, a_);                                       \
  FASTT_PP_EACH(FASTT_ARG_READ, __VA_ARGS__)                                 \
  return ::fastt::py::to_py(                                                 \
      self_obj, call_##id(self_args FASTT_PP_EACH(FASTT_ARG_MOVE, __VA_ARGS__)));

#define FASTT_BIND_SELF_PARAMS                                               \
  [[maybe_unused]] const ::fastt::Tensor& t, [[maybe_unused]] ::fastt::Tensor& tm
#define FASTT_BIND_METHOD_(name, nreq, call, ...)                            \
  FASTT_BIND_PIECES(name, m_##name, nreq, FASTT_BIND_SELF_PARAMS, call,      \
                    __VA_ARGS__)                                             \
  FASTT_METHOD(name) {                                                       \
    FASTT_PY_BEGIN                                                           \
    const Tensor& t = to_tensor(self, "input");                              \
    FASTT_BIND_BODY(m_##name, self, FASTT_PP_ARGS(t, unwrap_mut(self)),      \
                    __VA_ARGS__)                                             \
    FASTT_PY_END                                                             \
  }
#define FASTT_PP_ARGS(...) __VA_ARGS__
#define FASTT_BIND_METHOD(name, nreq, call, ...)    \
  FASTT_BIND_METHOD_(name, nreq, call, __VA_ARGS__) \
  FASTT_BIND_ROW(name, m_##name, Method)
// The method and fastt.name(input, ...), which forwards to it.
#define FASTT_BIND(name, nreq, call, ...)                  \
  FASTT_BIND_METHOD(name, nreq, call, __VA_ARGS__)         \
  FASTT_FN(name)                                           \
  static ::fastt::py::BindRow row_f_##name(          \
      #name, ::fastt::py::BindKind::InputFunction, f_##name, &sig_m_##name, \
      stubs_m_##name, required_m_##name,                   \
      ::fastt::py::stub_result(&call_m_##name));
#define FASTT_BIND_FUNCTION(name, nreq, call, ...)                           \
  FASTT_BIND_PIECES(name, f_##name, nreq, ::fastt::py::NoSelf, call,         \
                    __VA_ARGS__)                                             \
  static PyObject* f_##name(PyObject*, PyObject* const* args,                \
                            Py_ssize_t nargs, PyObject* kwnames) {           \
    FASTT_PY_BEGIN                                                           \
    FASTT_BIND_BODY(f_##name, nullptr, ::fastt::py::NoSelf{}, __VA_ARGS__)   \
    FASTT_PY_END                                                             \
  }                                                                          \
  static_assert(!::fastt::py::returns_reference(&call_f_##name),             \
                "a function row's call returns a new value, not self");      \
  FASTT_BIND_ROW(name, f_##name, Function)

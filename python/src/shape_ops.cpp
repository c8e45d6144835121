// Bindings of csrc/ops/shape.h: the shape composites, and the varargs
// functions (atleast_*d, broadcast_tensors / _shapes, meshgrid, ...) that
// take tensors either as separate arguments or as one sequence.
#include "binder.h"

#include "csrc/capture.h"
#include "csrc/ops/complex.h"
#include "csrc/ops/index.h"
#include "csrc/ops/shape.h"

namespace fastt {
namespace py {

namespace rd {
// The argument as given (NULL when absent): rows whose argument is one of
// several kinds (int, int list or tensor) read it themselves.
struct ShapeAny {
  static constexpr const char* kStub = "Any";
  static PyObject* read(PyObject* o, const char*) { return o; }
};
}  // namespace rd
using rd::ShapeAny;

namespace {

bool is_int_seq(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

std::vector<Tensor> split_any(const Tensor& t, PyObject* o, int64_t dim,
                              char hvd) {
  if (!o) throw TypeError("tensor_split() missing required argument "
                          "'indices_or_sections'");
  if (is_tensor(o)) {
    FASTT_CHECK(!hvd, TypeError,
                "{}split(): argument 'indices_or_sections' must be an int or "
                "a sequence of ints", hvd);
    return fastt::tensor_split(t, unwrap(o), dim);
  }
  if (is_int_seq(o)) {
    SmallInts s;
    parse_ints(o, &s, "indices_or_sections");
    return hvd ? fastt::hvdsplit_indices(hvd, t, s.list())
               : fastt::tensor_split_indices(t, s.list(), dim);
  }
  const int64_t n = to_int(o, "indices_or_sections");
  return hvd ? fastt::hvdsplit(hvd, t, n) : fastt::tensor_split(t, n, dim);
}

Tensor repeat_interleave_any(const Tensor& t, PyObject* repeats,
                             std::optional<int64_t> dim,
                             std::optional<int64_t> output_size) {
  if (!given(repeats)) return fastt::repeat_interleave(t, output_size);
  if (is_tensor(repeats))
    return fastt::repeat_interleave(t, unwrap(repeats), dim, output_size);
  return fastt::repeat_interleave(t, to_int(repeats, "repeats"), dim,
                                  output_size);
}

Tensor tensordot_any(const Tensor& a, const Tensor& b, PyObject* dims) {
  if (!given(dims)) return fastt::tensordot(a, b, 2);
  if (is_tensor(dims)) {
    const Tensor d = unwrap(dims).to(kCPU).to(DType::Int64).contiguous();
    if (d.dim() == 0) return fastt::tensordot(a, b, d.item<int64_t>());
    FASTT_CHECK(d.dim() == 2 && d.size(0) == 2, RuntimeError,
                "tensordot expects dims to be a pair of lists");
    capture::host_read("tensordot with dims given as a tensor");
    const int64_t* p = d.data_ptr<int64_t>();
    std::vector<int64_t> da(p, p + d.size(1)), db(p + d.size(1), p + d.numel());
    return fastt::tensordot(a, b, da, db);
  }
  if (is_int_seq(dims)) {
    FASTT_CHECK(PySequence_Size(dims) == 2, RuntimeError,
                "tensordot expects dims to be a pair of lists");
    SmallInts da, db;
    PyObject* d0 = PySequence_GetItem(dims, 0);
    PyObject* d1 = PySequence_GetItem(dims, 1);
    if (!d0 || !d1) {
      Py_XDECREF(d0);
      Py_XDECREF(d1);
      throw_py();
    }
    try {
      parse_ints(d0, &da, "dims");
      parse_ints(d1, &db, "dims");
    } catch (...) {
      Py_DECREF(d0);
      Py_DECREF(d1);
      throw;
    }
    Py_DECREF(d0);
    Py_DECREF(d1);
    return fastt::tensordot(a, b, da.list(), db.list());
  }
  return fastt::tensordot(a, b, to_int(dims, "dims"));
}


}  // namespace

// A row without arguments (the binder's rows take at least one): the
// method, fastt.name(input) and their registry rows.
#define FASTT_SHAPE_BIND0(name, call)                                       \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    if (nargs || kwnames) throw TypeError(#name "() takes no arguments");   \
    return wrap(call);                                                      \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)                                                            \
  static const ::fastt::py::Signature sig_m_##name{#name, {nullptr}, 0};    \
  static const char* const stubs_m_##name[] = {nullptr};                    \
  static const bool required_m_##name[] = {false};                          \
  static ::fastt::py::BindRow row_m_##name(                                 \
      #name, ::fastt::py::BindKind::Method, m_##name, &sig_m_##name,        \
      stubs_m_##name, required_m_##name, "Tensor");                         \
  static ::fastt::py::BindRow row_f_##name(                                 \
      #name, ::fastt::py::BindKind::InputFunction, f_##name, &sig_m_##name, \
      stubs_m_##name, required_m_##name, "Tensor");

// ---- views ----
FASTT_BIND(broadcast_to, 1, fastt::broadcast_to(t, size), (Ints, size))
FASTT_BIND(movedim, 2, fastt::movedim(t, source, destination),
           (Ints, source), (Ints, destination))
FASTT_BIND(moveaxis, 2, fastt::movedim(t, source, destination),
           (Ints, source), (Ints, destination))
FASTT_SHAPE_BIND0(ravel, fastt::ravel(t))
FASTT_SHAPE_BIND0(fliplr, fastt::fliplr(t))
FASTT_SHAPE_BIND0(flipud, fastt::flipud(t))
FASTT_BIND(rot90, 0,
           fastt::rot90(t, k, dims.given ? IntList(dims) : IntList{0, 1}),
           (IntOr<1>, k), (OptInts, dims))

// ---- complex tensors as real ones (csrc/ops/complex.h) ----
FASTT_BIND_FUNCTION(view_as_real, 1, fastt::view_as_real(input),
                    (Tensor, input))
FASTT_BIND_FUNCTION(view_as_complex, 1, fastt::view_as_complex(input),
                    (Tensor, input))
// fastt.real / fastt.imag and the Tensor.real / .imag properties
// (python/fastt/_composite.py) go through these.
FASTT_BIND_FUNCTION(_real, 1, fastt::real_part(input), (Tensor, input))
FASTT_BIND_FUNCTION(_imag, 1, fastt::imag_part(input), (Tensor, input))
// fastt.conj / conj_physical (_composite.py): a new tensor, recorded.
FASTT_BIND_FUNCTION(_conj_physical, 1, fastt::conj_physical(input),
                    (Tensor, input))

// ---- joins ----
FASTT_BIND_FUNCTION(hstack, 1, with_out(out, fastt::hstack(tensors), "hstack"),
                    (Tensors, tensors), (Kw<Out>, out))
FASTT_BIND_FUNCTION(vstack, 1, with_out(out, fastt::vstack(tensors), "vstack"),
                    (Tensors, tensors), (Kw<Out>, out))
FASTT_BIND_FUNCTION(row_stack, 1,
                    with_out(out, fastt::vstack(tensors), "row_stack"),
                    (Tensors, tensors), (Kw<Out>, out))
FASTT_BIND_FUNCTION(dstack, 1, with_out(out, fastt::dstack(tensors), "dstack"),
                    (Tensors, tensors), (Kw<Out>, out))
FASTT_BIND_FUNCTION(column_stack, 1,
                    with_out(out, fastt::column_stack(tensors), "column_stack"),
                    (Tensors, tensors), (Kw<Out>, out))

// ---- splits ----
FASTT_BIND(tensor_split, 1, split_any(t, indices_or_sections, dim, 0),
           (ShapeAny, indices_or_sections), (IntOr<0>, dim))
FASTT_BIND(hsplit, 1, split_any(t, indices_or_sections, 0, 'h'),
           (ShapeAny, indices_or_sections))
FASTT_BIND(vsplit, 1, split_any(t, indices_or_sections, 0, 'v'),
           (ShapeAny, indices_or_sections))
FASTT_BIND(dsplit, 1, split_any(t, indices_or_sections, 0, 'd'),
           (ShapeAny, indices_or_sections))
FASTT_BIND(split_with_sizes, 1, fastt::split_with_sizes(t, split_sizes, dim),
           (Ints, split_sizes), (IntOr<0>, dim))
FASTT_BIND(unsafe_split, 1, fastt::split(t, split_size, dim),
           (Int, split_size), (IntOr<0>, dim))
FASTT_BIND(unsafe_split_with_sizes, 1,
           fastt::split_with_sizes(t, split_sizes, dim), (Ints, split_sizes),
           (IntOr<0>, dim))
FASTT_BIND(unsafe_chunk, 1, fastt::chunk(t, chunks, dim), (Int, chunks),
           (IntOr<0>, dim))

// ---- diagonals ----
FASTT_BIND(diag, 0, with_out(out, fastt::diag(t, diagonal), "diag"),
           (IntOr<0>, diagonal), (Kw<Out>, out))
FASTT_BIND(diag_embed, 0, fastt::diag_embed(t, offset, dim1, dim2),
           (IntOr<0>, offset), (IntOr<-2>, dim1), (IntOr<-1>, dim2))
FASTT_BIND(diagflat, 0, fastt::diagflat(t, offset), (IntOr<0>, offset))
FASTT_SHAPE_BIND0(trace, fastt::trace(t))

// ---- repeats and gathers ----
FASTT_BIND(tile, 1, fastt::tile(t, dims), (Ints, dims))
FASTT_BIND(take, 1,
           (check_no_overlap(out, {&t, &index}, "take"),
            with_out(out, fastt::take(t, index), "take")),
           (Tensor, index), (Kw<Out>, out))
FASTT_BIND(take_along_dim, 1,
           with_out(out, fastt::take_along_dim(t, indices, dim),
                    "take_along_dim"),
           (Tensor, indices), (OptInt, dim), (Kw<Out>, out))
FASTT_BIND(repeat_interleave, 0,
           repeat_interleave_any(t, repeats, dim, output_size),
           (ShapeAny, repeats), (OptInt, dim), (Kw<OptInt>, output_size))

// ---- products and reductions ----
FASTT_BIND(kron, 1, with_out(out, fastt::kron(t, other), "kron"),
           (Tensor, other), (Kw<Out>, out))
FASTT_BIND(inner, 1, with_out(out, fastt::inner(t, other), "inner"),
           (Tensor, other), (Kw<Out>, out))
FASTT_BIND_FUNCTION(tensordot, 2,
                    with_out(out, tensordot_any(a, b, dims), "tensordot"),
                    (Tensor, a), (Tensor, b), (ShapeAny, dims),
                    (Kw<Out>, out))
FASTT_BIND(cross, 1, with_out(out, fastt::cross(t, other, dim), "cross"),
           (Tensor, other), (OptInt, dim), (Kw<Out>, out))
FASTT_BIND_FUNCTION(_linalg_cross, 2,
                    with_out(out, fastt::linalg_cross(input, other, dim),
                             "linalg.cross"),
                    (Tensor, input), (Tensor, other), (Kw<IntOr<-1>>, dim),
                    (Kw<Out>, out))
FASTT_BIND(count_nonzero, 0,
           fastt::count_nonzero(t, dim, !dim.given), (OptInts, dim))
FASTT_SHAPE_BIND0(argwhere, fastt::argwhere(t))
FASTT_BIND_FUNCTION(tril_indices, 2,
                    fastt::tril_indices(row, col, offset, dtype, device),
                    (Int, row), (Int, col), (IntOr<0>, offset),
                    (Kw<OptDtype>, dtype), (Kw<DeviceOrCpu>, device))
FASTT_BIND_FUNCTION(triu_indices, 2,
                    fastt::triu_indices(row, col, offset, dtype, device),
                    (Int, row), (Int, col), (IntOr<0>, offset),
                    (Kw<OptDtype>, dtype), (Kw<DeviceOrCpu>, device))

// ---- varargs functions: f(a, b, ...) or f([a, b, ...]) ----
namespace {
// The tensors given positionally: one sequence, or each argument. `one`
// tells a lone tensor argument (atleast_*d then return a tensor).
std::vector<Tensor> varargs_tensors(PyObject* const* args, Py_ssize_t nargs,
                                    const char* fname, bool* one) {
  *one = false;
  std::vector<Tensor> ts;
  if (nargs == 1 && !is_tensor(args[0])) {
    if (!is_int_seq(args[0])) {
      PyErr_Format(PyExc_TypeError,
                   "%s(): argument 'tensors' must be a tuple or list of "
                   "Tensors, not %s",
                   fname, Py_TYPE(args[0])->tp_name);
      throw_py();
    }
    return rd::Tensors::read(args[0], "tensors");
  }
  *one = nargs == 1;
  for (Py_ssize_t i = 0; i < nargs; ++i)
    ts.push_back(to_tensor(args[i], "tensors"));
  return ts;
}
// Keyword arguments after the varargs (sig's names all keyword-only).
void varargs_kw(const Signature& sig, PyObject* const* args, Py_ssize_t nargs,
                PyObject* kwnames, PyObject** a) {
  parse_args(sig, args + nargs, 0, kwnames, a);
}
}  // namespace

#define FASTT_VARARGS_ROW(name, first, result, ...)                         \
  static const ::fastt::py::Signature sig_f_##name{#name, {first,          \
                                                   __VA_ARGS__}, 1, 10};   \
  static ::fastt::py::BindRow row_f_##name(                                 \
      #name, ::fastt::py::BindKind::Function, f_##name, &sig_f_##name,      \
      stubs_f_##name, required_f_##name, result);

#define FASTT_ATLEAST(n)                                                    \
  static PyObject* f_atleast_##n##d(PyObject*, PyObject* const* args,        \
                                    Py_ssize_t nargs, PyObject* kwnames) {   \
    FASTT_PY_BEGIN                                                          \
    if (kwnames) {                                                          \
      static const Signature sig{"atleast_" #n "d", {"tensors"}, 1};        \
      PyObject* a[1];                                                       \
      parse_args(sig, args, nargs, kwnames, a);                             \
      bool one;                                                             \
      auto ts = varargs_tensors(a, 1, "atleast_" #n "d", &one);             \
      if (one) return wrap(fastt::atleast_##n##d(ts[0]));                   \
      for (Tensor & t : ts) t = fastt::atleast_##n##d(t);                   \
      return tuple_of(std::move(ts));                                       \
    }                                                                       \
    bool one;                                                               \
    auto ts = varargs_tensors(args, nargs, "atleast_" #n "d", &one);        \
    if (one) return wrap(fastt::atleast_##n##d(ts[0]));                     \
    for (Tensor & t : ts) t = fastt::atleast_##n##d(t);                     \
    return tuple_of(std::move(ts));                                         \
    FASTT_PY_END                                                            \
  }                                                                         \
  static const char* const stubs_f_atleast_##n##d[] = {"Tensor"};           \
  static const bool required_f_atleast_##n##d[] = {true};                   \
  FASTT_VARARGS_ROW(atleast_##n##d, "*tensors", "Any", nullptr)
FASTT_ATLEAST(1)
FASTT_ATLEAST(2)
FASTT_ATLEAST(3)

static PyObject* f_broadcast_tensors(PyObject*, PyObject* const* args,
                                     Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  if (kwnames) throw TypeError("broadcast_tensors() takes no keyword arguments");
  bool one;
  auto ts = varargs_tensors(args, nargs, "broadcast_tensors", &one);
  return tuple_of(fastt::broadcast_tensors(ts));
  FASTT_PY_END
}
static const char* const stubs_f_broadcast_tensors[] = {"Tensor"};
static const bool required_f_broadcast_tensors[] = {true};
FASTT_VARARGS_ROW(broadcast_tensors, "*tensors", "Tuple[Tensor, ...]", nullptr)

static PyObject* f_broadcast_shapes(PyObject*, PyObject* const* args,
                                    Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  if (kwnames) throw TypeError("broadcast_shapes() takes no keyword arguments");
  std::vector<std::vector<int64_t>> shapes;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    SmallInts s;
    if (PyLong_Check(args[i])) {
      s.v[0] = to_int(args[i], "shape");
      s.n = 1;
    } else {
      parse_ints(args[i], &s, "broadcast_shapes");
    }
    shapes.push_back(s.list().vec());
  }
  const std::vector<int64_t> r = fastt::broadcast_shapes(shapes);
  return make_size(IntList(r));
  FASTT_PY_END
}
static const char* const stubs_f_broadcast_shapes[] = {"_Ints"};
static const bool required_f_broadcast_shapes[] = {true};
FASTT_VARARGS_ROW(broadcast_shapes, "*shapes", "Size", nullptr)

static PyObject* f_meshgrid(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature kw{"meshgrid", {"$indexing"}, 0};
  PyObject* a[1] = {nullptr};
  if (kwnames) varargs_kw(kw, args, nargs, kwnames, a);
  bool one;
  auto ts = varargs_tensors(args, nargs, "meshgrid", &one);
  const char* ix = rd::OptStr::read(a[0], "indexing");
  return tuple_of(fastt::meshgrid(ts, ix ? ix : "ij"));
  FASTT_PY_END
}
static const char* const stubs_f_meshgrid[] = {"Tensor", "Optional[str]"};
static const bool required_f_meshgrid[] = {true, false};
FASTT_VARARGS_ROW(meshgrid, "*tensors", "Tuple[Tensor, ...]", "indexing",
                  nullptr)

}  // namespace py
}  // namespace fastt

// Bindings of csrc/ops/index.h: cat/stack/split/chunk/unbind/repeat,
// index_select/gather/scatter*/index_add, masks, nonzero, tril/triu,
// flip/roll, sort/argsort/topk, index_put_.
#include "common.h"

#include "csrc/ops/index.h"

namespace fastt {
namespace py {



static std::vector<Tensor> tensor_list(PyObject* o, const char* what) {
  if (!PyList_Check(o) && !PyTuple_Check(o)) {
    PyErr_Format(PyExc_TypeError,
                 "%s must be a tuple or list of Tensors, not %s", what,
                 Py_TYPE(o)->tp_name);
    throw_py();
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  std::vector<Tensor> v;
  v.reserve(size_t(n));
  for (Py_ssize_t i = 0; i < n; ++i)
    v.push_back(to_tensor(PySequence_Fast_ITEMS(o)[i], what));
  return v;
}
static PyObject* tuple_of(std::vector<Tensor>&& v) {
  PyObject* t = PyTuple_New(Py_ssize_t(v.size()));
  if (!t) throw_py();
  for (size_t i = 0; i < v.size(); ++i) {
    PyObject* x = wrap(std::move(v[i]));
    if (!x) {
      Py_DECREF(t);
      throw_py();
    }
    PyTuple_SET_ITEM(t, Py_ssize_t(i), x);
  }
  return t;
}
static PyTypeObject* g_values_indices = nullptr;
static PyObject* values_indices(std::tuple<Tensor, Tensor>&& p) {
  if (!g_values_indices) {
    static PyStructSequence_Field fields[] = {
        {"values", nullptr}, {"indices", nullptr}, {nullptr, nullptr}};
    static PyStructSequence_Desc desc = {"fastt.return_types.sort_topk",
                                         nullptr, fields, 2};
    g_values_indices = PyStructSequence_NewType(&desc);
    if (!g_values_indices) throw_py();
  }
  PyObject* r = PyStructSequence_New(g_values_indices);
  if (!r) throw_py();
  PyStructSequence_SET_ITEM(r, 0, wrap(std::move(std::get<0>(p))));
  PyStructSequence_SET_ITEM(r, 1, wrap(std::move(std::get<1>(p))));
  return r;
}

// ---- joining and splitting ----
static PyObject* f_cat(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"cat", {"tensors", "dim", "$out"}, 1};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  Tensor r = fastt::cat(tensor_list(a[0], "tensors"),
                        given(a[1]) ? to_int(a[1], "dim") : 0);
  if (given(a[2])) return store_out(a[2], r, "cat");
  return wrap(std::move(r));
  FASTT_PY_END
}
static PyObject* f_stack(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"stack", {"tensors", "dim", "$out"}, 1};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  Tensor r = fastt::stack(tensor_list(a[0], "tensors"),
                          given(a[1]) ? to_int(a[1], "dim") : 0);
  if (given(a[2])) return store_out(a[2], r, "stack");
  return wrap(std::move(r));
  FASTT_PY_END
}
FASTT_METHOD(split) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"split", {"split_size_or_sections", "dim"}, 1};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  int64_t dim = given(a[1]) ? to_int(a[1], "dim") : 0;
  if (PyList_Check(a[0]) || PyTuple_Check(a[0])) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(a[0]);
    std::vector<int64_t> sizes(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i)
      sizes[size_t(i)] = to_int(PySequence_Fast_ITEMS(a[0])[i], "split");
    return tuple_of(fastt::split(t, IntList(sizes), dim));
  }
  return tuple_of(fastt::split(t, to_int(a[0], "split_size"), dim));
  FASTT_PY_END
}
FASTT_FN(split)
FASTT_METHOD(chunk) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"chunk", {"chunks", "dim"}, 1};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  return tuple_of(fastt::chunk(t, to_int(a[0], "chunks"),
                               given(a[1]) ? to_int(a[1], "dim") : 0));
  FASTT_PY_END
}
FASTT_FN(chunk)
FASTT_METHOD(unbind) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"unbind", {"dim"}, 0};
  PyObject* a[1];
  parse_args(sig, args, nargs, kwnames, a);
  return tuple_of(fastt::unbind(t, given(a[0]) ? to_int(a[0], "dim") : 0));
  FASTT_PY_END
}
FASTT_FN(unbind)
FASTT_METHOD(repeat) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  SmallInts s;
  parse_varargs_ints(args, nargs, &s, "repeat");
  return wrap(fastt::repeat(t, s.list()));
  FASTT_PY_END
}

// ---- along a dim ----
FASTT_METHOD(index_select) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"index_select", {"dim", "index"}, 2};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::index_select(t, to_int(a[0], "dim"),
                                  to_tensor(a[1], "index")));
  FASTT_PY_END
}
FASTT_FN(index_select)
FASTT_METHOD(gather) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"gather", {"dim", "index"}, 2};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::gather(t, to_int(a[0], "dim"), to_tensor(a[1], "index")));
  FASTT_PY_END
}
FASTT_FN(gather)

static PyObject* scatter_impl(PyObject* self, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames,
                              bool inplace) {
  to_tensor(self, "input");
  static const Signature sig{"scatter", {"dim", "index", "src", "$value"}, 2};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  int64_t dim = to_int(a[0], "dim");
  const Tensor& index = to_tensor(a[1], "index");
  PyObject* src = given(a[2]) ? a[2] : a[3];
  if (!src) throw TypeError("scatter() missing 'src' or 'value'");
  Tensor& t = unwrap_mut(self);
  if (is_tensor(src)) {
    if (inplace) {
      fastt::scatter_(t, dim, index, unwrap(src));
      return return_self(self);
    }
    return wrap(fastt::scatter(t, dim, index, unwrap(src)));
  }
  Scalar v = to_scalar(src, "value");
  if (inplace) {
    fastt::scatter_(t, dim, index, v);
    return return_self(self);
  }
  return wrap(fastt::scatter(t, dim, index, v));
}
FASTT_METHOD(scatter) {
  FASTT_PY_BEGIN
  return scatter_impl(self, args, nargs, kwnames, false);
  FASTT_PY_END
}
FASTT_METHOD(scatter_) {
  FASTT_PY_BEGIN
  return scatter_impl(self, args, nargs, kwnames, true);
  FASTT_PY_END
}
FASTT_FN(scatter)
FASTT_METHOD(scatter_add) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"scatter_add", {"dim", "index", "src"}, 3};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::scatter_add(t, to_int(a[0], "dim"),
                                 to_tensor(a[1], "index"),
                                 to_tensor(a[2], "src")));
  FASTT_PY_END
}
FASTT_METHOD(scatter_add_) {
  FASTT_PY_BEGIN
  to_tensor(self, "input");
  static const Signature sig{"scatter_add_", {"dim", "index", "src"}, 3};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  fastt::scatter_add_(unwrap_mut(self), to_int(a[0], "dim"),
                      to_tensor(a[1], "index"), to_tensor(a[2], "src"));
  return return_self(self);
  FASTT_PY_END
}
FASTT_FN(scatter_add)
FASTT_METHOD(index_add) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"index_add",
                             {"dim", "index", "source", "$alpha"}, 3};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  Scalar alpha = given(a[3]) ? to_scalar(a[3], "alpha") : Scalar(1);
  return wrap(fastt::index_add(t, to_int(a[0], "dim"), to_tensor(a[1], "index"),
                               to_tensor(a[2], "source"), alpha));
  FASTT_PY_END
}
FASTT_METHOD(index_add_) {
  FASTT_PY_BEGIN
  to_tensor(self, "input");
  static const Signature sig{"index_add_",
                             {"dim", "index", "source", "$alpha"}, 3};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  Scalar alpha = given(a[3]) ? to_scalar(a[3], "alpha") : Scalar(1);
  fastt::index_add_(unwrap_mut(self), to_int(a[0], "dim"),
                    to_tensor(a[1], "index"), to_tensor(a[2], "source"),
                    alpha);
  return return_self(self);
  FASTT_PY_END
}
FASTT_FN(index_add)

// ---- advanced indexing and masks ----
FASTT_METHOD(index_put_) {
  FASTT_PY_BEGIN
  to_tensor(self, "input");
  static const Signature sig{"index_put_",
                             {"indices", "values", "accumulate"}, 2};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  fastt::index_put_(unwrap_mut(self), tensor_list(a[0], "indices"),
                    to_tensor_like(a[1], "values"),
                    given(a[2]) && to_bool(a[2], "accumulate"));
  return return_self(self);
  FASTT_PY_END
}
FASTT_METHOD(index_put) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"index_put", {"indices", "values", "accumulate"},
                             2};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::index_put(t, tensor_list(a[0], "indices"),
                               to_tensor_like(a[1], "values"),
                               given(a[2]) && to_bool(a[2], "accumulate")));
  FASTT_PY_END
}
FASTT_FN(index_put)
FASTT_METHOD(masked_select) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"masked_select", {"mask"}, 1};
  PyObject* a[1];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::masked_select(t, to_tensor(a[0], "mask")));
  FASTT_PY_END
}
FASTT_FN(masked_select)
FASTT_METHOD(masked_scatter_) {
  FASTT_PY_BEGIN
  to_tensor(self, "input");
  static const Signature sig{"masked_scatter_", {"mask", "source"}, 2};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  fastt::masked_scatter_(unwrap_mut(self), to_tensor(a[0], "mask"),
                         to_tensor(a[1], "source"));
  return return_self(self);
  FASTT_PY_END
}
FASTT_METHOD(masked_scatter) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"masked_scatter", {"mask", "source"}, 2};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::masked_scatter(t, to_tensor(a[0], "mask"),
                                    to_tensor(a[1], "source")));
  FASTT_PY_END
}
FASTT_METHOD(nonzero) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"nonzero", {"$as_tuple"}, 0};
  PyObject* a[1];
  parse_args(sig, args, nargs, kwnames, a);
  Tensor nz = fastt::nonzero(t);
  if (given(a[0]) && to_bool(a[0], "as_tuple")) {
    if (t.dim() == 0) {  // torch: (tensor([0]),) or (tensor([]),)
      Tensor idx = Tensor::empty({nz.size(0)}, DType::Int64);
      idx.fill_(Scalar(int64_t(0)));
      return tuple_of({idx});
    }
    std::vector<Tensor> cols;
    for (int64_t d = 0; d < t.dim(); ++d) cols.push_back(nz.select(1, d));
    return tuple_of(std::move(cols));
  }
  return wrap(std::move(nz));
  FASTT_PY_END
}
FASTT_FN(nonzero)

// ---- triangles, flips, rolls ----
#define FASTT_BIND_TRI(name)                                                \
  FASTT_METHOD(name) {                                                      \
    FASTT_PY_BEGIN                                                          \
    const Tensor& t = to_tensor(self, "input");                             \
    static const Signature sig{#name, {"diagonal"}, 0};                     \
    PyObject* a[1];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    return wrap(fastt::name(t, given(a[0]) ? to_int(a[0], "diagonal") : 0)); \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_METHOD(name##_) {                                                   \
    FASTT_PY_BEGIN                                                          \
    to_tensor(self, "input");                                               \
    static const Signature sig{#name "_", {"diagonal"}, 0};                 \
    PyObject* a[1];                                                         \
    parse_args(sig, args, nargs, kwnames, a);                               \
    fastt::name##_(unwrap_mut(self),                                        \
                   given(a[0]) ? to_int(a[0], "diagonal") : 0);             \
    return return_self(self);                                               \
    FASTT_PY_END                                                            \
  }                                                                         \
  FASTT_FN(name)
FASTT_BIND_TRI(tril)
FASTT_BIND_TRI(triu)

FASTT_METHOD(flip) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  SmallInts dims;
  if (kwnames) {
    static const Signature sig{"flip", {"dims"}, 1};
    PyObject* a[1];
    parse_args(sig, args, nargs, kwnames, a);
    parse_ints(a[0], &dims, "flip");
  } else {
    parse_varargs_ints(args, nargs, &dims, "flip");
  }
  return wrap(fastt::flip(t, dims.list()));
  FASTT_PY_END
}
FASTT_FN(flip)
FASTT_METHOD(roll) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"roll", {"shifts", "dims"}, 1};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  SmallInts shifts, dims;
  parse_ints(a[0], &shifts, "roll");
  if (given(a[1])) parse_ints(a[1], &dims, "roll");
  return wrap(fastt::roll(t, shifts.list(), dims.list()));
  FASTT_PY_END
}
FASTT_FN(roll)

// ---- sorting ----
FASTT_METHOD(sort) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"sort", {"dim", "descending", "$stable"}, 0};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  return values_indices(fastt::sort(
      t, given(a[0]) ? to_int(a[0], "dim") : -1,
      given(a[1]) && to_bool(a[1], "descending"),
      given(a[2]) && to_bool(a[2], "stable")));
  FASTT_PY_END
}
FASTT_FN(sort)
FASTT_METHOD(argsort) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"argsort", {"dim", "descending", "$stable"}, 0};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::argsort(t, given(a[0]) ? to_int(a[0], "dim") : -1,
                             given(a[1]) && to_bool(a[1], "descending"),
                             given(a[2]) && to_bool(a[2], "stable")));
  FASTT_PY_END
}
FASTT_FN(argsort)
FASTT_METHOD(topk) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"topk", {"k", "dim", "largest", "sorted"}, 1};
  PyObject* a[4];
  parse_args(sig, args, nargs, kwnames, a);
  return values_indices(fastt::topk(
      t, to_int(a[0], "k"), given(a[1]) ? to_int(a[1], "dim") : -1,
      given(a[2]) ? to_bool(a[2], "largest") : true,
      given(a[3]) ? to_bool(a[3], "sorted") : true));
  FASTT_PY_END
}
FASTT_FN(topk)

static PyObject* f_embedding(PyObject*, PyObject* const* args,
                             Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"embedding", {"input", "weight", "padding_idx"},
                             2};
  PyObject* a[3];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::embedding(to_tensor(a[1], "weight"),
                               to_tensor(a[0], "input"),
                               given(a[2]) ? to_int(a[2], "padding_idx") : -1));
  FASTT_PY_END
}
static PyObject* f_one_hot(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"one_hot", {"tensor", "num_classes"}, 1};
  PyObject* a[2];
  parse_args(sig, args, nargs, kwnames, a);
  return wrap(fastt::one_hot(to_tensor(a[0], "tensor"),
                             given(a[1]) ? to_int(a[1], "num_classes") : -1));
  FASTT_PY_END
}

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}
#define FASTT_M(name) FASTT_KW(#name, m_##name),
#define FASTT_F(name) FASTT_KW(#name, f_##name),
#define FASTT_INDEX_METHODS(X)                                              \
  X(split) X(chunk) X(unbind) X(repeat) X(index_select) X(gather)          \
  X(scatter) X(scatter_) X(scatter_add) X(scatter_add_) X(index_add)       \
  X(index_add_) X(index_put_) X(index_put) X(masked_select)                \
  X(masked_scatter_) X(masked_scatter) X(nonzero) X(tril) X(tril_) X(triu) \
  X(triu_) X(flip) X(roll) X(sort) X(argsort) X(topk)
#define FASTT_INDEX_FUNCTIONS(X)                                            \
  X(cat) X(stack) X(split) X(chunk) X(unbind) X(index_select) X(gather)    \
  X(scatter) X(scatter_add) X(index_add) X(index_put) X(masked_select)     \
  X(nonzero) X(tril) X(triu) X(flip) X(roll) X(sort) X(argsort) X(topk)    \
  X(embedding) X(one_hot)

PyMethodDef g_index_methods[] = {
    FASTT_INDEX_METHODS(FASTT_M){nullptr, nullptr, 0, nullptr}};
PyMethodDef g_index_functions[] = {
    FASTT_INDEX_FUNCTIONS(FASTT_F) FASTT_KW("concat", f_cat),
    FASTT_KW("concatenate", f_cat), {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

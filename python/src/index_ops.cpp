// Bindings of csrc/ops/index.h: cat/stack/split/chunk/unbind/repeat,
// index_select/gather/scatter*/index_add, masks, nonzero, tril/triu,
// flip/roll, sort/argsort/topk, index_put_.
#include "binder.h"

#include "csrc/ops/index.h"

namespace fastt {
namespace py {



// ---- joining and splitting ----
FASTT_BIND_FUNCTION(cat, 1,
                    (check_no_overlap(out, tensors, "cat"),
                     with_out(out, fastt::cat(tensors, dim), "cat")),
                    (Tensors, tensors), (IntOr<0>, dim), (Kw<Out>, out))
FASTT_BIND_FUNCTION(stack, 1,
                    (check_no_overlap(out, tensors, "stack"),
                     with_out(out, fastt::stack(tensors, dim), "stack")),
                    (Tensors, tensors), (IntOr<0>, dim), (Kw<Out>, out))
// split_size_or_sections: one chunk size, or the sizes of the sections.
struct SplitSizes {
  IntsValue sizes;
  bool sections;
};
namespace rd {
struct SplitArg {
  static constexpr const char* kStub = "Union[_int, Sequence[_int]]";
  static SplitSizes read(PyObject* o, const char* n) {
    SplitSizes r;
    r.sections = PyList_Check(o) || PyTuple_Check(o);
    parse_ints(o, &r.sizes, n);
    return r;
  }
};
}  // namespace rd
static std::vector<Tensor> split_by(const Tensor& t, const SplitSizes& s,
                                    int64_t dim) {
  if (s.sections) return fastt::split(t, s.sizes.list(), dim);
  return fastt::split(t, s.sizes.v[0], dim);
}
FASTT_BIND(split, 1, split_by(t, split_size_or_sections, dim),
           (SplitArg, split_size_or_sections), (IntOr<0>, dim))
FASTT_BIND(chunk, 1, fastt::chunk(t, chunks, dim), (Int, chunks),
           (IntOr<0>, dim))
FASTT_BIND(unbind, 0, fastt::unbind(t, dim), (IntOr<0>, dim))
FASTT_METHOD(repeat) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  SmallInts s;
  parse_varargs_ints(args, nargs, &s, "repeat");
  return wrap(fastt::repeat(t, s.list()));
  FASTT_PY_END
}

// ---- along a dim ----
FASTT_BIND(index_select, 2,
           with_out(out, fastt::index_select(t, dim, index), "index_select"),
           (Int, dim), (Tensor, index), (Kw<Out>, out))
// gather's out= must have self's dtype (torch casts nothing there).
static PyObject* out_of_dtype(PyObject* out, const Tensor& self,
                              const char* op) {
  if (given(out) && is_tensor(out) && unwrap(out).dtype() != self.dtype())
    throw RuntimeError(fmt::format(
        "{}(): Expected out tensor to have dtype {}, but got {} instead", op,
        dtype_name(self.dtype()), dtype_name(unwrap(out).dtype())));
  return out;
}
// sparse_grad: accepted (fastt's gradient is always dense, as torch's
// default).
FASTT_BIND(gather, 2,
           (check_no_overlap(out, {&t, &index}, "gather"),
            with_out(out_of_dtype(out, t, "gather"),
                     fastt::gather(t, dim, index), "gather")),
           (Int, dim), (Tensor, index), (Kw<BoolOr<false>>, sparse_grad),
           (Kw<Out>, out))

static PyObject* scatter_impl(PyObject* self, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames,
                              bool inplace) {
  to_tensor(self, "input");
  static const Signature sig{
      "scatter", {"dim", "index", "src", "$value", "$reduce"}, 2};
  PyObject* a[5];
  parse_args(sig, args, nargs, kwnames, a);
  int64_t dim = to_int(a[0], "dim");
  const Tensor& index = to_tensor(a[1], "index");
  PyObject* src = given(a[2]) ? a[2] : a[3];
  if (!src) throw TypeError("scatter() missing 'src' or 'value'");
  if (given(a[4])) {  // reduce='add' / 'multiply': the composite form
    PyObject* mod = PyImport_ImportModule("fastt._composite");
    if (!mod) throw_py();
    PyObject* r = PyObject_CallMethod(mod, "_scatter_with_reduce", "OOOOOO",
                                      self, a[0], a[1], src, a[4],
                                      inplace ? Py_True : Py_False);
    Py_DECREF(mod);
    if (!r) throw_py();
    return r;
  }
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
FASTT_BIND(scatter_add, 3, fastt::scatter_add(t, dim, index, src), (Int, dim),
           (Tensor, index), (Tensor, src))
FASTT_BIND_METHOD(scatter_add_, 3, fastt::scatter_add_(tm, dim, index, src),
                  (Int, dim), (Tensor, index), (Tensor, src))
FASTT_BIND(index_add, 3, fastt::index_add(t, dim, index, source, alpha),
           (Int, dim), (Tensor, index), (Tensor, source),
           (Kw<ScalarOr<1>>, alpha))
FASTT_BIND_METHOD(index_add_, 3,
                  fastt::index_add_(tm, dim, index, source, alpha), (Int, dim),
                  (Tensor, index), (Tensor, source),
                  (Kw<ScalarOr<1>>, alpha))

// ---- advanced indexing and masks ----
FASTT_BIND_METHOD(index_put_, 2,
                  fastt::index_put_(tm, indices, values, accumulate),
                  (Tensors, indices), (TensorLike, values),
                  (BoolOr<false>, accumulate))
FASTT_BIND(index_put, 2, fastt::index_put(t, indices, values, accumulate),
           (Tensors, indices), (TensorLike, values), (BoolOr<false>, accumulate))
FASTT_BIND(masked_select, 1,
           with_out(out, fastt::masked_select(t, mask), "masked_select"),
           (Tensor, mask), (Kw<Out>, out))
FASTT_BIND_METHOD(masked_scatter_, 2, fastt::masked_scatter_(tm, mask, source),
                  (Tensor, mask), (Tensor, source))
FASTT_BIND_METHOD(masked_scatter, 2, fastt::masked_scatter(t, mask, source),
                  (Tensor, mask), (Tensor, source))
// nonzero(as_tuple=True): one index tensor per dim.
static PyObject* nonzero_of(const Tensor& t, bool as_tuple) {
  Tensor nz = fastt::nonzero(t);
  if (!as_tuple) return wrap(std::move(nz));
  if (t.dim() == 0) {  // torch: (tensor([0]),) or (tensor([]),)
    Tensor idx = Tensor::empty({nz.size(0)}, DType::Int64);
    idx.fill_(Scalar(int64_t(0)));
    return tuple_of(std::move(idx));
  }
  std::vector<Tensor> cols;
  for (int64_t d = 0; d < t.dim(); ++d) cols.push_back(nz.select(1, d));
  return tuple_of(std::move(cols));
}
FASTT_BIND(nonzero, 0, nonzero_of(t, as_tuple), (Kw<BoolOr<false>>, as_tuple))

// ---- triangles, flips, rolls ----
FASTT_BIND(tril, 0, fastt::tril(t, diagonal), (IntOr<0>, diagonal))
FASTT_BIND_METHOD(tril_, 0, fastt::tril_(tm, diagonal), (IntOr<0>, diagonal))
FASTT_BIND(triu, 0, fastt::triu(t, diagonal), (IntOr<0>, diagonal))
FASTT_BIND_METHOD(triu_, 0, fastt::triu_(tm, diagonal), (IntOr<0>, diagonal))

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
FASTT_BIND(roll, 1, fastt::roll(t, shifts, dims), (Ints, shifts),
           (OptInts, dims))

// ---- sorting ----
FASTT_BIND(sort, 0, values_indices(fastt::sort(t, dim, descending, stable)),
           (IntOr<-1>, dim), (BoolOr<false>, descending),
           (Kw<BoolOr<false>>, stable))
FASTT_BIND(argsort, 0, fastt::argsort(t, dim, descending, stable),
           (IntOr<-1>, dim), (BoolOr<false>, descending),
           (Kw<BoolOr<false>>, stable))
FASTT_BIND(topk, 1, values_indices(fastt::topk(t, k, dim, largest, sorted)),
           (Int, k), (IntOr<-1>, dim), (BoolOr<true>, largest),
           (BoolOr<true>, sorted))

FASTT_BIND_FUNCTION(_select_kth, 3, fastt::select_kth(input, dim, which, k),
                    (Tensor, input), (Int, dim), (Int, which), (IntOr<0>, k))

FASTT_BIND_FUNCTION(_searchsorted, 2,
                    fastt::searchsorted(sorted, input, right, out_int32),
                    (Tensor, sorted), (Tensor, input), (BoolOr<false>, right),
                    (BoolOr<false>, out_int32))

FASTT_BIND_FUNCTION(_resample, 4,
                    fastt::resample(input, dim, idx, w, adjoint, size),
                    (Tensor, input), (Int, dim), (Tensor, idx), (Tensor, w),
                    (BoolOr<false>, adjoint), (IntOr<-1>, size))

FASTT_BIND_FUNCTION(_interp_taps, 5,
                    fastt::interp_taps(n, o, scale, align_corners, cubic,
                                       f64 ? fastt::DType::Float64
                                           : fastt::DType::Float32),
                    (Int, n), (Int, o), (DoubleOr<Zero>, scale),
                    (BoolOr<false>, align_corners), (BoolOr<false>, cubic),
                    (BoolOr<false>, f64))

FASTT_BIND_FUNCTION(embedding, 2, fastt::embedding(weight, input, padding_idx),
                    (Tensor, input), (Tensor, weight),
                    (IntOr<-1>, padding_idx))
FASTT_BIND_FUNCTION(one_hot, 1, fastt::one_hot(tensor, num_classes),
                    (Tensor, tensor), (IntOr<-1>, num_classes))

#define FASTT_KW(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}
#define FASTT_M(name) FASTT_KW(#name, m_##name),
#define FASTT_F(name) FASTT_KW(#name, f_##name),
#define FASTT_INDEX_METHODS(X) \
  X(repeat) X(scatter) X(scatter_) X(flip)
#define FASTT_INDEX_FUNCTIONS(X) \
  X(scatter) X(flip)

PyMethodDef g_index_methods[] = {
    FASTT_INDEX_METHODS(FASTT_M){nullptr, nullptr, 0, nullptr}};
PyMethodDef g_index_functions[] = {
    FASTT_INDEX_FUNCTIONS(FASTT_F) FASTT_KW("concat", f_cat),
    FASTT_KW("concatenate", f_cat), {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

// t[index] and t[index] = value with torch's rules: ints select, slices
// (positive steps) narrow, None inserts a dim, one Ellipsis fills the rest,
// and integer / bool tensors (or lists) are advanced indices lowered to
// fastt::index / index_put_. Basic indexing always returns a view.
#include <vector>

#include "common.h"
#include "csrc/ops/index.h"

namespace fastt {
namespace py {

namespace {

// How many dims of the indexed tensor one index item consumes.
int64_t consumed_dims(PyObject* item, const Tensor* as_tensor) {
  if (item == Py_None || item == Py_Ellipsis || PyBool_Check(item)) return 0;
  if (as_tensor) {
    DType d = as_tensor->dtype();
    if (d == DType::Bool || d == DType::UInt8) return as_tensor->dim();
    return 1;
  }
  return 1;
}

bool is_int_index(PyObject* o) {
  if (PyLong_CheckExact(o)) return true;
  if (PyBool_Check(o) || PyFloat_Check(o)) return false;
  if (is_tensor(o)) {
    const Tensor& t = unwrap(o);
    return t.dim() == 0 && is_integral(t.dtype(), false);
  }
  return PyLong_Check(o) ||
         (!PySequence_Check(o) && Py_TYPE(o)->tp_as_number &&
          Py_TYPE(o)->tp_as_number->nb_index);
}

int64_t int_index(PyObject* o) {
  if (is_tensor(o)) return unwrap(o).item().to_int();
  return to_int(o, "index");
}

// Tensor-like advanced index: a Tensor, list or array.
bool advanced_tensor(PyObject* o, Tensor* out) {
  if (is_tensor(o)) {
    *out = unwrap(o);
    return true;
  }
  if (PyList_Check(o) || (PyObject_CheckBuffer(o) && !PyBytes_Check(o))) {
    *out = tensor_from_data(o, nullptr, nullptr, false);
    if (out->numel() == 0 && is_floating(out->dtype()))
      *out = out->to(DType::Int64);
    return true;
  }
  return false;
}

struct Indexed {
  Tensor view;                 // after basic indexing
  std::vector<Tensor> adv;     // aten::index list; undefined = full
  bool has_adv = false;
};

Indexed apply_index(const Tensor& self, PyObject* index) {
  PyObject* single[1] = {index};
  PyObject* const* items = single;
  Py_ssize_t n = 1;
  if (PyTuple_Check(index)) {
    items = &PyTuple_GET_ITEM(index, 0);
    n = PyTuple_GET_SIZE(index);
  }
  // Convert tensor-like items once and count the dims they consume.
  std::vector<Tensor> tensors(static_cast<size_t>(n));
  std::vector<char> is_adv(static_cast<size_t>(n), 0);
  int64_t consumed = 0;
  int ellipses = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* it = items[i];
    if (it == Py_Ellipsis) {
      ++ellipses;
      continue;
    }
    if (it == Py_None || PyBool_Check(it) || PySlice_Check(it)) {
      consumed += consumed_dims(it, nullptr);
      continue;
    }
    if (is_int_index(it)) {
      ++consumed;
      continue;
    }
    if (!advanced_tensor(it, &tensors[size_t(i)])) {
      PyErr_Format(PyExc_IndexError,
                   "only integers, slices (`:`), ellipsis (`...`), None and "
                   "long or byte Variables are valid indices (got %s)",
                   Py_TYPE(it)->tp_name);
      throw_py();
    }
    const Tensor& t = tensors[size_t(i)];
    FASTT_CHECK(is_integral(t.dtype(), true), IndexError,
                "tensors used as indices must be long, int, byte or bool "
                "tensors");
    is_adv[size_t(i)] = 1;
    consumed += consumed_dims(it, &t);
  }
  FASTT_CHECK(ellipses <= 1, IndexError,
              "an index can only have a single ellipsis ('...')");
  FASTT_CHECK(consumed <= self.dim(), IndexError,
              "too many indices for tensor of dimension {}", self.dim());

  Indexed r;
  r.view = self;
  int64_t d = 0;  // current dim of r.view
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* it = items[i];
    if (is_adv[size_t(i)]) {
      r.adv.push_back(tensors[size_t(i)]);
      r.has_adv = true;
      d += consumed_dims(it, &tensors[size_t(i)]);
      continue;
    }
    if (PySlice_Check(it)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) throw_py();
      FASTT_CHECK(step > 0, ValueError, "step must be greater than zero");
      r.view = r.view.slice(d, start, stop, step);
      r.adv.emplace_back();
      ++d;
    } else if (it == Py_None) {
      r.view = r.view.unsqueeze(d);
      r.adv.emplace_back();
      ++d;
    } else if (PyBool_Check(it)) {
      // As torch: a bool is an advanced index ([0] or []) over a new
      // size-1 dim, so several bools broadcast into one dim.
      r.view = r.view.unsqueeze(d);
      Tensor idx = Tensor::empty({it == Py_True ? 1 : 0}, DType::Int64,
                                 self.device());
      idx.zero_();
      r.adv.push_back(std::move(idx));
      r.has_adv = true;
      ++d;
    } else if (it == Py_Ellipsis) {
      d += self.dim() - consumed;
      r.adv.resize(r.adv.size() + size_t(self.dim() - consumed));
    } else {
      r.view = r.view.select(d, int_index(it));
    }
  }
  while (!r.adv.empty() && !r.adv.back().defined()) r.adv.pop_back();
  return r;
}

}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* index) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  // Fast paths for the common single-item cases.
  if (PyLong_CheckExact(index)) {
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (overflow) throw IndexError("index out of range");
    return wrap(t.select(0, i));
  }
  if (PySlice_Check(index)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(index, &start, &stop, &step) < 0) return nullptr;
    FASTT_CHECK(step > 0, ValueError, "step must be greater than zero");
    return wrap(t.slice(0, start, stop, step));
  }
  Indexed r = apply_index(t, index);
  if (r.has_adv) {
    Tensor& v = r.view;
    return wrap(maybe_release_gil(v.numel(), [&] {
      return fastt::index(v, r.adv);
    }));
  }
  if (r.view.is_same(t)) return wrap(t.alias());
  return wrap(std::move(r.view));
  FASTT_PY_END
}

// torch's slicePrefix1sDims: a value's leading size-1 dims are dropped
// before it broadcasts to the indexed shape (x[0] = y[None] works).
static Tensor drop_leading_ones(Tensor v) {
  while (v.dim() > 0 && v.sizes()[0] == 1) v = v.select(0, 0);
  return v;
}

int tensor_setitem(PyObject* self, PyObject* index, PyObject* value) {
  FASTT_PY_BEGIN
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items");
    return -1;
  }
  const Tensor& t = unwrap(self);
  Indexed r = apply_index(t, index);
  Scalar s;
  bool is_scalar = !is_tensor(value) && try_scalar(value, &s);
  if (r.has_adv) {
    Tensor v;
    if (is_scalar) {
      v = Tensor::empty({}, t.dtype(), t.device());
      v.fill_(s);
    } else {
      v = drop_leading_ones(to_tensor_like(value, "value"));
    }
    maybe_release_gil(r.view.numel(), [&]() -> Tensor& {
      return fastt::index_put_(r.view, r.adv, v);
    });
    t.bump_version();
    return 0;
  }
  Tensor& v = r.view;
  if (is_scalar) {
    maybe_release_gil(v.numel(), [&]() -> Tensor& { return v.fill_(s); });
  } else {
    Tensor src = drop_leading_ones(to_tensor_like(value, "value"));
    maybe_release_gil(v.numel(), [&]() -> Tensor& { return v.copy_(src); });
  }
  return 0;
  FASTT_PY_END_INT
}

}  // namespace py
}  // namespace fastt

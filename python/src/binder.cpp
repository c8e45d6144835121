// The binder's result conversions and list reader (binder.h).
#include "binder.h"

namespace fastt {
namespace py {

PyObject* pack(PyObject** items, Py_ssize_t n) {
  PyObject* t = PyTuple_New(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!items[i] || !t) {
      for (Py_ssize_t k = 0; k < n; ++k) Py_XDECREF(items[k]);
      Py_XDECREF(t);
      throw_py();
    }
  }
  for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(t, i, items[i]);
  return t;
}

PyObject* tuple_of(std::vector<Tensor>&& v) {
  PyObject* t = PyTuple_New(Py_ssize_t(v.size()));
  if (!t) throw_py();
  for (size_t i = 0; i < v.size(); ++i) {
    PyObject* x = wrap_or_none(std::move(v[i]));
    if (!x) {
      Py_DECREF(t);
      throw_py();
    }
    PyTuple_SET_ITEM(t, Py_ssize_t(i), x);
  }
  return t;
}

PyObject* values_indices(Tensor&& values, Tensor&& indices) {
  static PyTypeObject* type = nullptr;
  if (!type) {
    static PyStructSequence_Field fields[] = {
        {"values", nullptr}, {"indices", nullptr}, {nullptr, nullptr}};
    static PyStructSequence_Desc desc = {"fastt.return_types.values_indices",
                                         nullptr, fields, 2};
    type = PyStructSequence_NewType(&desc);
    if (!type) throw_py();
  }
  PyObject* r = PyStructSequence_New(type);
  if (!r) throw_py();
  PyObject* a = wrap(std::move(values));
  PyObject* b = wrap(std::move(indices));
  PyStructSequence_SET_ITEM(r, 0, a);
  PyStructSequence_SET_ITEM(r, 1, b);
  if (!a || !b) {
    Py_DECREF(r);
    throw_py();
  }
  return r;
}

namespace rd {
void missing(const char* fname, const char* name) {
  PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
               name);
  throw_py();
}

std::vector<fastt::Tensor> Tensors::read(PyObject* o, const char* n) {
  if (!PyList_Check(o) && !PyTuple_Check(o)) {
    PyErr_Format(PyExc_TypeError,
                 "%s must be a tuple or list of Tensors, not %s", n,
                 Py_TYPE(o)->tp_name);
    throw_py();
  }
  Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
  std::vector<fastt::Tensor> v;
  v.reserve(size_t(len));
  for (Py_ssize_t i = 0; i < len; ++i)
    v.push_back(to_tensor(PySequence_Fast_ITEMS(o)[i], n));
  return v;
}
}  // namespace rd

}  // namespace py
}  // namespace fastt

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

static std::vector<BindRow*>& rows() {
  static std::vector<BindRow*> v;  // filled by static initialisers
  return v;
}

BindRow::BindRow(const char* name, BindKind k, MethodFn fn, const Signature* s,
                 const char* const* st, const bool* req, std::string res)
    : def{name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)),
          METH_FASTCALL | METH_KEYWORDS, nullptr},
      kind(k),
      sig(s),
      stubs(st),
      required(req),
      result(std::move(res)) {
  rows().push_back(this);
}

// fastt._C._bind_rows(): [(name, kind, [(arg, stub type, required,
// keyword-only)], result stub type)] for scripts/gen_stubs.py.
static PyObject* f_bind_rows(PyObject*, PyObject*) {
  static const char* const kinds[] = {"method", "input_function", "function"};
  PyObject* list = PyList_New(0);
  if (!list) return nullptr;
  for (const BindRow* r : rows()) {
    const Signature& sig = *r->sig;
    PyObject* args = PyList_New(0);
    for (int i = 0; args && i < 10 && sig.names[i]; ++i) {
      PyObject* a = Py_BuildValue("(ssOO)", sig.names[i], r->stubs[i],
                                  i < sig.nreq || r->required[i] ? Py_True
                                                                 : Py_False,
                                  i >= sig.npos ? Py_True : Py_False);
      if (!a || PyList_Append(args, a) < 0) Py_CLEAR(args);
      Py_XDECREF(a);
    }
    PyObject* row =
        args ? Py_BuildValue("(ssNs)", r->def.ml_name, kinds[int(r->kind)],
                             args, r->result.c_str())
             : nullptr;
    if (!row || PyList_Append(list, row) < 0) {
      Py_XDECREF(row);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(row);
  }
  return list;
}

static PyMethodDef g_bind_rows_def = {"_bind_rows", f_bind_rows, METH_NOARGS,
                                      nullptr};

static bool bound_twice(const char* where, const char* name) {
  PyErr_Format(PyExc_ImportError, "fastt: %s.%s is bound twice", where, name);
  return false;
}

bool add_bind_rows(PyObject* m) {
  PyObject* dict = TensorType.tp_dict;
  PyObject* module_name = PyModule_GetNameObject(m);
  if (!module_name) return false;
  bool ok = true;
  for (BindRow* r : rows()) {
    const char* name = r->def.ml_name;
    PyObject* obj;
    if (r->kind == BindKind::Method) {
      if (PyDict_GetItemString(dict, name)) {
        ok = bound_twice("Tensor", name);
        break;
      }
      obj = PyDescr_NewMethod(&TensorType, &r->def);
      ok = obj && PyDict_SetItemString(dict, name, obj) == 0;
    } else {
      if (PyObject_HasAttrString(m, name)) {
        ok = bound_twice("fastt._C", name);
        break;
      }
      obj = PyCFunction_NewEx(&r->def, m, module_name);
      ok = obj && PyModule_AddObjectRef(m, name, obj) == 0;
    }
    Py_XDECREF(obj);
    if (!ok) break;
  }
  Py_DECREF(module_name);
  PyType_Modified(&TensorType);
  if (!ok) return false;
  PyObject* f = PyCFunction_NewEx(&g_bind_rows_def, m, nullptr);
  ok = f && PyModule_AddObjectRef(m, "_bind_rows", f) == 0;
  Py_XDECREF(f);
  return ok;
}

namespace rd {
void missing(const char* fname, const char* name) {
  PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
               name);
  throw_py();
}

std::vector<fastt::Tensor> tensor_seq(PyObject* o, const char* n,
                                      const char* fname, bool allow_none) {
  std::vector<fastt::Tensor> v;
  if (!given(o)) return v;
  if (is_tensor(o)) {
    v.push_back(unwrap(o));
    return v;
  }
  const std::string what = std::string(fname) + ": " + n;
  PyObject* seq = PySequence_Fast(o, what.c_str());
  if (!seq) throw_py();
  const Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < len; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    if (allow_none && item == Py_None) {
      v.emplace_back();
      continue;
    }
    if (!is_tensor(item)) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError,
                   "%s: expected a sequence of Tensors, got an element of "
                   "type %s",
                   what.c_str(), Py_TYPE(item)->tp_name);
      throw_py();
    }
    v.push_back(unwrap(item));
  }
  Py_DECREF(seq);
  return v;
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

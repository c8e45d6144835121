// Bindings of fastt's autograd (csrc/autograd.h): the Tensor attributes and
// methods (requires_grad, grad, grad_fn, backward, hooks, detach), grad
// mode switches, and the grad_fn objects. The context managers and
// fastt.autograd.grad live in python/fastt/autograd.py over these.
#include <memory>

#include "autograd/node.h"
#include "binder.h"

namespace fastt {
namespace py {

// ---- grad_fn objects ----
struct GradFnObject {
  PyObject_HEAD
  autograd::Node* node;
};
extern PyTypeObject GradFnType;

static PyObject* wrap_node(autograd::Node* n) {
  if (!n) Py_RETURN_NONE;
  auto* o = PyObject_New(GradFnObject, &GradFnType);
  if (!o) return nullptr;
  autograd::retain(n);
  o->node = n;
  return reinterpret_cast<PyObject*>(o);
}
static void gradfn_dealloc(PyObject* self) {
  autograd::release(reinterpret_cast<GradFnObject*>(self)->node);
  PyObject_Free(self);
}
static const char* node_name(PyObject* self) {
  return autograd::grad_fn_name(reinterpret_cast<GradFnObject*>(self)->node->fn);
}
static PyObject* gradfn_repr(PyObject* self) {
  return PyUnicode_FromFormat("<%s object at %p>", node_name(self),
                              reinterpret_cast<GradFnObject*>(self)->node);
}
static PyObject* gradfn_name(PyObject* self, PyObject*) {
  return PyUnicode_FromString(node_name(self));
}
static PyObject* gradfn_next(PyObject* self, void*) {
  autograd::Node* n = reinterpret_cast<GradFnObject*>(self)->node;
  PyObject* t = PyTuple_New(Py_ssize_t(n->next.size()));
  if (!t) return nullptr;
  for (size_t i = 0; i < n->next.size(); ++i) {
    PyObject* f = wrap_node(n->next[i].node);
    if (!f) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, Py_ssize_t(i),
                     Py_BuildValue("(NI)", f, n->next[i].input_nr));
  }
  return t;
}
static PyObject* gradfn_variable(PyObject* self, void*) {
  autograd::Node* n = reinterpret_cast<GradFnObject*>(self)->node;
  if (n->fn != autograd::GradFn::AccumulateGrad || n->saved.empty()) {
    PyErr_SetString(PyExc_AttributeError,
                    "only AccumulateGrad nodes have a .variable");
    return nullptr;
  }
  return wrap(n->saved[0].data);
}
static PyObject* gradfn_richcompare(PyObject* a, PyObject* b, int op) {
  if (Py_TYPE(b) != &GradFnType || (op != Py_EQ && op != Py_NE))
    Py_RETURN_NOTIMPLEMENTED;
  bool eq = reinterpret_cast<GradFnObject*>(a)->node ==
            reinterpret_cast<GradFnObject*>(b)->node;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}
static Py_hash_t gradfn_hash(PyObject* self) {
  return Py_hash_t(reinterpret_cast<uintptr_t>(
                       reinterpret_cast<GradFnObject*>(self)->node) >>
                   4);
}
static PyMethodDef g_gradfn_methods[] = {
    {"name", gradfn_name, METH_NOARGS, "The node's readable name."},
    {nullptr, nullptr, 0, nullptr}};
static PyGetSetDef g_gradfn_getset[] = {
    {"next_functions", gradfn_next, nullptr,
     "(grad_fn, output index) for each input.", nullptr},
    {"variable", gradfn_variable, nullptr, "AccumulateGrad's leaf.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject GradFnType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt._C._GradFn";
  t.tp_basicsize = sizeof(GradFnObject);
  t.tp_dealloc = gradfn_dealloc;
  t.tp_repr = gradfn_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "A node of the autograd graph (a tensor's grad_fn).";
  t.tp_methods = g_gradfn_methods;
  t.tp_getset = g_gradfn_getset;
  t.tp_richcompare = gradfn_richcompare;
  t.tp_hash = gradfn_hash;
  return t;
}();

// ---- hook handles ----
struct HookHandleObject {
  PyObject_HEAD
  Tensor t;
  int64_t id;
};
static void handle_dealloc(PyObject* self) {
  reinterpret_cast<HookHandleObject*>(self)->t.~Tensor();
  PyObject_Free(self);
}
static PyObject* handle_remove(PyObject* self, PyObject*) {
  auto* h = reinterpret_cast<HookHandleObject*>(self);
  if (h->t.defined()) fastt::remove_hook(h->t, h->id);
  h->t = Tensor();
  Py_RETURN_NONE;
}
static PyMethodDef g_handle_methods[] = {
    {"remove", handle_remove, METH_NOARGS, "Unregisters the hook."},
    {nullptr, nullptr, 0, nullptr}};
PyTypeObject HookHandleType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt._C._RemovableHandle";
  t.tp_basicsize = sizeof(HookHandleObject);
  t.tp_dealloc = handle_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_methods = g_handle_methods;
  return t;
}();

// A Python callable kept alive by the C++ hook that calls it.
struct PyCallable {
  PyObject* fn;
  explicit PyCallable(PyObject* f) : fn(f) { Py_INCREF(f); }
  ~PyCallable() {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(fn);
    PyGILState_Release(s);
  }
};

// ---- Tensor attributes ----
PyObject* get_requires_grad(PyObject* self, void*) {
  return PyBool_FromLong(unwrap(self).impl()->requires_grad);
}
int set_requires_grad(PyObject* self, PyObject* v, void*) {
  FASTT_PY_BEGIN
  FASTT_CHECK(v != nullptr, TypeError, "cannot delete requires_grad");
  fastt::requires_grad_(unwrap_mut(self), PyObject_IsTrue(v) == 1);
  return 0;
  FASTT_PY_END_INT
}
PyObject* get_grad(PyObject* self, void*) {
  FASTT_PY_BEGIN
  Tensor g = fastt::grad(unwrap(self));
  if (!g.defined()) Py_RETURN_NONE;
  return wrap(std::move(g));
  FASTT_PY_END
}
int set_grad(PyObject* self, PyObject* v, void*) {
  FASTT_PY_BEGIN
  if (!v || v == Py_None) {
    fastt::set_grad(unwrap(self), Tensor());
    return 0;
  }
  fastt::set_grad(unwrap(self), to_tensor(v, "grad"));
  return 0;
  FASTT_PY_END_INT
}
PyObject* get_grad_fn(PyObject* self, void*) {
  return wrap_node(unwrap(self).impl()->grad_fn);
}
PyObject* get_is_leaf(PyObject* self, void*) {
  return PyBool_FromLong(unwrap(self).impl()->grad_fn == nullptr);
}
PyObject* get_retains_grad(PyObject* self, void*) {
  return PyBool_FromLong(fastt::retains_grad(unwrap(self)));
}
PyObject* get_version(PyObject* self, void*) {
  return PyLong_FromUnsignedLong(unwrap(self).storage()->version());
}
PyObject* get_base(PyObject* self, void*) {
  TensorImpl* b = unwrap(self).impl()->view_base;
  if (!b) Py_RETURN_NONE;
  b->refcount.fetch_add(1, std::memory_order_relaxed);
  return wrap(Tensor(b));
}
PyObject* get_data(PyObject* self, void*) {
  FASTT_PY_BEGIN
  return wrap(fastt::detach(unwrap(self)));
  FASTT_PY_END
}
int set_data(PyObject* self, PyObject* value, void*) {
  FASTT_PY_BEGIN
  FASTT_CHECK(value != nullptr, TypeError, "cannot delete Tensor.data");
  fastt::set_data(unwrap(self), to_tensor(value, "data"));
  return 0;
  FASTT_PY_END_INT
}

// ---- Tensor methods ----
FASTT_BIND_METHOD(requires_grad_, 0,
                  fastt::requires_grad_(tm, requires_grad),
                  (BoolOr<true>, requires_grad))

// retain_graph defaults to create_graph (torch).
FASTT_BIND_METHOD(backward, 0,
                  (fastt::backward({t}, gradient.defined()
                                            ? std::vector<Tensor>{gradient}
                                            : std::vector<Tensor>{},
                                   retain_graph.value_or(create_graph),
                                   create_graph, inputs),
                   NoneResult{}),
                  (OptTensor, gradient), (OptBool, retain_graph),
                  (BoolOr<false>, create_graph), (TensorSeq<false>, inputs))

static PyObject* m_detach(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  return wrap(fastt::detach(unwrap(self)));
  FASTT_PY_END
}
static PyObject* m_detach_(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  fastt::detach_(unwrap_mut(self));
  Py_INCREF(self);
  return self;
  FASTT_PY_END
}
static PyObject* m_retain_grad(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  fastt::retain_grad(unwrap(self));
  Py_RETURN_NONE;
  FASTT_PY_END
}
static PyObject* m_is_view(PyObject* self, PyObject*) {
  return PyBool_FromLong(unwrap(self).impl()->view_base != nullptr);
}
static PyObject* m_register_hook(PyObject* self, PyObject* hook) {
  FASTT_PY_BEGIN
  FASTT_CHECK(PyCallable_Check(hook), TypeError,
              "register_hook: expected a callable, got {}",
              Py_TYPE(hook)->tp_name);
  auto holder = std::make_shared<PyCallable>(hook);
  const Tensor& t = unwrap(self);
  int64_t id = fastt::register_hook(t, [holder](const Tensor& g) -> Tensor {
    PyObject* arg = wrap(g);
    if (!arg) throw_py();
    PyObject* r = PyObject_CallOneArg(holder->fn, arg);
    Py_DECREF(arg);
    if (!r) throw_py();
    if (r == Py_None) {
      Py_DECREF(r);
      return Tensor();
    }
    if (!is_tensor(r)) {
      Py_DECREF(r);
      throw TypeError("a tensor hook must return None or a Tensor");
    }
    Tensor out = unwrap(r);
    Py_DECREF(r);
    return out;
  });
  auto* h = PyObject_New(HookHandleObject, &HookHandleType);
  if (!h) return nullptr;
  new (&h->t) Tensor(t);
  h->id = id;
  return reinterpret_cast<PyObject*>(h);
  FASTT_PY_END
}

// Tensor._make_subclass(cls, data, require_grad=False): an instance of the
// Tensor subclass `cls` sharing data's memory (nn.Parameter uses it).
static PyObject* m_make_subclass(PyObject*, PyObject* const* args,
                                 Py_ssize_t nargs, PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const Signature sig{"_make_subclass",
                             {"cls", "data", "require_grad"}, 2};
  PyObject* a[3] = {nullptr, nullptr, nullptr};
  parse_args(sig, args, nargs, kwnames, a);
  FASTT_CHECK(PyType_Check(a[0]) &&
                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(a[0]),
                                   &TensorType),
              TypeError, "_make_subclass: cls must be a Tensor subclass");
  auto* type = reinterpret_cast<PyTypeObject*>(a[0]);
  const Tensor& d = to_tensor(a[1], "data");
  // A new identity over the same memory: no history, not a view.
  Tensor t = Tensor::from_storage(d.storage(), d.sizes(), d.strides(),
                                  d.storage_offset(), d.dtype());
  if (given(a[2]) && PyObject_IsTrue(a[2])) fastt::requires_grad_(t, true);
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  auto* o = reinterpret_cast<TensorObject*>(obj);
  new (&o->t) Tensor(std::move(t));
  o->weakrefs = nullptr;
  return obj;
  FASTT_PY_END
}

PyMethodDef g_autograd_methods[] = {
    {"detach", m_detach, METH_NOARGS, nullptr},
    {"detach_", m_detach_, METH_NOARGS, nullptr},
    {"retain_grad", m_retain_grad, METH_NOARGS, nullptr},
    {"register_hook", m_register_hook, METH_O, nullptr},
    {"_is_view", m_is_view, METH_NOARGS, nullptr},
    {"_make_subclass", reinterpret_cast<PyCFunction>(
                           reinterpret_cast<void (*)()>(m_make_subclass)),
     METH_FASTCALL | METH_KEYWORDS | METH_STATIC, nullptr},
    {nullptr, nullptr, 0, nullptr}};

// ---- module functions ----
static PyObject* f_is_grad_enabled(PyObject*, PyObject*) {
  return PyBool_FromLong(autograd::grad_enabled());
}
static PyObject* f_set_grad_enabled(PyObject*, PyObject* on) {
  autograd::set_grad_enabled(PyObject_IsTrue(on) == 1);
  Py_RETURN_NONE;
}
static PyObject* f_is_inference_mode_enabled(PyObject*, PyObject*) {
  return PyBool_FromLong(autograd::inference_mode_enabled());
}
static PyObject* f_set_inference_mode(PyObject*, PyObject* on) {
  autograd::t_inference_mode = PyObject_IsTrue(on) == 1;
  Py_RETURN_NONE;
}

FASTT_BIND_FUNCTION(_run_backward, 1,
                    (fastt::backward(tensors, grad_tensors,
                                     retain_graph.value_or(create_graph),
                                     create_graph, inputs),
                     NoneResult{}),
                    (TensorSeq<false>, tensors),
                    (TensorSeq<true>, grad_tensors), (OptBool, retain_graph),
                    (BoolOr<false>, create_graph), (TensorSeq<false>, inputs))
FASTT_BIND_FUNCTION(_run_grad, 2,
                    fastt::grad(outputs, inputs, grad_outputs,
                                retain_graph.value_or(create_graph),
                                create_graph, allow_unused),
                    (TensorSeq<false>, outputs), (TensorSeq<false>, inputs),
                    (TensorSeq<true>, grad_outputs), (OptBool, retain_graph),
                    (BoolOr<false>, create_graph),
                    (BoolOr<false>, allow_unused))

PyMethodDef g_autograd_functions[] = {
    {"is_grad_enabled", f_is_grad_enabled, METH_NOARGS,
     "Whether ops record for autograd in this thread."},
    {"_set_grad_enabled", f_set_grad_enabled, METH_O, nullptr},
    {"is_inference_mode_enabled", f_is_inference_mode_enabled, METH_NOARGS,
     nullptr},
    {"_set_inference_mode", f_set_inference_mode, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr}};

bool init_autograd_types(PyObject* m) {
  if (PyType_Ready(&GradFnType) < 0 || PyType_Ready(&HookHandleType) < 0)
    return false;
  Py_INCREF(&GradFnType);
  Py_INCREF(&HookHandleType);
  return PyModule_AddObject(m, "_GradFn",
                            reinterpret_cast<PyObject*>(&GradFnType)) == 0 &&
         PyModule_AddObject(m, "_RemovableHandle",
                            reinterpret_cast<PyObject*>(&HookHandleType)) == 0;
}

}  // namespace py
}  // namespace fastt

// Bindings of fastt's autograd (csrc/autograd.h): the Tensor attributes and
// methods (requires_grad, grad, grad_fn, backward, hooks, detach), grad
// mode switches, and the grad_fn objects. The context managers and
// fastt.autograd.grad live in python/fastt/autograd.py over these.
#include <memory>

#include "autograd/node.h"
#include "csrc/autocast.h"
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
  return autograd::node_name(*reinterpret_cast<GradFnObject*>(self)->node);
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
// A custom Function's node answers the attributes of its ctx (torch's
// grad_fn of a custom Function is the ctx): saved_tensors, needs_input_grad,
// whatever forward stored.
static PyObject* custom_ctx(autograd::Node* n);
static PyObject* gradfn_getattro(PyObject* self, PyObject* name) {
  PyObject* r = PyObject_GenericGetAttr(self, name);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyObject* ctx = custom_ctx(reinterpret_cast<GradFnObject*>(self)->node);
  if (!ctx) return nullptr;  // the AttributeError stays
  PyErr_Clear();
  return PyObject_GetAttr(ctx, name);
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
  t.tp_getattro = gradfn_getattro;
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

// ---- custom Functions (fastt.autograd.Function) ----
// The node's backward calls ctx._fastt_backward(grads, saved) under the
// GIL. The node owns the ctx; the ctx reaches the node through a capsule
// (ctx._fastt_node) that this object clears when the node dies.
struct PyCustomBackward final : CustomBackward {
  PyObject* ctx;
  explicit PyCustomBackward(PyObject* c) : ctx(c) { Py_INCREF(c); }
  ~PyCustomBackward() override {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE s = PyGILState_Ensure();
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyObject_SetAttrString(ctx, "_fastt_node", Py_None) < 0)
      PyErr_Clear();
    Py_DECREF(ctx);
    PyErr_Restore(type, value, tb);
    PyGILState_Release(s);
  }
  std::vector<Tensor> backward(std::vector<Tensor> grads,
                               std::vector<Tensor> saved) override {
    struct Gil {
      PyGILState_STATE s = PyGILState_Ensure();
      ~Gil() { PyGILState_Release(s); }
    } gil;
    PyObject* g = tensors_to_tuple(grads);
    if (!g) throw_py();
    PyObject* sv = tensors_to_tuple(saved);
    if (!sv) {
      Py_DECREF(g);
      throw_py();
    }
    PyObject* r = PyObject_CallMethod(ctx, "_fastt_backward", "(NN)", g, sv);
    if (!r) throw_py();
    PyObject* seq = PySequence_Fast(r, "backward must return a sequence");
    Py_DECREF(r);
    if (!seq) throw_py();
    std::vector<Tensor> out;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* x = PySequence_Fast_GET_ITEM(seq, i);
      if (x == Py_None) {
        out.emplace_back();
      } else if (is_tensor(x)) {
        out.push_back(unwrap(x));
      } else {
        Py_DECREF(seq);
        throw TypeError(fmt::format(
            "backward: expected a Tensor or None as gradient {}, got {}", i,
            Py_TYPE(x)->tp_name));
      }
    }
    Py_DECREF(seq);
    return out;
  }
  static PyObject* tensors_to_tuple(const std::vector<Tensor>& v) {
    PyObject* t = PyTuple_New(Py_ssize_t(v.size()));
    if (!t) return nullptr;
    for (size_t i = 0; i < v.size(); ++i) {
      PyObject* x;
      if (v[i].defined()) {
        x = wrap(v[i]);
        if (!x) {
          Py_DECREF(t);
          return nullptr;
        }
      } else {
        x = Py_NewRef(Py_None);
      }
      PyTuple_SET_ITEM(t, Py_ssize_t(i), x);
    }
    return t;
  }
};

// A sequence of tensors (None: undefined when allow_none).
static std::vector<Tensor> tensor_list(PyObject* o, const char* what,
                                       bool allow_none) {
  std::vector<Tensor> v;
  if (o == Py_None) return v;
  PyObject* seq = PySequence_Fast(o, what);
  if (!seq) throw_py();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* x = PySequence_Fast_GET_ITEM(seq, i);
    if (x == Py_None && allow_none) {
      v.emplace_back();
    } else if (is_tensor(x)) {
      v.push_back(unwrap(x));
    } else {
      Py_DECREF(seq);
      throw TypeError(fmt::format("{}: expected Tensors{}, got {} at {}",
                                  what, allow_none ? " or None" : "",
                                  Py_TYPE(x)->tp_name, i));
    }
  }
  Py_DECREF(seq);
  return v;
}

static const char* kNodeCapsule = "fastt._C._CustomNode";

static PyObject* custom_ctx(autograd::Node* n) {
  if (n->fn != autograd::GradFn::Custom || !n->extra || !n->extra->custom)
    return nullptr;
  auto* p = dynamic_cast<PyCustomBackward*>(n->extra->custom->fn.get());
  return p ? p->ctx : nullptr;
}

// _record_function(ctx, name, inputs, outputs, save, dirty,
//                  non_differentiable, materialize_grads) -> list: the
// outputs to hand out (the same objects where they took the history
// themselves; new aliases for returned inputs).
static PyObject* f_record_function(PyObject*, PyObject* const* args,
                                   Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  FASTT_CHECK(nargs == 8, TypeError,
              "_record_function takes 8 arguments ({} given)", nargs);
  PyObject* ctx = args[0];
  CustomRecord r;
  const char* name = PyUnicode_AsUTF8(args[1]);
  if (!name) throw_py();
  r.name = name;
  r.inputs = tensor_list(args[2], "inputs", true);
  r.outputs = tensor_list(args[3], "outputs", true);
  r.save = tensor_list(args[4], "save_for_backward", true);
  r.dirty = tensor_list(args[5], "mark_dirty", false);
  r.non_differentiable = tensor_list(args[6], "mark_non_differentiable",
                                     false);
  r.materialize_grads = PyObject_IsTrue(args[7]) == 1;
  auto fn = std::make_shared<PyCustomBackward>(ctx);
  std::vector<Tensor> given = r.outputs;
  std::vector<Tensor> outs = record_custom(fn, std::move(r));
  // The ctx reaches its node (saved_tensors outside backward) until the
  // node dies.
  {
    autograd::Node* node = nullptr;
    for (const Tensor& o : outs)
      if (o.defined() && o.impl()->grad_fn &&
          o.impl()->grad_fn->fn == autograd::GradFn::Custom &&
          o.impl()->grad_fn->extra->custom->fn.get() == fn.get())
        node = o.impl()->grad_fn;
    PyObject* cap = node ? PyCapsule_New(node, kNodeCapsule, nullptr)
                         : Py_NewRef(Py_None);
    if (!cap) throw_py();
    const int rc = PyObject_SetAttrString(ctx, "_fastt_node", cap);
    Py_DECREF(cap);
    if (rc < 0) throw_py();
  }
  PyObject* list = PyList_New(Py_ssize_t(outs.size()));
  if (!list) return nullptr;
  PyObject* seq = PySequence_Fast(args[3], "outputs");
  if (!seq) {
    Py_DECREF(list);
    return nullptr;
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    PyObject* orig = PySequence_Fast_GET_ITEM(seq, Py_ssize_t(k));
    PyObject* x;
    if (!outs[k].defined())
      x = Py_NewRef(orig);
    else if (given[k].defined() && outs[k].impl() == given[k].impl())
      x = Py_NewRef(orig);  // the forward's own object, now with history
    else
      x = wrap(outs[k]);
    if (!x) {
      Py_DECREF(seq);
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, Py_ssize_t(k), x);
  }
  Py_DECREF(seq);
  return list;
  FASTT_PY_END
}

// _custom_saved(capsule) -> tuple: the node's saved tensors, unpacked
// (checked against in-place changes and a freed graph).
static PyObject* f_custom_saved(PyObject*, PyObject* cap) {
  FASTT_PY_BEGIN
  auto* n = static_cast<autograd::Node*>(PyCapsule_GetPointer(cap, kNodeCapsule));
  if (!n) throw_py();
  std::vector<Tensor> v(n->saved.size());
  if (n->released) (void)n->unpack(0);  // torch's "second time" error
  for (size_t i = 0; i < v.size(); ++i) v[i] = n->unpack(i);
  return PyCustomBackward::tensors_to_tuple(v);
  FASTT_PY_END
}

// ---- saved-tensor hooks (fastt.autograd.graph.saved_tensors_hooks) ----
struct PyPacked final : PackedTensor {
  PyObject* obj;
  PyObject* unpack_fn;
  PyPacked(PyObject* o, PyObject* u) : obj(o), unpack_fn(u) {
    Py_INCREF(u);
  }  // steals obj
  ~PyPacked() override {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(obj);
    Py_DECREF(unpack_fn);
    PyGILState_Release(s);
  }
  Tensor unpack() override {
    PyGILState_STATE s = PyGILState_Ensure();
    PyObject* r = PyObject_CallOneArg(unpack_fn, obj);
    if (!r) {
      PyGILState_Release(s);
      throw_py();
    }
    if (!is_tensor(r)) {
      const std::string tn = r == Py_None ? "None" : Py_TYPE(r)->tp_name;
      Py_DECREF(r);
      PyGILState_Release(s);
      throw TypeError(fmt::format(
          "Output of saved tensor unpack_hook expected to be a Tensor but "
          "got result of type {}",
          tn));
    }
    Tensor t = unwrap(r);
    Py_DECREF(r);
    PyGILState_Release(s);
    return t;
  }
};
struct PySavedHooks final : SavedTensorHooks {
  PyObject* pack_fn;
  PyObject* unpack_fn;
  PySavedHooks(PyObject* p, PyObject* u) : pack_fn(p), unpack_fn(u) {
    Py_INCREF(p);
    Py_INCREF(u);
  }
  ~PySavedHooks() override {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(pack_fn);
    Py_DECREF(unpack_fn);
    PyGILState_Release(s);
  }
  std::unique_ptr<PackedTensor> pack(const Tensor& t) override {
    PyGILState_STATE s = PyGILState_Ensure();
    PyObject* arg = wrap(t);
    if (!arg) {
      PyGILState_Release(s);
      throw_py();
    }
    const uint32_t version = t.storage()->version();
    PyObject* r = PyObject_CallOneArg(pack_fn, arg);
    Py_DECREF(arg);
    if (!r) {
      PyGILState_Release(s);
      throw_py();
    }
    if (t.storage()->version() != version) {
      Py_DECREF(r);
      PyGILState_Release(s);
      throw RuntimeError(
          "A saved tensor pack hook is modifying its input in place. "
          "Tensors provided as input to pack hook can not be modified by "
          "in-place operations as this can lead to unexpected side-effects. "
          "Please open an issue if you need to perform in-place operations "
          "on the input to a pack hook.");
    }
    auto p = std::make_unique<PyPacked>(r, unpack_fn);
    PyGILState_Release(s);
    return p;
  }
};
static PyObject* f_push_saved_hooks(PyObject*, PyObject* const* args,
                                    Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  FASTT_CHECK(nargs == 2 && PyCallable_Check(args[0]) &&
                  PyCallable_Check(args[1]),
              TypeError,
              "saved_tensors_hooks: expected two callables (pack_hook, "
              "unpack_hook)");
  push_saved_tensor_hooks(std::make_shared<PySavedHooks>(args[0], args[1]));
  Py_RETURN_NONE;
  FASTT_PY_END
}
// ---- autocast (fastt.amp / fastt.autocast over csrc/autocast.h) ----
static ::fastt::DeviceType autocast_device(PyObject* o) {
  const char* s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : nullptr;
  if (!s) throw TypeError("autocast: device_type must be a string");
  const std::string d(s);
  if (d == "cpu") return ::fastt::DeviceType::CPU;
  if (d == "cuda") return ::fastt::DeviceType::CUDA;
  throw RuntimeError(fmt::format(
      "User specified an unsupported autocast device_type '{}'", d));
}
static PyObject* f_set_autocast_enabled(PyObject*, PyObject* const* args,
                                        Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  FASTT_CHECK(nargs == 2, TypeError,
              "_set_autocast_enabled(device_type, enabled)");
  autocast::set_enabled(autocast_device(args[0]),
                        PyObject_IsTrue(args[1]) == 1);
  Py_RETURN_NONE;
  FASTT_PY_END
}
static PyObject* f_is_autocast_enabled(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  return PyBool_FromLong(autocast::is_enabled(autocast_device(o)));
  FASTT_PY_END
}
static PyObject* f_set_autocast_dtype(PyObject*, PyObject* const* args,
                                      Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  FASTT_CHECK(nargs == 2 && is_dtype(args[1]), TypeError,
              "_set_autocast_dtype(device_type, dtype)");
  autocast::set_dtype(autocast_device(args[0]),
                      to_dtype(args[1], DType::Float32));
  Py_RETURN_NONE;
  FASTT_PY_END
}
static PyObject* f_get_autocast_dtype(PyObject*, PyObject* o) {
  FASTT_PY_BEGIN
  return dtype_object(autocast::dtype(autocast_device(o)));
  FASTT_PY_END
}
static PyObject* f_autocast_active(PyObject*, PyObject*) {
  return PyBool_FromLong(autocast::t_active);
}
static PyObject* f_clear_autocast_cache(PyObject*, PyObject*) {
  autocast::clear_cache();
  Py_RETURN_NONE;
}
static PyObject* f_set_autocast_cache_enabled(PyObject*, PyObject* o) {
  autocast::set_cache_enabled(PyObject_IsTrue(o) == 1);
  Py_RETURN_NONE;
}
static PyObject* f_is_autocast_cache_enabled(PyObject*, PyObject*) {
  return PyBool_FromLong(autocast::cache_enabled());
}

static PyObject* f_is_checkpoint_valid(PyObject*, PyObject*) {
  return PyBool_FromLong(autograd::checkpoint_valid());
}
static PyObject* f_pop_saved_hooks(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  pop_saved_tensor_hooks();
  Py_RETURN_NONE;
  FASTT_PY_END
}

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

// register_post_accumulate_grad_hook(hook): hook(tensor) after the leaf's
// .grad was updated; the hook gets the very object it was registered on
// (held weakly) so that dicts keyed by parameters work.
static PyObject* m_register_post_accumulate_grad_hook(PyObject* self,
                                                      PyObject* hook) {
  FASTT_PY_BEGIN
  FASTT_CHECK(PyCallable_Check(hook), TypeError,
              "register_post_accumulate_grad_hook: expected a callable, got "
              "{}",
              Py_TYPE(hook)->tp_name);
  auto holder = std::make_shared<PyCallable>(hook);
  PyObject* weak = PyWeakref_NewRef(self, nullptr);
  if (!weak) throw_py();
  auto wref = std::make_shared<PyCallable>(weak);
  Py_DECREF(weak);
  const Tensor& t = unwrap(self);
  int64_t id = fastt::register_post_accumulate_grad_hook(
      t, [holder, wref](const Tensor& leaf) {
        PyObject* obj = PyWeakref_GetObject(wref->fn);
        PyObject* arg = obj != Py_None ? Py_NewRef(obj) : wrap(leaf);
        if (!arg) throw_py();
        PyObject* r = PyObject_CallOneArg(holder->fn, arg);
        Py_DECREF(arg);
        if (!r) throw_py();
        const bool none = r == Py_None;
        Py_DECREF(r);
        if (!none)
          throw RuntimeError(
              "post accumulate grad hooks should return None.");
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
    {"register_post_accumulate_grad_hook",
     m_register_post_accumulate_grad_hook, METH_O, nullptr},
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
    {"_record_function", reinterpret_cast<PyCFunction>(
                             reinterpret_cast<void (*)()>(f_record_function)),
     METH_FASTCALL, "Records a custom Function's node (autograd.Function)."},
    {"_custom_saved", f_custom_saved, METH_O,
     "A custom node's saved tensors."},
    {"_push_saved_tensors_hooks",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(f_push_saved_hooks)),
     METH_FASTCALL, nullptr},
    {"_pop_saved_tensors_hooks", f_pop_saved_hooks, METH_NOARGS, nullptr},
    {"_is_checkpoint_valid", f_is_checkpoint_valid, METH_NOARGS, nullptr},
    {"_set_autocast_enabled",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(f_set_autocast_enabled)),
     METH_FASTCALL, nullptr},
    {"_is_autocast_enabled", f_is_autocast_enabled, METH_O, nullptr},
    {"_set_autocast_dtype",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(f_set_autocast_dtype)),
     METH_FASTCALL, nullptr},
    {"_get_autocast_dtype", f_get_autocast_dtype, METH_O, nullptr},
    {"_autocast_active", f_autocast_active, METH_NOARGS, nullptr},
    {"_clear_autocast_cache", f_clear_autocast_cache, METH_NOARGS, nullptr},
    {"_set_autocast_cache_enabled", f_set_autocast_cache_enabled, METH_O,
     nullptr},
    {"_is_autocast_cache_enabled", f_is_autocast_cache_enabled, METH_NOARGS,
     nullptr},
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

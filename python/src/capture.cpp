// Bindings of csrc/capture.h for python/fastt/_compile.py: begin/end a
// recording, host steps and breaks from Python, and the _CapturedStep
// type whose run() is a compiled call's whole fast path: the guards, the
// inputs copied into the recorded buffers, the replay and fresh outputs,
// in one C call.
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.h"

#include "csrc/autocast.h"
#include "csrc/autograd.h"
#include "csrc/capture.h"

namespace fastt {
namespace py {
namespace {

// A strong reference that std::function can copy (the GIL is held
// wherever a recording or a replay runs).
struct PyRef {
  PyObject* o;
  explicit PyRef(PyObject* p) : o(p) { Py_XINCREF(o); }
  PyRef(const PyRef& r) : o(r.o) { Py_XINCREF(o); }
  PyRef& operator=(const PyRef& r) {
    Py_XINCREF(r.o);
    Py_XDECREF(o);
    o = r.o;
    return *this;
  }
  ~PyRef() { Py_XDECREF(o); }
};

// What one positional argument of the captured call was.
struct ArgGuard {
  PyRef value{nullptr};  // a non-tensor argument (compared with ==)
  bool tensor = false;
  DType dtype = DType::Float32;
  Device device;
  int ndim = 0;
  bool requires_grad = false;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  Tensor binding;          // the recorded buffer the argument is copied to
  bool copy_back = false;  // the step wrote its input: copy it back
};

struct StepObject {
  PyObject_HEAD
  std::shared_ptr<capture::Graph> graph;  // null once the GC cleared it
  std::vector<ArgGuard> args;
  // The Python callables the graph's host steps hold (borrowed: the graph
  // owns them), for the cycle collector.
  std::vector<PyObject*> host_objects;
  // Tensors the step reads by address: still there, requires_grad as was.
  std::vector<std::pair<Tensor, void*>> externals;
  std::vector<bool> externals_grad;
  std::vector<Tensor> outputs;
  bool bound;
  bool grad_mode;
  // Autocast per device type (CPU, CUDA) when captured: on, and its dtype.
  bool autocast[kNumDeviceTypes];
  DType autocast_dtype[kNumDeviceTypes];
};

extern PyTypeObject StepType;

StepObject& step_of(PyObject* self) {
  return *reinterpret_cast<StepObject*>(self);
}

// The step's graph; null with a RuntimeError set once the cycle collector
// cleared the step.
capture::Graph* graph_of(PyObject* self) {
  capture::Graph* g = step_of(self).graph.get();
  if (g == nullptr)
    PyErr_SetString(PyExc_RuntimeError,
                    "this captured step was cleared by the garbage collector");
  return g;
}

// What a capture notes per thread, by thread ident (a map, not a
// thread_local: the module's static TLS block is budgeted), under
// g_notes_mu (a break in a kernel run without the GIL notes itself):
//   hosts           host steps' callables recorded but not yet in a step
//                   (borrowed: the recorded closures own them)
//   frames          where the Python code stood at the last graph break:
//                   a list of (code, line) from the innermost frame out
//                   (fastt.compile splits the function at its own frame's
//                   line), a reference
//   gil_less_break  a break seen without the GIL, whose frames are taken
//                   when the thread takes the GIL back (common.h's
//                   without_gil), still inside the same Python call
struct ThreadNotes {
  std::vector<PyObject*> hosts;
  PyObject* frames = nullptr;
  bool gil_less_break = false;
};
std::mutex g_notes_mu;
std::unordered_map<unsigned long, ThreadNotes>& notes() {
  static auto* m = new std::unordered_map<unsigned long, ThreadNotes>();
  return *m;
}
// This thread's notes, cleared; their frames returned (a reference, or
// null) for the caller to drop outside the lock.
PyObject* clear_notes() {
  std::lock_guard<std::mutex> lock(g_notes_mu);
  auto it = notes().find(PyThread_get_thread_ident());
  if (it == notes().end()) return nullptr;
  PyObject* frames = it->second.frames;
  if (it->second.gil_less_break)
    g_breaks_without_gil.fetch_sub(1, std::memory_order_relaxed);
  notes().erase(it);
  return frames;
}
std::vector<PyObject*> take_hosts() {
  std::lock_guard<std::mutex> lock(g_notes_mu);
  auto it = notes().find(PyThread_get_thread_ident());
  if (it == notes().end()) return {};
  return std::move(it->second.hosts);
}

bool same_meta(const ArgGuard& g, const Tensor& t) {
  if (t.dtype() != g.dtype || t.device() != g.device || t.dim() != g.ndim ||
      t.impl()->requires_grad != g.requires_grad)
    return false;
  for (int d = 0; d < g.ndim; ++d)
    if (t.impl()->sizes[d] != g.sizes[d] ||
        t.impl()->strides[d] != g.strides[d])
      return false;
  return true;
}

// ---- module functions ----
PyObject* f_begin(PyObject*, PyObject* fullgraph) {
  FASTT_PY_BEGIN
  capture::begin(PyObject_IsTrue(fullgraph) == 1);
  Py_XDECREF(clear_notes());  // (a stale break of this thread included)
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_end(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  std::shared_ptr<capture::Graph> g = capture::end();
  auto* o = PyObject_GC_New(StepObject, &StepType);
  if (!o) return nullptr;
  new (&o->graph) std::shared_ptr<capture::Graph>(std::move(g));
  new (&o->args) std::vector<ArgGuard>();
  new (&o->externals) std::vector<std::pair<Tensor, void*>>();
  new (&o->externals_grad) std::vector<bool>();
  new (&o->outputs) std::vector<Tensor>();
  new (&o->host_objects) std::vector<PyObject*>(take_hosts());
  o->bound = false;
  o->grad_mode = autograd::grad_enabled();
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    const auto type = static_cast<fastt::DeviceType>(d);
    o->autocast[d] = autocast::is_enabled(type);
    o->autocast_dtype[d] = autocast::dtype(type);
  }
  PyObject_GC_Track(o);
  return reinterpret_cast<PyObject*>(o);
  FASTT_PY_END
}

PyObject* f_abort(PyObject*, PyObject*) {
  take_hosts();
  capture::abort();
  Py_RETURN_NONE;
}

// Notes this thread's frames as its last break's (under the GIL).
void record_break_frames() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject* list = PyList_New(0);
  PyFrameObject* f = list ? PyEval_GetFrame() : nullptr;
  Py_XINCREF(f);
  while (f != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(f);
    PyObject* item = Py_BuildValue("(Ni)", reinterpret_cast<PyObject*>(code),
                                   PyFrame_GetLineNumber(f));
    if (item == nullptr || PyList_Append(list, item) < 0) {
      Py_XDECREF(item);
      Py_DECREF(f);
      Py_CLEAR(list);
      break;
    }
    Py_DECREF(item);
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  {
    std::lock_guard<std::mutex> lock(g_notes_mu);
    std::swap(notes()[PyThread_get_thread_ident()].frames, list);
  }
  Py_XDECREF(list);  // the previous break's
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

void note_break_frames() {
  if (PyGILState_Check()) {
    record_break_frames();
    return;
  }
  std::lock_guard<std::mutex> lock(g_notes_mu);
  bool& noted = notes()[PyThread_get_thread_ident()].gil_less_break;
  if (!noted) g_breaks_without_gil.fetch_add(1, std::memory_order_relaxed);
  noted = true;
}

// This thread's frames of its last break, taken (a list, maybe empty).
PyObject* f_break_frames(PyObject*, PyObject*) {
  PyObject* out = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_notes_mu);
    auto it = notes().find(PyThread_get_thread_ident());
    if (it != notes().end()) std::swap(out, it->second.frames);
  }
  return out ? out : PyList_New(0);
}

PyObject* f_poison(PyObject*, PyObject* on) {
  capture::set_poison(PyObject_IsTrue(on) == 1);
  Py_RETURN_NONE;
}

PyObject* f_recording(PyObject*, PyObject*) {
  return PyBool_FromLong(capture::recording());
}

PyObject* f_in_capture(PyObject*, PyObject*) {
  return PyBool_FromLong(capture::in_capture());
}

// Records fn (a callable taking no arguments) to run again on replay; the
// caller has run its work already (suspended).
PyObject* f_host_step(PyObject*, PyObject* fn) {
  FASTT_PY_BEGIN
  if (!PyCallable_Check(fn)) throw TypeError("_capture_host_step(callable)");
  PyRef ref(fn);
  const bool recorded = capture::host_step([ref] {
    PyObject* r = PyObject_CallNoArgs(ref.o);
    if (!r) throw_py();
    Py_DECREF(r);
  });
  if (recorded) {
    std::lock_guard<std::mutex> lock(g_notes_mu);
    notes()[PyThread_get_thread_ident()].hosts.push_back(fn);
  }
  Py_RETURN_NONE;
  FASTT_PY_END
}

// fn(*args) with nothing recorded inside (its host step replays it).
PyObject* f_suspended(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  FASTT_PY_BEGIN
  if (nargs < 1) throw TypeError("_capture_suspended(fn, *args)");
  capture::Suspend s;
  return PyObject_Vectorcall(args[0], args + 1, size_t(nargs - 1), nullptr);
  FASTT_PY_END
}

PyObject* f_break(PyObject*, PyObject* what) {
  FASTT_PY_BEGIN
  const char* s = PyUnicode_AsUTF8(what);
  if (!s) return nullptr;
  capture::graph_break(s);
  Py_RETURN_NONE;
  FASTT_PY_END
}

// ---- _CapturedStep ----
int step_traverse(PyObject* self, visitproc visit, void* arg) {
  StepObject& s = step_of(self);
  for (const ArgGuard& g : s.args) Py_VISIT(g.value.o);
  if (s.graph)
    for (PyObject* o : s.host_objects) Py_VISIT(o);
  return 0;
}

int step_clear(PyObject* self) {
  StepObject& s = step_of(self);
  s.bound = false;
  s.host_objects.clear();
  std::vector<ArgGuard>().swap(s.args);
  s.graph.reset();  // drops the host steps' callables
  return 0;
}

void step_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  StepObject& s = step_of(self);
  s.graph.~shared_ptr();
  s.args.~vector();
  s.externals.~vector();
  s.externals_grad.~vector();
  s.outputs.~vector();
  s.host_objects.~vector();
  Py_TYPE(self)->tp_free(self);
}

PyObject* step_check_addresses(PyObject* self, PyObject* known) {
  FASTT_PY_BEGIN
  if (!PyList_Check(known)) throw TypeError("check_addresses(list)");
  std::vector<Tensor> ts;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(known); ++i) {
    PyObject* o = PyList_GET_ITEM(known, i);
    if (is_tensor(o)) ts.push_back(unwrap(o));
  }
  capture::Graph* g = graph_of(self);
  if (g == nullptr) return nullptr;
  std::string why = g->check_addresses(ts);
  if (why.empty()) Py_RETURN_NONE;
  return PyUnicode_FromStringAndSize(why.data(), Py_ssize_t(why.size()));
  FASTT_PY_END
}

// bind(args, bindings, copy_back, outputs, externals): the guards. args:
// the call's flat positional values; bindings: per argument the tensor
// the capture ran on (None for non-tensors); copy_back: per argument
// whether the step wrote it; outputs: the tensors run() returns fresh
// copies of; externals: tensors whose address must not change.
PyObject* step_bind(PyObject* self, PyObject* const* a, Py_ssize_t n) {
  FASTT_PY_BEGIN
  if (n != 5 || !PyTuple_Check(a[0]) || !PyList_Check(a[1]) ||
      !PyList_Check(a[2]) || !PyList_Check(a[3]) || !PyList_Check(a[4]) ||
      PyList_GET_SIZE(a[1]) != PyTuple_GET_SIZE(a[0]) ||
      PyList_GET_SIZE(a[2]) != PyTuple_GET_SIZE(a[0]))
    throw TypeError(
        "bind(args: tuple, bindings: list, copy_back: list, outputs: list, "
        "externals: list)");
  StepObject& s = step_of(self);
  if (graph_of(self) == nullptr) return nullptr;
  s.args.clear();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a[0]); ++i) {
    PyObject* v = PyTuple_GET_ITEM(a[0], i);
    ArgGuard g;
    if (is_tensor(v)) {
      const Tensor& t = unwrap(v);
      PyObject* b = PyList_GET_ITEM(a[1], i);
      if (!is_tensor(b)) throw TypeError("bind: a tensor argument's binding");
      g.tensor = true;
      g.dtype = t.dtype();
      g.device = t.device();
      g.ndim = int(t.dim());
      g.requires_grad = t.impl()->requires_grad;
      for (int d = 0; d < g.ndim; ++d) {
        g.sizes[d] = t.impl()->sizes[d];
        g.strides[d] = t.impl()->strides[d];
      }
      g.binding = unwrap(b);
      g.copy_back = PyObject_IsTrue(PyList_GET_ITEM(a[2], i)) == 1;
    } else {
      g.value = PyRef(v);
    }
    s.args.push_back(g);
  }
  s.outputs.clear();
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(a[3]); ++i) {
    PyObject* o = PyList_GET_ITEM(a[3], i);
    if (!is_tensor(o)) throw TypeError("bind: outputs must be tensors");
    s.outputs.push_back(detach(unwrap(o)));  // not the capture's graph
  }
  s.externals.clear();
  s.externals_grad.clear();
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(a[4]); ++i) {
    PyObject* o = PyList_GET_ITEM(a[4], i);
    if (!is_tensor(o)) continue;
    const Tensor& t = unwrap(o);
    s.externals.emplace_back(t, t.data_ptr());
    s.externals_grad.push_back(t.impl()->requires_grad);
  }
  s.bound = true;
  Py_RETURN_NONE;
  FASTT_PY_END
}

// Fresh copies of the recorded outputs, as a list.
PyObject* fresh_outputs(StepObject& s) {
  NoGradGuard no_grad;
  PyObject* list = PyList_New(Py_ssize_t(s.outputs.size()));
  if (!list) return nullptr;
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    PyObject* t = wrap(s.outputs[i].clone());
    PyList_SET_ITEM(list, Py_ssize_t(i), t);
  }
  return list;
}

// run(args): None when a guard fails, else the outputs (fresh tensors).
PyObject* step_run(PyObject* self, PyObject* args) {
  FASTT_PY_BEGIN
  StepObject& s = step_of(self);
  if (!s.bound || !PyTuple_Check(args) ||
      PyTuple_GET_SIZE(args) != Py_ssize_t(s.args.size()))
    Py_RETURN_NONE;
  if (autograd::grad_enabled() != s.grad_mode) Py_RETURN_NONE;
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    const auto type = static_cast<fastt::DeviceType>(d);
    if (autocast::is_enabled(type) != s.autocast[d] ||
        (s.autocast[d] && autocast::dtype(type) != s.autocast_dtype[d]))
      Py_RETURN_NONE;
  }
  for (size_t i = 0; i < s.args.size(); ++i) {
    PyObject* v = PyTuple_GET_ITEM(args, Py_ssize_t(i));
    const ArgGuard& g = s.args[i];
    if (g.tensor) {
      if (!is_tensor(v) || !same_meta(g, unwrap(v))) Py_RETURN_NONE;
    } else if (v != g.value.o) {
      if (Py_TYPE(v) != Py_TYPE(g.value.o)) Py_RETURN_NONE;
      const int eq = PyObject_RichCompareBool(v, g.value.o, Py_EQ);
      if (eq < 0) PyErr_Clear();  // not comparable (an array): a miss
      if (eq != 1) Py_RETURN_NONE;
    }
  }
  for (size_t i = 0; i < s.externals.size(); ++i) {
    const Tensor& t = s.externals[i].first;
    if (t.data_ptr() != s.externals[i].second ||
        t.impl()->requires_grad != s.externals_grad[i])
      Py_RETURN_NONE;
  }
  if (!s.graph->grads_unchanged()) Py_RETURN_NONE;
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < s.args.size(); ++i)
      if (s.args[i].tensor)
        s.args[i].binding.copy_(unwrap(PyTuple_GET_ITEM(args, Py_ssize_t(i))));
    s.graph->replay();
    for (size_t i = 0; i < s.args.size(); ++i)
      if (s.args[i].copy_back)
        unwrap_mut(PyTuple_GET_ITEM(args, Py_ssize_t(i)))
            .copy_(s.args[i].binding);
  }
  return fresh_outputs(s);
  FASTT_PY_END
}

PyObject* step_guard_assigned_grads(PyObject* self, PyObject* had) {
  FASTT_PY_BEGIN
  if (!PyList_Check(had)) throw TypeError("guard_assigned_grads(list)");
  std::vector<Tensor> ts;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(had); ++i) {
    PyObject* o = PyList_GET_ITEM(had, i);
    if (is_tensor(o)) ts.push_back(unwrap(o));
  }
  capture::Graph* g = graph_of(self);
  if (g == nullptr) return nullptr;
  g->guard_assigned_grads(ts);
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* step_outputs(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  return fresh_outputs(step_of(self));
  FASTT_PY_END
}

// The getters: one template over the Graph's accessors.
PyObject* to_py(bool v) { return PyBool_FromLong(v); }
PyObject* to_py(size_t v) { return PyLong_FromSize_t(v); }
PyObject* to_py(const std::string& v) {
  return PyUnicode_FromStringAndSize(v.data(), Py_ssize_t(v.size()));
}
template <auto Get>
PyObject* step_get(PyObject* self, void*) {
  capture::Graph* g = graph_of(self);
  if (g == nullptr) return nullptr;
  return to_py((g->*Get)());
}

PyMethodDef g_step_methods[] = {
    {"check_addresses", step_check_addresses, METH_O,
     "None when every address the recorded kernels use is the step's own "
     "memory or one of the given tensors'; else why not."},
    {"bind", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(step_bind)),
     METH_FASTCALL,
     "bind(args, bindings, copy_back, outputs, externals): the guards."},
    {"run", step_run, METH_O,
     "run(args: tuple): replays the step on new arguments; None when a "
     "guard fails."},
    {"guard_assigned_grads", step_guard_assigned_grads, METH_O,
     "The leaves that had a .grad before the capture (the step clears "
     "theirs); the other leaves it assigns must have none on replay."},
    {"outputs", step_outputs, METH_NOARGS,
     "Fresh copies of the recorded outputs."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_step_getset[] = {
#define FASTT_STEP_GET(name, doc) \
  {#name, step_get<&capture::Graph::name>, nullptr, doc, nullptr}
    FASTT_STEP_GET(replayable, "No graph break was seen."),
    FASTT_STEP_GET(break_reason, "The first graph break."),
    FASTT_STEP_GET(ran_backward, "A backward walk ran while recording."),
    FASTT_STEP_GET(num_kernels, "Recorded kernel calls."),
    FASTT_STEP_GET(num_host_steps, "Recorded host steps (checks, .grad "
                   "assignments, optimizer steps)."),
    FASTT_STEP_GET(pool_bytes, "Bytes of the step's private memory pool (the "
                   "arena included)."),
    FASTT_STEP_GET(num_device_graphs, "CUDA graphs the recorded CUDA kernels "
                   "were captured into (one per run of consecutive CUDA "
                   "kernels)."),
    FASTT_STEP_GET(arena_bytes, "Bytes of the arena the intermediates were "
                   "laid out in by liveness (0: not planned)."),
    FASTT_STEP_GET(unplanned_bytes, "Bytes of the pool as recorded, before "
                   "the plan (0: not planned)."),
#undef FASTT_STEP_GET
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject StepType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt._C._CapturedStep";
  t.tp_basicsize = sizeof(StepObject);
  t.tp_dealloc = step_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  t.tp_traverse = step_traverse;
  t.tp_clear = step_clear;
  t.tp_doc = "A recorded step (fastt.compile): its kernels and host steps.";
  t.tp_methods = g_step_methods;
  t.tp_getset = g_step_getset;
  return t;
}();

}  // namespace

PyMethodDef g_capture_functions[] = {
    {"_capture_begin", f_begin, METH_O,
     "Starts recording this thread's kernels (argument: fullgraph)."},
    {"_capture_end", f_end, METH_NOARGS,
     "Stops recording; returns the _CapturedStep."},
    {"_capture_abort", f_abort, METH_NOARGS,
     "Stops recording and drops it."},
    {"_capture_poison", f_poison, METH_O,
     "Tests: memory a plan frees is filled with 0xff and kept."},
    {"_capture_recording", f_recording, METH_NOARGS,
     "Whether this thread records (not suspended, no break seen)."},
    {"_capture_in_capture", f_in_capture, METH_NOARGS,
     "Whether this thread runs a capture (even a broken or suspended one)."},
    {"_capture_host_step", f_host_step, METH_O,
     "Records a callable for the replay to call."},
    {"_capture_suspended",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(f_suspended)),
     METH_FASTCALL, "fn(*args) with nothing recorded inside."},
    {"_capture_break", f_break, METH_O,
     "A graph break (raises under fullgraph)."},
    {"_capture_break_frames", f_break_frames, METH_NOARGS,
     "[(code, line)] from the innermost frame out at the last break."},
    {nullptr, nullptr, 0, nullptr}};

std::atomic<int> g_breaks_without_gil{0};

void note_break_frames_after_gil() {
  {
    std::lock_guard<std::mutex> lock(g_notes_mu);
    auto it = notes().find(PyThread_get_thread_ident());
    if (it == notes().end() || !it->second.gil_less_break) return;
    it->second.gil_less_break = false;
    g_breaks_without_gil.fetch_sub(1, std::memory_order_relaxed);
  }
  record_break_frames();
}

bool init_capture_type(PyObject* m) {
  capture::set_break_observer(note_break_frames);
  if (PyType_Ready(&StepType) < 0) return false;
  Py_INCREF(&StepType);
  return PyModule_AddObject(m, "_CapturedStep",
                            reinterpret_cast<PyObject*>(&StepType)) == 0;
}

}  // namespace py
}  // namespace fastt

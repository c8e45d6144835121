// Bindings of csrc/profiler.h for python/fastt/profiler.py: start, stop
// (events as tuples), the event clock and thread id. New profiler entry
// points go in g_profiler_functions at the bottom.
#include "common.h"

#include "csrc/dispatch.h"
#include "csrc/profiler.h"

namespace fastt {
namespace py {
namespace {

PyObject* f_profiler_start(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  profiler::start();
  Py_RETURN_NONE;
  FASTT_PY_END
}

// Returns [(name, tid, t_lookup, t_start, t_end, prev_end, allocs), ...],
// each thread's events in order; times in CLOCK_MONOTONIC ns.
PyObject* f_profiler_stop(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  std::vector<profiler::ProfileEvent> ev = profiler::stop();
  PyObject* names[kNumOps] = {};  // one str per op seen, shared by rows
  PyObject* list = PyList_New(Py_ssize_t(ev.size()));
  bool ok = list != nullptr;
  for (size_t i = 0; ok && i < ev.size(); ++i) {
    const profiler::ProfileEvent& e = ev[i];
    PyObject*& name = names[e.op];
    if (!name) name = PyUnicode_InternFromString(profiler::op_name(e.op));
    PyObject* row = name ? Py_BuildValue("(OiLLLLL)", name, int(e.thread),
                                         (long long)e.t_lookup,
                                         (long long)e.t_start,
                                         (long long)e.t_end,
                                         (long long)e.prev_end,
                                         (long long)e.allocs)
                         : nullptr;
    if (!row) {
      ok = false;
      break;
    }
    PyList_SET_ITEM(list, Py_ssize_t(i), row);
  }
  for (PyObject* n : names) Py_XDECREF(n);
  if (!ok) {
    Py_XDECREF(list);
    return nullptr;
  }
  return list;
  FASTT_PY_END
}

PyObject* f_profiler_enabled(PyObject*, PyObject*) {
  return PyBool_FromLong(profiler::is_enabled());
}
PyObject* f_profiler_now(PyObject*, PyObject*) {
  return PyLong_FromLongLong(profiler::now_ns());
}
PyObject* f_profiler_thread_id(PyObject*, PyObject*) {
  return PyLong_FromLong(profiler::current_thread_id());
}

}  // namespace

PyMethodDef g_profiler_functions[] = {
    {"_profiler_start", f_profiler_start, METH_NOARGS,
     "Starts recording kernel events (RuntimeError if already on)."},
    {"_profiler_stop", f_profiler_stop, METH_NOARGS,
     "Stops recording; returns [(op, tid, t_lookup, t_start, t_end, "
     "prev_end, allocs)] with times in monotonic ns."},
    {"_profiler_enabled", f_profiler_enabled, METH_NOARGS,
     "Whether a profiling session is running."},
    {"_profiler_now", f_profiler_now, METH_NOARGS,
     "The profiler's clock (CLOCK_MONOTONIC ns)."},
    {"_profiler_thread_id", f_profiler_thread_id, METH_NOARGS,
     "The thread id events of the calling thread carry."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

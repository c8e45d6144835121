// fastt._C's CUDA runtime functions (_cuda_*: devices, streams, events,
// memory statistics) and the Tensor methods pin_memory / is_pinned /
// record_stream; python/fastt/cuda.py builds torch.cuda's API on them.
// Streams and events cross into Python as integer handles. Built without
// CUDA, the queries answer "none" and everything else raises RuntimeError.
#include "python/src/common.h"
#include "csrc/storage.h"
#ifdef FASTT_WITH_CUDA
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/graph.h"
#include "kernels/cuda/runtime.h"
#include "kernels/cuda/stream.h"
#endif

namespace fastt {
namespace py {

namespace {

#ifdef FASTT_WITH_CUDA
void* to_handle(PyObject* o) {  // None: the null handle
  void* p = o == Py_None ? nullptr : PyLong_AsVoidPtr(o);
  if (PyErr_Occurred()) throw_py();
  return p;
}
cudaStream_t to_stream(PyObject* o) {
  return static_cast<cudaStream_t>(to_handle(o));
}
cudaEvent_t to_event(PyObject* o) {
  return static_cast<cudaEvent_t>(to_handle(o));
}
PyObject* from_handle(const void* h) {
  if (!h) return PyLong_FromLong(0);
  return PyLong_FromVoidPtr(const_cast<void*>(h));
}
int device_arg(PyObject* o) {
  return given(o) ? int(to_int(o, "device")) : cuda::current_device();
}
#endif

[[noreturn]] void no_cuda(const char* what) {
  throw RuntimeError(fmt::format("{}: fastt was built without CUDA", what));
}

// A binding's body, compiled only with CUDA; without it the call raises
// RuntimeError naming it.
#ifdef FASTT_WITH_CUDA
#define FASTT_CUDA_ONLY(what, ...) __VA_ARGS__
#else
#define FASTT_CUDA_ONLY(what, ...) no_cuda(what);
#endif

// Defines binding f_<name>(module, arg) (METH_O, METH_VARARGS or
// METH_NOARGS): its body runs with CUDA only (FASTT_CUDA_ONLY) and its C++
// exceptions become Python ones.
#define FASTT_CUDA_FN(name, what, ...)           \
  PyObject* f_##name(PyObject*, PyObject* arg) { \
    FASTT_PY_BEGIN                               \
    FASTT_CUDA_ONLY(what, __VA_ARGS__)           \
    FASTT_PY_END                                 \
  }

#ifdef FASTT_WITH_CUDA
// A METH_VARARGS binding's positional arguments: exactly n objects, read
// by position as the type each one is.
struct Args {
  PyObject* a[4];
  Args(const char* name, PyObject* args, Py_ssize_t n) {
    Py_ssize_t got = PyTuple_GET_SIZE(args);
    if (got != n) {
      PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)",
                   name, n, got);
      throw_py();
    }
    for (Py_ssize_t i = 0; i < n; ++i) a[i] = PyTuple_GET_ITEM(args, i);
  }
  int device(int i) const { return int(to_int(a[i], "device")); }
  cudaStream_t stream(int i) const { return to_stream(a[i]); }
  cudaEvent_t event(int i) const { return to_event(a[i]); }
  bool flag(int i, const char* what) const { return to_bool(a[i], what); }
};
#endif

PyObject* f_device_count(PyObject*, PyObject*) {
#ifdef FASTT_WITH_CUDA
  return PyLong_FromLong(cuda::device_count());
#else
  return PyLong_FromLong(0);
#endif
}

FASTT_CUDA_FN(current_device, "current_device", {
  cuda::require_device("current_device");
  return PyLong_FromLong(cuda::current_device());
})

FASTT_CUDA_FN(set_device, "set_device", {
  cuda::set_device(int(to_int(arg, "device")));
  Py_RETURN_NONE;
})

FASTT_CUDA_FN(synchronize, "synchronize", {
  int d = device_arg(arg);
  without_gil([&] {
    cuda::synchronize(d);
    return 0;
  });
  Py_RETURN_NONE;
})

// _cuda_current_stream(device) -> handle
FASTT_CUDA_FN(current_stream, "current_stream", {
  int d = device_arg(arg);
  cuda::check_device(d, "current_stream");
  return from_handle(cuda::current_stream(d));
})

// _cuda_set_stream(device, handle)
FASTT_CUDA_FN(set_stream, "set_stream", {
  Args a("_cuda_set_stream", arg, 2);
  const int d = a.device(0);
  cuda::check_device(d, "set_stream");
  cuda::set_current_stream(d, a.stream(1));
  Py_RETURN_NONE;
})

// _cuda_stream_create(device, priority) -> handle
FASTT_CUDA_FN(stream_create, "Stream", {
  Args a("_cuda_stream_create", arg, 2);
  int d = device_arg(a.a[0]);
  int priority = int(to_int(a.a[1], "priority"));
  return from_handle(cuda::Stream::create(d, priority).handle());
})

// _cuda_stream_query / _synchronize / _priority / _wait_event(device,
// stream[, event])
FASTT_CUDA_FN(stream_query, "Stream.query", {
  Args a("_cuda_stream_query", arg, 2);
  return PyBool_FromLong(cuda::stream_query(a.stream(1), a.device(0)));
})

FASTT_CUDA_FN(stream_synchronize, "Stream.synchronize", {
  Args a("_cuda_stream_synchronize", arg, 2);
  const cudaStream_t s = a.stream(1);
  const int d = a.device(0);
  without_gil([&] {  // arguments read above, with the GIL
    cuda::stream_synchronize(s, d);
    return 0;
  });
  Py_RETURN_NONE;
})

FASTT_CUDA_FN(stream_priority, "Stream.priority", {
  Args a("_cuda_stream_priority", arg, 2);
  return PyLong_FromLong(cuda::stream_priority(a.stream(1), a.device(0)));
})

FASTT_CUDA_FN(stream_wait_event, "Stream.wait_event", {
  Args a("_cuda_stream_wait_event", arg, 3);
  if (cudaEvent_t e = a.event(2))
    cuda::stream_wait_event(a.stream(1), a.device(0), e);
  Py_RETURN_NONE;
})

FASTT_CUDA_FN(stream_priority_range, "priority_range", {
  int least = 0, greatest = 0;
  cuda::stream_priority_range(&least, &greatest);
  return Py_BuildValue("(ii)", least, greatest);
})

// _cuda_event_create(device, enable_timing, blocking, interprocess)
FASTT_CUDA_FN(event_create, "Event", {
  Args a("_cuda_event_create", arg, 4);
  return from_handle(cuda::event_create(
      device_arg(a.a[0]), a.flag(1, "enable_timing"), a.flag(2, "blocking"),
      a.flag(3, "interprocess")));
})

PyObject* f_event_destroy(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
#ifdef FASTT_WITH_CUDA
  cuda::event_destroy(to_event(arg));
#else
  (void)arg;
#endif
  Py_RETURN_NONE;
  FASTT_PY_END
}

// _cuda_event_record(event, device, stream)
FASTT_CUDA_FN(event_record, "Event.record", {
  Args a("_cuda_event_record", arg, 3);
  cuda::event_record(a.event(0), a.stream(2), a.device(1));
  Py_RETURN_NONE;
})

// _cuda_event_query / _synchronize(event, device): the device's deferred
// kernel errors are raised once the event completed.
FASTT_CUDA_FN(event_query, "Event.query", {
  Args a("_cuda_event_query", arg, 2);
  return PyBool_FromLong(cuda::event_query(a.event(0), a.device(1)));
})

FASTT_CUDA_FN(event_synchronize, "Event.synchronize", {
  Args a("_cuda_event_synchronize", arg, 2);
  const cudaEvent_t e = a.event(0);
  const int d = a.device(1);
  without_gil([&] {  // arguments read above, with the GIL
    cuda::event_synchronize(e, d);
    return 0;
  });
  Py_RETURN_NONE;
})

FASTT_CUDA_FN(event_elapsed_time, "Event.elapsed_time", {
  Args a("_cuda_event_elapsed_time", arg, 2);
  return PyFloat_FromDouble(
      cuda::event_elapsed_time(a.event(0), a.event(1)));
})

#ifdef FASTT_WITH_CUDA
int set_item(PyObject* d, const char* key, int64_t v) {
  PyObject* o = PyLong_FromLongLong(v);
  if (!o) throw_py();
  int r = PyDict_SetItemString(d, key, o);
  Py_DECREF(o);
  if (r < 0) throw_py();
  return r;
}
#endif

// _cuda_memory_stats(device) -> dict of the allocator's counters
FASTT_CUDA_FN(memory_stats, "memory_stats", {
  DeviceAllocatorStats s = cuda::device_memory_stats(device_arg(arg));
  PyObject* d = PyDict_New();
  if (!d) return nullptr;
  try {
    set_item(d, "allocated_bytes", s.allocated_bytes);
    set_item(d, "max_allocated_bytes", s.max_allocated_bytes);
    set_item(d, "requested_bytes", s.requested_bytes);
    set_item(d, "reserved_bytes", s.reserved_bytes);
    set_item(d, "max_reserved_bytes", s.max_reserved_bytes);
    set_item(d, "active_blocks", s.active_blocks);
    set_item(d, "segments", s.segments);
    set_item(d, "pending_free_blocks", s.pending_free_blocks);
    set_item(d, "alloc_count", s.alloc_count);
    set_item(d, "free_count", s.free_count);
    set_item(d, "num_device_allocs", s.num_device_allocs);
    set_item(d, "num_device_frees", s.num_device_frees);
    set_item(d, "num_alloc_retries", s.num_alloc_retries);
    set_item(d, "num_ooms", s.num_ooms);
  } catch (...) {
    Py_DECREF(d);
    throw;
  }
  return d;
})

FASTT_CUDA_FN(reset_peak_memory_stats, "reset_peak_memory_stats", {
  cuda::reset_peak_memory_stats(device_arg(arg));
  Py_RETURN_NONE;
})

FASTT_CUDA_FN(reset_accumulated_memory_stats,
              "reset_accumulated_memory_stats", {
  cuda::reset_accumulated_memory_stats(device_arg(arg));
  Py_RETURN_NONE;
})

PyObject* f_empty_cache(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
#ifdef FASTT_WITH_CUDA
  without_gil([] {
    cuda::empty_cache();
    return 0;
  });
#endif
  Py_RETURN_NONE;  // nothing cached without CUDA (torch: a no-op too)
  FASTT_PY_END
}

FASTT_CUDA_FN(mem_get_info, "mem_get_info", {
  size_t free_bytes = 0, total = 0;
  cuda::mem_get_info(device_arg(arg), &free_bytes, &total);
  return Py_BuildValue("(KK)", (unsigned long long)free_bytes,
                       (unsigned long long)total);
})

FASTT_CUDA_FN(host_memory_stats, "host_memory_stats", {
  cuda::HostAllocatorStats s = cuda::host_memory_stats();
  return Py_BuildValue("{sLsLsL}", "allocated_bytes",
                       (long long)s.allocated_bytes, "reserved_bytes",
                       (long long)s.reserved_bytes, "num_host_allocs",
                       (long long)s.num_host_allocs);
})

// _cuda_get_device_properties(device) -> (name, total_memory, major,
// minor, multi_processor_count)
FASTT_CUDA_FN(device_properties, "get_device_properties", {
  const cudaDeviceProp& p = cuda::device_props(device_arg(arg));
  return Py_BuildValue("(sKiii)", p.name, (unsigned long long)p.totalGlobalMem,
                       p.major, p.minor, p.multiProcessorCount);
})

// ---- Tensor methods ----
}  // namespace

// A contiguous copy of CPU tensor `t` in pinned memory (t itself when it is
// pinned and contiguous already). Also used by factories' pin_memory=True.
Tensor pinned_copy(const Tensor& t) {
  FASTT_CHECK(t.is_cpu(), RuntimeError,
              "pin_memory: cannot pin a tensor on {}: only dense CPU tensors "
              "can be pinned",
              t.device().str());
  FASTT_CUDA_ONLY("pin_memory", {
    cuda::require_device("pin_memory");
    if (t.is_contiguous() && t.storage() && cuda::is_pinned(t.data_ptr()))
      return t;
    Storage* s = cuda::pinned_storage(t.nbytes());
    int64_t strides[kMaxDims];
    int64_t step = 1;
    for (int i = int(t.dim()) - 1; i >= 0; --i) {
      strides[i] = step;
      step *= t.size(i);
    }
    Tensor r = Tensor::from_storage(s, t.sizes(),
                                    IntList(strides, size_t(t.dim())), 0,
                                    t.dtype());
    s->decref();  // from_storage took its own reference
    r.copy_(t);
    return r;
  })
}

namespace {

FASTT_METHOD(pin_memory) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  (void)args;
  (void)kwnames;
  if (nargs > 1) throw TypeError("pin_memory() takes at most 1 argument");
  Tensor r = maybe_release_gil(t.numel(), [&] { return pinned_copy(t); });
  if (r.is_same(t)) return return_self(self);
  return wrap(std::move(r));
  FASTT_PY_END
}

FASTT_METHOD(is_pinned) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  (void)args;
  (void)nargs;
  (void)kwnames;
#ifdef FASTT_WITH_CUDA
  if (t.is_cpu() && t.storage() && cuda::is_pinned(t.storage()->data()))
    Py_RETURN_TRUE;
#else
  (void)t;
#endif
  Py_RETURN_FALSE;
  FASTT_PY_END
}

// record_stream(stream): a fastt.cuda.Stream (or anything with cuda_stream)
FASTT_METHOD(record_stream) {
  FASTT_PY_BEGIN
  const Tensor& t = to_tensor(self, "input");
  static const Signature sig{"record_stream", {"stream"}, 1};
  PyObject* a[1];
  parse_args(sig, args, nargs, kwnames, a);
  FASTT_CHECK(t.is_cuda(), RuntimeError,
              "record_stream: expected a CUDA tensor, got one on {}",
              t.device().str());
  FASTT_CUDA_ONLY("record_stream", {
    PyObject* h = PyObject_GetAttrString(a[0], "cuda_stream");
    if (!h) {
      PyErr_Clear();
      throw TypeError("record_stream: expected a fastt.cuda.Stream");
    }
    cudaStream_t s = nullptr;
    try {
      s = to_stream(h);
    } catch (...) {
      Py_DECREF(h);
      throw;
    }
    Py_DECREF(h);
    if (t.storage() && t.storage()->data())
      cuda::record_stream(t.storage()->data(), t.device().index, s);
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

// ---- CUDA graphs (kernels/cuda/graph.h) ----
// A graph crosses as the integer address of a heap cuda::Graph, a memory
// pool as that of a heap shared_ptr<GraphPool> (python/fastt/cuda owns
// both and destroys them).
#ifdef FASTT_WITH_CUDA
using PoolRef = std::shared_ptr<cuda::GraphPool>;
cuda::Graph* to_graph(PyObject* o) {
  auto* g = static_cast<cuda::Graph*>(to_handle(o));
  if (!g) throw ValueError("CUDAGraph: a null graph handle");
  return g;
}
PyObject* pool_handle(PoolRef pool) {
  if (!pool) Py_RETURN_NONE;
  return from_handle(new PoolRef(std::move(pool)));
}
#endif

FASTT_CUDA_FN(graph_create, "CUDAGraph", {
  (void)arg;
  return from_handle(new cuda::Graph());
})
FASTT_CUDA_FN(graph_destroy, "CUDAGraph", {
  delete static_cast<cuda::Graph*>(to_handle(arg));
  Py_RETURN_NONE;
})
// _cuda_graph_capture_begin(graph, pool or None, mode)
FASTT_CUDA_FN(graph_capture_begin, "CUDAGraph.capture_begin", {
  Args a("_cuda_graph_capture_begin", arg, 3);
  cuda::Graph* g = to_graph(a.a[0]);
  PoolRef pool;
  if (a.a[1] != Py_None) pool = *static_cast<PoolRef*>(to_handle(a.a[1]));
  g->capture_begin(std::move(pool), int(to_int(a.a[2], "mode")));
  Py_RETURN_NONE;
})
FASTT_CUDA_FN(graph_capture_end, "CUDAGraph.capture_end", {
  to_graph(arg)->capture_end();
  Py_RETURN_NONE;
})
FASTT_CUDA_FN(graph_replay, "CUDAGraph.replay", {
  cuda::Graph* g = to_graph(arg);
  without_gil([&] {
    g->replay();
    return 0;
  });
  Py_RETURN_NONE;
})
FASTT_CUDA_FN(graph_reset, "CUDAGraph.reset", {
  to_graph(arg)->reset();
  Py_RETURN_NONE;
})
// _cuda_graph_pool(graph) -> a new pool handle (None before a capture)
FASTT_CUDA_FN(graph_pool, "CUDAGraph.pool", {
  return pool_handle(to_graph(arg)->pool());
})
FASTT_CUDA_FN(graph_pool_create, "graph_pool_handle", {
  return pool_handle(cuda::new_graph_pool(device_arg(arg)));
})
FASTT_CUDA_FN(graph_pool_destroy, "graph_pool_handle", {
  delete static_cast<PoolRef*>(to_handle(arg));
  Py_RETURN_NONE;
})
// _cuda_is_capturing(device): whether its current stream is capturing
FASTT_CUDA_FN(is_capturing, "is_current_stream_capturing", {
  const int d = device_arg(arg);
  cuda::check_device(d, "is_current_stream_capturing");
  return PyBool_FromLong(cuda::stream_is_capturing(cuda::current_stream(d)));
})

}  // namespace

#define FASTT_CUDA_NOARGS(name, fn) {name, fn, METH_NOARGS, nullptr}
#define FASTT_CUDA_O(name, fn) {name, fn, METH_O, nullptr}
#define FASTT_CUDA_VA(name, fn) {name, fn, METH_VARARGS, nullptr}
#define FASTT_CUDA_KW(name, fn)                                            \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}

PyMethodDef g_cuda_functions[] = {
    FASTT_CUDA_NOARGS("_cuda_get_device_count", f_device_count),
    FASTT_CUDA_NOARGS("_cuda_current_device", f_current_device),
    FASTT_CUDA_O("_cuda_set_device", f_set_device),
    FASTT_CUDA_O("_cuda_synchronize", f_synchronize),
    FASTT_CUDA_O("_cuda_current_stream", f_current_stream),
    FASTT_CUDA_VA("_cuda_set_stream", f_set_stream),
    FASTT_CUDA_VA("_cuda_stream_create", f_stream_create),
    FASTT_CUDA_VA("_cuda_stream_query", f_stream_query),
    FASTT_CUDA_VA("_cuda_stream_synchronize", f_stream_synchronize),
    FASTT_CUDA_VA("_cuda_stream_priority", f_stream_priority),
    FASTT_CUDA_VA("_cuda_stream_wait_event", f_stream_wait_event),
    FASTT_CUDA_NOARGS("_cuda_stream_priority_range", f_stream_priority_range),
    FASTT_CUDA_VA("_cuda_event_create", f_event_create),
    FASTT_CUDA_O("_cuda_event_destroy", f_event_destroy),
    FASTT_CUDA_VA("_cuda_event_record", f_event_record),
    FASTT_CUDA_VA("_cuda_event_query", f_event_query),
    FASTT_CUDA_VA("_cuda_event_synchronize", f_event_synchronize),
    FASTT_CUDA_VA("_cuda_event_elapsed_time", f_event_elapsed_time),
    FASTT_CUDA_O("_cuda_memory_stats", f_memory_stats),
    FASTT_CUDA_O("_cuda_reset_peak_memory_stats", f_reset_peak_memory_stats),
    FASTT_CUDA_O("_cuda_reset_accumulated_memory_stats",
                 f_reset_accumulated_memory_stats),
    FASTT_CUDA_NOARGS("_cuda_empty_cache", f_empty_cache),
    FASTT_CUDA_O("_cuda_mem_get_info", f_mem_get_info),
    FASTT_CUDA_NOARGS("_cuda_host_memory_stats", f_host_memory_stats),
    FASTT_CUDA_O("_cuda_get_device_properties", f_device_properties),
    FASTT_CUDA_NOARGS("_cuda_graph_create", f_graph_create),
    FASTT_CUDA_O("_cuda_graph_destroy", f_graph_destroy),
    FASTT_CUDA_VA("_cuda_graph_capture_begin", f_graph_capture_begin),
    FASTT_CUDA_O("_cuda_graph_capture_end", f_graph_capture_end),
    FASTT_CUDA_O("_cuda_graph_replay", f_graph_replay),
    FASTT_CUDA_O("_cuda_graph_reset", f_graph_reset),
    FASTT_CUDA_O("_cuda_graph_pool", f_graph_pool),
    FASTT_CUDA_O("_cuda_graph_pool_create", f_graph_pool_create),
    FASTT_CUDA_O("_cuda_graph_pool_destroy", f_graph_pool_destroy),
    FASTT_CUDA_O("_cuda_is_capturing", f_is_capturing),
    {nullptr, nullptr, 0, nullptr}};

PyMethodDef g_cuda_methods[] = {
    FASTT_CUDA_KW("pin_memory", m_pin_memory),
    FASTT_CUDA_KW("is_pinned", m_is_pinned),
    FASTT_CUDA_KW("record_stream", m_record_stream),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

// fastt._C's CUDA runtime functions (_cuda_*: devices, streams, events,
// memory statistics) and the Tensor methods pin_memory / is_pinned /
// record_stream; python/fastt/cuda.py builds torch.cuda's API on them.
// Streams and events cross into Python as integer handles. Built without
// CUDA, the queries answer "none" and everything else raises RuntimeError.
#include "csrc/python/common.h"
#include "csrc/storage.h"
#ifdef FASTT_WITH_CUDA
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/runtime.h"
#include "kernels/cuda/stream.h"
#endif

namespace fastt {
namespace py {

namespace {

#ifdef FASTT_WITH_CUDA
constexpr bool kBuilt = true;
cudaStream_t to_stream(PyObject* o) {
  void* p = o == Py_None ? nullptr : PyLong_AsVoidPtr(o);
  if (PyErr_Occurred()) throw_py();
  return static_cast<cudaStream_t>(p);
}
cudaEvent_t to_event(PyObject* o) {
  void* p = o == Py_None ? nullptr : PyLong_AsVoidPtr(o);
  if (PyErr_Occurred()) throw_py();
  return static_cast<cudaEvent_t>(p);
}
PyObject* from_handle(const void* h) {
  if (!h) return PyLong_FromLong(0);
  return PyLong_FromVoidPtr(const_cast<void*>(h));
}
int device_arg(PyObject* o) {
  return given(o) ? int(to_int(o, "device")) : cuda::current_device();
}
#else
constexpr bool kBuilt = false;
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

// Arguments: a fixed count of positional objects (None allowed).
void get_args(const char* name, PyObject* args, Py_ssize_t n,
              PyObject** out) {
  Py_ssize_t got = PyTuple_GET_SIZE(args);
  if (got != n) {
    PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)",
                 name, n, got);
    throw_py();
  }
  for (Py_ssize_t i = 0; i < n; ++i) out[i] = PyTuple_GET_ITEM(args, i);
}

PyObject* f_is_built(PyObject*, PyObject*) { return PyBool_FromLong(kBuilt); }

PyObject* f_device_count(PyObject*, PyObject*) {
#ifdef FASTT_WITH_CUDA
  return PyLong_FromLong(cuda::device_count());
#else
  return PyLong_FromLong(0);
#endif
}

PyObject* f_current_device(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("current_device", {
    cuda::require_device("current_device");
    return PyLong_FromLong(cuda::current_device());
  })
  FASTT_PY_END
}

PyObject* f_set_device(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("set_device", {
    cuda::set_device(int(to_int(arg, "device")));
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

PyObject* f_synchronize(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("synchronize", {
    int d = device_arg(arg);
    without_gil([&] {
      cuda::synchronize(d);
      return 0;
    });
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

// _cuda_current_stream(device) -> handle
PyObject* f_current_stream(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("current_stream", {
    cuda::require_device("current_stream");
    int d = device_arg(arg);
    FASTT_CHECK(d >= 0 && d < cuda::device_count(), ValueError,
                "current_stream: invalid device ordinal {}", d);
    return from_handle(cuda::current_stream(d));
  })
  FASTT_PY_END
}

// _cuda_set_stream(device, handle)
PyObject* f_set_stream(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[2];
  get_args("_cuda_set_stream", args, 2, a);
  FASTT_CUDA_ONLY("set_stream", {
    cuda::require_device("set_stream");
    int d = int(to_int(a[0], "device"));
    FASTT_CHECK(d >= 0 && d < cuda::device_count(), ValueError,
                "set_stream: invalid device ordinal {}", d);
    cuda::set_current_stream(d, to_stream(a[1]));
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

// _cuda_stream_create(device, priority) -> handle
PyObject* f_stream_create(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[2];
  get_args("_cuda_stream_create", args, 2, a);
  FASTT_CUDA_ONLY("Stream", {
    cuda::require_device("Stream");
    int d = device_arg(a[0]);
    int priority = int(to_int(a[1], "priority"));
    return from_handle(cuda::Stream::create(d, priority).handle());
  })
  FASTT_PY_END
}

// _cuda_stream_query / _synchronize / _priority (device, handle)
#ifdef FASTT_WITH_CUDA
template <class F>
PyObject* stream_op(const char* name, PyObject* args, F f) {
  PyObject* a[2];
  get_args(name, args, 2, a);
  return f(int(to_int(a[0], "device")), to_stream(a[1]));
}
#endif

PyObject* f_stream_query(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("Stream.query", {
    return stream_op("_cuda_stream_query", args, [](int d, cudaStream_t s) {
      return PyBool_FromLong(cuda::stream_query(s, d));
    });
  })
  FASTT_PY_END
}

PyObject* f_stream_synchronize(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("Stream.synchronize", {
    return stream_op("_cuda_stream_synchronize", args,
                     [](int d, cudaStream_t s) {
                       without_gil([&] {
                         cuda::stream_synchronize(s, d);
                         return 0;
                       });
                       Py_RETURN_NONE;
                     });
  })
  FASTT_PY_END
}

PyObject* f_stream_priority(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("Stream.priority", {
    return stream_op("_cuda_stream_priority", args, [](int d, cudaStream_t s) {
      return PyLong_FromLong(cuda::stream_priority(s, d));
    });
  })
  FASTT_PY_END
}

// _cuda_stream_wait_event(device, stream, event)
PyObject* f_stream_wait_event(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[3];
  get_args("_cuda_stream_wait_event", args, 3, a);
  FASTT_CUDA_ONLY("Stream.wait_event", {
    cudaEvent_t e = to_event(a[2]);
    if (e)
      cuda::stream_wait_event(to_stream(a[1]), int(to_int(a[0], "device")), e);
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

PyObject* f_stream_priority_range(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("priority_range", {
    int least = 0, greatest = 0;
    cuda::stream_priority_range(&least, &greatest);
    return Py_BuildValue("(ii)", least, greatest);
  })
  FASTT_PY_END
}

// _cuda_event_create(device, enable_timing, blocking, interprocess)
PyObject* f_event_create(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[4];
  get_args("_cuda_event_create", args, 4, a);
  FASTT_CUDA_ONLY("Event", {
    return from_handle(cuda::event_create(
        device_arg(a[0]), to_bool(a[1], "enable_timing"),
        to_bool(a[2], "blocking"), to_bool(a[3], "interprocess")));
  })
  FASTT_PY_END
}

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
PyObject* f_event_record(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[3];
  get_args("_cuda_event_record", args, 3, a);
  FASTT_CUDA_ONLY("Event.record", {
    cuda::event_record(to_event(a[0]), to_stream(a[2]),
                       int(to_int(a[1], "device")));
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

// _cuda_event_query / _synchronize(event, device): the device's deferred
// kernel errors are raised once the event completed.
PyObject* f_event_query(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[2];
  get_args("_cuda_event_query", args, 2, a);
  FASTT_CUDA_ONLY("Event.query", {
    return PyBool_FromLong(cuda::event_query(
        to_event(a[0]), int(to_int(a[1], "device"))));
  })
  FASTT_PY_END
}

PyObject* f_event_synchronize(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[2];
  get_args("_cuda_event_synchronize", args, 2, a);
  FASTT_CUDA_ONLY("Event.synchronize", {
    cudaEvent_t e = to_event(a[0]);
    const int d = int(to_int(a[1], "device"));
    without_gil([&] {
      cuda::event_synchronize(e, d);
      return 0;
    });
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

PyObject* f_event_elapsed_time(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject* a[2];
  get_args("_cuda_event_elapsed_time", args, 2, a);
  FASTT_CUDA_ONLY("Event.elapsed_time", {
    return PyFloat_FromDouble(
        cuda::event_elapsed_time(to_event(a[0]), to_event(a[1])));
  })
  FASTT_PY_END
}

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
PyObject* f_memory_stats(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("memory_stats", {
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
  FASTT_PY_END
}

PyObject* f_reset_peak_memory_stats(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("reset_peak_memory_stats", {
    cuda::reset_peak_memory_stats(device_arg(arg));
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

PyObject* f_reset_accumulated_memory_stats(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("reset_accumulated_memory_stats", {
    cuda::reset_accumulated_memory_stats(device_arg(arg));
    Py_RETURN_NONE;
  })
  FASTT_PY_END
}

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

PyObject* f_mem_get_info(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("mem_get_info", {
    size_t free_bytes = 0, total = 0;
    cuda::mem_get_info(device_arg(arg), &free_bytes, &total);
    return Py_BuildValue("(KK)", (unsigned long long)free_bytes,
                         (unsigned long long)total);
  })
  FASTT_PY_END
}

PyObject* f_host_memory_stats(PyObject*, PyObject*) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("host_memory_stats", {
    cuda::HostAllocatorStats s = cuda::host_memory_stats();
    return Py_BuildValue("{sLsLsL}", "allocated_bytes",
                         (long long)s.allocated_bytes, "reserved_bytes",
                         (long long)s.reserved_bytes, "num_host_allocs",
                         (long long)s.num_host_allocs);
  })
  FASTT_PY_END
}

// _cuda_get_device_properties(device) -> (name, total_memory, major,
// minor, multi_processor_count)
PyObject* f_device_properties(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  FASTT_CUDA_ONLY("get_device_properties", {
    const cudaDeviceProp& p = cuda::device_props(device_arg(arg));
    return Py_BuildValue("(sKiii)", p.name, (unsigned long long)p.totalGlobalMem,
                         p.major, p.minor, p.multiProcessorCount);
  })
  FASTT_PY_END
}

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

}  // namespace

#define FASTT_CUDA_NOARGS(name, fn) {name, fn, METH_NOARGS, nullptr}
#define FASTT_CUDA_O(name, fn) {name, fn, METH_O, nullptr}
#define FASTT_CUDA_VA(name, fn) {name, fn, METH_VARARGS, nullptr}
#define FASTT_CUDA_KW(name, fn)                                            \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}

PyMethodDef g_cuda_functions[] = {
    FASTT_CUDA_NOARGS("_cuda_is_built", f_is_built),
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
    {nullptr, nullptr, 0, nullptr}};

PyMethodDef g_cuda_methods[] = {
    FASTT_CUDA_KW("pin_memory", m_pin_memory),
    FASTT_CUDA_KW("is_pinned", m_is_pinned),
    FASTT_CUDA_KW("record_stream", m_record_stream),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

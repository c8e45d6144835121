// Shared pieces of the CPython binding fastt._C: the Tensor object layout,
// wrap/unwrap, exception translation, scalar/int/dtype argument parsing and
// a tiny FASTCALL keyword parser. The binding converts and nothing else.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "csrc/device.h"
#include "csrc/dtype.h"
#include "csrc/errors.h"
#include "csrc/generator.h"
#include "csrc/scalar.h"
#include "csrc/autograd.h"
#include "csrc/tensor.h"

namespace fastt {
namespace py {

// ---- The Tensor object: a fastt::Tensor stored inline, no __dict__ ----
struct TensorObject {
  PyObject_HEAD
  Tensor t;
  PyObject* weakrefs;
};
extern PyTypeObject TensorType;

inline bool is_tensor(PyObject* o) {
  return Py_TYPE(o) == &TensorType || PyObject_TypeCheck(o, &TensorType);
}
inline const Tensor& unwrap(PyObject* o) {
  return reinterpret_cast<TensorObject*>(o)->t;
}
inline Tensor& unwrap_mut(PyObject* o) {
  return reinterpret_cast<TensorObject*>(o)->t;
}
// A new Python tensor owning `t`, from a free list of dead Tensor objects
// when possible (inline: it is on every op's path).
constexpr int kFreeListMax = 1024;
extern TensorObject* g_free_list[kFreeListMax];
extern int g_free_count;
PyObject* wrap_slow(Tensor&& t);
__attribute__((always_inline)) inline PyObject* wrap(Tensor&& t) {
  if (FASTT_UNLIKELY(g_free_count == 0)) return wrap_slow(std::move(t));
  TensorObject* o = g_free_list[--g_free_count];
  PyObject* op = reinterpret_cast<PyObject*>(o);
#if !defined(Py_TRACE_REFS) && !defined(Py_GIL_DISABLED)
  // What PyObject_Init does for a static type, inline (a recycled object
  // keeps tracemalloc's record of its first allocation).
  Py_SET_TYPE(op, &TensorType);
  Py_SET_REFCNT(op, 1);
#else
  PyObject_Init(op, &TensorType);
#endif
  new (&o->t) Tensor(std::move(t));
  o->weakrefs = nullptr;
  return op;
}
inline PyObject* wrap(const Tensor& t) { return wrap(Tensor(t)); }

// Thrown by helpers when a Python exception is already set.
struct PyErrAlreadySet {};
[[noreturn]] inline void throw_py() { throw PyErrAlreadySet{}; }
// Sets the Python exception for the C++ exception in flight; returns NULL.
PyObject* translate_exception();
int translate_exception_int();

// ---- dtype / device / Size objects ----
struct DTypeObject {
  PyObject_HEAD
  DType dtype;
};
extern PyTypeObject DTypeType;
extern PyObject* g_dtype_objects[kNumDTypes];  // borrowed singletons
inline PyObject* dtype_object(DType t) {
  PyObject* o = g_dtype_objects[int(t)];
  Py_INCREF(o);
  return o;
}

struct DeviceObject {
  PyObject_HEAD
  Device device;
};
extern PyTypeObject DeviceType;
PyObject* device_object(Device d);

extern PyTypeObject SizeType;
PyObject* make_size(IntList sizes);

// ---- Argument conversion (all throw PyErrAlreadySet on failure) ----
// 1: converted, 0: not a Python number (no error set).
int try_scalar(PyObject* o, Scalar* out);
Scalar to_scalar(PyObject* o, const char* what);
// What an operator operand is: 1 a Tensor, 2 a Python number (stored in
// *s), 0 anything else. Exact types are tested first so a float operand
// never pays for a subtype walk.
enum { kOperandOther = 0, kOperandTensor = 1, kOperandScalar = 2 };
inline int classify_operand(PyObject* o, Scalar* s) {
  PyTypeObject* tp = Py_TYPE(o);
  if (tp == &TensorType) return kOperandTensor;
  if (tp == &PyFloat_Type) {
    *s = Scalar(PyFloat_AS_DOUBLE(o));
    return kOperandScalar;
  }
  if (is_tensor(o)) return kOperandTensor;
  return try_scalar(o, s) ? kOperandScalar : kOperandOther;
}
int64_t to_int(PyObject* o, const char* what);
double to_double(PyObject* o, const char* what);
bool to_bool(PyObject* o, const char* what);
// None -> fallback.
DType to_dtype(PyObject* o, DType fallback);
bool is_dtype(PyObject* o);
Device to_device(PyObject* o, Device fallback);
// A tensor argument; scalars are not accepted.
const Tensor& to_tensor(PyObject* o, const char* what);
// A tensor, or a Python number / nested list made into one.
Tensor to_tensor_like(PyObject* o, const char* what);

// Int lists: a tuple/list/Size of ints, or ints given as varargs.
struct SmallInts {
  int64_t v[kMaxDims];
  int n = 0;
  IntList list() const { return {v, size_t(n)}; }
};
void parse_ints(PyObject* o, SmallInts* out, const char* what);
void parse_varargs_ints(PyObject* const* args, Py_ssize_t nargs,
                        SmallInts* out, const char* what);

// A positional+keyword FASTCALL parser. `names` lists parameter names;
// a leading '$' marks the first keyword-only one. Unset slots are NULL.
struct Signature {
  const char* fname;
  const char* names[10];
  int nreq;       // required positional count
  int npos = -1;  // positional slots, when no '$' marks them (binder.h)
};
void parse_args(const Signature& sig, PyObject* const* args, Py_ssize_t nargs,
                PyObject* kwnames, PyObject** out);

// fastt.f(input=x, ...) for a function given no positional argument: calls
// m(x, <the other keywords>) or raises torch's "missing 'input'" TypeError.
using MethodFn = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t,
                               PyObject*);
PyObject* call_with_input_kw(MethodFn m, const char* name,
                             PyObject* const* args, PyObject* kwnames);
// torch.add(2, t), torch.pow(2, t), ...: torch takes a Python number as
// the input of these functions, a wrapped number as in the reflected
// operator (2 + t). For a number args[0] and a tensor args[1], calls m on a
// 0-d tensor of the dtype they promote to (so the result's dtype and values
// are the operator's); anything else goes to m unchanged.
// Only the functions torch allows this for use it (FASTT_FN_NUMBER_INPUT:
// the PyAllNum rows of elementwise.def, add, sub, div, floor_divide).
PyObject* call_with_number_input(MethodFn m, const char* name,
                                 PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames);

// `out=` for ops whose core has no _out form: checks the cast like torch,
// resizes an empty out, copies r into it and returns a new reference to out.
PyObject* store_out(PyObject* out, const Tensor& r, const char* name);

// Python value of a Scalar.
PyObject* scalar_to_py(const Scalar& s);

// Kernels on at least this many elements run without the GIL.
constexpr int64_t kReleaseGILNumel = 32768;
// Graph breaks of fastt.compile recordings noted without the GIL; the
// thread notes where its Python code stood once it holds the GIL again
// (python/src/capture.cpp).
extern std::atomic<int> g_breaks_without_gil;
void note_break_frames_after_gil();
// Runs f without the GIL (big kernels, file I/O); exceptions propagate
// with the GIL held again.
template <class F>
inline auto without_gil(F&& f) -> decltype(f()) {
  PyThreadState* st = PyEval_SaveThread();
  try {
    decltype(f()) r = f();
    PyEval_RestoreThread(st);
    if (FASTT_UNLIKELY(g_breaks_without_gil.load(std::memory_order_relaxed)))
      note_break_frames_after_gil();
    return r;
  } catch (...) {
    PyEval_RestoreThread(st);
    throw;
  }
}
template <class F>
inline auto maybe_release_gil(int64_t numel, F&& f) -> decltype(f()) {
  if (FASTT_LIKELY(numel < kReleaseGILNumel)) return f();
  return without_gil(f);
}

// ---- Module pieces defined in other files ----
extern PyMethodDef g_tensor_methods[];
extern PyMethodDef g_module_functions[];
extern PyMethodDef g_convert_functions[];
extern PyMethodDef g_factory_functions[];
extern PyMethodDef g_factory_methods[];
extern PyMethodDef g_reduce_functions[];
extern PyMethodDef g_reduce_methods[];
extern PyMethodDef g_index_functions[];
extern PyMethodDef g_index_methods[];
extern PyMethodDef g_linalg_functions[];
extern PyMethodDef g_linalg_methods[];
extern PyMethodDef g_optim_functions[];  // optim.cpp
extern PyMethodDef g_autograd_functions[];  // autograd.cpp
extern PyMethodDef g_serialize_functions[];  // serialize.cpp
extern PyMethodDef g_profiler_functions[];  // profiler.cpp
extern PyMethodDef g_capture_functions[];  // capture.cpp
bool init_capture_type(PyObject* module);
extern PyMethodDef g_autograd_methods[];
bool init_autograd_types(PyObject* module);
// fastt.Generator and fastt.default_generator (generator.cpp).
bool init_generator_type(PyObject* module);
// A generator= argument: null for None / not given (the default one).
fastt::Generator* generator_arg(PyObject* o, const char* fname);
PyObject* get_requires_grad(PyObject* self, void*);
int set_requires_grad(PyObject* self, PyObject* v, void*);
PyObject* get_grad(PyObject* self, void*);
int set_grad(PyObject* self, PyObject* v, void*);
PyObject* get_grad_fn(PyObject* self, void*);
PyObject* get_is_leaf(PyObject* self, void*);
PyObject* get_retains_grad(PyObject* self, void*);
PyObject* get_version(PyObject* self, void*);
PyObject* get_base(PyObject* self, void*);
PyObject* get_data(PyObject* self, void*);
int set_data(PyObject* self, PyObject* value, void*);
PyObject* tensor_getitem(PyObject* self, PyObject* index);
int tensor_setitem(PyObject* self, PyObject* index, PyObject* value);
// tensor(data, dtype, device) from nested sequences / scalars / buffers.
Tensor tensor_from_data(PyObject* data, PyObject* dtype, PyObject* device,
                        bool copy);
// torch's legacy constructor forms (tensor_type.cpp): () / (*sizes) /
// (Size) / (tensor) / (data), in `dtype` on `device`.
Tensor legacy_new(DType dtype, Device device, PyObject* args,
                  const char* name);
PyObject* tensor_tolist(const Tensor& t);
int tensor_getbuffer(PyObject* self, Py_buffer* view, int flags);
void tensor_releasebuffer(PyObject* self, Py_buffer* view);
PyObject* tensor_dlpack(PyObject* self, PyObject* const* args,
                        Py_ssize_t nargs, PyObject* kwnames);
PyObject* tensor_dlpack_device(PyObject* self, PyObject*);
PyObject* tensor_numpy(PyObject* self, PyObject* const* args,
                       Py_ssize_t nargs, PyObject* kwnames);
PyObject* tensor_array(PyObject* self, PyObject* const* args,
                       Py_ssize_t nargs, PyObject* kwnames);
bool init_types(PyObject* module);

inline bool given(PyObject* o) { return o && o != Py_None; }
inline PyObject* return_self(PyObject* self) {
  Py_INCREF(self);
  return self;
}

}  // namespace py
}  // namespace fastt

// Each op is written once as a method body m_<name>(self, args...);
// FASTT_FN(name) makes the function form: fastt.<name>(input, ...) calls
// m_<name>(input, ...).
#define FASTT_METHOD(name)                                              \
  static PyObject* m_##name(PyObject* self, PyObject* const* args,      \
                            Py_ssize_t nargs, PyObject* kwnames)
#define FASTT_FN(name)                                                      \
  static PyObject* f_##name(PyObject*, PyObject* const* args,              \
                            Py_ssize_t nargs, PyObject* kwnames) {         \
    if (nargs < 1)                                                          \
      return ::fastt::py::call_with_input_kw(m_##name, #name, args,        \
                                             kwnames);                     \
    return m_##name(args[0], args + 1, nargs - 1, kwnames);                 \
  }
// FASTT_FN for the binary ops whose input may be a Python number.
#define FASTT_FN_NUMBER_INPUT(name)                                         \
  static PyObject* f_##name(PyObject*, PyObject* const* args,              \
                            Py_ssize_t nargs, PyObject* kwnames) {         \
    if (nargs < 1)                                                          \
      return ::fastt::py::call_with_input_kw(m_##name, #name, args,        \
                                             kwnames);                     \
    if (FASTT_UNLIKELY(!::fastt::py::is_tensor(args[0])))                  \
      return ::fastt::py::call_with_number_input(m_##name, #name, args,    \
                                                 nargs, kwnames);          \
    return m_##name(args[0], args + 1, nargs - 1, kwnames);                 \
  }

namespace fastt {
namespace py {

}  // namespace py
}  // namespace fastt

// Wraps a binding body: C++ exceptions become Python exceptions.
#define FASTT_PY_BEGIN try {
#define FASTT_PY_END                               \
  }                                                \
  catch (...) {                                    \
    return ::fastt::py::translate_exception();     \
  }
#define FASTT_PY_END_INT                           \
  }                                                \
  catch (...) {                                    \
    return ::fastt::py::translate_exception_int(); \
  }

// fastt.Generator: torch.Generator over fastt::Generator (csrc/generator.h),
// a seedable Philox stream that the random ops take as generator=.
// fastt.default_generator wraps the process-wide one (not owned). One
// generator type serves CPU and CUDA ops (the counters are device-free);
// the device attribute records what the user asked for.
#include "binder.h"
#include "csrc/capture.h"
#include "csrc/generator.h"

namespace fastt {
namespace py {

struct GeneratorObject {
  PyObject_HEAD
  Generator* gen;
  bool owned;
  Device device;
};
extern PyTypeObject GeneratorType;

Generator* generator_arg(PyObject* o, const char* fname) {
  if (!given(o)) return nullptr;
  if (!PyObject_TypeCheck(o, &GeneratorType))
    throw TypeError(fmt::format(
        "{}(): argument 'generator' must be torch.Generator, not {}", fname,
        Py_TYPE(o)->tp_name));
  return reinterpret_cast<GeneratorObject*>(o)->gen;
}

static PyObject* gen_new(PyTypeObject* type, PyObject* args, PyObject* kw) {
  FASTT_PY_BEGIN
  static const char* names[] = {"device", nullptr};
  PyObject* dev = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Generator",
                                   const_cast<char**>(names), &dev))
    return nullptr;
  Device d = to_device(dev, kCPU);
  auto* o = reinterpret_cast<GeneratorObject*>(type->tp_alloc(type, 0));
  if (!o) return nullptr;
  o->gen = new Generator();
  o->owned = true;
  o->device = d;
  return reinterpret_cast<PyObject*>(o);
  FASTT_PY_END
}
static void gen_dealloc(PyObject* self) {
  auto* o = reinterpret_cast<GeneratorObject*>(self);
  if (o->owned) delete o->gen;
  Py_TYPE(self)->tp_free(self);
}
static Generator& gen_of(PyObject* self) {
  return *reinterpret_cast<GeneratorObject*>(self)->gen;
}
static PyObject* gen_manual_seed(PyObject* self, PyObject* o) {
  FASTT_PY_BEGIN
  // torch accepts any seed in [-2^63, 2^64); negatives wrap to uint64.
  uint64_t seed = PyLong_Check(o) ? PyLong_AsUnsignedLongLong(o) : 0;
  if (!PyLong_Check(o) || (seed == uint64_t(-1) && PyErr_Occurred())) {
    PyErr_Clear();
    seed = uint64_t(to_int(o, "seed"));
  }
  gen_of(self).manual_seed(seed);
  Py_INCREF(self);
  return self;
  FASTT_PY_END
}
static PyObject* gen_seed(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  return PyLong_FromUnsignedLongLong(gen_of(self).seed());
  FASTT_PY_END
}
static PyObject* gen_initial_seed(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  return PyLong_FromUnsignedLongLong(gen_of(self).initial_seed());
  FASTT_PY_END
}
static PyObject* gen_get_state(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  std::vector<uint8_t> b = gen_of(self).get_state();
  capture::host_read("Generator.get_state()");
  Tensor t = Tensor::empty({int64_t(b.size())}, DType::UInt8);
  std::memcpy(t.data_ptr(), b.data(), b.size());
  return wrap(std::move(t));
  FASTT_PY_END
}
static PyObject* gen_set_state(PyObject* self, PyObject* o) {
  FASTT_PY_BEGIN
  FASTT_CHECK(is_tensor(o) && unwrap(o).dtype() == DType::UInt8, TypeError,
              "set_state: expected a torch.ByteTensor, but got {}",
              is_tensor(o) ? dtype_name(unwrap(o).dtype())
                           : Py_TYPE(o)->tp_name);
  Tensor t = unwrap(o).contiguous().to(kCPU);
  gen_of(self).set_state(static_cast<const uint8_t*>(t.data_ptr()),
                         size_t(t.numel()));
  Py_INCREF(self);
  return self;
  FASTT_PY_END
}
static PyObject* gen_device(PyObject* self, void*) {
  return device_object(reinterpret_cast<GeneratorObject*>(self)->device);
}
static PyObject* gen_repr(PyObject* self) {
  return PyUnicode_FromFormat("<fastt._C.Generator object at %p>", self);
}
// Pickles as (Generator, (device,)) plus its state.
static PyObject* gen_reduce(PyObject* self, PyObject*) {
  FASTT_PY_BEGIN
  PyObject* state = gen_get_state(self, nullptr);
  if (!state) return nullptr;
  PyObject* dev = gen_device(self, nullptr);
  if (!dev) {
    Py_DECREF(state);
    return nullptr;
  }
  return Py_BuildValue("(O(N)N)", reinterpret_cast<PyObject*>(&GeneratorType),
                       dev, state);
  FASTT_PY_END
}
static PyObject* gen_setstate(PyObject* self, PyObject* state) {
  return gen_set_state(self, state);
}

static PyMethodDef g_gen_methods[] = {
    {"manual_seed", gen_manual_seed, METH_O,
     "Sets the seed (and rewinds the stream); returns the generator."},
    {"seed", gen_seed, METH_NOARGS,
     "Seeds from a non-deterministic source; returns the seed."},
    {"initial_seed", gen_initial_seed, METH_NOARGS, "The seed it started from."},
    {"get_state", gen_get_state, METH_NOARGS,
     "Its state as a uint8 tensor (seed and offset)."},
    {"set_state", gen_set_state, METH_O,
     "Restores a state from get_state; returns the generator."},
    {"__reduce__", gen_reduce, METH_NOARGS, nullptr},
    {"__setstate__", gen_setstate, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr}};
static PyGetSetDef g_gen_getset[] = {
    {"device", gen_device, nullptr, "The device it was made for.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject GeneratorType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "fastt._C.Generator";
  t.tp_basicsize = sizeof(GeneratorObject);
  t.tp_dealloc = gen_dealloc;
  t.tp_repr = gen_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t.tp_doc =
      "Generator(device='cpu'): a random stream for the generator= argument "
      "of the random ops (torch.Generator).";
  t.tp_methods = g_gen_methods;
  t.tp_getset = g_gen_getset;
  t.tp_new = gen_new;
  return t;
}();

bool init_generator_type(PyObject* m) {
  if (PyType_Ready(&GeneratorType) < 0) return false;
  Py_INCREF(&GeneratorType);
  if (PyModule_AddObject(m, "Generator",
                         reinterpret_cast<PyObject*>(&GeneratorType)) < 0)
    return false;
  auto* d = PyObject_New(GeneratorObject, &GeneratorType);
  if (!d) return false;
  d->gen = &default_generator();
  d->owned = false;
  d->device = kCPU;
  return PyModule_AddObject(m, "default_generator",
                            reinterpret_cast<PyObject*>(d)) == 0;
}

}  // namespace py
}  // namespace fastt

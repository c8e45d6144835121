/* The latency floor for bench/bench_python.py: the least a C extension can
 * do for `a + b` on two tiny float buffers (one slot call, one allocation,
 * one loop) and for a no-op call. fastt's binding is measured against it.
 * Built on the fly by bench_python.py; nothing else uses it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
  PyObject_VAR_HEAD
  float data[1];
} FloorBuf;

static PyTypeObject FloorBufType;

static PyObject* buf_add(PyObject* a, PyObject* b) {
  if (Py_TYPE(a) != &FloorBufType || Py_TYPE(b) != &FloorBufType)
    Py_RETURN_NOTIMPLEMENTED;
  Py_ssize_t n = Py_SIZE(a);
  if (Py_SIZE(b) != n) {
    PyErr_SetString(PyExc_ValueError, "size mismatch");
    return NULL;
  }
  FloorBuf* r = PyObject_NewVar(FloorBuf, &FloorBufType, n);
  if (!r) return NULL;
  const float* x = ((FloorBuf*)a)->data;
  const float* y = ((FloorBuf*)b)->data;
  for (Py_ssize_t i = 0; i < n; ++i) r->data[i] = x[i] + y[i];
  return (PyObject*)r;
}

static PyNumberMethods buf_number = {.nb_add = buf_add};

static PyTypeObject FloorBufType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "floor.Buf",
    .tp_basicsize = offsetof(FloorBuf, data),
    .tp_itemsize = sizeof(float),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_as_number = &buf_number,
};

static PyObject* make(PyObject* self, PyObject* arg) {
  Py_ssize_t n = PyLong_AsSsize_t(arg);
  if (n < 0 && PyErr_Occurred()) return NULL;
  FloorBuf* r = PyObject_NewVar(FloorBuf, &FloorBufType, n);
  if (!r) return NULL;
  for (Py_ssize_t i = 0; i < n; ++i) r->data[i] = (float)i;
  return (PyObject*)r;
}

static PyObject* noop(PyObject* self, PyObject* unused) { Py_RETURN_NONE; }

static PyMethodDef methods[] = {
    {"make", make, METH_O, "A Buf of n floats."},
    {"noop", noop, METH_NOARGS, "Does nothing."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "floor", NULL, -1,
                                    methods};

PyMODINIT_FUNC PyInit_floor(void) {
  if (PyType_Ready(&FloorBufType) < 0) return NULL;
  return PyModule_Create(&module);
}

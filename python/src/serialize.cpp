// Bindings of csrc/serialize.h (safetensors) for python/fastt/serialization.py:
// _C._save_safetensors(items, metadata) -> bytes, _save_safetensors_fd(fd,
// items, metadata), _load_safetensors(buffer) and _load_safetensors_fd(fd,
// mmap) -> ([(name, tensor), ...], {metadata}). Items are (str, Tensor)
// pairs. To add a function: write it here and add a row to the table.
#include "common.h"

#include "csrc/serialize.h"

namespace fastt {
namespace py {
namespace {

std::string to_utf8(PyObject* o, const char* what) {
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be str, not %s", what,
                 Py_TYPE(o)->tp_name);
    throw_py();
  }
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(o, &n);
  if (!s) throw_py();  // lone surrogates
  return std::string(s, size_t(n));
}

NamedTensors parse_items(PyObject* items) {
  PyObject* seq = PySequence_Fast(items, "tensors must be a sequence of "
                                         "(name, tensor) pairs");
  if (!seq) throw_py();
  NamedTensors out;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  out.reserve(size_t(n));
  try {
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
      if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "tensors must be a sequence of (name, tensor) pairs");
        throw_py();
      }
      std::string name = to_utf8(PyTuple_GET_ITEM(item, 0), "tensor name");
      out.emplace_back(std::move(name),
                       to_tensor(PyTuple_GET_ITEM(item, 1), "tensor"));
    }
  } catch (...) {
    Py_DECREF(seq);
    throw;
  }
  Py_DECREF(seq);
  return out;
}

StringMap parse_metadata(PyObject* meta) {
  StringMap out;
  if (!given(meta)) return out;
  if (!PyDict_Check(meta)) {
    PyErr_SetString(PyExc_TypeError, "metadata must be a dict of str to str");
    throw_py();
  }
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(meta, &pos, &k, &v))
    out.emplace(to_utf8(k, "metadata key"), to_utf8(v, "metadata value"));
  return out;
}

PyObject* contents_to_py(SafetensorsContents&& c) {
  PyObject* list = PyList_New(Py_ssize_t(c.tensors.size()));
  PyObject* meta = PyDict_New();
  PyObject* result = nullptr;
  if (!list || !meta) goto fail;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    PyObject* t = wrap(std::move(c.tensors[i].second));
    PyObject* pair =
        t ? Py_BuildValue("(s#N)", c.tensors[i].first.data(),
                          Py_ssize_t(c.tensors[i].first.size()), t)
          : nullptr;
    if (!pair) goto fail;
    PyList_SET_ITEM(list, Py_ssize_t(i), pair);
  }
  for (const auto& kv : c.metadata) {
    PyObject* k = PyUnicode_FromStringAndSize(kv.first.data(),
                                              Py_ssize_t(kv.first.size()));
    PyObject* v = PyUnicode_FromStringAndSize(kv.second.data(),
                                              Py_ssize_t(kv.second.size()));
    int rc = k && v ? PyDict_SetItem(meta, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    if (rc < 0) goto fail;
  }
  result = PyTuple_Pack(2, list, meta);
fail:
  Py_XDECREF(list);
  Py_XDECREF(meta);
  return result;
}


PyObject* f_save(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  PyObject *items, *meta = Py_None;
  if (!PyArg_ParseTuple(args, "O|O:_save_safetensors", &items, &meta))
    return nullptr;
  NamedTensors tensors = parse_items(items);
  StringMap metadata = parse_metadata(meta);
  std::string bytes =
      without_gil([&] { return save_safetensors(tensors, metadata); });
  return PyBytes_FromStringAndSize(bytes.data(), Py_ssize_t(bytes.size()));
  FASTT_PY_END
}

PyObject* f_save_fd(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  int fd;
  PyObject *items, *meta = Py_None;
  if (!PyArg_ParseTuple(args, "iO|O:_save_safetensors_fd", &fd, &items, &meta))
    return nullptr;
  NamedTensors tensors = parse_items(items);
  StringMap metadata = parse_metadata(meta);
  without_gil([&] {
    save_fd(fd, tensors, metadata);
    return 0;
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_load(PyObject*, PyObject* arg) {
  FASTT_PY_BEGIN
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return nullptr;
  SafetensorsContents c;
  try {
    c = without_gil([&] {
      return load_safetensors(static_cast<const char*>(view.buf),
                              size_t(view.len));
    });
  } catch (...) {
    PyBuffer_Release(&view);
    throw;
  }
  PyBuffer_Release(&view);
  return contents_to_py(std::move(c));
  FASTT_PY_END
}

PyObject* f_load_fd(PyObject*, PyObject* args) {
  FASTT_PY_BEGIN
  int fd, mmap = 0;
  if (!PyArg_ParseTuple(args, "i|p:_load_safetensors_fd", &fd, &mmap))
    return nullptr;
  SafetensorsContents c =
      without_gil([&] { return load_fd(fd, mmap != 0); });
  return contents_to_py(std::move(c));
  FASTT_PY_END
}

}  // namespace

PyMethodDef g_serialize_functions[] = {
    {"_save_safetensors", f_save, METH_VARARGS,
     "_save_safetensors(items, metadata=None) -> bytes"},
    {"_save_safetensors_fd", f_save_fd, METH_VARARGS,
     "_save_safetensors_fd(fd, items, metadata=None)"},
    {"_load_safetensors", f_load, METH_O,
     "_load_safetensors(buffer) -> (items, metadata)"},
    {"_load_safetensors_fd", f_load_fd, METH_VARARGS,
     "_load_safetensors_fd(fd, mmap=False) -> (items, metadata)"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt

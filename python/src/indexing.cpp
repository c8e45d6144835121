// t[index] and t[index] = value: each Python item becomes a TensorIndex
// (ints, slices, None, Ellipsis, bools; tensors, lists and arrays as
// tensors) and Tensor::index / index_put_ (csrc/ops/indexing.h) apply
// torch's rules.
#include <new>
#include <vector>

#include "common.h"
#include "csrc/ops/indexing.h"

namespace fastt {
namespace py {

namespace {

// The items of one index, converted once: inline up to kInline of them (no
// allocation for the common case), on the heap beyond.
class IndexItems {
 public:
  explicit IndexItems(size_t n) : on_heap_(n > kInline) {
    if (on_heap_) heap_.reserve(n);
  }
  IndexItems(const IndexItems&) = delete;
  IndexItems& operator=(const IndexItems&) = delete;
  ~IndexItems() {
    if (!on_heap_)
      for (size_t i = 0; i < size_; ++i) slot(i)->~TensorIndex();
  }
  void push(TensorIndex&& item) {
    has_tensor_ |= item.type() == indexing::TensorIndexType::Tensor;
    if (on_heap_)
      heap_.push_back(std::move(item));
    else
      new (slot(size_)) TensorIndex(std::move(item));
    ++size_;
  }
  TensorIndexList list() {
    return on_heap_ ? TensorIndexList(heap_) : TensorIndexList(slot(0), size_);
  }
  // Only tensor items run a kernel worth releasing the GIL for.
  bool has_tensor() const { return has_tensor_; }

 private:
  static constexpr size_t kInline = 8;
  TensorIndex* slot(size_t i) {
    return std::launder(reinterpret_cast<TensorIndex*>(inline_)) + i;
  }
  alignas(TensorIndex) unsigned char inline_[kInline * sizeof(TensorIndex)];
  std::vector<TensorIndex> heap_;
  size_t size_ = 0;
  bool on_heap_;
  bool has_tensor_ = false;
};

indexing::Slice to_slice(PyObject* o) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw_py();
  return {start, stop, step};
}

// Python ints and objects with __index__ (NumPy integers), not sequences.
bool is_int_like(PyObject* o) {
  return PyLong_Check(o) ||
         (!PyFloat_Check(o) && !PySequence_Check(o) &&
          Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_index);
}

// A list or array index, as a tensor (an empty list indexes nothing).
Tensor list_index(PyObject* o) {
  Tensor t = tensor_from_data(o, nullptr, nullptr, false);
  if (t.numel() == 0 && is_floating(t.dtype())) return t.to(DType::Int64);
  return t;
}

TensorIndex to_index_item(PyObject* o) {
  if (o == Py_None) return indexing::None;
  if (o == Py_Ellipsis) return indexing::Ellipsis;
  if (PyBool_Check(o)) return o == Py_True;
  if (PySlice_Check(o)) return to_slice(o);
  if (is_tensor(o)) return unwrap(o);
  if (is_int_like(o)) return to_int(o, "index");
  if (PyList_Check(o) || (PyObject_CheckBuffer(o) && !PyBytes_Check(o)))
    return list_index(o);
  PyErr_Format(PyExc_IndexError,
               "only integers, slices (`:`), ellipsis (`...`), None and long "
               "or byte Variables are valid indices (got %s)",
               Py_TYPE(o)->tp_name);
  throw_py();
}

// torch's treatSequenceAsTuple (NumPy's legacy rule): a list of fewer than
// 32 items holding a tensor, a sequence, a slice, Ellipsis or None is a
// tuple of indices, so x[[t0, t1]] is x[t0, t1]; a list of ints stays one
// index.
class AsTuple {
 public:
  explicit AsTuple(PyObject* index) : index_(index) {
    if (!PyList_Check(index) || PyList_GET_SIZE(index) >= 32) return;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(index); ++i) {
      PyObject* o = PyList_GET_ITEM(index, i);
      if (is_tensor(o) || PySequence_Check(o) || PySlice_Check(o) ||
          o == Py_Ellipsis || o == Py_None) {
        owned_ = PyList_AsTuple(index);
        if (!owned_) throw_py();
        index_ = owned_;
        return;
      }
    }
  }
  ~AsTuple() { Py_XDECREF(owned_); }
  AsTuple(const AsTuple&) = delete;
  AsTuple& operator=(const AsTuple&) = delete;
  PyObject* get() const { return index_; }

 private:
  PyObject* index_;
  PyObject* owned_ = nullptr;
};

// `index` is one item or a tuple of them.
size_t item_count(PyObject* index) {
  return PyTuple_Check(index) ? size_t(PyTuple_GET_SIZE(index)) : 1;
}
void convert_index(PyObject* index, IndexItems* items) {
  if (!PyTuple_Check(index)) return items->push(to_index_item(index));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(index); ++i)
    items->push(to_index_item(PyTuple_GET_ITEM(index, i)));
}

}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* index) {
  FASTT_PY_BEGIN
  const Tensor& t = unwrap(self);
  // Fast paths for the common single-item cases.
  if (PyLong_CheckExact(index)) {
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (overflow) throw IndexError("index out of range");
    const TensorIndex item(i);
    return wrap(t.index(TensorIndexList(&item, 1)));
  }
  if (PySlice_Check(index)) {
    const TensorIndex item(to_slice(index));
    return wrap(t.index(TensorIndexList(&item, 1)));
  }
  AsTuple idx(index);
  IndexItems items(item_count(idx.get()));
  convert_index(idx.get(), &items);
  return wrap(maybe_release_gil(items.has_tensor() ? t.numel() : 0,
                                [&] { return t.index(items.list()); }));
  FASTT_PY_END
}

int tensor_setitem(PyObject* self, PyObject* index, PyObject* value) {
  FASTT_PY_BEGIN
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items");
    return -1;
  }
  Tensor& t = unwrap_mut(self);
  AsTuple idx(index);
  IndexItems items(item_count(idx.get()));
  convert_index(idx.get(), &items);
  Scalar s;
  if (!is_tensor(value) && try_scalar(value, &s)) {
    maybe_release_gil(t.numel(), [&]() -> Tensor& {
      return t.index_put_(items.list(), s);
    });
    return 0;
  }
  Tensor v = to_tensor_like(value, "value");
  maybe_release_gil(t.numel(), [&]() -> Tensor& {
    return t.index_put_(items.list(), v);
  });
  return 0;
  FASTT_PY_END_INT
}

}  // namespace py
}  // namespace fastt

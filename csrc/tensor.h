// Tensor: an intrusive-refcounted handle to TensorImpl (sizes, strides,
// offset, dtype, device, storage). Views are TensorImpls sharing a Storage.
// Shapes live inline (up to kMaxDims), so a tensor is two pooled blocks:
// the impl and its storage (header and data together).
#pragma once
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device.h"
#include "dtype.h"
#include "errors.h"
#include "scalar.h"
#include "storage.h"

namespace fastt {

constexpr int kMaxDims = 16;

// A non-owning view of a run of T: a braced list, a vector, or a pointer
// and a size (IntList below; the index items of ops/indexing.h).
template <class T>
class ListRef {
 public:
  ListRef() = default;
  ListRef(const T* data, size_t size) : data_(data), size_(size) {}
  // For arguments like f({2, 3}): the braced list lives until the end of
  // the full expression, so never store a ListRef made from one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  ListRef(std::initializer_list<T> l) : data_(l.begin()), size_(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  ListRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  std::vector<T> vec() const { return {begin(), end()}; }

 protected:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// int64 values: sizes, strides, dims; one int converts to a list of one.
class IntList : public ListRef<int64_t> {
 public:
  using ListRef::ListRef;
  IntList() = default;
  IntList(const int64_t& single) : ListRef(&single, 1) {}
  bool equals(IntList o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (data_[i] != o.data_[i]) return false;
    return true;
  }
};

namespace indexing {
class TensorIndex;  // ops/indexing.h
using TensorIndexList = ListRef<TensorIndex>;
}  // namespace indexing

namespace autograd {
struct Node;
// Drops one reference to a graph node; frees chains iteratively.
void release(Node* node);
}  // namespace autograd

// Rarely used autograd state of a tensor (.grad, hooks, retain_grad; see
// autograd/node.h). The core only owns and frees it.
struct AutogradMeta {
  virtual ~AutogradMeta() = default;
};

struct TensorImpl {
  std::atomic<int32_t> refcount{1};
  DType dtype = DType::Float32;
  Device device;
  int8_t ndim = 0;
  bool contiguous = true;
  int64_t numel = 1;
  char* data = nullptr;  // storage data + offset * itemsize
  int64_t offset = 0;    // in elements
  Storage* storage = nullptr;
  // Autograd: `requires_grad` is the one flag every op checks; it is set on
  // leaves that ask for gradients and on every output of a recorded op,
  // whose node is `grad_fn` (owned) and which is that node's output
  // `output_nr`. Views remember their base (the non-view tensor whose
  // storage they share) so in-place writes through them reach its history.
  bool requires_grad = false;
  bool is_view = false;
  uint16_t output_nr = 0;
  autograd::Node* grad_fn = nullptr;
  TensorImpl* view_base = nullptr;  // views: the tensor viewed (owned)
  uint32_t view_version = 0;  // storage version when its history was set
  AutogradMeta* autograd = nullptr;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];

  static void* operator new(size_t n);
  static void operator delete(void* p);
  ~TensorImpl();
  // Recomputes numel and contiguous from sizes/strides.
  void refresh();
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TensorImpl* impl) : impl_(impl) {}  // adopts a reference
  Tensor(const Tensor& o) : impl_(o.impl_) {
    if (impl_) impl_->refcount.fetch_add(1, std::memory_order_relaxed);
  }
  Tensor(Tensor&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }
  Tensor& operator=(const Tensor& o) {
    Tensor(o).swap(*this);
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    Tensor(std::move(o)).swap(*this);
    return *this;
  }
  ~Tensor() {
    if (impl_ && impl_->refcount.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete impl_;
  }
  void swap(Tensor& o) noexcept { std::swap(impl_, o.impl_); }

  // Fresh, contiguous, uninitialised.
  static Tensor empty(IntList sizes, DType dtype, Device device = kCPU);
  // A tensor over an existing storage (takes a new reference to it).
  static Tensor from_storage(Storage* storage, IntList sizes, IntList strides,
                             int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_; }
  TensorImpl* release() {
    TensorImpl* p = impl_;
    impl_ = nullptr;
    return p;
  }
  int32_t use_count() const { return impl_ ? impl_->refcount.load() : 0; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  bool is_cpu() const { return impl_->device.is_cpu(); }
  bool is_cuda() const { return impl_->device.is_cuda(); }
  int64_t dim() const { return impl_->ndim; }
  int64_t ndim() const { return impl_->ndim; }
  IntList sizes() const { return {impl_->sizes, size_t(impl_->ndim)}; }
  IntList shape() const { return sizes(); }
  IntList strides() const { return {impl_->strides, size_t(impl_->ndim)}; }
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return impl_->numel; }
  size_t itemsize() const { return fastt::itemsize(impl_->dtype); }
  size_t nbytes() const { return size_t(impl_->numel) * itemsize(); }
  bool is_contiguous() const { return impl_->contiguous; }
  bool is_floating_point() const { return is_floating(impl_->dtype); }
  int64_t storage_offset() const { return impl_->offset; }
  Storage* storage() const { return impl_->storage; }
  void* data_ptr() const { return impl_->data; }
  template <class T>
  T* data_ptr() const {
    FASTT_CHECK(dtype_of<T> == impl_->dtype, TypeError,
                "data_ptr: expected dtype {} but tensor is {}",
                dtype_name(dtype_of<T>), dtype_name(impl_->dtype));
    return reinterpret_cast<T*>(impl_->data);
  }
  // The value of a one-element tensor.
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }

  // ---- Views (share storage; no data is copied) ----
  Tensor view(IntList sizes) const;
  // The same bytes as another dtype (torch's view(dtype)). A template so
  // that view({}) still means the 0-d shape, not a value-initialised DType.
  template <class D, std::enable_if_t<std::is_same_v<D, DType>, int> = 0>
  Tensor view(D dtype) const {
    return view_dtype(dtype);
  }
  Tensor view_dtype(DType dtype) const;
  Tensor reshape(IntList sizes) const;  // a view when possible, else a copy
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(IntList dims) const;
  Tensor t() const;   // 2-D transpose (0-D and 1-D unchanged)
  Tensor mT() const;  // transpose of the last two dims
  Tensor squeeze() const;
  Tensor squeeze(int64_t d) const;
  // The listed dims of size 1 (torch's squeeze(dims); each dim once).
  Tensor squeeze(IntList dims) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor expand(IntList sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor unflatten(int64_t d, IntList sizes) const;
  Tensor narrow(int64_t d, int64_t start, int64_t length) const;
  Tensor select(int64_t d, int64_t index) const;
  // Python-style slice along `d`: start/end clamp, step > 0.
  Tensor slice(int64_t d, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor as_strided(IntList sizes, IntList strides, int64_t offset = -1) const;
  Tensor diagonal(int64_t offset = 0, int64_t d0 = 0, int64_t d1 = 1) const;
  Tensor unfold(int64_t d, int64_t size, int64_t step) const;
  Tensor alias() const;  // a new TensorImpl over the same data

  // ---- t[...] with torch's rules (the items: ops/indexing.h) ----
  // x.index({Slice(1, None), None, 0}) is x[1:, None, 0]: a view unless an
  // item is a tensor or a bool. index_put_ writes x[...] = value.
  Tensor index(indexing::TensorIndexList indices) const;
  Tensor& index_put_(indexing::TensorIndexList indices, const Tensor& value);
  Tensor& index_put_(indexing::TensorIndexList indices, const Scalar& value);

  // ---- Copies ----
  Tensor contiguous() const;  // self when already contiguous
  Tensor clone() const;
  // Broadcasts src, converts dtype. non_blocking: a copy between the host's
  // pinned memory and a device may still run when this returns.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor to(DType dtype, bool copy = false) const;
  Tensor to(Device device, bool copy = false,
            bool non_blocking = false) const;
  Tensor& fill_(const Scalar& value);
  Tensor& zero_() { return fill_(Scalar(0)); }

  // Marks an in-place write (autograd's version counter).
  void bump_version() const { impl_->storage->bump_version(); }

  std::string str() const;  // torch-style repr: tensor([...], dtype=...)

 private:
  TensorImpl* impl_ = nullptr;
};

// ValueError when `t` is undefined (default-constructed): methods and ops
// check this instead of dereferencing a null handle.
[[noreturn]] void throw_undefined(const char* op);
inline void require_defined(const Tensor& t, const char* op) {
  if (FASTT_UNLIKELY(!t.defined())) throw_undefined(op);
}

// ---- Shape helpers shared by ops ----
// Wraps a possibly negative dim into [0, ndim); IndexError otherwise.
int64_t wrap_dim(int64_t d, int64_t ndim, const char* op);
// NumPy broadcasting of two shapes; RuntimeError naming both otherwise.
// Writes into out (kMaxDims) and returns the ndim.
int broadcast_shapes(IntList a, IntList b, int64_t* out, const char* op);
std::vector<int64_t> broadcast_shapes(IntList a, IntList b);
// Product of sizes with overflow and negative-size checks.
int64_t checked_numel(IntList sizes, const char* op);
// Strides of a contiguous (row-major) tensor of these sizes.
void contiguous_strides(IntList sizes, int64_t* strides);
std::string shape_str(IntList sizes);  // "[2, 3]"
// RuntimeError when `in` shares memory with `out` without being exactly it
// (same data, dtype, sizes, strides): a loop writing `out` would read
// elements it already overwrote. Exact aliasing (in-place) is fine.
// torch's checked_convert for a scalar written into dtype `dt` (fill_, full,
// masked_fill, clamp/where scalars): RuntimeError "value cannot be converted
// to type ... without overflow" when it is out of range. Infinities fit
// floating dtypes; NaN does not fit integers; negative ints down to -max
// wrap into unsigned (uint8 accepts -255..255); any value fits bool.
bool scalar_overflows(const Scalar& value, DType dt);
void check_scalar_fits(const Scalar& value, DType dt, const char* op);
// Throws when a tensor about to be written has two elements at one address
// (an expanded view): torch's "more than one element ... refers to a single
// memory location".
void check_no_internal_overlap(const Tensor& out, const char* op);
void check_no_partial_overlap(const Tensor& out, const Tensor& in,
                              const char* op);
// Throws when out's memory meets in's at all (equal tensors included): the
// check of ops that cannot run in place (gather, take, cat, ...).
void check_no_overlap(const Tensor& out, const Tensor& in, const char* op);

// The result dtype of an op over tensors and Python scalars, with PyTorch's
// rules: dimensioned tensors > 0-d tensors > Python scalars, where a lower
// tier only matters when its category (bool < int < float) is higher.
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);
class ResultTypeState {
 public:
  void add(const Tensor& t);
  void add(const Scalar& s);
  DType result() const;

 private:
  int dim_ = -1, zero_ = -1, wrapped_ = -1;  // -1: none seen
};

}  // namespace fastt

// TensorImpl lifetime, shape helpers, views, copies and type promotion.
// Views only build a new TensorImpl over the same Storage; copies go
// through the `copy` kernel of the dispatch table.
#include "tensor.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "allocator.h"
#include "capture.h"
#include "dispatch.h"
#include "mutation.h"
#include "ops/loop_builder.h"
#include "autograd.h"
#include "ops/factory.h"
#include "autograd/functions.h"

namespace fastt {

// ---------------------------------------------------------------- impl --
void* TensorImpl::operator new(size_t n) {
  return CachingAllocator::allocate(n);
}
void TensorImpl::operator delete(void* p) {
  CachingAllocator::deallocate(p, sizeof(TensorImpl));
}
TensorImpl::~TensorImpl() {
  delete autograd;  // first: it may unlink itself from grad_fn
  if (grad_fn) autograd::release(grad_fn);
  if (view_base && view_base->refcount.fetch_sub(1) == 1) delete view_base;
  if (storage) storage->decref();
}
void TensorImpl::refresh() {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= sizes[d];
  numel = n;
  bool c = true;
  int64_t expected = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) {
      c = false;
      break;
    }
    expected *= sizes[d];
  }
  contiguous = c || n == 0;
  data = static_cast<char*>(storage->data()) +
         offset * int64_t(fastt::itemsize(dtype));
}

// ------------------------------------------------------- shape helpers --
int64_t wrap_dim(int64_t d, int64_t ndim, const char* op) {
  int64_t n = ndim > 0 ? ndim : 1;  // 0-d tensors accept dims -1 and 0
  if (FASTT_UNLIKELY(d < -n || d >= n))
    throw IndexError(fmt::format(
        "{}: Dimension out of range (expected to be in range of [{}, {}], but "
        "got {})",
        op, -n, n - 1, d));
  return d < 0 ? d + n : d;
}

std::string shape_str(IntList sizes) {
  return fmt::format("[{}]", fmt::join(sizes.begin(), sizes.end(), ", "));
}

int broadcast_shapes(IntList a, IntList b, int64_t* out, const char* op) {
  const int na = int(a.size()), nb = int(b.size());
  const int n = std::max(na, nb);
  FASTT_CHECK(n <= kMaxDims, ValueError,
              "{}: tensors with more than {} dimensions are not supported", op,
              kMaxDims);
  int64_t tmp[kMaxDims];
  for (int i = n - 1; i >= 0; --i) {  // trailing first, as torch reports
    int ia = na - n + i, ib = nb - n + i;
    int64_t sa = ia >= 0 ? a[ia] : 1;
    int64_t sb = ib >= 0 ? b[ib] : 1;
    if (sa == sb || sb == 1 ||
        (FASTT_MUTANT(BroadcastShapeDrop) && sa == 1)) {
      tmp[i] = sa;
    } else if (sa == 1) {
      tmp[i] = sb;
    } else {
      throw RuntimeError(fmt::format(
          "{}: The size of tensor a ({}) must match the size of tensor b ({}) "
          "at non-singleton dimension {}. Shapes: {} and {}",
          op, sa, sb, i, shape_str(a), shape_str(b)));
    }
  }
  std::copy(tmp, tmp + n, out);
  return n;
}

std::vector<int64_t> broadcast_shapes(IntList a, IntList b) {
  int64_t out[kMaxDims];
  int n = broadcast_shapes(a, b, out, "broadcast_shapes");
  return std::vector<int64_t>(out, out + n);
}

int64_t checked_numel(IntList sizes, const char* op) {
  FASTT_CHECK(sizes.size() <= size_t(kMaxDims), ValueError,
              "{}: tensors with more than {} dimensions are not supported "
              "(got {})",
              op, kMaxDims, sizes.size());
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) {
    FASTT_CHECK(s >= 0, RuntimeError,
                "{}: Trying to create tensor with negative dimension {}: {}",
                op, s, shape_str(sizes));
    if (__builtin_mul_overflow(n, s, &n)) overflow = true;
  }
  FASTT_CHECK(!overflow && n <= (int64_t(1) << 56), RuntimeError,
              "{}: size {} is too large (the number of elements overflows)",
              op, shape_str(sizes));
  return n;
}

void contiguous_strides(IntList sizes, int64_t* strides) {
  int64_t s = 1;
  for (int d = int(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
}

namespace {
// First and last byte a tensor with numel > 0 touches.
void byte_range(const Tensor& t, const char** lo, const char** hi) {
  const char* p = static_cast<const char*>(t.data_ptr());
  int64_t extent = 0;
  for (int64_t d = 0; d < t.dim(); ++d)
    extent += (t.sizes()[size_t(d)] - 1) * t.strides()[size_t(d)];
  *lo = p;
  *hi = p + (extent + 1) * int64_t(t.itemsize()) - 1;
}
}  // namespace

namespace {
// Largest finite value of a dtype, as double (Half/BFloat16 have no
// std::numeric_limits).
template <class T>
double finite_max() {
  if constexpr (std::is_same<T, Half>::value) return 65504.0;
  else if constexpr (std::is_same<T, BFloat16>::value)
    return 3.3895313892515355e38;
  else return double(std::numeric_limits<T>::max());
}
}  // namespace

void throw_undefined(const char* op) {
  throw ValueError(fmt::format("{}: got an undefined tensor", op));
}

bool scalar_overflows(const Scalar& value, DType dt) {
  // torch's checked_convert: a complex value fits a real dtype only
  // without an imaginary part; a complex dtype takes both parts in its
  // real type's range.
  if (is_complex(dt))
    return dt != DType::Complex128 &&
           (scalar_overflows(Scalar(value.to_double()), to_real(dt)) ||
            scalar_overflows(Scalar(value.imag()), to_real(dt)));
  if (value.is_complex() && value.imag() != 0.0 && dt != DType::Bool)
    return true;
  if (value.is_bool() || dt == DType::Bool || dt == DType::Float64)
    return false;
  return visit_dtype(dt, [&](auto tag) -> bool {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value) {
      using Lim = std::numeric_limits<T>;
      if (value.is_integral()) {
        const int64_t i = value.to_int();
        if (std::is_unsigned<T>::value && i < 0)
          return uint64_t(0) - uint64_t(i) > uint64_t(Lim::max());
        return i < int64_t(Lim::lowest()) || i > int64_t(Lim::max());
      }
      // NaN fails both comparisons; 2^63 is past int64's max.
      const double d = value.to_double();
      return !(d >= double(Lim::lowest()) && d < double(Lim::max()) + 1.0);
    } else {
      const double d = value.to_double(), hi = finite_max<T>();
      return !std::isinf(d) && !std::isnan(d) && (d < -hi || d > hi);
    }
  });
}

void check_scalar_fits(const Scalar& value, DType dt, const char* op) {
  if (FASTT_UNLIKELY(scalar_overflows(value, dt))) {
    const std::string v =
        value.is_integral()  ? std::to_string(value.to_int())
        : value.is_complex() ? fmt::format("({}{:+}j)", value.to_double(),
                                           value.imag())
                             : fmt::format("{}", value.to_double());
    throw RuntimeError(fmt::format(
        "{}: value cannot be converted to type {} without overflow: {}", op,
        dtype_name(dt), v));
  }
}

void check_no_internal_overlap(const Tensor& out, const char* op) {
  for (int64_t d = 0; d < out.dim(); ++d)
    FASTT_CHECK(out.sizes()[d] <= 1 || out.strides()[d] != 0, RuntimeError,
                "{}: unsupported operation: more than one element of the "
                "written-to tensor refers to a single memory location. "
                "Please clone() the tensor before performing the operation.",
                op);
}

// out's and in's byte ranges may not meet.
static void require_disjoint(const Tensor& out, const Tensor& in,
                             const char* op) {
  const char *a0, *a1, *b0, *b1;
  byte_range(out, &a0, &a1);
  byte_range(in, &b0, &b1);
  FASTT_CHECK(a1 < b0 || b1 < a0, RuntimeError,
              "{}: unsupported operation: some elements of the input tensor "
              "and the written-to tensor refer to a single memory location. "
              "Please clone() the tensor before performing the operation.",
              op);
}

void check_no_partial_overlap(const Tensor& out, const Tensor& in,
                              const char* op) {
  if (in.storage() != out.storage() || in.numel() == 0 || out.numel() == 0)
    return;
  if (in.data_ptr() == out.data_ptr() && in.dtype() == out.dtype() &&
      in.sizes().equals(out.sizes()) && in.strides().equals(out.strides()))
    return;
  require_disjoint(out, in, op);
}

void check_no_overlap(const Tensor& out, const Tensor& in, const char* op) {
  // by address, not storage object: two DLPack imports of one buffer are
  // different storages over the same memory
  if (!in.defined() || !out.defined() || in.device() != out.device() ||
      in.numel() == 0 || out.numel() == 0)
    return;
  require_disjoint(out, in, op);
}

// ------------------------------------------------------------- creation --
Tensor Tensor::empty(IntList sizes, DType dtype, Device device) {
  const int nd = int(sizes.size());
  int64_t numel = 1;
  bool ok = nd <= kMaxDims;
  for (int d = 0; ok && d < nd; ++d) {
    ok = sizes[d] >= 0 && !__builtin_mul_overflow(numel, sizes[d], &numel);
  }
  if (FASTT_UNLIKELY(!ok || numel > (int64_t(1) << 56)))
    checked_numel(sizes, "empty");  // throws the right error
  TensorImpl* impl = new TensorImpl;  // default-init: no zeroing of the
                                      // sizes/strides arrays
  Tensor t(impl);  // owns impl from here, so a failed alloc frees it
  impl->dtype = dtype;
  impl->device = device;
  impl->ndim = int8_t(nd);
  int64_t stride = 1;
  for (int d = nd - 1; d >= 0; --d) {
    impl->sizes[d] = sizes[d];
    impl->strides[d] = stride;
    stride *= sizes[d] > 1 ? sizes[d] : 1;
  }
  impl->numel = numel;
  impl->contiguous = true;
  impl->storage =
      Storage::create(size_t(numel) * fastt::itemsize(dtype), device);
  impl->data = static_cast<char*>(impl->storage->data());
  return t;
}

Tensor Tensor::from_storage(Storage* storage, IntList sizes, IntList strides,
                            int64_t offset, DType dtype) {
  FASTT_CHECK(sizes.size() == strides.size(), ValueError,
              "from_storage: mismatch in length of strides and shape ({} vs "
              "{})",
              strides.size(), sizes.size());
  checked_numel(sizes, "from_storage");
  TensorImpl* impl = new TensorImpl;
  Tensor t(impl);
  storage->incref();
  impl->storage = storage;
  impl->dtype = dtype;
  impl->device = storage->device();
  impl->ndim = int8_t(sizes.size());
  impl->offset = offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    impl->sizes[d] = sizes[d];
    impl->strides[d] = strides[d];
  }
  impl->refresh();
  return t;
}

int64_t Tensor::size(int64_t d) const {
  return impl_->sizes[wrap_dim(d, impl_->ndim, "size")];
}
int64_t Tensor::stride(int64_t d) const {
  return impl_->strides[wrap_dim(d, impl_->ndim, "stride")];
}

// --------------------------------------------------------------- views --
namespace {

// A new impl sharing self's storage, with the given geometry.
Tensor make_view(const TensorImpl* self, int nd, const int64_t* sizes,
                 const int64_t* strides, int64_t offset) {
  TensorImpl* impl = new TensorImpl;
  Tensor t(impl);
  self->storage->incref();
  impl->storage = self->storage;
  impl->dtype = self->dtype;
  impl->device = self->device;
  impl->ndim = int8_t(nd);
  impl->offset = offset;
  impl->is_view = true;
  TensorImpl* base = self->view_base ? self->view_base
                                     : const_cast<TensorImpl*>(self);
  base->refcount.fetch_add(1, std::memory_order_relaxed);
  impl->view_base = base;
  for (int d = 0; d < nd; ++d) {
    impl->sizes[d] = sizes[d];
    impl->strides[d] = strides[d];
  }
  impl->refresh();
  return t;
}

}  // namespace

// A view op's result; records the view's node when autograd is on for self.
#define FASTT_RETURN_VIEW(fn, expr, ...)                                   \
  do {                                                                     \
    Tensor out_ = (expr);                                                  \
    if (autograd::should_record(*this))                                    \
      autograd::view_of(autograd::GradFn::fn, *this, out_, ##__VA_ARGS__); \
    return out_;                                                           \
  } while (0)

namespace {
// Resolves one -1 in a requested shape against numel.
int infer_size(IntList req, int64_t numel, int64_t* out, const char* op) {
  FASTT_CHECK(req.size() <= size_t(kMaxDims), ValueError,
              "{}: tensors with more than {} dimensions are not supported", op,
              kMaxDims);
  int infer = -1;
  int64_t prod = 1;
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] == -1) {
      FASTT_CHECK(infer < 0, RuntimeError,
                  "{}: only one dimension can be inferred", op);
      infer = int(i);
    } else {
      FASTT_CHECK(req[i] >= 0, RuntimeError,
                  "{}: invalid shape dimension {}", op, req[i]);
      // A wrapped product could match numel (e.g. 0): shape (2^62, 4).
      FASTT_CHECK(!__builtin_mul_overflow(prod, req[i], &prod), RuntimeError,
                  "{}: numel: integer multiplication overflow", op);
    }
    out[i] = req[i];
  }
  if (infer >= 0) {
    FASTT_CHECK(prod != 0 && numel % prod == 0, RuntimeError,
                "shape '{}' is invalid for input of size {}", shape_str(req),
                numel);
    out[infer] = numel / prod;
  } else {
    FASTT_CHECK(prod == numel, RuntimeError,
                "shape '{}' is invalid for input of size {}", shape_str(req),
                numel);
  }
  return int(req.size());
}

// torch's computeStride: strides for viewing (sizes, strides) as newshape
// without copying, or false when the memory layout does not allow it.
bool view_strides(const TensorImpl* t, const int64_t* newshape, int nnew,
                  int64_t* newstride) {
  if (t->ndim == 0 || t->numel == 0 || t->contiguous) {
    contiguous_strides(IntList(newshape, size_t(nnew)), newstride);
    return t->contiguous || t->ndim == 0 || t->numel == 0;
  }
  int64_t view_d = nnew - 1;
  int64_t chunk_base_stride = t->strides[t->ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = t->ndim - 1; td >= 0; --td) {
    tensor_numel *= t->sizes[td];
    if (td == 0 || (t->sizes[td - 1] != 1 &&
                    t->strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = t->strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor Tensor::view(IntList req) const {
  require_defined(*this, "view");
  int64_t shape[kMaxDims], strides[kMaxDims];
  int nd = infer_size(req, impl_->numel, shape, "view");
  FASTT_CHECK(view_strides(impl_, shape, nd, strides), RuntimeError,
              "view size is not compatible with input tensor's size and "
              "stride (at least one dimension spans across two contiguous "
              "subspaces). Use .reshape(...) instead.");
  FASTT_RETURN_VIEW(Reshape, make_view(impl_, nd, shape, strides, impl_->offset));
}

namespace {
// view(dtype) between element sizes `from` and `to` bytes: the last dim
// (dense) is rescaled, and the offset and the other strides, counted in
// elements, are converted; each must divide evenly (torch's checks).
void rescale_for_dtype(int nd, int64_t* sizes, int64_t* strides,
                       int64_t* offset, DType from_dtype, DType to_dtype) {
  const int64_t from = int64_t(itemsize(from_dtype));
  const int64_t to = int64_t(itemsize(to_dtype));
  const char* a = dtype_name(from_dtype);
  const char* b = dtype_name(to_dtype);
  FASTT_CHECK(nd > 0, RuntimeError,
              "self.dim() cannot be 0 to view {} as {} (different element "
              "sizes)",
              a, b);
  FASTT_CHECK(strides[nd - 1] == 1, RuntimeError,
              "self.stride(-1) must be 1 to view {} as {} (different element "
              "sizes), but got {}",
              a, b, strides[nd - 1]);
  if (from > to) {
    const int64_t r = from / to;
    for (int i = 0; i < nd - 1; ++i) strides[i] *= r;
    sizes[nd - 1] *= r;
    *offset *= r;
    return;
  }
  const int64_t r = to / from;
  FASTT_CHECK(sizes[nd - 1] % r == 0, RuntimeError,
              "self.size(-1) must be divisible by {} to view {} as {} "
              "(different element sizes), but got {}",
              r, a, b, sizes[nd - 1]);
  FASTT_CHECK(*offset % r == 0, RuntimeError,
              "self.storage_offset() must be divisible by {} to view {} as {} "
              "(different element sizes), but got {}",
              r, a, b, *offset);
  for (int i = 0; i < nd - 1; ++i) {
    FASTT_CHECK(strides[i] % r == 0, RuntimeError,
                "self.stride({}) must be divisible by {} to view {} as {} "
                "(different element sizes), but got {}",
                i, r, a, b, strides[i]);
    strides[i] /= r;
  }
  sizes[nd - 1] /= r;
  *offset /= r;
}
}  // namespace

// Not an autograd view: torch marks view(dtype) non-differentiable, and a
// view's history (CopySlices onto its base) assumes the base's dtype.
Tensor Tensor::view_dtype(DType dtype) const {
  require_defined(*this, "view");
  const int nd = impl_->ndim;
  int64_t sizes[kMaxDims], strides[kMaxDims];
  std::copy(impl_->sizes, impl_->sizes + nd, sizes);
  std::copy(impl_->strides, impl_->strides + nd, strides);
  int64_t offset = impl_->offset;
  if (fastt::itemsize(dtype) != itemsize())
    rescale_for_dtype(nd, sizes, strides, &offset, impl_->dtype, dtype);
  return from_storage(impl_->storage, IntList(sizes, size_t(nd)),
                      IntList(strides, size_t(nd)), offset, dtype);
}

Tensor Tensor::reshape(IntList req) const {
  require_defined(*this, "reshape");
  int64_t shape[kMaxDims], strides[kMaxDims];
  int nd = infer_size(req, impl_->numel, shape, "reshape");
  if (view_strides(impl_, shape, nd, strides))
    FASTT_RETURN_VIEW(Reshape,
                      make_view(impl_, nd, shape, strides, impl_->offset));
  return contiguous().view(IntList(shape, size_t(nd)));
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  require_defined(*this, "transpose");
  const int nd = impl_->ndim;
  d0 = wrap_dim(d0, nd, "transpose");
  d1 = wrap_dim(d1, nd, "transpose");
  int64_t sizes[kMaxDims], strides[kMaxDims];
  std::copy(impl_->sizes, impl_->sizes + nd, sizes);
  std::copy(impl_->strides, impl_->strides + nd, strides);
  if (nd > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  FASTT_RETURN_VIEW(Transpose,
                    make_view(impl_, nd, sizes, strides, impl_->offset), d0,
                    d1);
}

Tensor Tensor::permute(IntList dims) const {
  require_defined(*this, "permute");
  const int nd = impl_->ndim;
  FASTT_CHECK(int(dims.size()) == nd, RuntimeError,
              "permute(sparse_coo): number of dimensions in the tensor input "
              "does not match the length of the desired ordering of "
              "dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
              nd, dims.size());
  int64_t sizes[kMaxDims], strides[kMaxDims];
  bool seen[kMaxDims] = {};
  for (int i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[i], nd, "permute");
    FASTT_CHECK(!seen[d], RuntimeError, "permute: repeated dim {} in {}", d,
                shape_str(dims));
    seen[d] = true;
    sizes[i] = impl_->sizes[d];
    strides[i] = impl_->strides[d];
  }
  int64_t wrapped[kMaxDims];
  for (int i = 0; i < nd; ++i) wrapped[i] = wrap_dim(dims[i], nd, "permute");
  FASTT_RETURN_VIEW(Permute,
                    make_view(impl_, nd, sizes, strides, impl_->offset), 0,
                    0, 0, IntList(wrapped, size_t(nd)));
}

Tensor Tensor::t() const {
  require_defined(*this, "t");
  FASTT_CHECK(impl_->ndim <= 2, RuntimeError,
              "t() expects a tensor with <= 2 dimensions, but self is {}D",
              int(impl_->ndim));
  if (impl_->ndim < 2) return alias();
  return transpose(0, 1);
}

Tensor Tensor::mT() const {
  require_defined(*this, "mT");
  FASTT_CHECK(impl_->ndim >= 2, RuntimeError,
              "tensor.mT is only supported on matrices or batches of "
              "matrices. Got {}-D tensor.",
              int(impl_->ndim));
  return transpose(-2, -1);
}

Tensor Tensor::squeeze() const {
  require_defined(*this, "squeeze");
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int nd = 0;
  for (int d = 0; d < impl_->ndim; ++d) {
    if (impl_->sizes[d] == 1) continue;
    sizes[nd] = impl_->sizes[d];
    strides[nd++] = impl_->strides[d];
  }
  FASTT_RETURN_VIEW(Reshape,
                    make_view(impl_, nd, sizes, strides, impl_->offset));
}

Tensor Tensor::squeeze(int64_t dim) const {
  require_defined(*this, "squeeze");
  const int nd = impl_->ndim;
  dim = wrap_dim(dim, nd, "squeeze");
  if (nd == 0 || impl_->sizes[dim] != 1) return alias();
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int k = 0;
  for (int d = 0; d < nd; ++d) {
    if (d == dim) continue;
    sizes[k] = impl_->sizes[d];
    strides[k++] = impl_->strides[d];
  }
  FASTT_RETURN_VIEW(Reshape,
                    make_view(impl_, k, sizes, strides, impl_->offset));
}

Tensor Tensor::squeeze(IntList dims) const {
  require_defined(*this, "squeeze");
  const int nd = impl_->ndim;
  bool drop[kMaxDims] = {};
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd, "squeeze");
    FASTT_CHECK(nd == 0 || !drop[w], RuntimeError,
                "dim {} appears multiple times in the list of dims", w);
    if (nd > 0) drop[w] = impl_->sizes[w] == 1;
  }
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int k = 0;
  for (int d = 0; d < nd; ++d) {
    if (drop[d]) continue;
    sizes[k] = impl_->sizes[d];
    strides[k++] = impl_->strides[d];
  }
  if (k == nd) return alias();
  FASTT_RETURN_VIEW(Reshape,
                    make_view(impl_, k, sizes, strides, impl_->offset));
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  require_defined(*this, "unsqueeze");
  const int nd = impl_->ndim;
  dim = wrap_dim(dim, nd + 1, "unsqueeze");
  FASTT_CHECK(nd < kMaxDims, ValueError,
              "unsqueeze: tensors with more than {} dimensions are not "
              "supported",
              kMaxDims);
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (int d = 0, k = 0; d <= nd; ++d) {
    if (d == dim) {
      sizes[d] = 1;
      strides[d] = d < nd ? impl_->sizes[k] * impl_->strides[k] : 1;
    } else {
      sizes[d] = impl_->sizes[k];
      strides[d] = impl_->strides[k++];
    }
  }
  FASTT_RETURN_VIEW(Reshape,
                    make_view(impl_, nd + 1, sizes, strides, impl_->offset));
}

Tensor Tensor::expand(IntList req) const {
  require_defined(*this, "expand");
  const int nd = impl_->ndim;
  const int nn = int(req.size());
  FASTT_CHECK(nn >= nd, RuntimeError,
              "expand: the number of sizes provided ({}) must be greater or "
              "equal to the number of dimensions in the tensor ({})",
              nn, nd);
  FASTT_CHECK(nn <= kMaxDims, ValueError,
              "expand: tensors with more than {} dimensions are not supported",
              kMaxDims);
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (int i = nn - 1; i >= 0; --i) {
    int j = i - (nn - nd);
    int64_t want = req[i];
    if (j >= 0) {
      int64_t have = impl_->sizes[j];
      if (want == -1) want = have;
      FASTT_CHECK(have == want || have == 1, RuntimeError,
                  "The expanded size of the tensor ({}) must match the "
                  "existing size ({}) at non-singleton dimension {}.  Target "
                  "sizes: {}.  Tensor sizes: {}",
                  want, have, i, shape_str(req), shape_str(this->sizes()));
      FASTT_CHECK(want >= 0, RuntimeError,
                  "expand: invalid size {} at dimension {}", want, i);
      sizes[i] = want;
      strides[i] = have == want ? impl_->strides[j] : 0;
    } else {
      FASTT_CHECK(want >= 0, RuntimeError,
                  "The expanded size of the tensor ({}) isn't allowed in a "
                  "leading, non-existing dimension {}",
                  want, i);
      sizes[i] = want;
      strides[i] = 0;
    }
  }
  // Stride-0 dims make any size cheap, so the element count can overflow.
  int64_t numel = 1;
  for (int i = 0; i < nn; ++i)
    if (FASTT_UNLIKELY(__builtin_mul_overflow(numel, sizes[i], &numel)))
      checked_numel(IntList(sizes, size_t(nn)), "expand");  // throws
  FASTT_RETURN_VIEW(Expand,
                    make_view(impl_, nn, sizes, strides, impl_->offset));
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  require_defined(*this, "flatten");
  const int nd = impl_->ndim;
  start = wrap_dim(start, nd, "flatten");
  end = wrap_dim(end, nd, "flatten");
  if (nd == 0) return reshape({1});
  FASTT_CHECK(start <= end, RuntimeError,
              "flatten() has invalid args: start_dim cannot come after "
              "end_dim");
  if (start == end) return alias();
  int64_t shape[kMaxDims];
  int k = 0;
  for (int d = 0; d < start; ++d) shape[k++] = impl_->sizes[d];
  int64_t m = 1;
  for (int64_t d = start; d <= end; ++d) m *= impl_->sizes[d];
  shape[k++] = m;
  for (int d = int(end) + 1; d < nd; ++d) shape[k++] = impl_->sizes[d];
  return reshape(IntList(shape, size_t(k)));
}

Tensor Tensor::unflatten(int64_t dim, IntList sizes_req) const {
  require_defined(*this, "unflatten");
  const int nd = impl_->ndim;
  dim = wrap_dim(dim, nd, "unflatten");
  int64_t inferred[kMaxDims];
  infer_size(sizes_req, impl_->sizes[dim], inferred, "unflatten");
  int64_t shape[kMaxDims];
  int k = 0;
  for (int d = 0; d < dim; ++d) shape[k++] = impl_->sizes[d];
  FASTT_CHECK(nd - 1 + int(sizes_req.size()) <= kMaxDims, ValueError,
              "unflatten: too many dimensions");
  for (size_t i = 0; i < sizes_req.size(); ++i) shape[k++] = inferred[i];
  for (int d = int(dim) + 1; d < nd; ++d) shape[k++] = impl_->sizes[d];
  return view(IntList(shape, size_t(k)));
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  require_defined(*this, "narrow");
  FASTT_CHECK(impl_->ndim > 0, RuntimeError,
              "narrow() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, impl_->ndim, "narrow");
  int64_t size = impl_->sizes[dim];
  FASTT_CHECK(start >= -size && start <= size, IndexError,
              "start out of range (expected to be in range of [{}, {}], but "
              "got {})",
              -size, size, start);
  if (start < 0) start += size;
  FASTT_CHECK(length >= 0 && start <= size - length, RuntimeError,
              "start ({}) + length ({}) exceeds dimension size ({}).", start,
              length, size);
  return slice(dim, start, start + length, 1);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  require_defined(*this, "select");
  FASTT_CHECK(impl_->ndim > 0, IndexError,
              "select() cannot be applied to a 0-dim tensor.");
  const int nd = impl_->ndim;
  dim = wrap_dim(dim, nd, "select");
  int64_t size = impl_->sizes[dim];
  FASTT_CHECK(index >= -size && index < size, IndexError,
              "index {} is out of bounds for dimension {} with size {}", index,
              dim, size);
  if (index < 0) index += size;
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int k = 0;
  for (int d = 0; d < nd; ++d) {
    if (d == dim) continue;
    sizes[k] = impl_->sizes[d];
    strides[k++] = impl_->strides[d];
  }
  FASTT_RETURN_VIEW(Select,
                    make_view(impl_, k, sizes, strides,
                              impl_->offset + index * impl_->strides[dim]),
                    dim, index);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end,
                     int64_t step) const {
  require_defined(*this, "slice");
  FASTT_CHECK(impl_->ndim > 0, IndexError,
              "slice() cannot be applied to a 0-dim tensor.");
  const int nd = impl_->ndim;
  dim = wrap_dim(dim, nd, "slice");
  FASTT_CHECK(step > 0, ValueError, "slice step must be positive, got {}",
              step);
  int64_t size = impl_->sizes[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::min(std::max<int64_t>(start, 0), size);
  end = std::min(std::max<int64_t>(end, start), size);
  int64_t len = (end - start + step - 1) / step;
  int64_t sizes[kMaxDims], strides[kMaxDims];
  std::copy(impl_->sizes, impl_->sizes + nd, sizes);
  std::copy(impl_->strides, impl_->strides + nd, strides);
  sizes[dim] = len;
  strides[dim] *= FASTT_MUTANT(SliceStepIgnored) ? 1 : step;
  FASTT_RETURN_VIEW(Slice,
                    make_view(impl_, nd, sizes, strides,
                              impl_->offset + start * impl_->strides[dim]),
                    dim, start, step);
}

Tensor Tensor::as_strided(IntList sizes, IntList strides,
                          int64_t offset) const {
  require_defined(*this, "as_strided");
  if (offset == -1) offset = impl_->offset;  // -1: keep the current offset
  FASTT_CHECK(offset >= 0, RuntimeError,
              "as_strided: invalid storage offset {}", offset);
  FASTT_CHECK(sizes.size() == strides.size(), RuntimeError,
              "as_strided: mismatch in length of strides and shape");
  FASTT_CHECK(sizes.size() <= size_t(kMaxDims), ValueError,
              "as_strided: tensors with more than {} dimensions are not "
              "supported",
              kMaxDims);
  int64_t numel = checked_numel(sizes, "as_strided");
  // The extent can overflow int64 (huge strides): that is out of bounds
  // too, not a wrapped small index.
  int64_t max_index = offset;
  bool overflow = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    FASTT_CHECK(strides[d] >= 0, RuntimeError,
                "as_strided: Negative strides are not supported at the moment, "
                "got strides: {}",
                shape_str(strides));
    int64_t step;
    if (sizes[d] > 0 &&
        (__builtin_mul_overflow(sizes[d] - 1, strides[d], &step) ||
         __builtin_add_overflow(max_index, step, &max_index)))
      overflow = true;
  }
  int64_t storage_elems = int64_t(impl_->storage->nbytes() / itemsize());
  FASTT_CHECK(numel == 0 || (!overflow && max_index < storage_elems),
              RuntimeError,
              "setStorage: sizes {}, strides {}, storage offset {}, and "
              "itemsize {} requiring a storage size of {} are out of bounds "
              "for storage of size {}",
              shape_str(sizes), shape_str(strides), offset, itemsize(),
              overflow ? std::string("more than int64 can index")
                       : std::to_string((max_index + 1) * int64_t(itemsize())),
              impl_->storage->nbytes());
  FASTT_RETURN_VIEW(AsStrided, make_view(impl_, int(sizes.size()),
                                         sizes.data(), strides.data(),
                                         offset));
}

Tensor Tensor::diagonal(int64_t off, int64_t d0, int64_t d1) const {
  require_defined(*this, "diagonal");
  const int nd = impl_->ndim;
  FASTT_CHECK(nd >= 2, RuntimeError,
              "diagonal dimensions requires at least 2 dimensions, got {}", nd);
  d0 = wrap_dim(d0, nd, "diagonal");
  d1 = wrap_dim(d1, nd, "diagonal");
  FASTT_CHECK(d0 != d1, RuntimeError,
              "diagonal dimensions cannot be identical {}, {}", d0, d1);
  int64_t offset = impl_->offset;
  int64_t len;
  if (off >= 0) {
    len = std::max<int64_t>(
        std::min(impl_->sizes[d0], impl_->sizes[d1] - off), 0);
    if (len > 0) offset += off * impl_->strides[d1];
  } else {
    len = std::max<int64_t>(
        std::min(impl_->sizes[d0] + off, impl_->sizes[d1]), 0);
    if (len > 0) offset -= off * impl_->strides[d0];
  }
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int k = 0;
  for (int d = 0; d < nd; ++d) {
    if (d == d0 || d == d1) continue;
    sizes[k] = impl_->sizes[d];
    strides[k++] = impl_->strides[d];
  }
  sizes[k] = len;
  strides[k++] = impl_->strides[d0] + impl_->strides[d1];
  FASTT_RETURN_VIEW(Diagonal, make_view(impl_, k, sizes, strides, offset),
                    off, d0, d1);
}

Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const {
  require_defined(*this, "unfold");
  const int nd = impl_->ndim;
  dim = wrap_dim(dim, nd, "unfold");
  int64_t have = nd == 0 ? 1 : impl_->sizes[dim];
  FASTT_CHECK(size >= 0 && size <= have, RuntimeError,
              "maximum size for tensor at dimension {} is {} but size is {}",
              dim, have, size);
  FASTT_CHECK(step > 0, RuntimeError, "step is {} but must be > 0", step);
  FASTT_CHECK(nd < kMaxDims, ValueError, "unfold: too many dimensions");
  int64_t sizes[kMaxDims], strides[kMaxDims];
  std::copy(impl_->sizes, impl_->sizes + nd, sizes);
  std::copy(impl_->strides, impl_->strides + nd, strides);
  int64_t st = nd == 0 ? 1 : impl_->strides[dim];
  if (nd > 0) {
    sizes[dim] = (have - size) / step + 1;
    strides[dim] = st * step;
  }
  sizes[nd] = size;
  strides[nd] = st;
  FASTT_RETURN_VIEW(AsStrided,
                    make_view(impl_, nd + 1, sizes, strides, impl_->offset));
}

Tensor Tensor::alias() const {
  require_defined(*this, "alias");
  FASTT_RETURN_VIEW(Alias, make_view(impl_, impl_->ndim, impl_->sizes,
                                     impl_->strides, impl_->offset));
}

// -------------------------------------------------------------- copies --
namespace {
// Cross-device copy: convert and densify on the source device, move the
// bytes with the backend's copy hook, then scatter into the destination's
// layout on its own device when it is not dense.
Tensor& copy_across_devices(Tensor& dst, const Tensor& src,
                            bool non_blocking) {
  const Device other = dst.is_cpu() ? src.device() : dst.device();
  const DeviceAllocatorHooks& hooks = device_hooks(other.type);
  FASTT_CHECK(hooks.copy != nullptr, RuntimeError,
              "copy_: copies between {} and {} need the {} backend, which "
              "this build does not have",
              src.device().str(), dst.device().str(),
              device_type_name(other.type));
  if (dst.numel() == 0) return dst;
  capture::host_read("a copy between devices");
  Tensor dense = src.expand(dst.sizes()).contiguous().to(dst.dtype());
  Tensor target = dst.is_contiguous()
                      ? dst
                      : Tensor::empty(dst.sizes(), dst.dtype(), dst.device());
  hooks.copy(target.data_ptr(), target.device(), dense.data_ptr(),
             dense.device(), dst.nbytes(), non_blocking);
  if (!target.is_same(dst)) dst.copy_(target);
  dst.bump_version();
  return dst;
}
}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  require_defined(*this, "copy_");
  FASTT_CHECK(src.defined(), ValueError, "copy_: source tensor is undefined");
  if (autograd::should_record(*this, src)) return autograd::copy_(*this, src);
  int64_t shape[kMaxDims];
  int nd = broadcast_shapes(sizes(), src.sizes(), shape, "copy_");
  FASTT_CHECK(sizes().equals(IntList(shape, size_t(nd))), RuntimeError,
              "copy_: output with shape {} doesn't match the broadcast shape "
              "{}",
              shape_str(sizes()), shape_str(IntList(shape, size_t(nd))));
  check_no_internal_overlap(*this, "copy_");
  if (device() != src.device())
    return copy_across_devices(*this, src, non_blocking);
  if (numel() == 0) return *this;
  check_no_partial_overlap(*this, src, "copy_");
  if (src.data_ptr() == data_ptr() && src.dtype() == dtype() &&
      src.strides().equals(strides()) && src.numel() == numel()) {
    bump_version();  // copying a tensor onto itself: nothing to move
    return *this;
  }
  KernelArgs args;
  const Tensor* ts[2] = {this, &src};
  if (is_contiguous() && src.is_contiguous() && src.numel() == numel())
    build_dense_loop(args, ts, 2);
  else
    build_loop(args, ts, 2);
  lookup_kernel(Op::copy, device().type, dtype())(args);
  bump_version();
  return *this;
}

Tensor Tensor::contiguous() const {
  require_defined(*this, "contiguous");
  if (impl_->contiguous) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  require_defined(*this, "clone");
  if (autograd::should_record(*this)) return autograd::clone(*this);
  Tensor out = empty(sizes(), dtype(), device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(DType dt, bool copy) const {
  require_defined(*this, "to");
  if (dt == dtype() && !copy) return *this;
  if (autograd::should_record(*this))
    return autograd::to_copy(*this, [&] { return to(dt, copy); });
  Tensor out = empty(sizes(), dt, device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(Device dev, bool copy, bool non_blocking) const {
  require_defined(*this, "to");
  if (dev == device() && !copy) return *this;
  if (autograd::should_record(*this))
    return autograd::to_copy(*this,
                             [&] { return to(dev, copy, non_blocking); });
  Tensor out = empty(sizes(), dtype(), dev);
  out.copy_(*this, non_blocking);
  return out;
}

Tensor& Tensor::fill_(const Scalar& value) {
  require_defined(*this, "fill_");
  if (autograd::should_record(*this))  // the old values get no gradient
    return autograd::copy_(*this, fastt::full({}, value, dtype(), device()));
  check_no_internal_overlap(*this, "fill_");
  // As torch: its one-element fill (scalar_fill, also what setitem of a
  // number and linspace with one step use) converts float16/bfloat16
  // unchecked, an overflow is inf; every other fill range-checks.
  if (numel() != 1 ||
      (dtype() != DType::Float16 && dtype() != DType::BFloat16))
    check_scalar_fits(value, dtype(), "fill_");
  if (numel() > 0) {
    KernelArgs args;
    const Tensor* ts[1] = {this};
    if (is_contiguous())
      build_dense_loop(args, ts, 1);
    else
      build_loop(args, ts, 1);
    args.s0 = value;
    lookup_kernel(Op::fill, device().type, dtype())(args);
  }
  bump_version();
  return *this;
}

Scalar Tensor::item() const {
  require_defined(*this, "item");
  FASTT_CHECK(numel() == 1, RuntimeError,
              "a Tensor with {} elements cannot be converted to Scalar",
              numel());
  if (!is_cpu()) return to(kCPU).item();
  capture::host_read("item() (reading a tensor's value on the host)");
  return visit_dtype(dtype(), [&](auto tag) -> Scalar {
    using T = decltype(tag);
    return Scalar(*reinterpret_cast<const T*>(impl_->data));
  });
}

// ------------------------------------------------------ type promotion --
DType Scalar::natural_dtype() const {
  switch (kind_) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int: return DType::Int64;
    case Kind::Float: return default_dtype();
    case Kind::Complex: return to_complex(default_dtype());
  }
  return DType::Int64;
}

namespace {
int promote_slot(int cur, DType t) {
  return cur < 0 ? int(t) : int(promote_types(DType(cur), t));
}
// torch's combine_categories: `higher` tier wins unless `lower` is of a
// higher category (bool < integral < floating < complex); a complex
// `lower` over a floating `higher` keeps higher's precision (float64
// tensor + 1j is complex128).
int combine(int higher, int lower) {
  if (higher < 0) return lower;
  if (lower < 0) return higher;
  DType h = DType(higher), l = DType(lower);
  if (is_complex(h)) return higher;
  if (is_complex(l)) return int(is_floating(h) ? to_complex(h) : l);
  if (is_floating(h)) return higher;
  if (h == DType::Bool ||
      (is_floating(l) && !FASTT_MUTANT(ScalarFloatKeepsInt)))
    return int(promote_types(h, l));
  return higher;
}
}  // namespace

void ResultTypeState::add(const Tensor& t) {
  if (t.dim() > 0)
    dim_ = promote_slot(dim_, t.dtype());
  else
    zero_ = promote_slot(zero_, t.dtype());
}
void ResultTypeState::add(const Scalar& s) {
  // A Python float promotes as the default dtype, an int as int64.
  wrapped_ = promote_slot(wrapped_, s.natural_dtype());
}
DType ResultTypeState::result() const {
  int r = combine(dim_, combine(zero_, wrapped_));
  return r < 0 ? default_dtype() : DType(r);
}

DType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}
DType result_type(const Tensor& a, const Scalar& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

}  // namespace fastt

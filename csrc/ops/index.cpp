// Entry points of the indexing/shape/sort family (see index.h). Each op
// validates (dims, shapes, dtypes, devices and, on the CPU, every index
// value), builds strided views so one "index along dims" kernel serves
// gather, scatter, index_select, index_add, index and index_put, and makes
// one table call. Dense selects (index_select, embedding, 1-D gather,
// x[idx]) skip the views and pass raw extents to the kernel's direct form
// (select_direct). CUDA kernels range-check their indices themselves and
// report a bad one at the next synchronization (kernels/cuda/
// device_error.h), so no index op waits for the device.
#include "index.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../capture.h"
#include "../dispatch.h"
#include "../mutation.h"
#include "autograd/functions.h"
#include "autograd/functions_index.h"

namespace fastt {
#ifdef FASTT_WITH_CUDA
namespace cuda {
// kernels/cuda/index.cu: min/max of a CUDA int64 tensor (one stream sync;
// only one_hot needs it).
void int64_min_max(const Tensor& t, int64_t* lo, int64_t* hi);
}  // namespace cuda
#endif

namespace {

void check_defined(const Tensor& t, const char* op, const char* what) {
  FASTT_CHECK(t.defined(), ValueError, "{}: {} is an undefined tensor", op,
              what);
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  FASTT_CHECK(a.device() == b.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, a.device().str(), b.device().str());
}

inline bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage();
}

// 0-d tensors act as [1] in the dim-wise ops (torch's ensure_nonempty_dim).
inline Tensor at_least_1d(const Tensor& t) {
  return t.dim() == 0 ? t.reshape({1}) : t;
}

// A view over t's storage with the given sizes and element strides.
inline Tensor strided_view(const Tensor& t, IntList sizes,
                           const int64_t* strides) {
  return Tensor::from_storage(t.storage(), sizes,
                              IntList(strides, sizes.size()),
                              t.storage_offset(), t.dtype());
}

// Calls f(v) for each value of an int64 tensor (any strides).
template <class F>
void for_each_int64(const Tensor& t, F&& f) {
  const int64_t n = t.numel();
  if (n == 0) return;
  const int64_t* base = static_cast<const int64_t*>(t.data_ptr());
  if (t.is_contiguous()) {
    for (int64_t i = 0; i < n; ++i) f(base[i]);
    return;
  }
  const int nd = int(t.dim());
  const int64_t* sizes = t.sizes().data();
  const int64_t* strides = t.strides().data();
  int64_t idx[kMaxDims] = {};
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(base[off]);
    for (int d = nd - 1; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < sizes[d]) break;
      off -= idx[d] * strides[d];
      idx[d] = 0;
    }
  }
}

// The smallest and largest value of a non-empty int64 tensor. A CUDA
// tensor is reduced on its device and only the two results come back (one
// sync, 16 bytes).
void int64_min_max(const Tensor& t, int64_t* lo, int64_t* hi) {
#ifdef FASTT_WITH_CUDA
  if (t.device().type == DeviceType::CUDA)
    return cuda::int64_min_max(t, lo, hi);
#endif
  if (!t.is_cpu()) return int64_min_max(t.to(kCPU), lo, hi);
  int64_t a = std::numeric_limits<int64_t>::max();
  int64_t b = std::numeric_limits<int64_t>::min();
  if (t.is_contiguous()) {  // four independent chains of compare-selects
    const int64_t* p = static_cast<const int64_t*>(t.data_ptr());
    const int64_t n = t.numel();
    int64_t a4[4] = {a, a, a, a}, b4[4] = {b, b, b, b};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) {
        a4[k] = p[i + k] < a4[k] ? p[i + k] : a4[k];
        b4[k] = p[i + k] > b4[k] ? p[i + k] : b4[k];
      }
    for (; i < n; ++i) {
      a4[0] = p[i] < a4[0] ? p[i] : a4[0];
      b4[0] = p[i] > b4[0] ? p[i] : b4[0];
    }
    *lo = std::min(std::min(a4[0], a4[1]), std::min(a4[2], a4[3]));
    *hi = std::max(std::max(b4[0], b4[1]), std::max(b4[2], b4[3]));
    return;
  }
  for_each_int64(t, [&](int64_t v) {
    a = v < a ? v : a;
    b = v > b ? v : b;
  });
  *lo = a;
  *hi = b;
}

// int64 index tensors pass through; int32 ones are converted.
Tensor int64_index(const Tensor& index, const char* op) {
  if (index.dtype() == DType::Int64) return index;
  // An empty index of any integer dtype selects nothing (as torch).
  if (index.numel() == 0 && !is_floating(index.dtype()))
    return index.to(DType::Int64);
  FASTT_CHECK(index.dtype() == DType::Int32, RuntimeError,
              "{}(): Expected dtype int32 or int64 for index, but got {}", op,
              dtype_name(index.dtype()));
  return index.to(DType::Int64);
}

// IndexError for the first value outside [-size, size); `op` prefixes the
// message (nullptr for Python-style indexing, whose message torch leaves
// bare). Checked here, before any kernel writes, for CPU indices only:
// the CUDA kernels apply the same rule to each index they read and report
// a bad one (same message, same op name, which the kernel call carries)
// at the next synchronization, since reading indices here would cost a
// device sync per call.
void check_index_range(const Tensor& index, int64_t size, int64_t dim,
                       const char* op) {
  if (index.numel() == 0 || index.device().type == DeviceType::CUDA) return;
  int64_t lo, hi;
  int64_min_max(index, &lo, &hi);
  if (FASTT_LIKELY(lo >= -size &&
                   hi < size + FASTT_MUTANT(IndexRangeOffByOne))) {
    if (FASTT_UNLIKELY(g_capturing))  // a replay checks its indices too
      capture::host_step({index}, [size, dim, op](Tensor* t) {
        check_index_range(t[0], size, dim, op);
      });
    return;
  }
  int64_t bad = 0;
  bool found = false;
  for_each_int64(index.to(kCPU), [&](int64_t v) {
    if (!found && (v < -size || v >= size)) {
      bad = v;
      found = true;
    }
  });
  if (op)
    throw_index_out_of_range(
        op, fmt::format(
                "{}(): index {} is out of bounds for dimension {} with size {}",
                op, bad, dim, size));
  throw IndexError(fmt::format(
      "index {} is out of bounds for dimension {} with size {}", bad, dim,
      size));
}

// The op name as the integer a kernel call carries for its bad-index
// report (device code only copies it; the host prints the string).
inline int64_t name_cookie(const char* name) {
  return int64_t(reinterpret_cast<intptr_t>(name));
}

// One call of the shared index kernel (layout in kernels/cpu/index.cpp;
// the dims and op name after the strides and sizes only name a bad index
// in a CUDA kernel's report).
struct IndexCall {
  Op op;
  const char* name;  // nullptr for Python-style indexing
  Tensor dst, src;
  Tensor idx[kMaxDims];
  int64_t strides[kMaxDims], sizes[kMaxDims], dims[kMaxDims];
  int k = 0;
  bool scatter = false, accumulate = false;
  Scalar alpha = Scalar(int64_t(1));

  IndexCall(Op o, const char* n) : op(o), name(n) {}
  // An int64 index at dst's shape, addressing `dim` of `stride`/`size`.
  void add(Tensor index, int64_t stride, int64_t size, int64_t dim) {
    idx[k] = std::move(index);
    strides[k] = stride;
    sizes[k] = size;
    dims[k] = dim;
    ++k;
  }
  void run() {
    KernelFn fn = lookup_kernel(op, dst.device().type, dst.dtype());
    if (dst.numel() == 0) return;
    int64_t packed[3 * kMaxDims + 1];
    for (int i = 0; i < k; ++i) {
      packed[i] = strides[i];
      packed[k + i] = sizes[i];
      packed[2 * k + i] = dims[i];
    }
    packed[3 * k] = name_cookie(name);
    KernelArgs a;
    a.out = &dst;
    a.in[0] = &src;
    a.in[1] = idx;
    a.dims = IntList(packed, size_t(3 * k + 1));
    a.i0 = scatter;
    a.i1 = k;
    a.i2 = accumulate;
    a.s0 = alpha;
    fn(a);
  }
};

// t's strides with `dim` replaced by 0 (the index supplies that offset).
void strides_without(const Tensor& t, int64_t dim, int64_t* out) {
  for (int64_t d = 0; d < t.dim(); ++d) out[d] = d == dim ? 0 : t.strides()[d];
}

// A 1-D index placed at `dim` of `sizes`, stride 0 elsewhere.
Tensor index_along(const Tensor& index1d, IntList sizes, int64_t dim) {
  int64_t strides[kMaxDims] = {};
  strides[dim] = index1d.strides()[0];
  return strided_view(index1d, sizes, strides);
}

// Whether the direct kernel form can serve src/index (see index_select_direct
// in kernels/cpu/index.cpp; CUDA has it too): dense src, int64 index that
// is 1-D or dense. Anything else takes the general strided path.
inline bool direct_ok(const Tensor& src, const Tensor& index) {
  return src.is_contiguous() &&
         index.dtype() == DType::Int64 &&
         (index.dim() <= 1 || index.is_contiguous());
}

// out (dense, fresh) = src (dense) along `dim` picked by index's values,
// range-checked already (CPU) or by the kernel (CUDA; `name` names the op
// in its report). One table lookup, no views.
void select_direct(Op op, const Tensor& src, int64_t dim,
                   const Tensor& index, Tensor& out, const char* name) {
  KernelFn fn = lookup_kernel(op, src.device().type, src.dtype());
  const int nd = int(src.dim());
  const int64_t* sz = src.sizes().data();
  int64_t packed[6] = {1, 1, 1, index.dim() == 1 ? index.strides()[0] : 1,
                       dim, name_cookie(name)};
  for (int d = 0; d < nd; ++d) packed[d < dim ? 0 : d == dim ? 1 : 2] *= sz[d];
  KernelArgs a;
  a.out = &out;
  a.in[0] = &src;
  a.in[1] = &index;
  a.dims = IntList(packed, 6);
  a.i1 = -1;
  fn(a);
}

}  // namespace

// ------------------------------------------------------------------ cat --
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (autograd::should_record_list(tensors))
    return autograd::cat(tensors, dim);
  FASTT_CHECK(!tensors.empty(), ValueError,
              "cat(): expected a non-empty list of Tensors");
  ResultTypeState state;
  const Tensor* ref = nullptr;  // first input that is not a legacy [0]
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check_defined(t, "cat", "an input");
    FASTT_CHECK(t.dim() > 0, RuntimeError,
                "zero-dimensional tensor (at position {}) cannot be "
                "concatenated",
                i);
    check_same_device("cat", tensors[0], t);
    state.add(t);
    if (!ref && !(t.dim() == 1 && t.numel() == 0)) ref = &t;
  }
  const DType dtype = state.result();
  if (!ref) return Tensor::empty({0}, dtype, tensors[0].device());
  dim = wrap_dim(dim, ref->dim(), "cat");
  int64_t shape[kMaxDims];
  const int nd = int(ref->dim());
  std::copy(ref->sizes().begin(), ref->sizes().end(), shape);
  shape[dim] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.numel() == 0) continue;  // legacy: skipped
    FASTT_CHECK(t.dim() == nd, RuntimeError,
                "Tensors must have same number of dimensions: got {} and {}",
                nd, t.dim());
    for (int d = 0; d < nd; ++d)
      FASTT_CHECK(d == dim || t.sizes()[d] == ref->sizes()[d], RuntimeError,
                  "Sizes of tensors must match except in dimension {}. "
                  "Expected size {} but got size {} for tensor number {} in "
                  "the list.",
                  dim, ref->sizes()[d], t.sizes()[d], i);
    FASTT_CHECK(!__builtin_add_overflow(shape[dim], t.sizes()[dim],
                                        &shape[dim]),
                RuntimeError,
                "cat: the total size along dimension {} overflows int64", dim);
  }
  KernelFn fn = lookup_kernel(Op::cat, ref->device().type, dtype);
  Tensor out = Tensor::empty(IntList(shape, size_t(nd)), dtype,
                             ref->device());
  if (out.numel() == 0) return out;
  KernelArgs a;
  a.out = &out;
  a.i1 = dim;
  // Common case: every input is already dense, non-empty and of the result
  // dtype, so the kernel reads the caller's list as is.
  bool as_is = true;
  for (const Tensor& t : tensors)
    as_is = as_is && t.numel() > 0 && t.dtype() == dtype && t.is_contiguous();
  if (as_is) {
    a.in[0] = tensors.data();
    a.i0 = int64_t(tensors.size());
    fn(a);
    return out;
  }
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  // Copies only once every input has passed its checks and out exists.
  for (const Tensor& t : tensors)
    if (t.numel() > 0) parts.push_back(t.to(dtype).contiguous());
  a.in[0] = parts.data();
  a.i0 = int64_t(parts.size());
  fn(a);
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  FASTT_CHECK(!tensors.empty(), RuntimeError,
              "stack expects a non-empty TensorList");
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined(tensors[i], "stack", "an input");
    FASTT_CHECK(tensors[i].sizes().equals(tensors[0].sizes()), RuntimeError,
                "stack expects each tensor to be equal size, but got {} at "
                "entry 0 and {} at entry {}",
                shape_str(tensors[0].sizes()), shape_str(tensors[i].sizes()),
                i);
  }
  dim = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  if (autograd::should_record_list(tensors))
    return autograd::stack(tensors, dim);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(dim));
  return cat(parts, dim);
}

// ------------------------------------------------------------ splitting --
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  check_defined(t, "split", "self");
  FASTT_CHECK(t.dim() > 0, RuntimeError,
              "split expects at least a 1-dimensional tensor");
  FASTT_CHECK(split_size >= 0, RuntimeError,
              "split expects split_size be non-negative, but got "
              "split_size={}",
              split_size);
  dim = wrap_dim(dim, t.dim(), "split");
  const int64_t size = t.sizes()[dim];
  FASTT_CHECK(split_size > 0 || size == 0, RuntimeError,
              "split_size can only be 0 if dimension size is 0, but got "
              "dimension size of {}",
              size);
  int64_t n = split_size > 0 ? (size + split_size - 1) / split_size : 1;
  n = std::max<int64_t>(n, 1);
  std::vector<Tensor> out;
  out.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = i * split_size;
    out.push_back(t.narrow(dim, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntList split_sizes,
                                     int64_t dim) {
  check_defined(t, "split_with_sizes", "self");
  FASTT_CHECK(t.dim() > 0, RuntimeError,
              "split expects at least a 1-dimensional tensor");
  dim = wrap_dim(dim, t.dim(), "split_with_sizes");
  const int64_t size = t.sizes()[dim];
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    FASTT_CHECK(s >= 0, RuntimeError,
                "split_with_sizes expects split_sizes have only non-negative "
                "entries, but got split_sizes={}",
                shape_str(split_sizes));
    total += s;
  }
  FASTT_CHECK(total == size, RuntimeError,
              "split_with_sizes expects split_sizes to sum exactly to {} "
              "(input tensor's size at dimension {}), but got split_sizes={}",
              size, dim, shape_str(split_sizes));
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(t.narrow(dim, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& t, IntList split_sizes, int64_t dim) {
  return split_with_sizes(t, split_sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  check_defined(t, "chunk", "self");
  FASTT_CHECK(t.dim() > 0, RuntimeError,
              "chunk expects at least a 1-dimensional tensor");
  FASTT_CHECK(chunks > 0, RuntimeError,
              "chunk expects `chunks` to be greater than 0, got: {}", chunks);
  dim = wrap_dim(dim, t.dim(), "chunk");
  const int64_t size = t.sizes()[dim];
  const int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0) {  // torch: `chunks` empty pieces
    std::vector<Tensor> out;
    for (int64_t i = 0; i < chunks; ++i) out.push_back(t.narrow(dim, 0, 0));
    return out;
  }
  return split(t, split_size, dim);
}

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  check_defined(t, "unbind", "self");
  FASTT_CHECK(t.dim() > 0, IndexError,
              "Dimension specified as {} but tensor has no dimensions", dim);
  dim = wrap_dim(dim, t.dim(), "unbind");
  std::vector<Tensor> out;
  out.reserve(size_t(t.sizes()[dim]));
  for (int64_t i = 0; i < t.sizes()[dim]; ++i) out.push_back(t.select(dim, i));
  return out;
}

Tensor repeat(const Tensor& t, IntList repeats) {
  check_defined(t, "repeat", "self");
  if (autograd::should_record(t)) return autograd::repeat(t, repeats);
  const int nr = int(repeats.size());
  FASTT_CHECK(nr >= t.dim(), RuntimeError,
              "Number of dimensions of repeat dims can not be smaller than "
              "number of dimensions of tensor");
  FASTT_CHECK(nr <= kMaxDims, ValueError,
              "repeat: tensors with more than {} dimensions are not supported",
              kMaxDims);
  int64_t padded[kMaxDims], shape[kMaxDims];
  for (int i = 0; i < nr; ++i) {
    FASTT_CHECK(repeats[i] >= 0, RuntimeError,
                "Trying to create tensor with negative dimension {}: {}",
                repeats[i], shape_str(repeats));
    const int j = i - (nr - int(t.dim()));
    padded[i] = j >= 0 ? t.sizes()[j] : 1;
    shape[i] = padded[i] * repeats[i];
  }
  Tensor x = t.reshape(IntList(padded, size_t(nr)));  // a view
  Tensor out = Tensor::empty(IntList(shape, size_t(nr)), t.dtype(),
                             t.device());
  if (out.numel() == 0) return out;
  if (2 * nr <= kMaxDims) {
    // out viewed as [r0, s0, r1, s1, ...] <- x with stride 0 on each r_i.
    int64_t sizes[kMaxDims], strides[kMaxDims];
    for (int i = 0; i < nr; ++i) {
      sizes[2 * i] = repeats[i];
      sizes[2 * i + 1] = padded[i];
      strides[2 * i] = 0;
      strides[2 * i + 1] = x.strides()[i];
    }
    Tensor src = strided_view(x, IntList(sizes, size_t(2 * nr)), strides);
    out.view(IntList(sizes, size_t(2 * nr))).copy_(src);
    return out;
  }
  // Too many dims to interleave at once: repeat one dim at a time.
  for (int i = 0; i < nr; ++i) {
    if (repeats[i] == 1) continue;
    int64_t sizes[kMaxDims];
    int k = 0;
    for (int d = 0; d < nr; ++d) {
      if (d == i) sizes[k++] = repeats[i];
      sizes[k++] = x.sizes()[d];
    }
    int64_t merged[kMaxDims];
    std::copy(x.sizes().begin(), x.sizes().end(), merged);
    merged[i] *= repeats[i];
    x = x.unsqueeze(i).expand(IntList(sizes, size_t(nr + 1)))
            .reshape(IntList(merged, size_t(nr)));
  }
  out.copy_(x);
  return out;
}

// ---------------------------------------------------- indexing along dim --
namespace {
// index_select past its argument checks; `name` is the op a bad index's
// error names (embedding also lands here).
Tensor index_select_impl(const Tensor& self, int64_t dim,
                         const Tensor& index_in, const char* name) {
  if (self.dim() > 0 && index_in.dim() == 1 && direct_ok(self, index_in)) {
    // Common case first, with no temporaries beyond the result.
    dim = wrap_dim(dim, self.dim(), "index_select");
    check_index_range(index_in, self.sizes()[dim], dim, name);
    int64_t shape[kMaxDims];
    std::copy(self.sizes().begin(), self.sizes().end(), shape);
    shape[dim] = index_in.numel();
    Tensor out = Tensor::empty(IntList(shape, size_t(self.dim())),
                               self.dtype(), self.device());
    select_direct(Op::index_select, self, dim, index_in, out, name);
    return out;
  }
  Tensor index = at_least_1d(int64_index(index_in, "index_select"));
  dim = wrap_dim(dim, self.dim(), "index_select");
  const Tensor s1 = at_least_1d(self);
  const int64_t n = index.numel();
  FASTT_CHECK(self.dim() > 0 || n == 1, IndexError,
              "index_select(): Index to scalar can have only 1 value, got {} "
              "value(s)",
              n);
  check_index_range(index, s1.sizes()[dim], dim, name);
  int64_t shape[kMaxDims];
  std::copy(s1.sizes().begin(), s1.sizes().end(), shape);
  shape[dim] = n;
  const IntList oshape(shape, size_t(s1.dim()));
  Tensor out = Tensor::empty(self.dim() == 0 ? IntList() : oshape,
                             self.dtype(), self.device());
  if (direct_ok(self, index)) {
    select_direct(Op::index_select, self, dim, index, out, name);
    return out;
  }
  IndexCall c(Op::index_select, name);
  c.dst = at_least_1d(out);
  int64_t strides[kMaxDims];
  strides_without(s1, dim, strides);
  c.src = strided_view(s1, oshape, strides);
  c.add(index_along(index, oshape, dim), s1.strides()[dim], s1.sizes()[dim],
        dim);
  c.run();
  return out;
}
}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index_in) {
  check_defined(self, "index_select", "self");
  check_defined(index_in, "index_select", "index");
  check_same_device("index_select", self, index_in);
  FASTT_CHECK(index_in.dim() <= 1, IndexError,
              "index_select(): Index is supposed to be a vector");
  if (autograd::should_record(self))
    return autograd::index_select(self, dim, index_in);
  return index_select_impl(self, dim, index_in, "index_select");
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index_in) {
  check_defined(self, "gather", "self");
  check_defined(index_in, "gather", "index");
  check_same_device("gather", self, index_in);
  if (autograd::should_record(self))
    return autograd::gather(self, dim, index_in);
  if (self.dim() == 1 && index_in.dim() == 1 && direct_ok(self, index_in)) {
    // 1-D gather is index_select on dim 0; no temporaries.
    dim = wrap_dim(dim, 1, "gather");
    check_index_range(index_in, self.sizes()[0], 0, "gather");
    Tensor out = Tensor::empty(index_in.sizes(), self.dtype(), self.device());
    select_direct(Op::gather, self, 0, index_in, out, "gather");
    return out;
  }
  const Tensor index = int64_index(index_in, "gather");
  if (index.numel() == 0) {  // torch: an empty index gathers nothing,
    wrap_dim(dim, self.dim(), "gather");  // whatever its rank
    return Tensor::empty(index.sizes(), self.dtype(), self.device());
  }
  FASTT_CHECK(std::max<int64_t>(index.dim(), 1) ==
                  std::max<int64_t>(self.dim(), 1),
              RuntimeError,
              "gather(): Index tensor must have the same number of dimensions "
              "as input tensor");
  dim = wrap_dim(dim, self.dim(), "gather");
  const Tensor s1 = at_least_1d(self), i1 = at_least_1d(index);
  for (int64_t d = 0; d < s1.dim(); ++d)
    FASTT_CHECK(d == dim || i1.sizes()[d] <= s1.sizes()[d], RuntimeError,
                "Size does not match at dimension {} expected index {} to be "
                "no larger than self {} apart from dimension {}",
                d, shape_str(index.sizes()), shape_str(self.sizes()), dim);
  check_index_range(i1, s1.sizes()[dim], dim, "gather");
  Tensor out = Tensor::empty(index.sizes(), self.dtype(), self.device());
  if (self.dim() <= 1 && direct_ok(self, i1)) {  // 1-D gather is a select
    select_direct(Op::gather, self, 0, i1, out, "gather");
    return out;
  }
  IndexCall c(Op::gather, "gather");
  c.dst = at_least_1d(out);
  int64_t strides[kMaxDims];
  strides_without(s1, dim, strides);
  c.src = strided_view(s1, i1.sizes(), strides);
  c.add(i1, s1.strides()[dim], s1.sizes()[dim], dim);
  c.run();
  return out;
}

namespace {

// scatter_/scatter_add_ with a tensor src or a scalar value.
Tensor& scatter_impl(Op op, Tensor& self, int64_t dim, const Tensor& index_in,
                     const Tensor* src, const Scalar* value) {
  const char* name = op == Op::scatter ? "scatter" : "scatter_add";
  check_defined(self, name, "self");
  check_defined(index_in, name, "index");
  check_same_device(name, self, index_in);
  const Tensor index = int64_index(index_in, name);
  if (index.numel() == 0) {  // writes nothing, whatever the index's rank
    wrap_dim(dim, self.dim(), name);
    return self;
  }
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  FASTT_CHECK(std::max<int64_t>(index.dim(), 1) == nd, RuntimeError,
              "{}(): Index tensor must have the same number of dimensions as "
              "self tensor",
              name);
  if (src) {
    check_defined(*src, name, "src");
    check_same_device(name, self, *src);
    FASTT_CHECK(std::max<int64_t>(src->dim(), 1) == nd, RuntimeError,
                "{}(): Index tensor must have the same number of dimensions "
                "as src tensor",
                name);
    FASTT_CHECK(src->dtype() == self.dtype(), RuntimeError,
                "{}(): Expected self.dtype to be equal to src.dtype, got {} "
                "and {}",
                name, dtype_name(self.dtype()), dtype_name(src->dtype()));
  }
  dim = wrap_dim(dim, self.dim(), name);
  const Tensor s1 = at_least_1d(self);
  Tensor i1 = at_least_1d(index);
  Tensor src1 = src ? at_least_1d(*src) : Tensor();
  for (int64_t d = 0; d < nd; ++d)
    FASTT_CHECK((d == dim || i1.sizes()[d] <= s1.sizes()[d]) &&
                    (!src || i1.sizes()[d] <= src1.sizes()[d]),
                RuntimeError,
                "{}(): Expected index {} to be no larger than self {} apart "
                "from dimension {} and to be no larger size than src {}",
                name, shape_str(index.sizes()), shape_str(self.sizes()), dim,
                src ? shape_str(src->sizes()) : std::string("[]"));
  check_index_range(i1, s1.sizes()[dim], dim, name);
  check_no_internal_overlap(self, name);
  if (shares_storage(i1, self)) i1 = i1.clone();  // read while self is written
  IndexCall c(op, name);
  int64_t strides[kMaxDims];
  strides_without(s1, dim, strides);
  c.dst = strided_view(s1, i1.sizes(), strides);
  if (src) {
    if (shares_storage(src1, self)) src1 = src1.clone();
    c.src = strided_view(src1, i1.sizes(), src1.strides().data());
  } else {
    Tensor v = Tensor::empty({}, self.dtype(), self.device());
    v.fill_(*value);
    c.src = v.expand(i1.sizes());
  }
  c.add(i1, s1.strides()[dim], s1.sizes()[dim], dim);
  c.scatter = true;
  c.accumulate = op == Op::scatter_add;
  c.run();
  self.bump_version();
  return self;
}

}  // namespace

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index,
                 const Tensor& src) {
  if (autograd::should_record(self, src))
    return autograd::inplace(self, "scatter_", [&](const Tensor& s) {
      return scatter(s, dim, index, src);
    });
  return scatter_impl(Op::scatter, self, dim, index, &src, nullptr);
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index,
                 const Scalar& value) {
  if (autograd::should_record(self))
    return autograd::inplace(self, "scatter_", [&](const Tensor& s) {
      return scatter(s, dim, index, value);
    });
  return scatter_impl(Op::scatter, self, dim, index, nullptr, &value);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index,
               const Tensor& src) {
  check_defined(self, "scatter", "self");
  if (autograd::should_record(self, src))
    return autograd::scatter(self, dim, index, &src, Scalar(0));
  Tensor out = self.clone();
  return scatter_impl(Op::scatter, out, dim, index, &src, nullptr);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index,
               const Scalar& value) {
  check_defined(self, "scatter", "self");
  if (autograd::should_record(self))
    return autograd::scatter(self, dim, index, nullptr, value);
  Tensor out = self.clone();
  return scatter_impl(Op::scatter, out, dim, index, nullptr, &value);
}
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index,
                     const Tensor& src) {
  if (autograd::should_record(self, src))
    return autograd::inplace(self, "scatter_add_", [&](const Tensor& s) {
      return scatter_add(s, dim, index, src);
    });
  return scatter_impl(Op::scatter_add, self, dim, index, &src, nullptr);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index,
                   const Tensor& src) {
  check_defined(self, "scatter_add", "self");
  if (autograd::should_record(self, src))
    return autograd::scatter_add(self, dim, index, src);
  Tensor out = self.clone();
  return scatter_impl(Op::scatter_add, out, dim, index, &src, nullptr);
}

Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index_in,
                   const Tensor& source, const Scalar& alpha) {
  check_defined(self, "index_add_", "self");
  if (autograd::should_record(self, source))
    return autograd::inplace(self, "index_add_", [&](const Tensor& s) {
      return index_add(s, dim, index_in, source, alpha);
    });
  check_defined(index_in, "index_add_", "index");
  check_defined(source, "index_add_", "source");
  check_same_device("index_add_", self, index_in);
  check_same_device("index_add_", self, source);
  FASTT_CHECK(index_in.dim() <= 1, IndexError,
              "index_add_(): Index is supposed to be a vector");
  Tensor index = at_least_1d(int64_index(index_in, "index_add_"));
  FASTT_CHECK(source.dtype() == self.dtype(), RuntimeError,
              "index_add_(): self ({}) and source ({}) must have the same "
              "scalar type",
              dtype_name(self.dtype()), dtype_name(source.dtype()));
  FASTT_CHECK(std::max<int64_t>(source.dim(), 1) ==
                  std::max<int64_t>(self.dim(), 1),
              RuntimeError,
              "index_add_(): Source/destination tensor must have same "
              "number of dimensions, got {} and {}",
              source.dim(), self.dim());
  dim = wrap_dim(dim, self.dim(), "index_add_");
  const Tensor s1 = at_least_1d(self);
  Tensor src1 = at_least_1d(source);
  const int64_t n = index.numel();
  FASTT_CHECK(src1.sizes()[dim] == n, RuntimeError,
              "index_add_(): Number of indices ({}) should be equal to "
              "source.size(dim) ({})",
              n, src1.sizes()[dim]);
  for (int64_t d = 0; d < s1.dim(); ++d)
    FASTT_CHECK(d == dim || src1.sizes()[d] == s1.sizes()[d], RuntimeError,
                "index_add_(): source {} and self {} must match in every "
                "dimension but {}",
                shape_str(source.sizes()), shape_str(self.sizes()), dim);
  check_index_range(index, s1.sizes()[dim], dim, "index_add_");
  check_no_internal_overlap(self, "index_add_");
  if (shares_storage(src1, self)) src1 = src1.clone();
  if (shares_storage(index, self)) index = index.clone();
  IndexCall c(Op::index_add, "index_add_");
  int64_t strides[kMaxDims];
  strides_without(s1, dim, strides);
  c.dst = strided_view(s1, src1.sizes(), strides);
  c.src = src1;
  c.add(index_along(index, src1.sizes(), dim), s1.strides()[dim],
        s1.sizes()[dim], dim);
  c.scatter = true;
  c.accumulate = true;
  c.alpha = alpha;
  c.run();
  self.bump_version();
  return self;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index,
                 const Tensor& source, const Scalar& alpha) {
  check_defined(self, "index_add", "self");
  if (autograd::should_record(self, source))
    return autograd::index_add(self, dim, index, source, alpha);
  Tensor out = self.clone();
  return index_add_(out, dim, index, source, alpha);
}

Tensor embedding(const Tensor& weight, const Tensor& indices,
                 int64_t padding_idx) {
  check_defined(weight, "embedding", "weight");
  if (autograd::should_record(weight))
    return autograd::embedding(weight, indices, padding_idx);
  check_defined(indices, "embedding", "indices");
  FASTT_CHECK(weight.dim() == 2, RuntimeError, "'weight' must be 2-D");
  FASTT_CHECK(indices.dtype() == DType::Int64 ||
                  indices.dtype() == DType::Int32,
              RuntimeError,
              "Expected tensor for argument #1 'indices' to have one of the "
              "following scalar types: Long, Int; but got {} instead (while "
              "checking arguments for embedding)",
              dtype_name(indices.dtype()));
  FASTT_CHECK(indices.dim() < kMaxDims, ValueError,
              "embedding: indices with {} dims leave no room for the "
              "embedding dim",
              indices.dim());
  Tensor converted;  // only for int32 indices
  if (indices.dtype() != DType::Int64)
    converted = int64_index(indices, "embedding");
  const Tensor& index = converted.defined() ? converted : indices;
  check_index_range(index, weight.sizes()[0], 0, "embedding");
  int64_t shape[kMaxDims];
  std::copy(indices.sizes().begin(), indices.sizes().end(), shape);
  shape[indices.dim()] = weight.sizes()[1];
  const IntList oshape(shape, size_t(indices.dim() + 1));
  if (weight.device() == index.device() && direct_ok(weight, index)) {
    // Rows land straight in the final shape; the range check above (or
    // the CUDA kernel's) is the only pass over the indices.
    Tensor out = Tensor::empty(oshape, weight.dtype(), weight.device());
    select_direct(Op::index_select, weight, 0, index, out, "embedding");
    return out;
  }
  check_same_device("embedding", weight, index);
  Tensor rows = index_select_impl(weight, 0, index.reshape({-1}), "embedding");
  return rows.view(oshape);
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  check_defined(indices, "one_hot", "indices");
  FASTT_CHECK(indices.dtype() == DType::Int64, RuntimeError,
              "one_hot is only applicable to index tensor of type "
              "LongTensor.");
  FASTT_CHECK(num_classes >= -1, RuntimeError,
              "one_hot: num_classes should be -1 or non-negative, got {}",
              num_classes);
  if (indices.numel() == 0) {
    FASTT_CHECK(num_classes != -1, RuntimeError,
                "Can not infer total number of classes from empty tensor.");
  } else {
    capture::host_read("one_hot (reads its class values on the host)");
    int64_t lo, hi;
    int64_min_max(indices, &lo, &hi);
    FASTT_CHECK(lo >= 0, RuntimeError, "Class values must be non-negative.");
    if (num_classes == -1) num_classes = hi + 1;
    FASTT_CHECK(hi < num_classes, RuntimeError,
                "Class values must be smaller than num_classes.");
  }
  FASTT_CHECK(indices.dim() < kMaxDims, ValueError,
              "one_hot: too many dimensions");
  int64_t shape[kMaxDims];
  std::copy(indices.sizes().begin(), indices.sizes().end(), shape);
  shape[indices.dim()] = num_classes;
  Tensor out = Tensor::empty(IntList(shape, size_t(indices.dim() + 1)),
                             DType::Int64, indices.device());
  out.zero_();
  if (out.numel() > 0) scatter_(out, -1, indices.unsqueeze(-1), Scalar(1));
  return out;
}

// --------------------------------------------------- advanced indexing --
namespace {

// Indices resolved against `src` (self plus a unit dim per 0-d mask): one
// int64 index or undefined per dim of src, and where the result's dims
// come from.
struct AdvancedIndex {
  Tensor src;
  Tensor idx[kMaxDims];
  bool from_mask[kMaxDims] = {};
  int64_t bshape[kMaxDims];  // broadcast shape of the indices
  int bnd = 0;
  int nidx = 0;
  int64_t shape[kMaxDims];   // result shape
  int nd = 0;
  int first = -1, last = -1;
  bool adjacent = true;
};

void prepare_index(AdvancedIndex& ai, const Tensor& self,
                   const std::vector<Tensor>& indices) {
  check_defined(self, "index", "self");
  int64_t consumed = 0;
  for (const Tensor& t : indices)
    consumed += (t.defined() && (t.dtype() == DType::Bool ||
                                 t.dtype() == DType::UInt8))
                    ? t.dim()
                    : 1;
  FASTT_CHECK(consumed <= self.dim(), IndexError,
              "too many indices for tensor of dimension {}", self.dim());
  ai.src = self;
  int p = 0;  // current dim of ai.src
  for (const Tensor& t : indices) {
    if (!t.defined()) {
      ++p;
      continue;
    }
    check_same_device("index", self, t);
    if (t.dtype() == DType::Bool || t.dtype() == DType::UInt8) {
      if (t.dim() == 0) {
        // A 0-d mask adds a unit dim that it keeps (true) or empties.
        FASTT_CHECK(ai.src.dim() < kMaxDims, IndexError,
                    "index: too many dimensions");
        ai.src = ai.src.unsqueeze(p);
        const bool keep = t.item<bool>();
        Tensor ix = Tensor::empty({keep ? 1 : 0}, DType::Int64, self.device());
        if (keep) ix.fill_(Scalar(int64_t(0)));  // any device
        ai.idx[p] = ix;
        ai.from_mask[p] = true;
        ++p;
        continue;
      }
      for (int64_t j = 0; j < t.dim(); ++j)
        FASTT_CHECK(t.sizes()[j] == ai.src.sizes()[p + j], IndexError,
                    "The shape of the mask {} at index {} does not match the "
                    "shape of the indexed tensor {} at index {}",
                    shape_str(t.sizes()), j, shape_str(ai.src.sizes()),
                    p + j);
      Tensor nz = nonzero(t);
      for (int64_t j = 0; j < t.dim(); ++j) {
        ai.idx[p] = nz.select(1, j);
        ai.from_mask[p] = true;
        ++p;
      }
      continue;
    }
    FASTT_CHECK(t.dtype() == DType::Int64 || t.dtype() == DType::Int32,
                IndexError,
                "tensors used as indices must be long, int, byte or bool "
                "tensors");
    ai.idx[p++] = int64_index(t, "index");
  }
  const int sd = int(ai.src.dim());
  // Broadcast the indices; find where they sit.
  for (int d = 0; d < sd; ++d) {
    if (!ai.idx[d].defined()) continue;
    if (ai.first < 0) {
      ai.bnd = int(ai.idx[d].dim());
      std::copy(ai.idx[d].sizes().begin(), ai.idx[d].sizes().end(),
                ai.bshape);
    } else {
      const IntList a(ai.bshape, size_t(ai.bnd));
      const IntList b = ai.idx[d].sizes();
      bool ok = true;
      for (size_t i = 0; i < std::max(a.size(), b.size()) && ok; ++i) {
        int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
        int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
        ok = x == y || x == 1 || y == 1;
      }
      FASTT_CHECK(ok, IndexError,
                  "shape mismatch: indexing tensors could not be broadcast "
                  "together with shapes {}, {}",
                  shape_str(a), shape_str(b));
      ai.bnd = broadcast_shapes(a, b, ai.bshape, "index");
    }
    if (ai.first >= 0 && ai.last != d - 1) ai.adjacent = false;
    if (ai.first < 0) ai.first = d;
    ai.last = d;
    ++ai.nidx;
  }
  for (int d = 0; d < sd; ++d)
    if (ai.idx[d].defined() && !ai.from_mask[d])
      check_index_range(ai.idx[d], ai.src.sizes()[d], d, nullptr);
  // Result shape.
  int n = 0;
  auto push = [&](int64_t s) {
    FASTT_CHECK(n < kMaxDims, IndexError,
                "index: the result would have more than {} dimensions",
                kMaxDims);
    ai.shape[n++] = s;
  };
  if (ai.nidx == 0) {
    for (int d = 0; d < sd; ++d) push(ai.src.sizes()[d]);
  } else if (ai.adjacent) {
    for (int d = 0; d < ai.first; ++d) push(ai.src.sizes()[d]);
    for (int i = 0; i < ai.bnd; ++i) push(ai.bshape[i]);
    for (int d = ai.last + 1; d < sd; ++d) push(ai.src.sizes()[d]);
  } else {
    for (int i = 0; i < ai.bnd; ++i) push(ai.bshape[i]);
    for (int d = 0; d < sd; ++d)
      if (!ai.idx[d].defined()) push(ai.src.sizes()[d]);
  }
  ai.nd = n;
}

// Fills call.src (gather) or call.dst (scatter) with a view of ai.src at
// the result shape, and adds the indices at the result shape.
void bind_index(const AdvancedIndex& ai, IndexCall& call, bool scatter) {
  const IntList shape(ai.shape, size_t(ai.nd));
  const int sd = int(ai.src.dim());
  // Result dim where the broadcast dims start.
  const int bstart = ai.nidx == 0 ? 0 : ai.adjacent ? ai.first : 0;
  int64_t strides[kMaxDims] = {};
  {
    int r = 0;
    for (int d = 0; d < sd; ++d) {
      if (ai.idx[d].defined()) continue;
      if (r == bstart && ai.nidx > 0) r += ai.bnd;  // skip broadcast dims
      strides[r++] = ai.src.strides()[d];
    }
  }
  Tensor view = strided_view(ai.src, shape, strides);
  (scatter ? call.dst : call.src) = view;
  const IntList bshape(ai.bshape, size_t(ai.bnd));
  for (int d = 0; d < sd; ++d) {
    if (!ai.idx[d].defined()) continue;
    Tensor e = ai.idx[d].expand(bshape);
    int64_t istrides[kMaxDims] = {};
    for (int i = 0; i < ai.bnd; ++i) istrides[bstart + i] = e.strides()[i];
    call.add(strided_view(e, shape, istrides), ai.src.strides()[d],
             ai.src.sizes()[d], d);
  }
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  if (autograd::should_record(self)) return autograd::index(self, indices);
  // x[idx] with one int64 index on a dense CPU tensor is index_select on
  // dim 0 with the result shaped idx.shape + self.shape[1:].
  if (indices.size() == 1 && self.defined() && self.dim() > 0 &&
      indices[0].defined() && indices[0].device() == self.device() &&
      direct_ok(self, indices[0]) &&
      indices[0].dim() + self.dim() - 1 <= kMaxDims) {
    const Tensor& idx = indices[0];
    check_index_range(idx, self.sizes()[0], 0, nullptr);
    int64_t shape[kMaxDims];
    const int ni = int(idx.dim());
    std::copy(idx.sizes().begin(), idx.sizes().end(), shape);
    std::copy(self.sizes().begin() + 1, self.sizes().end(), shape + ni);
    Tensor out = Tensor::empty(IntList(shape, size_t(ni + self.dim() - 1)),
                               self.dtype(), self.device());
    select_direct(Op::index, self, 0, idx, out, nullptr);
    return out;
  }
  AdvancedIndex ai;
  prepare_index(ai, self, indices);
  Tensor out = Tensor::empty(IntList(ai.shape, size_t(ai.nd)), self.dtype(),
                             self.device());
  IndexCall c(Op::index, nullptr);
  c.dst = out;
  bind_index(ai, c, false);
  c.run();
  return out;
}

Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices,
                   const Tensor& values, bool accumulate) {
  check_defined(values, "index_put_", "values");
  if (autograd::should_record(self, values))
    return autograd::inplace(self, "index_put_", [&](const Tensor& s) {
      return index_put(s, indices, values, accumulate);
    });
  AdvancedIndex ai;
  prepare_index(ai, self, indices);
  check_same_device("index_put_", self, values);
  check_no_internal_overlap(self, "index_put_");
  const IntList shape(ai.shape, size_t(ai.nd));
  bool ok = values.dim() <= ai.nd;
  for (int64_t i = 0; ok && i < values.dim(); ++i) {
    const int64_t v = values.sizes()[values.dim() - 1 - i];
    ok = v == 1 || v == shape[shape.size() - 1 - size_t(i)];
  }
  FASTT_CHECK(ok, RuntimeError,
              "shape mismatch: value tensor of shape {} cannot be broadcast "
              "to indexing result of shape {}",
              shape_str(values.sizes()), shape_str(shape));
  Tensor v = values.to(self.dtype());
  if (v.is_same(values) && shares_storage(v, self)) v = v.clone();
  for (Tensor& t : ai.idx)  // indices are read while self is written
    if (t.defined() && shares_storage(t, self)) t = t.clone();
  IndexCall c(Op::index_put, nullptr);
  c.src = v.expand(shape);
  bind_index(ai, c, true);
  c.scatter = true;
  c.accumulate = accumulate;
  c.run();
  self.bump_version();
  return self;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices,
                 const Tensor& values, bool accumulate) {
  check_defined(self, "index_put", "self");
  if (autograd::should_record(self, values))
    return autograd::index_put(self, indices, values, accumulate);
  Tensor out = self.clone();
  return index_put_(out, indices, values, accumulate);
}

// ---------------------------------------------------------------- masks --
Tensor masked_select(const Tensor& self, const Tensor& mask) {
  check_defined(self, "masked_select", "self");
  check_defined(mask, "masked_select", "mask");
  if (autograd::should_record(self))
    return autograd::masked_select(self, mask);
  check_same_device("masked_select", self, mask);
  FASTT_CHECK(mask.dtype() == DType::Bool, RuntimeError,
              "masked_select: expected BoolTensor for mask, got {}",
              dtype_name(mask.dtype()));
  int64_t shape[kMaxDims];
  const int nd = broadcast_shapes(self.sizes(), mask.sizes(), shape,
                                  "masked_select");
  const IntList s(shape, size_t(nd));
  KernelFn fn = lookup_kernel(Op::masked_select, self.device().type,
                              self.dtype());
  const Tensor sb = self.expand(s), mb = mask.expand(s);
  Tensor out;
  KernelArgs a;
  a.out = &out;
  a.in[0] = &sb;
  a.in[1] = &mb;
  fn(a);
  return out;
}

Tensor nonzero(const Tensor& t) {
  check_defined(t, "nonzero", "self");
  KernelFn fn = lookup_kernel(Op::nonzero, t.device().type, t.dtype());
  Tensor out;
  KernelArgs a;
  a.out = &out;
  a.in[0] = &t;
  fn(a);
  return out;
}

Tensor& masked_scatter_(Tensor& self, const Tensor& mask,
                        const Tensor& source) {
  check_defined(self, "masked_scatter_", "self");
  check_defined(mask, "masked_scatter_", "mask");
  check_defined(source, "masked_scatter_", "source");
  if (autograd::should_record(self, source))
    return autograd::inplace(self, "masked_scatter_", [&](const Tensor& s) {
      return masked_scatter(s, mask, source);
    });
  check_same_device("masked_scatter_", self, mask);
  check_same_device("masked_scatter_", self, source);
  FASTT_CHECK(mask.dtype() == DType::Bool, RuntimeError,
              "masked_scatter_: expected BoolTensor for mask, got {}",
              dtype_name(mask.dtype()));
  FASTT_CHECK(source.dtype() == self.dtype(), RuntimeError,
              "masked_scatter_: expected self and source to have same dtypes "
              "but got {} and {}",
              dtype_name(self.dtype()), dtype_name(source.dtype()));
  int64_t shape[kMaxDims];
  const int nd = broadcast_shapes(self.sizes(), mask.sizes(), shape,
                                  "masked_scatter_");
  FASTT_CHECK(self.sizes().equals(IntList(shape, size_t(nd))), RuntimeError,
              "masked_scatter_: mask of shape {} cannot be broadcast to self "
              "of shape {}",
              shape_str(mask.sizes()), shape_str(self.sizes()));
  Tensor s1 = at_least_1d(self);
  const Tensor m1 = at_least_1d(mask.expand(self.sizes()));
  const Tensor nz = nonzero(m1);
  const int64_t n = nz.sizes()[0];
  FASTT_CHECK(source.numel() >= n, RuntimeError,
              "masked_scatter_: number of elements in source ({}) < number "
              "of ones in mask ({})",
              source.numel(), n);
  std::vector<Tensor> cols;
  for (int64_t j = 0; j < s1.dim(); ++j) cols.push_back(nz.select(1, j));
  index_put_(s1, cols, source.reshape({-1}).narrow(0, 0, n));
  self.bump_version();
  return self;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask,
                      const Tensor& source) {
  check_defined(self, "masked_scatter", "self");
  check_defined(mask, "masked_scatter", "mask");
  // Out of place, self broadcasts with mask (torch's expand_outplace).
  int64_t shape[kMaxDims];
  const int nd =
      broadcast_shapes(self.sizes(), mask.sizes(), shape, "masked_scatter");
  const IntList bshape(shape, size_t(nd));
  if (!self.sizes().equals(bshape))
    return masked_scatter(self.expand(bshape), mask, source);
  if (autograd::should_record(self, source))
    return autograd::masked_scatter(self, mask, source);
  Tensor out = self.clone();
  return masked_scatter_(out, mask, source);
}

// ---------------------------------------------- triangles, flips, rolls --
namespace {
Tensor& tri_into(Op op, Tensor& out, const Tensor& src, int64_t diagonal) {
  KernelFn fn = lookup_kernel(op, src.device().type, src.dtype());
  KernelArgs a;
  a.out = &out;
  a.in[0] = &src;
  a.i0 = diagonal;
  fn(a);
  return out;
}
void check_tri(const Tensor& t, const char* op) {
  check_defined(t, op, "self");
  FASTT_CHECK(t.dim() >= 2, RuntimeError,
              "{}: input tensor must have at least 2 dimensions", op);
}
Tensor tri(Op op, const Tensor& t, int64_t diagonal) {
  check_tri(t, op_name(op));
  const Tensor src = t.contiguous();
  Tensor out = Tensor::empty(t.sizes(), t.dtype(), t.device());
  return tri_into(op, out, src, diagonal);
}
Tensor& tri_(Op op, Tensor& t, int64_t diagonal) {
  check_tri(t, op_name(op));
  if (t.is_contiguous()) {
    tri_into(op, t, t, diagonal);
  } else {
    check_no_internal_overlap(t, op_name(op));
    t.copy_(tri(op, t, diagonal));
  }
  t.bump_version();
  return t;
}
}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal) {
  if (autograd::should_record(t))
    return autograd::tril_triu(false, t, diagonal);
  return tri(Op::tril, t, diagonal);
}
Tensor triu(const Tensor& t, int64_t diagonal) {
  if (autograd::should_record(t))
    return autograd::tril_triu(true, t, diagonal);
  return tri(Op::triu, t, diagonal);
}
Tensor& tril_(Tensor& t, int64_t diagonal) {
  if (autograd::should_record(t))
    return autograd::inplace(t, "tril_", [&](const Tensor& s) {
      return tril(s, diagonal);
    });
  return tri_(Op::tril, t, diagonal);
}
Tensor& triu_(Tensor& t, int64_t diagonal) {
  if (autograd::should_record(t))
    return autograd::inplace(t, "triu_", [&](const Tensor& s) {
      return triu(s, diagonal);
    });
  return tri_(Op::triu, t, diagonal);
}

Tensor flip(const Tensor& t, IntList dims) {
  check_defined(t, "flip", "self");
  if (autograd::should_record(t)) return autograd::flip(t, dims);
  int64_t wrapped[kMaxDims];
  bool seen[kMaxDims] = {};
  FASTT_CHECK(dims.size() <= size_t(std::max<int64_t>(t.dim(), 1)),
              RuntimeError, "flip: got {} dims for a {}-d tensor",
              dims.size(), t.dim());
  int n = 0;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, t.dim(), "flip");
    FASTT_CHECK(!seen[w], RuntimeError,
                "dim {} appears multiple times in the list of dims", w);
    seen[w] = true;
    if (t.dim() > 0 && t.sizes()[w] > 1) wrapped[n++] = w;
  }
  KernelFn fn = lookup_kernel(Op::flip, t.device().type, t.dtype());
  Tensor out = Tensor::empty(t.sizes(), t.dtype(), t.device());
  if (n == 0) {
    out.copy_(t);
    return out;
  }
  KernelArgs a;
  a.out = &out;
  a.in[0] = &t;
  a.dims = IntList(wrapped, size_t(n));
  fn(a);
  return out;
}

Tensor roll(const Tensor& t, IntList shifts, IntList dims) {
  check_defined(t, "roll", "self");
  if (autograd::should_record(t)) return autograd::roll(t, shifts, dims);
  if (dims.empty()) {
    FASTT_CHECK(shifts.size() == 1, RuntimeError,
                "roll: expected one shift when dims are not given, got {}",
                shape_str(shifts));
    const int64_t zero = 0;
    return roll(t.reshape({-1}), shifts, IntList(zero)).view(t.sizes());
  }
  FASTT_CHECK(shifts.size() == dims.size(), RuntimeError,
              "shifts and dimensions must align. shifts: {}, dims:{}",
              shifts.size(), dims.size());
  // As torch: a 0-d tensor takes no explicit dims (wrap_dim would allow 0).
  FASTT_CHECK(t.dim() > 0, IndexError,
              "roll: Dimension specified as {} but tensor has no dimensions",
              dims[0]);
  int64_t total[kMaxDims] = {};
  for (size_t i = 0; i < dims.size(); ++i)
    total[wrap_dim(dims[i], t.dim(), "roll")] += shifts[i];
  int64_t packed[2 * kMaxDims], rd[kMaxDims], rs[kMaxDims];
  int k = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t n = t.sizes()[d];
    if (n == 0) continue;
    const int64_t s = ((total[d] % n) + n) % n;
    if (s == 0) continue;
    rd[k] = d;
    rs[k++] = s;
  }
  KernelFn fn = lookup_kernel(Op::roll, t.device().type, t.dtype());
  Tensor out = Tensor::empty(t.sizes(), t.dtype(), t.device());
  if (k == 0) {
    out.copy_(t);
    return out;
  }
  for (int i = 0; i < k; ++i) {
    packed[i] = rd[i];
    packed[k + i] = rs[i];
  }
  KernelArgs a;
  a.out = &out;
  a.in[0] = &t;
  a.dims = IntList(packed, size_t(2 * k));
  fn(a);
  return out;
}

// -------------------------------------------------------------- sorting --
namespace {
// Runs sort/topk on t along dim into fresh (values, indices) with `k`
// elements along dim.
std::tuple<Tensor, Tensor> sort_like(Op op, const Tensor& t, int64_t dim,
                                     int64_t k, bool flag) {
  KernelFn fn = lookup_kernel(op, t.device().type, t.dtype());
  const int nd = int(t.dim());
  int64_t shape[kMaxDims];
  std::copy(t.sizes().begin(), t.sizes().end(), shape);
  if (nd > 0) shape[dim] = k;
  const IntList s(shape, size_t(nd));
  Tensor values = Tensor::empty(s, t.dtype(), t.device());
  Tensor indices = Tensor::empty(s, DType::Int64, t.device());
  KernelArgs a;
  a.i0 = dim;
  a.i1 = flag;
  a.i2 = k;
  if (nd > 0) {  // no temporaries: the kernel sees the tensors themselves
    a.out = &values;
    a.out2 = &indices;
    a.in[0] = &t;
    fn(a);
  } else {  // 0-d tensors run as [1]
    const Tensor t1 = t.reshape({1});
    Tensor v1 = values.reshape({1}), i1 = indices.reshape({1});
    a.out = &v1;
    a.out2 = &i1;
    a.in[0] = &t1;
    fn(a);
  }
  return {std::move(values), std::move(indices)};
}
}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending,
                                bool stable) {
  check_defined(t, "sort", "self");
  if (autograd::should_record(t))
    return autograd::sort(t, dim, descending, stable);
  dim = wrap_dim(dim, t.dim(), "sort");
  const int64_t n = t.dim() == 0 ? 1 : t.sizes()[dim];
  return sort_like(Op::sort, t, dim, n, descending);
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending, bool stable) {
  autograd::GradModeGuard no_grad(false);  // indices only: nothing to record
  return std::get<1>(sort(t, dim, descending, stable));
}

Tensor select_kth(const Tensor& t, int64_t dim, int64_t which, int64_t k) {
  check_defined(t, "kthvalue", "self");
  dim = wrap_dim(dim, t.dim(), "kthvalue");
  const Tensor t1 = t.dim() == 0 ? t.reshape({1}) : t;
  const int64_t n = t1.sizes()[dim];
  FASTT_CHECK(which >= 0 && which <= 2, ValueError,
              "kthvalue: unknown selection {}", which);
  FASTT_CHECK(which != 0 || (k >= 0 && k < n), RuntimeError,
              "kthvalue(): selected number k out of range for dimension {}",
              dim);
  constexpr int64_t kMaxRow = std::numeric_limits<uint32_t>::max();
  FASTT_CHECK(n > 0 && n <= kMaxRow, IndexError,
              "kthvalue(): Expected reduction dim {} to have a size in [1, "
              "2^32), got {}",
              dim, n);
  int64_t shape[kMaxDims];
  std::copy(t1.sizes().begin(), t1.sizes().end(), shape);
  shape[dim] = 1;
  Tensor out = Tensor::empty(IntList(shape, size_t(t1.dim())), DType::Int64,
                             t1.device());
  KernelArgs a;
  a.out = &out;
  a.in[0] = &t1;
  a.i0 = dim;
  a.i1 = which;
  a.i2 = k;
  lookup_kernel(Op::select_kth, t1.device().type, t1.dtype())(a);
  return t.dim() == 0 ? out.reshape({}) : out;
}

Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right,
                    bool out_int32) {
  check_defined(sorted, "searchsorted", "sorted_sequence");
  check_defined(values, "searchsorted", "input");
  check_same_device("searchsorted", sorted, values);
  FASTT_CHECK(sorted.dtype() == values.dtype(), TypeError,
              "searchsorted: sorted_sequence ({}) and input ({}) must have "
              "one dtype here",
              dtype_name(sorted.dtype()), dtype_name(values.dtype()));
  const int nd = int(sorted.dim());
  bool leading = nd >= 1 && (nd == 1 || values.dim() == nd);
  for (int d = 0; leading && d + 1 < nd; ++d)
    leading = sorted.sizes()[d] == values.sizes()[d];
  FASTT_CHECK(leading, RuntimeError,
              "torch.searchsorted(): boundaries tensor should be 1 dimension "
              "or the first N-1 dimensions of boundaries tensor and input "
              "value tensor must match");
  const Tensor s = sorted.contiguous(), v = values.contiguous();
  Tensor out = Tensor::empty(v.sizes(),
                             out_int32 ? DType::Int32 : DType::Int64,
                             v.device());
  if (v.numel() == 0) return out;
  if (s.numel() == 0) return out.zero_();
  KernelArgs a;
  a.out = &out;
  a.in[0] = &s;
  a.in[1] = &v;
  a.i0 = right;
  lookup_kernel(Op::searchsorted, v.device().type, v.dtype())(a);
  return out;
}

namespace {
// Every tap index in [0, n) (a replay checks them again, as
// check_index_range does).
void check_taps(const Tensor& idx, int64_t n) {
  const int64_t* iv = static_cast<const int64_t*>(idx.data_ptr());
  for (int64_t i = 0; i < idx.numel(); ++i)
    FASTT_CHECK(iv[i] >= 0 && iv[i] < n, IndexError,
                "resample(): tap index {} is out of range for a dim of "
                "size {}",
                iv[i], n);
  if (FASTT_UNLIKELY(g_capturing))
    capture::host_step({idx}, [n](Tensor* t) { check_taps(t[0], n); });
}
}  // namespace

Tensor resample(const Tensor& self, int64_t dim, const Tensor& idx,
                const Tensor& w, bool adjoint, int64_t size) {
  check_defined(self, "resample", "self");
  check_defined(idx, "resample", "idx");
  check_defined(w, "resample", "w");
  check_same_device("resample", self, idx);
  check_same_device("resample", self, w);
  FASTT_CHECK(idx.dtype() == DType::Int64 && idx.dim() == 2, TypeError,
              "resample(): idx must be a 2-D int64 tensor [positions, taps], "
              "got {} with {} dims",
              dtype_name(idx.dtype()), idx.dim());
  FASTT_CHECK(w.dtype() == self.dtype() && w.sizes().equals(idx.sizes()),
              TypeError,
              "resample(): w must have idx's shape {} and self's dtype {}, "
              "got {} {}",
              shape_str(idx.sizes()), dtype_name(self.dtype()),
              shape_str(w.sizes()), dtype_name(w.dtype()));
  FASTT_CHECK(self.dim() >= 1, RuntimeError,
              "resample(): self must have at least one dim");
  dim = wrap_dim(dim, self.dim(), "resample");
  const int64_t o = idx.sizes()[0], taps = idx.sizes()[1];
  FASTT_CHECK(taps >= 1, RuntimeError, "resample(): idx has no taps");
  FASTT_CHECK(!adjoint || (self.sizes()[dim] == o && size >= 0),
              RuntimeError,
              "resample(): the adjoint reads {} positions along dim {} and "
              "needs size >= 0, got {} positions and size {}",
              o, dim, self.sizes()[dim], size);
  if (autograd::should_record(self))
    return autograd::resample(self, dim, idx, w, adjoint, size);
  const KernelFn fn =
      lookup_kernel(Op::resample, self.device().type, self.dtype());
  const int64_t n = adjoint ? size : self.sizes()[dim];
  const Tensor ic = idx.contiguous(), wc = w.contiguous();
  check_taps(ic, n);
  const Tensor x = self.contiguous();
  int64_t shape[kMaxDims];
  std::copy(x.sizes().begin(), x.sizes().end(), shape);
  shape[dim] = adjoint ? n : o;
  Tensor out = Tensor::empty(IntList(shape, size_t(x.dim())), x.dtype(),
                             x.device());
  int64_t dims[3] = {1, n, 1};
  for (int64_t d = 0; d < dim; ++d) dims[0] *= shape[d];
  for (int64_t d = dim + 1; d < x.dim(); ++d) dims[2] *= shape[d];
  KernelArgs a;
  a.out = &out;
  a.in[0] = &x;
  a.in[1] = &ic;
  a.in[2] = &wc;
  a.i0 = taps;
  a.i1 = adjoint;
  a.dims = IntList(dims, 3);
  fn(a);
  return out;
}

namespace {
// torch's area_pixel_compute_source_index and guard_index_and_lambda, then
// the taps, in F (the op math of float32 or float64). The source index's
// rounding moves the weights by an ulp of the index (1e-5 at 64 in
// float32), so it follows torch's exactly.
template <class F>
void fill_taps(int64_t n, int64_t o, double scale, bool align, bool cubic,
               int64_t* idx, F* w) {
  F s;
  if (align)
    s = o > 1 ? F(n - 1) / F(o - 1) : F(0);
  else
    s = scale > 0 ? F(1.0 / scale) : F(n) / F(o);
  const int taps = cubic ? 4 : 2;
  for (int64_t j = 0; j < o; ++j, idx += taps, w += taps) {
    // one rounding, as torch's vectorized builds contract it
    F src = align ? s * F(j) : std::fma(s, F(j) + F(0.5), F(-0.5));
    if (!align && !cubic && src < F(0)) src = F(0);
    const int64_t i0 = std::min(int64_t(std::floor(src)), n - 1);
    const F t = std::min(std::max(src - F(i0), F(0)), F(1));
    if (!cubic) {
      idx[0] = i0;
      idx[1] = std::min(i0 + 1, n - 1);
      w[0] = F(1) - t;
      w[1] = t;
      continue;
    }
    constexpr F A = F(-0.75);
    const F t1 = t + F(1), t2 = F(1) - t, t3 = t2 + F(1);
    w[0] = ((A * t1 - F(5) * A) * t1 + F(8) * A) * t1 - F(4) * A;
    w[1] = ((A + F(2)) * t - (A + F(3))) * t * t + F(1);
    w[2] = ((A + F(2)) * t2 - (A + F(3))) * t2 * t2 + F(1);
    w[3] = ((A * t3 - F(5) * A) * t3 + F(8) * A) * t3 - F(4) * A;
    for (int k = 0; k < 4; ++k)
      idx[k] = std::min(std::max(i0 - 1 + k, int64_t(0)), n - 1);
  }
}
}  // namespace

std::tuple<Tensor, Tensor> interp_taps(int64_t n, int64_t o, double scale,
                                       bool align_corners, bool cubic,
                                       DType dtype) {
  FASTT_CHECK(n > 0 && o > 0, RuntimeError,
              "interpolate(): Input and output sizes should be greater "
              "than 0, but got input ({}) and output ({})",
              n, o);
  FASTT_CHECK(dtype == DType::Float32 || dtype == DType::Float64, TypeError,
              "interpolate(): taps are float32 or float64, not {}",
              dtype_name(dtype));
  const int64_t taps = cubic ? 4 : 2;
  Tensor idx = Tensor::empty({o, taps}, DType::Int64);
  Tensor w = Tensor::empty({o, taps}, dtype);
  auto fill = [=](Tensor* t) {
    int64_t* iv = static_cast<int64_t*>(t[0].data_ptr());
    if (dtype == DType::Float32)
      fill_taps(n, o, scale, align_corners, cubic, iv,
                static_cast<float*>(t[1].data_ptr()));
    else
      fill_taps(n, o, scale, align_corners, cubic, iv,
                static_cast<double*>(t[1].data_ptr()));
  };
  Tensor both[2] = {idx, w};
  fill(both);
  // written on the host, not by a kernel: a replay writes them again
  // (their memory may have served other intermediates in between)
  if (FASTT_UNLIKELY(g_capturing)) capture::host_step({idx, w}, fill);
  return {idx, w};
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim,
                                bool largest, bool sorted) {
  check_defined(t, "topk", "self");
  if (autograd::should_record(t))
    return autograd::topk(t, k, dim, largest, sorted);
  dim = wrap_dim(dim, t.dim(), "topk");
  const int64_t n = t.dim() == 0 ? 1 : t.sizes()[dim];
  FASTT_CHECK(k >= 0 && k <= n, RuntimeError,
              "topk(): selected index k out of range (k = {}, size along dim "
              "{} = {})",
              k, dim, n);
  return sort_like(Op::topk, t, dim, k, largest);
}

}  // namespace fastt

// Shape composites (declared in shape.h): each is views and differentiable
// core ops, so gradients come from those ops' formulas.
#include "shape.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "autograd/node.h"
#include "csrc/autograd.h"
#include "csrc/capture.h"
#include "elementwise.h"
#include "factory.h"
#include "index.h"
#include "linalg.h"
#include "reduce.h"

namespace fastt {
namespace {

std::string dims_str(IntList s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

void check_def(const Tensor& t, const char* op) {
  FASTT_CHECK(t.defined(), ValueError,
              "{}(): got an undefined tensor for argument 'input'", op);
}

// A 0-dim tensor of t's dtype and device holding zero (where()'s other
// branch without promoting bool or integer inputs).
Tensor zero_like_scalar(const Tensor& t) {
  return zeros({}, t.dtype(), t.device());
}

std::vector<Tensor> map_tensors(const std::vector<Tensor>& ts,
                                Tensor (*f)(const Tensor&)) {
  std::vector<Tensor> r;
  r.reserve(ts.size());
  for (const Tensor& t : ts) r.push_back(f(t));
  return r;
}

void check_nonempty(const std::vector<Tensor>& ts, const char* op) {
  FASTT_CHECK(!ts.empty(), RuntimeError,
              "{}(): expects a non-empty TensorList", op);
}

}  // namespace

// ---- views that add or rearrange dims ----
Tensor atleast_1d(const Tensor& t) {
  check_def(t, "atleast_1d");
  return t.dim() == 0 ? t.view({1}) : t.alias();
}
Tensor atleast_2d(const Tensor& t) {
  check_def(t, "atleast_2d");
  if (t.dim() == 0) return t.view({1, 1});
  if (t.dim() == 1) return t.unsqueeze(0);
  return t.alias();
}
Tensor atleast_3d(const Tensor& t) {
  check_def(t, "atleast_3d");
  if (t.dim() == 0) return t.view({1, 1, 1});
  if (t.dim() == 1) return t.unsqueeze(0).unsqueeze(-1);
  if (t.dim() == 2) return t.unsqueeze(-1);
  return t.alias();
}

std::vector<int64_t> broadcast_shapes(
    const std::vector<std::vector<int64_t>>& shapes) {
  size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  std::vector<int64_t> r(nd, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t v = s[s.size() - 1 - i];
      int64_t& o = r[nd - 1 - i];
      FASTT_CHECK(v >= 0, RuntimeError,
                  "Trying to create tensor with negative dimension {}: {}", v,
                  dims_str(s));
      if (v == o || v == 1) continue;
      FASTT_CHECK(o == 1, RuntimeError,
                  "shape mismatch: objects cannot be broadcast to a single "
                  "shape.  Mismatch is between arg 0 and arg 1.");
      o = v;
    }
  }
  return r;
}

Tensor broadcast_to(const Tensor& t, IntList shape) {
  check_def(t, "broadcast_to");
  return t.expand(shape);
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor& t : tensors) {
    check_def(t, "broadcast_tensors");
    shapes.push_back(t.sizes().vec());
  }
  const std::vector<int64_t> s = broadcast_shapes(shapes);
  std::vector<Tensor> r;
  for (const Tensor& t : tensors) r.push_back(t.expand(s));
  return r;
}

Tensor movedim(const Tensor& t, IntList source, IntList destination) {
  check_def(t, "movedim");
  const int64_t nd = t.dim();
  FASTT_CHECK(source.size() == destination.size(), RuntimeError,
              "movedim: Invalid source or destination dims: source ({}) and "
              "destination ({}) must have the same number of elements",
              dims_str(source), dims_str(destination));
  const int64_t n = int64_t(source.size());
  std::vector<int64_t> src(n), dst(n);
  for (int64_t i = 0; i < n; ++i) {
    src[i] = wrap_dim(source[i], nd, "movedim");
    dst[i] = wrap_dim(destination[i], nd, "movedim");
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) {
      FASTT_CHECK(src[i] != src[j], RuntimeError,
                  "movedim: repeated dim in `source` ({})", dims_str(source));
      FASTT_CHECK(dst[i] != dst[j], RuntimeError,
                  "movedim: repeated dim in `destination` ({})",
                  dims_str(destination));
    }
  std::vector<int64_t> perm(nd, -1);
  std::vector<bool> used(nd, false);
  for (int64_t i = 0; i < n; ++i) {
    perm[dst[i]] = src[i];
    used[src[i]] = true;
  }
  int64_t next = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (perm[d] >= 0) continue;
    while (used[next]) ++next;
    perm[d] = next++;
  }
  if (nd == 0) return t.alias();
  return t.permute(perm);
}

Tensor ravel(const Tensor& t) {
  check_def(t, "ravel");
  return t.reshape({-1});
}

Tensor fliplr(const Tensor& t) {
  check_def(t, "fliplr");
  FASTT_CHECK(t.dim() >= 2, RuntimeError, "Input must be >= 2-d.");
  return flip(t, {1});
}
Tensor flipud(const Tensor& t) {
  check_def(t, "flipud");
  FASTT_CHECK(t.dim() >= 1, RuntimeError, "Input must be >= 1-d.");
  return flip(t, {0});
}

Tensor rot90(const Tensor& t, int64_t k, IntList dims) {
  check_def(t, "rot90");
  FASTT_CHECK(dims.size() == 2, RuntimeError,
              "expected total rotation dims == 2, but got dims = {}",
              dims.size());
  FASTT_CHECK(t.dim() >= 2, RuntimeError,
              "expected total dims >= 2, but got total dims = {}", t.dim());
  const int64_t d0 = wrap_dim(dims[0], t.dim(), "rot90");
  const int64_t d1 = wrap_dim(dims[1], t.dim(), "rot90");
  FASTT_CHECK(d0 != d1, RuntimeError,
              "expected rotation dims to be different, but got dim0 = {} and "
              "dim1 = {}",
              d0, d1);
  k = ((k % 4) + 4) % 4;
  if (k == 1) return flip(t, {d1}).transpose(d0, d1);
  if (k == 2) return flip(t, {d0, d1});
  if (k == 3) return flip(t, {d0}).transpose(d0, d1);
  return t.clone();
}

// ---- in-place geometry ----
namespace {
void take_geometry(TensorImpl* s, const TensorImpl* w) {
  if (s->storage != w->storage) {
    w->storage->incref();
    if (s->storage) s->storage->decref();
    s->storage = w->storage;
  }
  s->data = w->data;
  s->offset = w->offset;
  s->ndim = w->ndim;
  for (int d = 0; d < w->ndim; ++d) {
    s->sizes[d] = w->sizes[d];
    s->strides[d] = w->strides[d];
  }
  s->refresh();
}
}  // namespace

Tensor& set_(Tensor& self, const Tensor& src, const char* op) {
  require_defined(self, op);
  require_defined(src, op);
  FASTT_CHECK(self.dtype() == src.dtype(), RuntimeError,
              "{}: Expected source tensor to have dtype {}, but got {}", op,
              dtype_name(self.dtype()), dtype_name(src.dtype()));
  FASTT_CHECK(self.device() == src.device(), RuntimeError,
              "{}: Expected source tensor to be on {}, but got {}", op,
              self.device().str(), src.device().str());
  FASTT_CHECK(!self.impl()->requires_grad || !autograd::grad_enabled(),
              RuntimeError,
              "{}: cannot resize or re-point a tensor that requires grad", op);
  take_geometry(self.impl(), src.impl());
  return self;
}

Tensor& become_view(Tensor& self, const Tensor& view, const char* op) {
  require_defined(self, op);
  FASTT_CHECK(view.impl()->storage == self.impl()->storage, RuntimeError,
              "{}: the view does not share self's storage", op);
  autograd::check_inplace(self, op);
  take_geometry(self.impl(), view.impl());
  const TensorImpl* w = view.impl();
  if (w->requires_grad && w->grad_fn)
    autograd::set_history(self, w->grad_fn, w->output_nr);
  return self;
}

// ---- joins ----
Tensor hstack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "hstack");
  std::vector<Tensor> ts = map_tensors(tensors, atleast_1d);
  return cat(ts, ts[0].dim() == 1 ? 0 : 1);
}
Tensor vstack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "vstack");
  return cat(map_tensors(tensors, atleast_2d), 0);
}
Tensor dstack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "dstack");
  return cat(map_tensors(tensors, atleast_3d), 2);
}
Tensor column_stack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "column_stack");
  std::vector<Tensor> ts;
  for (const Tensor& t : tensors) {
    check_def(t, "column_stack");
    ts.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  }
  return cat(ts, 1);
}

// ---- splits ----
std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections,
                                 int64_t dim) {
  check_def(t, "tensor_split");
  FASTT_CHECK(t.dim() > 0, RuntimeError,
              "tensor_split expected at least a 1-dimensional tensor, but got "
              "a tensor with 0 dims");
  FASTT_CHECK(sections > 0, RuntimeError,
              "number of sections must be larger than 0, got {}", sections);
  dim = wrap_dim(dim, t.dim(), "tensor_split");
  const int64_t n = t.size(dim);
  const int64_t base = n / sections, extra = n % sections;
  std::vector<Tensor> r;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t len = base + (i < extra ? 1 : 0);
    r.push_back(t.slice(dim, start, start + len));
    start += len;
  }
  return r;
}
std::vector<Tensor> tensor_split_indices(const Tensor& t, IntList indices,
                                         int64_t dim) {
  check_def(t, "tensor_split");
  FASTT_CHECK(t.dim() > 0, RuntimeError,
              "tensor_split expected at least a 1-dimensional tensor, but got "
              "a tensor with 0 dims");
  dim = wrap_dim(dim, t.dim(), "tensor_split");
  const int64_t n = t.size(dim);
  // Python-slice bounds: negative wraps, then clamps.
  auto bound = [n](int64_t i) {
    if (i < 0) i += n;
    return std::min(std::max<int64_t>(i, 0), n);
  };
  std::vector<Tensor> r;
  int64_t start = 0;
  for (int64_t idx : indices) {
    const int64_t end = std::max(bound(idx), start);
    r.push_back(t.slice(dim, start, end));
    start = end;
  }
  r.push_back(t.slice(dim, start, n));
  return r;
}
std::vector<Tensor> tensor_split(const Tensor& t, const Tensor& sections,
                                 int64_t dim) {
  check_def(t, "tensor_split");
  FASTT_CHECK(sections.defined() && sections.dtype() == DType::Int64,
              RuntimeError,
              "tensor_split expected tensor_indices_or_sections to have dtype "
              "of long, but got {}",
              sections.defined() ? dtype_name(sections.dtype()) : "None");
  FASTT_CHECK(sections.dim() <= 1, RuntimeError,
              "tensor_split expected tensor_indices_or_sections to be a "
              "zero-dimensional or one-dimensional tensor, but got a tensor "
              "with {} dims",
              sections.dim());
  const Tensor s = sections.to(kCPU).contiguous();
  if (s.dim() == 0) return tensor_split(t, s.item<int64_t>(), dim);
  capture::host_read("tensor_split with a tensor of indices");
  std::vector<int64_t> idx(s.data_ptr<int64_t>(),
                           s.data_ptr<int64_t>() + s.numel());
  return tensor_split_indices(t, idx, dim);
}

namespace {
int64_t hvd_dim(char which, const Tensor& t) {
  const char* name = which == 'h' ? "hsplit" : which == 'v' ? "vsplit"
                                                            : "dsplit";
  check_def(t, name);
  const int64_t need = which == 'h' ? 1 : which == 'v' ? 2 : 3;
  FASTT_CHECK(t.dim() >= need, RuntimeError,
              "torch.{} requires a tensor with at least {} dimension{}, but "
              "got a tensor with {} dimensions!",
              name, need, need == 1 ? "" : "s", t.dim());
  if (which == 'h') return t.dim() == 1 ? 0 : 1;
  return which == 'v' ? 0 : 2;
}
}  // namespace
std::vector<Tensor> hvdsplit(char which, const Tensor& t, int64_t sections) {
  const int64_t dim = hvd_dim(which, t);
  const char* name = which == 'h' ? "hsplit" : which == 'v' ? "vsplit"
                                                            : "dsplit";
  FASTT_CHECK(sections != 0 && t.size(dim) % sections == 0, RuntimeError,
              "torch.{} attempted to split along dimension {}, but the size "
              "of the dimension {} is not divisible by the split_size {}!",
              name, dim, t.size(dim), sections);
  return tensor_split(t, sections, dim);
}
std::vector<Tensor> hvdsplit_indices(char which, const Tensor& t,
                                     IntList indices) {
  return tensor_split_indices(t, indices, hvd_dim(which, t));
}

// ---- diagonals ----
Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1,
                  int64_t dim2) {
  check_def(t, "diag_embed");
  const int64_t nd = t.dim() + 1;
  dim1 = wrap_dim(dim1, nd, "diag_embed");
  dim2 = wrap_dim(dim2, nd, "diag_embed");
  FASTT_CHECK(dim1 != dim2, RuntimeError,
              "diagonal dimensions cannot be identical {}, {}", dim1, dim2);
  const Tensor x = t.dim() == 0 ? t.view({1}) : t;
  const int64_t n = x.size(-1);
  const int64_t k = offset < 0 ? -offset : offset;
  const int64_t m = n + k;
  Tensor p = x;
  if (k > 0) {
    std::vector<int64_t> zs = x.sizes().vec();
    zs.back() = k;
    p = cat({x, zeros(zs, x.dtype(), x.device())}, -1);
  }
  // E[i, j]: j - i == offset.
  const Tensor ar = arange(Scalar(m), DType::Int64, x.device());
  const Tensor e = eq(sub(ar.unsqueeze(0), ar.unsqueeze(1)), Scalar(offset));
  Tensor out =
      where(e, offset >= 0 ? p.unsqueeze(-1) : p.unsqueeze(-2),
            zero_like_scalar(x));
  if (out.dim() != nd) out = out.expand({m, m});
  const int64_t last = out.dim();
  return movedim(out, {last - 2, last - 1}, {dim1, dim2});
}

Tensor diag(const Tensor& t, int64_t diagonal) {
  check_def(t, "diag");
  FASTT_CHECK(t.dim() == 1 || t.dim() == 2, RuntimeError,
              "diag(): Supports 1D or 2D tensors. Got {}D", t.dim());
  if (t.dim() == 1) return diag_embed(t, diagonal, 0, 1);
  return t.diagonal(diagonal, 0, 1).clone();
}

Tensor diagflat(const Tensor& t, int64_t offset) {
  check_def(t, "diagflat");
  return diag_embed(t.reshape({-1}), offset, 0, 1);
}

Tensor trace(const Tensor& t) {
  check_def(t, "trace");
  FASTT_CHECK(t.dim() == 2, RuntimeError,
              "trace: expected a matrix, but got tensor with dim {}", t.dim());
  return sum(t.diagonal(0, 0, 1));
}

// ---- repeats and gathers ----
Tensor tile(const Tensor& t, IntList reps) {
  check_def(t, "tile");
  std::vector<int64_t> r = reps.vec();
  while (int64_t(r.size()) < t.dim()) r.insert(r.begin(), 1);
  return repeat(t, r);
}

Tensor take(const Tensor& t, const Tensor& index) {
  check_def(t, "take");
  FASTT_CHECK(index.defined() && index.dtype() == DType::Int64, RuntimeError,
              "take(): Expected a long tensor for index, but got {}",
              index.defined() ? dtype_name(index.dtype()) : "None");
  const Tensor flat = t.reshape({-1});
  FASTT_CHECK(flat.numel() > 0 || index.numel() == 0, IndexError,
              "take(): tried to take from an empty tensor");
  return index_select(flat, 0, index.reshape({-1})).view(index.sizes());
}

Tensor take_along_dim(const Tensor& t, const Tensor& indices,
                      std::optional<int64_t> dim) {
  check_def(t, "take_along_dim");
  FASTT_CHECK(indices.defined() && (indices.dtype() == DType::Int64 ||
                                    indices.dtype() == DType::Int32),
              RuntimeError,
              "torch.take_along_dim(): dtype of indices should be int64 but "
              "got {} instead",
              indices.defined() ? dtype_name(indices.dtype()) : "None");
  if (!dim) return gather(t.reshape({-1}), 0, indices.reshape({-1}));
  FASTT_CHECK(t.dim() == indices.dim(), RuntimeError,
              "torch.take_along_dim(): input and indices should have the same "
              "number of dimensions, but got {} dimensions for input, and {} "
              "dimensions for indices",
              t.dim(), indices.dim());
  const int64_t d = wrap_dim(*dim, t.dim(), "take_along_dim");
  std::vector<int64_t> a = t.sizes().vec(), b = indices.sizes().vec();
  a[d] = 1;
  b[d] = 1;
  std::vector<int64_t> s = broadcast_shapes({a, b});
  std::vector<int64_t> st = s, si = s;
  st[d] = t.size(d);
  si[d] = indices.size(d);
  return gather(t.expand(st), d, indices.expand(si));
}

// repeat_interleave's input: flattened without a dim, else 0-d made 1-d;
// *d is the (wrapped) dim the repeats run along.
static Tensor interleave_input(const Tensor& t, std::optional<int64_t> dim,
                               int64_t* d) {
  if (!dim) return t.reshape({-1});
  *d = wrap_dim(*dim, std::max<int64_t>(t.dim(), 1), "repeat_interleave");
  return t.dim() == 0 ? t.reshape({1}) : t;
}

Tensor repeat_interleave(const Tensor& t, int64_t repeats,
                         std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  check_def(t, "repeat_interleave");
  FASTT_CHECK(repeats >= 0, RuntimeError,
              "repeats can not be negative");
  int64_t d = 0;
  Tensor x = interleave_input(t, dim, &d);
  FASTT_CHECK(!output_size || *output_size == x.size(d) * repeats,
              RuntimeError,
              "allocated size does not match required size");
  std::vector<int64_t> es = x.unsqueeze(d + 1).sizes().vec();
  es[d + 1] = repeats;
  return x.unsqueeze(d + 1).expand(es).flatten(d, d + 1);
}

Tensor repeat_interleave(const Tensor& repeats,
                         std::optional<int64_t> output_size) {
  FASTT_CHECK(repeats.defined() && (repeats.dtype() == DType::Int64 ||
                                    repeats.dtype() == DType::Int32),
              RuntimeError,
              "repeat_interleave only accept 1D vector as repeat");
  FASTT_CHECK(repeats.dim() <= 1, RuntimeError,
              "repeat_interleave only accept 1D vector as repeat");
  const Tensor r = repeats.to(kCPU).to(DType::Int64).contiguous();
  capture::host_read("repeat_interleave with a tensor of repeats");
  const int64_t* p = r.data_ptr<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    FASTT_CHECK(p[i] >= 0, RuntimeError, "repeats can not be negative");
    total += p[i];
  }
  FASTT_CHECK(!output_size || *output_size == total, RuntimeError,
              "allocated size does not match required size");
  Tensor out = Tensor::empty({total}, DType::Int64);
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0, k = 0; i < r.numel(); ++i)
    for (int64_t j = 0; j < p[i]; ++j) o[k++] = i;
  return out.to(repeats.device());
}

Tensor repeat_interleave(const Tensor& t, const Tensor& repeats,
                         std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  check_def(t, "repeat_interleave");
  int64_t d = 0;
  Tensor x = interleave_input(t, dim, &d);
  Tensor r = repeats;
  if (r.defined() && r.dim() == 0) r = r.reshape({1});
  if (r.defined() && r.numel() == 1 && x.size(d) != 1)
    r = r.expand({x.size(d)});
  FASTT_CHECK(r.defined() && r.dim() == 1 && r.size(0) == x.size(d),
              RuntimeError, "repeats must have the same size as input along dim");
  return index_select(x, d, repeat_interleave(r, output_size));
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors,
                             const char* indexing) {
  FASTT_CHECK(!tensors.empty(), RuntimeError,
              "torch.meshgrid: Expected at least one tensor");
  const std::string ix = indexing ? indexing : "ij";
  FASTT_CHECK(ix == "ij" || ix == "xy", RuntimeError,
              "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
              "received: {}",
              ix);
  for (const Tensor& t : tensors) {
    check_def(t, "meshgrid");
    FASTT_CHECK(t.dim() <= 1, RuntimeError,
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                "but got: {}",
                t.str());
  }
  for (size_t i = 1; i < tensors.size(); ++i) {
    FASTT_CHECK(tensors[i].dtype() == tensors[0].dtype(), RuntimeError,
                "torch.meshgrid: Expected all tensors in the tensor list to "
                "have the same dtype");
    FASTT_CHECK(tensors[i].device() == tensors[0].device(), RuntimeError,
                "torch.meshgrid: Expected all tensors in the tensor list to "
                "have the same device");
  }
  std::vector<Tensor> ts = tensors;
  const bool swap = ix == "xy" && ts.size() >= 2;
  if (swap) std::swap(ts[0], ts[1]);
  const size_t n = ts.size();
  std::vector<int64_t> shape(n);
  for (size_t i = 0; i < n; ++i) shape[i] = ts[i].numel();
  std::vector<Tensor> r;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> v(n, 1);
    v[i] = -1;
    r.push_back(ts[i].reshape(v).expand(shape));
  }
  if (swap) std::swap(r[0], r[1]);
  return r;
}

// ---- products ----
Tensor kron(const Tensor& a, const Tensor& b) {
  check_def(a, "kron");
  check_def(b, "kron");
  const int64_t nd = std::max(a.dim(), b.dim());
  std::vector<int64_t> sa(nd, 1), sb(nd, 1), va, vb, out(nd);
  for (int64_t i = 0; i < a.dim(); ++i) sa[nd - a.dim() + i] = a.size(i);
  for (int64_t i = 0; i < b.dim(); ++i) sb[nd - b.dim() + i] = b.size(i);
  for (int64_t i = 0; i < nd; ++i) {
    va.push_back(sa[i]);
    va.push_back(1);
    vb.push_back(1);
    vb.push_back(sb[i]);
    out[i] = sa[i] * sb[i];
  }
  return mul(a.reshape(va), b.reshape(vb)).reshape(out);
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntList dims_a,
                 IntList dims_b) {
  check_def(a, "tensordot");
  check_def(b, "tensordot");
  FASTT_CHECK(dims_a.size() == dims_b.size(), RuntimeError,
              "both dimension lists should have same length");
  const size_t n = dims_a.size();
  std::vector<int64_t> ca(n), cb(n);
  std::vector<bool> ua(a.dim(), false), ub(b.dim(), false);
  int64_t k = 1;
  for (size_t i = 0; i < n; ++i) {
    ca[i] = wrap_dim(dims_a[i], a.dim(), "tensordot");
    cb[i] = wrap_dim(dims_b[i], b.dim(), "tensordot");
    FASTT_CHECK(a.size(ca[i]) == b.size(cb[i]) || a.size(ca[i]) == 1 ||
                    b.size(cb[i]) == 1,
                RuntimeError,
                "contracted dimensions need to match, but first has size {} "
                "in dim {} and second has size {} in dim {}",
                a.size(ca[i]), ca[i], b.size(cb[i]), cb[i]);
    FASTT_CHECK(!ua[ca[i]] && !ub[cb[i]], RuntimeError,
                "tensordot: a dim appears twice in the contracted dims");
    ua[ca[i]] = ub[cb[i]] = true;
    k *= a.size(ca[i]);
  }
  // A contracted dim of size 1 on one side broadcasts: the other side is
  // summed over it first.
  Tensor x = a, y = b;
  k = 1;
  for (size_t i = 0; i < n; ++i) {
    if (x.size(ca[i]) == 1 && y.size(cb[i]) != 1)
      y = sum(y, {cb[i]}, true);
    else if (y.size(cb[i]) == 1 && x.size(ca[i]) != 1)
      x = sum(x, {ca[i]}, true);
    k *= x.size(ca[i]);
  }
  std::vector<int64_t> pa, pb, out;
  int64_t m = 1, nn = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!ua[d]) {
      pa.push_back(d);
      out.push_back(a.size(d));
      m *= a.size(d);
    }
  pa.insert(pa.end(), ca.begin(), ca.end());
  pb = cb;
  for (int64_t d = 0; d < b.dim(); ++d)
    if (!ub[d]) {
      pb.push_back(d);
      out.push_back(b.size(d));
      nn *= b.size(d);
    }
  const Tensor am = (x.dim() ? x.permute(pa) : x).reshape({m, k});
  const Tensor bm = (y.dim() ? y.permute(pb) : y).reshape({k, nn});
  return mm(am, bm).reshape(out);
}
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  check_def(a, "tensordot");
  check_def(b, "tensordot");
  FASTT_CHECK(dims >= 0, RuntimeError,
              "tensordot expects dims >= 0, but got dims={}", dims);
  FASTT_CHECK(dims <= a.dim() && dims <= b.dim(), RuntimeError,
              "tensordot expects dims < ndim_a or ndim_b, but got dims={}",
              dims);
  std::vector<int64_t> da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a.dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

Tensor inner(const Tensor& a, const Tensor& b) {
  check_def(a, "inner");
  check_def(b, "inner");
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b);
  FASTT_CHECK(a.size(-1) == b.size(-1), RuntimeError,
              "inner() the last dimension must match on both input tensors "
              "but got shapes {} and {}",
              dims_str(a.sizes()), dims_str(b.sizes()));
  return tensordot(a, b, IntList{-1}, IntList{-1});
}

Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim) {
  check_def(a, "linalg_cross");
  check_def(b, "linalg_cross");
  FASTT_CHECK(a.dim() == b.dim(), RuntimeError,
              "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = wrap_dim(dim, a.dim(), "linalg.cross");
  FASTT_CHECK(a.size(d) == 3 && b.size(d) == 3, RuntimeError,
              "linalg.cross: inputs dimension {} must have length 3. Got {} "
              "and {}",
              d, a.size(d), b.size(d));
  const std::vector<Tensor> ab = broadcast_tensors({a, b});
  const Tensor& x = ab[0];
  const Tensor& y = ab[1];
  // c_i = x_{i+1} y_{i+2} - x_{i+2} y_{i+1} (indices mod 3).
  return sub(mul(roll(x, {-1}, {d}), roll(y, {-2}, {d})),
             mul(roll(x, {-2}, {d}), roll(y, {-1}, {d})));
}
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  check_def(a, "cross");
  check_def(b, "cross");
  FASTT_CHECK(a.dim() == b.dim(), RuntimeError,
              "inconsistent tensors dimensions input: {} other: {}", a.dim(),
              b.dim());
  if (dim) return linalg_cross(a, b, *dim);
  const std::vector<Tensor> ab = broadcast_tensors({a, b});
  for (int64_t d = 0; d < ab[0].dim(); ++d)
    if (ab[0].size(d) == 3) return linalg_cross(a, b, d);
  FASTT_CHECK(false, RuntimeError, "no dimension of size 3 in input");
  return Tensor();
}

Tensor count_nonzero(const Tensor& t, IntList dims, bool all) {
  check_def(t, "count_nonzero");
  const Tensor nz = ne(t, Scalar(int64_t(0)));
  if (all) return sum(nz);
  return sum(nz, dims);
}

Tensor argwhere(const Tensor& t) {
  check_def(t, "argwhere");
  return nonzero(t);
}

namespace {
Tensor tri_indices(bool lower, int64_t row, int64_t col, int64_t offset,
                   std::optional<DType> dtype, Device device) {
  const char* op = lower ? "tril_indices" : "triu_indices";
  FASTT_CHECK(row >= 0, RuntimeError, "row must be non-negative, got{}", row);
  FASTT_CHECK(col >= 0, RuntimeError, "col must be non-negative, got{}", col);
  std::vector<int64_t> rs, cs;
  for (int64_t i = 0; i < row; ++i)
    for (int64_t j = 0; j < col; ++j)
      if (lower ? j - i <= offset : j - i >= offset) {
        rs.push_back(i);
        cs.push_back(j);
      }
  capture::host_read(op);  // written on the host
  const int64_t n = int64_t(rs.size());
  Tensor out = Tensor::empty({2, n}, DType::Int64);
  if (n) {
    std::memcpy(out.data_ptr<int64_t>(), rs.data(), n * sizeof(int64_t));
    std::memcpy(out.data_ptr<int64_t>() + n, cs.data(), n * sizeof(int64_t));
  }
  Tensor r = out.to(dtype.value_or(DType::Int64));
  return device == kCPU ? r : r.to(device);
}
}  // namespace
Tensor tril_indices(int64_t row, int64_t col, int64_t offset,
                    std::optional<DType> dtype, Device device) {
  return tri_indices(true, row, col, offset, dtype, device);
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset,
                    std::optional<DType> dtype, Device device) {
  return tri_indices(false, row, col, offset, dtype, device);
}

}  // namespace fastt

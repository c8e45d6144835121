// Lowers a TensorIndex list (t[...]) with torch's rules, as libtorch's
// applySlicing: basic items become views of self in one pass, advanced
// items (tensors, bools) are gathered into an aten::index list of one
// entry per dim of that view (undefined = the whole dim).
#include "indexing.h"

#include <cstring>

#include "index.h"

namespace fastt {
namespace indexing {

TensorIndex::TensorIndex(const char* ellipsis)
    : type_(TensorIndexType::Ellipsis) {
  FASTT_CHECK(ellipsis && std::strcmp(ellipsis, "...") == 0, ValueError,
              "index: expected \"...\" to represent an ellipsis index, but "
              "got \"{}\"",
              ellipsis ? ellipsis : "nullptr");
}

}  // namespace indexing

namespace {

using indexing::TensorIndexType;

bool is_mask(const Tensor& t) {
  return t.dtype() == DType::Bool || t.dtype() == DType::UInt8;
}

// A 0-d integer tensor selects like an int (torch: a 0-d mask stays a mask).
bool selects_like_int(const Tensor& t) {
  return t.dim() == 0 && !is_mask(t);
}

// What a list of items asks of self, checked before any view is made.
struct IndexShape {
  int64_t consumed = 0;  // dims of self the items consume
  bool advanced = false;
};

IndexShape check_items(const Tensor& self, TensorIndexList items) {
  IndexShape s;
  int ellipses = 0;
  for (const TensorIndex& it : items) {
    switch (it.type()) {
      case TensorIndexType::None: break;
      case TensorIndexType::Ellipsis: ++ellipses; break;
      case TensorIndexType::Boolean: s.advanced = true; break;
      case TensorIndexType::Integer:
      case TensorIndexType::Slice: ++s.consumed; break;
      case TensorIndexType::Tensor: {
        const Tensor& t = it.tensor();
        require_defined(t, "index");
        FASTT_CHECK(is_integral(t.dtype(), true), IndexError,
                    "tensors used as indices must be long, int, byte or bool "
                    "tensors");
        s.consumed += is_mask(t) ? t.dim() : 1;
        s.advanced = s.advanced || !selects_like_int(t);
        break;
      }
    }
  }
  FASTT_CHECK(ellipses <= 1, IndexError,
              "an index can only have a single ellipsis ('...')");
  FASTT_CHECK(s.consumed <= self.dim(), IndexError,
              "too many indices for tensor of dimension {}", self.dim());
  return s;
}

Tensor apply_slice(const Tensor& t, int64_t dim, const indexing::Slice& s) {
  FASTT_CHECK(s.step() > 0, ValueError, "step must be greater than zero");
  return t.slice(dim, s.start(), s.stop(), s.step());
}

// As torch: a bool is an advanced index ([0] or []) over a new size-1 dim,
// so several bools broadcast into one dim.
Tensor bool_index(bool value, Device device) {
  Tensor idx = Tensor::empty({value ? 1 : 0}, DType::Int64, device);
  idx.zero_();
  return idx;
}

struct Lowered {
  Tensor view;                  // self after the basic items
  std::vector<Tensor> indices;  // aten::index list, when advanced
  bool advanced = false;
};

Lowered lower(const Tensor& self, TensorIndexList items) {
  require_defined(self, "index");
  const IndexShape shape = check_items(self, items);
  Lowered r;
  r.view = self;
  r.advanced = shape.advanced;
  // Appends `n` whole-dim entries, needed only before an advanced item.
  auto skip = [&](int64_t n) {
    if (r.advanced) r.indices.resize(r.indices.size() + size_t(n));
  };
  int64_t d = 0;  // the dim of r.view the next item applies to
  for (const TensorIndex& it : items) {
    switch (it.type()) {
      case TensorIndexType::Integer:
        r.view = r.view.select(d, it.integer());
        break;
      case TensorIndexType::Slice:
        r.view = apply_slice(r.view, d++, it.slice());
        skip(1);
        break;
      case TensorIndexType::None:
        r.view = r.view.unsqueeze(d++);
        skip(1);
        break;
      case TensorIndexType::Ellipsis:
        d += self.dim() - shape.consumed;
        skip(self.dim() - shape.consumed);
        break;
      case TensorIndexType::Boolean:
        r.view = r.view.unsqueeze(d++);
        r.indices.push_back(bool_index(it.boolean(), self.device()));
        break;
      case TensorIndexType::Tensor: {
        const Tensor& t = it.tensor();
        if (selects_like_int(t)) {
          r.view = r.view.select(d, t.item().to_int());
          break;
        }
        r.indices.push_back(t);
        d += is_mask(t) ? t.dim() : 1;
        break;
      }
    }
  }
  while (!r.indices.empty() && !r.indices.back().defined())
    r.indices.pop_back();
  return r;
}

// torch's slicePrefix1sDims: a value's leading size-1 dims are dropped
// before it broadcasts to the indexed shape (x[0] = y[None] works).
Tensor drop_leading_ones(Tensor v) {
  while (v.dim() > 0 && v.sizes()[0] == 1) v = v.select(0, 0);
  return v;
}

}  // namespace

Tensor indexing::get_item(const Tensor& self, TensorIndexList items) {
  Lowered r = lower(self, items);
  if (r.advanced) return fastt::index(r.view, r.indices);
  // As torch, x[...] and x[()] are new tensors, not x itself.
  if (r.view.is_same(self)) return self.alias();
  return std::move(r.view);
}

Tensor& Tensor::index_put_(TensorIndexList items, const Tensor& value) {
  require_defined(value, "index_put_");
  Lowered r = lower(*this, items);
  Tensor v = drop_leading_ones(value);
  if (r.advanced)
    fastt::index_put_(r.view, r.indices, v);
  else
    r.view.copy_(v);
  return *this;
}

Tensor& Tensor::index_put_(TensorIndexList items, const Scalar& value) {
  Lowered r = lower(*this, items);
  if (!r.advanced) {
    r.view.fill_(value);
    return *this;
  }
  Tensor v = Tensor::empty({}, dtype(), device());
  v.fill_(value);
  fastt::index_put_(r.view, r.indices, v);
  return *this;
}

}  // namespace fastt

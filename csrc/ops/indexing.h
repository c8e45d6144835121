// t[...] from C++, modelled on libtorch's at::indexing: a list of
// TensorIndex items lowered with torch's rules to views (ints select,
// slices narrow, None inserts a dim, one Ellipsis fills the rest) plus
// fastt::index / index_put_ for the advanced items (integer or mask
// tensors, bools). The Python binding converts t[...] to these items.
//
//   using namespace fastt::indexing;
//   Tensor y = x.index({Slice(1, None), None, 0});   // x[1:, None, 0]
//   x.index_put_({Ellipsis, mask}, 0.0);             // x[..., mask] = 0
#pragma once
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "../tensor.h"

namespace fastt {
namespace indexing {

constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {
  constexpr EllipsisIndexType() = default;
};
constexpr EllipsisIndexType Ellipsis;

// start:stop:step with Python's defaults for the missing ends; ends clamp
// like Python's, the step must be positive (checked when applied).
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt,
        std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start.value_or(0)),
        stop_(stop.value_or(std::numeric_limits<int64_t>::max())),
        step_(step.value_or(1)) {}
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};

enum class TensorIndexType : uint8_t {
  None,
  Ellipsis,
  Integer,
  Boolean,
  Slice,
  Tensor
};

// One item of an index. Integers and bools are templates so that a literal
// of either kind picks its own constructor (0 is an int, true a bool).
class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}
  TensorIndex(EllipsisIndexType) : type_(TensorIndexType::Ellipsis) {}
  // "..." as in libtorch; any other string is a ValueError.
  TensorIndex(const char* ellipsis);
  template <class T, std::enable_if_t<std::is_integral_v<T> &&
                                          !std::is_same_v<T, bool>,
                                      int> = 0>
  TensorIndex(T integer)
      : type_(TensorIndexType::Integer), integer_(int64_t(integer)) {}
  template <class T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T boolean)
      : type_(TensorIndexType::Boolean), integer_(boolean) {}
  TensorIndex(Slice slice) : type_(TensorIndexType::Slice), slice_(slice) {}
  TensorIndex(fastt::Tensor tensor)
      : type_(TensorIndexType::Tensor), tensor_(std::move(tensor)) {}

  TensorIndexType type() const { return type_; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return integer_ != 0; }
  const Slice& slice() const { return slice_; }
  const fastt::Tensor& tensor() const { return tensor_; }

 private:
  TensorIndexType type_;
  int64_t integer_ = 0;  // Integer and Boolean
  Slice slice_;
  fastt::Tensor tensor_;
};

// self[items] with torch's rules (what Tensor::index calls past its fast
// paths; libtorch's name).
Tensor get_item(const Tensor& self, TensorIndexList items);

}  // namespace indexing

using indexing::TensorIndex;
using indexing::TensorIndexList;

// x[a:b:c] and x[i], the most common indices, skip the general lowering.
// Inline: a caller that builds its one item (the binding's a[1:]) folds
// the item and these tests away.
inline Tensor Tensor::index(TensorIndexList items) const {
  if (items.size() == 1) {
    const TensorIndex& it = items[0];
    if (it.type() == indexing::TensorIndexType::Slice &&
        it.slice().step() > 0)
      return slice(0, it.slice().start(), it.slice().stop(),
                   it.slice().step());
    if (it.type() == indexing::TensorIndexType::Integer)
      return select(0, it.integer());
  }
  return indexing::get_item(*this, items);
}

}  // namespace fastt

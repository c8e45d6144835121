// Indexing, joining/splitting and sorting ops with torch's names and
// semantics: cat/stack/split, gather/scatter/index_*, advanced indexing
// (index, index_put_), masks, tril/triu, flip/roll/repeat, sort/topk.
// Add an op: declare it here, validate it in index.cpp, kernel in
// kernels/cpu/index.cpp (or sort.cpp).
#pragma once
#include <tuple>
#include <vector>

#include "../tensor.h"

namespace fastt {

// ---- joining and splitting ----
// cat promotes across inputs and, like torch, skips 1-D empty inputs.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// split/chunk/unbind return views (narrow/select) of t.
std::vector<Tensor> split(const Tensor& t, int64_t split_size,
                          int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, IntList split_sizes,
                          int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, IntList split_sizes,
                                     int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);
Tensor repeat(const Tensor& t, IntList repeats);

// ---- indexing along a dim ----
// Index tensors are int64 or int32; negative values wrap like Python;
// out-of-range values raise IndexError before anything is written.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index,
               const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index,
               const Scalar& value);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index,
                 const Tensor& src);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index,
                 const Scalar& value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index,
                   const Tensor& src);
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index,
                     const Tensor& src);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index,
                 const Tensor& source, const Scalar& alpha = 1);
Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index,
                   const Tensor& source, const Scalar& alpha = 1);
// weight [N, D] looked up at int indices of any shape -> [..., D].
// padding_idx only matters for the gradient.
Tensor embedding(const Tensor& weight, const Tensor& indices,
                 int64_t padding_idx = -1);
// int64 indices -> int64 [..., num_classes]; -1 infers max + 1.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// ---- advanced indexing (what Python's t[...] lowers to) ----
// torch's aten::index: one optional index per leading dim (undefined =
// full slice), int64/int32 or bool/uint8 masks, broadcast together. The
// indexed dims are replaced by the broadcast shape in place when the
// indices are adjacent, else it moves to the front.
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices,
                   const Tensor& values, bool accumulate = false);
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices,
                 const Tensor& values, bool accumulate = false);

// ---- masks ----
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor& masked_scatter_(Tensor& self, const Tensor& mask,
                        const Tensor& source);
Tensor masked_scatter(const Tensor& self, const Tensor& mask,
                      const Tensor& source);
// int64 [n, ndim]: coordinates of the nonzero elements, row-major order.
Tensor nonzero(const Tensor& t);

// ---- triangles, flips, rolls ----
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
Tensor& tril_(Tensor& t, int64_t diagonal = 0);
Tensor& triu_(Tensor& t, int64_t diagonal = 0);
Tensor flip(const Tensor& t, IntList dims);
// No dims: rolls the flattened tensor and restores the shape.
Tensor roll(const Tensor& t, IntList shifts, IntList dims = {});

// ---- sorting ----
// (values, int64 indices). sort is always stable; NaN sorts as largest.
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1,
                                bool descending = false, bool stable = false);
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false,
               bool stable = false);
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true);
// The index along dim (keepdim-shaped int64; CPU) of one position of each
// slice's stable ascending order, in linear time: which = 0, position k
// (kthvalue's k - 1); 1, the lower median, or the first NaN of a slice
// that has one (median); 2, the lower median of the non-NaN values
// (nanmedian). Indices only: nothing for autograd.
Tensor select_kth(const Tensor& t, int64_t dim, int64_t which, int64_t k = 0);
// The insertion points (int64, or int32) of values in sorted's last-dim
// rows (one row for all values, or one per leading index, which values
// shares); one dtype, CPU; torch.searchsorted's checks and promotion stay
// in python/fastt/_composite.py.
Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right,
                    bool out_int32);

// ---- resampling along one dim (interpolate's separable passes) ----
// Output position j of dim is sum_k w[j, k] * self[..., idx[j, k], ...]:
// idx int64 [o, K] (K taps) in [0, self.size(dim)), w [o, K] of self's
// dtype (float32/float64). adjoint: the transpose (self's dim has o
// positions, the result `size`; each tap's w[j, k] * self[..., j, ...]
// added at idx[j, k]), which is the forward's gradient. CPU.
Tensor resample(const Tensor& self, int64_t dim, const Tensor& idx,
                const Tensor& w, bool adjoint = false, int64_t size = -1);
// interpolate's taps along one dim of n inputs and o outputs (torch's
// source index and weights: linear K = 2, cubic K = 4 with A = -0.75;
// scale > 0 is the user's scale factor, else n / o), computed in float32
// or float64 (`dtype`): (idx [o, K] int64, w [o, K]) on the CPU.
std::tuple<Tensor, Tensor> interp_taps(int64_t n, int64_t o, double scale,
                                       bool align_corners, bool cubic,
                                       DType dtype);

}  // namespace fastt

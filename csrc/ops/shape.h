// Shape composites with torch's names and semantics: atleast_*d,
// broadcast_*, the *stack joins, the *split family, movedim, ravel, flips,
// rot90, the diag family, tile, take / take_along_dim, repeat_interleave,
// meshgrid, products over dims (kron, inner, tensordot, trace, cross),
// count_nonzero, argwhere, tril/triu_indices, the *_copy view copies and
// the *_scatter ops. Each is built from differentiable core ops (views,
// cat, gather, where, mm, ...), so autograd needs no formula of its own;
// the views share storage with their input as torch's do.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "../tensor.h"

namespace fastt {

// ---- views that add or rearrange dims ----
Tensor atleast_1d(const Tensor& t);
Tensor atleast_2d(const Tensor& t);
Tensor atleast_3d(const Tensor& t);
std::vector<int64_t> broadcast_shapes(const std::vector<std::vector<int64_t>>& shapes);
Tensor broadcast_to(const Tensor& t, IntList shape);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
Tensor movedim(const Tensor& t, IntList source, IntList destination);
Tensor ravel(const Tensor& t);
Tensor fliplr(const Tensor& t);
Tensor flipud(const Tensor& t);
Tensor rot90(const Tensor& t, int64_t k = 1, IntList dims = {0, 1});

// ---- joins ----
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
Tensor column_stack(const std::vector<Tensor>& tensors);

// ---- splits (views of t) ----
std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections,
                                 int64_t dim = 0);
std::vector<Tensor> tensor_split_indices(const Tensor& t, IntList indices,
                                         int64_t dim = 0);
// A 0-dim int64 tensor is a section count, a 1-D one the indices.
std::vector<Tensor> tensor_split(const Tensor& t, const Tensor& sections,
                                 int64_t dim = 0);
// which: 'h', 'v' or 'd'; sections (divisible) or indices.
std::vector<Tensor> hvdsplit(char which, const Tensor& t, int64_t sections);
std::vector<Tensor> hvdsplit_indices(char which, const Tensor& t,
                                     IntList indices);

// ---- diagonals ----
Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2,
                  int64_t dim2 = -1);
Tensor diag(const Tensor& t, int64_t diagonal = 0);
Tensor diagflat(const Tensor& t, int64_t offset = 0);
Tensor trace(const Tensor& t);

// ---- repeats and gathers ----
Tensor tile(const Tensor& t, IntList reps);
Tensor take(const Tensor& t, const Tensor& index);
Tensor take_along_dim(const Tensor& t, const Tensor& indices,
                      std::optional<int64_t> dim = std::nullopt);
Tensor repeat_interleave(const Tensor& t, int64_t repeats,
                         std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& t, const Tensor& repeats,
                         std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
// torch.repeat_interleave(repeats): arange(n) repeated repeats[i] times.
Tensor repeat_interleave(const Tensor& repeats,
                         std::optional<int64_t> output_size = std::nullopt);
// indexing: "ij" or "xy".
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors,
                             const char* indexing = "ij");

// ---- products and reductions over dims ----
Tensor kron(const Tensor& a, const Tensor& b);
Tensor tensordot(const Tensor& a, const Tensor& b, IntList dims_a,
                 IntList dims_b);
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims);
Tensor inner(const Tensor& a, const Tensor& b);
// dim nullopt: torch.cross's first dim of size 3.
Tensor cross(const Tensor& a, const Tensor& b,
             std::optional<int64_t> dim = std::nullopt);
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
Tensor count_nonzero(const Tensor& t, IntList dims = {}, bool all = true);
Tensor argwhere(const Tensor& t);
// ---- in-place geometry ----
// self takes src's storage, offset, sizes and strides (torch's
// Tensor.set_(source)); refused for tensors that take part in autograd.
Tensor& set_(Tensor& self, const Tensor& src, const char* op = "set_");
// An in-place view op (squeeze_, t_, transpose_, as_strided_, ...): self
// takes the geometry of `view`, a view of self that the out-of-place op
// computed, and, under autograd, its history (as torch's in-place views).
Tensor& become_view(Tensor& self, const Tensor& view, const char* op);

Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0,
                    std::optional<DType> dtype = std::nullopt,
                    Device device = kCPU);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0,
                    std::optional<DType> dtype = std::nullopt,
                    Device device = kCPU);

}  // namespace fastt

// The recording side of the indexing/shape ops (csrc/ops/index.h). An entry
// point calls its counterpart here only when autograd should record: it
// runs the op with grad mode off and records one node for the formulas in
// formulas_index.cpp. In-place forms go through autograd::inplace().
#pragma once
#include <tuple>
#include <vector>

#include "csrc/autograd.h"
#include "csrc/tensor.h"

namespace fastt {
namespace autograd {

// should_record() for a tensor list (cat, stack).
inline bool should_record_list(const std::vector<Tensor>& ts) {
  if (FASTT_LIKELY(!t_grad_enabled)) return false;
  for (const Tensor& t : ts)
    if (needs_grad(t)) return true;
  return false;
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);
Tensor repeat(const Tensor& t, IntList repeats);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
// src == nullptr: the scalar form.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index,
               const Tensor* src, const Scalar& value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index,
                   const Tensor& src);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index,
                 const Tensor& source, const Scalar& alpha);
Tensor embedding(const Tensor& weight, const Tensor& indices,
                 int64_t padding_idx);
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices,
                 const Tensor& values, bool accumulate);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor resample(const Tensor& self, int64_t dim, const Tensor& idx,
                const Tensor& w, bool adjoint, int64_t size);
Tensor masked_scatter(const Tensor& self, const Tensor& mask,
                      const Tensor& source);
Tensor tril_triu(bool upper, const Tensor& t, int64_t diagonal);
Tensor flip(const Tensor& t, IntList dims);
Tensor roll(const Tensor& t, IntList shifts, IntList dims);
// Only the values get history; the indices are not differentiable.
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending,
                                bool stable);
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim,
                                bool largest, bool sorted);

}  // namespace autograd
}  // namespace fastt

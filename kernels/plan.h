// Host-side loop planning shared by the CPU and CUDA index kernels: a plan
// is any struct with nd, nops, sizes[d] and strides[k][d] (outermost dim
// first).
#pragma once
#include <cstdint>

namespace fastt {

// Drops size-1 dims and merges dims contiguous in every operand, so the
// innermost run is as long as possible and strided indexing divides less.
template <class Plan>
void plan_coalesce(Plan& p) {
  int nd = 0;
  for (int d = 0; d < p.nd; ++d) {
    if (p.sizes[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (int k = 0; k < p.nops && merge; ++k)
        merge = p.strides[k][d] == p.strides[k][nd - 1] * p.sizes[nd - 1];
      if (merge) {
        p.sizes[nd - 1] *= p.sizes[d];
        continue;
      }
    }
    p.sizes[nd] = p.sizes[d];
    for (int k = 0; k < p.nops; ++k) p.strides[k][nd] = p.strides[k][d];
    ++nd;
  }
  if (nd == 0) {
    nd = 1;
    p.sizes[0] = 1;
    for (int k = 0; k < p.nops; ++k) p.strides[k][0] = 0;
  }
  p.nd = nd;
}

}  // namespace fastt

// Reduction geometry shared by the CPU (kernels/cpu/reduce_impl.h) and
// CUDA (kernels/cuda/reduce.cuh) drivers: how an input splits into kept
// and reduced dims. Host code only.
#pragma once
#include <cstdint>

#include "csrc/tensor.h"

namespace fastt {
namespace reduce_geom {

// ------------------------------------------------------------ geometry --
// The input seen as kept dims (which index the contiguous output, row-major)
// and reduced dims, each list slowest first, size-1 dims dropped and
// adjacent dims merged where the strides allow. Strides are in elements.
struct ReduceGeom {
  int nk = 0, nr = 0;
  int64_t ksize[kMaxDims], kstride[kMaxDims];
  int64_t rsize[kMaxDims], rstride[kMaxDims];
  int64_t n_out = 1, n_red = 1;
};

inline int coalesce(int n, int64_t* size, int64_t* stride) {
  if (n == 0) return 0;
  int k = 0;
  for (int i = 1; i < n; ++i) {
    if (stride[k] == size[i] * stride[i]) {
      size[k] *= size[i];
      stride[k] = stride[i];
    } else {
      ++k;
      size[k] = size[i];
      stride[k] = stride[i];
    }
  }
  return k + 1;
}

// `dims` empty means all dims. `ordered`: keep the reduced dims in logical
// order (ops that report indices); otherwise sort them by stride so the
// innermost reduced dim is the densest.
inline void build_geom(const Tensor& in, IntList dims, bool ordered,
                       ReduceGeom& g) {
  if (dims.empty() && in.is_contiguous()) {  // full dense reduction
    g.nr = 1;
    g.rsize[0] = g.n_red = in.numel();
    g.rstride[0] = 1;
    return;
  }
  const int nd = int(in.dim());
  uint32_t mask = 0;
  if (dims.empty()) {
    mask = ~0u;
  } else {
    for (int64_t d : dims) mask |= 1u << d;
  }
  const int64_t* sizes = in.sizes().data();
  const int64_t* strides = in.strides().data();
  for (int d = 0; d < nd; ++d) {
    if ((mask >> d) & 1u) {
      g.n_red *= sizes[d];
      if (sizes[d] != 1) {
        g.rsize[g.nr] = sizes[d];
        g.rstride[g.nr++] = strides[d];
      }
    } else {
      g.n_out *= sizes[d];
      if (sizes[d] != 1) {
        g.ksize[g.nk] = sizes[d];
        g.kstride[g.nk++] = strides[d];
      }
    }
  }
  if (!ordered) {  // insertion sort, descending stride, stable
    for (int i = 1; i < g.nr; ++i) {
      int64_t s = g.rsize[i], t = g.rstride[i];
      int j = i;
      for (; j > 0 && g.rstride[j - 1] < t; --j) {
        g.rsize[j] = g.rsize[j - 1];
        g.rstride[j] = g.rstride[j - 1];
      }
      g.rsize[j] = s;
      g.rstride[j] = t;
    }
  }
  g.nk = coalesce(g.nk, g.ksize, g.kstride);
  g.nr = coalesce(g.nr, g.rsize, g.rstride);
  if (g.nr == 0) {  // a single element per output
    g.nr = 1;
    g.rsize[0] = 1;
    g.rstride[0] = 1;
  }
}

}  // namespace reduce_geom
}  // namespace fastt

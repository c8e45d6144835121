// Shared by the CPU (kernels/cpu/linalg.cpp) and CUDA (kernels/cuda/
// linalg.cu) gemm kernels: one product's geometry read from KernelArgs the
// same way on both (the Op::gemm row in csrc/ops.def: i2 bits 1/2 read
// in0/in1 transposed, in2 the addend or null; batch dims lead).
#pragma once
#include <cstdint>

#include "csrc/dispatch.h"
#include "csrc/tensor.h"

namespace fastt {

// C[m, n] = A[m, k] B[k, n] (+ addend I[m, n]) of one batch item; strides
// in elements.
struct GemmGeom {
  int64_t M, N, K;
  int64_t sam, sak;  // A[m, k]
  int64_t sbk, sbn;  // B[k, n]
  int64_t scm, scn;  // C[m, n]
  int64_t sim, sin;  // addend[m, n]
};

inline GemmGeom gemm_geom(const KernelArgs& a) {
  const Tensor& ta = *a.in[0];
  const Tensor& tb = *a.in[1];
  const Tensor& tc = *a.out;
  const Tensor* ti = a.in[2];
  const int nb = int(tc.dim()) - 2;
  const int64_t* sa = ta.strides().data() + nb;
  const int64_t* sb = tb.strides().data() + nb;
  const int64_t* sc = tc.strides().data() + nb;
  GemmGeom g{};
  g.M = tc.sizes()[nb];
  g.N = tc.sizes()[nb + 1];
  g.K = (a.i2 & 1) ? ta.sizes()[nb] : ta.sizes()[nb + 1];
  g.sam = (a.i2 & 1) ? sa[1] : sa[0];
  g.sak = (a.i2 & 1) ? sa[0] : sa[1];
  g.sbk = (a.i2 & 2) ? sb[1] : sb[0];
  g.sbn = (a.i2 & 2) ? sb[0] : sb[1];
  g.scm = sc[0];
  g.scn = sc[1];
  g.sim = ti ? ti->strides()[nb] : 0;
  g.sin = ti ? ti->strides()[nb + 1] : 0;
  return g;
}

}  // namespace fastt

// bfloat16 CPU matrix products through oneDNN's matmul primitive
// (kernels/cpu/onednn_matmul.cpp), where the processor has bf16 dot
// instructions (AVX512-BF16, AMX): the operands are read as they are, with
// float32 accumulation, instead of being converted to float32 for sgemm.
#pragma once
#include <cstdint>

namespace fastt {

// c = a @ b, for bfloat16 a [batch, M, K] with strides (sab, sam, sak)
// and b [batch, K, N] with strides (sbb, sbk, sbn), each matrix with one
// unit stride; c [batch, M, N] with strides (scb, scm, scn) holds float32,
// or bfloat16 (rounded once from the float32 sums) when c_bf16. Batch 1:
// the batch strides are not read. False (nothing written) when fastt has
// no oneDNN, it is disabled (fastt.backends.mkldnn), the processor lacks
// bf16 instructions, the product is too small to pay for the call, or
// oneDNN offers only its reference implementation for the layout.
struct Bf16Matmul {
  int64_t batch, M, N, K;
  const void* a;
  int64_t sab, sam, sak;
  const void* b;
  int64_t sbb, sbk, sbn;
  void* c;
  bool c_bf16;
  int64_t scb, scm, scn;
};
bool onednn_bf16_matmul(const Bf16Matmul& m);
// The processor has what the bf16 path needs (and fastt has oneDNN).
bool onednn_bf16_available();
// Products run through oneDNN so far (tests read it: the path was taken).
int64_t onednn_bf16_matmul_calls();

}  // namespace fastt

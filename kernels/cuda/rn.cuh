// Device arithmetic rounded once per operation, for kernels that must give
// the CPU's results bit for bit (factory, optim): nvcc can neither contract
// the _rn intrinsics into an fma nor approximate them under fast-math.
#pragma once
#include <cstdint>

namespace fastt {
namespace cuda {

__device__ __forceinline__ float mul_rn(float a, float b) {
  return __fmul_rn(a, b);
}
__device__ __forceinline__ double mul_rn(double a, double b) {
  return __dmul_rn(a, b);
}
__device__ __forceinline__ float add_rn(float a, float b) {
  return __fadd_rn(a, b);
}
__device__ __forceinline__ double add_rn(double a, double b) {
  return __dadd_rn(a, b);
}
__device__ __forceinline__ float sub_rn(float a, float b) {
  return __fsub_rn(a, b);
}
__device__ __forceinline__ double sub_rn(double a, double b) {
  return __dsub_rn(a, b);
}
__device__ __forceinline__ float div_rn(float a, float b) {
  return __fdiv_rn(a, b);
}
__device__ __forceinline__ double div_rn(double a, double b) {
  return __ddiv_rn(a, b);
}
__device__ __forceinline__ float sqrt_rn(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double sqrt_rn(double a) { return __dsqrt_rn(a); }
// Integer accumulators (arange over int64): wrap, no UB.
__device__ __forceinline__ int64_t mul_rn(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}
__device__ __forceinline__ int64_t add_rn(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}

}  // namespace cuda
}  // namespace fastt

// The CUDA backend's entry: device memory hooks, cross-device copies and
// the CUDA column of the dispatch table (ops without a CUDA kernel yet are
// marked unsupported so errors say so).
#include <cuda_runtime.h>

#include "csrc/dispatch.h"
#include "csrc/storage.h"
#include "kernels/cuda/cuda_check.h"

namespace fastt {
namespace cuda {
void register_copy_cuda_kernels();

namespace {
void* device_alloc(size_t nbytes, int index) {
  if (nbytes == 0) return nullptr;
  FASTT_CUDA_CHECK(cudaSetDevice(index), "allocate");
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, nbytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw OutOfMemoryError(fmt::format(
        "CUDA out of memory on device {}: tried to allocate {} bytes ({})",
        index, nbytes, cudaGetErrorString(err)));
  }
  return p;
}
void device_free(void* p, size_t, int) {
  if (p) cudaFree(p);
}
void device_copy(void* dst, Device dst_dev, const void* src, Device src_dev,
                 size_t nbytes) {
  if (nbytes == 0) return;
  cudaMemcpyKind kind = dst_dev.is_cuda()
                            ? (src_dev.is_cuda() ? cudaMemcpyDeviceToDevice
                                                 : cudaMemcpyHostToDevice)
                            : cudaMemcpyDeviceToHost;
  FASTT_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, kind), "copy_");
}
}  // namespace

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace cuda

void register_cuda_kernels() {
  for (int op = 0; op < kNumOps; ++op)
    for (int t = 0; t < kNumDTypes; ++t)
      mark_unsupported(Op(op), DeviceType::CUDA, DType(t), Unsupported::Device);
  cuda::register_copy_cuda_kernels();
  DeviceAllocatorHooks hooks;
  hooks.allocate = &cuda::device_alloc;
  hooks.deallocate = &cuda::device_free;
  hooks.copy = &cuda::device_copy;
  set_device_allocator(DeviceType::CUDA, hooks);
}

}  // namespace fastt
